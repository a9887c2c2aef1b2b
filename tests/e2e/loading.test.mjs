// Browser tests of loading: one file, several, a dump folder, gzipped dumps, bad files
// (not a dump, empty, binary, truncated) with the previous module kept on screen, the
// 94 MB dump read in slices with the page staying responsive (its longest frame gap is
// reported), Cancel, and no request at all once a file is given.
//   node tests/e2e/loading.test.mjs http://127.0.0.1:PORT/   (tests/e2e/run.sh runs it)
// The 94 MB tests need ../shared (the dump collection); without it they show as one skipped test.
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import os from 'node:os';
import path from 'node:path';
import { SHARED, TPU, assert, dumpFile, fixture, open, run, skip, test, totalBytesUsed } from './harness.mjs';

const app = await open();
const { page } = app;
const TPU_MODULE = path.basename(TPU, '.txt');
const BIG = path.join(SHARED, 'dumps', 'cpu', 'jax0.6.2', 'cpu_deep_unrolled_500.buffer-assignment.txt');
/** The app's slice sizes (`FIRST_SLICE`, `BEHIND_SLICE`, `GZ_SLICE` in src/ui/read/drive.rs): plain text
 *  in the first read and in the read behind, and gzipped files. */
const SLICE = 2 * 1024 * 1024;
const BEHIND_SLICE = 8 * 1024 * 1024;
const GZ_SLICE = 256 * 1024;

/** The bytes of a plain dump's `Used values` body: from the line after its header to the
 *  next section's header (0 for a gzipped file, which is read in one pass). */
function usedValuesBytes(file) {
  const text = readFileSync(file);
  if (text[0] === 0x1f && text[1] === 0x8b) return 0;
  const header = text.indexOf('\nUsed values:\n');
  if (header < 0) return 0;
  const start = header + '\nUsed values:\n'.length;
  const next = text.indexOf('\nHloLiveRange', start);
  return (next < 0 ? text.length : next + 1) - start;
}

/** Loads the app and waits half a second; the number of requests it made by then (the
 *  requests made while the page loaded). */
async function loadSettled() {
  await app.load();
  await page.waitForTimeout(500);
  return app.requests.length;
}

/** The text of the report of the last read (files line, errors, notes). */
const reportText = async () => (await page.locator('.report').textContent()) ?? '';

/** Counts the slices the app asks for and their sizes, in the page: requests to its reading
 *  worker (reader.js, `{ file, start, end }`), or `Blob.slice` calls when it reads them itself.
 *  With `delay` (ms), each request to the reading worker is sent that much later: a slow disk,
 *  so that a read is still under way when the test acts on it. */
async function countSlices(delay = 0) {
  await page.evaluate((delay) => {
    window.__slices = { calls: 0, largest: 0, inWorker: 0, delay, sizes: [] };
    if (window.__slicesInstalled) return;
    window.__slicesInstalled = true;
    const count = (start, end, size) => {
      window.__slices.calls++;
      window.__slices.largest = Math.max(window.__slices.largest, (end ?? size) - (start ?? 0));
      window.__slices.sizes.push((end ?? size) - (start ?? 0));
    };
    const slice = Blob.prototype.slice;
    Blob.prototype.slice = function (start, end, ...rest) {
      count(start, end, this.size);
      return slice.call(this, start, end, ...rest);
    };
    const post = Worker.prototype.postMessage;
    Worker.prototype.postMessage = function (data, ...rest) {
      if (data?.file instanceof Blob) {
        count(data.start, data.end, data.file.size);
        window.__slices.inWorker++;
        if (window.__slices.delay > 0) {
          setTimeout(() => post.call(this, data, ...rest), window.__slices.delay);
          return undefined;
        }
      }
      return post.call(this, data, ...rest);
    };
  }, delay);
}
const slices = () => page.evaluate(() => ({ ...window.__slices }));

/** Drops the TPU dump and waits until it is on screen. */
async function showTpu() {
  await app.drop([dumpFile(TPU)]);
  await app.waitForOutcome(path.basename(TPU));
  assert((await app.shownModule()) === TPU_MODULE, 'the TPU module is not on screen');
}

/** Drops one bad file; checks its error, and that the TPU module read before is still open. */
async function dropBad(name, bytes, expected) {
  await app.drop([{ name, bytes }]);
  await app.waitForOutcome(name);
  const error = page.locator('.report .message.error');
  await error.waitFor({ timeout: 5000 });
  const text = await error.textContent();
  assert(text.includes(expected), `error for ${name}: "${text}", expected it to say "${expected}"`);
  assert(await error.isVisible(), `the error for ${name} is not visible`);
  assert((await app.shownModule()) === TPU_MODULE, `after ${name}: the TPU module is no longer on screen`);
  assert((await app.shownTotal()).bytes === totalBytesUsed(TPU), `after ${name}: the module on screen changed`);
  const kept = await page.locator('.report .message.kept').textContent();
  assert(kept.includes(path.basename(TPU)), `after ${name}: no note that the TPU dump is still shown ("${kept}")`);
}

test('the page loads', async () => {
  const loadedAt = await loadSettled();
  assert(loadedAt > 0, 'no request recorded while the page loaded');
  // The reading worker starts with the page, so that reading a file asks for nothing.
  assert(app.requests.some((u) => u.endsWith('/reader.js')), 'the reading worker was not loaded with the page');
  app.noNewConsoleErrors(0);
});

test('a picked .gz dump opens (gzip made here with zlib)', async () => {
  await app.load();
  const before = app.consoleErrors.length;
  const raw = readFileSync(TPU);
  const gz = gzipSync(raw);
  assert(gz[0] === 0x1f && gz[1] === 0x8b && gz.length < raw.length, 'zlib did not gzip');
  const name = `${path.basename(TPU)}.gz`;
  await app.pick({ name, mimeType: 'application/gzip', buffer: gz });
  await app.waitForOutcome(name);
  assert((await app.shownModule()) === TPU_MODULE, `module ${await app.shownModule()}, expected ${TPU_MODULE}`);
  const shown = await app.shownTotal();
  assert(shown.bytes === totalBytesUsed(TPU), `total bytes ${shown.bytes}, the dump says ${totalBytesUsed(TPU)}`);
  assert((await page.locator('.message.error').count()) === 0, 'an error is shown');
  app.noNewConsoleErrors(before);
});

test('several files dropped at once: the three files of a new-XLA module join', async () => {
  await app.load();
  const before = app.consoleErrors.length;
  const dir = path.dirname(fixture('cpu/jax0.10.2/cpu_tiny.buffer-assignment.txt'));
  const parts = ['buffer-assignment.txt', 'buffer-assignment-values.txt', 'live-range.txt'];
  await app.drop(parts.map((p) => dumpFile(path.join(dir, `cpu_tiny.${p}`))));
  await app.waitForOutcome('3 files');
  assert((await app.shownModule()) === 'cpu_tiny', `module ${await app.shownModule()}`);
  assert((await page.locator('#module-picker').count()) === 0, 'a module picker for one module');
  const files = await page.locator('.module .module-files').textContent();
  for (const p of parts) assert(files.includes(`cpu_tiny.${p}`), `${p} is not among the module's files: ${files}`);
  const expected = totalBytesUsed(path.join(dir, 'cpu_tiny.buffer-assignment-values.txt'));
  assert((await app.shownTotal()).bytes === expected, 'wrong total bytes');
  app.noNewConsoleErrors(before);
});

test('a picked dump folder of .gz files opens; other files are skipped', async () => {
  await app.load();
  const before = app.consoleErrors.length;
  const src = path.dirname(fixture('cpu/jax0.10.2/cpu_tiny.buffer-assignment.txt'));
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bufscope-gz-'));
  const folder = path.join(dir, 'xla_dump');
  cpSync(src, folder, { recursive: true });
  const dumps = readdirSync(folder);
  for (const f of dumps) {
    const p = path.join(folder, f);
    writeFileSync(`${p}.gz`, gzipSync(readFileSync(p)));
    rmSync(p);
  }
  // XLA's other output (a text before optimizations is read now, for the waste answer).
  writeFileSync(path.join(folder, 'module_0001.jit_f.debug_options'), 'xla_dump_to: "x"\n');
  const modules = new Set(dumps.filter((f) => f.endsWith('.buffer-assignment.txt')).map((f) => f.split('.')[0]));
  try {
    await page.locator('#dir-input').setInputFiles(folder);
    await page.waitForFunction(
      () => /^Read \d+ files; 1 other file of the dump folder skipped/.test(document.querySelector('.files-line')?.textContent ?? ''),
      null,
      { timeout: 20000 },
    );
    const line = await page.locator('.files-line').textContent();
    assert(line.startsWith(`Read ${dumps.length} files`), `"${line}": expected ${dumps.length} files read`);
    const options = await app.moduleNames();
    assert(options.length === modules.size, `${options.length} modules listed, expected ${modules.size}`);
    for (const m of modules) assert(options.includes(m), `module ${m} missing (listed: ${options.join(', ')})`);
    assert((await page.locator('.message.error').count()) === 0, 'an error is shown');
    const gzipWarnings = (await page.locator('.module li').allTextContents()).filter((t) => /gzip/i.test(t));
    assert(gzipWarnings.length === 0, `gzip warnings: ${gzipWarnings.join('; ')}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  app.noNewConsoleErrors(before);
});

test('bad files: an error each, the app stays usable and the TPU module stays open', async () => {
  await app.load();
  const before = app.consoleErrors.length;
  await showTpu();
  await app.screenshot('loading-01-tpu.png');
  await dropBad('notes.txt', Buffer.from('Dear diary,\nthis is not a buffer assignment.\n'),
    'notes.txt is not an XLA buffer-assignment dump');
  await app.screenshot('loading-02-not-a-dump.png');
  await dropBad('empty.txt', Buffer.alloc(0), 'empty.txt is empty');
  const binary = randomBytes(64 * 1024);
  binary[0] = 0; // not the gzip magic
  // Scrolled down into the module, the user still sees what came of the drop. (A module
  // on screen is one screen at most sizes: then the page has nowhere to scroll.)
  await page.evaluate(() => scrollTo(0, document.documentElement.scrollHeight));
  if (await page.evaluate(() => document.documentElement.scrollHeight > innerHeight + 1)) {
    assert(await page.evaluate(() => document.querySelector('.report').getBoundingClientRect().bottom < 0), 'the page did not scroll');
  }
  await dropBad('random.bin', binary, 'random.bin is not a text file');
  await page.waitForFunction(() => {
    const r = document.querySelector('.report .message.error')?.getBoundingClientRect();
    return r && r.top >= 0 && r.bottom <= innerHeight;
  }, null, { timeout: 3000 }).catch(() => { throw new Error('the error is out of view (the page is scrolled past it)'); });
  await app.screenshot('loading-03-binary.png');
  // The page still works: the TPU module's own controls answer, and a good file replaces all.
  await showTpu();
  assert((await page.locator('.report .message').count()) === 0, 'a message stayed after a good read');
  app.noNewConsoleErrors(before);
});

test('a dump cut mid-line opens, with a warning naming the section left incomplete', async () => {
  await app.load();
  const before = app.consoleErrors.length;
  const lines = readFileSync(TPU, 'latin1').split('\n');
  const header = lines.findIndex((l) => l.trim() === 'BufferLiveRange:');
  assert(header > 0, 'no BufferLiveRange: in the TPU dump');
  const cutLine = header + 8;
  const kept = lines.slice(0, cutLine).join('\n') + '\n' + lines[cutLine].slice(0, Math.floor(lines[cutLine].length / 2));
  const name = 'cut.txt';
  await app.drop([{ name, bytes: Buffer.from(kept, 'latin1') }]);
  await app.waitForOutcome(name);
  assert((await app.shownModule()) === 'cut', `module ${await app.shownModule()}, expected "cut"`);
  assert((await page.locator('.report .message.error').count()) === 0, 'an error instead of a warning');
  const items = await page.locator('.module li').allTextContents();
  const warnings = items.filter((t) => t.startsWith('cut.txt') && /cut short|ends in the middle/.test(t));
  assert(warnings.length > 0, `no warning that the file is cut short among: ${items.slice(0, 5).join(' | ')}`);
  assert(warnings.some((w) => w.includes('BufferLiveRange')), `no warning names the section: ${warnings.join(' | ')}`);
  console.log(`note: warning for the cut dump: ${warnings.join(' | ')}`);
  await app.screenshot('loading-04-truncated.png');
  app.noNewConsoleErrors(before);
});

if (!existsSync(BIG)) {
  test('the 94 MB dump: sliced reading, gzipped, Cancel (needs ../shared)', () =>
    skip(`needs ${BIG} (../shared beside the repo)`));
} else {
  /**
   * Picks `file` (the 94 MB dump, or a gzipped copy) while a frame loop in the page records
   * the longest gap between frames, while reading and at the end; checks and reports.
   */
  /** Loads `file` (a big dump), its slices at most `maxSlice` bytes, and with `firstSlice`
   *  the first read's (the bytes before and after the `Used values` body) in slices of at most
   *  that. */
  async function loadBig(file, label, maxSlice, firstSlice = maxSlice) {
    const before = app.consoleErrors.length;
    const size = statSync(BIG).size;
    const expected = totalBytesUsed(BIG);
    await app.load();
    await showTpu();
    await countSlices();
    await page.evaluate(() => {
      const m = (window.__frames = { reading: 0, end: 0, frames: 0, percents: [], running: true });
      let last = performance.now();
      const tick = () => {
        const now = performance.now();
        const what = document.querySelector('.progress .what')?.textContent ?? '';
        const phase = what.startsWith('Reading') ? 'reading' : 'end';
        m[phase] = Math.max(m[phase], now - last);
        m.frames++;
        const pc = document.querySelector('.progress .percent')?.textContent;
        if (pc && m.percents.at(-1) !== pc) m.percents.push(pc);
        last = now;
        if (m.running) requestAnimationFrame(tick);
      };
      requestAnimationFrame(tick);
    });
    const t0 = Date.now();
    await app.pick(file);
    await app.waitForOutcome(path.basename(file), 240000);
    const seconds = (Date.now() - t0) / 1000;
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    const frames = await page.evaluate(() => { window.__frames.running = false; return window.__frames; });
    const sliced = await slices();
    const memory = await wasmMemory();
    const ms = await page.locator('.report').evaluate((r) => ({ ...r.dataset }));
    console.log(`note: ${label}: loaded in ${seconds.toFixed(1)} s (read ${ms.readMs} ms, parsing ${ms.parseMs} ms of it, join ${ms.joinMs} ms, ` +
      `analyse ${ms.analyseMs} ms); ${sliced.calls} slices of ≤ ${(sliced.largest / 1024).toFixed(0)} KiB ` +
      `(${sliced.inWorker} read by the worker); ` +
      `longest frame gap ${frames.reading.toFixed(0)} ms while reading, ${frames.end.toFixed(0)} ms at the end ` +
      `(joining, analysing, first drawing); ${frames.frames} frames; progress shown: ${frames.percents.length} steps` +
      (memory ? `; wasm memory ${(memory / 2 ** 20).toFixed(0)} MiB` : ''));
    for (const k of ['readMs', 'parseMs', 'joinMs', 'analyseMs']) assert(Number(ms[k]) >= 0, `no ${k} on the report: ${JSON.stringify(ms)}`);
    await app.screenshot(`loading-05-${label.replace(/\W+/g, '-')}.png`);
    assert((await app.shownModule()) === 'cpu_deep_unrolled_500', `module ${await app.shownModule()}`);
    assert((await app.shownTotal()).bytes === expected, 'wrong total bytes');
    // The `Used values` body, when its worker read it (`data-uses-worker-bytes`), is read
    // there in slices of its own; the page reads the rest in its slices.
    const byWorker = Number(ms.usesWorkerBytes) > 0 ? usedValuesBytes(file) : 0;
    const ownBytes = statSync(file).size - byWorker;
    assert(sliced.calls >= Math.ceil(ownBytes / maxSlice), `${sliced.calls} slices for ${ownBytes} bytes`);
    assert(sliced.largest <= maxSlice, `a slice of ${sliced.largest} bytes, over ${maxSlice}`);
    const firstBytes = statSync(file).size - usedValuesBytes(file);
    const small = sliced.sizes.filter((n) => n <= firstSlice).length;
    assert(small >= Math.ceil(firstBytes / firstSlice), `${small} slices of ≤ ${firstSlice} bytes for a first read of ${firstBytes}`);
    assert(sliced.inWorker === sliced.calls, `${sliced.calls - sliced.inWorker} slices read on the page's thread, not by the worker`);
    assert(frames.percents.length >= 5, `the progress showed only ${frames.percents.join(', ')}`);
    // The stalls are printed above, not asserted: timings belong to the benchmark
    // (`./dev bench`), where they are judged against the targets on a known machine.
    // The file is never held whole: the model alone is about 1.1× the file (README); the
    // file on top of it would make the memory over 2×. The same build measures 138–157 MiB
    // for the 94 MB dump from run to run (how far wasm memory grows depends on when each
    // arena chunk is asked for), so the bound sits between that spread and 2×.
    if (memory) assert(memory < 1.9 * size, `wasm memory ${memory} bytes for a ${size}-byte dump`);
    else console.log('note: the wasm memory could not be measured');
    app.noNewConsoleErrors(before);
  }

  test('the 94 MB dump loads in slices (≤ 2 MiB first, ≤ 8 MiB behind), the page stays responsive', () =>
    loadBig(BIG, '94 MB dump', BEHIND_SLICE, SLICE));

  test('the 94 MB dump gzipped (zlib, here) loads in ≤ 256 KiB slices, the page responsive', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'bufscope-big-gz-'));
    try {
      const gz = path.join(dir, `${path.basename(BIG)}.gz`);
      writeFileSync(gz, gzipSync(readFileSync(BIG)));
      await loadBig(gz, `94 MB dump as ${(statSync(gz).size / 1e6).toFixed(1)} MB .gz`, GZ_SLICE);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('Cancel (and Escape) stop reading the 94 MB dump; the TPU module stays open', async () => {
    await app.load();
    const before = app.consoleErrors.length;
    await showTpu();
    for (const how of ['button', 'Escape']) {
      // Slices 100 ms apart: on a fast machine the diagram-first read is past the point of
      // cancelling (its diagram drawn) a few hundred ms after the pick, and a click landing
      // after that found no Cancel button (a CI run failed so).
      await countSlices(100);
      await app.pick(BIG);
      await page.waitForFunction(() => {
        const p = parseInt(document.querySelector('.progress .percent')?.textContent ?? '', 10);
        return p >= 10 && p < 60;
      }, null, { timeout: 60000, polling: 'raf' });
      await app.screenshot(`loading-06-progress-${how}.png`);
      if (how === 'button') await page.locator('.progress button.cancel').click();
      else await page.keyboard.press('Escape');
      await page.locator('.progress').waitFor({ state: 'detached', timeout: 5000 });
      const atCancel = (await slices()).calls;
      await page.waitForTimeout(1500);
      const after = (await slices()).calls;
      assert(after <= atCancel + 1, `${how}: reading went on: ${after - atCancel} more slices after Cancel`);
      assert((await page.locator('.progress').count()) === 0, `${how}: the progress bar came back`);
      const report = await reportText();
      assert(/cancelled/i.test(report), `${how}: the report says "${report}"`);
      assert((await app.shownModule()) === TPU_MODULE, `${how}: the TPU module is no longer on screen`);
    }
    await app.screenshot('loading-07-cancelled.png');
    // A read after a cancelled one works.
    await showTpu();
    app.noNewConsoleErrors(before);
  });
}

test('no request at all once the page has loaded (files given, views used)', async () => {
  const loadedAt = await loadSettled();
  // Use the page: several modules, the picker, the diagrams, keys, dark scheme.
  const dir = path.dirname(fixture('cpu/jax0.10.2/cpu_tiny.buffer-assignment.txt'));
  await app.drop(readdirSync(dir).map((f) => dumpFile(path.join(dir, f))));
  await page.locator('#module-picker').waitFor({ timeout: 20000 });
  await page.locator('#module-picker').click();
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('Enter');
  const canvas = page.locator('.module canvas').first();
  await canvas.waitFor({ timeout: 5000 });
  const box = await canvas.boundingBox();
  for (const f of [0.2, 0.5, 0.8]) await page.mouse.move(box.x + box.width * f, box.y + box.height * 0.7);
  await page.mouse.click(box.x + box.width * 0.5, box.y + box.height * 0.7);
  await page.mouse.wheel(0, 300);
  await page.keyboard.press('Escape');
  const search = page.locator('input[type=search]').first();
  if (await search.count()) await search.fill('fusion');
  await page.emulateMedia({ colorScheme: 'dark' });
  await page.waitForTimeout(300);
  await page.emulateMedia({ colorScheme: 'light' });
  await page.waitForTimeout(300);
  const after = app.requests.slice(loadedAt);
  assert(after.length === 0, `${after.length} requests after the page loaded:\n    ${after.slice(0, 10).join('\n    ')}`);
});

test('without its reading worker (reader.js not served) the app reads on its own thread', async () => {
  await page.route('**/reader.js', (route) => route.fulfill({ status: 404, body: 'gone' }));
  try {
    await app.load();
    await countSlices();
    await app.pick(TPU);
    await app.waitForOutcome(path.basename(TPU));
    assert((await app.shownModule()) === TPU_MODULE, `module ${await app.shownModule()}`);
    assert((await app.shownTotal()).bytes === totalBytesUsed(TPU), 'wrong total bytes');
    assert((await page.locator('.message.error').count()) === 0, 'an error is shown');
    const sliced = await slices();
    assert(sliced.calls > 0 && sliced.inWorker === 0, `slices: ${JSON.stringify(sliced)}`);
  } finally {
    await page.unroute('**/reader.js');
  }
});

/** The size of the page's WebAssembly memory (found through the DevTools protocol), or null. */
async function wasmMemory() {
  try {
    const cdp = await app.context.newCDPSession(page);
    const { result: proto } = await cdp.send('Runtime.evaluate', { expression: 'WebAssembly.Memory.prototype' });
    const { objects } = await cdp.send('Runtime.queryObjects', { prototypeObjectId: proto.objectId });
    const { result } = await cdp.send('Runtime.callFunctionOn', {
      objectId: objects.objectId,
      functionDeclaration: 'function () { return Math.max(0, ...this.map((m) => m.buffer.byteLength)); }',
      returnByValue: true,
    });
    await cdp.detach();
    return result.value || null;
  } catch {
    return null;
  }
}

await run(app);
