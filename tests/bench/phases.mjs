// A load's phases and frame gaps, run after run, for comparing builds (not a test):
//   [RUNS=3] [WORKERS=N] [USES_WORKER=1] node tests/bench/phases.mjs http://127.0.0.1:PORT/ [FILE]
// FILE defaults to the 94 MB dump of ../shared. Each run opens the app in a fresh page of
// one headless Chromium, picks FILE and prints one JSON line: when the diagram was shown
// and the module complete (ms after the pick, as scale_bench.mjs measures them), every gap
// between animation frames over 50 ms ([start, length]), and the report's own timings
// (read, parse, join, analyse, complete), and the page's wasm memory after (MB). The first
// run of a browser is usually slower.
import path from 'node:path';
import { existsSync } from 'node:fs';
import { SHARED, forceUsesWorker, open, watchLoad } from '../e2e/harness.mjs';

const file = process.argv[3] || path.join(SHARED, 'dumps/cpu/jax0.6.2/cpu_deep_unrolled_500.buffer-assignment.txt');
if (!existsSync(file)) { console.log(`SKIPPED: ${file} is not there`); process.exit(0); }
const runs = Number(process.env.RUNS || 3);
const app = await open({ viewport: { width: 1280, height: 720 } });
// WORKERS=N: the page's read behind on N lanes (src/ui/read/pieces.rs), as ./dev bench's
// BENCH_WORKERS; each line then says `workers`.
const workers = process.env.WORKERS ? Number(process.env.WORKERS) : undefined;
if (workers) await app.context.addInitScript((n) => { window.__bufscope_workers = n; }, workers);
// USES_WORKER=1: the `Used values` worker whatever the cores (src/ui/read/uses_worker.rs).
if (process.env.USES_WORKER === '1') await forceUsesWorker(app.context);
for (let i = 0; i < runs; i++) {
  const page = await app.context.newPage();
  for (const p of app.context.pages()) if (p !== page) await p.close();
  await page.goto(process.argv[2]);
  await page.locator('#file-input').waitFor({ state: 'attached' });
  await watchLoad(page, path.basename(file));
  await page.locator('#file-input').setInputFiles([file]);
  await page.waitForFunction(() => window.__load.complete !== null, null, { timeout: 600000, polling: 'raf' });
  const r = await page.evaluate(() => {
    const m = window.__load;
    const d = { ...document.querySelector('.report').dataset };
    const wasm = window.__bufscope_wasm_bytes?.() ?? 0;
    return { shown: Math.round(m.shown - m.change), complete: Math.round(m.complete - m.change), wasmMB: Math.round(wasm / 1e6), gaps: m.gaps, ...d };
  });
  if (workers) r.workers = workers;
  console.log(JSON.stringify(r));
}
await app.context.close();
process.exit(0);
