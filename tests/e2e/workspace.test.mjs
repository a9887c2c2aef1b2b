// Browser tests of the workspace layout at 1280×720 (src/ui/workspace.rs, style/workspace.css):
// one screen, the diagram from the top, a pinned value's details in view, the wheel zooming
// over a diagram and scrolling a panel elsewhere, a tiny memory space as a strip, the intake
// gone after a load and back with "Open…", the first-time hint, the bar's "Example".
//   node tests/e2e/workspace.test.mjs http://127.0.0.1:PORT/
// Uses `window.__bufscope_block_px(color, valueName)` (src/ui/canvas/hooks.rs) and the
// diagrams' `data-view` (the view window). Screenshots go to tests/artifacts/workspace-*.png.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { SHARED, TPU, artifacts, assert, dumpFile, open, run, skip, test } from './harness.mjs';

const W = 1280;
const H = 720;
const BIG = path.join(SHARED, 'dumps', 'cpu', 'jax0.6.2', 'cpu_deep_unrolled_500.buffer-assignment.txt');
// A parameter of memory space 0 of the TPU dump: `value: <68 Arg_0.1 @0> (size=8192,offset=0)`.
const VALUE = 'Arg_0.1';

const app = await open({ viewport: { width: W, height: H } });
const { page } = app;
const shot = (name) => page.screenshot({ path: path.join(artifacts, `workspace-${name}.png`) });
const frame = () => page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
const rect = (sel) => page.evaluate((sel) => {
  const e = document.querySelector(sel);
  if (!e) return null;
  const r = e.getBoundingClientRect();
  return { top: r.top, bottom: r.bottom, left: r.left, right: r.right, height: r.height, width: r.width };
}, sel);
const dataView = (color = 0) => page.locator(`.diagram[data-color="${color}"]`).getAttribute('data-view');
const pageScrollY = () => page.evaluate(() => window.scrollY);

/** The diagram of memory space 0 is on the first screen, drawn, with a height of its own. */
async function diagramOnFirstScreen(what) {
  await page.waitForFunction(() => document.querySelector('.diagram[data-color="0"]')?.dataset.view, null, { timeout: 20000 });
  const d = await rect('.diagram[data-color="0"]');
  assert(d, `${what}: no diagram of memory space 0`);
  assert(d.top >= 0 && d.top < H, `${what}: the diagram's top is at ${d.top}px, not inside the first ${H}px`);
  assert(d.top < 120, `${what}: the diagram starts ${d.top}px down, below more than a slim bar`);
  assert(d.bottom - d.top >= 150, `${what}: the diagram is ${d.bottom - d.top}px tall`);
  assert(await pageScrollY() === 0, `${what}: the page is scrolled to ${await pageScrollY()}`);
}

/** Loads the app and drops TPU 000 on it; waits until it is read. */
async function tpuLoaded() {
  await app.load();
  await app.drop([dumpFile(TPU)]);
  await app.waitForOutcome(path.basename(TPU));
}

/** Turns the wheel once over the diagram of memory space 0, which ends the first-time hint. */
async function wheelOnce() {
  const d = await rect('.diagram[data-color="0"]');
  await page.mouse.move(d.left + d.width / 2, d.top + d.height * 0.7);
  await page.mouse.wheel(0, 100);
  await page.locator('.first-hint').waitFor({ state: 'detached', timeout: 3000 });
}

test('after loading TPU 000 the diagram starts below a slim bar, and the intake is gone', async () => {
  const before = app.consoleErrors.length;
  await app.load();
  assert(await page.locator('#intake').isVisible(), 'no intake before a load');
  await app.drop([dumpFile(TPU)]);
  await app.waitForOutcome(path.basename(TPU));
  await diagramOnFirstScreen('TPU 000');
  assert(!(await page.locator('#intake').isVisible()), 'the intake is still shown after a load');
  // One screen: the page itself does not scroll.
  const { scroll, inner } = await page.evaluate(() => ({ scroll: document.documentElement.scrollHeight, inner: innerHeight }));
  assert(scroll <= inner + 1, `the page is ${scroll}px tall in a ${inner}px window`);
  // The bar has the module's key figures in one line.
  const figures = await page.locator('.workbar .module-figures').textContent();
  for (const word of ['peak', 'allocations', 'values']) assert(figures.includes(word), `the bar's figures "${figures}" lack "${word}"`);
  const bar = await rect('.workbar');
  assert(bar.height < 80, `the bar is ${bar.height}px tall`);
  assert((await page.locator('.workbar .header-actions').count()) === 1, 'no header-actions slot in the bar');
  await frame();
  await shot('1-tpu');
  app.noNewConsoleErrors(before);
});

test('the first-time hint is over the diagrams until the first wheel', async () => {
  await tpuLoaded();
  const hint = page.locator('.first-hint');
  assert(await hint.isVisible(), 'no first-time hint over the diagrams');
  const text = await hint.textContent();
  assert(/wheel/i.test(text) && /drag/i.test(text) && text.includes('?'), `hint "${text}"`);
  await wheelOnce();
  assert(await page.evaluate(() => localStorage.getItem('bufscope.hint-seen')) !== null, 'the hint is not remembered');
});

test('clicking a block pins it, and its details are inside the window', async () => {
  await tpuLoaded();
  const before = app.consoleErrors.length;
  await frame();
  const p = await page.evaluate(([c, n]) => window.__bufscope_block_px(c, n), [0, VALUE]);
  assert(p && p.y > 0 && p.y < H, `block of ${VALUE} at ${JSON.stringify(p)}`);
  await page.mouse.click(p.x, p.y);
  await page.locator('#details .details-name').waitFor({ timeout: 5000 });
  assert((await page.locator('#details .details-name').textContent()) === VALUE, 'another value pinned');
  const name = await rect('#details .details-name');
  const facts = await rect('#details .facts');
  assert(name.top >= 0 && name.bottom <= H && name.left >= 0 && name.right <= W, `the details' name is at ${JSON.stringify(name)}`);
  assert(facts.top < H && facts.top >= 0, `the details' facts start at ${facts.top}px`);
  assert(await pageScrollY() === 0, 'the page scrolled');
  await shot('2-pinned');
  app.noNewConsoleErrors(before);
});

test('the wheel over a diagram zooms it and the page stays; over a panel it scrolls the panel', async () => {
  await tpuLoaded();
  const before = app.consoleErrors.length;
  const full = await dataView();
  const d = await rect('.diagram[data-color="0"]');
  const y0 = await pageScrollY();
  const stage0 = await page.evaluate(() => document.querySelector('.diagrams').scrollTop);
  await page.mouse.move(d.left + d.width * 0.5, d.top + d.height * 0.75);
  for (let i = 0; i < 4; i++) await page.mouse.wheel(0, -240);
  await page.waitForFunction((v) => document.querySelector('.diagram[data-color="0"]')?.dataset.view !== v, full, { timeout: 5000 });
  const zoomed = (await dataView()).split(',').map(Number);
  const whole = full.split(',').map(Number);
  assert(zoomed[1] - zoomed[0] < whole[1] - whole[0], `steps not zoomed: ${zoomed} vs ${whole}`);
  // Zoomed out to its limit, the wheel is still the diagram's.
  for (let i = 0; i < 12; i++) await page.mouse.wheel(0, 400);
  await frame();
  assert(await pageScrollY() === y0, `the page scrolled to ${await pageScrollY()} under a wheel over the diagram`);
  assert(await page.evaluate(() => document.querySelector('.diagrams').scrollTop) === stage0, 'the diagrams scrolled');

  // Over the dock below the diagrams (its title, not the table's own scroll box).
  const dock = page.locator('.dock-scroll');
  const top0 = await dock.evaluate((e) => e.scrollTop);
  const room = await dock.evaluate((e) => e.scrollHeight - e.clientHeight);
  assert(room > 50, `the dock has ${room}px to scroll`);
  const t = await rect('.dock .peak-title');
  await page.mouse.move(t.left + 20, t.top + t.height / 2);
  await page.mouse.wheel(0, 300);
  await page.waitForFunction((t0) => document.querySelector('.dock-scroll').scrollTop > t0, top0, { timeout: 3000 })
    .catch(() => { throw new Error('the wheel over the dock did not scroll it'); });
  assert(await pageScrollY() === y0, 'the page scrolled under a wheel over the dock');

  // Over the details panel, when it has more than fits.
  const side = page.locator('#details');
  if (await side.evaluate((e) => e.scrollHeight - e.clientHeight > 20)) {
    const s = await rect('#details');
    await page.mouse.move(s.left + s.width / 2, s.top + 40);
    await page.mouse.wheel(0, 200);
    await page.waitForFunction(() => document.querySelector('#details').scrollTop > 0, null, { timeout: 3000 })
      .catch(() => { throw new Error('the wheel over the details did not scroll them'); });
  } else {
    console.log('note: the details fit in their panel: its own scrolling not tried');
  }
  assert(await pageScrollY() === y0, 'the page scrolled under a wheel over a panel');
  app.noNewConsoleErrors(before);
});

test('a tiny memory space (SMEM, 4 B) is a slim strip that opens to its diagram on click', async () => {
  await tpuLoaded();
  const before = app.consoleErrors.length;
  const strip = page.locator('.space-strip[data-color="2"]');
  assert(await strip.isVisible(), 'no strip for memory space 2');
  const box = await strip.boundingBox();
  assert(box.height < 40, `the strip is ${box.height}px tall`);
  const label = await strip.textContent();
  assert(label.includes('smem') && label.includes('4 B'), `strip "${label}"`);
  assert((await page.locator('.diagram[data-color="2"]').count()) === 0, 'a diagram for the tiny space before it is opened');
  // The spaces that hold more share the height by it: HBM (64 KiB) over VMEM (40.5 KiB).
  const hbm = await rect('.diagram[data-color="0"]');
  const vmem = await rect('.diagram[data-color="1"]');
  assert(hbm.height > vmem.height, `HBM ${hbm.height}px, VMEM ${vmem.height}px`);
  await strip.click();
  await page.waitForFunction(() => document.querySelector('.diagram[data-color="2"]')?.dataset.view, null, { timeout: 5000 });
  const opened = await rect('.diagram[data-color="2"]');
  assert(opened.height >= 100, `the opened diagram is ${opened.height}px tall`);
  assert((await strip.getAttribute('aria-expanded')) === 'true', 'the strip does not say it is open');
  await shot('3-smem-open');
  await strip.click();
  await page.locator('.diagram[data-color="2"]').waitFor({ state: 'detached', timeout: 3000 });
  app.noNewConsoleErrors(before);
});

test('"Open…" brings the intake back over the module, and closes it', async () => {
  await tpuLoaded();
  const before = app.consoleErrors.length;
  assert(!(await page.locator('#intake').isVisible()), 'the intake is shown');
  await page.locator('#open-button').click();
  await page.locator('#intake').waitFor({ state: 'visible', timeout: 3000 });
  assert(await page.locator('#try-example').isVisible(), 'no example button in the intake');
  assert(await page.locator('#intake label.button', { hasText: 'Choose files' }).isVisible(), 'no file picker in the intake');
  await shot('4-open');
  await page.locator('#open-button').click();
  await page.locator('#intake').waitFor({ state: 'hidden', timeout: 3000 });
  await page.locator('#open-button').click();
  await page.locator('#intake').waitFor({ state: 'visible', timeout: 3000 });
  await page.keyboard.press('Escape');
  await page.locator('#intake').waitFor({ state: 'hidden', timeout: 3000 });
  assert(await page.locator('.diagram[data-color="0"]').isVisible(), 'the module is gone');
  app.noNewConsoleErrors(before);
});

test('a resized and folded details panel gives its room to the diagrams', async () => {
  await tpuLoaded();
  const d0 = await rect('.diagram[data-color="0"]');
  const handle = await rect('.side-panel > .splitter');
  await page.mouse.move(handle.left + handle.width / 2, handle.top + 200);
  await page.mouse.down();
  await page.mouse.move(handle.left + 100, handle.top + 200, { steps: 4 });
  await page.mouse.up();
  await frame();
  const d1 = await rect('.diagram[data-color="0"]');
  assert(Math.abs(d1.width - (d0.width + 100 - handle.width / 2)) < 12, `dragged 100px: the diagram went from ${d0.width}px to ${d1.width}px wide`);
  await page.locator('.side-fold').click();
  await frame();
  const d2 = await rect('.diagram[data-color="0"]');
  assert(d2.width > W - 80, `folded: the diagram is ${d2.width}px wide`);
  assert(!(await page.locator('#details').isVisible()), 'the folded panel still shows the details');
  await page.locator('.side-fold').click();
  await page.locator('#details').waitFor({ state: 'visible', timeout: 3000 });
});

test('after loading the 94 MB CPU dump the diagram starts below the bar', async () => {
  if (!existsSync(BIG)) skip(`no ${BIG}`);
  const before = app.consoleErrors.length;
  // A user who has seen the first-time hint: TPU 000 read and the wheel turned once.
  await tpuLoaded();
  await wheelOnce();
  await app.pick([BIG]);
  await app.waitForOutcome(path.basename(BIG), 240000);
  await diagramOnFirstScreen('94 MB CPU dump');
  assert(!(await page.locator('#intake').isVisible()), 'the intake is shown after a load');
  assert((await page.locator('.first-hint').count()) === 0, 'the first-time hint came back');
  await page.waitForTimeout(1000);
  await shot('5-big');
  app.noNewConsoleErrors(before);
});

test('the bar\'s "Example" button opens the example', async () => {
  await tpuLoaded();
  const before = app.consoleErrors.length;
  await page.locator('.workbar #bar-example').click();
  await page.waitForFunction(
    () => document.querySelector('.workbar .module-name')?.textContent === 'tpu_reference_attention',
    null,
    { timeout: 20000 },
  );
  await app.waitForDetails();
  await diagramOnFirstScreen('the example');
  app.noNewConsoleErrors(before);
});

await run(app);
