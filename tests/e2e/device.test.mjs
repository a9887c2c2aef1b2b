// Browser tests of the device ledger (issue 35, point 5): the TPU train-loop dump folder
// (init, train step, eval step, with their HLO texts) picked as a folder shows, in the
// answers panel, one row per module whose jit name, peak, argument, shared-argument bytes
// and compile count are those of `bufscope summary --json`'s `device` (run here on the same
// folder), the worst case held against a capacity typed for HBM as `--capacity` holds it,
// and a row's click opens that module.
//   node tests/e2e/device.test.mjs http://127.0.0.1:PORT/   (tests/e2e/run.sh runs it)
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { SHARED, artifacts, assert, open, repo, run, skip, test } from './harness.mjs';

const FOLDER = path.join(SHARED, 'dumps/tpu-aot/turn4/raw_folder_multi');
const BIN = process.env.BUFSCOPE_BIN || path.join(repo, 'target/release/bufscope');
const CAPACITY = '1GiB';

const app = await open({ viewport: { width: 1280, height: 720 } });
const { page } = app;

/** `summary --json`'s device block for the folder, held against CAPACITY. */
function expected() {
  const out = execFileSync(BIN, ['summary', '--json', '--capacity', CAPACITY, FOLDER], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  const d = JSON.parse(out).device;
  const shared = (name) => d.shared_arguments.filter((s) => s.modules.includes(name)).reduce((a, s) => a + s.bytes, 0);
  const compiles = (jit) => (d.recompiles.find((r) => r[0] === jit) ?? [jit, 1])[1];
  const rows = d.modules.map((m) => [m.name, m.jit_name, m.peak_bytes, m.argument_bytes, shared(m.name), compiles(m.jit_name)].map(String));
  return { d, rows };
}

/** Opens the folder and the answers, and waits for the ledger to hold `n` rows: the other
 *  modules are read after the first is on screen, and the panel stays open meanwhile. */
async function openLedger(n) {
  await app.load();
  await page.locator('#dir-input').setInputFiles(FOLDER);
  await page.locator('#module-picker').waitFor({ timeout: 30000 });
  const toggle = page.locator('#answers .answers-toggle');
  await toggle.waitFor({ timeout: 30000 });
  if ((await toggle.getAttribute('aria-expanded')) === 'false') await toggle.click();
  await page.locator('#answers-device').waitFor({ timeout: 60000 });
  await page.waitForFunction((n) => document.querySelectorAll('#answers-device tr.device-row').length === n, n, { timeout: 60000 });
  assert((await toggle.getAttribute('aria-expanded')) === 'true', 'the answers closed while the folder was read');
}

const rowsShown = () => page.locator('#answers-device tr.device-row').evaluateAll((rs) => rs.map((r) => {
  const cells = [...r.querySelectorAll('td.num')];
  return [r.dataset.name, r.dataset.jit, ...cells.slice(0, 3).map((c) => c.dataset.bytes), cells[3].textContent.trim()];
}));

test('the ledger of a dump folder equals summary --json, and a row opens its module', async () => {
  if (!existsSync(FOLDER)) return skip('needs ../shared/dumps/tpu-aot/turn4/raw_folder_multi');
  if (!existsSync(BIN)) return skip(`needs ${BIN} (cargo build --release)`);
  const { d, rows } = expected();
  assert(rows.length === 3, `summary's modules: ${JSON.stringify(rows)}`);
  await openLedger(rows.length);
  const got = await rowsShown();
  assert(JSON.stringify(got) === JSON.stringify(rows), `rows ${JSON.stringify(got)} want ${JSON.stringify(rows)}`);
  // The worst case, before and after a capacity is chosen for HBM (space 0).
  const worst = page.locator('#answers-device .device-worst');
  assert((await worst.getAttribute('data-bytes')) === String(d.worst_case_bytes), await worst.textContent());
  assert((await worst.getAttribute('data-resident')) === String(d.resident_bytes), await worst.textContent());
  assert((await worst.getAttribute('data-module')) === d.worst_module, await worst.textContent());
  await page.locator('#answers-space').selectOption('0');
  await page.locator('#capacity-size').fill(CAPACITY);
  await page.locator('#capacity-size').press('Enter');
  await page.locator('#capacity-size').blur();
  await page.waitForFunction((c) => document.querySelector('#answers-device .device-worst')?.dataset.capacity === c,
    String(d.capacity_bytes), { timeout: 10000 });
  const fits = await worst.getAttribute('data-fits');
  assert(fits === String(d.worst_case_bytes <= d.capacity_bytes), `fits ${fits}: ${await worst.textContent()}`);
  await page.locator('#answers-device').evaluate((el) => el.scrollIntoView({ block: 'start' }));
  await page.waitForTimeout(200);
  await page.screenshot({ path: path.join(artifacts, 'device.png') });
  // A click on another module's row opens it.
  const other = rows.find((r) => r[1] !== 'jit_train_step' && r[0] !== d.worst_module) ?? rows[0];
  const before = await page.locator('.module .module-name').getAttribute('data-name');
  assert(before !== other[0], `the module to open is already on screen (${before})`);
  await page.locator(`#answers-device tr.device-row[data-name="${other[0]}"]`).click();
  await page.waitForFunction((name) => document.querySelector('.module .module-name')?.dataset.name === name, other[0], { timeout: 20000 });
  // The answers stay open on the module opened: its row is the current one.
  await page.locator(`#answers-device tr.device-row.current[data-name="${other[0]}"]`).waitFor({ timeout: 30000 });
});

await run(app);
