// Browser tests of the exports (the Export menu and the tables' CSV buttons, src/ui/export.rs)
// and of the keys a speedscope or Perfetto user expects, at 1280×720, in headless Chromium.
//   node tests/e2e/export.test.mjs http://127.0.0.1:PORT/
// Each download is caught as the browser saves it and read back here: the PNG's signature
// and size, the SVG parsed by the browser's own XML parser, the CSV read by a reader written
// here from RFC 4180, the JSON by JSON.parse. Row counts come from the table's own count
// (`.peak-summary[data-count]`) and from the dump text. The last line is `N passed, M failed`.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { SHARED, artifacts, assert, fixture, open, run, skip, test } from './harness.mjs';

const TPU = fixture('tpu/000_0cb419b3147a3cb6.txt');
const TPU_MODULE = '000_0cb419b3147a3cb6';
const BIG = path.join(SHARED, 'dumps/cpu/jax0.6.2/cpu_deep_unrolled_500.buffer-assignment.txt');
const VALUE_COLUMNS = ['value', 'id', 'size_bytes', 'logical_bytes', 'padding_bytes', 'shape', 'op_name', 'source', 'kind', 'path'];

const app = await open({ viewport: { width: 1280, height: 720 } });
const { page, consoleErrors } = app;

/** Reads CSV text as RFC 4180 defines it (CRLF records, quoted fields with `""`). */
function parseCsv(text) {
  const records = [];
  let record = [];
  let i = 0;
  while (i < text.length) {
    let f = '';
    if (text[i] === '"') {
      i++;
      for (;;) {
        if (i >= text.length) throw new Error('unterminated quoted field');
        if (text[i] === '"' && text[i + 1] === '"') { f += '"'; i += 2; }
        else if (text[i] === '"') { i++; break; }
        else f += text[i++];
      }
    } else {
      while (i < text.length && text[i] !== ',' && text[i] !== '\r') {
        if (text[i] === '"' || text[i] === '\n') throw new Error(`bare ${JSON.stringify(text[i])} at ${i}`);
        f += text[i++];
      }
    }
    record.push(f);
    if (text[i] === ',') i++;
    else if (text[i] === '\r' && text[i + 1] === '\n') { i += 2; records.push(record); record = []; }
    else throw new Error(`after a field at ${i}: ${JSON.stringify(text.slice(i, i + 10))}`);
  }
  if (record.length) throw new Error('last record without CRLF');
  return records;
}

/** Clicks `selector` and returns the download it starts: its suggested name and bytes. */
async function download(selector, timeout = 30000) {
  const [dl] = await Promise.all([page.waitForEvent('download', { timeout }), page.locator(selector).click()]);
  const file = await dl.path();
  return { name: dl.suggestedFilename(), bytes: readFileSync(file) };
}

/** Opens the Export menu and clicks its item `selector`; the download. */
async function fromMenu(selector) {
  if (!(await page.locator('.export-menu').evaluate((d) => d.open))) await page.locator('#export-menu').click();
  return download(selector);
}

/** The memory space with the highest peak (what the tables show first) and its canvas size. */
async function fullest() {
  return page.evaluate(() => {
    const rows = [...document.querySelectorAll('.module table.spaces tr[data-color]')];
    const best = rows.reduce((a, r) => (Number(r.querySelector('.peak-bytes').dataset.bytes) > Number(a.querySelector('.peak-bytes').dataset.bytes) ? r : a));
    const color = best.dataset.color;
    const c = document.querySelector(`canvas.space-canvas[data-color="${color}"]`);
    return { color, width: c.width, height: c.height, cssWidth: c.clientWidth, cssHeight: c.clientHeight };
  });
}

const blur = () => page.evaluate(() => document.activeElement?.blur());
const view = (color) => page.locator(`figure.diagram[data-color="${color}"]`).getAttribute('data-view')
  .then((v) => v.split(',').map(Number));

/** Loads the app and opens the TPU module, its live-set table filled. */
async function tpuOpen() {
  await app.load();
  await app.pickModule(TPU, TPU_MODULE);
  await page.locator('#peak-table tbody tr.value-row').first().waitFor({ timeout: 10000 });
}

/** Opens the answers panel (closed when a module opens). */
async function openAnswers() {
  await app.openAnswers();
  await page.locator('#answers .answers-live').waitFor({ timeout: 10000 });
}

test('(x1) the module opens at 1280×720 with an Export menu', async () => {
  await tpuOpen();
  await page.locator('#export-menu').click();
  await page.locator('.export-items').waitFor({ state: 'visible' });
  const spaces = await page.locator('.export-space').count();
  const header = await page.locator('.module table.spaces tr[data-color]').count();
  assert(spaces === header && spaces > 0, `${spaces} spaces in the menu, ${header} in the header`);
  await page.screenshot({ path: path.join(artifacts, 'export-menu.png') });
  await page.locator('#export-menu').click();
});

test('(x2) a diagram as PNG: the signature and the canvas size', async () => {
  await tpuOpen();
  const before = consoleErrors.length;
  const s = await fullest();
  const { name, bytes } = await fromMenu(`#export-png-${s.color}`);
  assert(name.startsWith(TPU_MODULE) && name.endsWith('.png'), `file name ${name}`);
  const signature = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
  assert(signature.every((b, i) => bytes[i] === b), `not a PNG: ${bytes.subarray(0, 8).toString('hex')}`);
  assert(bytes.toString('latin1', 12, 16) === 'IHDR', 'no IHDR first');
  const [w, h] = [bytes.readUInt32BE(16), bytes.readUInt32BE(20)];
  assert(w === s.width && h === s.height, `PNG ${w}×${h}, canvas ${s.width}×${s.height}`);
  app.noNewConsoleErrors(before);
});

test('(x3) a diagram as SVG: it parses, has the space title and the canvas size', async () => {
  await tpuOpen();
  const before = consoleErrors.length;
  const s = await fullest();
  const { name, bytes } = await fromMenu(`#export-svg-${s.color}`);
  assert(name.startsWith(TPU_MODULE) && name.endsWith('.svg'), `file name ${name}`);
  const title = (await page.locator(`.space-tab[data-color="${s.color}"] .tab-name`).textContent()).trim();
  // Parsed by the browser in a blank page of its own (the app's page would apply its
  // style-src policy to the SVG's style attributes and log each one).
  const blank = await app.context.newPage();
  const parsed = await blank.evaluate((text) => {
    const doc = new DOMParser().parseFromString(text, 'image/svg+xml');
    const root = doc.documentElement;
    return {
      error: doc.querySelector('parsererror')?.textContent ?? null,
      tag: root.tagName,
      width: root.getAttribute('width'),
      height: root.getAttribute('height'),
      texts: [...doc.querySelectorAll('text')].map((t) => t.textContent.trim()),
    };
  }, bytes.toString('utf8'));
  await blank.close();
  assert(parsed.error === null, `the SVG does not parse: ${parsed.error}`);
  assert(parsed.tag === 'svg', `root ${parsed.tag}`);
  assert(Number(parsed.width) === Math.max(320, s.cssWidth) && Number(parsed.height) === Math.max(200, s.cssHeight),
    `SVG ${parsed.width}×${parsed.height}, canvas ${s.cssWidth}×${s.cssHeight} CSS px`);
  assert(parsed.texts.includes(title), `no "${title}" among ${parsed.texts.slice(0, 5).join(' | ')}`);
  app.noNewConsoleErrors(before);
});

test('(x4) the live-set table as CSV: every row, in the table\'s order, read back', async () => {
  await tpuOpen();
  const before = consoleErrors.length;
  // Sorted by name, ascending.
  await page.locator('#peak-table th[data-col="name"] button').click();
  await page.waitForFunction(() => document.querySelector('#peak-table th[data-col="name"]').getAttribute('aria-sort') !== 'none');
  const count = Number(await page.locator('.peak-summary').getAttribute('data-count'));
  const { name, bytes } = await fromMenu('#export-csv');
  assert(/-live-step\d+/.test(name) && name.endsWith('.csv'), `file name ${name}`);
  const rows = parseCsv(bytes.toString('utf8'));
  assert(JSON.stringify(rows[0]) === JSON.stringify(VALUE_COLUMNS), `header ${rows[0]}`);
  assert(rows.length - 1 === count, `${rows.length - 1} rows, the table counts ${count}`);
  const shown = await page.locator('#peak-table tbody tr.value-row td.name').evaluateAll((cs) => cs.map((c) => c.title));
  for (let i = 0; i < Math.min(5, shown.length); i++) {
    assert(rows[i + 1][0] === shown[i], `row ${i}: ${rows[i + 1][0]} in the CSV, ${shown[i]} in the table`);
  }
  // Each row is a value of the dump with the size the dump prints.
  const text = readFileSync(TPU, 'utf8');
  for (const r of rows.slice(1)) {
    const [instr, index] = r[0].match(/^([^{]+)(\{.*\})?$/).slice(1);
    const re = new RegExp(`value: <${r[1]} ${instr.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}${(index ?? '').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?: @\\d+)?> \\(size=${r[2]},`);
    assert(re.test(text), `no value ${r[0]} of id ${r[1]} and size ${r[2]} in the dump`);
  }
  // Grouped by op_name: a line per group, their counts add to the live values.
  await page.locator('#group-op').check();
  const grouped = parseCsv((await download('#live-csv')).bytes.toString('utf8'));
  assert(grouped[0][0] === 'op_name' && grouped[0][1] === 'values', `header ${grouped[0]}`);
  const sum = grouped.slice(1).reduce((s, r) => s + Number(r[1]), 0);
  assert(sum === count, `the groups hold ${sum} values, ${count} are live`);
  const groupRows = await page.locator('#peak-table tr.group-row').count();
  assert(grouped.length - 1 === groupRows, `${grouped.length - 1} groups in the CSV, ${groupRows} in the table`);
  await page.locator('#group-op').uncheck();
  app.noNewConsoleErrors(before);
});

test('(x5) the answers\' groupings as CSV add up to the live bytes', async () => {
  await tpuOpen();
  const before = consoleErrors.length;
  await openAnswers();
  const live = Number(await page.locator('#answers .answers-live').getAttribute('data-bytes'));
  const source = parseCsv((await download('#answers-source-csv')).bytes.toString('utf8'));
  assert(source[0].join() === 'file,line,bytes,percent_live,running_bytes,values,function', `header ${source[0]}`);
  const sourceBytes = source.slice(1).reduce((s, r) => s + Number(r[2]), 0);
  assert(sourceBytes === live, `source lines add to ${sourceBytes}, ${live} live`);
  const cats = parseCsv((await download('#answers-categories-csv')).bytes.toString('utf8'));
  const catBytes = cats.slice(1).reduce((s, r) => s + Number(r[1]), 0);
  assert(catBytes === live, `categories add to ${catBytes}, ${live} live`);
  const catRows = await page.locator('#answers-categories tr.category-row').count();
  assert(cats.length - 1 === catRows, `${cats.length - 1} categories in the CSV, ${catRows} in the table`);
  app.noNewConsoleErrors(before);
});

test('(x6) the summary as JSON: the module\'s name and each space\'s peak', async () => {
  await tpuOpen();
  const before = consoleErrors.length;
  const { name, bytes } = await fromMenu('#export-json');
  assert(name === `${TPU_MODULE}-summary.json`, `file name ${name}`);
  const json = JSON.parse(bytes.toString('utf8'));
  assert(json.modules.length === 1 && json.modules[0].name === TPU_MODULE, `modules ${json.modules.map((m) => m.name)}`);
  const peaks = await page.locator('.module table.spaces tr[data-color]').evaluateAll((rs) =>
    rs.map((r) => [Number(r.dataset.color), Number(r.querySelector('.peak-bytes').dataset.bytes)]));
  for (const [color, peak] of peaks) {
    const s = json.modules[0].memory_spaces.find((m) => m.color === color);
    assert(s && s.peak_live_bytes === peak, `space ${color}: JSON ${s?.peak_live_bytes}, page ${peak}`);
  }
  assert(json.modules[0].total_bytes === Number(await page.locator('.module .total-bytes').getAttribute('data-bytes')), 'total bytes');
  app.noNewConsoleErrors(before);
});

test('(x7) ? lists the keys; W/S/A/D move the view window; / goes to the search', async () => {
  await tpuOpen();
  const before = consoleErrors.length;
  await blur();
  await page.keyboard.press('?');
  await page.locator('.keys-overlay').waitFor({ state: 'visible' });
  const listed = await page.locator('.keys-panel').textContent();
  for (const words of ['zoom in', 'zoom out', 'pan in time', 'reset the view', 'search values', 'next / previous peak', 'unpin']) {
    assert(listed.includes(words), `the keys list has no "${words}"`);
  }
  const labels = await page.locator('.keys-panel kbd').allTextContents();
  for (const k of ['/', ']', '[']) assert(labels.some((l) => l.includes(k)), `no ${k} among ${labels.join(' | ')}`);
  await page.screenshot({ path: path.join(artifacts, 'export-keys.png') });
  await page.keyboard.press('Escape');
  await page.locator('.keys-overlay').waitFor({ state: 'detached' });

  const { color } = await fullest();
  const fig = page.locator(`figure.diagram[data-color="${color}"]`);
  await fig.scrollIntoViewIfNeeded();
  // The keys go to the diagram last pointed at.
  const box = await page.locator(`canvas.space-canvas[data-color="${color}"]`).boundingBox();
  await page.mouse.move(box.x + box.width / 2, box.y + box.height * 0.6);
  await blur();
  const changed = async (key, check) => {
    const was = await view(color);
    await page.keyboard.press(key);
    await page.waitForFunction(([c, was]) => document.querySelector(`figure.diagram[data-color="${c}"]`).getAttribute('data-view') !== was,
      [color, was.join(',')], { timeout: 5000 });
    const now = await view(color);
    assert(check(was, now), `${key}: ${was} → ${now}`);
  };
  const width = (v) => v[1] - v[0];
  await changed('w', (a, b) => width(b) < width(a));
  await changed('w', (a, b) => width(b) < width(a));
  await changed('d', (a, b) => b[0] > a[0] && Math.abs(width(b) - width(a)) < 1e-6 * width(a) + 1e-9);
  await changed('a', (a, b) => b[0] < a[0]);
  await changed('s', (a, b) => width(b) > width(a));
  await changed('0', (a, b) => width(b) > width(a));

  await page.keyboard.press('/');
  const active = await page.evaluate(() => [document.activeElement?.id, document.activeElement?.value]);
  assert(active[0] === 'search' && !active[1].includes('/'), `after /: focus on #${active[0]}, value "${active[1]}"`);
  await blur();
  app.noNewConsoleErrors(before);
});

test('(x8) ] and [ walk the peaks the answers list', async () => {
  await tpuOpen();
  const before = consoleErrors.length;
  await openAnswers();
  const { color } = await fullest();
  // The answers are about the fullest space too; point at its diagram so the keys go there.
  const box = await page.locator(`canvas.space-canvas[data-color="${color}"]`).boundingBox();
  await page.mouse.move(box.x + box.width / 2, box.y + box.height * 0.6);
  const peaks = await page.locator('#answers-peaks-list button.answers-peak').evaluateAll((bs) => bs.map((b) => Number(b.dataset.step)));
  assert(peaks.length > 0, 'no peak listed');
  const last = Number(await page.locator('#answers-step').getAttribute('max'));
  const step = () => page.locator('#answers .answers-live').getAttribute('data-step').then(Number);
  const choose = async (s) => {
    await page.locator('#answers-step').fill(String(s));
    await page.locator('#answers-step').dispatchEvent('change');
    await page.waitForFunction((s) => document.querySelector('#answers .answers-live').getAttribute('data-step') === String(s), s, { timeout: 5000 });
    await blur();
  };
  const press = async (key, expected) => {
    const was = await step();
    await page.keyboard.press(key);
    if (expected === undefined) {
      await page.waitForTimeout(300);
      assert((await step()) === was, `${key} at ${was} moved to ${await step()}; peaks ${peaks}`);
    } else {
      await page.waitForFunction((s) => document.querySelector('#answers .answers-live').getAttribute('data-step') === String(s), expected, { timeout: 5000 })
        .catch(async () => { throw new Error(`${key} at ${was}: step ${await step()}, ${expected} expected; peaks ${peaks}`); });
    }
  };
  // From the start of the program, ] goes through every peak in order, then stays.
  await choose(0);
  for (const p of peaks.filter((p) => p > 0)) await press(']', p);
  await press(']', undefined);
  // From the end, [ goes back through them.
  await choose(last);
  for (const p of peaks.filter((p) => p < last).reverse()) await press('[', p);
  await press('[', undefined);
  // n and N do the same.
  await choose(0);
  await press('n', peaks.find((p) => p > 0));
  await choose(last);
  await press('N', peaks.filter((p) => p < last).pop());
  console.log(`note: (x8) peaks at ${peaks.join(', ')} of ${last + 1} steps`);
  await page.locator('#answers-own-peak').click();
  await page.locator('#answers .answers-toggle').click();
  await blur();
  app.noNewConsoleErrors(before);
});

test('(x9) the 94 MB dump (needs ../shared): its live-set CSV of every row downloads', async () => {
  if (!existsSync(BIG)) skip(`needs ${BIG} (../shared beside the repo)`);
  await app.load();
  const before = consoleErrors.length;
  await page.locator('#file-input').setInputFiles(BIG);
  await page.waitForFunction(() => document.querySelector('.module .module-name')?.textContent === 'cpu_deep_unrolled_500', null, { timeout: 180000 });
  await page.locator('#peak-table tbody tr.value-row').first().waitFor({ timeout: 60000 });
  const count = Number(await page.locator('.peak-summary').getAttribute('data-count'));
  const t = Date.now();
  const { bytes } = await download('#live-csv', 60000);
  const ms = Date.now() - t;
  const rows = parseCsv(bytes.toString('utf8'));
  assert(rows.length - 1 === count, `${rows.length - 1} rows, the table counts ${count}`);
  assert(count === 25066, `${count} values live at the peak, 25,066 expected`);
  const domRows = await page.locator('#peak-table tbody tr.value-row').count();
  console.log(`note: (x9) ${count} rows, ${(bytes.length / 1e6).toFixed(1)} MB of CSV in ${ms} ms (click to file); ${domRows} rows in the DOM`);
  assert(ms < 15000, `the CSV took ${ms} ms`);
  app.noNewConsoleErrors(before);
});

await run(app);
