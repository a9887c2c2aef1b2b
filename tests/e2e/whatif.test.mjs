// Browser tests of the what-if (#answers-whatif): a value ticked in the idle stretches and
// the loops' stacked outputs ticked, the estimate dashed over the curve, the estimated peak
// and the capacity verdict, "Fit to capacity" filling the ticks, and the plan exported.
//   node tests/e2e/whatif.test.mjs http://127.0.0.1:PORT/
// Figures worked out by hand in tests/whatif.rs: on TPU dump 000, colour 1, copy-start.1{0}
// (16,384 B) rematerialised is gone at steps 7-10, so the curve is 8,704 B at steps 7-8
// (25,088 B before) while the peak (41,472 B at step 5) stays; lm_scan_plain's 30 stacked
// outputs of while.103 (6,279,954,432 B) rematerialised leave an estimated HBM peak of
// 2,353,265,152 B (bufscope whatif). Screenshot: target/whatif-panel.png (1280×720).
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { SHARED, TPU, assert, open, repo, run, skip, test } from './harness.mjs';

const app = await open({ viewport: { width: 1280, height: 720 } });
const { page, consoleErrors } = app;

/** The estimate's colour (render::Style::estimate). */
const TEAL = [0x00, 0x8a, 0x7a];
const near = (p, c, tol = 60) => Math.abs(p[0] - c[0]) + Math.abs(p[1] - c[1]) + Math.abs(p[2] - c[2]) <= tol;

async function openModule(files, name) {
  await app.pickModule(files, name);
  const toggle = page.locator('#answers .answers-toggle');
  if ((await toggle.getAttribute('aria-expanded')) === 'false') await toggle.click();
  await page.locator('#answers .answers-live').waitFor({ timeout: 10000 });
}

/** Whether colour `color`'s canvas has the estimate's colour near `bytes` between steps. */
async function tealAt(color, bytes, steps) {
  const y = (await page.evaluate(([c, b]) => window.__bufscope_bytes_px(c, b), [color, bytes])).y;
  const xs = [];
  for (const s of steps) xs.push((await page.evaluate(([c, t]) => window.__bufscope_step_px(c, t), [color, s])).x);
  return page.evaluate(([color, x0, x1, y]) => {
    const c = document.querySelector(`canvas.space-canvas[data-color="${color}"]`);
    const r = c.getBoundingClientRect();
    const s = c.width / c.clientWidth;
    const left = Math.round((Math.min(x0, x1) - r.left) * s);
    const top = Math.round((y - r.top) * s) - 4;
    const w = Math.max(1, Math.round(Math.abs(x1 - x0) * s));
    const { data } = c.getContext('2d').getImageData(left, top, w, 9);
    const out = [];
    for (let i = 0; i < data.length; i += 4) out.push([data[i], data[i + 1], data[i + 2]]);
    return out;
  }, [color, xs[0], xs[xs.length - 1], y]).then((px) => px.some((p) => near(p, TEAL)));
}

test('a value ticked: its estimate dashed over the curve where it is gone, the peak kept', async () => {
  const before = consoleErrors.length;
  await app.load();
  await openModule([TPU], '000_0cb419b3147a3cb6');
  await page.locator('#answers-space').selectOption('1');
  await page.locator('#answers-step').fill('8');
  await page.locator('#answers-step').press('Enter');
  await page.locator('#answers-idle-open').click();
  const row = page.locator('#answers-idle tr.idle-row[data-name="copy-start.1{0}"]');
  await row.waitFor({ timeout: 10000 });
  assert(!(await tealAt(1, 8704, [7, 8, 9, 10])), 'teal before any tick');
  await row.locator('input.tick-remat').check();
  const verdict = page.locator('#whatif-verdict');
  await verdict.waitFor({ timeout: 10000 });
  assert(Number(await verdict.getAttribute('data-peak')) === 41472, `estimated peak ${await verdict.getAttribute('data-peak')}`);
  assert(/^Estimate: peak 40\.5 KiB at step 5/.test(await verdict.textContent()), await verdict.textContent());
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  assert(await tealAt(1, 8704, [7, 8, 9, 10]), 'no dashed estimate at 8,704 B over steps 7-10');
  // Offload instead: the remat tick goes.
  await row.locator('input.tick-offload').check();
  assert(!(await row.locator('input.tick-remat').isChecked()), 'remat and offload both ticked');
  await page.locator('#whatif-clear').click();
  await page.locator('#whatif-verdict').waitFor({ state: 'detached', timeout: 10000 });
  app.noNewConsoleErrors(before);
});

const PLAIN = ['buffer-assignment.txt', 'buffer-assignment-values.txt', 'live-range.txt', 'after_optimizations.txt']
  .map((s) => path.join(SHARED, 'dumps', 'tpu-aot', 'remat-ladder', `tpu_v5e_lm_scan_plain.${s}`));

test('Fit to capacity on lm_scan_plain ticks the loops, the estimate fits; the plan exports', async () => {
  if (!PLAIN.every(existsSync)) skip('needs ../shared/dumps/tpu-aot/remat-ladder');
  const before = consoleErrors.length;
  await app.load();
  await openModule(PLAIN, 'tpu_v5e_lm_scan_plain');
  await page.locator('#answers-space').selectOption('0');
  await page.locator('#whatif-loops').waitFor({ timeout: 10000 });
  assert(/30 values, 5\.8 GiB/.test(await page.locator('.whatif-loops').textContent()), await page.locator('.whatif-loops').textContent());
  await page.locator('#capacity-size').fill('4GiB');
  await page.locator('#capacity-size').press('Enter');
  await page.locator('#capacity-size').blur();
  await page.locator('#whatif-fit').click();
  const verdict = page.locator('#whatif-verdict');
  await verdict.waitFor({ timeout: 20000 });
  assert(await page.locator('#whatif-loops').isChecked(), 'Fit did not tick the loops');
  assert((await verdict.getAttribute('data-fits')) === 'true', await verdict.textContent());
  const peak = Number(await verdict.getAttribute('data-peak'));
  assert(peak <= 4 * 2 ** 30, `estimated peak ${peak}`);
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  await page.waitForTimeout(300);
  await page.locator('#answers').scrollIntoViewIfNeeded();
  await page.locator('#answers-whatif').scrollIntoViewIfNeeded();
  await page.screenshot({ path: path.join(repo, 'target', 'whatif-panel.png') });
  const [dl] = await Promise.all([page.waitForEvent('download', { timeout: 20000 }), page.locator('#whatif-export').click()]);
  const plan = JSON.parse(readFileSync(await dl.path(), 'utf8'));
  assert(dl.suggestedFilename() === 'tpu_v5e_lm_scan_plain.whatif.json', dl.suggestedFilename());
  assert(plan.estimate === true && plan.module === 'tpu_v5e_lm_scan_plain', 'plan header');
  assert(plan.plan.filter((p) => p.action === 'remat_loop').length === 30, `plan ${plan.plan.length}`);
  const hbm = plan.memory_spaces.find((s) => s.color === 0);
  assert(hbm.peak_after === peak, `exported ${hbm.peak_after} vs shown ${peak}`);
  app.noNewConsoleErrors(before);
});

await run(app);
