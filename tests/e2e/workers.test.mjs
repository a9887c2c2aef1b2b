// Browser tests of the read behind in pieces (src/ui/read/pieces.rs): with piece workers
// (`window.__bufscope_workers` = 2 or 4: one or three workers besides the page) the bodies
// of `Used values` the page reads itself are cut into pieces (`__bufscope_piece_least`
// small, so that the small dumps of tests/fixtures are cut too), read by the workers and
// joined by the page; the module it completes must be the one the page reads alone
// (`__bufscope_workers` = 1): the summary JSON the page exports (its answers hold the
// op_names, source lines and uses that only `Used values` gives) is the same, byte for
// byte, and the report says the workers' memory (0 without them). The 94 MB dump of
// ../shared is read the same way when it is there (else a skipped test).
//   node tests/e2e/workers.test.mjs http://127.0.0.1:PORT/   (tests/e2e/run.sh runs it)
import { existsSync } from 'node:fs';
import path from 'node:path';
import { CPU, SHARED, TPU, assert, open, run, skip, test } from './harness.mjs';

const app = await open({ viewport: { width: 1280, height: 720 } });
const { page } = app;
const BIG = path.join(SHARED, 'dumps', 'cpu', 'jax0.6.2', 'cpu_deep_unrolled_500.buffer-assignment.txt');

/** Reads `file` in a page started with `workers` lanes (pieces ≥ `least` bytes): its
 *  summary JSON, as exported, and the piece workers' memory the report gives. */
async function readWith(file, workers, least, timeout) {
  await page.addInitScript(([w, l]) => { window.__bufscope_workers = w; window.__bufscope_piece_least = l; }, [workers, least]);
  await app.load();
  await page.locator('#file-input').setInputFiles(file);
  await app.waitForOutcome(path.basename(file), timeout);
  const menu = page.locator('.export-menu');
  if (!(await menu.evaluate((d) => d.open))) await page.locator('#export-menu').click();
  const [dl] = await Promise.all([page.waitForEvent('download', { timeout }), page.locator('#export-json').click()]);
  const { readFileSync } = await import('node:fs');
  const json = readFileSync(await dl.path(), 'utf8');
  const memory = Number(await page.locator('.report').getAttribute('data-uses-worker-bytes'));
  return { json, memory };
}

/** The same summary with 1, 2 and 4 lanes. */
async function sameWithWorkers(file, least, timeout) {
  const alone = await readWith(file, 1, least, timeout);
  assert(alone.memory === 0, `alone: a worker's memory ${alone.memory}`);
  const summary = JSON.parse(alone.json);
  assert(summary.modules?.length >= 1, 'no module in the summary');
  for (const workers of [2, 4]) {
    const r = await readWith(file, workers, least, timeout);
    assert(r.memory > 0, `${workers} lanes: no piece was read by a worker (memory ${r.memory})`);
    assert(r.json === alone.json, `${workers} lanes: the summary differs from the page's alone`);
  }
  console.log(`note: ${path.basename(file)}: ${alone.json.length} bytes of summary, the same with 1, 2 and 4 lanes`);
}

test('TPU 000 read in pieces by workers is the module the page reads alone', async () => {
  await sameWithWorkers(TPU, 2048, 20000);
});

test('the CPU fixture read in pieces by workers is the module the page reads alone', async () => {
  await sameWithWorkers(CPU, 128, 20000);
});

test('the 94 MB dump (needs ../shared) read in pieces by workers is the module the page reads alone', async () => {
  if (!existsSync(BIG)) skip(`needs ${BIG} (../shared beside the repo)`);
  await sameWithWorkers(BIG, 4 << 20, 180000);
});

await run(app);
