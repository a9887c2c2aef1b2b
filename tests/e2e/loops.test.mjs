// Browser tests of the loops (issue 24): the TPU scan dump with its HLO text picked whole
// shows each while as bands over the time axis, a click on a band zooms the diagram to its
// steps, and the answers panel says what each loop holds.
//   node tests/e2e/loops.test.mjs http://127.0.0.1:PORT/
// The figures were read by hand from the dump (tests/loops.rs): while.43's condition at
// steps 161–164, body 165–205, 8 trips; while.42 (backward) body 346–725; while.43{2}, the
// residuals stacked along the 8 layers. A 1280×720 screenshot goes to
// tests/artifacts/loops.png.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { SHARED, assert, open as openBrowser, run, skip, test } from './harness.mjs';

const DIR = path.join(SHARED, 'dumps/tpu-aot/jax0.12-libtpu0.0.50');
const FILES = ['buffer-assignment.txt', 'buffer-assignment-values.txt', 'live-range.txt', 'after_optimizations.txt']
  .map((s) => path.join(DIR, `tpu_v5e_lm_scan_remat.${s}`));

const app = await openBrowser({ viewport: { width: 1280, height: 720 } });
const { page } = app;

const bands = () => page.evaluate(() => window.__bufscope_loop_bands?.(0) ?? null);

/** Loads the app, picks the scan dump with its HLO text and waits for its loop bands. */
async function scanRemat() {
  await app.load();
  await app.pickModule(FILES, 'tpu_v5e_lm_scan_remat');
  await page.waitForFunction(() => (window.__bufscope_loop_bands?.(0) ?? []).length > 0, null, { timeout: 20000 });
}

test('the loops are bands on the time axis, labelled with their steps and trips', async () => {
  if (!FILES.every(existsSync)) return skip('needs ../shared/dumps/tpu-aot');
  await scanRemat();
  const list = await bands();
  const labels = list.map((b) => b.label);
  assert(list.length === 4, `4 bands (2 loops × condition and body), got ${labels.join(' | ')}`);
  assert(labels.includes('while.43 body ×8 · steps 165–205 · forward scan'), labels.join(' | '));
  assert(labels.includes('while.42 body ×8 · steps 346–725 · backward scan'), labels.join(' | '));
  assert(labels.includes('while.43 cond · steps 161–164'), labels.join(' | '));
});

test('a click on a band zooms the diagram to its steps', async () => {
  if (!FILES.every(existsSync)) return skip('needs ../shared/dumps/tpu-aot');
  await scanRemat();
  const body = (await bands()).find((b) => b.label.startsWith('while.43 body'));
  assert(body && body.w > 2 && body.h > 2, `band ${JSON.stringify(body)}`);
  await page.mouse.click(body.x + body.w / 2, body.y + body.h / 2);
  // 165 … 206 with a margin of 41/20 steps each side: step 100 and step 300 are out of view,
  // 165 and 205 in it, and the band now spans most of the width.
  await page.waitForFunction(() => window.__bufscope_step_px(0, 100) === null, null, { timeout: 5000 });
  const at = (s) => page.evaluate((s) => window.__bufscope_step_px(0, s), s);
  assert((await at(300)) === null, 'step 300 still in view');
  const [a, b] = [await at(165), await at(205)];
  assert(a && b && b.x > a.x, `steps 165 and 205 in view: ${JSON.stringify([a, b])}`);
  // The view went from the whole program (932 steps) to 41 + 2 × 2.05 = 45.1 steps: the
  // band is about 932 / 45.1 = 20.7 times as wide.
  const zoomed = (await bands()).find((x) => x.label.startsWith('while.43 body'));
  const ratio = zoomed.w / body.w;
  assert(ratio > 17 && ratio < 25, `the body band went from ${body.w} to ${zoomed.w} px (×${ratio.toFixed(1)})`);
  await app.screenshot('loops-zoomed.png');
});

test('the answers panel says what each loop holds', async () => {
  if (!FILES.every(existsSync)) return skip('needs ../shared/dumps/tpu-aot');
  await scanRemat();
  const toggle = page.locator('#answers .answers-toggle');
  if ((await toggle.getAttribute('aria-expanded')) === 'false') await toggle.click();
  const rows = page.locator('#answers-loops tr.loop-row');
  await rows.first().waitFor({ timeout: 10000 });
  const got = await rows.evaluateAll((rs) => rs.map((r) => [r.dataset.while, r.dataset.trips]));
  assert(JSON.stringify(got) === JSON.stringify([['while.43', '8'], ['while.42', '8']]), `rows ${JSON.stringify(got)}`);
  await page.locator('#answers-loops tr.loop-row[data-while="while.43"]').click();
  const stacked = await page.locator('#answers-loop-elements tr.loop-element[data-role="stacked per iteration"]')
    .evaluateAll((rs) => rs.map((r) => r.dataset.name));
  assert(JSON.stringify(stacked) === '["while.43{2}"]', `stacked ${JSON.stringify(stacked)}`);
  const invariant = await page.locator('#answers-loop-elements tr.loop-element[data-role="loop-invariant"]').count();
  assert(invariant === 10, `${invariant} loop-invariant elements, 10 in tuple.116`);
  await page.locator('#answers-loops').scrollIntoViewIfNeeded();
  await app.screenshot('loops.png');
});

await run(app);
