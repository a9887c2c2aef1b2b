// Times the what-if's ticks on one dump (by default the 94 MB one of ../shared, dumps/cpu/
// jax0.6.2/cpu_deep_unrolled_500.buffer-assignment.txt): from a tick (the input event's own
// timestamp) to the painted frame where the diagram has drawn the tick's estimate dashed and
// the panel shows its peak (the verdict of that many ticks, and the diagram's estimate the
// verdict's, by `window.__bufscope_estimate_drawn`). Ticks, one after another (the estimate
// is of all of them): idle candidates' remat ticks, icicle frames' remat ticks (the frame
// chosen first, not timed), categories' offload ticks, then some unticked. Prints each, and
// the median and the slowest per kind and over all. Not a test (run.sh runs *.test.mjs
// only); it needs a dist built with `--features test-hooks`, as tests/e2e/run.sh builds
// target/e2e-dist:
//   node tests/e2e/serve.mjs target/e2e-dist 0 &
//   node tests/bench/whatif_bench.mjs http://127.0.0.1:PORT/ [FILE]
import { existsSync } from 'node:fs';
import path from 'node:path';
import { SHARED, open } from '../e2e/harness.mjs';
import { arm, reading } from './clock.mjs';

const file = process.argv[3] || path.join(SHARED, 'dumps/cpu/jax0.6.2/cpu_deep_unrolled_500.buffer-assignment.txt');
if (!existsSync(file)) {
  console.log(`SKIPPED: ${file} is not there`);
  process.exit(0);
}
const app = await open({ viewport: { width: 1280, height: 720 } });
const { page } = app;
await app.load();

/** Whether the estimate of the new ticks is drawn (in the page, for clock.mjs's `arm`):
 *  the verdict of another number of ticks than `b`, and the diagram's estimate of colour
 *  `c` the verdict's (none when the estimate equals the real curve, and no verdict when
 *  nothing is left ticked). */
const estimateDrawn = ([b, c]) => {
  const v = document.querySelector('#whatif-verdict');
  const d = window.__bufscope_estimate_drawn(c);
  if (!v) return b !== 0 && !d;
  if (Number(v.dataset.ticks) === b) return false;
  return v.dataset.changed === 'false' ? !d : !!d && d.area === Number(v.dataset.area);
};

const results = [];
const ticks = async () => Number((await page.locator('#whatif-verdict').count()) ? await page.locator('#whatif-verdict').getAttribute('data-ticks') : 0);
async function timed(kind, what, box) {
  if ((await box.count()) === 0) {
    console.log(`${kind}: ${what}: not offered by this dump`);
    return;
  }
  const on = !(await box.evaluate((e) => e.checked));
  const color = Number(await page.locator('#answers-space').inputValue());
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0))));
  const before = await ticks();
  await arm(page, estimateDrawn, [before, color]);
  await box.click();
  let ms;
  try {
    ms = await reading(page, 60000);
  } catch {
    console.log(`${kind}: ${what}: the tick changed nothing (no value it can act on)`);
    return;
  }
  const acts = await box.getAttribute('data-acts');
  const peak = (await page.locator('#whatif-verdict').count()) ? await page.locator('#whatif-verdict').getAttribute('data-peak') : '-';
  results.push([kind, ms]);
  console.log(`${kind}: ${what} ${on ? 'ticked' : 'unticked'} (${acts ?? 1} values; ${await ticks()} ticked in all; estimated peak ${peak}): ${ms} ms`);
}

let t = Date.now();
await page.locator('#file-input').setInputFiles([file]);
await page.locator('#answers .answers-toggle').waitFor({ timeout: 600000 });
await app.waitForDetails(600000);
console.log(`load until the module is complete: ${Date.now() - t} ms`);
await page.locator('#answers .answers-toggle').click();
await page.locator('#answers .answers-live').waitFor({ timeout: 600000 });
await page.locator('#answers-idle-open').click();
await page.locator('#answers-idle tr.idle-row').first().waitFor({ timeout: 600000 });

// Idle candidates: the first ten rows with a remat tick.
const rows = page.locator('#answers-idle tr.idle-row:has(input.tick-remat)');
const nRows = Math.min(10, await rows.count());
for (let i = 0; i < nRows; i++) {
  const r = rows.nth(i);
  await timed('candidate', await r.getAttribute('data-name'), r.locator('input.tick-remat'));
}
// Icicle frames: the widest frame below the one in view, chosen (which zooms into it), then
// ticked; five levels down.
for (let level = 0; level < 5; level++) {
  const f = page.locator('#answers-icicle .frame[data-depth="1"]').first();
  if ((await f.count()) === 0) continue;
  const title = (await f.getAttribute('title')).split(' · ')[0];
  await f.click();
  await timed('icicle frame', title, page.locator('#answers-icicle .icicle-ticks input.tick-remat'));
}
// Categories: each row's offload tick.
const cats = page.locator('#answers-categories tr.category-row');
for (let i = 0; i < Math.min(5, await cats.count()); i++) {
  const r = cats.nth(i);
  const box = r.locator('input.tick-offload');
  if (await box.evaluate((e) => e.checked)) continue;
  await timed('category', await r.getAttribute('data-label'), box);
}
// Some unticked again.
for (let i = 0; i < Math.min(3, nRows); i++) {
  const r = rows.nth(i);
  const box = r.locator('input.tick-remat');
  if (await box.evaluate((e) => e.checked)) await timed('untick', await r.getAttribute('data-name'), box);
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : Math.round((s[s.length / 2 - 1] + s[s.length / 2]) / 2);
};
for (const kind of [...new Set(results.map((r) => r[0])), 'all']) {
  const ms = results.filter((r) => kind === 'all' || r[0] === kind).map((r) => r[1]);
  if (ms.length) console.log(`${kind}: ${ms.length} ticks, median ${median(ms)} ms, max ${Math.max(...ms)} ms (tick to painted frame with the estimate)`);
}
await page.locator('#answers-whatif').scrollIntoViewIfNeeded();
await page.screenshot({ path: path.join(process.cwd(), 'target', 'whatif-bench.png') });
await app.context.close();
