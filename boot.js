// Starts the app. Trunk's default loader is an inline <script>, which the page's
// Content-Security-Policy forbids; this file (same origin) does the same job. The <script>
// that loads it carries the hashed names of the wasm-bindgen glue and of the wasm module
// (see `pattern_script` in Trunk.toml).
const me = document.querySelector('script[data-js][data-wasm]');
try {
  const glue = await import(new URL(me.dataset.js, document.baseURI).href);
  await glue.default({ module_or_path: new URL(me.dataset.wasm, document.baseURI).href });
  dispatchEvent(new CustomEvent('TrunkApplicationStarted'));
} catch (err) {
  console.error('bufscope could not start:', err);
  const p = document.createElement('p');
  p.className = 'boot-error';
  p.textContent = `bufscope could not start: ${err}. It needs a browser with WebAssembly.`;
  document.body.append(p);
}
