//! The `bufscope` binary: the command-line tool natively, the browser app on wasm32.
//!
//! Natively it also installs a counting global allocator ([`heap`]), which `bufscope bench`
//! reads to report the peak heap of a parse; it counts only once `bench` starts it (its
//! shared counters cost the other commands' threads an atomic on every allocation).

#[cfg(not(target_arch = "wasm32"))]
mod cli;
#[cfg(not(target_arch = "wasm32"))]
mod generate;
#[cfg(target_arch = "wasm32")]
mod ui;

#[cfg(not(target_arch = "wasm32"))]
mod heap {
    //! Heap accounting: the system allocator, counting the bytes currently allocated and
    //! the highest count since the last [`reset_peak`], once [`start`] was called (by
    //! `bufscope bench` alone, as it starts: two shared counters, a `fetch_add` and a
    //! `fetch_max` on every allocation, are a cache line the other commands' threads would
    //! pass between them). Relaxed atomics: the figures are exact when one thread
    //! allocates, which is the case while bench measures. The counts are signed: what was
    //! allocated before [`start`] and freed after it counts below zero, and the figures
    //! read are differences.

    use std::alloc::{GlobalAlloc, Layout, System};
    use std::sync::atomic::{AtomicBool, AtomicIsize, Ordering::Relaxed};

    static COUNTING: AtomicBool = AtomicBool::new(false);
    static CURRENT: AtomicIsize = AtomicIsize::new(0);
    static PEAK: AtomicIsize = AtomicIsize::new(0);

    pub struct Counting;

    /// Counts the allocations from now on.
    pub fn start() {
        COUNTING.store(true, Relaxed);
    }

    /// Counts no more (the figures read since stay differences of what was counted).
    pub fn stop() {
        COUNTING.store(false, Relaxed);
    }

    fn grew(bytes: usize) {
        if COUNTING.load(Relaxed) {
            let bytes = bytes as isize;
            let now = CURRENT.fetch_add(bytes, Relaxed).saturating_add(bytes);
            PEAK.fetch_max(now, Relaxed);
        }
    }

    fn shrank(bytes: usize) {
        if COUNTING.load(Relaxed) {
            CURRENT.fetch_sub(bytes as isize, Relaxed);
        }
    }

    // SAFETY: every call is passed to `System` unchanged; only counters are added.
    unsafe impl GlobalAlloc for Counting {
        unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
            // SAFETY: the caller's guarantees for `alloc` hold for `System.alloc`.
            let p = unsafe { System.alloc(layout) };
            if !p.is_null() {
                grew(layout.size());
            }
            p
        }

        unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
            // SAFETY: as for `alloc`.
            let p = unsafe { System.alloc_zeroed(layout) };
            if !p.is_null() {
                grew(layout.size());
            }
            p
        }

        unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
            // SAFETY: `ptr` was allocated by `System` with `layout` (through this type).
            unsafe { System.dealloc(ptr, layout) };
            shrank(layout.size());
        }

        unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
            // SAFETY: as for `dealloc`; `new_size` is valid per the caller.
            let p = unsafe { System.realloc(ptr, layout, new_size) };
            if !p.is_null() {
                if new_size >= layout.size() {
                    grew(new_size - layout.size());
                } else {
                    shrank(layout.size() - new_size);
                }
            }
            p
        }
    }

    /// Bytes allocated now, as counted since [`start`] (so only differences mean bytes).
    pub fn current() -> isize {
        CURRENT.load(Relaxed)
    }

    /// The most bytes allocated at once since the last [`reset_peak`], as [`current`].
    pub fn peak() -> isize {
        PEAK.load(Relaxed)
    }

    /// Bytes from `before` (a [`current`]) to `after`, none when fewer.
    pub fn since(before: isize, after: isize) -> usize {
        usize::try_from(after.saturating_sub(before)).unwrap_or(0)
    }

    /// Starts a new peak measurement from the current level.
    pub fn reset_peak() {
        PEAK.store(CURRENT.load(Relaxed), Relaxed);
    }
}

#[cfg(not(target_arch = "wasm32"))]
#[global_allocator]
static ALLOCATOR: heap::Counting = heap::Counting;

fn main() {
    #[cfg(not(target_arch = "wasm32"))]
    std::process::exit(cli::main());
    #[cfg(target_arch = "wasm32")]
    ui::start();
}
