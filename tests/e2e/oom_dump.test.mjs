// Browser tests of the error beside its dump (issue 25): the files of one failed TPU compile,
// `../shared/dumps/tpu-aot/jax0.12-libtpu0.0.50/tpu_v5e_lm_scan_remat_OOM.*` (the E1000
// one-liner and the dump XLA wrote anyway), dropped together. The module opens with the
// message's capacity on its HBM curve (a line at 15.75G, the verdict), and the message says
// what the dump makes of its figure. Skipped without ../shared.
//   node tests/e2e/oom_dump.test.mjs http://127.0.0.1:PORT/
// Figures are read here from the message's text (15.75G = 15.75 × 2^30 bytes). Screenshot:
// target/oom-dump.png (1280×720).
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SHARED, assert, capacityLineAt, dumpFile, open, repo, run, skip, test } from './harness.mjs';

const app = await open({ viewport: { width: 1280, height: 720 } });
const { page } = app;
const DIR = path.join(SHARED, 'dumps', 'tpu-aot', 'jax0.12-libtpu0.0.50');
const STEM = 'tpu_v5e_lm_scan_remat_OOM';
const PARTS = ['buffer-assignment.txt', 'buffer-assignment-values.txt', 'live-range.txt', 'memory-usage-report.txt', 'error.txt'];
const frame = () => page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));

/** The figures of the run's error message, read from it: the GiB required and available,
 *  and the capacity in bytes. */
function messageFigures() {
  const message = readFileSync(path.join(DIR, `${STEM}.error.txt`), 'utf8');
  const [, used, cap] = message.match(/required for HLO temporaries \((\d+\.\d+)G\) exceeds available HBM \((\d+\.\d+)G\)/);
  return { used, cap, capBytes: Math.round(Number(cap) * 2 ** 30) };
}

/** The answers' capacity verdict on HBM holds `capBytes`. */
async function hbmCapacityIs(capBytes) {
  const toggle = page.locator('.answers-toggle');
  if ((await toggle.getAttribute('aria-expanded')) === 'false') await toggle.click();
  await page.locator('#answers-space').selectOption('0');
  const verdict = page.locator('#answers-capacity .capacity-verdict');
  await verdict.waitFor({ timeout: 10000 });
  assert((await verdict.getAttribute('data-capacity')) === String(capBytes), `capacity ${await verdict.getAttribute('data-capacity')}`);
}

test('the OOM run dropped together: its capacity on the HBM curve and the reconciliation beside the message', async () => {
  if (!existsSync(path.join(DIR, `${STEM}.error.txt`))) skip('../shared/dumps/tpu-aot/jax0.12-libtpu0.0.50');
  const before = app.consoleErrors.length;
  const { used, cap, capBytes } = messageFigures();
  await app.load();
  await app.drop(PARTS.map((p) => dumpFile(path.join(DIR, `${STEM}.${p}`))));
  await app.waitForOutcome(`${PARTS.length} files`, 60000);
  assert((await app.shownModule()) === STEM, `module ${await app.shownModule()}`);

  // The message, with what its dump says of its figure.
  await page.locator('.oom .oom-dump').waitFor({ timeout: 10000 });
  const dump = await page.locator('.oom .oom-dump').textContent();
  assert(dump.includes(`The error's ${used}G required for HLO temporaries = this dump's allocated total of HBM`), dump);
  assert(/temporaries 13\.9 GiB plus arguments and outputs 10\.5 GiB/.test(dump), dump);
  assert(dump.includes(`For it to fit the ${cap}G available`) && /8\.6 GiB must go/.test(dump), dump);

  // The capacity from the message on the HBM curve: the verdict and the line.
  await hbmCapacityIs(capBytes);
  const verdict = page.locator('#answers-capacity .capacity-verdict');
  assert((await verdict.getAttribute('data-fits')) === 'false', 'the peak fits');
  assert((await page.locator('#capacity-size').inputValue()) === `${cap}G`, 'the size box does not show the message\'s figure');
  await page.locator('canvas.space-canvas[data-color="0"]').scrollIntoViewIfNeeded();
  await frame();
  assert(await capacityLineAt(page, 0, capBytes), `no capacity line at ${cap}G on the HBM curve`);
  await page.screenshot({ path: path.join(repo, 'target', 'oom-dump.png') });
  app.noNewConsoleErrors(before);
});

/** The folders made for picking: removed once every test is over, since the page may still
 *  be reading a folder's HLO texts when its test has what it checks (`run` exits). */
const made = [];
process.on('exit', () => made.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

/** Picks a folder holding `files` ([name in the folder, path to copy]) and returns the OOM
 *  view's sentence about its dump, once the module is open. */
async function pickFolder(files) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bufscope-oom-'));
  made.push(dir);
  const folder = path.join(dir, 'xla_dump');
  mkdirSync(folder);
  for (const [name, from] of files) copyFileSync(from, path.join(folder, name));
  await page.locator('#dir-input').setInputFiles(folder);
  await page.waitForFunction((stem) => document.querySelector('.module .module-name')?.textContent === stem, STEM, { timeout: 60000 });
  await page.locator('.oom .oom-dump').waitFor({ timeout: 20000 });
  return await page.locator('.oom .oom-dump').textContent();
}

/** The run's own file of this part, under its own name. */
const part = (p) => [`${STEM}.${p}`, path.join(DIR, `${STEM}.${p}`)];

test('the OOM run\'s folder picked whole (dump, error, HLO texts): the same capacity and sentence', async () => {
  if (!existsSync(path.join(DIR, `${STEM}.error.txt`))) skip('../shared/dumps/tpu-aot/jax0.12-libtpu0.0.50');
  const before = app.consoleErrors.length;
  const { used, cap, capBytes } = messageFigures();
  await app.load();
  // The run's folder as --xla_dump_to leaves it: the dump, the error, the HLO texts.
  const dump = await pickFolder([...PARTS, 'after_optimizations.txt', 'before_optimizations.txt'].map(part));
  assert(dump.includes(`The error's ${used}G required for HLO temporaries = this dump's allocated total of HBM`), dump);
  assert(/8\.6 GiB must go/.test(dump), dump);
  // No red line for the folder's other file (the HLO before optimizations).
  assert((await page.locator('.message.error').count()) === 0, `an error is shown: ${await page.locator('.report').textContent()}`);
  await hbmCapacityIs(capBytes);
  await page.locator('canvas.space-canvas[data-color="0"]').scrollIntoViewIfNeeded();
  await frame();
  assert(await capacityLineAt(page, 0, capBytes), `no capacity line at ${cap}G on the HBM curve`);
  app.noNewConsoleErrors(before);
});

test('the OOM run\'s folder with its error as compile.log: the log read as the error, the capacity set', async () => {
  if (!existsSync(path.join(DIR, `${STEM}.error.txt`))) skip('../shared/dumps/tpu-aot/jax0.12-libtpu0.0.50');
  const before = app.consoleErrors.length;
  const { used, capBytes } = messageFigures();
  await app.load();
  const dump = await pickFolder([...PARTS.slice(0, 4).map(part), ['compile.log', path.join(DIR, `${STEM}.error.txt`)]]);
  assert(dump.includes(`The error's ${used}G required for HLO temporaries = this dump's allocated total of HBM`), dump);
  await hbmCapacityIs(capBytes);
  app.noNewConsoleErrors(before);
});

await run(app);
