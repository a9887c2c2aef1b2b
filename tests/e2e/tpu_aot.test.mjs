// Browser tests of the workspace on the real TPU compilations of ../shared/dumps/tpu-aot
// (issue 26), at 1280×720: the bar's figures whole and its search's ▼ and count in view, a
// shape search, the three peaks with XProf's row before any capacity, the curve strip's
// labels apart on a 48 px strip or more, the could-not-be-read banner compact and closable
// (and absent for the dump's own files), a space tab's live count at the table's step, the
// idle table's rows selecting their value, and the URL hash's view kept through a read
// again in one pass (the values file given a line that fits no rule, which the page only
// finds after jumping over it).
//   node tests/e2e/tpu_aot.test.mjs http://127.0.0.1:PORT/
// Uses `window.__bufscope_curve_labels` and `__bufscope_step_px` (src/ui/canvas/hooks.rs).
// Without ../shared every test skips (and fails under CI=true, tests/e2e/run.sh).
// Screenshots go to tests/artifacts/tpu-aot-*.png; with UPDATE_SCREENSHOTS=1 also
// style/screenshots/tpu-scan-remat.png for the README.
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { SHARED, artifacts, assert, open, repo, run, skip, test } from './harness.mjs';

const W = 1280;
const H = 720;
const AOT = path.join(SHARED, 'dumps', 'tpu-aot');
const SCAN = path.join(AOT, 'jax0.12-libtpu0.0.50', 'tpu_v5e_lm_scan_remat');
const MAXTEXT = path.join(AOT, 'maxtext0.2.5', 'tpu_v5e-16_maxtext_llama3.1-8b_pdb1');
const PARTS = ['buffer-assignment.txt', 'buffer-assignment-values.txt', 'live-range.txt', 'memory-usage-report.txt'];
const have = existsSync(`${SCAN}.buffer-assignment.txt`) && existsSync(`${MAXTEXT}.buffer-assignment.txt`);
const need = () => { if (!have) skip(`needs ${AOT} (../shared beside the repo)`); };

/** A module's files as read by the page: `{name, bytes}`. */
const files = (stem) => PARTS.map((p) => ({ name: `${path.basename(stem)}.${p}`, bytes: readFileSync(`${stem}.${p}`) }));

const app = await open({ viewport: { width: W, height: H } });
const { page } = app;
/** What the page of the running test logs on its console. */
const logs = [];
app.onPage((p) => {
  logs.length = 0;
  p.on('console', (m) => logs.push(m.text()));
});
const shot = (name) => page.screenshot({ path: path.join(artifacts, `tpu-aot-${name}.png`) });
const box = (sel) => page.evaluate((sel) => {
  const e = document.querySelector(sel);
  if (!e) return null;
  const r = e.getBoundingClientRect();
  return { x0: r.left, x1: r.right, y0: r.top, y1: r.bottom, sw: e.scrollWidth, cw: e.clientWidth };
}, sel);
const apart = (a, b) => a.x1 <= b.x0 || b.x1 <= a.x0 || a.y1 <= b.y0 || b.y1 <= a.y0;

/** Loads the app and drops `stem`'s files: its module complete on screen. */
async function loaded(stem) {
  await app.load();
  await show(stem);
}

/** Drops `stem`'s files (and `extra`) and waits until its module is complete on screen. */
async function show(stem, extra = []) {
  await app.drop([...files(stem), ...extra]);
  const name = path.basename(stem);
  await page.waitForFunction((n) => document.querySelector('.module .module-name')?.textContent === n, name, { timeout: 60000 });
  await app.waitForDetails(60000);
  await page.locator('.module canvas').first().waitFor({ timeout: 10000 });
}

/** Opens the answers panel when it is closed, and scrolls the dock to it (its parts are
 *  made once in view). */
async function openAnswers() {
  const toggle = page.locator('#answers .answers-toggle');
  await toggle.scrollIntoViewIfNeeded();
  if ((await toggle.getAttribute('aria-expanded')) === 'false') await toggle.click();
  await page.locator('#answers').scrollIntoViewIfNeeded();
  await page.locator('#answers .answers-live').waitFor({ timeout: 10000 });
}

async function typeCapacity(text) {
  await page.locator('#capacity-size').fill(text);
  await page.locator('#capacity-size').press('Enter');
  await page.locator('#capacity-size').blur();
}

test('the bar keeps the module name and figures whole, the search ▼ and its count in view', async () => {
  need();
  await loaded(MAXTEXT);
  for (const sel of ['.workbar .module-name', '.workbar .module-figures']) {
    const b = await box(sel);
    assert(b && b.sw <= b.cw + 1, `${sel} is cut: ${JSON.stringify(b)}`);
    assert(b.x1 <= W && b.x0 >= 0, `${sel} is out of the window: ${JSON.stringify(b)}`);
  }
  const xla = await page.locator('.workbar .module-figures').textContent();
  assert(/XLA peak \d/.test(xla), `no XLA peak in "${xla}"`);
  await page.locator('#search').fill('while');
  await page.waitForFunction(() => document.querySelector('#search-status')?.dataset.searched === 'while', null, { timeout: 10000 });
  const next = await box('.workbar .search-step[aria-label="Next match"]');
  for (const sel of ['#open-button', '#bar-example', '.workbar .compare-control', '.workbar .page-actions']) {
    const other = await box(sel);
    if (other) assert(apart(next, other), `▼ ${JSON.stringify(next)} is under ${sel} ${JSON.stringify(other)}`);
  }
  assert(next.x1 <= W && next.y1 <= H, `▼ out of the window: ${JSON.stringify(next)}`);
  const count = await box('#search-status');
  assert(count && count.x1 - count.x0 > 20 && count.sw <= count.cw + 1 && count.x1 <= W, `the count is hidden or cut: ${JSON.stringify(count)}`);
  const text = await page.locator('#search-status .search-count').textContent();
  assert(/^1 of [\d,]+ matches in (op_name|name|shape)/.test(text), `the count says "${text}"`);
  await shot('01-bar');
});

test('a shape search (bf16\\[8,8,1024,1024\\]) finds while.43{2} and says it matched the shape', async () => {
  need();
  await loaded(SCAN);
  const pattern = 'bf16\\[8,8,1024,1024\\]';
  await page.locator('#search').fill(pattern);
  await page.waitForFunction((p) => document.querySelector('#search-status')?.dataset.searched === p, pattern, { timeout: 10000 });
  const n = Number(await page.locator('#search-status .search-count').getAttribute('data-count'));
  assert(n >= 7 && n < 100, `${n} matches`);
  const text = await page.locator('#search-status .search-count').textContent();
  assert(text.includes('shape'), `the count does not say the shape matched: "${text}"`);
  let found = false;
  for (let i = 0; i < n && !found; i++) {
    await page.locator('#search').press('Enter');
    found = await page.locator('#details .details-name', { hasText: 'while.43{2}' }).count() > 0;
  }
  assert(found, `while.43{2} is not among the ${n} matches`);
  await shot('02-shape-search');
});

test('three peaks lists XProf\'s row before any capacity is chosen', async () => {
  need();
  await loaded(SCAN);
  await openAnswers();
  assert((await page.locator('#capacity-size').inputValue()) === '', 'a capacity is set');
  const rows = page.locator('#answers-peaks tr.peak-figure');
  await page.waitForFunction(() => document.querySelectorAll('#answers-peaks tr.peak-figure').length === 3, null, { timeout: 5000 });
  const kinds = await rows.evaluateAll((r) => r.map((x) => x.dataset.peak));
  assert(kinds.join() === 'occupied,xla,xprof', `rows ${kinds}`);
  await page.waitForFunction(() => Number(document.querySelector('#answers-peaks tr[data-peak="xprof"]')?.dataset.bytes) > 0, null, { timeout: 10000 });
});

test('the curve strip is 48 px high or more and its labels (peak, capacity, verdict) never overlap', async () => {
  need();
  await loaded(MAXTEXT);
  await openAnswers();
  await typeCapacity('15.75GiB');
  await page.locator('#answers .capacity-verdict').waitFor({ timeout: 10000 });
  await page.waitForFunction(() => {
    const l = window.__bufscope_curve_labels?.(0);
    return l && l.labels.some((x) => x.text.startsWith('capacity'));
  }, null, { timeout: 30000 });
  const colors = await page.locator('.module figure.diagram canvas.space-canvas').evaluateAll((c) => c.map((x) => Number(x.dataset.color)));
  assert(colors.length >= 1, 'no diagram');
  for (const c of colors) {
    const l = await page.evaluate((c) => window.__bufscope_curve_labels(c), c);
    if (!l) continue;
    for (let i = 0; i < l.labels.length; i++) {
      for (const b of l.labels.slice(i + 1)) {
        const a = l.labels[i];
        const r = (x) => ({ x0: x.x, x1: x.x + x.w, y0: x.y, y1: x.y + x.h });
        assert(apart(r(a), r(b)), `space ${c}: "${a.text}" overlaps "${b.text}"`);
      }
    }
  }
  const hbm = await page.evaluate(() => window.__bufscope_curve_labels(0));
  assert(hbm.strip.h >= 48, `the HBM curve strip is ${hbm.strip.h} px high`);
  const texts = hbm.labels.map((x) => x.text);
  assert(texts.includes('capacity · 15.75GiB'), `the typed capacity is not shown as typed: ${texts}`);
  // MaxText's HBM peaks at 9.3 GiB: 6.4 GiB of headroom under 15.75 GiB.
  assert(texts.some((t) => t.endsWith(' of headroom') || t.startsWith('exceeds by ')) && texts.some((t) => t.startsWith('peak ')), `labels ${texts}`);
  const verdict = await page.locator('#answers .capacity-verdict').textContent();
  assert(verdict.includes('15.75GiB'), `the verdict "${verdict}"`);
  assert((await page.locator('#answers .capacity-verdict').getAttribute('data-capacity')) === String(15.75 * 2 ** 30), 'not the exact bytes');
  await shot('03-curve-labels');
  if (process.env.UPDATE_SCREENSHOTS === '1') {
    const out = path.join(repo, 'style', 'screenshots', 'tpu-maxtext-capacity.png');
    await page.mouse.move(1, 1);
    await page.screenshot({ path: out });
    console.log(`note: wrote ${path.relative(repo, out)} (${(statSync(out).size / 1024).toFixed(0)} KB)`);
  }
});

test('a space tab counts the values live at the table\'s step, not at the peak', async () => {
  need();
  await loaded(SCAN);
  const note = () => page.locator('.space-tab[data-color="0"] .tab-note').textContent();
  const atPeak = await note();
  const at = await page.evaluate(() => window.__bufscope_step_px(0, 3));
  await page.mouse.click(at.x, at.y);
  await page.waitForFunction(() => document.querySelector('.peak-summary')?.textContent.includes('at step 3'), null, { timeout: 5000 });
  const count = Number(await page.locator('.peak-summary').getAttribute('data-count'));
  const tab = await note();
  assert(tab.endsWith(`${count.toLocaleString('en-US')} live`), `tab "${tab}" at step 3, the table ${count} (at the peak "${atPeak}")`);
  assert(tab !== atPeak, `the tab still says "${atPeak}"`);
});

test('a row of the idle table selects its value and says what can be done to it', async () => {
  need();
  await loaded(SCAN);
  // At step 3, chosen on the curve.
  const at = await page.evaluate(() => window.__bufscope_step_px(0, 3));
  await page.mouse.click(at.x, at.y);
  await page.waitForFunction(() => document.querySelector('.peak-summary')?.textContent.includes('at step 3'), null, { timeout: 5000 });
  await openAnswers();
  const open = page.locator('#answers-idle-open');
  if (await open.count()) await open.click();
  const row = page.locator('#answers-idle tr.idle-row').first();
  await row.waitFor({ timeout: 20000 });
  const remedies = await page.locator('#answers-idle tr.idle-row').evaluateAll((r) => r.map((x) => x.dataset.remedy));
  assert(remedies.every((r) => r === 'offload only' || r === 'remat or offload'), `remedies ${remedies}`);
  const name = await row.getAttribute('data-name');
  await row.click();
  await page.locator('#details .details-name', { hasText: name }).waitFor({ timeout: 5000 });
  assert((await row.getAttribute('aria-selected')) === 'true', 'the row is not marked selected');
});

test('the could-not-be-read banner is one line over the dock and closes; a clean dump has none', async () => {
  need();
  await app.load();
  await show(SCAN, [{ name: 'notes.txt', bytes: Buffer.from('not a dump\n') }, { name: 'run.log', bytes: Buffer.from('nothing\n') }]);
  const banner = page.locator('.report .message.error');
  await banner.waitFor({ timeout: 5000 });
  const b = await box('.report .message.error');
  assert(b.y1 - b.y0 <= 40, `the banner is ${b.y1 - b.y0} px high`);
  await page.locator('.report .message.error .message-close').click();
  assert((await banner.count()) === 0, 'the banner did not close');
  await show(SCAN);
  assert((await page.locator('.report .message.error').count()) === 0, 'a banner for a clean dump');
});

test('the URL hash\'s view is restored through a read again in one pass', async () => {
  need();
  await loaded(SCAN);
  await page.locator('#search').fill('while\\.43');
  await page.waitForFunction(() => document.querySelector('#search-status')?.dataset.searched === 'while\\.43', null, { timeout: 10000 });
  await page.locator('#search').press('Enter');
  await page.locator('#details .details-name').waitFor({ timeout: 5000 });
  const value = (await page.locator('#details .details-name').textContent()).trim();
  await openAnswers();
  await typeCapacity('15.75GiB');
  await page.waitForFunction((v) => {
    const h = new URLSearchParams(location.hash.slice(1));
    return h.get('value') === v && h.get('capacity') && h.get('search') === 'while\\.43';
  }, value, { timeout: 5000 });
  const saved = await page.evaluate(() => location.hash);
  // The values file with one line that fits no rule, inside a `Used values` body.
  const [ba, values, ...rest] = files(SCAN);
  const lines = values.bytes.toString('utf8').split('\n');
  const uses = lines.map((l, i) => (l.trim() === 'uses:' ? i : -1)).filter((i) => i >= 0);
  lines.splice(uses[uses.length >> 1] + 1, 0, '  ??? this line fits no rule');
  const damaged = { name: values.name, bytes: Buffer.from(lines.join('\n')) };
  await page.reload({ waitUntil: 'load' });
  await page.locator('#file-input').waitFor({ state: 'attached', timeout: 20000 });
  assert((await page.evaluate(() => location.hash)) === saved, 'the hash changed before a module opened');
  logs.length = 0;
  await app.drop([ba, damaged, ...rest]);
  await page.waitForFunction(() => document.querySelector('.module .module-name')?.textContent === 'tpu_v5e_lm_scan_remat', null, { timeout: 60000 });
  // The read again: the page says so on its console.
  for (let i = 0; i < 300 && !logs.some((l) => l.includes('reading again in one pass')); i++) await page.waitForTimeout(100);
  assert(logs.some((l) => l.includes('reading again in one pass')), `no read again: ${logs.slice(0, 5).join(' | ')}`);
  await app.waitForDetails(60000);
  await page.locator('#details .details-name', { hasText: value }).waitFor({ timeout: 10000 });
  assert((await page.locator('#search').inputValue()) === 'while\\.43', 'the search is not restored');
  await openAnswers();
  assert((await page.locator('#capacity-size').inputValue()) === '15.75GiB', 'the capacity is not restored');
  const h = new URLSearchParams((await page.evaluate(() => location.hash)).slice(1));
  assert(h.get('value') === value, `the hash fell back to ${await page.evaluate(() => location.hash)}`);
  await shot('04-restored');
});

await run(app);
