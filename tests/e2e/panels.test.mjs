// Browser tests of the panels (header, the table of values live at the chosen step, values
// without a live range, search, details), in headless Chromium through playwright-core.
//   node tests/e2e/panels.test.mjs http://127.0.0.1:PORT/
// (tests/e2e/run.sh builds the app, serves it and runs every tests/e2e/*.test.mjs.) Expected
// figures are computed here from the dump text itself, by a small analysis independent of
// the app's. Screenshots go to tests/artifacts/panels-*.png. The last line is
// `N passed, M failed`; the exit status is 1 when M > 0.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { SHARED, artifacts, assert, base, fixture, grouped, open as openBrowser, run, search as searchFor, skip, test } from './harness.mjs';

const shot = (name) => path.join(artifacts, `panels-${name}.png`);

const TPU = fixture('tpu/000_0cb419b3147a3cb6.txt');
const TPU_MODULE = '000_0cb419b3147a3cb6';
const CPU_SPLIT = ['buffer-assignment.txt', 'buffer-assignment-values.txt', 'live-range.txt']
  .map((s) => fixture(`cpu/jax0.10.2/cpu_tiny.${s}`));

// ---------------------------------------------------------------- an independent analysis

/**
 * Reads the parts of a dump the panels show: allocations, values (in file order), live
 * ranges, op_names, and per memory space the occupied-bytes peak (union of the byte ranges
 * of the live values, allocations laid out in index order) and the values live there.
 */
function analyse(texts, { peaks = true } = {}) {
  const lines = texts.join('\n').split('\n');
  const allocations = [];
  const values = [];
  const ranges = new Map();
  const opNames = new Map();
  let max = null;
  let section = '';
  for (const line of lines) {
    let m;
    if ((m = line.match(/^allocation (\d+): size (\d+)(.*)$/))) {
      const color = (m[3].match(/color (\d+)/) || [0, '0'])[1];
      allocations.push({ index: Number(m[1]), size: Number(m[2]), color: Number(color), values: [] });
      section = 'ba';
    } else if (section === 'ba' && (m = line.match(/^ value: <(\d+) (\S+?)(\{[^}]*\})?(?: @(\d+))?> \(size=(\d+),offset=(\d+)\): (.*)$/))) {
      const a = allocations[allocations.length - 1];
      const v = {
        id: Number(m[1]), instr: m[2], index: m[3] || '', name: m[2] + (m[3] || ''),
        color: m[4] !== undefined ? Number(m[4]) : a.color,
        allocation: allocations.length - 1, size: Number(m[5]), offset: Number(m[6]), shape: m[7],
      };
      values.push(v);
      a.values.push(v);
    } else if ((m = line.match(/^HloLiveRange \(max (\d+)\)/))) {
      max = Number(m[1]);
      section = 'hlo';
    } else if (/^\s*BufferLiveRange:/.test(line)) {
      section = 'blr';
    } else if (section === 'blr' && (m = line.match(/^\s+(\S+?)(\{[^}]*\})?:(\d+)-(\d+)\s*$/))) {
      ranges.set(m[1] + (m[2] || '{}'), [Number(m[3]), Number(m[4])]);
    } else if (section === 'blr' && /^\s*Live ranges at/.test(line)) {
      section = 'hlo';
    } else if ((m = line.match(/^ from instruction: %(\S+) = .*op_name="((?:[^"\\]|\\.)*)"/))) {
      opNames.set(m[1], m[2]);
    }
  }
  for (const v of values) {
    v.live = ranges.get(v.instr + (v.index || '{}')) || null;
    v.opName = opNames.get(v.instr) || '';
  }
  const colors = [...new Set([...allocations.map((a) => a.color), ...values.map((v) => v.color)])].sort((a, b) => a - b);
  if (!peaks) return { values, spaces: [] };
  const latest = values.reduce((m, v) => (v.live ? Math.max(m, v.live[1] + 1) : m), 0);
  const steps = Math.max(latest, max === null ? 0 : max + 1);
  const spaces = colors.map((color) => {
    let height = 0;
    const base = new Map();
    allocations.forEach((a, i) => {
      if (a.color === color || a.values.some((v) => v.color === color)) {
        base.set(i, height);
        height += a.size;
      }
    });
    const own = values.filter((v) => v.color === color);
    const timed = own.filter((v) => v.live);
    let peak = 0;
    let peakTime = null;
    for (let t = 0; t < steps; t++) {
      const spans = timed
        .filter((v) => v.live[0] <= t && t <= v.live[1] && v.size > 0)
        .map((v) => [base.get(v.allocation) + v.offset, base.get(v.allocation) + v.offset + v.size])
        .sort((a, b) => a[0] - b[0]);
      let covered = 0;
      let end = -1;
      for (const [s, e] of spans) {
        if (e <= end) continue;
        covered += e - Math.max(s, end);
        end = e;
      }
      if (covered > peak) {
        peak = covered;
        peakTime = t;
      }
    }
    const live = peakTime === null ? [] : timed.filter((v) => v.live[0] <= peakTime && peakTime <= v.live[1]);
    return { color, peak, peakTime, live, timeless: own.filter((v) => !v.live) };
  });
  return { values, spaces };
}

/** The app's search: a regex over names and op_names, case-insensitive unless it has capitals. */
function searchIn(values, pattern) {
  const re = new RegExp(pattern, /\p{Lu}/u.test(pattern) ? '' : 'i');
  return values.filter((v) => re.test(v.name) || (v.opName !== '' && re.test(v.opName)));
}

// ---------------------------------------------------------------- browser and page

const app = await openBrowser({ viewport: { width: 1280, height: 900 } });
const { page, consoleErrors } = app;
const noNewConsoleErrors = (since) => app.noNewConsoleErrors(since);

const sameSet = (a, b) => a.length === b.length && [...a].sort().join('\n') === [...b].sort().join('\n');

/** Picks files with the file input and waits for the module called `name` to be on screen. */
async function open(files, name) {
  await app.pickModule(files, name);
  await page.locator('#peak-table').waitFor({ timeout: 5000 });
}

const tab = (color) => page.locator(`.space-tab[data-color="${color}"]`);
const rowNames = () => page.locator('#peak-table tbody tr.value-row td.name').allTextContents();

async function showSpace(color) {
  await tab(color).click();
  await page.waitForFunction(
    (c) => document.querySelector(`.space-tab[data-color="${c}"]`)?.getAttribute('aria-selected') === 'true',
    color,
  );
}

const search = (text) => searchFor(page, text);

const statusText = async () => (await page.locator('#search-status').textContent()).trim();

// The table is a virtualised list: lines of ROW_PX pixels, only those scrolled to and MARGIN
// more on each side in the DOM (src/ui/panels/live_table/list.rs), plus two spacer rows.
const ROW_PX = 26;
const MARGIN = 40;

/** Two animation frames and a task: the table has mounted the lines of its scroll position. */
const settle = () => page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(r, 0)))));

/** What the table's DOM holds: lines mounted, `tr`s, the box's height and scroll position. */
const tableDom = () => page.evaluate(() => {
  const box = document.querySelector('#peak-table').closest('.value-scroll');
  const body = document.querySelector('#peak-table tbody');
  return {
    lines: body.querySelectorAll('tr.value-row, tr.group-row').length,
    trs: body.querySelectorAll('tr').length,
    total: Number(document.querySelector('#peak-table').dataset.lines),
    height: box.clientHeight,
    top: box.scrollTop,
  };
});

/** The DOM holds no more lines than are visible plus MARGIN on each side (and 2 spacers). */
async function assertBounded(what) {
  const d = await tableDom();
  const bound = Math.ceil(d.height / ROW_PX) + 1 + 2 * MARGIN;
  assert(d.height > 0 && d.lines <= bound && d.trs <= bound + 2,
    `${what}: ${d.lines} lines (${d.trs} tr) in the DOM for a ${d.height} px box; at most ${bound}`);
  return d;
}

/** Whether the selected line is in the table's box, below its sticky header. */
const selectedInView = () => page.evaluate(() => {
  const box = document.querySelector('#peak-table').closest('.value-scroll');
  const row = box.querySelector('tr.value-row.selected');
  if (!row) return false;
  const b = box.getBoundingClientRect();
  const h = box.querySelector('thead').getBoundingClientRect();
  const r = row.getBoundingClientRect();
  return r.top >= h.bottom - 1 && r.bottom <= b.bottom + 1;
});

/** Scrolls the table's box to `top` pixels and lets it mount the lines there. */
async function scrollTable(top) {
  await page.evaluate((t) => { document.querySelector('#peak-table').closest('.value-scroll').scrollTop = t; }, top);
  await settle();
}

/** Every line of the table, scrolling through it a screen at a time: [data-id, data-value]. */
async function allLines() {
  const seen = new Map();
  const { total, height } = await tableDom();
  for (let top = 0; ; top += Math.max(ROW_PX, height - 2 * ROW_PX)) {
    await scrollTable(top);
    const rows = await page.locator('#peak-table tbody tr.value-row').evaluateAll((trs) => trs.map((tr) => [tr.dataset.value, tr.dataset.id]));
    for (const [v, id] of rows) seen.set(v, id);
    if (top > total * ROW_PX) break;
  }
  await scrollTable(0);
  return [...seen.entries()];
}

/** Mounted lines sit where the spacer above says: one ROW_PX apart, the first after it. */
const linesInPlace = () => page.evaluate((row) => {
  const body = document.querySelector('#peak-table tbody');
  const trs = [...body.querySelectorAll('tr')];
  const spacer = trs[0].getBoundingClientRect();
  const lines = trs.slice(1, -1).map((tr) => tr.getBoundingClientRect().top);
  return lines.length === 0 || (Math.abs(lines[0] - spacer.bottom) <= 1 &&
    lines.every((y, i) => i === 0 || Math.abs(y - lines[i - 1] - row) <= 0.5));
}, ROW_PX);

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
