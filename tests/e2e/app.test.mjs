// Browser tests of the built app, in headless Chromium through playwright-core.
//   node tests/e2e/app.test.mjs http://127.0.0.1:PORT/
// (tests/e2e/run.sh builds the app, serves it and runs this.) Screenshots of every step go
// to tests/artifacts/. The last line is `N passed, M failed`; the exit status is 1 when M > 0.
import { createRequire } from 'node:module';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '..', '..');
const tools = process.env.BUFSCOPE_TOOLS || path.join(os.homedir(), '.cache', 'bufscope-tools');
const { chromium } = createRequire(path.join(tools, 'package.json'))('playwright-core');

const base = process.argv[2];
if (!base) {
  console.error('usage: node tests/e2e/app.test.mjs BASE_URL');
  process.exit(2);
}
const origin = new URL(base).origin;
const artifacts = path.join(repo, 'tests', 'artifacts');
mkdirSync(artifacts, { recursive: true });

/** A dump from tests/fixtures, else from the shared collection it was copied from. */
function fixture(rel) {
  for (const dir of [path.join(repo, 'tests', 'fixtures'), '/work/shared/dumps']) {
    const p = path.join(dir, rel);
    if (existsSync(p)) return p;
  }
  throw new Error(`fixture ${rel} not found`);
}

/** The `Total bytes used: N` number, read from the dump itself. */
function totalBytesUsed(file) {
  const m = readFileSync(file, 'latin1').match(/^Total bytes used: (\d+)/m);
  if (!m) throw new Error(`no "Total bytes used:" line in ${file}`);
  return Number(m[1]);
}

const TPU = fixture('tpu/000_0cb419b3147a3cb6.txt');
const CPU = fixture('cpu/jax0.6.2/cpu_tiny.buffer-assignment.txt');

// ---------------------------------------------------------------- browser and page

const profile = mkdtempSync(path.join(os.tmpdir(), 'bufscope-e2e-'));
let context;
try {
  context = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: [
      '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
    ],
    viewport: { width: 1200, height: 900 },
  });
} catch (err) {
  console.log(`FAIL launching Chromium\n  ${err.message.split('\n')[0]}`);
  rmSync(profile, { recursive: true, force: true });
  console.log('0 passed, 1 failed');
  process.exit(1);
}
const page = context.pages()[0] || (await context.newPage());

const consoleErrors = [];
const consoleWarnings = [];
const requests = [];
page.on('console', (msg) => {
  if (msg.type() === 'error') consoleErrors.push(`console.error: ${msg.text()}`);
  if (msg.type() === 'warning') consoleWarnings.push(`console.warning: ${msg.text()}`);
});
page.on('pageerror', (err) => consoleErrors.push(`page error: ${err.message}`));
page.on('request', (req) => requests.push(req.url()));
page.on('requestfailed', (req) => consoleErrors.push(`request failed: ${req.url()} ${req.failure()?.errorText}`));

/** Drops files on the page as a user would: dragenter, dragover, drop with a DataTransfer. */
async function dropFiles(files) {
  const payload = files.map(({ name, bytes }) => ({ name, b64: Buffer.from(bytes).toString('base64') }));
  await page.evaluate((files) => {
    const dt = new DataTransfer();
    for (const f of files) {
      const bytes = Uint8Array.from(atob(f.b64), (c) => c.charCodeAt(0));
      dt.items.add(new File([bytes], f.name, { type: 'text/plain' }));
    }
    const target = document.querySelector('main') || document.body;
    for (const type of ['dragenter', 'dragover', 'drop']) {
      target.dispatchEvent(new DragEvent(type, { bubbles: true, cancelable: true, dataTransfer: dt }));
    }
  }, payload);
}

const dumpFile = (file) => ({ name: path.basename(file), bytes: readFileSync(file) });

/** Waits for the outcome of reading the file called `name`. */
async function waitForOutcome(name) {
  await page.waitForFunction(
    (name) => document.querySelector('.files-line')?.textContent === `Read ${name}`,
    name,
    { timeout: 20000 },
  );
}

/** The total bytes shown for the first module: the exact number and the text on the page. */
async function shownTotal() {
  const cell = page.locator('.module .total-bytes').first();
  await cell.waitFor({ timeout: 5000 });
  return { bytes: Number(await cell.getAttribute('data-bytes')), text: await cell.textContent() };
}

const grouped = (n) => n.toString().replace(/\B(?=(\d{3})+(?!\d))/g, ',');

function assert(cond, message) {
  if (!cond) throw new Error(message);
}

function noNewConsoleErrors(since) {
  const fresh = consoleErrors.slice(since);
  assert(fresh.length === 0, `console errors:\n    ${fresh.join('\n    ')}`);
}

// ---------------------------------------------------------------- tests

const tests = [];
const test = (name, fn) => tests.push({ name, fn });

test('(a) the page loads with no console errors', async () => {
  await page.goto(base, { waitUntil: 'load' });
  await page.locator('#file-input').waitFor({ state: 'attached', timeout: 20000 });
  const h1 = await page.locator('h1').textContent();
  assert(h1 === 'bufscope', `header is "${h1}"`);
  await page.waitForTimeout(300);
  await page.screenshot({ path: path.join(artifacts, '01-loaded.png'), fullPage: true });
  noNewConsoleErrors(0);
});

test('(b) dropping the TPU dump shows its total bytes', async () => {
  const before = consoleErrors.length;
  const expected = totalBytesUsed(TPU);
  await dropFiles([dumpFile(TPU)]);
  await waitForOutcome(path.basename(TPU));
  await page.screenshot({ path: path.join(artifacts, '02-tpu-dropped.png'), fullPage: true });
  const shown = await shownTotal();
  assert(shown.bytes === expected, `total bytes shown ${shown.bytes}, the dump says ${expected}`);
  assert(shown.text.includes(grouped(expected)), `"${shown.text}" does not show ${grouped(expected)}`);
  const spaces = await page.locator('.module .spaces tbody tr').count();
  assert(spaces > 0, 'no memory space rows');
  noNewConsoleErrors(before);
});

test('(f) every memory space is drawn on a canvas', async () => {
  // Follows (b): the TPU dump is shown.
  const rows = await page.locator('.module .spaces tbody tr').count();
  const inked = await page.evaluate(() =>
    [...document.querySelectorAll('.module canvas.space-canvas')].map((c) => {
      const { data } = c.getContext('2d').getImageData(0, 0, c.width, c.height);
      let ink = 0;
      for (let i = 0; i < data.length; i += 4) {
        if (data[i] < 235 || data[i + 1] < 235 || data[i + 2] < 235) ink++;
      }
      return { color: c.dataset.color, width: c.width, height: c.height, ink: ink / (data.length / 4) };
    }),
  );
  assert(inked.length === rows, `${inked.length} canvases for ${rows} memory spaces`);
  for (const c of inked) {
    assert(c.width >= 320 && c.height >= 100, `canvas of colour ${c.color} is ${c.width}×${c.height}`);
    assert(c.ink > 0.02, `canvas of colour ${c.color} is nearly blank (${(c.ink * 100).toFixed(2)}% drawn)`);
  }
});

test('(c) a non-dump file shows an error, and the page stays usable', async () => {
  const before = consoleErrors.length;
  const name = 'not-a-dump.txt';
  await dropFiles([{ name, bytes: Buffer.from('Dear diary,\nthis is not a buffer assignment.\n') }]);
  await waitForOutcome(name);
  const error = page.locator('.message.error');
  await error.first().waitFor({ timeout: 5000 });
  const text = (await error.allTextContents()).join(' ');
  assert(text.trim().length > 0, 'empty error message');
  assert((await page.locator('.module').count()) === 0, 'a module is shown for a non-dump file');
  await page.screenshot({ path: path.join(artifacts, '03-not-a-dump.png'), fullPage: true });

  await dropFiles([dumpFile(TPU)]);
  await waitForOutcome(path.basename(TPU));
  const shown = await shownTotal();
  assert(shown.bytes === totalBytesUsed(TPU), `after the error: total bytes ${shown.bytes}`);
  assert((await page.locator('.message.error').count()) === 0, 'the error message stayed');
  await page.screenshot({ path: path.join(artifacts, '04-tpu-after-error.png'), fullPage: true });
  noNewConsoleErrors(before);
});

test('(e) the file picker reads a CPU dump', async () => {
  const before = consoleErrors.length;
  await page.locator('#file-input').setInputFiles(CPU);
  await waitForOutcome(path.basename(CPU));
  const shown = await shownTotal();
  assert(shown.bytes === totalBytesUsed(CPU), `total bytes ${shown.bytes}, the dump says ${totalBytesUsed(CPU)}`);
  await page.screenshot({ path: path.join(artifacts, '05-cpu-picked.png'), fullPage: true });
  noNewConsoleErrors(before);
});

test('(g) picking a folder reads the dumps in it and skips other files', async () => {
  const before = consoleErrors.length;
  // A dump folder of new XLA (three files per module, plus its reports) and a stray file.
  const src = path.dirname(fixture('cpu/jax0.10.2/cpu_tiny.buffer-assignment.txt'));
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bufscope-folder-'));
  const folder = path.join(dir, 'xla_dump');
  cpSync(src, folder, { recursive: true });
  writeFileSync(path.join(folder, 'README.md'), 'not a dump\n');
  const modules = new Set(readdirSync(src).filter((f) => f.endsWith('.buffer-assignment.txt')).map((f) => f.split('.')[0]));
  try {
    await page.locator('#dir-input').setInputFiles(folder);
    await page.waitForFunction(() => /skipped 1 other file/.test(document.querySelector('.files-line')?.textContent ?? ''), null, { timeout: 20000 });
    // Every module is listed in the picker; the one on screen is the largest by default.
    const options = (await page.locator('#module-picker option').allTextContents()).map((o) => o.split(' — ')[0]);
    assert(options.length === modules.size, `${options.length} modules listed (${options.join(', ')}), expected ${modules.size}`);
    for (const m of modules) assert(options.includes(m), `module ${m} missing (listed: ${options.join(', ')})`);
    const largest = [...modules].map((m) => [m, totalBytesUsed(path.join(src, `${m}.buffer-assignment-values.txt`))])
      .sort((a, b) => b[1] - a[1])[0][0];
    const shownNames = await page.locator('.module .module-name').allTextContents();
    assert(shownNames.length === 1 && shownNames[0] === largest, `shown ${shownNames.join(', ')}, expected the largest, ${largest}`);
    await page.locator('#module-picker').selectOption({ label: (await page.locator('#module-picker option', { hasText: 'cpu_tiny' }).textContent()) });
    await page.waitForFunction(() => document.querySelector('.module .module-name')?.textContent === 'cpu_tiny');
    assert((await page.locator('.message.error').count()) === 0, 'an error message is shown');
    await page.screenshot({ path: path.join(artifacts, '06-folder-picked.png'), fullPage: true });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  noNewConsoleErrors(before);
});

test('(h) dark colour scheme: page and diagrams follow it', async () => {
  const before = consoleErrors.length;
  await page.emulateMedia({ colorScheme: 'dark' });
  try {
    await dropFiles([dumpFile(TPU)]);
    await waitForOutcome(path.basename(TPU));
    const corner = await page.evaluate(() => {
      const c = document.querySelector('.module canvas.space-canvas');
      return c ? [...c.getContext('2d').getImageData(1, 1, 1, 1).data] : null;
    });
    assert(corner && corner[0] < 80 && corner[1] < 80 && corner[2] < 80, `canvas background is ${corner}`);
    await page.screenshot({ path: path.join(artifacts, '07-dark.png'), fullPage: true });
  } finally {
    await page.emulateMedia({ colorScheme: 'light' });
  }
  noNewConsoleErrors(before);
});

test('(d) no request went to another origin', async () => {
  assert(requests.length > 0, 'no requests recorded');
  const foreign = requests.filter((u) => !u.startsWith('data:') && !u.startsWith('blob:') && new URL(u).origin !== origin);
  assert(foreign.length === 0, `requests to other origins:\n    ${foreign.join('\n    ')}`);
});

// ---------------------------------------------------------------- run

let passed = 0;
let failed = 0;
for (const { name, fn } of tests) {
  try {
    await fn();
    passed++;
    console.log(`ok   ${name}`);
  } catch (err) {
    failed++;
    console.log(`FAIL ${name}\n  ${String(err?.stack || err).split('\n').slice(0, 6).join('\n  ')}`);
    try {
      const shot = `fail-${tests.findIndex((t) => t.name === name) + 1}.png`;
      await page.screenshot({ path: path.join(artifacts, shot), fullPage: true });
    } catch {}
  }
}
for (const w of consoleWarnings) console.log(`note: ${w}`);
await context.close();
rmSync(profile, { recursive: true, force: true });
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed > 0 ? 1 : 0);
