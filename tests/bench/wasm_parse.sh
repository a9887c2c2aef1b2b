#!/usr/bin/env bash
# The page's parse in WebAssembly without the page (not a test): the library built for
# wasm32 as the page's is (opt-level 3, fat LTO, one codegen unit, SIMD128), driven by Node's
# V8 as the page drives it: the file fed in 2 MiB slices through one buffer in wasm memory,
# then finished (joined). It prints the milliseconds feeding and finishing, the wasm memory
# at the end, and the process's user/system time and minor page faults (/usr/bin/time):
# the wasm memory is touched page by page, and on this VM each first touch is a fault of
# about 3 µs, on the thread that parses. A build takes ~2 min cold, seconds after; a run
# seconds: a way to weigh a change of the parse in wasm without a Trunk build and Chromium's
# noise. On a dump cut to its first read (docs/benchmarks.md: the cut files), it is the
# first read the page does before the diagram.
# NATIVE=1 builds and runs the same feeding natively instead (src/main.rs below, the lib's
# exports called in-process): a parse-only figure to set beside the wasm one. RUNS=0 builds
# only.
#   [NATIVE=1] bash tests/bench/wasm_parse.sh FILE [RUNS]
set -eu
HERE="$(cd "$(dirname "$0")/../.." && pwd)"
FILE="$1"; RUNS="${2:-3}"
DIR="$HERE/target/wasm-parse"
mkdir -p "$DIR/src" "$DIR/.cargo"
cat > "$DIR/Cargo.toml" <<TOML
[package]
name = "wasm-parse"
version = "0.0.0"
edition = "2021"
publish = false
[lib]
crate-type = ["cdylib", "rlib"]
[dependencies]
bufscope = { path = "$HERE" }
[profile.release]
opt-level = 3
lto = true
codegen-units = 1
panic = "abort"
[workspace]
TOML
cp "$HERE/.cargo/config.toml" "$DIR/.cargo/config.toml"
# The crates at the versions the page is built with.
cp "$HERE/Cargo.lock" "$DIR/Cargo.lock"
cat > "$DIR/src/lib.rs" <<'RUST'
//! Exports for tests/bench/wasm_parse.mjs: a buffer, and one Loader fed slice by slice.
use std::cell::RefCell;
thread_local! { static LOADER: RefCell<Option<bufscope::Loader>> = const { RefCell::new(None) }; }
#[no_mangle]
pub extern "C" fn buffer(n: usize) -> *mut u8 {
    Box::leak(vec![0u8; n].into_boxed_slice()).as_mut_ptr()
}
#[no_mangle]
pub extern "C" fn begin() {
    let mut l = bufscope::Loader::new();
    l.begin_file("file.buffer-assignment.txt");
    LOADER.with(|c| *c.borrow_mut() = Some(l));
}
/// # Safety: `ptr` is a [`buffer`] of at least `len` bytes.
#[no_mangle]
pub unsafe extern "C" fn feed(ptr: *const u8, len: usize) {
    let bytes = unsafe { std::slice::from_raw_parts(ptr, len) };
    LOADER.with(|c| c.borrow_mut().as_mut().map(|l| l.feed(bytes)));
}
/// The values of every module read (the load is kept, as the page keeps it).
#[no_mangle]
pub extern "C" fn finish() -> u32 {
    let Some(mut l) = LOADER.with(|c| c.borrow_mut().take()) else { return 0 };
    l.end_file();
    let load = std::mem::ManuallyDrop::new(l.finish());
    load.modules.iter().map(|m| m.values.len() as u32).sum()
}
RUST
cat > "$DIR/src/main.rs" <<'RUST'
//! The same feeding natively (NATIVE=1): FILE read whole, fed in 2 MiB slices, as
//! tests/bench/wasm_parse.mjs feeds the wasm build; prints its line's first figures.
fn main() {
    let file = std::env::args().nth(1).expect("usage: wasm-parse FILE");
    let bytes = std::fs::read(&file).expect("FILE cannot be read");
    let t = std::time::Instant::now();
    wasm_parse::begin();
    for slice in bytes.chunks(2 * 1024 * 1024) {
        // Safety: `slice` is `len` readable bytes.
        unsafe { wasm_parse::feed(slice.as_ptr(), slice.len()) };
    }
    let fed = t.elapsed().as_secs_f64() * 1e3;
    let t = std::time::Instant::now();
    let values = wasm_parse::finish();
    let finished = t.elapsed().as_secs_f64() * 1e3;
    println!("{file}: fed in {fed:.0} ms, finished (joined) in {finished:.0} ms; {values} values");
}
RUST
if [ "${NATIVE:-0}" = 1 ]; then
  (cd "$DIR" && CARGO_TARGET_DIR="$DIR/target" cargo build --quiet --release --offline --bin wasm-parse)
  RUN=("$DIR/target/release/wasm-parse" "$FILE")
else
  (cd "$DIR" && CARGO_TARGET_DIR="$DIR/target" cargo build --quiet --release --offline --lib --target wasm32-unknown-unknown)
  RUN=(node "$HERE/tests/bench/wasm_parse.mjs" "$DIR/target/wasm32-unknown-unknown/release/wasm_parse.wasm" "$FILE")
fi
for _ in $(seq "$RUNS"); do
  /usr/bin/time -f "  process: %e s wall, %U s user, %S s system, %R minor faults" "${RUN[@]}" 2>&1
done
