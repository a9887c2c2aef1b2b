// Browser tests of the diagram-first read (src/ui/load.rs, src/ui/load/complete.rs): the
// page draws the diagrams from the allocations and live ranges, then reads the `Used values`
// it skipped and puts the complete module on screen, keeping the view.
//   node tests/e2e/deferred.test.mjs http://127.0.0.1:PORT/   (tests/e2e/run.sh runs it)
// Uses the test hook `window.__bufscope_hold_details` (src/ui/load/complete.rs) to hold the
// module incomplete, `__bufscope_early_uses` (src/ui/read/uses_worker.rs) to give the app its
// `Used values` worker whatever the machine's cores (every test but the first), and
// `__bufscope_block_px` (src/ui/canvas/hooks.rs). The `Used values` are read by that worker
// (the report's `data-uses-worker-bytes`) or, without it, by the page. The 94 MB part
// needs ../shared; without it it shows as one skipped test. From the diagrams' first frame
// to completion every animation frame is sampled: none may lack a diagram or show the
// intake, and the diagrams' canvases must be the same elements throughout (not made again).
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { SHARED, TPU, assert, dumpFile, forceUsesWorker, open, run, skip, test } from './harness.mjs';

const app = await open({ viewport: { width: 1280, height: 720 } });
const { page } = app;
const MODULE = path.basename(TPU, '.txt');
// `value: <68 Arg_0.1 @0>` of TPU dump 000; its `from instruction:` line says
// `parameter(0), metadata={op_name="x"}` and its uses `multiply_reduce_fusion, operand 0`.
const VALUE = 'Arg_0.1';
const COLOR = 0;
const BIG = path.join(SHARED, 'dumps', 'cpu', 'jax0.6.2', 'cpu_deep_unrolled_500.buffer-assignment.txt');

const diagram = () => page.locator(`.diagram[data-color="${COLOR}"]`);
const frame = () => page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
const dataView = async () => (await diagram().getAttribute('data-view')).split(',').map(Number);
const hold = (on) => page.evaluate((on) => { window.__bufscope_hold_details = on; }, on);
const status = () => page.evaluate(() => document.querySelector('#details-status')?.textContent ?? null);
/** Jobs of the `Used values` worker whose answers the page still awaits (src/ui/read/uses_worker.rs). */
const awaited = () => page.evaluate(() => window.__bufscope_uses_waiting?.() ?? -1);

/** Starts sampling every animation frame (as tests/e2e gap.mjs does): the diagrams'
 *  canvases, how many of them are those of the first frame that had any, whether a module
 *  (not the intake) is on screen, and whether the module is still being completed. */
const sampleFrames = () => page.evaluate(() => {
  const s = (window.__frames = { rows: [], stop: false, marked: false });
  const tick = () => {
    const canvases = [...document.querySelectorAll('.module canvas.space-canvas')];
    if (!s.marked && canvases.length > 0) {
      for (const c of canvases) c.__first = true;
      s.marked = true;
    }
    s.rows.push({
      t: performance.now(),
      canvases: canvases.length,
      first: canvases.filter((c) => c.__first).length,
      module: document.querySelector('.page')?.classList.contains('has-module') ?? false,
      reading: !!document.querySelector('#details-status'),
    });
    if (!s.stop) requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
});

/** Stops the sampling (two frames after completion) and checks the frames from the first
 *  with diagrams to the first complete one: returns their number and the longest gap. */
async function checkFrames(what) {
  await frame();
  const rows = await page.evaluate(() => { window.__frames.stop = true; return window.__frames.rows; });
  const from = rows.findIndex((r) => r.canvases > 0);
  assert(from >= 0, `${what}: no frame showed a diagram`);
  const n = rows[from].canvases;
  const to = rows.findIndex((r, i) => i > from && !r.reading);
  assert(to > from, `${what}: the module was not completed while sampled`);
  let gap = 0;
  for (let i = from; i <= to; i++) {
    const r = rows[i];
    const at = `${what}: frame ${i - from} (${Math.round(r.t - rows[from].t)} ms after the diagrams)`;
    assert(r.module, `${at} shows no module (the intake)`);
    assert(r.canvases === n, `${at} has ${r.canvases} diagrams of ${n}`);
    assert(r.first === n, `${at}: ${n - r.first} of the diagrams were made again`);
    if (i > from) gap = Math.max(gap, r.t - rows[i - 1].t);
  }
  return { frames: to - from + 1, gap };
}

/** The op_name the dump's text gives `value` (its instruction's `from instruction:` line). */
function opNameInDump(file, value) {
  const text = readFileSync(file, 'utf8');
  const entry = text.indexOf(`\n<68 ${value} @0>\n`);
  assert(entry >= 0, `no entry for ${value}`);
  const from = text.slice(entry).match(/\n from instruction: [^\n]*metadata=\{op_name="([^"]*)"/);
  assert(from, `no op_name for ${value}`);
  return from[1];
}

test('the diagram is drawn before the Used values are read, and the view survives their arrival', async () => {
  const warned = app.consoleWarnings.length;
  await app.load();
  await hold(true);
  await app.drop([dumpFile(TPU)]);
  await page.waitForFunction((n) => document.querySelector('.module .module-name')?.textContent === n, MODULE, { timeout: 20000 });
  await page.waitForFunction((c) => document.querySelector(`.diagram[data-color="${c}"]`)?.dataset.view, COLOR, { timeout: 10000 });
  const said = await status();
  assert(said?.startsWith('Reading op_names, source lines and uses'), `status while incomplete: ${said}`);

  // Zoom in over the value and select it, while the module is incomplete.
  const full = await dataView();
  await diagram().scrollIntoViewIfNeeded();
  await frame();
  let p = await page.evaluate(([c, n]) => window.__bufscope_block_px(c, n), [COLOR, VALUE]);
  assert(p, `no pixel for ${VALUE}`);
  await page.mouse.move(p.x, p.y);
  for (let i = 0; i < 3; i++) await page.mouse.wheel(0, -200);
  await page.waitForFunction(([c, v]) => document.querySelector(`.diagram[data-color="${c}"]`)?.dataset.view !== v, [COLOR, full.join(',')], { timeout: 5000 });
  await frame();
  p = await page.evaluate(([c, n]) => window.__bufscope_block_px(c, n), [COLOR, VALUE]);
  await page.mouse.click(p.x, p.y);
  await page.waitForFunction(([c, v]) => document.querySelector(`.diagram[data-color="${c}"]`)?.dataset.selected === v, [COLOR, VALUE], { timeout: 5000 });
  const opName = page.locator('.details .op-name').first();
  await opName.waitFor({ timeout: 5000 });
  assert((await opName.textContent()) === 'being read…', `op_name while incomplete: ${await opName.textContent()}`);
  const zoomed = await dataView();
  assert(await page.locator('#answers.answers-waiting').count() === 1, 'the answers panel does not wait for the Used values');
  // The dock scrolled, and the search typed, as a user leaves them.
  const dockTop = await page.locator('.dock-scroll').evaluate((d) => { d.scrollTop = 40; return d.scrollTop; });
  await page.locator('#search').fill('Arg_0');
  await page.waitForFunction(() => document.querySelector('#search-status')?.dataset.searched === 'Arg_0', null, { timeout: 5000 });
  await app.screenshot('deferred-incomplete.png');

  // The rest arrives: the same view, now with what Used values says; every frame until then
  // shows the diagrams as they were.
  await sampleFrames();
  await frame();
  await hold(false);
  await app.waitForDetails();
  const { frames } = await checkFrames('TPU 000');
  assert(frames >= 2, `only ${frames} frames sampled`);
  assert(await page.locator('.dock-scroll').evaluate((d) => d.scrollTop) === dockTop, 'the dock lost its scroll position');
  assert(await page.locator('#search').inputValue() === 'Arg_0', 'the search box lost its text');
  await page.waitForFunction(() => document.querySelector('.details .op-name')?.textContent !== 'being read…', null, { timeout: 10000 });
  const expected = opNameInDump(TPU, VALUE);
  assert((await opName.textContent()) === expected, `op_name ${await opName.textContent()}, the dump says ${expected}`);
  assert((await diagram().getAttribute('data-selected')) === VALUE, 'the selection was lost');
  const after = await dataView();
  assert(after.every((x, i) => Math.abs(x - zoomed[i]) <= Math.abs(zoomed[1] - zoomed[0]) * 0.01 + 1),
    `the zoom moved: ${zoomed} → ${after}`);
  const uses = await page.locator('.details .uses').first().textContent();
  assert(uses.includes('multiply_reduce_fusion'), `uses: ${uses}`);
  assert(await page.locator('#answers .answers-toggle').count() === 1, 'the answers panel is not there once complete');
  const completeMs = Number(await page.locator('.report').getAttribute('data-complete-ms'));
  assert(completeMs > 0, `data-complete-ms ${completeMs}`);
  await app.screenshot('deferred-complete.png');
  // Completed in place: the views, the live table's space tabs among them (made while the
  // module was incomplete), kept no hold of the module.
  app.noCopies(warned);
});

/** The memory of the worker that read the Used values (0: the page read them itself). */
const workerBytes = async () => Number(await page.locator('.report').getAttribute('data-uses-worker-bytes'));

/** Drops TPU 000 and waits for it to be complete; its value's op_name and uses are then
 *  what the dump says, read by the worker or not (`byWorker`). */
async function completesWith(byWorker, what) {
  await app.drop([dumpFile(TPU)]);
  await app.waitForOutcome(path.basename(TPU));
  await diagram().scrollIntoViewIfNeeded();
  await frame();
  const p = await page.evaluate(([c, n]) => window.__bufscope_block_px(c, n), [COLOR, VALUE]);
  assert(p, `${what}: no pixel for ${VALUE}`);
  await page.mouse.click(p.x, p.y);
  const opName = page.locator('.details .op-name').first();
  await opName.waitFor({ timeout: 5000 });
  const expected = opNameInDump(TPU, VALUE);
  assert((await opName.textContent()) === expected, `${what}: op_name ${await opName.textContent()}, the dump says ${expected}`);
  const uses = await page.locator('.details .uses').first().textContent();
  assert(uses.includes('multiply_reduce_fusion'), `${what}: uses ${uses}`);
  const bytes = await workerBytes();
  assert(byWorker ? bytes > 0 : bytes === 0, `${what}: the worker's memory is ${bytes}`);
}

test('the worker reads the Used values while the page reads on (as on a machine of 4 cores or more)', async () => {
  // In this test's page the app starts with its worker whatever the cores.
  await forceUsesWorker(page);
  await app.load();
  await completesWith(true, 'early');
  const title = await page.locator('.report .files-line').getAttribute('title');
  assert(/by a worker/.test(title ?? ''), `the report's title: ${title}`);
  assert((await awaited()) === 0, `the page still awaits ${await awaited()} answers of the worker`);
});

test('without its worker script the page reads the Used values itself', async () => {
  // The app would start its worker (whatever the cores), but the script is missing.
  await forceUsesWorker(page);
  await page.route('**/uses_worker.js', (r) => r.fulfill({ status: 404, body: 'gone' }));
  try {
    await app.load();
    await completesWith(false, 'no worker');
  } finally {
    await page.unroute('**/uses_worker.js');
  }
});

if (!existsSync(BIG)) {
  test('the 94 MB dump: diagram first (needs ../shared)', () => skip(`needs ${BIG} (../shared beside the repo)`));
} else {
  test('the 94 MB dump: the diagram is on screen while the Used values are read; then complete', async () => {
    await forceUsesWorker(page);
    await app.load();
    const t0 = await page.evaluate(() => performance.now());
    await sampleFrames();
    await app.pick(BIG);
    await page.waitForFunction(() => window.__frames.rows.some((r) => r.canvases > 0 && r.reading), null, { timeout: 60000 });
    await app.waitForDetails(60000);
    const rows = await page.evaluate(() => window.__frames.rows);
    const { frames, gap } = await checkFrames('94 MB');
    const shown = rows.find((r) => r.canvases > 0).t;
    const total = Number(await page.locator('.module .total-bytes').first().getAttribute('data-bytes'));
    assert(total > 0, 'no total bytes');
    console.log(`    94 MB: diagrams ${Math.round(shown - t0)} ms after the page was ready; ${frames} frames until complete ` +
      `(report: complete ${await page.locator('.report').getAttribute('data-complete-ms')} ms from the pick), ` +
      `every one with the diagrams; longest frame gap ${Math.round(gap)} ms`);
    assert((await awaited()) === 0, `the page still awaits ${await awaited()} answers of the worker`);
  });

  test('a read replaced while the worker reads its Used values calls the worker\'s job off', async () => {
    await forceUsesWorker(page);
    await app.load();
    await app.pick(BIG);
    await page.waitForFunction(() => window.__bufscope_uses_waiting() > 0, null, { timeout: 60000 });
    await app.drop([dumpFile(TPU)]);
    await app.waitForOutcome(path.basename(TPU));
    await app.waitForDetails();
    assert((await app.shownModule()) === MODULE, 'the TPU module is not on screen');
    const left = await awaited();
    assert(left === 0, `the page still awaits ${left} answers of the worker (the 94 MB read's job was not called off)`);
  });
}

await run(app);
