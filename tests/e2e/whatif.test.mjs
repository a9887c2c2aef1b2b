// Browser tests of the what-if (#answers-whatif): a value ticked in the idle stretches, an
// icicle frame, a category, one loop's and every loop's stacked outputs ticked, the estimate
// dashed over the curve, the estimated peak and the capacity verdict, a jax checkpoint
// policy chosen by name (its estimate and FLOPs those of `bufscope whatif --json --policy`,
// run here on the same files), "Fit to capacity" choosing the policy `bufscope fit` picks,
// and the plan exported. Each test opens its own page.
//   node tests/e2e/whatif.test.mjs http://127.0.0.1:PORT/
// Figures worked out by hand in tests/whatif.rs: on TPU dump 000, colour 1, copy-start.1{0}
// (16,384 B) rematerialised is gone at steps 7-10, so the curve is 8,704 B at steps 7-8
// (25,088 B before) while the peak (41,472 B at step 5) stays; lm_scan_plain's 30 stacked
// outputs of while.103 (6,279,954,432 B) rematerialised leave an estimated HBM peak of
// 2,133,518,848 B (bufscope whatif). Screenshots (1280×720): target/whatif-panel.png,
// whatif-frame.png, whatif-category.png.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { SHARED, TPU, assert, fixture, open, repo, run, skip, test } from './harness.mjs';

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

const BIN = process.env.BUFSCOPE_BIN || path.join(repo, 'target/release/bufscope');

/** `bufscope ARGS --json` on `files`, parsed. */
const cli = (args, files) =>
  JSON.parse(execFileSync(BIN, [...args, '--json', ...files], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }));

const PLAIN = ['buffer-assignment.txt', 'buffer-assignment-values.txt', 'live-range.txt', 'after_optimizations.txt']
  .map((s) => path.join(SHARED, 'dumps', 'tpu-aot', 'remat-ladder', `tpu_v5e_lm_scan_plain.${s}`));

test('Fit to capacity on lm_scan_plain chooses the policy bufscope fit picks, the estimate fits; the plan exports', async () => {
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
  if (!existsSync(BIN)) skip(`needs ${BIN} (cargo build --release)`);
  const want = cli(['fit', '--capacity', '4GiB'], PLAIN);
  await page.locator('#whatif-fit').click();
  const verdict = page.locator('#whatif-verdict');
  await verdict.waitFor({ timeout: 20000 });
  // bufscope fit --capacity 4GiB tries the stock policies first and picks the cheapest in
  // FLOPs that fits (dots_saveable, 3,091,462,656 B when written): the page chooses it, ticks
  // nothing, and its estimate is the CLI's.
  assert(want.policy.name === 'dots_saveable' && want.fits, `bufscope fit picked ${want.policy.name}`);
  assert((await page.locator('#whatif-policy').inputValue()) === want.policy.name, `chooser ${await page.locator('#whatif-policy').inputValue()}`);
  await estimated(want.plan.length);
  assert(await page.locator('#whatif-loops').evaluate((e) => !e.indeterminate && !e.checked), 'Fit ticked loops besides the policy');
  assert((await verdict.getAttribute('data-fits')) === 'true', await verdict.textContent());
  const peak = Number(await verdict.getAttribute('data-peak'));
  assert(peak === want.peak_after, `estimated peak ${peak}, bufscope fit ${want.peak_after}`);
  assert(Number(await verdict.getAttribute('data-flops-added')) === want.flops_added,
    `flops_added ${await verdict.getAttribute('data-flops-added')}, bufscope fit ${want.flops_added}`);
  // The plan in code terms, as `bufscope fit --json --capacity 4GiB` names it.
  const code = await page.locator('#whatif-code').textContent();
  assert(code.includes('In code: jax.checkpoint(layer, policy=jax.checkpoint_policies.dots_saveable)'), code);
  // while.103{2} stores an f32 copy of the layer's input (rms_norm's x32), a residual the
  // policy recomputes, not the bf16 input every policy saves: no decoder_layer_input line.
  assert(!code.includes('decoder_layer_input'), code);
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  await page.waitForTimeout(300);
  await page.locator('#answers').scrollIntoViewIfNeeded();
  await page.locator('#answers-whatif').scrollIntoViewIfNeeded();
  await page.screenshot({ path: path.join(repo, 'target', 'whatif-panel.png') });
  const [dl] = await Promise.all([page.waitForEvent('download', { timeout: 20000 }), page.locator('#whatif-export').click()]);
  const plan = JSON.parse(readFileSync(await dl.path(), 'utf8'));
  assert(dl.suggestedFilename() === 'tpu_v5e_lm_scan_plain.whatif.json', dl.suggestedFilename());
  assert(plan.estimate === true && plan.module === 'tpu_v5e_lm_scan_plain', 'plan header');
  const loops = plan.plan.filter((p) => p.action === 'remat_loop').map((p) => p.what).sort();
  const wantLoops = want.plan.filter((p) => p.action === 'remat_loop').map((p) => p.what).sort();
  assert(loops.join() === wantLoops.join(), `plan ${loops}, bufscope fit ${wantLoops}`);
  const hbm = plan.memory_spaces.find((s) => s.color === 0);
  assert(hbm.peak_after === peak, `exported ${hbm.peak_after} vs shown ${peak}`);
  app.noNewConsoleErrors(before);
});

// tests/whatif.rs works these out by hand on cpu_transformer_bf16 (peak 25,996,292 B at
// step 133, where the answers panel opens): the frame jit(transformer_block_bfloat16)/
// jit(main)/exp holds one temporary, subtract_exponential_fusion.clone (2,097,152 B), and its
// remat leaves a peak of 23,899,140 B; the category "model parameters" holds six inputs
// (1,573,888 B), none of which a remat can take, and offloaded they leave 24,422,404 B.
const BF16 = fixture('cpu/jax0.6.2/cpu_transformer_bf16.buffer-assignment.txt');

/** Waits until the verdict is of `ticks` ticks and the diagram of `color` has drawn its
 *  estimate; gives the estimated peak. */
async function estimated(ticks, color = 0) {
  await page.waitForFunction(([n, c]) => {
    const v = document.querySelector('#whatif-verdict');
    const d = window.__bufscope_estimate_drawn(c);
    return v && Number(v.dataset.ticks) === n && d && d.area === Number(v.dataset.area);
  }, [ticks, color], { timeout: 20000 });
  return Number(await page.locator('#whatif-verdict').getAttribute('data-peak'));
}

test('an icicle frame ticked: the estimate drawn, its peak lower by what the native test says', async () => {
  const before = consoleErrors.length;
  await app.load();
  await openModule([BF16], 'cpu_transformer_bf16');
  assert((await page.locator('#answers .answers-live').getAttribute('data-step')) === '133', 'not at the peak');
  assert((await page.locator('#answers-icicle .icicle-ticks').count()) === 0, 'frame ticks before a frame is chosen');
  await page.locator('#answers-icicle .frame[title^="exp · "]').click();
  const box = page.locator('#answers-icicle .icicle-ticks input.tick-remat');
  await box.check();
  assert((await estimated(1)) === 23899140, `estimated peak ${await page.locator('#whatif-verdict').getAttribute('data-peak')}`);
  assert((await box.getAttribute('data-acts')) === '1', `acts on ${await box.getAttribute('data-acts')}`);
  assert(/^Estimate: peak 22\.8 MiB at step 133/.test(await page.locator('#whatif-verdict').textContent()),
    await page.locator('#whatif-verdict').textContent());
  await page.locator('#answers-icicle').scrollIntoViewIfNeeded();
  await page.screenshot({ path: path.join(repo, 'target', 'whatif-frame.png') });
  // The frame's value is ticked in the idle stretches too: one tick, one home.
  await page.locator('#answers-idle-open').click();
  const row = page.locator('#answers-idle tr.idle-row[data-name="subtract_exponential_fusion.clone"]');
  await row.waitFor({ timeout: 10000 });
  assert(await row.locator('input.tick-remat').isChecked(), 'the idle row of the frame\'s value is not ticked');
  // Unticked from the frame: nothing is left ticked.
  await box.uncheck();
  await page.locator('#whatif-verdict').waitFor({ state: 'detached', timeout: 10000 });
  assert(!(await row.locator('input.tick-remat').isChecked()), 'the idle row stayed ticked');
  app.noNewConsoleErrors(before);
});

test('a category ticked: offload takes the parameters, remat none of them', async () => {
  const before = consoleErrors.length;
  await app.load();
  await openModule([BF16], 'cpu_transformer_bf16');
  const row = page.locator('#answers-categories tr.category-row[data-label="model parameters"]');
  await row.waitFor({ timeout: 10000 });
  assert(Number(await row.getAttribute('data-bytes')) === 1573888, `bytes ${await row.getAttribute('data-bytes')}`);
  // Inputs: a remat tick has nothing to act on and stays clear.
  await row.locator('input.tick-remat').click();
  assert(!(await row.locator('input.tick-remat').isChecked()), 'remat ticked on inputs');
  assert((await page.locator('#whatif-verdict').count()) === 0, 'an estimate with nothing ticked');
  await row.locator('input.tick-offload').check();
  assert((await estimated(6)) === 25996292 - 1573888, `estimated peak ${await page.locator('#whatif-verdict').getAttribute('data-peak')}`);
  assert((await row.locator('input.tick-offload').getAttribute('data-acts')) === '6', 'acts on');
  // Now that something is ticked the remat box knows it acts on none: it is off.
  assert(await row.locator('input.tick-remat').isDisabled(), 'the remat box of the inputs is enabled');
  assert((await row.locator('input.tick-remat').getAttribute('data-acts')) === '0', 'remat acts on');
  assert(/The host holds 1\.5 MiB more\./.test(await page.locator('#whatif-verdict').textContent()),
    await page.locator('#whatif-verdict').textContent());
  await page.locator('#answers-categories').scrollIntoViewIfNeeded();
  await page.screenshot({ path: path.join(repo, 'target', 'whatif-category.png') });
  app.noNewConsoleErrors(before);
});

test("one loop's tick and every loop's tick", async () => {
  if (!PLAIN.every(existsSync)) skip('needs ../shared/dumps/tpu-aot/remat-ladder');
  const before = consoleErrors.length;
  await app.load();
  await openModule(PLAIN, 'tpu_v5e_lm_scan_plain');
  await page.locator('#answers-space').selectOption('0');
  // while.103, the forward scan, stacks the 30 outputs; while.104 (backward) none.
  const fwd = page.locator('#answers-loops tr.loop-row[data-while="while.103"]');
  await fwd.waitFor({ timeout: 10000 });
  assert((await fwd.getAttribute('data-outputs')) === '30', `outputs ${await fwd.getAttribute('data-outputs')}`);
  assert((await page.locator('#answers-loops tr.loop-row[data-while="while.104"] input.tick-loop').count()) === 0,
    'a tick on the backward loop');
  const all = page.locator('#whatif-loops');
  // The loop's tick takes all 30: the estimate bufscope whatif --remat-loops gives.
  const state = (l) => l.evaluate((e) => (e.indeterminate ? 'some' : e.checked ? 'all' : 'none'));
  await fwd.locator('input.tick-loop').click();
  assert((await estimated(30)) === 2133518848, `one loop ${await page.locator('#whatif-verdict').getAttribute('data-peak')}`);
  assert((await state(all)) === 'all', `all loops' tick ${await state(all)}`);
  // Every loop's tick cleared: the loop's goes with it.
  await all.uncheck();
  await page.locator('#whatif-verdict').waitFor({ state: 'detached', timeout: 10000 });
  assert((await state(fwd.locator('input.tick-loop'))) === 'none', 'the loop stayed ticked');
  app.noNewConsoleErrors(before);
});

/** The page's estimate of `policy` (chosen, with `regex` for the named forms) on PLAIN's HBM
 *  against `bufscope whatif --json --policy`'s on the same files. */
async function samePolicy(policy, regex) {
  const cliName = regex === undefined ? policy : `${policy}(${regex})`;
  const m = cli(['whatif', '--policy', cliName], PLAIN).modules[0];
  const hbm = m.memory_spaces.find((s) => s.color === 0);
  await page.locator('#whatif-policy').selectOption(policy);
  if (regex !== undefined) {
    await page.locator('#whatif-policy-regex').fill(regex);
    await page.locator('#whatif-policy-regex').press('Enter');
    await page.locator('#whatif-policy-regex').blur();
  }
  const peak = await estimated(m.loop_outputs.length + m.loop_outputs_offloaded.length);
  const v = page.locator('#whatif-verdict');
  const attr = async (a) => Number(await v.getAttribute(a));
  assert(peak === hbm.peak_after, `${cliName}: page ${peak}, bufscope whatif ${hbm.peak_after}`);
  assert(peak < hbm.peak_before, `${cliName}: no lower than the real peak`);
  assert((await attr('data-host')) === hbm.host_bytes_added, `${cliName}: host ${await attr('data-host')} vs ${hbm.host_bytes_added}`);
  assert((await attr('data-flops-added')) === m.flops_added && m.flops_added > 0, `${cliName}: flops_added ${await attr('data-flops-added')} vs ${m.flops_added}`);
  assert((await attr('data-step-flops')) === m.step_flops, `${cliName}: step_flops ${await attr('data-step-flops')} vs ${m.step_flops}`);
  assert((await v.getAttribute('data-policy')) === cliName, `policy ${await v.getAttribute('data-policy')}`);
  assert(/its recomputation adds [\d.]+ [TGMP]FLOP \([\d.]+ % of a step of/.test(await v.textContent()), await v.textContent());
  return m;
}

test('a checkpoint policy chosen by name: the estimate and FLOPs of bufscope whatif --policy', async () => {
  if (!PLAIN.every(existsSync)) skip('needs ../shared/dumps/tpu-aot/remat-ladder');
  if (!existsSync(BIN)) skip(`needs ${BIN} (cargo build --release)`);
  const before = consoleErrors.length;
  await app.load();
  await openModule(PLAIN, 'tpu_v5e_lm_scan_plain');
  await page.locator('#answers-space').selectOption('0');
  await page.locator('#whatif-policy').waitFor({ timeout: 10000 });
  assert((await page.locator('#whatif-verdict').count()) === 0, 'an estimate with no policy');
  const m = await samePolicy('dots_with_no_batch_dims_saveable');
  assert(m.loop_outputs.length > 0 && m.loop_outputs_kept > 0, 'the policy neither drops nor keeps');
  await page.locator('#answers-whatif').scrollIntoViewIfNeeded();
  await page.screenshot({ path: path.join(repo, 'target', 'whatif-policy.png') });
  // A named form: its REGEX over op_name (q, k and v's einsum).
  await samePolicy('save_only_these_names', 'bsd,dhk->bshk');
  // A REGEX that does not compile: said, and no estimate.
  await page.locator('#whatif-policy-regex').fill('(');
  await page.locator('#whatif-policy-regex').press('Enter');
  await page.locator('#whatif-policy-error').waitFor({ timeout: 10000 });
  assert((await page.locator('#whatif-verdict').count()) === 0, 'an estimate of a bad REGEX');
  await page.locator('#whatif-policy').selectOption('');
  assert((await page.locator('#whatif-policy-error').count()) === 0, 'the error stayed');
  app.noNewConsoleErrors(before);
});

await run(app);
