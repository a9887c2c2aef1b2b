// Starts the app. Trunk's default loader is an inline <script>, which the page's
// Content-Security-Policy forbids; this file does the same job, for both forms of the page:
// - the site (dist/): the <script> that loads this file carries the hashed names of the
//   wasm-bindgen glue and of the wasm module (see `pattern_script` in Trunk.toml), and, once
//   `./dev dist` has made the site work offline, `data-sw`, its service worker;
// - the single file (bufscope.html, src/web/dist.mjs): this file is inlined after the glue,
//   which leaves its init function in `globalThis.__bufscopeGlue`, and the wasm is in the
//   page, gzipped, in base64, in `#bufscope-wasm`.
// Until the app has started, `#boot-status` (index.html) says so; it is removed once the app
// is up, or says why it could not start.
const me = document.querySelector('script[data-js][data-wasm]');
try {
  if (typeof WebAssembly !== 'object') throw new Error('this browser has no WebAssembly');
  let glue, wasm;
  if (me) {
    glue = await import(new URL(me.dataset.js, document.baseURI).href);
    wasm = new URL(me.dataset.wasm, document.baseURI).href;
  } else {
    glue = globalThis.__bufscopeGlue;
    delete globalThis.__bufscopeGlue;
    wasm = await inlinedWasm();
  }
  await glue.default({ module_or_path: wasm });
  document.getElementById('boot-status')?.remove();
  dispatchEvent(new CustomEvent('TrunkApplicationStarted'));
  // Served over http(s) only: a page opened from disk has no service worker.
  if (me?.dataset.sw && /^https?:$/.test(location.protocol) && 'serviceWorker' in navigator) {
    navigator.serviceWorker
      .register(new URL(me.dataset.sw, document.baseURI).href)
      .catch((err) => console.warn('bufscope will not work offline here:', err));
  }
} catch (err) {
  console.error('bufscope could not start:', err);
  let status = document.getElementById('boot-status');
  if (!status) {
    status = document.createElement('div');
    document.body.append(status);
  }
  status.className = 'boot-error';
  status.setAttribute('role', 'alert');
  status.textContent = `bufscope could not start: ${err?.message ?? err}. It needs a browser with JavaScript and WebAssembly with SIMD (Chrome 91, Firefox 89, Safari 16.4 or newer).`;
}

/** The wasm module inlined in the single file, unpacked. */
async function inlinedWasm() {
  const b64 = document.getElementById('bufscope-wasm')?.textContent;
  if (!b64) throw new Error('the page holds no app (#bufscope-wasm is missing)');
  if (typeof DecompressionStream !== 'function') {
    throw new Error('this browser cannot unpack the app (it has no DecompressionStream: Chrome 80, Firefox 113, Safari 16.4 or newer have it)');
  }
  const packed = Uint8Array.from(atob(b64.trim()), (c) => c.charCodeAt(0));
  const stream = new Blob([packed]).stream().pipeThrough(new DecompressionStream('gzip'));
  return new Response(stream).arrayBuffer();
}
