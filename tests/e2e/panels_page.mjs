// The panels' browser tests' own pieces, shared by tests/e2e/panels.test.mjs and
// panels_big.test.mjs (not a test file itself): an analysis of the dump text independent of
// the app's, and the helpers that read and drive the live table of one page.
import { assert, search as searchFor } from './harness.mjs';

// ---------------------------------------------------------------- an independent analysis

/**
 * Reads the parts of a dump the panels show: allocations, values (in file order), live
 * ranges, op_names, and per memory space the occupied-bytes peak (union of the byte ranges
 * of the live values, allocations laid out in index order) and the values live there.
 */
export function analyse(texts, { peaks = true } = {}) {
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
export function searchIn(values, pattern) {
  const re = new RegExp(pattern, /\p{Lu}/u.test(pattern) ? '' : 'i');
  return values.filter((v) => re.test(v.name) || (v.opName !== '' && re.test(v.opName)));
}

export const sameSet = (a, b) => a.length === b.length && [...a].sort().join('\n') === [...b].sort().join('\n');

// The table is a virtualised list: lines of ROW_PX pixels, only those scrolled to and MARGIN
// more on each side in the DOM (src/ui/panels/live_table/list.rs), plus two spacer rows.
export const ROW_PX = 26;
export const MARGIN = 40;

/** The helpers that open dumps in `app`'s page and read and drive its live table. */
export function tablePage(app) {
  const { page } = app;

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

  return { open, tab, rowNames, showSpace, search, statusText, settle, tableDom, assertBounded, selectedInView, scrollTable, allLines, linesInPlace };
}
