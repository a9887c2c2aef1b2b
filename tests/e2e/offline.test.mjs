// Browser tests of bufscope without a network: "Try an example", the site's service worker
// (a reload with the server stopped and the network cut still opens and draws a dump), and
// the single file bufscope.html opened from file:// (draws a picked dump, makes no request).
//   node tests/e2e/offline.test.mjs http://127.0.0.1:PORT/
// tests/e2e/run.sh runs it with the others. It needs no build of its own: it copies the
// dist run.sh built (E2E_DIST, else target/e2e-dist), finishes the copy as `./dev dist`
// finishes dist/ (src/web/dist.mjs: sw.js, bufscope.html) and serves it with a server of its
// own (a test that stops its server starts one of its own).
import { execFileSync, spawn } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { TPU, artifacts, assert, ink, open, repo, run, test } from './harness.mjs';

const EXAMPLE_MODULE = 'tpu_reference_attention';

const built = path.resolve(repo, process.env.E2E_DIST || 'target/e2e-dist');
const site = mkdtempSync(path.join(os.tmpdir(), 'bufscope-offline-'));
cpSync(built, site, { recursive: true });
const finished = execFileSync('node', [path.join(repo, 'src', 'web', 'dist.mjs'), site], { encoding: 'utf8' });
console.log(`note: ${finished.trim()}`);

/** The site served on loopback by tests/e2e/serve.mjs; `stop()` ends it. */
async function serve(dir) {
  const child = spawn('node', [path.join(repo, 'tests', 'e2e', 'serve.mjs'), dir, '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise((resolve, reject) => {
    child.stdout.once('data', (d) => resolve(String(d).split('\n')[0].trim()));
    child.once('exit', (code) => reject(new Error(`the server exited (${code})`)));
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  // Ended with this process, whatever the tests did (run() exits).
  process.on('exit', () => child.kill('SIGTERM'));
  return { url, stop: async () => { child.kill('SIGTERM'); await exited; } };
}
process.on('exit', () => rmSync(site, { recursive: true, force: true }));
const server = await serve(site);

const app = await open();
const { page } = app;
/** Responses to the running test's page, and whether the service worker gave them. */
const responses = [];
app.onPage((p) => {
  responses.length = 0;
  p.on('response', (r) => responses.push({ url: r.url(), fromSw: r.fromServiceWorker() }));
});

/** Clicks "Try an example" and waits until its module is on screen and drawn. */
async function openExample() {
  // Over a module on screen the intake is closed: "Open…" opens it, as a user would.
  if (!(await page.locator('#try-example').isVisible())) await page.locator('#open-button').click();
  await page.locator('#try-example').click();
  await page.waitForFunction(
    (name) => [...document.querySelectorAll('.module .module-name')].some((e) => e.textContent === name),
    EXAMPLE_MODULE,
    { timeout: 20000 },
  );
  await assertDrawn('the example');
}

/** The HBM diagram (colour 0) of the module on screen has ink on it. */
async function assertDrawn(what) {
  await page.waitForFunction(() => document.querySelector('canvas.space-canvas[data-color="0"]')?.width > 0, null, { timeout: 10000 });
  await page.waitForTimeout(300);
  const share = await ink(page, 0);
  assert(share > 0.02, `${what}: the HBM diagram is nearly blank (${(share * 100).toFixed(2)}% drawn)`);
}

/** Opens the site at `url` and its example, as the first test does. */
async function exampleAt(url) {
  await page.goto(url, { waitUntil: 'load' });
  await page.locator('#try-example').waitFor({ timeout: 20000 });
  await openExample();
}

/** Waits until the site's service worker is active and controls the page (clients.claim);
 *  what it then keeps: `{ active, controlled, names, urls }` (its caches and their URLs). */
function serviceWorkerKept() {
  return page.evaluate(async () => {
    const reg = await navigator.serviceWorker.ready;
    // Claimed by the worker once it is active (clients.claim).
    for (let i = 0; i < 100 && !navigator.serviceWorker.controller; i++) await new Promise((r) => setTimeout(r, 50));
    const names = (await caches.keys()).filter((k) => k.startsWith('bufscope-'));
    const urls = names.length === 1 ? (await (await caches.open(names[0])).keys()).map((r) => r.url) : [];
    return { active: !!reg.active, controlled: !!navigator.serviceWorker.controller, names, urls };
  });
}

// ---------------------------------------------------------------- tests

test('the example opens with one click, and the page says how to get a dump', async () => {
  await page.goto(server.url, { waitUntil: 'load' });
  await page.locator('#try-example').waitFor({ timeout: 20000 });
  const howTo = await page.locator('.example .how-to').textContent();
  for (const words of ['XLA_FLAGS=--xla_dump_to=DIR', '-buffer-assignment.txt']) {
    assert(howTo.includes(words), `the intro does not say "${words}": "${howTo}"`);
  }
  assert((await page.locator('#boot-status').count()) === 0, 'the start-up message is still there once the app runs');
  await app.screenshot('offline-01-intro.png');
  await openExample();
  // Three memory spaces, as the dump says: allocations of colour 0 (HBM), 1 and 2.
  const dump = readFileSync(path.join(site, 'example', '001_d4ec204070c56195.txt'), 'utf8');
  const colours = new Set(['0', ...[...dump.matchAll(/, color (\d+)/g)].map((m) => m[1])]);
  // A tiny memory space is a strip until opened: open them all.
  for (const strip of await page.locator('.space-strip[aria-expanded="false"]').all()) await strip.click();
  await page.waitForFunction((n) => document.querySelectorAll('canvas.space-canvas').length >= n, colours.size, { timeout: 5000 }).catch(() => {});
  const shown = await page.locator('canvas.space-canvas').evaluateAll((cs) => cs.map((c) => c.dataset.color));
  for (const c of colours) assert(shown.includes(c), `memory space ${c} of the example has no diagram (${shown})`);
  await app.screenshot('offline-02-example.png');
  app.noNewConsoleErrors(0);
});

test('the service worker keeps every file of the site', async () => {
  await exampleAt(server.url);
  const kept = await serviceWorkerKept();
  assert(kept.active && kept.controlled, `the service worker does not control the page: ${JSON.stringify(kept)}`);
  assert(kept.names.length === 1, `caches: ${kept.names}`);
  const sw = readFileSync(path.join(site, 'sw.js'), 'utf8');
  const files = JSON.parse(sw.match(/^const FILES = (.*);$/m)[1]);
  for (const f of ['index.html', 'boot.js', 'reader.js', 'example/001_d4ec204070c56195.txt']) {
    assert(files.includes(f), `sw.js does not list ${f}`);
  }
  assert(files.some((f) => f.endsWith('_bg.wasm')), 'sw.js lists no wasm');
  const expected = files.map((f) => new URL(f, server.url).href).sort();
  assert(JSON.stringify(kept.urls.sort()) === JSON.stringify(expected), `cached:\n    ${kept.urls.join('\n    ')}\nlisted:\n    ${expected.join('\n    ')}`);
});

test('with the server stopped and the network cut, a reload opens and draws the example', async () => {
  // A server of this test's own, to stop; the site and its example opened once from it,
  // with the service worker in control.
  const own = await serve(site);
  await exampleAt(own.url);
  const kept = await serviceWorkerKept();
  assert(kept.active && kept.controlled, `the service worker does not control the page: ${JSON.stringify(kept)}`);
  await own.stop();
  await app.context.setOffline(true);
  const from = responses.length;
  const errors = app.consoleErrors.length;
  await page.reload({ waitUntil: 'load' });
  await page.locator('#try-example').waitFor({ timeout: 20000 });
  await openExample();
  const ours = responses.slice(from).filter((r) => r.url.startsWith(own.url));
  assert(ours.length >= 4, `only ${ours.length} responses after the reload`);
  const network = ours.filter((r) => !r.fromSw).map((r) => r.url);
  assert(network.length === 0, `not from the service worker:\n    ${network.join('\n    ')}`);
  await app.screenshot('offline-03-reloaded-offline.png');
  app.noNewConsoleErrors(errors);
  await app.context.setOffline(false);
});

test('dist/index.html opened from file:// says in words why it does not start', async () => {
  await page.goto(pathToFileURL(path.join(site, 'index.html')).href, { waitUntil: 'load' });
  const help = page.locator('#boot-status .boot-help');
  await help.waitFor({ state: 'visible', timeout: 5000 });
  await page.waitForTimeout(2000);
  const text = await page.locator('#boot-status').innerText();
  assert(text.includes('bufscope.html') && text.includes('file://'), `the message: "${text}"`);
  await app.screenshot('offline-04-index-from-file.png');
});

test('bufscope.html opened from file:// draws a picked dump and the example, with no request', async () => {
  const cdp = await app.context.newCDPSession(page);
  const requests = [];
  cdp.on('Network.requestWillBeSent', (e) => requests.push(e.request.url));
  await cdp.send('Network.enable');
  const errors = app.consoleErrors.length;
  const single = pathToFileURL(path.join(site, 'bufscope.html')).href;
  await page.goto(single, { waitUntil: 'load' });
  await page.locator('#file-input').waitFor({ state: 'attached', timeout: 20000 });
  await app.pickModule([TPU], path.basename(TPU, '.txt'));
  await assertDrawn('the picked TPU dump');
  await openExample();
  await app.screenshot('offline-05-single-file.png');
  // The listener works: it saw the page itself.
  assert(requests.includes(single), `the request log missed the page itself: ${requests}`);
  const others = requests.filter((u) => u !== single);
  assert(others.length === 0, `requests:\n    ${others.join('\n    ')}`);
  app.noNewConsoleErrors(errors);
  await cdp.detach();
});

test("bufscope.html's Content-Security-Policy forbids connections", async () => {
  await page.goto(pathToFileURL(path.join(site, 'bufscope.html')).href, { waitUntil: 'load' });
  await page.locator('#file-input').waitFor({ state: 'attached', timeout: 20000 });
  // The refusal is seen as the browser's `securitypolicyviolation` event, not merely as a
  // failed fetch.
  const seen = await page.evaluate(async () => {
    const violations = [];
    document.addEventListener('securitypolicyviolation', (e) => violations.push(e.effectiveDirective));
    const outcome = await fetch('http://127.0.0.1:9/').then(() => 'fetched', (e) => `refused: ${e.message}`);
    await new Promise((r) => setTimeout(r, 100));
    return { outcome, violations };
  });
  assert(seen.outcome.startsWith('refused'), `a fetch from bufscope.html: ${seen.outcome}`);
  assert(seen.violations.includes('connect-src'), `no connect-src violation: ${JSON.stringify(seen)}`);
  // The console error of that refusal is the one this test asked for.
  app.consoleErrors.length = 0;
});

test('bufscope.html in a browser that cannot unpack the app says why in words', async () => {
  // A page of its own, whose console this file's checks do not watch: the error it logs
  // is the one asked for.
  const other = await app.context.newPage();
  await other.addInitScript(() => { delete window.DecompressionStream; });
  await other.goto(pathToFileURL(path.join(site, 'bufscope.html')).href, { waitUntil: 'load' });
  const error = other.locator('.boot-error');
  await error.waitFor({ timeout: 10000 });
  const text = await error.innerText();
  assert(text.includes('could not start') && text.includes('DecompressionStream'), `the message: "${text}"`);
  assert((await other.locator('#file-input').count()) === 0, 'the app started anyway');
  await other.screenshot({ path: path.join(artifacts, 'offline-06-cannot-start.png') });
  await other.close();
});

await run(app);
