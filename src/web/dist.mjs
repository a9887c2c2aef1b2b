// Finishes a Trunk build for use offline (`./dev dist` runs it on dist/; the browser tests
// on a copy of theirs). Node, no dependencies.
//   node src/web/dist.mjs DIR
// 1. DIR/sw.js: the service worker (src/web/sw.js) with the list of DIR's files and a
//    version made from their contents; DIR/index.html's boot <script> gets `data-sw`, so
//    that boot.js registers it.
// 2. DIR/bufscope.html: the whole app in one file that opens from `file://` with no server:
//    the styles in one <style>, the wasm-bindgen glue and boot.js as inline module scripts
//    (allowed by their hashes), the wasm gzipped in base64 (boot.js unpacks it), the example
//    dump in base64 (src/ui/example.rs reads it), and a Content-Security-Policy that forbids
//    every connection.
// Running it twice on the same DIR gives the same files. Every replacement below is a
// function, so that a `$` in the inlined text is never read as a replacement pattern.
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const here = path.dirname(fileURLToPath(import.meta.url));
const dir = process.argv[2];
if (!dir) {
  console.error('usage: node src/web/dist.mjs DIR');
  process.exit(2);
}

/** Fails the build with a sentence (the build's output is not what this script expects). */
function fail(message) {
  console.error(`src/web/dist.mjs: ${message}`);
  process.exit(1);
}

/** Every file under `root`, as `/`-separated paths relative to it, sorted. */
function files(root, sub = '') {
  return readdirSync(path.join(root, sub), { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? files(root, path.posix.join(sub, e.name)) : [path.posix.join(sub, e.name)]))
    .sort();
}

const read = (name) => readFileSync(path.join(dir, name));
const sha256 = (text) => createHash('sha256').update(text).digest('base64');

// Trunk's output, as index.html and Trunk.toml shape it.
let index = read('index.html').toString('utf8');
const BOOT = /<script type="module" src="\.\/boot\.js" data-js="([^"]+)" data-wasm="([^"]+)"( data-sw="[^"]*")?><\/script>/;
const boot = index.match(BOOT) || fail(`no boot <script> in ${dir}/index.html (see pattern_script in Trunk.toml)`);
const [, jsName, wasmName] = boot;

// ---------------------------------------------------------------- the service worker

const SKIP = new Set(['sw.js', 'bufscope.html']);
const cached = files(dir).filter((f) => !SKIP.has(f));
const version = createHash('sha256');
for (const f of cached) {
  // index.html without the attribute added below, so that a second run changes nothing.
  const bytes = f === 'index.html' ? index.replace(BOOT, (m) => m.replace(/ data-sw="[^"]*"/, '')) : read(f);
  version.update(`${f}\0`).update(bytes);
}
const sw = readFileSync(path.join(here, 'sw.js'), 'utf8');
const filled = sw
  .replace(/^const VERSION = .*;$/m, () => `const VERSION = '${version.digest('hex').slice(0, 16)}';`)
  .replace(/^const FILES = .*;$/m, () => `const FILES = ${JSON.stringify(cached)};`);
if (filled === sw) fail('src/web/sw.js has no `const VERSION` / `const FILES` lines to fill');
writeFileSync(path.join(dir, 'sw.js'), filled);
if (!boot[3]) {
  index = index.replace(BOOT, (m) => m.replace('></script>', ' data-sw="./sw.js"></script>'));
  writeFileSync(path.join(dir, 'index.html'), index);
}

// ---------------------------------------------------------------- the single file

/** Text put inside an element, which must not close it early. */
function inner(text, tag) {
  if (text.toLowerCase().includes(`</${tag}`)) fail(`cannot inline: the text contains </${tag}`);
  return text;
}

let single = index;
// The styles, in order, as one <style> where the first stylesheet was.
const sheets = [...single.matchAll(/<link rel="stylesheet" href="([^"]+)"[^>]*>\s*/g)];
if (sheets.length === 0) fail(`no stylesheet in ${dir}/index.html`);
const css = inner(sheets.map((m) => read(m[1]).toString('utf8')).join('\n'), 'style');
single = single.replace(sheets[0][0], () => `<style>${css}</style>\n    `);
for (const m of sheets.slice(1)) single = single.replace(m[0], () => '');

// The glue, which ends by exporting its init function as `default`: kept for boot.js.
let glue = read(jsName).toString('utf8');
const exported = /export\s*\{([^}]*)\};?\s*$/;
const init = glue.match(exported)?.[1].match(/(\w+)\s+as\s+default/)?.[1] || fail(`${jsName} exports no default init function`);
glue = inner(`${glue.replace(exported, '')}\nglobalThis.__bufscopeGlue = { default: ${init} };\n`, 'script');
const bootJs = inner(read('boot.js').toString('utf8'), 'script');
single = single.replace(
  BOOT,
  () => `<script type="module">${glue}</script>\n    <script type="module">${bootJs}</script>`,
);
// The preloads of the glue and the wasm: nothing to fetch now.
single = single.replace(/<link rel="modulepreload"[^>]*>/g, '').replace(/<link rel="preload"[^>]*>/g, '');

// What the page may do: run these two scripts and compile wasm, use this style, show
// data: and blob: images; connect nowhere.
const csp = [
  "default-src 'none'",
  `script-src 'sha256-${sha256(glue)}' 'sha256-${sha256(bootJs)}' 'wasm-unsafe-eval'`,
  `style-src 'sha256-${sha256(css)}'`,
  'img-src data: blob:',
  "connect-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "object-src 'none'",
].join('; ');
const CSP = /(<meta http-equiv="Content-Security-Policy"\s+content=")[^"]*(")/;
if (!CSP.test(single)) fail(`no Content-Security-Policy <meta> in ${dir}/index.html`);
single = single.replace(CSP, (_, open, close) => `${open}${csp}${close}`);

// What the start-up message says if the app does not start: this file needs no server.
const HELP = /<p class="boot-help">[\s\S]*?<\/p>/;
if (!HELP.test(single)) fail(`no <p class="boot-help"> in ${dir}/index.html`);
single = single.replace(
  HELP,
  () =>
    '<p class="boot-help">If this stays, this browser did not start bufscope: it needs ' +
    'JavaScript (modules), WebAssembly and DecompressionStream, which Chrome 80, ' +
    'Firefox 113, Safari 16.4 and newer versions have.</p>',
);

// The data: the wasm (gzipped) and the example, in base64, in blocks the browser never runs.
const examples = files(dir).filter((f) => f.startsWith('example/'));
if (examples.length !== 1) fail(`expected one file in ${dir}/example/, found ${examples.length}`);
const wasm = gzipSync(read(wasmName), { level: 9 }).toString('base64');
const example = read(examples[0]).toString('base64');
single = single.replace(
  '</body>',
  () =>
    `<script type="application/octet-stream" id="bufscope-wasm">${wasm}</script>\n` +
    `<script type="text/plain" id="bufscope-example">${example}</script>\n</body>`,
);
writeFileSync(path.join(dir, 'bufscope.html'), single);
const kib = (n) => `${(n / 1024).toFixed(0)} KiB`;
console.log(
  `${dir}/bufscope.html: ${kib(Buffer.byteLength(single))} (wasm ${kib(read(wasmName).length)}, ` +
    `gzipped in base64 ${kib(wasm.length)}); ${dir}/sw.js: ${cached.length} files`,
);
