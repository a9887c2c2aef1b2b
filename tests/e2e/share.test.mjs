// Browser tests of a view shared by its URL and of the module picker, at 1280×720.
//   node tests/e2e/share.test.mjs http://127.0.0.1:PORT/
// (tests/e2e/run.sh builds the app, serves it and runs every tests/e2e/*.test.mjs.)
// The URL hash (src/ui/hash.rs, src/view_hash.rs) follows the view: zoom (the diagram's
// `data-view`), selected value, search, chosen step, capacity; a reload with that hash and
// the same file dropped again restores it. The picker (src/ui/picker.rs) lists the modules,
// filters as you type and keeps the search when switching. Uses the test hooks
// `window.__bufscope_block_px` and `__bufscope_step_px` (src/ui/canvas/hooks.rs).
// Screenshots go to tests/artifacts/share-*.png.
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { SHARED, TPU, assert, dumpFile, fixture, open, run, skip, test } from './harness.mjs';

const app = await open({ viewport: { width: 1280, height: 720 } });
const { page } = app;

const MODULE = path.basename(TPU, '.txt');
// `value: <68 Arg_0.1 @0> (size=8192,offset=0)` in that dump: memory space 0.
const VALUE = 'Arg_0.1';
const COLOR = 0;
// What the hash may hold: names the user chose and numbers of the view.
const KEYS = new Set(['module', 'space', 'steps', 'bytes', 'step', 'value', 'search', 'capacity']);

const diagram = () => page.locator(`.diagram[data-color="${COLOR}"]`);
const frame = () => page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
const dataView = async () => (await diagram().getAttribute('data-view')).split(',').map(Number);
const hashParams = async () => new URLSearchParams((await page.evaluate(() => location.hash)).replace(/^#/, ''));
const shownModule = () => page.evaluate(() => document.querySelector('.module .module-name')?.textContent ?? null);

async function blockPx(name = VALUE) {
  await diagram().scrollIntoViewIfNeeded();
  await frame();
  const p = await page.evaluate(([c, n]) => window.__bufscope_block_px(c, n), [COLOR, name]);
  assert(p, `no pixel for ${name}`);
  return p;
}

/** The block's centre relative to its canvas (the page may scroll differently). */
async function blockInCanvas(name = VALUE) {
  const p = await blockPx(name);
  const r = await page.locator(`canvas.space-canvas[data-color="${COLOR}"]`).boundingBox();
  return { x: p.x - r.x, y: p.y - r.y };
}

/** Opens the answers panel when it is closed. */
async function openAnswers() {
  const toggle = page.locator('#answers .answers-toggle');
  if ((await toggle.count()) && (await toggle.getAttribute('aria-expanded')) === 'false') await toggle.click();
  await page.locator('#answers .answers-live').waitFor({ timeout: 10000 });
}

/** Drops the TPU dump and waits until its first diagram is drawn. */
async function dropTpu() {
  await app.drop([dumpFile(TPU)]);
  await page.waitForFunction((n) => document.querySelector('.module .module-name')?.textContent === n, MODULE, { timeout: 20000 });
  await page.waitForFunction((c) => document.querySelector(`.diagram[data-color="${c}"]`)?.dataset.view, COLOR, { timeout: 10000 });
  // The view the hash names is carried over when the `Used values` complete the module.
  await app.waitForDetails();
  await page.waitForFunction((c) => document.querySelector(`.diagram[data-color="${c}"]`)?.dataset.view, COLOR, { timeout: 10000 });
}

const near = (a, b, width) => Math.abs(a - b) <= width * 0.01 + 0.1;

/**
 * Loads the app, drops the TPU dump and sets a view as a user would: zoomed in over VALUE,
 * VALUE selected, `fusion` searched, a step chosen on the curve, a capacity of 16GiB.
 * Returns the whole view before the zoom (`full`), the step chosen, and what the page then
 * shows (`saved`: its hash, view window and VALUE's block in its canvas).
 */
async function setView() {
  await app.load();
  await dropTpu();
  const full = await dataView();
  const p = await blockPx();
  await page.mouse.move(p.x, p.y);
  for (let i = 0; i < 4; i++) await page.mouse.wheel(0, -200);
  await page.waitForFunction(([c, v]) => document.querySelector(`.diagram[data-color="${c}"]`)?.dataset.view !== v, [COLOR, full.join(',')], { timeout: 5000 });
  const q = await blockPx();
  await page.mouse.click(q.x, q.y);
  await page.waitForFunction(([c, v]) => document.querySelector(`.diagram[data-color="${c}"]`)?.dataset.selected === v, [COLOR, VALUE], { timeout: 5000 });
  await page.locator('#search').fill('fusion');
  await page.waitForFunction(() => document.querySelector('#search-status')?.dataset.searched === 'fusion', null, { timeout: 5000 });
  const view = await dataView();
  const step = Math.floor((view[0] + view[1]) / 2);
  const at = await page.evaluate(([c, s]) => window.__bufscope_step_px(c, s), [COLOR, step]);
  assert(at, `step ${step} is not in view`);
  await page.mouse.click(at.x, at.y);
  await openAnswers();
  await page.waitForFunction((s) => document.querySelector('#answers .answers-live')?.dataset.step === String(s), step, { timeout: 5000 });
  await page.locator('#capacity-size').fill('16GiB');
  await page.locator('#capacity-size').press('Enter');
  await page.waitForFunction(() => /capacity=/.test(location.hash), null, { timeout: 5000 });
  const saved = { hash: await page.evaluate(() => location.hash), view: await dataView(), step, block: await blockInCanvas() };
  return { full, step, saved };
}

test('the hash follows the view: zoom, selected value, search, chosen step, capacity', async () => {
  const { full, step } = await setView();
  const h = await hashParams();
  for (const k of h.keys()) assert(KEYS.has(k), `the hash holds "${k}": ${[...h.keys()]}`);
  assert(h.get('module') === MODULE, `module ${h.get('module')}`);
  assert(h.get('value') === VALUE, `value ${h.get('value')}`);
  assert(h.get('search') === 'fusion', `search ${h.get('search')}`);
  assert(h.get('step') === String(step), `step ${h.get('step')}, chosen ${step}`);
  assert(h.get('space') === String(COLOR), `space ${h.get('space')}`);
  assert(/^\d+:16GiB$/.test(h.get('capacity')), `capacity ${h.get('capacity')}`);
  const [x0, x1] = h.get('steps').split(',').map(Number);
  const [y0, y1] = h.get('bytes').split(',').map(Number);
  const now = await dataView();
  assert(near(x0, now[0], now[1] - now[0]) && near(x1, now[1], now[1] - now[0]), `steps ${x0},${x1} vs the view ${now}`);
  assert(near(y0, now[2], now[3] - now[2]) && near(y1, now[3], now[3] - now[2]), `bytes ${y0},${y1} vs the view ${now}`);
  assert(now[1] - now[0] < (full[1] - full[0]) * 0.7, `not zoomed: ${now} of ${full}`);
  await app.screenshot('share-01-before.png');
});

test('a reload with that hash and the same file dropped again restores the view', async () => {
  const { saved } = await setView();
  await page.reload({ waitUntil: 'load' });
  await page.locator('#file-input').waitFor({ state: 'attached', timeout: 20000 });
  assert((await page.evaluate(() => location.hash)) === saved.hash, 'the hash changed before a module opened');
  await dropTpu();
  await page.waitForFunction(([c, v]) => document.querySelector(`.diagram[data-color="${c}"]`)?.dataset.selected === v, [COLOR, VALUE], { timeout: 5000 });
  const view = await dataView();
  const [w, h] = [saved.view[1] - saved.view[0], saved.view[3] - saved.view[2]];
  assert(near(view[0], saved.view[0], w) && near(view[1], saved.view[1], w), `steps ${view} vs ${saved.view}`);
  assert(near(view[2], saved.view[2], h) && near(view[3], saved.view[3], h), `bytes ${view} vs ${saved.view}`);
  const block = await blockInCanvas();
  assert(Math.abs(block.x - saved.block.x) < 3 && Math.abs(block.y - saved.block.y) < 3,
    `${VALUE} drawn at ${JSON.stringify(block)}, before at ${JSON.stringify(saved.block)}`);
  assert((await page.locator('#search').inputValue()) === 'fusion', 'the search is not restored');
  await page.waitForFunction(() => document.querySelector('#search-status')?.dataset.searched === 'fusion', null, { timeout: 5000 });
  assert(Number(await page.locator('#search-status .search-count').getAttribute('data-count')) > 0, 'the restored search matches nothing');
  await page.locator('#details .details-name', { hasText: VALUE }).waitFor({ timeout: 5000 });
  await openAnswers();
  await page.waitForFunction((s) => document.querySelector('#answers .answers-live')?.dataset.step === String(s), saved.step, { timeout: 5000 });
  assert((await page.locator('#capacity-size').inputValue()) === '16GiB', 'the capacity is not restored');
  await app.screenshot('share-02-restored.png');
});

test('moving the view replaces the hash; it adds no history entry', async () => {
  await app.load();
  await dropTpu();
  // On a fresh page: the first view written to the hash, and the panels made around the
  // diagrams (they move the canvas), before the block is looked for and wheeled over.
  await page.waitForFunction(() => location.hash.includes('module='), null, { timeout: 10000 });
  await page.locator('.peak-panel').waitFor({ timeout: 10000 });
  const entries = await page.evaluate(() => history.length);
  const before = await page.evaluate(() => location.hash);
  const p = await blockPx();
  await page.mouse.move(p.x, p.y);
  for (let i = 0; i < 10; i++) await page.mouse.wheel(0, -100);
  await page.waitForFunction((h) => location.hash !== h, before, { timeout: 10000 });
  assert((await page.evaluate(() => history.length)) === entries, 'the wheel added history entries');
});

const FOLDER = path.dirname(fixture('cpu/jax0.10.2/cpu_tiny.buffer-assignment.txt'));
const folderFiles = () => readdirSync(FOLDER).map((f) => dumpFile(path.join(FOLDER, f)));
const folderModules = [...new Set(readdirSync(FOLDER).map((f) => f.split('.')[0]))];

test('in a read of several modules, the module the hash names is opened', async () => {
  await app.load();
  await app.drop(folderFiles());
  await page.locator('#module-picker').waitFor({ timeout: 20000 });
  const first = await shownModule();
  const target = folderModules.find((m) => m !== first);
  // The view on screen has been written to the hash (so that it does not overwrite ours).
  await page.waitForFunction((m) => new URLSearchParams(location.hash.slice(1)).get('module') === m, first, { timeout: 5000 });
  await page.evaluate((m) => { location.hash = `module=${encodeURIComponent(m)}&search=dot`; }, target);
  await page.reload({ waitUntil: 'load' });
  await page.locator('#file-input').waitFor({ state: 'attached', timeout: 20000 });
  await app.drop(folderFiles());
  await page.locator('#module-picker').waitFor({ timeout: 20000 });
  assert((await shownModule()) === target, `shown ${await shownModule()}, the hash names ${target} (default ${first})`);
  assert((await page.locator('#search').inputValue()) === 'dot', 'the search of the hash is not restored');
});

test('the picker lists peaks and spaces, filters as you type, and switching keeps the search', async () => {
  // The folder's modules read, `dot` searched.
  await app.load();
  await app.drop(folderFiles());
  await page.locator('#module-picker').waitFor({ timeout: 20000 });
  await page.locator('#search').fill('dot');
  await page.waitForFunction(() => document.querySelector('#search-status')?.dataset.searched === 'dot', null, { timeout: 5000 });
  await page.locator('#module-picker').click();
  const rows = page.locator('#module-list [role=option]');
  await rows.first().waitFor({ timeout: 5000 });
  const names = await rows.evaluateAll((r) => r.map((e) => e.dataset.name));
  assert(names.length === folderModules.length && folderModules.every((m) => names.includes(m)), `listed ${names}`);
  const peaks = await page.locator('#module-list .picker-peak').evaluateAll((r) => r.map((e) => Number(e.dataset.bytes)));
  assert(peaks.every((p, i) => i === 0 || peaks[i - 1] >= p), `peaks not largest first: ${peaks}`);
  const spaces = await page.locator('#module-list .picker-spaces').allTextContents();
  assert(spaces.every((s) => s.startsWith('host memory')), `spaces of CPU modules: ${spaces}`);
  // The peak of the module on screen is its header's highest "Peak occupied".
  const current = await shownModule();
  const headerPeak = Math.max(...(await page.locator('.module .peak-bytes').evaluateAll((r) => r.map((e) => Number(e.dataset.bytes)))));
  assert(peaks[names.indexOf(current)] === headerPeak, `picker peak ${peaks[names.indexOf(current)]}, header ${headerPeak}`);
  await app.screenshot('share-03-picker-open.png');
  // ↓ moves the highlight.
  await page.keyboard.press('ArrowDown');
  assert((await rows.nth(1).getAttribute('aria-selected')) === 'true', '↓ did not move to the second row');
  // Typing filters: by a part of the name, then by characters in order.
  const target = folderModules.find((m) => m !== current && m !== 'cpu_tiny') ?? folderModules.find((m) => m !== current);
  const part = target.slice(4, 9);
  await page.locator('#module-filter').fill(part);
  const kept = await rows.evaluateAll((r) => r.map((e) => e.dataset.name));
  assert(kept.length >= 1 && kept.every((n) => n.includes(part)) && kept.includes(target), `filter "${part}" kept ${kept}`);
  await page.locator('#module-filter').fill('zzzz');
  assert((await rows.count()) === 0, 'a filter fitting nothing kept rows');
  await page.locator('#module-filter').fill(target.replace(/_/g, '').slice(0, 6));
  assert((await rows.evaluateAll((r) => r.map((e) => e.dataset.name))).includes(target), 'the fuzzy filter lost the module');
  await page.locator('#module-filter').fill(target);
  await page.keyboard.press('Enter');
  await page.waitForFunction((n) => document.querySelector('.module .module-name')?.textContent === n, target, { timeout: 10000 });
  assert((await page.locator('#module-list').count()) === 0, 'the list stays open after picking');
  assert((await page.locator('#search').inputValue()) === 'dot', 'switching module cleared the search');
  await page.waitForFunction(() => document.querySelector('#search-status')?.dataset.searched === 'dot', null, { timeout: 5000 });
  await page.waitForFunction((n) => new URLSearchParams(location.hash.slice(1)).get('module') === n, target, { timeout: 5000 });
  // Escape closes the list, the module stays.
  await page.locator('#module-picker').click();
  await page.keyboard.press('Escape');
  assert((await page.locator('#module-list').count()) === 0, 'Escape did not close the list');
  assert((await shownModule()) === target, 'Escape changed the module');
  await app.screenshot('share-04-switched.png');
});

test('switching between big modules stays quick (../shared/dumps/cpu/jax0.6.2)', async () => {
  const dir = path.join(SHARED, 'dumps', 'cpu', 'jax0.6.2');
  if (!existsSync(dir)) skip(`needs ${dir}`);
  await app.load();
  // Picked as a folder (a drop would copy 99 MB through the test's page.evaluate).
  await page.locator('#dir-input').setInputFiles(dir);
  const count = readdirSync(dir).filter((f) => f.endsWith('.buffer-assignment.txt')).length;
  await page.waitForFunction((n) => document.querySelector('.picker-count')?.textContent === `${n} modules`, count, { timeout: 180000 });
  await app.waitForDetails(180000);
  assert(count > folderModules.length, `${dir} holds ${count} modules`);
  const names = await app.moduleNames();
  const times = [];
  for (const name of [...names.slice(1), names[0]]) {
    const t0 = Date.now();
    await app.chooseModule(name);
    await page.waitForFunction(() => document.querySelector('.module .diagram')?.dataset.view, null, { timeout: 20000 });
    times.push(Date.now() - t0);
  }
  console.log(`  switching module (${names.length} modules, largest peak first, then back to the first): ${names.slice(1).concat(names[0]).map((n, i) => `${n} ${times[i]} ms`).join(', ')}`);
});

await run(app);
