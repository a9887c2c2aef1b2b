// Browser tests of the panels (header, the table of values live at the chosen step, values
// without a live range, search, details), in headless Chromium through playwright-core. The
// 94 MB dump's are panels_big.test.mjs; the independent analysis and the table's helpers
// both use are panels_page.mjs.
//   node tests/e2e/panels.test.mjs http://127.0.0.1:PORT/
// (tests/e2e/run.sh builds the app, serves it and runs every tests/e2e/*.test.mjs.) Expected
// figures are computed here from the dump text itself, by a small analysis independent of
// the app's (panels_page.mjs). Screenshots go to tests/artifacts/panels-*.png. The last line is
// `N passed, M failed`; the exit status is 1 when M > 0.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { artifacts, assert, base, fixture, grouped, open as openBrowser, run, test } from './harness.mjs';
import { analyse, sameSet, searchIn, tablePage } from './panels_page.mjs';

const shot = (name) => path.join(artifacts, `panels-${name}.png`);

const TPU = fixture('tpu/000_0cb419b3147a3cb6.txt');
const TPU_MODULE = '000_0cb419b3147a3cb6';
const CPU_SPLIT = ['buffer-assignment.txt', 'buffer-assignment-values.txt', 'live-range.txt']
  .map((s) => fixture(`cpu/jax0.10.2/cpu_tiny.${s}`));

const app = await openBrowser({ viewport: { width: 1280, height: 900 } });
const { page, consoleErrors } = app;
const noNewConsoleErrors = (since) => app.noNewConsoleErrors(since);
const { open, rowNames, showSpace, search, statusText } = tablePage(app);

// ---------------------------------------------------------------- tests

const tpu = analyse([readFileSync(TPU, 'latin1')]);

/** Loads the app and picks the TPU dump; waits for its module and table. */
async function tpuOpen() {
  await page.goto(base, { waitUntil: 'load' });
  await page.locator('#file-input').waitFor({ state: 'attached', timeout: 20000 });
  await open(TPU, TPU_MODULE);
}

test('(p1) the header shows every memory space with its number, name and peak', async () => {
  await tpuOpen();
  const before = consoleErrors.length;
  await page.screenshot({ path: shot('01-tpu'), fullPage: true });
  const rows = await page.locator('.module .spaces tbody tr').evaluateAll((trs) =>
    trs.map((tr) => ({
      color: Number(tr.dataset.color),
      label: tr.querySelector('.space-name')?.textContent ?? '',
      peak: Number(tr.querySelector('.peak-bytes')?.dataset.bytes),
      step: tr.querySelector('.peak-step')?.textContent ?? '',
    })),
  );
  assert(rows.length === tpu.spaces.length, `${rows.length} memory space rows, expected ${tpu.spaces.length}`);
  const names = { 0: '0 default (HBM)', 1: '1 vmem (vector memory, on core)', 2: '2 smem (scalar memory, on core)' };
  for (const s of tpu.spaces) {
    const row = rows.find((r) => r.color === s.color);
    assert(row, `no row for colour ${s.color}`);
    if (names[s.color]) assert(row.label === names[s.color], `colour ${s.color} is labelled "${row.label}"`);
    assert(row.peak === s.peak, `colour ${s.color}: peak ${row.peak}, expected ${s.peak}`);
    assert(row.step.startsWith(String(s.peakTime)), `colour ${s.color}: peak step "${row.step}", expected ${s.peakTime}`);
  }
  noNewConsoleErrors(before);
});

test('(p2) the peak table lists exactly the values live at the peak, per memory space', async () => {
  await tpuOpen();
  const before = consoleErrors.length;
  for (const s of tpu.spaces) {
    await showSpace(s.color);
    const count = Number(await page.locator('.peak-summary').getAttribute('data-count'));
    assert(count === s.live.length, `colour ${s.color}: ${count} live at the peak, expected ${s.live.length}`);
    const names = await rowNames();
    assert(sameSet(names, s.live.map((v) => v.name)),
      `colour ${s.color}: rows ${names.join(', ')}; expected ${s.live.map((v) => v.name).join(', ')}`);
    // Largest first by default.
    const sizes = (await page.locator('#peak-table tbody tr.value-row td[data-bytes]').evaluateAll((tds) => tds.map((td) => Number(td.dataset.bytes))));
    assert(sizes.every((x, i) => i === 0 || sizes[i - 1] >= x), `colour ${s.color}: not largest first: ${sizes}`);
  }
  // A known value: Arg_1.2 (w1, 32 KiB) is the largest in HBM at the peak.
  await showSpace(0);
  const first = (await rowNames())[0];
  const largest = [...tpu.spaces.find((s) => s.color === 0).live].sort((a, b) => b.size - a.size)[0].name;
  assert(first === largest && first === 'Arg_1.2', `first row is ${first}, expected ${largest}`);
  noNewConsoleErrors(before);
});

test('(p3) clicking a column header sorts, clicking again reverses (aria-sort)', async () => {
  await tpuOpen();
  const before = consoleErrors.length;
  await showSpace(0);
  const initial = await rowNames();
  const header = page.locator('#peak-table th[data-col="name"]');
  await header.locator('button').click();
  assert((await header.getAttribute('aria-sort')) === 'ascending', 'name column is not ascending');
  const asc = await rowNames();
  const sorted = [...asc].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  assert(asc.join() === sorted.join(), `not A to Z: ${asc.join(', ')}`);
  assert(asc.join() !== initial.join(), 'sorting by name did not reorder the rows');
  await header.locator('button').click();
  assert((await header.getAttribute('aria-sort')) === 'descending', 'name column is not descending');
  const desc = await rowNames();
  assert(desc.join() === [...asc].reverse().join(), `not Z to A: ${desc.join(', ')}`);
  assert((await page.locator('#peak-table th[data-col="size"]').getAttribute('aria-sort')) === 'none', 'size column still sorted');
  // Back to size, largest first.
  await page.locator('#peak-table th[data-col="size"] button').click();
  assert((await page.locator('#peak-table th[data-col="size"]').getAttribute('aria-sort')) === 'descending', 'size is not descending');
  assert((await rowNames()).join() === initial.join(), 'size order is not the initial order');
  await page.screenshot({ path: shot('02-sorted'), fullPage: true });
  noNewConsoleErrors(before);
});

test('(p4) grouping by op_name: groups with totals and counts, expandable', async () => {
  await tpuOpen();
  const before = consoleErrors.length;
  // The memory space with the most values live at the peak.
  const s = [...tpu.spaces].sort((a, b) => b.live.length - a.live.length)[0];
  await showSpace(s.color);
  await page.locator('#group-op').check();
  const groups = await page.locator('#peak-table tr.group-row').evaluateAll((trs) =>
    trs.map((tr) => ({ name: tr.querySelector('.group-name').textContent, count: Number(tr.dataset.count), bytes: Number(tr.dataset.bytes) })),
  );
  const expected = new Map();
  for (const v of s.live) {
    const key = v.opName || '(no op_name)';
    const g = expected.get(key) || { count: 0, bytes: 0 };
    g.count += 1;
    g.bytes += v.size;
    expected.set(key, g);
  }
  assert(groups.length === expected.size, `${groups.length} groups, expected ${expected.size}`);
  for (const g of groups) {
    const e = expected.get(g.name);
    assert(e && e.count === g.count && e.bytes === g.bytes, `group ${g.name}: ${g.count} values, ${g.bytes} B; expected ${JSON.stringify(e)}`);
  }
  const named = groups.filter((g) => g.name !== '(no op_name)');
  assert(named.every((g, i) => i === 0 || named[i - 1].bytes >= g.bytes), 'groups are not largest first');
  assert((await page.locator('#peak-table tr.value-row').count()) === 0, 'value rows shown while every group is closed');
  // Expand the first group: its members appear, as lines of their own.
  await page.locator('#peak-table tr.group-row .group-toggle').first().click();
  const members = await page.locator('#peak-table tr.value-row.member').count();
  assert(members === groups[0].count, `${members} rows under the first group, expected ${groups[0].count}`);
  assert((await page.locator('#peak-table tr.group-row').first().getAttribute('aria-expanded')) === 'true', 'aria-expanded is not true');
  await page.screenshot({ path: shot('03-grouped'), fullPage: true });
  await page.locator('#peak-table tr.group-row .group-toggle').first().click();
  assert((await page.locator('#peak-table tr.value-row').count()) === 0, 'the group did not close');
  await page.locator('#group-op').uncheck();
  assert((await page.locator('#peak-table tr.value-row').count()) === s.live.length, 'ungrouping did not bring the rows back');
  noNewConsoleErrors(before);
});

test('(p5) values without a live range are listed apart, per memory space', async () => {
  await tpuOpen();
  const before = consoleErrors.length;
  for (const s of tpu.spaces) {
    await showSpace(s.color);
    const list = page.locator('details.timeless');
    if (s.timeless.length === 0) {
      assert((await list.count()) === 0, `colour ${s.color}: a list of values without a live range is shown`);
      continue;
    }
    assert(Number(await list.getAttribute('data-count')) === s.timeless.length, `colour ${s.color}: wrong count of values without a live range`);
    // The list is made when opened.
    assert((await list.locator('.timeless-item').count()) === 0, `colour ${s.color}: the closed list was made`);
    await list.locator('summary').click();
    await list.locator('.timeless-item').first().waitFor();
    const names = await list.locator('.timeless-item .link').allTextContents();
    assert(sameSet(names, s.timeless.map((v) => v.name)), `colour ${s.color}: listed ${names.join(', ')}`);
    // Selecting one shows its details, with no live range.
    await list.locator('.timeless-item .link').first().click();
    await page.waitForFunction((n) => document.querySelector('#details .details-name')?.textContent === n, names[0]);
    const range = await page.locator('#details .live-range').textContent();
    assert(/^none/.test(range), `live range of ${names[0]}: "${range}"`);
  }
  noNewConsoleErrors(before);
});

test('(p6) search: a regex that matches one value, Enter selects it, details show its offset in hex', async () => {
  await tpuOpen();
  const before = consoleErrors.length;
  const pattern = 'add_sqrt';
  const expected = searchIn(tpu.values, pattern);
  assert(expected.length === 1, `the test expects one match for ${pattern}, the dump has ${expected.length}`);
  await search(pattern);
  const status = await statusText();
  assert(status.startsWith('1 of 1'), `status is "${status}"`);
  await page.locator('#search').press('Enter');
  const v = expected[0];
  await page.waitForFunction((n) => document.querySelector('#details .details-name')?.textContent === n, v.name, { timeout: 5000 });
  const offset = await page.locator('#details .offset').textContent();
  const hex = `0x${v.offset.toString(16)}`;
  assert(offset.includes(hex), `offset shown "${offset}", expected ${hex}`);
  assert(Number(await page.locator('#details .offset').getAttribute('data-offset')) === v.offset, 'data-offset differs');
  const size = Number(await page.locator('#details .size').getAttribute('data-bytes'));
  assert(size === v.size, `size ${size}, expected ${v.size}`);
  const range = await page.locator('#details .live-range').textContent();
  assert(range.includes(`${v.live[0]}–${v.live[1]}`), `live range "${range}", expected ${v.live[0]}–${v.live[1]}`);
  await page.screenshot({ path: shot('04-search-details'), fullPage: true });
  noNewConsoleErrors(before);
});

test('(p7) search: Enter and Shift+Enter step through several matches', async () => {
  await tpuOpen();
  const before = consoleErrors.length;
  const pattern = 'fusion';
  const expected = searchIn(tpu.values, pattern);
  assert(expected.length > 2, `the test expects several matches for ${pattern}`);
  await search(pattern);
  assert((await statusText()).startsWith(`1 of ${expected.length}`), `status "${await statusText()}"`);
  const selectedName = () => page.locator('#details .details-name').textContent();
  await page.locator('#search').press('Enter');
  await page.waitForFunction((n) => document.querySelector('#details .details-name')?.textContent === n, expected[0].name);
  await page.locator('#search').press('Enter');
  await page.waitForFunction((n) => document.querySelector('#details .details-name')?.textContent === n, expected[1].name);
  assert((await statusText()).startsWith(`2 of ${expected.length}`), `status "${await statusText()}"`);
  await page.locator('#search').press('Shift+Enter');
  await page.waitForFunction((n) => document.querySelector('#details .details-name')?.textContent === n, expected[0].name);
  await page.locator('#search').press('Shift+Enter');
  assert((await selectedName()) === expected[expected.length - 1].name, 'Shift+Enter did not wrap to the last match');
  noNewConsoleErrors(before);
});

test('(p8) an invalid regex shows an error, matches nothing, and the page still works', async () => {
  await tpuOpen();
  const before = consoleErrors.length;
  await search('(');
  const error = page.locator('.search-error');
  await error.waitFor({ timeout: 5000 });
  assert((await error.textContent()).trim().length > 0, 'empty error');
  assert((await page.locator('#search').getAttribute('aria-invalid')) === 'true', 'aria-invalid is not set');
  await page.locator('#search').press('Enter');
  assert((await page.locator('#peak-table tr.value-row.match').count()) === 0, 'rows still marked as matches');
  await page.screenshot({ path: shot('05-invalid-regex'), fullPage: true });
  // Still usable: a valid search works again and a row click selects.
  await search('^fusion$');
  assert((await statusText()).startsWith('1 of 1'), `after the error: "${await statusText()}"`);
  assert((await page.locator('.search-error').count()) === 0, 'the error stayed');
  await showSpace(0);
  await page.locator('#peak-table tr.value-row', { hasText: 'Arg_2.3' }).click();
  await page.waitForFunction(() => document.querySelector('#details .details-name')?.textContent === 'Arg_2.3');
  assert(await page.locator('#peak-table tr.value-row.selected', { hasText: 'Arg_2.3' }).count() === 1, 'the clicked row is not marked selected');
  const op = await page.locator('#details .op-name').textContent();
  assert(op === 'w2', `op_name shown "${op}"`);
  await page.locator('#search').fill('');
  noNewConsoleErrors(before);
});

test('(p9) the three split files of a new-XLA dump make one module with live ranges', async () => {
  const before = consoleErrors.length;
  const cpu = analyse(CPU_SPLIT.map((f) => readFileSync(f, 'latin1')));
  await app.load();
  await open(CPU_SPLIT, 'cpu_tiny');
  assert((await page.locator('.module').count()) === 1, `${await page.locator('.module').count()} modules shown`);
  assert((await page.locator('#module-picker').count()) === 0, 'a module picker is shown for one module');
  const s = [...cpu.spaces].sort((a, b) => b.peak - a.peak)[0];
  assert(s.live.length > 0, 'the independent analysis finds nothing live at the peak');
  await showSpace(s.color);
  const names = await rowNames();
  assert(names.length > 0, 'the peak table is empty');
  assert(sameSet(names, s.live.map((v) => v.name)), `rows ${names.join(', ')}; expected ${s.live.map((v) => v.name).join(', ')}`);
  await page.locator('#peak-table tr.value-row').first().click();
  const v = cpu.values.find((x) => x.name === names[0]);
  await page.waitForFunction((n) => document.querySelector('#details .details-name')?.textContent === n, v.name);
  const range = await page.locator('#details .live-range').textContent();
  assert(range.includes(`${v.live[0]}–${v.live[1]}`), `live range "${range}", expected ${v.live[0]}–${v.live[1]}`);
  const uses = await page.locator('#details details.uses').count();
  assert(uses === 1, 'no uses listed for a value of the split dump');
  await page.screenshot({ path: shot('06-cpu-split'), fullPage: true });
  noNewConsoleErrors(before);
});

test('(p11) a click on the curve makes the table list the values live at that step', async () => {
  await tpuOpen();
  const before = consoleErrors.length;
  await showSpace(0);
  const s = tpu.spaces.find((x) => x.color === 0);
  const timed = tpu.values.filter((v) => v.color === 0 && v.live);
  const liveAt = (t) => timed.filter((v) => v.live[0] <= t && t <= v.live[1]);
  const key = (vs) => vs.map((v) => v.name).sort().join();
  await page.locator('canvas.space-canvas[data-color="0"]').scrollIntoViewIfNeeded();
  // The first step, other than the peak, in view on the curve, where other values are live.
  let target = null;
  let at = null;
  for (let t = 0; t <= s.peakTime + 50 && target === null; t++) {
    if (t === s.peakTime || liveAt(t).length === 0 || key(liveAt(t)) === key(s.live)) continue;
    at = await page.evaluate((x) => window.__bufscope_step_px(0, x), t);
    if (at) target = t;
  }
  assert(target !== null, 'no other step with other live values is in view on the curve');
  await page.mouse.click(at.x, at.y);
  await page.waitForFunction((t) => document.querySelector('.peak-summary')?.dataset.step === String(t), target, { timeout: 5000 });
  const expected = liveAt(target);
  const summary = page.locator('.peak-summary');
  const count = Number(await summary.getAttribute('data-count'));
  const bytes = Number(await summary.getAttribute('data-bytes'));
  const sum = expected.reduce((a, v) => a + v.size, 0);
  assert(count === expected.length, `${count} values live at step ${target}, the dump's ranges say ${expected.length}`);
  assert(bytes === sum, `their sizes add to ${bytes}, the dump's sizes to ${sum}`);
  assert(sameSet(await rowNames(), expected.map((v) => v.name)), `rows ${(await rowNames()).join(', ')} at step ${target}`);
  assert((await summary.getAttribute('data-peak')) === 'false', 'step ' + target + ' is said to be the peak');
  const title = (await page.locator('.peak-title').textContent()).trim();
  assert(title === `Live at step ${target}`, `title "${title}"`);
  assert((await summary.textContent()).includes('not the peak'), `summary "${await summary.textContent()}"`);
  await page.screenshot({ path: shot('08-step') });
  // Back to the peak with the answers panel's button.
  const toggle = page.locator('#answers .answers-toggle');
  await toggle.click();
  await page.locator('#answers-own-peak').click();
  await page.waitForFunction((t) => document.querySelector('.peak-summary')?.dataset.step === String(t), s.peakTime, { timeout: 5000 });
  assert((await summary.getAttribute('data-peak')) === 'true', 'back at the peak, not said to be the peak');
  assert((await page.locator('.peak-title').textContent()).trim() === 'Live at the peak', 'title at the peak');
  assert(sameSet(await rowNames(), s.live.map((v) => v.name)), 'back at the peak, other rows');
  await toggle.click();
  noNewConsoleErrors(before);
});

test('(p12) keys: with the table focused, ↓ ↑ End Home move the selection', async () => {
  await tpuOpen();
  const before = consoleErrors.length;
  await showSpace(0);
  const names = await rowNames();
  assert(names.length >= 3, `${names.length} rows`);
  const selected = () => page.locator('#peak-table tr.value-row.selected td.name').textContent();
  await page.locator('#peak-table tr.value-row').first().click();
  await page.keyboard.press('ArrowDown');
  assert((await selected()) === names[1], `↓ from the first row selected ${await selected()}, expected ${names[1]}`);
  await page.keyboard.press('End');
  assert((await selected()) === names[names.length - 1], `End selected ${await selected()}`);
  await page.keyboard.press('ArrowUp');
  assert((await selected()) === names[names.length - 2], `↑ selected ${await selected()}`);
  await page.keyboard.press('Home');
  assert((await selected()) === names[0], `Home selected ${await selected()}`);
  await page.waitForFunction((n) => document.querySelector('#details .details-name')?.textContent === n, names[0]);
  await page.keyboard.press('Escape');
  noNewConsoleErrors(before);
});

await run(app);
