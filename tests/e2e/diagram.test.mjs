// Browser tests of the interactive diagrams, in headless Chromium through playwright-core.
//   node tests/e2e/diagram.test.mjs http://127.0.0.1:PORT/
// (tests/e2e/run.sh builds the app, serves it and runs every tests/e2e/*.test.mjs.)
// Uses the test hooks `window.__bufscope_block_px(color, valueName)` (src/ui/canvas/hooks.rs) to
// find a block's pixel and `window.__bufscope_axis_labels(color)` for the axis label boxes. Screenshots go to tests/artifacts/diagram-*.png. The last line is
// `N passed, M failed`; the exit status is 1 when M > 0.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { TPU, artifacts, assert, base, ink as canvasInk, open, run, test } from './harness.mjs';

const shot = (name) => path.join(artifacts, `diagram-${name}.png`);

// A parameter of memory space 0 in that dump: `value: <68 Arg_0.1 @0> (size=8192,offset=0)`.
const VALUE = 'Arg_0.1';
const COLOR = 0;

const app = await open();
const { page, consoleErrors } = app;
const noNewConsoleErrors = (since) => app.noNewConsoleErrors(since);

const wrapper = (color = COLOR) => page.locator(`.diagram[data-color="${color}"]`);
const frame = () => page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
const dataView = () => wrapper().getAttribute('data-view');

/** The block's centre in viewport pixels, after scrolling its diagram into view. */
async function blockPx(name = VALUE, color = COLOR) {
  await wrapper(color).scrollIntoViewIfNeeded();
  await frame();
  const p = await page.evaluate(([c, n]) => window.__bufscope_block_px(c, n), [color, name]);
  assert(p && Number.isFinite(p.x) && Number.isFinite(p.y), `no pixel for ${name} in colour ${color}: ${JSON.stringify(p)}`);
  return p;
}

const ink = (color = COLOR) => canvasInk(page, color);

/** Loads the app and picks the TPU dump; waits until the diagram of COLOR is drawn. */
async function drawn() {
  await page.goto(base, { waitUntil: 'load' });
  await page.locator('#file-input').waitFor({ state: 'attached', timeout: 20000 });
  await page.locator('#file-input').setInputFiles(TPU);
  await wrapper().waitFor({ timeout: 20000 });
  await page.waitForFunction((c) => document.querySelector(`.diagram[data-color="${c}"]`)?.dataset.view, COLOR, { timeout: 10000 });
}

// ---------------------------------------------------------------- tests

test('(1) the TPU dump is drawn: one diagram per memory space, not blank', async () => {
  await drawn();
  const colors = await page.locator('.diagram').evaluateAll((els) => els.map((e) => e.dataset.color));
  assert(colors.length >= 1 && colors.includes(String(COLOR)), `diagrams for colours ${colors}`);
  for (const c of colors) {
    const share = await ink(c);
    assert(share > 0.03, `diagram of colour ${c} is nearly blank (${(share * 100).toFixed(2)}%)`);
  }
  await wrapper().screenshot({ path: shot('1-drawn') });
  noNewConsoleErrors(0);
});

test('(2) hovering a block shows its tooltip and the time cursor', async () => {
  await drawn();
  const before = consoleErrors.length;
  const p = await blockPx();
  await page.mouse.move(p.x - 3, p.y);
  await page.mouse.move(p.x, p.y);
  const tooltip = page.locator('#tooltip');
  await page.waitForFunction(() => document.querySelector('#tooltip')?.classList.contains('shown'), null, { timeout: 5000 });
  const text = await tooltip.textContent();
  assert(text.includes(VALUE), `tooltip says "${text}"`);
  assert(/8,192 B|8192/.test(text), `tooltip does not show the size: "${text}"`);
  assert(await tooltip.isVisible(), 'tooltip is not visible');
  const box = await tooltip.boundingBox();
  assert(box && Math.abs(box.x - p.x) < 500 && Math.abs(box.y - p.y) < 400, `tooltip far from the pointer: ${JSON.stringify(box)}`);
  await page.screenshot({ path: shot('2-hover') });
  // Leaving the canvas hides it.
  await page.mouse.move(5, 5);
  await page.waitForFunction(() => !document.querySelector('#tooltip')?.classList.contains('shown'), null, { timeout: 5000 });
  noNewConsoleErrors(before);
});

test('(3) clicking a block pins it (drawn pinned, data-selected)', async () => {
  await drawn();
  const before = consoleErrors.length;
  const p = await blockPx();
  const unpinned = await page.evaluate(([x, y]) => {
    const c = document.querySelector('canvas.space-canvas[data-color="0"]');
    const r = c.getBoundingClientRect();
    const s = c.width / c.clientWidth;
    return [...c.getContext('2d').getImageData(Math.round((x - r.left) * s), Math.round((y - r.top) * s), 1, 1).data];
  }, [p.x, p.y]);
  await page.mouse.click(p.x, p.y);
  await page.waitForFunction((v) => document.querySelector('.diagram[data-color="0"]')?.dataset.selected === v, VALUE, { timeout: 5000 });
  // Moving away (no hover) the selection frame stays drawn around the block.
  await page.mouse.move(5, 5);
  await frame();
  const framed = await page.evaluate(([name]) => {
    const c = document.querySelector('canvas.space-canvas[data-color="0"]');
    const p = window.__bufscope_block_px(0, name);
    const r = c.getBoundingClientRect();
    const s = c.width / c.clientWidth;
    const { data } = c.getContext('2d').getImageData(0, 0, c.width, c.height);
    // Walk up from the centre past the block's top edge: the dark frame is there.
    const x = Math.round((p.x - r.left) * s);
    let dark = 0;
    for (let y = Math.round((p.y - r.top) * s); y > 0; y--) {
      const i = (y * c.width + x) * 4;
      if (data[i] < 60 && data[i + 1] < 60 && data[i + 2] < 60) dark++;
      if (dark >= 2) return true;
    }
    return false;
  }, [VALUE]);
  assert(framed, `no selection frame drawn around ${VALUE} (centre was ${unpinned})`);
  // The details panel shows the pinned value: its name, and its offset and size as the dump
  // prints them (`value: <68 Arg_0.1 @0> (size=8192,offset=0)`).
  const line = readFileSync(TPU, 'latin1').split('\n').find((l) => l.includes(` ${VALUE} @`) && l.startsWith(' value:'));
  const [, size, offset] = line.match(/\(size=(\d+),offset=(\d+)\)/);
  const details = page.locator('#details');
  await details.locator('.details-name', { hasText: VALUE }).waitFor({ timeout: 5000 });
  assert(Number(await details.locator('.offset').getAttribute('data-offset')) === Number(offset), 'details: wrong offset');
  assert(Number(await details.locator('.size').first().getAttribute('data-bytes')) === Number(size), 'details: wrong size');
  await wrapper().screenshot({ path: shot('3-pinned') });
  noNewConsoleErrors(before);
});

test('(4) wheel zoom changes the viewport, 0 resets it; keys and drag pan', async () => {
  await drawn();
  const before = consoleErrors.length;
  const full = await dataView();
  const p = await blockPx();
  await page.mouse.move(p.x, p.y);
  for (let i = 0; i < 5; i++) await page.mouse.wheel(0, -200);
  await page.waitForFunction((v) => document.querySelector('.diagram[data-color="0"]')?.dataset.view !== v, full, { timeout: 5000 });
  const zoomed = (await dataView()).split(',').map(Number);
  const whole = full.split(',').map(Number);
  assert(zoomed[1] - zoomed[0] < (whole[1] - whole[0]) * 0.7, `steps not zoomed: ${zoomed} vs ${whole}`);
  assert(zoomed[3] - zoomed[2] < (whole[3] - whole[2]) * 0.7, `offsets not zoomed: ${zoomed} vs ${whole}`);
  // The block under the pointer stays under it (zoom at the cursor).
  const q = await blockPx();
  const qq = await page.evaluate(([c, n]) => window.__bufscope_block_px(c, n), [COLOR, VALUE]);
  assert(qq, `${VALUE} left the view when zooming at it`);
  await wrapper().screenshot({ path: shot('4-zoomed') });

  // Drag pans (the view keeps its size, moves).
  const beforeDrag = await dataView();
  await page.mouse.move(q.x, q.y);
  await page.mouse.down();
  await page.mouse.move(q.x + 60, q.y + 10, { steps: 4 });
  await page.mouse.up();
  await frame();
  const dragged = (await dataView()).split(',').map(Number);
  const b = beforeDrag.split(',').map(Number);
  assert(dragged[0] !== b[0] || dragged[2] !== b[2], `drag did not pan: ${dragged} vs ${b}`);
  assert(Math.abs((dragged[1] - dragged[0]) - (b[1] - b[0])) < 1e-6 * (b[1] - b[0]) + 1e-9, 'drag changed the zoom');

  // Keys: the diagram has focus after the click; D pans right, 0 resets.
  await wrapper().focus();
  const beforeKey = await dataView();
  await page.keyboard.press('d');
  await frame();
  assert((await dataView()) !== beforeKey || beforeKey.split(',')[1] === whole[1].toString(), 'D did not pan');
  await page.keyboard.press('w');
  await frame();
  await page.keyboard.press('0');
  await page.waitForFunction((v) => document.querySelector('.diagram[data-color="0"]')?.dataset.view === v, full, { timeout: 5000 });
  noNewConsoleErrors(before);
});

test('(5) keys work with nothing focused; ? shows the keys, Esc closes them', async () => {
  await drawn();
  const before = consoleErrors.length;
  await page.evaluate(() => document.activeElement?.blur());
  const full = await dataView();
  await page.mouse.move(5, 5);
  await page.keyboard.press('w');
  await page.waitForFunction((v) => document.querySelector('.diagram[data-color="0"]')?.dataset.view !== v, full, { timeout: 5000 });
  await page.keyboard.press('0');
  await page.waitForFunction((v) => document.querySelector('.diagram[data-color="0"]')?.dataset.view === v, full, { timeout: 5000 });
  await page.keyboard.press('?');
  const overlay = page.locator('.keys-overlay');
  await overlay.waitFor({ timeout: 5000 });
  const text = await overlay.textContent();
  assert(/zoom in/.test(text) && /reset/.test(text), `keys overlay says "${text}"`);
  await page.screenshot({ path: shot('5-keys') });
  await page.keyboard.press('Escape');
  await overlay.waitFor({ state: 'detached', timeout: 5000 });
  noNewConsoleErrors(before);
});

test('(6) double-click zooms to the block', async () => {
  await drawn();
  const before = consoleErrors.length;
  const full = await dataView();
  const p = await blockPx();
  await page.mouse.dblclick(p.x, p.y);
  await page.waitForFunction((v) => document.querySelector('.diagram[data-color="0"]')?.dataset.view !== v, full, { timeout: 5000 });
  // The block now fills most of the view: its pixel box is large.
  const size = await page.evaluate(([name]) => {
    const c = document.querySelector('canvas.space-canvas[data-color="0"]');
    return { w: c.clientWidth, view: c.closest('.diagram').dataset.view };
  }, [VALUE]);
  const v = size.view.split(',').map(Number);
  const w = full.split(',').map(Number);
  assert(v[1] - v[0] < w[1] - w[0] || v[3] - v[2] < w[3] - w[2], `double-click did not zoom: ${v}`);
  await wrapper().screenshot({ path: shot('6-double-click') });
  await wrapper().focus();
  await page.keyboard.press('0');
  noNewConsoleErrors(before);
});

test('(7) the time cursor is shared by every diagram', async () => {
  await drawn();
  const before = consoleErrors.length;
  const colors = await page.locator('.diagram').evaluateAll((els) => els.map((e) => e.dataset.color));
  if (colors.length < 2) return; // one memory space: nothing to share
  const other = colors.find((c) => c !== String(COLOR));
  await wrapper(other).scrollIntoViewIfNeeded();
  // The pointer off the diagrams first.
  await page.mouse.move(1, 1);
  await frame();
  const plain = await page.locator(`canvas.space-canvas[data-color="${other}"]`).screenshot();
  const p = await blockPx();
  await page.mouse.move(p.x, p.y);
  await frame();
  const withCursor = await page.locator(`canvas.space-canvas[data-color="${other}"]`).screenshot();
  assert(!plain.equals(withCursor), `diagram ${other} did not draw the cursor`);
  noNewConsoleErrors(before);
});

test('(8) deep zoom: axis labels readable and none overlapping', async () => {
  await drawn();
  const before = consoleErrors.length;
  await wrapper().focus();
  await page.keyboard.press('0');
  const full = await dataView();
  const labels = () => page.evaluate((c) => window.__bufscope_axis_labels(c), COLOR);
  const overlaps = (list) => {
    const bad = [];
    for (let i = 0; i < list.length; i++) {
      for (let j = i + 1; j < list.length; j++) {
        const [a, b] = [list[i], list[j]];
        const apart = a.x + a.w <= b.x || b.x + b.w <= a.x || a.y + a.h <= b.y || b.y + b.h <= a.y;
        if (!apart) bad.push(`${a.text} / ${b.text}`);
      }
    }
    return bad;
  };
  const check = async (what) => {
    const list = await labels();
    assert(Array.isArray(list) && list.length > 0, `${what}: no axis labels: ${JSON.stringify(list)}`);
    const bad = overlaps(list);
    assert(bad.length === 0, `${what}: overlapping labels: ${bad.join('; ')}`);
    const box = await page.locator(`canvas.space-canvas[data-color="${COLOR}"]`).boundingBox();
    for (const l of list) {
      assert(l.x >= box.x - 1 && l.x + l.w <= box.x + box.width + 1 && l.y >= box.y - 1 && l.y + l.h <= box.y + box.height + 1,
        `${what}: label ${l.text} outside the canvas`);
    }
    return list.map((l) => l.text);
  };
  const whole = await check('whole view');
  assert(whole.includes('step') && whole.includes('allocation + offset'), `axis titles: ${whole}`);
  assert(whole.some((t) => t.startsWith('alloc ')), `no allocation start labelled: ${whole}`);

  // Deep into one block, both axes, down to the 2-step and 16-byte limits.
  const p = await blockPx();
  await page.mouse.move(p.x, p.y);
  for (let i = 0; i < 60; i++) await page.mouse.wheel(0, -300);
  await page.waitForFunction((v) => document.querySelector('.diagram[data-color="0"]')?.dataset.view !== v, full, { timeout: 5000 });
  await frame();
  const v = (await dataView()).split(',').map(Number);
  assert(v[3] - v[2] < 64, `not zoomed to bytes: ${v}`);
  const deep = await check('deep zoom');
  const bytes = deep.filter((t) => t.startsWith('+') || t.startsWith('…'));
  assert(bytes.length >= 2, `fewer than two byte ticks at deep zoom: ${deep}`);
  assert(new Set(bytes).size === bytes.length, `byte labels repeat: ${bytes}`);
  assert(deep.every((t) => !/^\d{6,}/.test(t)), `raw numbers on an axis: ${deep}`);
  await wrapper().screenshot({ path: shot('8-deep-zoom') });

  // Steps only, far into the program (Shift: time only) after a reset.
  await page.keyboard.press('0');
  await page.waitForFunction((v) => document.querySelector('.diagram[data-color="0"]')?.dataset.view === v, full, { timeout: 5000 });
  await page.keyboard.down('Shift');
  for (let i = 0; i < 30; i++) await page.mouse.wheel(0, -300);
  await page.keyboard.up('Shift');
  await frame();
  await check('time zoom');
  await wrapper().screenshot({ path: shot('8-time-zoom') });
  await page.keyboard.press('0');
  noNewConsoleErrors(before);
});

await run(app);
