// Times the table of live values on the 94 MB dump (../shared/dumps/cpu/jax0.6.2/
// cpu_deep_unrolled_500.buffer-assignment.txt, 25,066 values live at the peak): the load
// until the first row, a sort by another column, a value far down selected (Enter on a
// search match) until its row is in view, a jump to the end and a scroll through the list
// a screen at a time, each until the lines there are mounted, a step chosen on the curve
// until the table lists its values; and the most rows the DOM held.
// The sorts and scrolls are timed in the page; the rest from here (Playwright's round trips
// included).
// Not a test (run.sh runs *.test.mjs only):
//   node tests/bench/table_bench.mjs http://127.0.0.1:PORT/
import { existsSync } from 'node:fs';
import path from 'node:path';
import { SHARED, open, search } from '../e2e/harness.mjs';

const file = path.join(SHARED, 'dumps/cpu/jax0.6.2/cpu_deep_unrolled_500.buffer-assignment.txt');
if (!existsSync(file)) {
  console.log(`SKIPPED: ${file} is not there`);
  process.exit(0);
}
const app = await open({ viewport: { width: 1280, height: 900 } });
const { page } = app;
await app.load();
const box = '#peak-table';
/** Two animation frames and a task: what the table mounts for its scroll position is there. */
const settle = () => page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(r, 0)))));
let most = 0;
const rows = async () => {
  const n = await page.locator(`${box} tbody tr`).count();
  most = Math.max(most, n);
  return n;
};
const scrollBox = (top) => page.evaluate((t) => {
  const el = document.querySelector('#peak-table').closest('.value-scroll');
  el.scrollTop = t;
  return new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(r, 0))));
}, top);

let t = Date.now();
await page.locator('#file-input').setInputFiles([file]);
await page.locator(`${box} tbody tr.value-row`).first().waitFor({ timeout: 600000 });
console.log(`load until the first row: ${Date.now() - t} ms`);
const lines = Number(await page.locator(box).getAttribute('data-lines'));
console.log(`lines: ${lines}, rows in the DOM: ${await rows()}`);

// In the page: from the click until the page's work is done (the next task: leptos runs
// its effects in microtasks) and until the frame after it.
for (const col of ['op_name', 'name', 'size']) {
  const [work, frame] = await page.evaluate(async (c) => {
    const t0 = performance.now();
    document.querySelector(`#peak-table th[data-col="${c}"] button`).click();
    await new Promise((r) => setTimeout(r, 0));
    const work = performance.now() - t0;
    await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
    return [work, performance.now() - t0];
  }, col);
  const sorted = await page.locator(`${box} th[data-col="${col}"]`).getAttribute('aria-sort');
  console.log(`sort by ${col} (${sorted}): ${work.toFixed(0)} ms of work, ${frame.toFixed(0)} ms to the next frame (rows in the DOM: ${await rows()})`);
}

// A value far down the size order: the 23,000th line's value, reached by a search for its name.
await scrollBox(23000 * 26);
const far = await page.locator(`${box} tbody tr.value-row`).nth(45).evaluate((tr) => ({ name: tr.querySelector('td.name').title, value: tr.dataset.value }));
await scrollBox(0);
await search(page, `^${far.name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`);
t = Date.now();
await page.locator('#search').press('Enter');
await page.waitForFunction((v) => {
  const el = document.querySelector('#peak-table').closest('.value-scroll');
  const row = el.querySelector(`tr.value-row.selected[data-value="${v}"]`);
  return row && row.getBoundingClientRect().bottom <= el.getBoundingClientRect().bottom + 1;
}, far.value, { timeout: 600000 });
console.log(`select a value ~23,000 lines down until its row is in view: ${Date.now() - t} ms (rows in the DOM: ${await rows()})`);
await page.locator('#search').fill('');

t = Date.now();
await scrollBox(lines * 26);
await page.waitForFunction(() => {
  const spacers = document.querySelectorAll('#peak-table tbody tr.spacer');
  return spacers[spacers.length - 1].getBoundingClientRect().height <= 1;
}, null, { timeout: 600000 });
console.log(`jump to the end until the last lines are mounted: ${Date.now() - t} ms (rows in the DOM: ${await rows()})`);

// A screen at a time from the top, 200 screens: each scroll until its lines are mounted.
await scrollBox(0);
const height = await page.evaluate(() => document.querySelector('#peak-table').closest('.value-scroll').clientHeight);
const times = [];
for (let i = 1; i <= 200; i++) {
  times.push(await page.evaluate(async (top) => {
    const el = document.querySelector('#peak-table').closest('.value-scroll');
    const t0 = performance.now();
    el.scrollTop = top;
    await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
    return performance.now() - t0;
  }, i * height));
  await rows();
}
times.sort((a, b) => a - b);
const at = (q) => times[Math.min(times.length - 1, Math.floor(q * times.length))];
const ms = (x) => x.toFixed(0);
console.log(`scroll a screen (${height} px), 200 times, until its lines are mounted: median ${ms(at(0.5))} ms, p90 ${ms(at(0.9))} ms, max ${ms(times[times.length - 1])} ms (one frame included)`);
// A step chosen on the curve (half way to the peak, or nearer if that is not in view, with
// the diagram's view reset): until the table lists its values.
const peak = Number(await page.locator('.peak-summary').getAttribute('data-step'));
await page.locator('canvas.space-canvas[data-color="0"]').scrollIntoViewIfNeeded();
await page.evaluate(() => document.activeElement?.blur());
await page.keyboard.press('0');
let point = null;
for (const step of [Math.floor(peak / 2), peak - 5000, peak - 500, peak - 50]) {
  point = point ?? await page.evaluate((s) => window.__bufscope_step_px(0, s), step);
}
if (point) {
  t = Date.now();
  await page.mouse.click(point.x, point.y);
  await page.waitForFunction((p) => document.querySelector('.peak-summary')?.dataset.step !== String(p), peak, { timeout: 600000 });
  const summary = page.locator('.peak-summary');
  console.log(`a step chosen on the curve (${await summary.getAttribute('data-step')}) until the table lists its ${await summary.getAttribute('data-count')} values: ${Date.now() - t} ms (rows in the DOM: ${await rows()})`);
}
console.log(`most rows in the DOM at once: ${most} (including 2 spacers)`);
await page.screenshot({ path: path.join(process.cwd(), 'target', 'table-deep500.png') });
await app.context.close();
