// Scale benchmark in the browser, side by side with the native figures (not a test file:
// `./dev bench` runs it; run.sh runs *.test.mjs only).
//   node tests/bench/scale_bench.mjs BASE_URL NATIVE.jsonl FILE...
// BASE_URL serves a release build (tests/e2e/serve.mjs on loopback); NATIVE.jsonl holds one
// `bufscope bench --json` line per FILE. For each FILE, in a fresh page of one headless
// Chromium (src/ui keeps nothing between pages, and a wasm memory only grows, so each file
// gets its own):
// 1. Cancel: picks the file, waits until the progress shows ≥ 10 %, clicks Cancel and times
//    how long until the progress bar is gone (the page must answer while reading);
// 2. in a new page, picks the file (setInputFiles with a path on #file-input: playwright-core
//    1.65 hands a local browser the path, DOM.setFileInputFiles, so nothing is copied over the
//    protocol even for 1 GB) and measures, inside the page, the load time from the input's
//    `change` event to the first frame on which the module's diagram is drawn (`data-view`
//    set), the longest gap between animation frames while reading and at the end (join,
//    analysis, first draw), how many distinct progress percentages were shown, and the wasm
//    memory afterwards (`window.__bufscope_wasm_bytes()`, src/ui/mod.rs);
// 3. the scripted pan and zoom of frames.mjs (120 steps): frame intervals and draw times.
// Prints one line per measure as it goes, then one Markdown table with the native figures
// beside the browser's, and which targets are met. A tab that crashes is reported, not fatal.
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { forceUsesWorker, open } from '../e2e/harness.mjs';
import { panZoom, stats } from './frames.mjs';

const [, , base, nativeFile, ...files] = process.argv;
if (!nativeFile || files.length === 0) {
  console.error('usage: node tests/bench/scale_bench.mjs BASE_URL NATIVE.jsonl FILE...');
  process.exit(2);
}
const native = new Map(
  readFileSync(nativeFile, 'utf8').split('\n').filter(Boolean).map((l) => {
    const j = JSON.parse(l);
    return [path.resolve(j.path), j];
  }),
);
const STEPS = Number(process.env.BENCH_STEPS || 120);
const LOAD_TIMEOUT = 900000;

const app = await open();
// BENCH_USES_WORKER=1: the app gets its `Used values` worker whatever the machine's cores
// (src/ui/read/uses_worker.rs; on fewer than 4 it reads them on the page's thread).
if (process.env.BENCH_USES_WORKER === '1') await forceUsesWorker(app.context);
// BENCH_WORKERS=N: the page's read behind on N lanes, its own and N - 1 piece workers
// (src/ui/read/pieces.rs; by default as many as logical processors, up to 4).
if (process.env.BENCH_WORKERS) {
  await app.context.addInitScript((n) => { window.__bufscope_workers = n; }, Number(process.env.BENCH_WORKERS));
}
app.page.on('crash', () => {});
const log = (s) => console.log(`[bench] ${s}`);

/** A fresh page with the app loaded; `crashed` turns true if its renderer dies. */
async function freshPage() {
  const old = app.context.pages();
  const page = await app.context.newPage();
  for (const p of old) await p.close();
  const state = { crashed: false, errors: [] };
  page.on('crash', () => { state.crashed = true; });
  page.on('pageerror', (e) => state.errors.push(e.message));
  page.on('console', (m) => { if (m.type() === 'error') state.errors.push(m.text()); });
  await page.goto(base, { waitUntil: 'load' });
  await page.locator('#file-input').waitFor({ state: 'attached', timeout: 20000 });
  return { page, state };
}

/** Starts the in-page monitor: change time, frame gaps per phase, progress steps, shown time. */
async function monitor(page, name) {
  await page.evaluate((name) => {
    const m = (window.__load = { change: null, shown: null, complete: null, reading: 0, end: 0, details: 0, percents: [], frames: 0, running: true });
    document.addEventListener('change', () => { m.change ??= performance.now(); }, { capture: true });
    let last = performance.now();
    const tick = () => {
      const now = performance.now();
      const what = document.querySelector('.progress .what')?.textContent ?? '';
      if (m.change !== null && m.shown === null) {
        const phase = what.startsWith('Reading') ? 'reading' : 'end';
        m[phase] = Math.max(m[phase], now - last);
      }
      m.frames++;
      const pc = document.querySelector('.progress .percent')?.textContent;
      if (pc && m.percents.at(-1) !== pc) m.percents.push(pc);
      if (m.shown !== null && m.complete === null) {
        // After the diagrams: the `Used values` read until the modules are complete.
        m.details = Math.max(m.details, now - last);
        if (!document.querySelector('#details-status')) m.complete = now;
      }
      if (m.shown === null && document.querySelector('.files-line')?.textContent === `Read ${name}` &&
          document.querySelector('.diagram')?.dataset.view) m.shown = now;
      last = now;
      if (m.running) requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  }, name);
}

async function cancelRun(file) {
  const { page, state } = await freshPage();
  try {
    await page.locator('#file-input').setInputFiles(file);
    await page.waitForFunction(() => parseInt(document.querySelector('.progress .percent')?.textContent ?? '', 10) >= 10,
      null, { timeout: LOAD_TIMEOUT, polling: 'raf' });
    const t = Date.now();
    await page.locator('.progress button.cancel').click();
    await page.locator('.progress').waitFor({ state: 'detached', timeout: 30000 });
    const ms = Date.now() - t;
    const report = (await page.locator('.report').textContent()) ?? '';
    return { ok: /cancelled/i.test(report) && !state.crashed, ms };
  } catch (e) {
    return { ok: false, ms: NaN, error: state.crashed ? 'tab crashed' : String(e.message).split('\n')[0] };
  }
}

async function loadRun(file) {
  const name = path.basename(file);
  const { page, state } = await freshPage();
  const out = { crashed: false };
  try {
    await monitor(page, name);
    const t0 = Date.now();
    await page.locator('#file-input').setInputFiles(file);
    await page.waitForFunction(() => window.__load.complete !== null, null, { timeout: LOAD_TIMEOUT, polling: 500 });
    out.wallS = (Date.now() - t0) / 1000;
    const m = await page.evaluate(() => { window.__load.running = false; return window.__load; });
    out.loadMs = m.shown - m.change;
    out.completeMs = m.complete - m.change;
    out.stallDetails = m.details;
    out.stallReading = m.reading;
    out.stallEnd = m.end;
    out.percents = m.percents.length;
    out.timings = await page.locator('.report').evaluate((r) => ({ ...r.dataset }));
    out.wasm = await page.evaluate(() => window.__bufscope_wasm_bytes?.() ?? null);
    const shown = await page.locator('.module .module-name').first().textContent();
    out.module = shown;
    log(`${name}: diagram ${(out.loadMs / 1000).toFixed(2)} s after the pick (read ${out.timings.readMs} ms, parsing ${out.timings.parseMs} ms of it, ` +
      `join ${out.timings.joinMs} ms, analyse ${out.timings.analyseMs} ms), complete ${(out.completeMs / 1000).toFixed(2)} s; longest frame gap ` +
      `${out.stallReading.toFixed(0)} ms while reading, ${out.stallEnd.toFixed(0)} ms at the end, ${out.stallDetails.toFixed(0)} ms while completing; ` +
      `${out.percents} progress steps; wasm memory ${(out.wasm / 2 ** 20).toFixed(0)} MiB`);
    const t1 = Date.now();
    const { frames, draws } = await panZoom(page, STEPS);
    out.frames = stats(frames);
    out.draws = stats(draws);
    log(`${name}: ${STEPS} pan/zoom steps in ${((Date.now() - t1) / 1000).toFixed(1)} s: frames median ` +
      `${out.frames.median.toFixed(1)} ms, worst ${out.frames.worst.toFixed(1)} ms (${out.frames.n}); draws median ` +
      `${out.draws.median.toFixed(1)} ms, worst ${out.draws.worst.toFixed(1)} ms (${out.draws.n})`);
  } catch (e) {
    out.error = state.crashed ? 'the tab crashed' : String(e.message).split('\n')[0];
    log(`${name}: FAILED: ${out.error}`);
  }
  out.crashed = state.crashed;
  if (state.errors.length) log(`${name}: page errors: ${state.errors.slice(0, 3).join(' | ')}`);
  return out;
}

const rows = [];
for (const file of files) {
  const size = statSync(file).size;
  const nat = native.get(path.resolve(file));
  log(`${path.basename(file)} (${(size / 1e6).toFixed(0)} MB)`);
  const cancel = await cancelRun(file);
  log(`${path.basename(file)}: Cancel at ≥ 10 %: ${cancel.ok ? `progress gone ${cancel.ms} ms after the click` : `FAILED ${cancel.error ?? ''}`}`);
  const b = await loadRun(file);
  rows.push({ file, size, nat, cancel, b });
}
await app.context.close();

// ---------------------------------------------------------------- the table
const MB = 1e6;
const f1 = (x) => (Number.isFinite(x) ? x.toFixed(1) : '–');
const f2 = (x) => (Number.isFinite(x) ? x.toFixed(2) : '–');
const sec = (ms) => (Number.isFinite(ms) ? (ms >= 10000 ? `${(ms / 1000).toFixed(1)} s` : ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(0)} ms`) : '–');
const label = (r) => {
  const base = path.basename(r.file).replace(/\.buffer-assignment\.txt$|\.txt$/, '');
  return `${base} (${(r.size / MB).toFixed(0)} MB)`;
};
console.log('');
console.log('| input | native read + analysis | native diagrams first / then Used values | memchr | native ÷ memchr | native peak heap ÷ file | browser: diagram / complete | browser complete ÷ native | browser ms/MB | wasm memory ÷ file | longest stall: reading / end / completing | Cancel | frame interval median / p95 / worst | app draw median / p95 / worst |');
console.log('|---|---|---|---|---|---|---|---|---|---|---|---|---|---|');
for (const r of rows) {
  const n = r.nat;
  const b = r.b;
  const nt = n?.total_ms ?? NaN;
  const fail = b.error ? ` (${b.error})` : '';
  console.log([
    '', label(r),
    sec(nt), `${sec(n?.first_ms ?? NaN)} / ${sec(n?.complete_ms ?? NaN)}`, sec(n?.memchr_ms ?? NaN), `${f1(nt / n?.memchr_ms)}×`,
    `${f2((n?.peak_heap_bytes ?? NaN) / r.size)}×`,
    `${sec(b.loadMs)} / ${sec(b.completeMs)}` + fail, `${f2(b.completeMs / nt)}×`, f2(b.completeMs / (r.size / MB)),
    `${f2((b.wasm ?? NaN) / r.size)}× (${f1((b.wasm ?? NaN) / 2 ** 20)} MiB)`,
    `${sec(b.stallReading)} / ${sec(b.stallEnd)} / ${sec(b.stallDetails)}`,
    r.cancel.ok ? `ok, ${r.cancel.ms} ms` : 'FAILED',
    `${f1(b.frames?.median)} / ${f1(b.frames?.p95)} / ${f1(b.frames?.worst)} ms`,
    `${f1(b.draws?.median)} / ${f1(b.draws?.p95)} / ${f1(b.draws?.worst)} ms`, '',
  ].join(' | ').trim());
}
const big = rows.reduce((a, r) => (r.size > a.size ? r : a), rows[0]);
const verdict = (ok) => (ok ? 'met' : 'NOT met');
const worstNative = Math.max(...rows.map((r) => r.nat.total_ms / r.nat.memchr_ms));
const worstBrowser = Math.max(...rows.map((r) => r.b.completeMs / r.nat.total_ms));
const worstWasm = Math.max(...rows.map((r) => (r.b.wasm ?? Infinity) / r.size));
console.log('');
console.log(`Targets (over all inputs; the largest is ${label(big)}):`);
console.log(`- the largest loads without a crash: ${verdict(!big.b.error && !big.b.crashed)}${big.b.error ? ` (${big.b.error})` : ''}`);
console.log(`- wasm memory ≤ 1.5× the file: worst ${f2(worstWasm)}×: ${verdict(worstWasm <= 1.5)}`);
console.log(`- Cancel works while reading: ${verdict(rows.every((r) => r.cancel.ok))}; progress steps shown: ${rows.map((r) => r.b.percents ?? 0).join(', ')}`);
// At 60 Hz a frame comes every 16.7 ms, give or take the timer's jitter; an interval of
// 25 ms (1.5 periods) or more means at least one vsync went by without a new frame.
console.log(`- ≥ 60 fps during pan/zoom on the largest: frame interval median ${f1(big.b.frames?.median)} ms: ${verdict(big.b.frames?.median < 17)}; ` +
  `no frame missed (every interval < 25 ms, 1.5 vsync periods): p95 ${f1(big.b.frames?.p95)} ms, worst ${f1(big.b.frames?.worst)} ms: ${verdict(big.b.frames?.worst < 25)}`);
const stall = Math.max(...rows.flatMap((r) => [r.b.stallReading, r.b.stallEnd, r.b.stallDetails].map((x) => x ?? NaN)));
console.log(`- no frame gap over 100 ms while loading: longest while reading ${sec(Math.max(...rows.map((r) => r.b.stallReading ?? NaN)))}, ` +
  `at the end (join, analysis, first drawing, all in pieces) ${sec(Math.max(...rows.map((r) => r.b.stallEnd ?? NaN)))}, ` +
  `while completing ${sec(Math.max(...rows.map((r) => r.b.stallDetails ?? NaN)))}: ${verdict(stall <= 100)}`);
for (const [what, limitDiagram, limitAll] of [['cpu_deep_unrolled_500', 300, 800], ['generated-1GB', 2000, 4000]]) {
  const r = rows.find((r) => path.basename(r.file).startsWith(what));
  if (r) {
    console.log(`- ${label(r)}: diagram ≤ ${sec(limitDiagram)}: ${sec(r.b.loadMs)}: ${verdict(r.b.loadMs <= limitDiagram)}; ` +
      `everything ≤ ${sec(limitAll)}: ${sec(r.b.completeMs)}: ${verdict(r.b.completeMs <= limitAll)}`);
  }
}
console.log(`- native read + analysis ≤ 4× memchr: worst ${f1(worstNative)}×: ${verdict(worstNative <= 4)}`);
console.log(`- browser ÷ native for the complete load ≤ 1.5×: worst ${f2(worstBrowser)}×: ${verdict(worstBrowser <= 1.5)}`);
process.exit(rows.some((r) => r.b.error) ? 1 : 0);
