// Browser tests of the Sweep view (issue 36, the page): the batch compilations of
// ../shared/dumps/tpu-aot that tests/sweep.rs reads (per-device batch 4 … 32 on v5e), picked
// together, open as a sweep whose varied dimension, points, fitted form, largest fitting and
// first not fitting value, pinned flag and sentence per memory space are those of `bufscope
// sweep --json --capacity v5e` on the same files (run here); a click on a point of the chart
// opens that compilation; "Add a configuration…" adds one; two compilations that vary two
// dimensions give the CLI's sentence and the page stays usable, as does a remat ladder (one
// batch, several policies: the same shapes, different programs); a compile that failed (batch 272
// of tests/fixtures/sweep, its `.error.txt` picked with its dump) is the failed point the CLI
// says; "Predict at" gives the CLI's `--at` figures; the capacity typed is written to the
// address and a reload keeps it; MaxText's per-device batch sweep (tests/fixtures/sweep-maxtext)
// is the CLI's too.
//   node tests/e2e/sweep.test.mjs http://127.0.0.1:PORT/   (tests/e2e/run.sh runs it)
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { SHARED, artifacts, assert, open, repo, run, skip, test } from './harness.mjs';

const AOT = path.join(SHARED, 'dumps/tpu-aot');
const BIN = process.env.BUFSCOPE_BIN || path.join(repo, 'target/release/bufscope');
/** The batch sweep's compilations in batch order (8, 16, 32, 48, 64), as tests/sweep.rs. */
const BATCH = [
  ['remat-ladder', 'tpu_v5e_lm_scan_remat_b8'],
  ['jax0.12-libtpu0.0.50', 'tpu_v5e_lm_scan_remat'],
  ['remat-ladder', 'tpu_v5e_lm_scan_remat_b32'],
  ['turn4', 'tpu_v5e_lm_scan_remat_b48'],
  ['turn4', 'tpu_v5e_lm_scan_remat_b64'],
];
const SEQUENCE_512 = ['turn4', 'tpu_v5e_lm_scan_remat_s512'];
const PARTS = ['buffer-assignment', 'buffer-assignment-values', 'live-range', 'after_optimizations'];
/** Batch 272 (per-device 136), whose compile failed: gzipped, with its `.error.txt`. */
const FAILED = path.join(repo, 'tests/fixtures/sweep/tpu_v5e_lm_scan_remat_b272');
const FAILED_FILES = [...PARTS.map((p) => `${FAILED}.${p}.txt.gz`), `${FAILED}.error.txt`];
/** MaxText's llama3.1-8b on v5e-16, per-device batch 1 to 8 (tests/bench/make_maxtext_sweep.sh). */
const MAXTEXT = path.join(repo, 'tests/fixtures/sweep-maxtext');

const app = await open({ viewport: { width: 1280, height: 900 } });
const { page } = app;

/** A compilation's files, as `bufscope sweep` takes them beside its dump file. */
const files = ([folder, stem]) => PARTS.map((p) => path.join(AOT, folder, `${stem}.${p}.txt`));
const dumpOf = ([folder, stem]) => path.join(AOT, folder, `${stem}.buffer-assignment.txt`);

function needs() {
  if (!existsSync(AOT)) skip('needs ../shared/dumps/tpu-aot');
  if (!existsSync(BIN)) skip(`needs ${BIN} (cargo build --release)`);
}

/** `bufscope sweep --json` on `runs` (or dump files), held against `capacity`, predicting at `at`. */
function expected(runs, capacity, at = []) {
  const dumps = runs.map((r) => (typeof r === 'string' ? r : dumpOf(r)));
  const args = ['sweep', '--json', '--capacity', capacity, ...at.flatMap((v) => ['--at', String(v)]), ...dumps];
  return JSON.parse(execFileSync(BIN, args, { encoding: 'utf8' }));
}

/** Waits for the sweep on screen to be complete and to name `what`. */
async function sweepShown(what, count) {
  await page.waitForFunction(([what, count]) => {
    const v = document.querySelector('#sweep-view');
    return v?.dataset.complete === 'true' && v.dataset.what === what && v.dataset.values.split(',').length === count;
  }, [what, count], { timeout: 90000 });
}

/** What the page shows per memory space, as the CLI's JSON names it. */
const shownSpaces = () => page.locator('.sweep-space').evaluateAll((ss) => ss.map((s) => ({
  color: Number(s.dataset.color),
  points: [...s.querySelectorAll('tr.sweep-point')].map((r) => [Number(r.dataset.value), Number(r.dataset.peak), r.dataset.failed === 'true', r.dataset.pinned === 'true']),
  at: [...s.querySelectorAll('.sweep-at')].map((p) => [Number(p.dataset.value), Number(p.dataset.peak)]),
  form: s.dataset.form,
  largest_fitting: s.dataset.largestFitting === '' ? null : Number(s.dataset.largestFitting),
  first_not_fitting: s.dataset.firstNotFitting === '' ? null : Number(s.dataset.firstNotFitting),
  pinned: s.dataset.pinned === 'true',
  sentence: s.querySelector('.sweep-sentence').textContent,
})));

const cliSpaces = (d) => d.spaces.map((s) => ({
  color: s.color,
  points: s.points.map((p) => [p.value, p.peak_live_bytes, p.failed, p.pinned]),
  at: s.at.map((p) => [p.value, p.peak_live_bytes]),
  form: s.model?.form ?? '',
  largest_fitting: s.largest_fitting,
  first_not_fitting: s.first_not_fitting,
  pinned: s.pinned,
  sentence: s.sentence,
}));

async function typeCapacity(text, bytes) {
  await page.locator('#sweep-capacity').fill(text);
  await page.locator('#sweep-capacity').press('Enter');
  await page.waitForFunction((b) => document.querySelector('.sweep-space[data-color="0"]')?.dataset.capacity === b, String(bytes), { timeout: 20000 });
}

test('the batch compilations picked together are a sweep equal to bufscope sweep --json, and a point opens its compilation', async () => {
  needs();
  const d = expected(BATCH, 'v5e');
  await app.load();
  await page.locator('#file-input').setInputFiles(BATCH.flatMap(files));
  await sweepShown(d.varied.what, BATCH.length);
  const view = page.locator('#sweep-view');
  const values = [...d.varied.values].sort((a, b) => a - b).join(',');
  assert((await view.getAttribute('data-values')) === values, `values ${await view.getAttribute('data-values')} want ${values}`);
  await typeCapacity('v5e', d.spaces[0].capacity_bytes);
  const got = await shownSpaces();
  const want = cliSpaces(d);
  assert(JSON.stringify(got) === JSON.stringify(want), `spaces\n${JSON.stringify(got)}\nwant\n${JSON.stringify(want)}`);
  const hbm = page.locator('.sweep-space[data-color="0"]');
  // The answer at a glance: the varied dimension, the capacity, HBM's verdict and chart.
  await page.locator('section.sweep').evaluate((el) => el.scrollIntoView({ block: 'start' }));
  const verdict = (await hbm.locator('.sweep-verdict').textContent()).trim();
  assert(verdict === `${d.spaces[0].label}: largest that fits: at least ${d.spaces[0].largest_fitting}`, verdict);
  await page.waitForTimeout(300);
  await page.screenshot({ path: path.join(artifacts, 'sweep.png') });
  // A click on the chart's third point (batch 32: per-device 16) opens that compilation.
  const canvas = hbm.locator('canvas.sweep-canvas');
  const points = (await canvas.getAttribute('data-points')).split(';').map((p) => p.split(',').map(Number));
  assert(points.length === BATCH.length, `data-points ${points}`);
  await canvas.click({ position: { x: points[2][0], y: points[2][1] } });
  await page.waitForFunction((name) => document.querySelector('.module .module-name')?.dataset.name === name, BATCH[2][1], { timeout: 30000 });
  assert(await page.locator('#sweep-view').count() === 0, 'the sweep is still on screen');
});

test('"Add a configuration…" adds one compilation to the sweep', async () => {
  needs();
  const d = expected(BATCH, '16GiB');
  await app.load();
  await page.locator('#file-input').setInputFiles(BATCH.slice(0, 4).flatMap(files));
  await sweepShown(d.varied.what, 4);
  await page.locator('#sweep-add-file').setInputFiles(files(BATCH[4]));
  await sweepShown(d.varied.what, 5);
  await typeCapacity('16GiB', d.spaces[0].capacity_bytes);
  const got = await shownSpaces();
  const want = cliSpaces(d);
  assert(JSON.stringify(got) === JSON.stringify(want), `spaces\n${JSON.stringify(got)}\nwant\n${JSON.stringify(want)}`);
});

test('two compilations that vary two dimensions say the sweep\'s sentence, and the page stays usable', async () => {
  needs();
  const runs = [BATCH[0], SEQUENCE_512];
  const sentences = [runs, [...runs].reverse()].map((r) => {
    try {
      execFileSync(BIN, ['sweep', ...r.map(dumpOf)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
      return null;
    } catch (e) {
      assert(e.status === 2, `exit ${e.status}`);
      return e.stderr.trim().replace(/^bufscope: /, '');
    }
  });
  assert(sentences[0]?.startsWith('two dimensions vary'), sentences[0]);
  await app.load();
  await page.locator('#file-input').setInputFiles(runs.flatMap(files));
  // Not a sweep: the single view opens, with "Sweep" in its bar.
  await page.locator('.module .module-name').waitFor({ timeout: 60000 });
  await page.locator('#sweep-button').click();
  const error = page.locator('#sweep-error');
  await error.waitFor({ timeout: 20000 });
  await page.waitForFunction((s) => s.some((x) => document.querySelector('#sweep-error')?.textContent.includes(x)), sentences, { timeout: 60000 });
  await page.locator('#sweep-back').click();
  await page.locator('.module .module-name').waitFor({ timeout: 20000 });
  assert(await page.locator('#sweep-error').count() === 0, 'the sentence stayed');
});

test('a remat ladder (one batch, several policies) is no sweep: the single view opens, "Sweep" says why', async () => {
  needs();
  const runs = ['tpu_v5e_lm_scan_plain', 'tpu_v5e_lm_scan_remat_b8', 'tpu_v5e_lm_scan_remat_b32', 'tpu_v5e_lm_scan_dots']
    .map((stem) => ['remat-ladder', stem]);
  let said = null;
  try {
    execFileSync(BIN, ['sweep', ...runs.map(dumpOf)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (e) {
    assert(e.status === 2, `exit ${e.status}`);
    said = e.stderr;
  }
  assert(said?.includes('have the same shapes') && said.includes('different programs'), `the CLI said ${said}`);
  await app.load();
  await page.locator('#file-input').setInputFiles(runs.flatMap(files));
  await page.locator('.module .module-name').waitFor({ timeout: 60000 });
  await page.locator('#sweep-button').click();
  await page.waitForFunction(() => {
    const t = document.querySelector('#sweep-error')?.textContent || '';
    return t.includes('have the same shapes') && t.includes('different programs');
  }, null, { timeout: 60000 });
  assert(await page.locator('#sweep-view').count() === 0, 'a sweep was drawn');
  await page.locator('#sweep-back').click();
});

test('a compile that failed, its .error.txt picked with its dump, is the failed point bufscope sweep says', async () => {
  needs();
  const runs = [BATCH[0], BATCH[1]];
  const d = expected([...runs, `${FAILED}.buffer-assignment.txt.gz`], 'v5e');
  const failed = d.spaces[0].points.find((p) => p.failed);
  assert(failed?.value === 136, `the CLI's failed point ${JSON.stringify(d.spaces[0].points)}`);
  await app.load();
  await page.locator('#file-input').setInputFiles([...runs.flatMap(files), ...FAILED_FILES]);
  await sweepShown(d.varied.what, 3);
  await typeCapacity('v5e', d.spaces[0].capacity_bytes);
  const got = await shownSpaces();
  const want = cliSpaces(d);
  assert(JSON.stringify(got) === JSON.stringify(want), `spaces\n${JSON.stringify(got)}\nwant\n${JSON.stringify(want)}`);
  // 136 is the first that does not fit because it failed (its peak is over the capacity too).
  assert(d.spaces[0].first_not_fitting === 136, `first not fitting ${d.spaces[0].first_not_fitting}`);
  const row = page.locator('.sweep-space[data-color="0"] tr.sweep-point[data-value="136"]');
  assert((await row.getAttribute('data-failed')) === 'true', 'the failed point is not marked');
  assert((await row.textContent()).includes('compile failed'), await row.textContent());
  await page.locator('.sweep-space[data-color="0"]').evaluate((el) => el.scrollIntoView({ block: 'start' }));
  await page.screenshot({ path: path.join(artifacts, 'sweep-failed.png') });
});

test('"Predict at" gives the peak bufscope sweep --at gives', async () => {
  needs();
  const runs = BATCH.slice(0, 3);
  const at = [64, 200];
  const d = expected(runs, 'v5e', at);
  assert(d.spaces[0].at.length === 2 && d.spaces[0].at.every((p) => p.peak_live_bytes > 0), JSON.stringify(d.spaces[0].at));
  await app.load();
  await page.locator('#file-input').setInputFiles(runs.flatMap(files));
  await sweepShown(d.varied.what, 3);
  await typeCapacity('v5e', d.spaces[0].capacity_bytes);
  await page.locator('#sweep-at').fill('64, 200');
  await page.locator('#sweep-at').press('Enter');
  await page.waitForFunction(() => document.querySelectorAll('.sweep-space[data-color="0"] .sweep-at').length === 2, null, { timeout: 20000 });
  const got = await shownSpaces();
  const want = cliSpaces(d);
  assert(JSON.stringify(got) === JSON.stringify(want), `spaces\n${JSON.stringify(got)}\nwant\n${JSON.stringify(want)}`);
  await page.locator('.sweep-space[data-color="0"]').scrollIntoViewIfNeeded();
  await app.screenshot('sweep-predicted.png');
  // Not a number: said beside the box, the predictions kept.
  await page.locator('#sweep-at').fill('64, lots');
  await page.locator('#sweep-at').press('Enter');
  await page.locator('.sweep-at-problem', { hasText: 'lots' }).waitFor({ timeout: 10000 });
  assert(await page.locator('.sweep-space[data-color="0"] .sweep-at').count() === 2, 'the predictions went');
});

test('the capacity typed in the Sweep view is written to the address, and a reload keeps it', async () => {
  needs();
  const runs = BATCH.slice(0, 3);
  const d = expected(runs, '16GiB');
  await app.load();
  await page.locator('#file-input').setInputFiles(runs.flatMap(files));
  await sweepShown(d.varied.what, 3);
  await typeCapacity('16GiB', d.spaces[0].capacity_bytes);
  await page.waitForFunction(() => new URLSearchParams(location.hash.slice(1)).get('capacity') === '0:16GiB', null, { timeout: 5000 });
  await page.reload({ waitUntil: 'load' });
  await page.locator('#file-input').waitFor({ state: 'attached', timeout: 20000 });
  await page.locator('#file-input').setInputFiles(runs.flatMap(files));
  await sweepShown(d.varied.what, 3);
  // Nothing typed this time: the capacity is the address's.
  const bytes = String(d.spaces[0].capacity_bytes);
  await page.waitForFunction((b) => document.querySelector('.sweep-space[data-color="0"]')?.dataset.capacity === b, bytes, { timeout: 20000 });
  assert((await page.locator('#sweep-capacity').inputValue()) === '16GiB', `the box holds ${await page.locator('#sweep-capacity').inputValue()}`);
  const got = await shownSpaces();
  const want = cliSpaces(d);
  assert(JSON.stringify(got) === JSON.stringify(want), `spaces\n${JSON.stringify(got)}\nwant\n${JSON.stringify(want)}`);
});

test('MaxText\'s per-device batch sweep (tests/fixtures/sweep-maxtext, 1 to 8, 6 to 8 failed) is the one bufscope sweep says', async () => {
  if (!existsSync(BIN)) skip(`needs ${BIN} (cargo build --release)`);
  const stems = [1, 2, 3, 4, 5, 6, 7, 8].map((b) => path.join(MAXTEXT, `tpu_v5e-16_maxtext_llama3.1-8b_pdb${b}`));
  const d = expected(stems.map((s) => `${s}.buffer-assignment.txt.gz`), 'v5e');
  assert(d.varied.what === "parameter data['inputs'], dim 0", d.varied.what);
  assert(d.spaces[0].largest_fitting === 5 && d.spaces[0].first_not_fitting === 6, JSON.stringify(d.spaces[0]));
  await app.load();
  const picked = stems.flatMap((s) => [...PARTS.map((p) => `${s}.${p}.txt.gz`), `${s}.error.txt`].filter(existsSync));
  await page.locator('#file-input').setInputFiles(picked);
  await sweepShown(d.varied.what, 8);
  await typeCapacity('v5e', d.spaces[0].capacity_bytes);
  const got = await shownSpaces();
  const want = cliSpaces(d);
  assert(JSON.stringify(got) === JSON.stringify(want), `spaces\n${JSON.stringify(got)}\nwant\n${JSON.stringify(want)}`);
});

await run(app);
