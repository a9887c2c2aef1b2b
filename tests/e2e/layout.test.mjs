// Browser tests of the page's layout (issue 34, point 9): at 1280×720 with an out-of-memory
// message open beside its dump, the answers open and the first-time hint shown, and in a
// 760 × 600 notebook cell (an iframe in a taller page, as `bufscope.show()` embeds the page),
// the HBM diagram keeps at least 120 px on screen and the hint covers no diagram; in the
// notebook a wheel over the view scrolls on until the view is clicked, then zooms; and the
// device picker says what a TPU's name means (the HBM XLA can use), a typed size as typed.
//   node tests/e2e/layout.test.mjs http://127.0.0.1:PORT/
// The OOM case needs ../shared (tpu-aot/jax0.12-libtpu0.0.50/tpu_v5e_lm_scan_remat_OOM.*):
// skipped without it. Screenshots: tests/artifacts/layout-*.png.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { SHARED, TPU, artifacts, assert, base, dumpFile, open, run, skip, test } from './harness.mjs';

const app = await open({ viewport: { width: 1280, height: 720 } });
const { page } = app;
const DIR = path.join(SHARED, 'dumps', 'tpu-aot', 'jax0.12-libtpu0.0.50');
const STEM = 'tpu_v5e_lm_scan_remat_OOM';
const PARTS = ['buffer-assignment.txt', 'buffer-assignment-values.txt', 'live-range.txt', 'memory-usage-report.txt', 'error.txt'];
/** The least of the HBM diagram on screen, in CSS pixels (the figure). */
const MIN = 120;
const shot = (name) => path.join(artifacts, `layout-${name}.png`);
const frames = (t) => t.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));

function needOom() {
  if (!existsSync(path.join(DIR, `${STEM}.error.txt`))) skip('../shared/dumps/tpu-aot/jax0.12-libtpu0.0.50');
}

/** In `target` (a page or a frame) as it is scrolled now: each diagram's canvas, its box and
 *  how many CSS pixels of it are on screen (its box cut by the window and by every
 *  ancestor that clips, less the rows where something else is on top of it at its middle,
 *  such as a sticky bar), and the first-time hint's box (null when none is shown). */
function boxes(target) {
  return target.evaluate(() => {
    const cut = (a, b) => ({
      top: Math.max(a.top, b.top), bottom: Math.min(a.bottom, b.bottom),
      left: Math.max(a.left, b.left), right: Math.min(a.right, b.right),
    });
    const box = (el) => { const r = el.getBoundingClientRect(); return { top: r.top, bottom: r.bottom, left: r.left, right: r.right }; };
    const canvases = [...document.querySelectorAll('canvas.space-canvas')].map((c) => {
      let seen = cut(box(c), { top: 0, left: 0, bottom: innerHeight, right: innerWidth });
      for (let el = c.parentElement; el; el = el.parentElement) {
        const s = getComputedStyle(el);
        if (s.overflowY !== 'visible' || s.overflowX !== 'visible') seen = cut(seen, box(el));
      }
      const mid = (seen.left + seen.right) / 2;
      let shown = 0;
      for (let y = Math.ceil(seen.top); y < seen.bottom; y++) if (document.elementFromPoint(mid, y) === c) shown++;
      return { color: Number(c.dataset.color), box: box(c), shown };
    });
    const hint = document.querySelector('.first-hint');
    return { canvases, hint: hint ? box(hint) : null };
  });
}

const overlap = (a, b) => a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;

/** Checks the figures of the issue in `target`: HBM on screen ≥ MIN, the hint (shown) over
 *  no diagram; returns the HBM diagram's pixels on screen. */
async function checkRoom(target, where) {
  const { canvases, hint } = await boxes(target);
  const hbm = canvases.find((c) => c.color === 0);
  assert(hbm, `${where}: no HBM diagram`);
  assert(hbm.shown >= MIN, `${where}: ${hbm.shown.toFixed(0)} px of the HBM diagram on screen (box ${JSON.stringify(hbm.box)})`);
  assert(hint, `${where}: no first-time hint`);
  for (const c of canvases) {
    assert(!overlap(hint, c.box), `${where}: the hint ${JSON.stringify(hint)} covers diagram ${c.color} ${JSON.stringify(c.box)}`);
  }
  return hbm.shown;
}

/** Drops the OOM run's files on `target` and waits for its module, the message and the hint. */
async function dropOom(target) {
  await app.drop(PARTS.map((p) => dumpFile(path.join(DIR, `${STEM}.${p}`))), target);
  await target.waitForFunction((n) => document.querySelector('.files-line')?.textContent === `Read ${n} files`
    && !document.querySelector('#details-status'), PARTS.length, { timeout: 60000 });
  await target.locator('.oom .oom-message').first().waitFor({ timeout: 10000 });
  await target.locator('canvas.space-canvas[data-color="0"]').waitFor({ timeout: 20000 });
  await target.locator('.first-hint').waitFor({ timeout: 5000 });
  await frames(target);
}

test('1280×720, the OOM message open, the answers open, the hint: HBM keeps ≥ 120 px and the hint covers no diagram', async () => {
  needOom();
  const before = app.consoleErrors.length;
  await app.load();
  await dropOom(page);
  const first = await checkRoom(page, '1280×720 with the OOM message');
  // The OOM message is on screen too (below the work area), not pushed off it.
  const oom = await page.locator('.oom').boundingBox();
  assert(oom && oom.y < 720 && oom.height >= 80, `the OOM message at ${JSON.stringify(oom)}`);
  // The page itself does not scroll: the one screen, each part scrolling in itself.
  const scrolls = await page.evaluate(() => document.documentElement.scrollHeight > document.documentElement.clientHeight + 1);
  assert(!scrolls, 'the page scrolls at 1280×720');
  await page.screenshot({ path: shot('1280x720-oom') });
  // The answers open in the dock as well.
  await app.openAnswers();
  await frames(page);
  await checkRoom(page, '1280×720 with the OOM message and the answers');
  console.log(`  note: ${first.toFixed(0)} px of the HBM diagram on screen at 1280×720 with the OOM message and the hint`);
  app.noNewConsoleErrors(before);
});

/** A notebook: cells above and below, and the page in a 760 × 600 iframe as `show()` puts it
 *  (`width: 100%` of a 760 px cell; the height `show(height=)` gives). Returns its frame. */
async function notebook() {
  await page.setViewportSize({ width: 900, height: 800 });
  // The notebook page is served at an address of the app's own origin (a route of the
  // test's), so the iframe loads as a notebook's output frame does.
  const html = `<!doctype html><body style="margin:0;font:14px sans-serif">
    <div style="height:60px;padding:8px">In [1]: bufscope.show(dump)</div>
    <div style="width:760px"><iframe id="cell" src="${base}" title="bufscope"
      style="width:100%;height:600px;border:1px solid #8884;display:block"></iframe></div>
    <div style="height:1600px;padding:8px">In [2]: …</div></body>`;
  const at = new URL('__notebook.html', base).href;
  await page.route(at, (r) => r.fulfill({ status: 200, contentType: 'text/html', body: html }));
  await page.goto(at, { waitUntil: 'load' });
  const handle = await page.locator('#cell').elementHandle();
  const frame = await handle.contentFrame();
  await frame.waitForLoadState('load');
  await frame.locator('#file-input').waitFor({ state: 'attached', timeout: 20000 });
  return frame;
}

test('a 760 × 600 notebook cell: HBM keeps ≥ 120 px, the hint covers no diagram', async () => {
  needOom();
  const before = app.consoleErrors.length;
  const frame = await notebook();
  await dropOom(frame);
  const shown = await checkRoom(frame, 'the 760 × 600 cell');
  // In a notebook the hint says that the wheel needs a click first.
  const hint = await frame.locator('.first-hint').textContent();
  assert(hint.startsWith('Click a diagram, then wheel to zoom'), `hint "${hint}"`);
  await page.screenshot({ path: shot('760x600-notebook') });
  console.log(`  note: ${shown.toFixed(0)} px of the HBM diagram on screen in the 760 × 600 cell`);
  app.noNewConsoleErrors(before);
});

test('in a notebook the wheel over the view scrolls the notebook until the view is clicked, then zooms', async () => {
  const frame = await notebook();
  await frame.locator('#file-input').setInputFiles(TPU);
  const figure = frame.locator('.diagram[data-color="0"]');
  await figure.waitFor({ timeout: 20000 });
  await frames(frame);
  const view = () => figure.getAttribute('data-view');
  const scrolled = async () => (await page.evaluate(() => scrollY)) + (await frame.evaluate(() => scrollY));
  const centre = async () => {
    const b = await frame.locator('canvas.space-canvas[data-color="0"]').boundingBox();
    return [b.x + b.width * 0.5, b.y + b.height * 0.75];
  };
  const v0 = await view();
  const s0 = await scrolled();
  let [x, y] = await centre();
  await page.mouse.move(x, y);
  await page.mouse.wheel(0, 200);
  await page.waitForFunction(() => true);
  await frames(frame);
  const s1 = await scrolled();
  assert(s1 > s0, `the wheel over the view did not scroll (${s0} → ${s1})`);
  assert((await view()) === v0, `the view zoomed without focus: ${v0} → ${await view()}`);

  // A click gives the view focus: the wheel is the diagram's now, the notebook stays.
  // The diagram is what is under the pointer where it was scrolled to (no bar over it).
  [x, y] = await centre();
  const cell = await page.locator('#cell').boundingBox();
  const under = await frame.evaluate(([fx, fy]) => {
    const e = document.elementFromPoint(fx, fy);
    return e?.matches('canvas.space-canvas[data-color="0"]') ? 'the diagram' : `${e?.tagName}.${e?.className}#${e?.id}`;
  }, [x - cell.x - 1, y - cell.y - 1]);
  assert(under === 'the diagram', `scrolled ${s1 - s0} px, the diagram is under ${under}`);
  await page.mouse.click(x, y);
  const act = await frame.evaluate(() => { const a = document.activeElement; return a ? `${a.tagName}.${a.className}#${a.id} hasFocus=${document.hasFocus()}` : 'none'; });
  assert(await figure.evaluate((f) => document.activeElement === f), `a click did not focus the diagram: active ${act}`);
  await page.mouse.wheel(0, -200);
  await frame.waitForFunction((v) => document.querySelector('.diagram[data-color="0"]')?.dataset.view !== v, v0, { timeout: 5000 });
  assert((await scrolled()) === s1, `the page scrolled while the focused view zoomed (${s1} → ${await scrolled()})`);
});

test('the device picker says a TPU name is the HBM XLA can use; a typed size is shown as typed, also after a reload', async () => {
  await app.load();
  await app.pick(TPU);
  await page.locator('canvas.space-canvas[data-color="0"]').waitFor({ timeout: 20000 });
  await app.openAnswers();
  await page.locator('#answers-space').selectOption('0');
  const option = await page.locator('#capacity-device option[value="TPU v5e"]').textContent();
  assert(option === 'TPU v5e: 15.75 GiB usable by XLA of 16 GiB HBM', `option "${option}"`);
  const published = await page.locator('#capacity-device option[value="TPU v5e published"]').textContent();
  assert(published.startsWith('TPU v5e published: 16 GiB'), `option "${published}"`);
  await page.locator('#capacity-device').selectOption('TPU v5e');
  const verdict = page.locator('#answers-capacity .capacity-verdict');
  await verdict.waitFor({ timeout: 5000 });
  assert((await verdict.getAttribute('data-capacity')) === String(15.75 * 2 ** 30), `capacity ${await verdict.getAttribute('data-capacity')}`);
  const said = await verdict.textContent();
  assert(said.includes('15.75 GiB (TPU v5e: 15.75 GiB usable by XLA of 16 GiB HBM)'), `verdict "${said}"`);

  // Typed: shown as typed in the verdict, and again after a reload with the page's hash.
  await page.locator('#capacity-size').fill('16911433728');
  await page.locator('#capacity-size').press('Enter');
  await page.waitForFunction(() => /capacity=0(:|%3A)16911433728/.test(location.hash), null, { timeout: 5000 });
  assert((await verdict.textContent()).includes('on 16911433728 at the peak'), `verdict "${await verdict.textContent()}"`);
  await page.reload({ waitUntil: 'load' });
  await app.pick(TPU);
  await page.locator('canvas.space-canvas[data-color="0"]').waitFor({ timeout: 20000 });
  if (!(await page.locator('#capacity-size').isVisible())) await page.locator('.answers-toggle').click();
  await page.waitForFunction(() => document.querySelector('#capacity-size')?.value === '16911433728', null, { timeout: 5000 });
  assert((await verdict.textContent()).includes('on 16911433728 at the peak'), `after the reload: "${await verdict.textContent()}"`);
});

await run(app);
