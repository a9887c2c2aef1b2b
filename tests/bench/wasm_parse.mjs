// Run by tests/bench/wasm_parse.sh (see there): feeds FILE to the wasm build of the
// library in 2 MiB slices, as the page feeds it (`FEED` in src/ui/read/drive.rs), and prints the
// times and the wasm memory.
//   node tests/bench/wasm_parse.mjs WASM FILE
import { closeSync, fstatSync, openSync, readFileSync, readSync } from 'node:fs';

const [wasmPath, file] = process.argv.slice(2);
const mod = new WebAssembly.Module(readFileSync(wasmPath));
// The library's wasm-bindgen imports are never called by the parse: each throws if it is.
const imports = {};
for (const i of WebAssembly.Module.imports(mod)) {
  (imports[i.module] ||= {})[i.name] = () => { throw new Error(`import ${i.name} called`); };
}
const e = new WebAssembly.Instance(mod, imports).exports;
const SLICE = 2 * 1024 * 1024;
const fd = openSync(file);
const size = fstatSync(fd).size;
const at = e.buffer(SLICE);
const read = Buffer.alloc(SLICE);
let feedMs = 0;
e.begin();
for (let start = 0; start < size; start += SLICE) {
  const n = readSync(fd, read, 0, SLICE, start);
  new Uint8Array(e.memory.buffer, at, n).set(read.subarray(0, n));
  const t = performance.now();
  e.feed(at, n);
  feedMs += performance.now() - t;
}
closeSync(fd);
const t = performance.now();
const values = e.finish();
const finishMs = performance.now() - t;
console.log(`${file}: fed in ${feedMs.toFixed(0)} ms, finished (joined) in ${finishMs.toFixed(0)} ms; ` +
  `${values} values; wasm memory ${(e.memory.buffer.byteLength / 1e6).toFixed(0)} MB`);
