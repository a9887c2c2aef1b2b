// Browser tests of the panels on the largest dump, the 94 MB cpu_deep_unrolled_500 read from
// ../shared (skipped without it): the live table holds few rows in the DOM whatever its
// length, and an icicle frame limits it. In headless Chromium through playwright-core.
//   node tests/e2e/panels_big.test.mjs http://127.0.0.1:PORT/
// (tests/e2e/run.sh builds the app, serves it and runs every tests/e2e/*.test.mjs.) Expected
// figures are computed from the dump text itself by the independent analysis of
// panels_page.mjs. Screenshots go to tests/artifacts/panels-*.png. The last line is
// `N passed, M failed`; the exit status is 1 when M > 0.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { SHARED, artifacts, assert, grouped, open as openBrowser, run, skip, test } from './harness.mjs';
import { ROW_PX, analyse, tablePage } from './panels_page.mjs';

const shot = (name) => path.join(artifacts, `panels-${name}.png`);

const app = await openBrowser({ viewport: { width: 1280, height: 900 } });
const { page, consoleErrors } = app;
const noNewConsoleErrors = (since) => app.noNewConsoleErrors(since);
const { rowNames, search, statusText, settle, tableDom, assertBounded, selectedInView, scrollTable, allLines, linesInPlace } = tablePage(app);

// ---------------------------------------------------------------- the 94 MB dump

const BIG = path.join(SHARED, 'dumps/cpu/jax0.6.2/cpu_deep_unrolled_500.buffer-assignment.txt');
/** The big dump's values as the independent analysis reads them (in file order), read once. */
let bigValues = null;

/**
 * Loads the app and picks the big dump; waits for it complete and its table filled. Returns
 * its values, the step the app calls the peak and the values whose live range, as the dump
 * prints it, covers that step (all values of this dump are in one memory space).
 */
async function bigOpen() {
  bigValues ??= analyse([readFileSync(BIG, 'latin1')], { peaks: false }).values;
  await app.load();
  await page.locator('#file-input').setInputFiles(BIG);
  await page.waitForFunction(
    () => document.querySelector('.module .module-name')?.textContent === 'cpu_deep_unrolled_500',
    null,
    { timeout: 120000 },
  );
  await app.waitForDetails(60000);
  await page.locator('#peak-table tbody tr.value-row').first().waitFor({ timeout: 30000 });
  await settle();
  const step = Number(await page.locator('.peak-summary').getAttribute('data-step'));
  const live = bigValues.filter((v) => v.live && v.live[0] <= step && step <= v.live[1]);
  return { values: bigValues, step, live };
}

test('(p10) the largest dump (needs ../shared): 25,066 values live at the peak, few rows in the DOM', async () => {
  if (!existsSync(BIG)) {
    skip(`needs ${BIG} (../shared beside the repo)`);
  }
  const before = consoleErrors.length;
  const { values, step, live } = await bigOpen();
  const count = Number(await page.locator('.peak-summary').getAttribute('data-count'));
  assert(count === live.length, `${count} values live at the peak (step ${step}), the dump's ranges say ${live.length}`);
  let d = await assertBounded('after opening');
  assert(d.total === count, `the list has ${d.total} lines, ${count} values are live`);
  assert(await linesInPlace(), 'the lines are not where the spacer puts them');
  let t = Date.now();
  await page.locator('#peak-table th[data-col="op_name"] button').click();
  await page.waitForFunction(() => document.querySelector('#peak-table th[data-col="op_name"]').getAttribute('aria-sort') === 'ascending');
  const sortMs = Date.now() - t;
  t = Date.now();
  await search('pre_attention');
  const searchMs = Date.now() - t;
  const expected = (await statusText()).match(/of ([\d,]+)/);
  assert(expected, `status "${await statusText()}"`);
  await page.locator('#search').press('Enter');
  await page.locator('#details .details-name').waitFor({ timeout: 5000 });
  console.log(`note: (p10) sort by op_name ${sortMs} ms, literal search ${searchMs} ms (150 ms debounce included)`);
  assert(sortMs < 5000 && searchMs < 5000, 'too slow');
  await page.locator('#search').fill('');
  await scrollTable(0);
  await page.screenshot({ path: shot('07-largest') });
  // A value live at the peak far down the sorted list, selected through the search: the
  // table scrolls to it and marks it, and still holds few rows.
  const mounted = new Set(await rowNames());
  const names = new Map();
  for (const v of values) names.set(v.name, (names.get(v.name) ?? 0) + 1);
  const sorted = [...live].sort((a, b) => (a.opName === '') - (b.opName === '') || (a.opName < b.opName ? -1 : a.opName > b.opName ? 1 : 0));
  const deep = sorted.slice(Math.floor(sorted.length * 0.9)).find((v) => !mounted.has(v.name) && names.get(v.name) === 1 && !v.index);
  assert(deep, 'no value live at the peak far down the list');
  t = Date.now();
  await search(`^${deep.name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`);
  await page.locator('#search').press('Enter');
  await page.locator('#peak-table tr.value-row.selected', { hasText: deep.name }).waitFor({ timeout: 5000 });
  await page.waitForFunction(() => {
    const box = document.querySelector('#peak-table').closest('.value-scroll');
    const row = box.querySelector('tr.value-row.selected');
    return row && row.getBoundingClientRect().bottom <= box.getBoundingClientRect().bottom + 1;
  }, null, { timeout: 5000 });
  console.log(`note: (p10) a value ${Math.round((await tableDom()).top / ROW_PX)} lines down selected and shown in ${Date.now() - t} ms (search debounce included)`);
  await settle();
  d = await assertBounded(`after selecting ${deep.name}`);
  assert(d.top > 1000 * ROW_PX, `the table is scrolled ${d.top} px for a value far down`);
  assert(await selectedInView(), `the row of ${deep.name} is not in the table's view`);
  assert(await linesInPlace(), 'after the jump, the lines are not where the spacer puts them');
  await page.locator('.peak-panel').screenshot({ path: shot('09-far-value') });
  await page.locator('#search').fill('');
  // Scrolled to the end: the last lines, still few.
  await scrollTable(d.total * ROW_PX);
  d = await assertBounded('scrolled to the end');
  const last = await page.locator('#peak-table tbody tr.value-row').last().getAttribute('data-value');
  assert(await linesInPlace(), 'at the end, the lines are not where the spacer puts them');
  const lastSpacer = await page.locator('#peak-table tbody tr.spacer').last().evaluate((tr) => tr.getBoundingClientRect().height);
  assert(lastSpacer <= 1, `at the end, ${lastSpacer} px of spacer below the last line`);
  // End on the focused table selects that last value.
  await page.locator('#peak-table tbody tr.value-row').last().click();
  await page.keyboard.press('ArrowUp');
  await page.keyboard.press('End');
  assert((await page.locator('#peak-table tr.value-row.selected').getAttribute('data-value')) === last, 'End did not select the last value');
  await page.keyboard.press('Home');
  await page.locator('#peak-table tr.value-row.selected').waitFor({ timeout: 5000 });
  await settle();
  assert(await selectedInView(), 'Home: the first row is not in view');
  await assertBounded('after Home');
  // Grouped: 7,000 groups, few in the DOM; selecting a value opens its group and shows it.
  await page.locator('#group-op').check();
  await page.locator('#peak-table tr.group-row').first().waitFor({ timeout: 5000 });
  await settle();
  await assertBounded('grouped');
  await search(`^${deep.name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`);
  await page.locator('#search').press('Enter');
  await page.locator('#peak-table tr.value-row.member.selected', { hasText: deep.name }).waitFor({ timeout: 5000 });
  await settle();
  assert(await selectedInView(), `grouped: the row of ${deep.name} is not in the table's view`);
  await assertBounded(`grouped, after selecting ${deep.name}`);
  assert(await linesInPlace(), 'grouped: the lines are not where the spacer puts them');
  await page.locator('#search').fill('');
  await page.locator('#group-op').uncheck();
  await page.keyboard.press('Escape');
  noNewConsoleErrors(before);
});

test('(p13) an icicle frame limits the table to its values; the chip clears it (needs ../shared)', async () => {
  if (!existsSync(BIG)) skip(`needs ${BIG} (../shared beside the repo)`);
  const before = consoleErrors.length;
  const big = await bigOpen();
  const byId = new Map(big.values.map((v) => [String(v.id), v]));
  const toggle = page.locator('#answers .answers-toggle');
  await toggle.click();
  await page.locator('#answers-icicle .frame').first().waitFor({ timeout: 30000 });
  // The frame holding the most bytes among those of at most 1,500 values below the top.
  const frames = await page.locator('#answers-icicle .frame').evaluateAll((fs) => fs.map((f, i) => ({
    i, depth: Number(f.dataset.depth), bytes: Number(f.dataset.bytes), count: Number(f.title.match(/([\d,]+) values$/)[1].replace(/,/g, '')),
  })));
  const pick = frames.filter((f) => f.depth > 0 && f.count > 1 && f.count <= 1500).sort((a, b) => b.bytes - a.bytes)[0];
  assert(pick, 'no frame of 2 to 1,500 values');
  await page.locator('#answers-icicle .frame').nth(pick.i).click();
  const chip = page.locator('#table-filter');
  await chip.waitFor({ timeout: 5000 });
  await page.waitForFunction((n) => Number(document.querySelector('#peak-table')?.dataset.lines) === n, pick.count, { timeout: 5000 });
  assert(Number(await chip.getAttribute('data-count')) === pick.count, `the chip says ${await chip.getAttribute('data-count')} values, the frame ${pick.count}`);
  const label = await chip.locator('.filter-label').getAttribute('title');
  const frameLabel = (await page.locator('#answers-icicle .frame[data-depth="0"]').first().textContent()).trim().replace(/ ×/, '×');
  assert(label.endsWith(`/${frameLabel}`), `the chip says "only ${label}", the frame is "${frameLabel}"`);
  const countText = (await chip.locator('.filter-count').textContent()).trim();
  assert(countText === `· ${grouped(pick.count)} values`, `the chip says "${countText}"`);
  await assertBounded('limited to a frame');
  // Every line, scrolled through: values live at the step, their sizes (from the dump text)
  // adding up to the frame's bytes.
  const lines = await allLines();
  assert(lines.length === pick.count, `${lines.length} lines scrolled through, the frame has ${pick.count} values`);
  let sum = 0;
  for (const [, id] of lines) {
    const v = byId.get(id);
    assert(v && v.live && v.live[0] <= big.step && big.step <= v.live[1], `line of value id ${id} is not live at step ${big.step}`);
    sum += v.size;
  }
  assert(sum === pick.bytes, `the lines' sizes add to ${sum}, the frame holds ${pick.bytes}`);
  await page.locator('.peak-panel').screenshot({ path: shot('10-frame-filter') });
  // The chip's × shows every live value again; so does the icicle's "clear highlight".
  await chip.locator('.filter-clear').click();
  await page.waitForFunction((n) => Number(document.querySelector('#peak-table')?.dataset.lines) === n, big.live.length, { timeout: 5000 });
  assert((await chip.count()) === 0, 'the chip stayed');
  // The icicle is zoomed into the frame: its top frame stands for it (and zooms out).
  await page.locator('#answers-icicle .frame[data-depth="0"]').first().click();
  await chip.waitFor({ timeout: 5000 });
  assert(Number(await chip.getAttribute('data-count')) === pick.count, 'the top frame of the zoomed icicle limits to other values');
  await page.locator('#icicle-clear').click();
  await page.waitForFunction(() => !document.querySelector('#table-filter'), null, { timeout: 5000 });
  assert(Number(await page.locator('#peak-table').getAttribute('data-lines')) === big.live.length, 'clear highlight left the table limited');
  await toggle.click();
  noNewConsoleErrors(before);
});

await run(app);
