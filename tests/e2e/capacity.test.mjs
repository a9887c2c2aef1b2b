// Browser tests of the answers drawn on the diagrams: the capacity chosen in the answers
// panel as a line on its space's curve (the part over it shaded, the verdict beside it), and
// the selected value's idle stretch on its block with its uses as steps in the details.
//   node tests/e2e/capacity.test.mjs http://127.0.0.1:PORT/
// Reads pixels of the canvases at the places the test hooks give
// (`__bufscope_bytes_px`, `__bufscope_step_px`, `__bufscope_block_px`: src/ui/canvas/hooks.rs).
// The figures of TPU dump 000 are checked by hand in tests/answers.rs: occupied peaks of
// 65,536 B (colour 0) and 41,472 B (colour 1); copy-start.1{0} (colour 1, 16,384 B) is live
// at steps 6-13 and used at 12 and 13, so idle at steps 7-11. Screenshots go to
// tests/artifacts/capacity-*.png. The last line is `N passed, M failed`.
import path from 'node:path';
import {
  TPU, artifacts, assert, canvasPixels, capacityLineAt, fixture, open, run, test,
} from './harness.mjs';

const shot = (name) => path.join(artifacts, `capacity-${name}.png`);
const app = await open();
const { page } = app;

const frame = () => page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
const canvas = (color) => page.locator(`canvas.space-canvas[data-color="${color}"]`);

// Orange: red high, green well above blue (the peak's red, and its text blended into white,
// has green = blue).
const orange = (p) => p[0] > 200 && p[1] > 90 && p[1] < 190 && p[1] - p[2] > 30;
const pixels = (color, x, y, dy = 0) => canvasPixels(page, color, x, y, dy);

/** The pixels of the curve strip of a canvas at the rows between two byte values. */
async function curveBand(color, bytesLo, bytesHi) {
  const lo = await page.evaluate(([c, b]) => window.__bufscope_bytes_px(c, b), [color, bytesLo]);
  const hi = await page.evaluate(([c, b]) => window.__bufscope_bytes_px(c, b), [color, bytesHi]);
  return page.evaluate(([color, x0, yTop, yBottom]) => {
    const c = document.querySelector(`canvas.space-canvas[data-color="${color}"]`);
    const r = c.getBoundingClientRect();
    const s = c.width / c.clientWidth;
    const top = Math.round((yTop - r.top) * s);
    const h = Math.max(1, Math.round((yBottom - r.top) * s) - top);
    const left = Math.round((x0 - r.left) * s) + 2;
    const { data } = c.getContext('2d').getImageData(left, top, c.width - left - 2, h);
    const out = [];
    for (let i = 0; i < data.length; i += 4) out.push([data[i], data[i + 1], data[i + 2]]);
    return out;
  }, [color, lo.x, hi.y, lo.y]);
}

const lineAt = (color, bytes) => capacityLineAt(page, color, bytes);

/** Loads the app, picks TPU dump 000 and opens the answers panel. */
async function tpuWithAnswers() {
  await app.load();
  await app.pick(TPU);
  await canvas(0).waitFor({ timeout: 20000 });
  await app.openAnswers();
}

async function chooseSpace(color) {
  await page.locator('#answers-space').selectOption(String(color));
  await frame();
}

test('the capacity chosen is a line at its bytes on the curve, the excess shaded, the verdict beside it', async () => {
  await tpuWithAnswers();
  // The diagram at the window's width (lineAt places its points by the canvas's width):
  // the details panel beside it folded for this test.
  await page.locator('.side-fold').click();
  await chooseSpace(0);
  await canvas(0).scrollIntoViewIfNeeded();
  await frame();
  const shadeBefore = (await curveBand(0, 0, 65536 * 1.3)).filter(orange).length;
  assert(shadeBefore === 0, `${shadeBefore} orange pixels before any capacity`);
  assert(!(await lineAt(0, 32768)), 'a capacity line before any was chosen');

  // 32 KiB: half the 64 KiB peak.
  await page.locator('#capacity-size').fill('32KiB');
  await page.locator('#capacity-size').press('Enter');
  await page.locator('#capacity-size').blur();
  const verdict = page.locator('#answers-capacity .capacity-verdict');
  await page.waitForFunction(() => document.querySelector('#answers-capacity .capacity-verdict')?.dataset.fits === 'false');
  assert(/exceeds .* by 32\.0 KiB/.test(await verdict.textContent()), `verdict "${await verdict.textContent()}"`);
  await frame();
  await frame();
  assert(await lineAt(0, 32768), 'no capacity line at 32 KiB on the curve of colour 0');
  const shaded = (await curveBand(0, 32768, 65536)).filter(orange).length;
  assert(shaded > 50, `only ${shaded} orange pixels between 32 and 64 KiB`);
  assert(!(await lineAt(1, 32768)), 'the capacity of colour 0 drawn on colour 1');
  await canvas(0).screenshot({ path: shot('1-32KiB') });

  // A device far above the peak: the curve's range reaches it, nothing is shaded.
  await page.locator('#capacity-device').selectOption('TPU v5e');
  await page.waitForFunction(() => document.querySelector('#answers-capacity .capacity-verdict')?.dataset.fits === 'true');
  assert(/headroom/.test(await verdict.textContent()), `verdict "${await verdict.textContent()}"`);
  await frame();
  await frame();
  const gib16 = 16 * 2 ** 30;
  assert(await lineAt(0, gib16), 'no capacity line at 16 GiB');
  const shadedNow = (await curveBand(0, 0, gib16)).filter(orange).length;
  assert(shadedNow === 0, `${shadedNow} orange pixels under a capacity above the peak`);
  assert((await page.locator('#capacity-size').inputValue()) === '', 'the typed size stayed beside a device');
  await canvas(0).screenshot({ path: shot('2-v5e') });

  // On a dark page: the same line and shade in the dark palette (a screenshot to look at).
  await page.emulateMedia({ colorScheme: 'dark' });
  await page.locator('#capacity-size').fill('48KiB');
  await page.locator('#capacity-size').press('Enter');
  await page.locator('#capacity-size').blur();
  await page.waitForFunction(() => document.querySelector('#answers-capacity .capacity-verdict')?.dataset.fits === 'false');
  await frame();
  await frame();
  await canvas(0).screenshot({ path: shot('2-dark') });
  await page.emulateMedia({ colorScheme: 'light' });
  await page.locator('#capacity-device').selectOption('TPU v5e');
  await page.waitForFunction(() => document.querySelector('#answers-capacity .capacity-verdict')?.dataset.fits === 'true');

  // Each space keeps its own choice: colour 1 has none, colour 0 still has the device.
  await chooseSpace(1);
  assert((await page.locator('#capacity-device').inputValue()) === '', 'colour 1 shows colour 0\'s device');
  assert((await page.locator('#answers-capacity .capacity-verdict').count()) === 0, 'a verdict for colour 1');
  await chooseSpace(0);
  assert((await page.locator('#capacity-device').inputValue()) === 'TPU v5e', 'colour 0 lost its device');
  assert(/headroom/.test(await verdict.textContent()), 'colour 0 lost its verdict');
  await page.locator('.side-fold').click();
});

/** Mean brightness of a 5 × 5 patch of a canvas around viewport point (x, y). */
async function brightness(color, x, y) {
  let sum = 0;
  for (let dx = -2; dx <= 2; dx++) {
    for (const p of await pixels(color, x + dx, y, 2)) sum += (p[0] + p[1] + p[2]) / 3;
  }
  return sum / 25;
}

test('the selected value\'s idle stretch is drawn on its block, its uses are steps to jump to', async () => {
  const name = 'copy-start.1{0}';
  await tpuWithAnswers();
  await canvas(1).scrollIntoViewIfNeeded();
  await frame();
  const block = await page.evaluate((n) => window.__bufscope_block_px(1, n), name);
  const idle = await page.evaluate(() => window.__bufscope_step_px(1, 9));
  const busy = await page.evaluate(() => window.__bufscope_step_px(1, 12));
  assert(block && idle && busy, `no pixels for ${name}: ${JSON.stringify([block, idle, busy])}`);
  const before = await brightness(1, idle.x, block.y);
  const tickBefore = await pixels(1, busy.x - 0.5, block.y);
  await page.mouse.click(block.x, block.y);
  await page.mouse.move(5, 5);
  await page.locator('#details .details-name').filter({ hasText: name }).waitFor({ timeout: 5000 });
  await frame();
  await frame();
  const after = await brightness(1, idle.x, block.y);
  assert(after > before + 30, `the idle stretch is not faded: brightness ${before.toFixed(0)} → ${after.toFixed(0)}`);
  const tick = (await pixels(1, busy.x - 0.5, block.y))[0];
  const dark = (p) => (p[0] + p[1] + p[2]) / 3 < 80;
  assert(dark(tick) && !dark(tickBefore[0]), `no tick at the use at step 12: ${tickBefore[0]} → ${tick}`);
  await canvas(1).screenshot({ path: shot('3-idle') });

  const steps = await page.locator('#details .uses .use-step').evaluateAll((bs) => bs.map((b) => Number(b.dataset.step)));
  assert(JSON.stringify(steps.sort((a, b) => a - b)) === '[12,13]', `use steps ${steps}`);
  const longest = await page.locator('#details .idle-longest').textContent();
  assert(/16\.0 KiB × 5 steps/.test(longest) && /step 6/.test(longest) && /step 12/.test(longest), `longest idle "${longest}"`);
  await page.locator('#details .uses .use-step[data-step="12"]').click();
  await page.waitForFunction(() => document.querySelector('#answers-step')?.value === '12', null, { timeout: 5000 });
  await page.locator('#details').screenshot({ path: shot('4-details') });

  // Zoomed in around step 4, a use at step 13 is out of view: a click on it pans there.
  const view = async () => (await page.locator('.diagram[data-color="1"]').getAttribute('data-view')).split(',').map(Number);
  await page.locator('.diagram[data-color="1"]').focus();
  for (let i = 0; i < 20; i++) {
    const [x0, x1] = await view();
    if (x1 < 13.5) break;
    await page.keyboard.press(x1 - x0 > 4 ? 'w' : 'a');
    await frame();
  }
  const [w0, w1] = await view();
  assert(w1 < 13.5, `could not zoom away from step 13: view ${w0}-${w1}`);
  await page.locator('#details .uses .use-step[data-step="13"]').click();
  await page.waitForFunction(() => {
    const [x0, x1] = document.querySelector('.diagram[data-color="1"]').dataset.view.split(',').map(Number);
    return x0 <= 13.5 && 13.5 <= x1;
  }, null, { timeout: 5000 });
  const [p0, p1] = await view();
  assert(Math.abs((p1 - p0) - (w1 - w0)) < 1e-6, `the zoom changed: ${w1 - w0} → ${p1 - p0} steps`);
});

test('a dump without Used values says the uses need the values file', async () => {
  const dir = 'cpu/jax0.10.2/cpu_mlp_train';
  await app.load();
  await app.pick([fixture(`${dir}.buffer-assignment.txt`), fixture(`${dir}.live-range.txt`)]);
  const row = page.locator('#peak-table tbody tr.value-row').first();
  await row.waitFor({ timeout: 20000 });
  await row.click();
  const note = page.locator('#details .no-uses');
  await note.waitFor({ timeout: 5000 });
  assert(/buffer-assignment-values/.test(await note.textContent()), `note "${await note.textContent()}"`);
  assert((await page.locator('#details .use-step').count()) === 0, 'use steps without Used values');
});

await run(app);
