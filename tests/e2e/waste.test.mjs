// Browser tests of the waste answer (issue 35): the lm_head-replicated TPU compile with both
// HLO texts picked shows, in the answers panel, its three replicated values with the
// per-device saving of each (65,536,000 bytes: RESULT.json's excess, tests/waste.rs), and a
// row's click highlights the parameter's value; without the HLO texts the answer says
// what it needs; another run's text before optimizations is one sentence in the report.
//   node tests/e2e/waste.test.mjs http://127.0.0.1:PORT/
import { existsSync } from 'node:fs';
import path from 'node:path';
import { SHARED, assert, open as openBrowser, run, skip, test } from './harness.mjs';

const DIR = path.join(SHARED, 'dumps/tpu-aot/turn4');
const DUMP = ['buffer-assignment.txt', 'buffer-assignment-values.txt', 'live-range.txt'];
const TEXTS = ['after_optimizations.txt', 'before_optimizations.txt'];
const files = (kinds) => kinds.map((s) => path.join(DIR, `waste_lmhead_replicated.${s}`));

const app = await openBrowser({ viewport: { width: 1280, height: 720 } });
const { page } = app;

async function openWaste(kinds) {
  await app.load();
  await app.pickModule(files(kinds), 'waste_lmhead_replicated');
  const toggle = page.locator('#answers .answers-toggle');
  if ((await toggle.getAttribute('aria-expanded')) === 'false') await toggle.click();
  await page.locator('#answers-waste').waitFor({ timeout: 20000 });
}

test('the replicated lm_head and its Adam state are rows with their saving', async () => {
  if (!files([...DUMP, ...TEXTS]).every(existsSync)) return skip('needs ../shared/dumps/tpu-aot/turn4');
  await openWaste([...DUMP, ...TEXTS]);
  const rows = page.locator('#answers-waste tr.waste-row[data-kind="replicated"]');
  await page.waitForFunction(() => document.querySelectorAll('#answers-waste tr.waste-row[data-kind="replicated"]').length >= 3,
    null, { timeout: 20000 });
  const got = await rows.evaluateAll((rs) => rs.map((r) => [r.dataset.path, r.dataset.bytes]));
  const big = got.filter(([, b]) => Number(b) >= 1 << 20);
  const want = [["params['unembed']", '65536000'], ["opt_state[0].mu['unembed']", '65536000'], ["opt_state[0].nu['unembed']", '65536000']];
  assert(JSON.stringify(big.sort()) === JSON.stringify(want.sort()), `rows ${JSON.stringify(got)}`);
  const summary = await page.locator('#answers-waste .waste-summary').textContent();
  assert(summary.includes('187.5 MiB'), summary);
  await page.locator('#answers-waste').scrollIntoViewIfNeeded();
  await app.screenshot('waste.png');
});

test('without the HLO texts the answer says what it needs', async () => {
  if (!files(DUMP).every(existsSync)) return skip('needs ../shared/dumps/tpu-aot/turn4');
  await openWaste(DUMP);
  const needs = await page.locator('#answers-waste .waste-needs').allTextContents();
  assert(needs.some((n) => n.includes('before_optimizations')), needs.join(' | '));
  assert(needs.some((n) => n.includes('after_optimizations')), needs.join(' | '));
  assert((await page.locator('#answers-waste tr.waste-row').count()) === 0, 'no rows');
});

test('a text before optimizations of another run is said, not joined', async () => {
  const other = path.join(DIR, 'waste_baseline.before_optimizations.txt');
  const picked = [...files([...DUMP, 'after_optimizations.txt']), other];
  if (!picked.every(existsSync)) return skip('needs ../shared/dumps/tpu-aot/turn4');
  await app.load();
  await app.pickModule(picked, 'waste_lmhead_replicated');
  // The HLO texts are joined after the diagrams: the sentence comes with them.
  await page.waitForFunction(() => [...document.querySelectorAll('.report .message.error li')]
    .some((li) => li.textContent.includes('waste_baseline.before_optimizations.txt')), null, { timeout: 20000 });
  const said = await page.locator('.report .message.error li').allTextContents();
  const want = 'waste_baseline.before_optimizations.txt is an HLO module text before optimizations, but no dump of its module (waste_baseline) was read beside it: its shardings are not used.';
  assert(said.includes(want), said.join(' | '));
  const toggle = page.locator('#answers .answers-toggle');
  if ((await toggle.getAttribute('aria-expanded')) === 'false') await toggle.click();
  await page.locator('#answers-waste').waitFor({ timeout: 20000 });
  const needs = await page.locator('#answers-waste .waste-needs').allTextContents();
  assert(needs.some((n) => n.includes('before_optimizations')), `the replicated answer still needs its own text: ${needs.join(' | ')}`);
});

test('the FSDP run says how many all-gathers are traced to a parameter, each a row', async () => {
  const FIX = path.join(path.dirname(new URL(import.meta.url).pathname), '../fixtures/tpu-waste');
  const picked = [...DUMP, ...TEXTS].map((s) => path.join(FIX, `waste_fsdp.${s}.gz`));
  assert(picked.every(existsSync), `fixtures ${picked.join(' ')}`);
  await app.load();
  await app.pickModule(picked, 'waste_fsdp');
  await app.openAnswers();
  await page.locator('#answers-waste').waitFor({ timeout: 20000 });
  await page.waitForFunction(() => document.querySelectorAll('#answers-waste tr.waste-row[data-kind="gathered"]').length > 0,
    null, { timeout: 20000 });
  const summary = await page.locator('#answers-waste .waste-summary').textContent();
  // As `bufscope summary` says it (tests/waste.rs: 18 of 20 traced).
  assert(summary.includes('gathered from parameters: 18 of 20 all-gathers'), summary);
  const rows = await page.locator('#answers-waste tr.waste-row[data-kind="gathered"]').count();
  assert(rows === 18, `${rows} gathered rows`);
});

await run(app);
