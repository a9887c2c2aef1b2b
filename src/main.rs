//! The `bufscope` binary: the command-line tool natively, the browser app on wasm32.
//!
//! Natively it also installs a counting global allocator ([`heap`]), which `bufscope bench`
//! reads to report the peak heap of a parse.

#[cfg(not(target_arch = "wasm32"))]
mod cli;
#[cfg(not(target_arch = "wasm32"))]
mod generate;
#[cfg(target_arch = "wasm32")]
mod ui;

#[cfg(not(target_arch = "wasm32"))]
mod heap {
    //! Heap accounting: the system allocator, counting the bytes currently allocated and
    //! the highest count since the last [`reset_peak`]. Relaxed atomics: the figures are
    //! exact when one thread allocates, which is the case while bench measures.

    use std::alloc::{GlobalAlloc, Layout, System};
    use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

    static CURRENT: AtomicUsize = AtomicUsize::new(0);
    static PEAK: AtomicUsize = AtomicUsize::new(0);

    pub struct Counting;

    fn grew(bytes: usize) {
        let now = CURRENT.fetch_add(bytes, Relaxed).saturating_add(bytes);
        PEAK.fetch_max(now, Relaxed);
    }

    fn shrank(bytes: usize) {
        CURRENT.fetch_sub(bytes, Relaxed);
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

    /// Bytes allocated now.
    pub fn current() -> usize {
        CURRENT.load(Relaxed)
    }

    /// The most bytes allocated at once since the last [`reset_peak`].
    pub fn peak() -> usize {
        PEAK.load(Relaxed)
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
