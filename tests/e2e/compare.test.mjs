// Browser test of the Compare view (src/ui/compare*): cpu_mlp_train compiled by jax 0.7.2
// (base) and 0.9.2 (new), the pair tests/diff.rs checks by hand.
//   node tests/e2e/compare.test.mjs http://127.0.0.1:PORT/   (tests/e2e/run.sh compare)
// Opens the base, picks the new one with "Compare with… files", and checks: both curves
// drawn on the chart (one polyline per side's colour) with a peak dot each, the delta shown
// equal to the core's (-6,148 B: the difference of the two peaks `bufscope summary --json`
// prints, tests/diff_svg.rs), the gone and new values of tests/diff.rs in their tables, a
// wheel zoom on one diagram moving the other to the same relative program position, a
// matched value selected on both sides (from a table row and from a block), the way back
// to the single view, and a drop onto the compare target. Screenshots go to
// tests/artifacts/compare-*.png.
import path from 'node:path';
import { artifacts, assert, dumpFile, fixture, open, run, test } from './harness.mjs';

const BASE = fixture('cpu/jax0.7.2/cpu_mlp_train.buffer-assignment.txt');
const NEW = fixture('cpu/jax0.9.2/cpu_mlp_train.buffer-assignment.txt');
const BASE_COLOR = '#3E7CC8';
const NEW_COLOR = '#E07A10';

const app = await open({ viewport: { width: 1300, height: 1000 } });
const { page } = app;
const shot = (name) => page.screenshot({ path: path.join(artifacts, `compare-${name}.png`), fullPage: true });
const frames = () => page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
const side = (s) => page.locator(`.compare-space[data-color="0"] .compare-side[data-side="${s}"]`);
const view = async (s) => (await side(s).locator('.diagram').getAttribute('data-view'))?.split(',').map(Number);
const steps = async (s) => Number(await side(s).getAttribute('data-steps'));
const selectedOn = (s) => side(s).locator('.diagram').getAttribute('data-selected');

async function waitForCompare() {
  await page.locator('.compare-space[data-color="0"] .compare-chart svg').waitFor({ timeout: 20000 });
  // Both diagrams drawn once (data-view is set by the first drawing).
  await page.waitForFunction(() => document.querySelectorAll('.compare-side .diagram[data-view]').length === 2,
    null, { timeout: 20000 });
}

/** Loads the app with the base open and compares it with the new one, as (1) does. */
async function compared() {
  await app.load();
  await app.pickModule([BASE], 'cpu_mlp_train');
  await page.locator('#compare-file-input').setInputFiles([NEW]);
  await waitForCompare();
}

test('(1) "Compare with…" opens the Compare view of the two compilations', async () => {
  await app.load();
  await app.pickModule([BASE], 'cpu_mlp_train');
  assert(await page.locator('#compare-file-input').count() === 1, 'no compare picker once a module is open');
  await page.locator('#compare-file-input').setInputFiles([NEW]);
  await waitForCompare();
  assert(await page.locator('.module .module-name').count() === 0, 'the single view is still on screen');
  const rule = await page.locator('.compare-rule').textContent();
  assert(rule === 'paired by name', `pairing: ${rule}`);
});

test('(2) both curves on one chart, each peak marked, on relative position', async () => {
  await compared();
  const svg = page.locator('.compare-space[data-color="0"] .compare-chart svg');
  for (const color of [BASE_COLOR, NEW_COLOR]) {
    const lines = await svg.locator(`polyline[stroke="${color}"]`).count();
    assert(lines === 1, `${lines} curves in ${color}`);
    const dots = await svg.locator(`circle[fill="${color}"]`).count();
    assert(dots === 1, `${dots} peak dots in ${color}`);
  }
  const text = await svg.textContent();
  assert(text.includes('relative program position'), 'the chart does not say its x axis is relative position');
  assert(text.includes('base 100 steps, new 97'), `steps: ${text}`);
});

test('(3) the delta shown is the core\'s: -6,148 B (-0.05%)', async () => {
  await compared();
  const delta = page.locator('.compare-space[data-color="0"] .compare-delta');
  assert(await delta.getAttribute('data-delta-bytes') === '-6148', `data-delta-bytes ${await delta.getAttribute('data-delta-bytes')}`);
  const words = await delta.textContent();
  assert(words.includes('-6,148 B (-0.05%)'), words);
  assert(words.includes('step 89 of 100') && words.includes('step 88 of 97'), words);
  const title = await page.locator('.compare-space[data-color="0"] .compare-chart svg').textContent();
  assert(title.includes('-6,148 B (-0.05%)'), 'the chart title has another delta');
});

test('(4) gone and new values at the peak, with their bytes; unchanged ones with their rule', async () => {
  await compared();
  const row = (cls, attr, name) => page.locator(`.compare-class.${cls} tr[${attr}="${name}"]`);
  const checks = [
    ['gone', 'data-base', 'reduce-window', '-8192'],
    ['gone', 'data-base', 'params_1___b__.1', '-2048'],
    ['new', 'data-new', 'multiply_add_fusion.15', '2048'],
    ['new', 'data-new', 'ynn_fusion.2', '2048'],
  ];
  for (const [cls, attr, name, delta] of checks) {
    const r = row(cls, attr, name);
    assert(await r.count() === 1, `no ${cls} row for ${name}`);
    assert(await r.getAttribute('data-delta') === delta, `${name}: ${await r.getAttribute('data-delta')}`);
  }
  // Gone first by size: reduce-window leads its table.
  const first = await page.locator('.compare-class.gone tbody tr').first().getAttribute('data-base');
  assert(first === 'reduce-window', `first gone row: ${first}`);
  await page.locator('.compare-class.unchanged summary').click();
  const u = row('unchanged', 'data-base', 'multiply_add_fusion.16');
  assert((await u.locator('.rule').textContent()) === 'op_name + shape', 'rule of multiply_add_fusion.16');
  const byOp = page.locator('.compare-group[data-group="op_name"] tbody tr').first();
  assert(await byOp.getAttribute('data-delta') === '-8196', `largest op_name change: ${await byOp.getAttribute('data-delta')}`);
});

test('(4b) each table of the comparison downloads as CSV, every row with its change', async () => {
  await compared();
  // The gone class: its rows are in the page (fewer than the 20 shown at first), so the CSV
  // is checked against them row by row; then the op_name grouping, against its first row.
  const gone = page.locator('.compare-space[data-color="0"] .compare-class.gone');
  const rows = await gone.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => [tr.dataset.base, tr.dataset.delta]));
  const csvOf = async (button) => {
    const [dl] = await Promise.all([page.waitForEvent('download', { timeout: 10000 }), button.click()]);
    const text = (await import('node:fs')).readFileSync(await dl.path(), 'utf8');
    assert(text.endsWith('\r\n'), 'CSV lines end with CRLF');
    return { name: dl.suggestedFilename(), lines: text.trimEnd().split('\r\n').map((l) => l.split(',')) };
  };
  const g = await csvOf(gone.locator('.compare-csv'));
  assert(/^cpu_mlp_train-vs-cpu_mlp_train-space0-gone\.csv$/.test(g.name), `file ${g.name}`);
  assert(g.lines[0][0] === 'change_bytes' && g.lines[0][3] === 'base_value', `header ${g.lines[0]}`);
  assert(g.lines.length === rows.length + 1, `${g.lines.length - 1} CSV rows for ${rows.length} table rows`);
  rows.forEach(([name, delta], i) => {
    assert(g.lines[i + 1][3] === name && g.lines[i + 1][0] === delta, `row ${i}: ${g.lines[i + 1]} vs ${name} ${delta}`);
  });
  const byOp = page.locator('.compare-space[data-color="0"] .compare-group[data-group="op_name"]');
  const o = await csvOf(byOp.locator('.compare-csv'));
  assert(o.lines[0][5] === 'op_name', `header ${o.lines[0]}`);
  assert(o.lines[1][0] === await byOp.locator('tbody tr').first().getAttribute('data-delta'), `first op_name row ${o.lines[1]}`);
  const summary = await byOp.locator('summary').textContent();
  const total = Number(summary.match(/of (\d+)/)[1]);
  assert(o.lines.length === total + 1, `${o.lines.length - 1} CSV rows, the table has ${total}`);
});

test('(5) a zoom on one diagram moves the other to the same relative position', async () => {
  await compared();
  const [nb, nn] = [await steps('base'), await steps('new')];
  assert(nb === 100 && nn === 97, `steps ${nb}, ${nn}`);
  const before = await view('base');
  const canvas = side('new').locator('canvas');
  await canvas.scrollIntoViewIfNeeded();
  const box = await canvas.boundingBox();
  // Over the block diagram (the lower part of the panel), right of its middle; the
  // comparison is a page that scrolls, so the wheel zooms once the diagram has focus.
  await side('new').locator('.diagram').focus();
  await page.mouse.move(box.x + box.width * 0.6, box.y + box.height * 0.7);
  await page.mouse.wheel(0, -400);
  await page.waitForFunction((b) => {
    const v = document.querySelector('.compare-side[data-side="base"] .diagram')?.getAttribute('data-view');
    return v && v !== b;
  }, before.join(','), { timeout: 5000 });
  await frames();
  const [vb, vn] = [await view('base'), await view('new')];
  assert(vn[1] - vn[0] < nn * 0.9, `the new diagram did not zoom: ${vn}`);
  const rel = (v, n) => [v[0] / n, v[1] / n];
  const [rb, rn] = [rel(vb, nb), rel(vn, nn)];
  assert(Math.abs(rb[0] - rn[0]) < 1e-6 && Math.abs(rb[1] - rn[1]) < 1e-6,
    `windows differ: base ${rb}, new ${rn}`);
  await shot('zoomed');
});

test('(6) a matched value selected on both sides, from a block and from a row', async () => {
  await compared();
  // The unchanged values listed (their table starts folded).
  await page.locator('.compare-class.unchanged summary').click();
  // The whole program (0 on the focused diagram resets it; the other follows).
  await side('base').locator('.diagram').focus();
  await page.keyboard.press('0');
  await page.waitForFunction(() => {
    const v = document.querySelector('.compare-side[data-side="new"] .diagram')?.getAttribute('data-view');
    return v && Number(v.split(',')[0]) === 0 && Number(v.split(',')[1]) === 97;
  }, null, { timeout: 5000 });
  await frames();
  // A click on a block selects its partner on the other side too.
  const p = await page.evaluate(() => window.__bufscope_block_px(0, 'opt_state_0__mu_0___w__.1'));
  assert(p, 'opt_state_0__mu_0___w__.1 has no block in view');
  await page.mouse.click(p.x, p.y);
  await frames();
  for (const s of ['base', 'new']) {
    const sel = await selectedOn(s);
    assert(sel === 'opt_state_0__mu_0___w__.1', `${s} selected ${sel} after a click on the block`);
  }
  // A row selects both sides and marks itself.
  await page.locator('.compare-class.unchanged tr[data-base="multiply_add_fusion.16"]').click();
  await frames();
  for (const s of ['base', 'new']) {
    const sel = await selectedOn(s);
    assert(sel === 'multiply_add_fusion.16', `${s} selected ${sel}`);
  }
  const line = await page.locator('.compare-selection').textContent();
  assert(line.includes('matched by op_name + shape'), line);
  assert(await page.locator('.compare-row.selected').count() === 1, 'the row is not marked');
  await shot('selected');
  // A gone value has no partner: the new side selects nothing.
  await page.locator('.compare-class.gone tr[data-base="reduce-window"]').click();
  await frames();
  assert(await selectedOn('base') === 'reduce-window', 'reduce-window not selected');
  assert(await selectedOn('new') === null, 'a gone value has a partner');
});

test('(7) back to the single view, and a drop onto the compare target', async () => {
  await compared();
  await page.locator('#compare-back').click();
  await page.locator('.module .module-name').waitFor({ timeout: 10000 });
  assert(await page.locator('.compare').count() === 0, 'the Compare view stayed');
  const f = dumpFile(NEW);
  await page.evaluate(({ name, b64 }) => {
    const dt = new DataTransfer();
    dt.items.add(new File([Uint8Array.from(atob(b64), (c) => c.charCodeAt(0))], name, { type: 'text/plain' }));
    const target = document.querySelector('#compare-drop');
    for (const type of ['dragenter', 'dragover', 'drop']) {
      target.dispatchEvent(new DragEvent(type, { bubbles: true, cancelable: true, dataTransfer: dt }));
    }
  }, { name: f.name, b64: Buffer.from(f.bytes).toString('base64') });
  await waitForCompare();
  await page.locator('.compare-space[data-color="0"] .compare-chart').scrollIntoViewIfNeeded();
  await page.screenshot({ path: path.join(artifacts, 'compare-chart.png') });
  app.noNewConsoleErrors(0);
});

await run(app);
