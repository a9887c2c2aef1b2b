// What the browser test files share: the fixtures, headless Chromium with a fresh page for
// each test, ways to hand files to the app as a user would (drop, pick), the waits on its
// outcome, and the runner that prints `ok`/`FAIL`/`SKIP` per test and the closing
// `N passed, M failed` line (`, K skipped` added when a test skipped) that tests/e2e/run.sh
// adds up. Not a test file itself (run.sh runs *.test.mjs).
//
//   import { open, test, skip, run, ... } from './harness.mjs';
//   const app = await open();           // the browser; app.page is the running test's page
//   test('name', async () => { ... });  // inside, `skip('needs ...')` ends it as skipped
//   await run(app);                     // runs the tests, each on a fresh page, prints, exits
//
// Each test runs in a browser context of its own (a new page, no storage, IndexedDB, cache
// or service worker left by another test), so a test loads what it needs itself, runs
// alone and in any order, and a failure does not cascade. `app.page` and `app.context` are
// handles that always name the running test's page and context, so a file's helpers may
// hold them from the top. Choosing and ordering (read by `run`):
//   E2E_TEST=NAME      only the test called NAME (exact, else a unique part of a name);
//                      `tests/e2e/run.sh FILE NAME` sets it
//   E2E_SHUFFLE=1      the tests in a shuffled order, its seed printed
//                      (`note: shuffled, E2E_SEED=N`);
//   E2E_SEED=N         that order again
//
// Why a runner of its own rather than node:test (which Node 20 ships): a fresh context per
// test, a failure screenshot of that test's page, and one closing line per file that run.sh
// sums are the hundred lines `test`/`skip`/`run` take here; node:test would give `t.skip` and
// reporters, but each test would be wrapped for its context and screenshot all the same,
// and run.sh would parse a TAP or spec summary instead of one line.
import { createRequire } from 'node:module';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
export const repo = path.resolve(here, '..', '..');
const tools = process.env.BUFSCOPE_TOOLS || path.join(os.homedir(), '.cache', 'bufscope-tools');
const { chromium } = createRequire(path.join(tools, 'package.json'))('playwright-core');

export const base = process.argv[2];
if (!base) {
  console.error(`usage: node ${path.relative(repo, process.argv[1] || 'test.mjs')} BASE_URL`);
  process.exit(2);
}
export const origin = new URL(base).origin;
export const artifacts = path.join(repo, 'tests', 'artifacts');
mkdirSync(artifacts, { recursive: true });

/** The shared dump collection beside the repo (absent on some machines). */
export const SHARED = process.env.BUFSCOPE_SHARED || path.resolve(repo, '..', 'shared');

/** A dump from tests/fixtures, else from the shared collection it was copied from. */
export function fixture(rel) {
  for (const dir of [path.join(repo, 'tests', 'fixtures'), path.join(SHARED, 'dumps')]) {
    const p = path.join(dir, rel);
    if (existsSync(p)) return p;
  }
  throw new Error(`fixture ${rel} not found`);
}

/** The `Total bytes used: N` number, read from the dump itself. */
export function totalBytesUsed(file) {
  const m = readFileSync(file, 'latin1').match(/^Total bytes used: (\d+)/m);
  if (!m) throw new Error(`no "Total bytes used:" line in ${file}`);
  return Number(m[1]);
}

export const TPU = fixture('tpu/000_0cb419b3147a3cb6.txt');
export const CPU = fixture('cpu/jax0.6.2/cpu_tiny.buffer-assignment.txt');

export const grouped = (n) => n.toString().replace(/\B(?=(\d{3})+(?!\d))/g, ',');

export function assert(cond, message) {
  if (!cond) throw new Error(message);
}

/** `{ name, bytes }` of a file on disk, for `app.drop`. */
export const dumpFile = (file) => ({ name: path.basename(file), bytes: readFileSync(file) });

/** From the next page load on, the app in `target` (a page or a browser context) has its
 *  `Used values` worker whatever the machine's cores (`__bufscope_early_uses`,
 *  src/ui/read/uses_worker.rs), as on a machine with 4 or more. */
export async function forceUsesWorker(target) {
  await target.addInitScript(() => { window.__bufscope_early_uses = true; });
}

/** Watches, in `page`, the next read of the file called `name`: `window.__load` gets the
 *  time of the file input's `change` (`change`), of the first frame with the module's
 *  diagram drawn (`shown`) and of the first frame with it complete (`complete`, its
 *  `Used values` read), and every gap between animation frames over 50 ms after the pick
 *  (`gaps`: [start, length] in ms from the pick). */
export async function watchLoad(page, name) {
  await page.evaluate((name) => {
    const m = (window.__load = { change: null, shown: null, complete: null, gaps: [] });
    document.addEventListener('change', () => { m.change ??= performance.now(); }, { capture: true });
    let last = performance.now();
    const tick = () => {
      const now = performance.now();
      if (m.change !== null && now - last > 50) m.gaps.push([Math.round(last - m.change), Math.round(now - last)]);
      last = now;
      if (m.shown === null && document.querySelector('.files-line')?.textContent === `Read ${name}`
        && document.querySelector('.diagram')?.dataset.view) m.shown = now;
      if (m.shown !== null && m.complete === null && !document.querySelector('#details-status')) m.complete = now;
      if (m.complete === null) requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  }, name);
}

/** A stand-in that forwards every use to what `get()` returns now: `app.page` and
 *  `app.context` name the running test's page and context whoever holds them. */
function live(get) {
  return new Proxy({}, {
    get(_, key) {
      const target = get();
      if (!target) throw new Error(`no test is running: no ${String(key)} to use`);
      const v = Reflect.get(target, key, target);
      return typeof v === 'function' ? v.bind(target) : v;
    },
    set(_, key, v) { return Reflect.set(get(), key, v); },
    has(_, key) { return key in get(); },
    getPrototypeOf() { return Object.getPrototypeOf(get()); },
  });
}

/**
 * Starts headless Chromium with a context of one page of `viewport` (1200×900 unless
 * given), for a script that drives `app.page` itself (tests/bench, tests/python): closing
 * `app.context` then ends the browser. Under `run`, each test gets a fresh context of its
 * own instead. The page's console errors and warnings, page errors, failed requests and
 * request URLs are recorded in `app` (errors and requests afresh for each context, warnings
 * for the whole file). On failure to launch, prints the closing line and exits 1.
 */
export async function open({ viewport = { width: 1200, height: 900 } } = {}) {
  let browser;
  try {
    browser = await chromium.launch({
      executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
      headless: true,
      args: [
        '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
        '--disable-background-networking', '--disable-component-update', '--disable-sync',
      ],
    });
  } catch (err) {
    console.log(`FAIL launching Chromium\n  ${err.message.split('\n')[0]}`);
    console.log('0 passed, 1 failed');
    process.exit(1);
  }
  /** The running test's context and page (null between tests). */
  const now = { context: null, page: null };
  const page = live(() => now.page);
  /** Run on each test's page before the test: listeners a file keeps on every page. */
  const onPageHooks = [];
  const app = {
    browser,
    context: live(() => now.context),
    page,
    /** Set by `run`: each test has a context of its own, and closing one keeps the browser. */
    perTest: false,
    consoleErrors: [],
    consoleWarnings: [],
    /** Every request's URL, in order. */
    requests: [],

    /** Fails when console errors appeared since `since` (an earlier `consoleErrors.length`). */
    noNewConsoleErrors(since) {
      const fresh = app.consoleErrors.slice(since);
      assert(fresh.length === 0, `console errors:\n    ${fresh.join('\n    ')}`);
    },

    /** Fails when, since `since` (an earlier `consoleWarnings.length`), the page completed a
     *  module from a copy (src/ui/load.rs `unshared`): something held the module on screen,
     *  so completing it cloned the whole module (a transient second copy in memory). */
    noCopies(since) {
      const copies = app.consoleWarnings.slice(since).filter((w) => /is held elsewhere: completed from a copy/.test(w));
      assert(copies.length === 0, `modules completed from a copy:\n    ${copies.join('\n    ')}`);
    },

    /** Opens the answers panel of the module on screen unless it is open (it stays open
     *  across the read's modules once opened). */
    async openAnswers() {
      const toggle = page.locator('#answers .answers-toggle');
      await toggle.waitFor({ timeout: 30000 });
      if ((await toggle.getAttribute('aria-expanded')) === 'false') await toggle.click();
    },

    /** Loads the app and waits until it is ready. */
    async load() {
      await page.goto(base, { waitUntil: 'load' });
      await page.locator('#file-input').waitFor({ state: 'attached', timeout: 20000 });
    },

    /** Drops files on the page (or on `target`, a frame of it) as a user would: dragenter,
     *  dragover, drop with a DataTransfer. */
    async drop(files, target = page) {
      const payload = files.map(({ name, bytes }) => ({ name, b64: Buffer.from(bytes).toString('base64') }));
      await target.evaluate((files) => {
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
    },

    /** Picks files (paths, or `{ name, mimeType, buffer }`) with the "Choose files…" input. */
    async pick(files) {
      await page.locator('#file-input').setInputFiles(files);
    },

    /** Picks files with the file input and waits until the module called `name` is on screen. */
    async pickModule(files, name) {
      await page.locator('#file-input').setInputFiles(files);
      await page.waitForFunction(
        (name) => [...document.querySelectorAll('.module .module-name')].some((e) => e.textContent === name),
        name,
        { timeout: 20000 },
      );
      await app.waitForDetails();
    },

    /** Waits until the modules on screen are complete: the `Used values` read after the
     *  diagrams are in (`#details-status` gone). */
    async waitForDetails(timeout = 20000) {
      await page.waitForFunction(() => !document.querySelector('#details-status'), null, { timeout });
    },

    /** The names the module picker lists, in its order (opens the list and closes it). */
    async moduleNames() {
      await page.locator('#module-picker').click();
      await page.locator('#module-list').waitFor({ timeout: 5000 });
      const names = await page.locator('#module-list [role=option]').evaluateAll((rows) => rows.map((r) => r.dataset.name));
      await page.keyboard.press('Escape');
      return names;
    },

    /** Switches to module `name` with the picker (typing its name, Enter) and waits for it. */
    async chooseModule(name) {
      await page.locator('#module-picker').click();
      await page.locator('#module-filter').fill(name);
      await page.keyboard.press('Enter');
      await page.waitForFunction((name) => document.querySelector('.module .module-name')?.textContent === name, name, { timeout: 20000 });
    },

    /** Waits until the report of the last read says it read `name` (a file name or "N files"). */
    async waitForOutcome(name, timeout = 20000) {
      await page.waitForFunction(
        (name) => document.querySelector('.files-line')?.textContent === `Read ${name}`,
        name,
        { timeout },
      );
      await app.waitForDetails(timeout);
    },

    /** The total bytes shown for the module on screen: the exact number and the text. */
    async shownTotal() {
      const cell = page.locator('.module .total-bytes').first();
      await cell.waitFor({ timeout: 5000 });
      return { bytes: Number(await cell.getAttribute('data-bytes')), text: await cell.textContent() };
    },

    /** The name of the module on screen, or null. */
    async shownModule() {
      const names = await page.locator('.module .module-name').allTextContents();
      assert(names.length <= 1, `${names.length} modules on screen`);
      return names[0] ?? null;
    },

    async screenshot(name) {
      await page.screenshot({ path: path.join(artifacts, name), fullPage: true });
    },
  };
  /** Runs `hook(page)` on the page of every test from now on, before the test. */
  app.onPage = (hook) => { onPageHooks.push(hook); };
  /** Ends the running test's context, if any, and opens a fresh one with one page. */
  app.fresh = async () => {
    await app.closeContext();
    app.consoleErrors.length = 0;
    app.requests.length = 0;
    now.context = await browser.newContext({ viewport });
    // Outside `run` the script's one context is the browser's whole use.
    now.context.on('close', () => { if (!app.perTest) browser.close().catch(() => {}); });
    if (process.env.E2E_USES_WORKER === '1') await forceUsesWorker(now.context);
    const p = (now.page = await now.context.newPage());
    p.on('console', (msg) => {
      if (msg.type() === 'error') app.consoleErrors.push(`console.error: ${msg.text()}`);
      if (msg.type() === 'warning') app.consoleWarnings.push(`console.warning: ${msg.text()}`);
    });
    p.on('pageerror', (err) => app.consoleErrors.push(`page error: ${err.message}`));
    p.on('request', (req) => app.requests.push(req.url()));
    p.on('requestfailed', (req) => app.consoleErrors.push(`request failed: ${req.url()} ${req.failure()?.errorText}`));
    for (const hook of onPageHooks) await hook(p);
  };
  app.closeContext = async () => {
    const c = now.context;
    now.context = now.page = null;
    if (c) await c.close().catch(() => {});
  };
  await app.fresh();
  return app;
}

/** Share of a memory space's canvas pixels that differ from its corner (the background). */
export async function ink(page, color) {
  return page.evaluate((color) => {
    const c = document.querySelector(`canvas.space-canvas[data-color="${color}"]`);
    if (!c || !c.width || !c.height) return 0;
    const { data } = c.getContext('2d').getImageData(0, 0, c.width, c.height);
    const [r0, g0, b0] = data;
    let n = 0;
    for (let i = 0; i < data.length; i += 4) {
      if (Math.abs(data[i] - r0) + Math.abs(data[i + 1] - g0) + Math.abs(data[i + 2] - b0) > 30) n++;
    }
    return n / (data.length / 4);
  }, color);
}

/** The capacity line's colour (render::Style, light page). */
export const CAPACITY_LINE = [0x6f, 0x3c, 0xc3];
export const nearColour = (p, c, tol = 40) =>
  Math.abs(p[0] - c[0]) + Math.abs(p[1] - c[1]) + Math.abs(p[2] - c[2]) <= tol;

/** The RGB of a space's canvas pixels at viewport point (x, y), and `dy` rows around it. */
export async function canvasPixels(page, color, x, y, dy = 0) {
  return page.evaluate(([color, x, y, dy]) => {
    const c = document.querySelector(`canvas.space-canvas[data-color="${color}"]`);
    const r = c.getBoundingClientRect();
    const s = c.width / c.clientWidth;
    const px = Math.round((x - r.left) * s);
    const out = [];
    for (let d = -dy; d <= dy; d++) {
      const py = Math.round((y - r.top) * s) + d;
      out.push([...c.getContext('2d').getImageData(px, py, 1, 1).data].slice(0, 3));
    }
    return out;
  }, [color, x, y, dy]);
}

/** Whether the row of `bytes` on colour `color`'s curve is the capacity line's colour. */
export async function capacityLineAt(page, color, bytes) {
  const at = await page.evaluate(([c, b]) => window.__bufscope_bytes_px(c, b), [color, bytes]);
  assert(at, `no curve for colour ${color}`);
  const box = await page.locator(`canvas.space-canvas[data-color="${color}"]`).boundingBox();
  // Along the line, right of its label: most points in the line's colour.
  const xs = [0.45, 0.6, 0.75, 0.9].map((f) => at.x + (box.x + box.width - at.x) * f * 0.85);
  let hits = 0;
  for (const x of xs) {
    const col = await canvasPixels(page, color, x, at.y, 1);
    if (col.some((p) => nearColour(p, CAPACITY_LINE))) hits++;
  }
  return hits >= 3;
}

/** Types into the search box and waits for the (debounced) result. */
export async function search(page, text) {
  await page.locator('#search').fill(text);
  await page.waitForFunction(
    (text) => document.querySelector('#search-status')?.getAttribute('data-searched') === text,
    text,
    { timeout: 5000 },
  );
}

const tests = [];

/** Registers a test; each runs on a fresh page of its own (see `run`). */
export function test(name, fn) {
  tests.push({ name, fn });
}

/** Thrown by {@link skip}: the test did not run, for the reason given. */
class Skip extends Error {}

/**
 * Ends the running test as skipped (`SKIP NAME: reason`, counted in the closing line), for
 * want of something it needs (`../shared`). run.sh fails under CI=true when a test skipped.
 */
export function skip(reason) {
  throw new Skip(reason);
}

/** The tests `E2E_TEST` names (all when unset): the one of that exact name, else the one
 *  whose name holds it; a part that fits none or several is an error. */
function chosen(all, wanted) {
  if (!wanted) return { picked: all };
  const exact = all.filter((t) => t.name === wanted);
  if (exact.length) return { picked: exact };
  const part = all.filter((t) => t.name.includes(wanted));
  if (part.length === 1) return { picked: part };
  const names = (part.length ? part : all).map((t) => `\n    ${t.name}`).join('');
  return { error: `${part.length ? `${part.length} tests` : 'no test'} of this file ${part.length ? 'have' : 'has'} "${wanted}" in ${part.length ? 'their' : 'its'} name:${names}` };
}

/** `list` in an order drawn from `seed` (Fisher–Yates over mulberry32). */
function shuffled(list, seed) {
  let a = seed >>> 0;
  const random = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const out = [...list];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

/**
 * Runs the registered tests (those `E2E_TEST` names; shuffled with `E2E_SHUFFLE=1`), each
 * in a fresh browser context with one page, and prints `ok NAME` / `FAIL NAME` (with a
 * screenshot of that test's page in tests/artifacts/fail-<file>-<n>.png, n its place in
 * the file; a test also fails when a module was completed from a copy, `app.noCopies`) /
 * `SKIP NAME: reason` and the closing `N passed, M failed` line (`, K skipped`
 * when K > 0), closes the browser and exits (1 when a test failed).
 */
export async function run(app) {
  const file = path.basename(process.argv[1] || 'test', '.test.mjs');
  const numbered = tests.map((t, i) => ({ ...t, n: i + 1 }));
  const { picked, error } = chosen(numbered, process.env.E2E_TEST);
  if (error) {
    console.log(`FAIL choosing a test\n  ${error}`);
    await app.browser.close();
    console.log('0 passed, 1 failed');
    process.exit(1);
  }
  app.perTest = true;
  let order = picked;
  if (process.env.E2E_SHUFFLE === '1' || process.env.E2E_SEED) {
    const seed = process.env.E2E_SEED ? Number(process.env.E2E_SEED) : Math.floor(Math.random() * 2 ** 31);
    order = shuffled(picked, seed);
    console.log(`note: shuffled, E2E_SEED=${seed}`);
  }
  let passed = 0;
  let failed = 0;
  let skipped = 0;
  for (const { name, fn, n } of order) {
    try {
      await app.fresh();
      const warned = app.consoleWarnings.length;
      await fn();
      // Every test: no module on screen was completed from a copy.
      app.noCopies(warned);
      passed++;
      console.log(`ok   ${name}`);
    } catch (err) {
      if (err instanceof Skip) {
        skipped++;
        console.log(`SKIP ${name}: ${err.message}`);
        continue;
      }
      failed++;
      console.log(`FAIL ${name}\n  ${String(err?.stack || err).split('\n').slice(0, 6).join('\n  ')}`);
      try {
        await app.page.screenshot({ path: path.join(artifacts, `fail-${file}-${n}.png`), fullPage: true });
      } catch {}
    } finally {
      await app.closeContext();
    }
  }
  for (const w of new Set(app.consoleWarnings)) console.log(`note: ${w}`);
  await app.browser.close();
  console.log(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
  process.exit(failed > 0 ? 1 : 0);
}
