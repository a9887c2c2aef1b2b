// Times the answers panel on one dump (by default the 94 MB one of ../shared, dumps/cpu/
// jax0.6.2/cpu_deep_unrolled_500.buffer-assignment.txt): the panel shown, then each view
// reached by a click, from the click until the panel shows it and the next frame has come:
// a step chosen on the curve, a listed peak, previous / next peak, XLA's peak, typed, the
// space's own peak, another memory space, an icicle frame, the idle stretches asked for
// (and a step after that, which ranks them too), "show more". A view the dump
// does not offer (a button disabled, one memory space) says so. Not a test (run.sh runs
// *.test.mjs only); it needs a dist built with `--features test-hooks` (the curve's
// position of a step), as tests/e2e/run.sh builds target/e2e-dist:
//   node tests/e2e/serve.mjs target/e2e-dist 0 &
//   node tests/bench/answers_bench.mjs http://127.0.0.1:PORT/ [FILE]
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
const frame = () => page.evaluate(() => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0))));
const results = [];
/** Clicks (`act`), waits for `done` in the page, then a frame; prints the time from the
 *  test's side (Playwright's click and its round trips included, about 65 ms here) and in
 *  the page (the input event to the painted frame: what the user waits for). */
async function timed(what, act, done, arg) {
  await arm(page, done, arg);
  const start = Date.now();
  await act();
  await page.waitForFunction(done, arg, { timeout: 600000 });
  await frame();
  const ms = Date.now() - start;
  const inPage = await reading(page, 600000);
  results.push([what, ms, inPage]);
  console.log(`${what}: ${ms} ms (in the page, input to painted frame: ${inPage} ms)`);
}
const step = () => page.locator('#answers .answers-live').getAttribute('data-step');
const stepIsNot = (b) => document.querySelector('#answers .answers-live')?.dataset.step !== b;
async function stepChange(what, act) {
  const before = await step();
  await timed(what, act, stepIsNot, before);
  console.log(`  (step ${before} → ${await step()})`);
}
async function button(what, selector) {
  const b = page.locator(selector).first();
  if ((await b.count()) === 0 || !(await b.isEnabled())) {
    console.log(`${what}: not offered by this dump`);
    return;
  }
  await stepChange(what, () => b.click());
}

let t = Date.now();
await page.locator('#file-input').setInputFiles([file]);
await page.locator('#answers .answers-toggle').waitFor({ timeout: 600000 });
await page.waitForFunction(() => document.querySelector('canvas.space-canvas'), null, { timeout: 600000 });
await frame();
console.log(`load until the diagram shows: ${Date.now() - t} ms`);
await app.waitForDetails(600000);
console.log(`load until the module is complete (Used values read): ${Date.now() - t} ms`);
await timed('show the panel', () => page.locator('#answers .answers-toggle').click(),
  () => document.querySelector('#answers .answers-live') && document.querySelector('#answers-icicle .frame')
    && document.querySelector('#answers-idle tr.idle-row, #answers-idle .idle-message, #answers-idle-open'));

// A step on the curve: a third of the way along the program.
const color = await page.locator('#answers-space').inputValue();
const steps = Number(await page.locator('#answers-step').getAttribute('max')) + 1;
await page.locator(`canvas.space-canvas[data-color="${color}"]`).scrollIntoViewIfNeeded();
const at = await page.evaluate(([c, s]) => window.__bufscope_step_px(Number(c), s), [color, Math.floor(steps / 3)]);
if (at) await stepChange('step by a click on the curve', () => page.mouse.click(at.x, at.y));
else console.log('step by a click on the curve: the step is not in view');
await page.locator('#answers').scrollIntoViewIfNeeded();
await button('a listed peak', '#answers-peaks-list .answers-peak:not([aria-current])');
await button('previous peak', '#answers-prev-peak');
await button('next peak', '#answers-next-peak');
await button("XLA's peak", '#answers-xla-peak');
await stepChange('step typed (1000)', async () => {
  await page.locator('#answers-step').fill('1000');
  await page.locator('#answers-step').press('Enter');
});
await button("this space's peak", '#answers-own-peak');

const spaces = await page.locator('#answers-space option').evaluateAll((os) => os.map((o) => o.value));
const other = spaces.find((c) => c !== color);
if (other !== undefined) {
  await timed('another memory space', () => page.locator('#answers-space').selectOption(other),
    (c) => document.querySelector('#answers .answers-live')?.dataset.bytes !== undefined
      && document.querySelector('#answers-space')?.value === c, other);
} else console.log('another memory space: this dump has one');

const icicle = page.locator('#answers-icicle .frame[data-depth="1"]').first();
if (await icicle.count()) {
  await timed('an icicle frame', () => icicle.click(),
    () => Number(document.querySelector('#answers-icicle')?.dataset.highlighted) > 0);
  await page.locator('#icicle-clear').click();
}
const idle = page.locator('#answers-idle-open');
if (await idle.count()) {
  await timed('the idle stretches asked for', () => idle.click(),
    () => document.querySelector('#answers-idle tr.idle-row, #answers-idle .idle-message'));
  await stepChange('step typed (1000), idle stretches ranked too', async () => {
    await page.locator('#answers-step').fill('1000');
    await page.locator('#answers-step').press('Enter');
  });
  await button("this space's peak, idle stretches ranked too", '#answers-own-peak');
}
for (const id of ['answers-source', 'answers-idle']) {
  const more = page.locator(`#${id} .answers-more`);
  if ((await more.count()) === 0) continue;
  const rows = await page.locator(`#${id} tbody tr`).count();
  await timed(`show more (${id})`, () => more.click(),
    ([i, n]) => document.querySelectorAll(`#${i} tbody tr`).length > n, [id, rows]);
}
for (const [col, label] of [[1, 'from the test'], [2, 'in the page']]) {
  const worst = results.reduce((w, r) => (r[col] > w[col] ? r : w), ['', 0, 0]);
  console.log(`${label}: slowest ${worst[0]}, ${worst[col]} ms; ${results.filter((r) => r[col] > 200).length} of ${results.length} views over 200 ms`);
}
console.log(`rows and frames in the panel: ${await page.locator('#answers tr, #answers .frame').count()}`);
await page.screenshot({ path: path.join(process.cwd(), 'target', 'answers-bench.png') });
await app.context.close();
