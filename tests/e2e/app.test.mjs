// Browser tests of the built app, in headless Chromium through playwright-core.
//   node tests/e2e/app.test.mjs http://127.0.0.1:PORT/
// (tests/e2e/run.sh builds the app, serves it and runs this with the other *.test.mjs.)
// Screenshots of every step go to tests/artifacts/. The last line is `N passed, M failed`;
// the exit status is 1 when M > 0.
//   UPDATE_SCREENSHOTS=1 node tests/e2e/app.test.mjs URL   also writes the README's
//   screenshots, style/screenshots/tpu-module.png and tpu-module-dark.png (1200 px wide).
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  CPU, TPU, assert, dumpFile, fixture, grouped, open, origin, repo, run, test, totalBytesUsed,
} from './harness.mjs';

const app = await open();
const { page } = app;
const dropFiles = app.drop;
const waitForOutcome = app.waitForOutcome;
const shownTotal = app.shownTotal;
const noNewConsoleErrors = app.noNewConsoleErrors;
const consoleErrors = app.consoleErrors;
const screenshot = app.screenshot;

/** Loads the app and drops the TPU dump on it, as (b) does. */
async function tpuDropped() {
  await app.load();
  await dropFiles([dumpFile(TPU)]);
  await waitForOutcome(path.basename(TPU));
}

// ---------------------------------------------------------------- tests

test('(a) the page loads with no console errors', async () => {
  await app.load();
  const h1 = await page.locator('h1').textContent();
  assert(h1 === 'bufscope', `header is "${h1}"`);
  await page.waitForTimeout(300);
  await screenshot('01-loaded.png');
  noNewConsoleErrors(0);
});

test('(b) dropping the TPU dump shows its total bytes', async () => {
  await app.load();
  const before = consoleErrors.length;
  const expected = totalBytesUsed(TPU);
  await dropFiles([dumpFile(TPU)]);
  await waitForOutcome(path.basename(TPU));
  await screenshot('02-tpu-dropped.png');
  const shown = await shownTotal();
  assert(shown.bytes === expected, `total bytes shown ${shown.bytes}, the dump says ${expected}`);
  assert(shown.text.includes(grouped(expected)), `"${shown.text}" does not show ${grouped(expected)}`);
  const spaces = await page.locator('.module .spaces tbody tr').count();
  assert(spaces > 0, 'no memory space rows');
  noNewConsoleErrors(before);
});

test('(f) every memory space is drawn on a canvas', async () => {
  await tpuDropped();
  const rows = await page.locator('.module .spaces tbody tr').count();
  // A tiny memory space is a strip until opened: open them all.
  for (const strip of await page.locator('.space-strip[aria-expanded="false"]').all()) await strip.click();
  // What is checked is that every space is drawn, not how fast (the benchmarks time it):
  // under CI's load, drawing them all once took longer than 5 s.
  await page.waitForFunction((n) => document.querySelectorAll('.module .diagram[data-view]').length === n, rows, { timeout: 20000 });
  const inked = await page.evaluate(() =>
    [...document.querySelectorAll('.module canvas.space-canvas')].map((c) => {
      const { data } = c.getContext('2d').getImageData(0, 0, c.width, c.height);
      let ink = 0;
      for (let i = 0; i < data.length; i += 4) {
        if (data[i] < 235 || data[i + 1] < 235 || data[i + 2] < 235) ink++;
      }
      return { color: c.dataset.color, width: c.width, height: c.height, ink: ink / (data.length / 4) };
    }),
  );
  assert(inked.length === rows, `${inked.length} canvases for ${rows} memory spaces`);
  for (const c of inked) {
    assert(c.width >= 320 && c.height >= 100, `canvas of colour ${c.color} is ${c.width}×${c.height}`);
    assert(c.ink > 0.02, `canvas of colour ${c.color} is nearly blank (${(c.ink * 100).toFixed(2)}% drawn)`);
  }
});

test('(c) a non-dump file shows an error, the TPU module stays open, and the page stays usable', async () => {
  // The TPU dump shown, as (b) leaves it. (tests/e2e/loading.test.mjs tries more bad files.)
  await tpuDropped();
  const before = consoleErrors.length;
  const name = 'not-a-dump.txt';
  await dropFiles([{ name, bytes: Buffer.from('Dear diary,\nthis is not a buffer assignment.\n') }]);
  await waitForOutcome(name);
  const error = page.locator('.message.error');
  await error.first().waitFor({ timeout: 5000 });
  const text = (await error.allTextContents()).join(' ');
  assert(text.includes(`${name} is not an XLA buffer-assignment dump`), `error message: "${text}"`);
  assert((await app.shownModule()) === path.basename(TPU, '.txt'), 'the TPU module is no longer on screen');
  assert((await shownTotal()).bytes === totalBytesUsed(TPU), 'the TPU module on screen changed');
  await screenshot('03-not-a-dump.png');

  await dropFiles([dumpFile(TPU)]);
  await waitForOutcome(path.basename(TPU));
  const shown = await shownTotal();
  assert(shown.bytes === totalBytesUsed(TPU), `after the error: total bytes ${shown.bytes}`);
  assert((await page.locator('.message.error').count()) === 0, 'the error message stayed');
  await screenshot('04-tpu-after-error.png');
  noNewConsoleErrors(before);
});

test('(e) the file picker reads a CPU dump', async () => {
  await app.load();
  const before = consoleErrors.length;
  await page.locator('#file-input').setInputFiles(CPU);
  await waitForOutcome(path.basename(CPU));
  const shown = await shownTotal();
  assert(shown.bytes === totalBytesUsed(CPU), `total bytes ${shown.bytes}, the dump says ${totalBytesUsed(CPU)}`);
  await screenshot('05-cpu-picked.png');
  noNewConsoleErrors(before);
});

test('(g) picking a folder reads the dumps in it and skips other files', async () => {
  await app.load();
  const before = consoleErrors.length;
  // A dump folder of new XLA (three files per module, plus its reports) and a stray file.
  const src = path.dirname(fixture('cpu/jax0.10.2/cpu_tiny.buffer-assignment.txt'));
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bufscope-folder-'));
  const folder = path.join(dir, 'xla_dump');
  cpSync(src, folder, { recursive: true });
  writeFileSync(path.join(folder, 'README.md'), 'not a dump\n');
  const modules = new Set(readdirSync(src).filter((f) => f.endsWith('.buffer-assignment.txt')).map((f) => f.split('.')[0]));
  try {
    await page.locator('#dir-input').setInputFiles(folder);
    await page.waitForFunction(() => /1 other file of the dump folder skipped/.test(document.querySelector('.files-line')?.textContent ?? ''), null, { timeout: 20000 });
    // Every module is listed in the picker; the one on screen is the largest by default.
    const options = await app.moduleNames();
    assert(options.length === modules.size, `${options.length} modules listed (${options.join(', ')}), expected ${modules.size}`);
    for (const m of modules) assert(options.includes(m), `module ${m} missing (listed: ${options.join(', ')})`);
    const largest = [...modules].map((m) => [m, totalBytesUsed(path.join(src, `${m}.buffer-assignment-values.txt`))])
      .sort((a, b) => b[1] - a[1])[0][0];
    const shownNames = await page.locator('.module .module-name').allTextContents();
    assert(shownNames.length === 1 && shownNames[0] === largest, `shown ${shownNames.join(', ')}, expected the largest, ${largest}`);
    await app.chooseModule('cpu_tiny');
    assert((await page.locator('.message.error').count()) === 0, 'an error message is shown');
    await screenshot('06-folder-picked.png');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  noNewConsoleErrors(before);
});

test('(h) dark colour scheme: page and diagrams follow it', async () => {
  await app.load();
  const before = consoleErrors.length;
  await page.emulateMedia({ colorScheme: 'dark' });
  try {
    await dropFiles([dumpFile(TPU)]);
    await waitForOutcome(path.basename(TPU));
    const corner = await page.evaluate(() => {
      const c = document.querySelector('.module canvas.space-canvas');
      return c ? [...c.getContext('2d').getImageData(1, 1, 1, 1).data] : null;
    });
    assert(corner && corner[0] < 80 && corner[1] < 80 && corner[2] < 80, `canvas background is ${corner}`);
    await screenshot('07-dark.png');
  } finally {
    await page.emulateMedia({ colorScheme: 'light' });
  }
  noNewConsoleErrors(before);
});

test('(d) no request went to another origin', async () => {
  // The page, the TPU dump dropped and a CPU dump picked: every request they make.
  await tpuDropped();
  await page.locator('#file-input').setInputFiles(CPU);
  await waitForOutcome(path.basename(CPU));
  assert(app.requests.length > 0, 'no requests recorded');
  const foreign = app.requests.filter((u) => !u.startsWith('data:') && !u.startsWith('blob:') && new URL(u).origin !== origin);
  assert(foreign.length === 0, `requests to other origins:\n    ${foreign.join('\n    ')}`);
});

if (process.env.UPDATE_SCREENSHOTS === '1') {
  test('(s) README screenshots: the TPU module, light and dark, at 1280×720', async () => {
    const dir = path.join(repo, 'style', 'screenshots');
    mkdirSync(dir, { recursive: true });
    await app.load();
    const before = consoleErrors.length;
    const size = page.viewportSize();
    await page.setViewportSize({ width: 1280, height: 720 });
    try {
      for (const [scheme, file] of [['light', 'tpu-module.png'], ['dark', 'tpu-module-dark.png']]) {
        await page.emulateMedia({ colorScheme: scheme });
        await dropFiles([dumpFile(TPU)]);
        await waitForOutcome(path.basename(TPU));
        await page.locator('.module canvas').first().waitFor({ timeout: 5000 });
        await page.evaluate(() => document.querySelector('.hint-close')?.click());
        // A value pinned, as a user would: its details beside the diagrams.
        const p = await page.evaluate(() => window.__bufscope_block_px?.(0, 'Arg_0.1'));
        if (p) await page.mouse.click(p.x, p.y);
        await page.mouse.move(1, 1);
        await page.waitForTimeout(500);
        // The workspace is the window: the whole of it.
        const out = path.join(dir, file);
        await page.screenshot({ path: out });
        const kb = statSync(out).size / 1024;
        console.log(`note: wrote ${path.relative(repo, out)} (1280×720, ${kb.toFixed(0)} KB)`);
        assert(kb < 300, `${file} is ${kb.toFixed(0)} KB, over 300 KB`);
      }
    } finally {
      await page.emulateMedia({ colorScheme: 'light' });
      await page.setViewportSize(size);
    }
    noNewConsoleErrors(before);
  });
}

await run(app);
