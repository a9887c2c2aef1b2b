// Browser tests of the out-of-memory view: pasting an XLA OOM message (anywhere on the page,
// or into the paste box) shows its verdict, every listed buffer and how to get a dump; text
// with no message says what was looked for and leaves the page usable.
//   node tests/e2e/oom.test.mjs http://127.0.0.1:PORT/
// The messages are the hand-written inputs of tests/fixtures/oom/; every figure checked is
// read from the fixture's text here, not from the app. Screenshots go to target/ (the
// 1280×720 view, oom-view.png) and tests/artifacts/.
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { SHARED, TPU, assert, dumpFile, fixture, open, repo, run, skip, test } from './harness.mjs';

const app = await open({ viewport: { width: 1280, height: 720 } });
const { page } = app;

const TPU_LOG = readFileSync(fixture('oom/tpu_compile_two_messages.log'), 'utf8');
const GPU_LOG = readFileSync(fixture('oom/gpu_glog_twice.log'), 'utf8');
const OTHER_LOG = readFileSync(fixture('oom/other_error.log'), 'utf8');

/** Bytes of a size as XLA prints it: `21.50G`, `3.00GiB`, `640B` (1024-based). */
function bytesOf(printed) {
  const m = printed.match(/^(-?[\d.]+)([KMGT]?)(?:iB|B)?$/);
  if (!m) throw new Error(`not a size: ${printed}`);
  return Math.round(Number(m[1]) * 1024 ** ' KMGT'.indexOf(m[2] || ' '));
}

/** A byte count as the page writes it (one decimal, binary units; bufscope::units). */
function human(n) {
  if (n < 1024) return `${n} B`;
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB', 'EiB'];
  let v = n / 1024;
  let u = 1;
  while (v >= 1023.95 && u + 1 < units.length) {
    v /= 1024;
    u++;
  }
  return `${v.toFixed(1)} ${units[u]}`;
}

/** Pastes `text` with a paste event on `selector` (the page's body unless given). */
async function paste(text, selector = 'body') {
  await page.evaluate(
    ({ text, selector }) => {
      const dt = new DataTransfer();
      dt.setData('text/plain', text);
      const target = document.querySelector(selector);
      target.focus?.();
      target.dispatchEvent(new ClipboardEvent('paste', { clipboardData: dt, bubbles: true, cancelable: true }));
    },
    { text, selector },
  );
}

const rows = () => page.locator('.oom tr.oom-buffer').count();

/** Loads the app and pastes the TPU message: the OOM view open, as (b) leaves it. */
async function tpuMessageShown() {
  await app.load();
  await paste(TPU_LOG);
  await page.locator('.oom').waitFor({ timeout: 5000 });
}

/** Drops the TPU dump and waits until it is on screen. */
async function dropTpu() {
  await app.drop([dumpFile(TPU)]);
  await app.waitForOutcome(path.basename(TPU));
}

test('(a) the page loads with the paste box', async () => {
  await app.load();
  await page.locator('.oom-paste summary').waitFor({ timeout: 5000 });
  assert((await page.locator('.oom').count()) === 0, 'an OOM view before anything was pasted');
  app.noNewConsoleErrors(0);
});

test('(b) a TPU message pasted anywhere shows its verdict, every listed buffer and the way to a dump', async () => {
  await app.load();
  const before = app.consoleErrors.length;
  await paste(TPU_LOG);
  await page.locator('.oom').waitFor({ timeout: 5000 });
  // Every `N. Size:` entry of the log is a row.
  const entries = TPU_LOG.match(/^\s*\d+\. Size: /gm).length;
  assert(entries === 6, `the fixture has ${entries} entries`);
  assert((await rows()) === entries, `${await rows()} rows for ${entries} listed buffers`);
  const messages = TPU_LOG.match(/Ran out of memory in memory space (\w+)\. Used (\S+) of (\S+) \w+\. Exceeded \w+ capacity by (\S+)\.(?=\s|$)/g);
  assert((await page.locator('.oom-message').count()) === messages.length, 'not one article per message');
  // The first message's verdict: used, capacity and excess, as the page writes them.
  const [, , used, cap, over] = messages[0].match(/space (\w+)\. Used (\S+) of (\S+) \w+\. Exceeded \w+ capacity by (\S+)\.(?=\s|$)/);
  const verdict = await page.locator('.oom-message').first().locator('.oom-verdict').textContent();
  for (const figure of [used, cap, over]) {
    assert(verdict.includes(human(bytesOf(figure))), `verdict "${verdict}" lacks ${human(bytesOf(figure))} (${figure})`);
  }
  assert(/too much/.test(verdict) && verdict.includes('hbm'), `verdict "${verdict}"`);
  // The first message's rows, in order, with their sizes.
  const firstSizes = [...TPU_LOG.split('Largest program allocations in vmem')[0].matchAll(/^\s*\d+\. Size: (\S+)/gm)].map((m) => human(bytesOf(m[1])));
  const shown = await page.locator('.oom-message').first().locator('tr.oom-buffer td:nth-child(3)').allTextContents();
  assert(JSON.stringify(shown) === JSON.stringify(firstSizes), `sizes ${JSON.stringify(shown)}, the log says ${JSON.stringify(firstSizes)}`);
  // The padding column: `Extra memory due to padding: 1.34G (9.6x expansion)`.
  const pad = TPU_LOG.match(/Extra memory due to padding: (\S+) \((\S+)x expansion\)/);
  const table = await page.locator('.oom-message').first().locator('table.oom-buffers').textContent();
  assert(table.includes(`${human(bytesOf(pad[1]))} (${pad[2]}×)`), `no padding ${pad[1]} in the table`);
  // What the message cannot show, and the dump that can.
  const limits = await page.locator('.oom-limits').first().textContent();
  for (const words of ['no time axis', 'XLA_FLAGS=--xla_dump_to=', '*-buffer-assignment.txt', '*-buffer-assignment-values.txt', '*-live-range.txt', '*jit_train_step*']) {
    assert(limits.includes(words), `the limits paragraph lacks "${words}": "${limits}"`);
  }
  const outDir = path.join(repo, 'target');
  mkdirSync(outDir, { recursive: true });
  await page.screenshot({ path: path.join(outDir, 'oom-view.png') });
  await page.screenshot({ path: path.join(outDir, 'oom-view-full.png'), fullPage: true });
  app.noNewConsoleErrors(before);
});

test('(c) a GPU message typed into the paste box: rows, verdict, layers folded by op_name', async () => {
  await app.load();
  const before = app.consoleErrors.length;
  await page.locator('.oom-paste summary').click();
  await page.locator('#oom-text').fill(GPU_LOG);
  await page.locator('#oom-read').click();
  await page.waitForFunction(() => document.querySelector('.oom-from')?.textContent === 'from pasted text'
    && document.querySelectorAll('.oom-message').length === 2, null, { timeout: 5000 });
  const entries = GPU_LOG.match(/\tBuffer \d+:/g).length;
  assert((await rows()) === entries, `${await rows()} rows for ${entries} listed buffers`);
  const request = Number(GPU_LOG.match(/trying to allocate (\d+) bytes/)[1]);
  const verdict = await page.locator('.oom-verdict').first().textContent();
  assert(verdict.includes(human(request)), `verdict "${verdict}" lacks the request ${human(request)}`);
  // layers_10 and layers_11 fold into one op_name group whose size is their sum.
  const layers = [...GPU_LOG.split('retrying')[0].matchAll(/Size: (\S+)\n.*Operator: op_name="[^"]*layers_\d+/g)].map((m) => bytesOf(m[1]));
  assert(layers.length === 2, `${layers.length} layer buffers in the fixture`);
  const group = page.locator('.oom-message').first().locator('.oom-grouping').first().locator('.oom-group', { hasText: 'layers_#' });
  const groupText = await group.textContent();
  assert(groupText.includes(human(layers[0] + layers[1])) && groupText.includes('2 layers folded'), `group "${groupText}"`);
  // Coverage of `total allocation`.
  const listed = [...GPU_LOG.split('retrying')[0].matchAll(/\tSize: (\S+)/g)].reduce((s, m) => s + bytesOf(m[1]), 0);
  const total = bytesOf(GPU_LOG.match(/total allocation:\s+(\S+)/)[1]);
  const coverage = await page.locator('.oom-coverage').first().textContent();
  assert(coverage.includes(`${Math.round((listed / total) * 100)}% of the total allocation`), `coverage "${coverage}"`);
  app.noNewConsoleErrors(before);
});

test('(c2) a message cut inside its second buffer shows what was read and warns of the cut', async () => {
  await app.load();
  const before = app.consoleErrors.length;
  const lines = TPU_LOG.split('\n');
  const second = lines.findIndex((l) => l.includes('  2. Size:'));
  await paste(lines.slice(0, second + 3).join('\n'));
  await page.waitForFunction(() => document.querySelectorAll('.oom-message').length === 1, null, { timeout: 5000 });
  assert((await rows()) === 2, `${await rows()} rows for the two buffers begun before the cut`);
  const warning = await page.locator('.oom-warnings').textContent();
  assert(warning.includes('buffer 2 is cut'), `warning "${warning}"`);
  app.noNewConsoleErrors(before);
});

test('(d) text with no message says what was looked for; the page stays usable', async () => {
  await tpuMessageShown();
  const before = app.consoleErrors.length;
  await paste(OTHER_LOG);
  const miss = page.locator('.oom-miss');
  await miss.waitFor({ timeout: 5000 });
  const sentence = await miss.textContent();
  for (const words of ['BufferAssignment OOM Debugging.', 'Ran out of memory in memory space', 'Attempting to reserve']) {
    assert(sentence.includes(words), `"${sentence}" does not name ${words}`);
  }
  assert((await rows()) > 0, 'the messages read before are gone');
  // A dump still opens, below the messages.
  await dropTpu();
  assert((await app.shownModule()) === path.basename(TPU, '.txt'), 'the TPU dump did not open');
  app.noNewConsoleErrors(before);
});

test('(e) a paste into the search box is not read as a message; Close closes the view', async () => {
  // Messages read and the TPU dump opened below them, as (d) leaves the page.
  await tpuMessageShown();
  await dropTpu();
  await page.locator('.oom-close').click();
  assert((await page.locator('.oom').count()) === 0, 'Close left the OOM view');
  await paste(TPU_LOG, '#search');
  await page.waitForTimeout(300);
  assert((await page.locator('.oom').count()) === 0, 'a paste into the search box opened the OOM view');
  assert((await app.shownModule()) === path.basename(TPU, '.txt'), 'the module on screen changed');
});

test('(f) a log file picked or dropped is read for its messages; the module on screen stays', async () => {
  await app.load();
  await dropTpu();
  const before = app.consoleErrors.length;
  await app.pick([fixture('oom/tpu_compile_two_messages.log')]);
  await app.waitForOutcome('tpu_compile_two_messages.log');
  await page.locator('.oom').waitFor({ timeout: 5000 });
  const expected = (TPU_LOG.match(/^\s*\d+\. Size: /gm) || []).length;
  assert(expected > 0, 'the fixture lists no buffer');
  assert((await rows()) === expected, `${await rows()} buffer rows for ${expected} listed buffers`);
  assert((await page.locator('.oom').textContent()).includes('tpu_compile_two_messages.log'), 'the view does not name the file');
  assert((await page.locator('.message.error').count()) === 0, 'a log of OOM messages was reported as an error');
  assert((await app.shownModule()) === path.basename(TPU, '.txt'), 'the module on screen changed');
  app.noNewConsoleErrors(before);
});

test('(g) today\'s E1000 one-liner pasted: used, capacity and the computed excess, the program, no buffers', async () => {
  await app.load();
  const before = app.consoleErrors.length;
  const line = readFileSync(fixture('oom/tpu_e1000.log'), 'utf8');
  const [, used, cap, module] = line.match(/required for HLO temporaries \((\S+)\) exceeds available HBM \((\S+)\)\. HLO module: (\w+)\./);
  await paste(line);
  await page.locator('.oom .oom-message').first().waitFor({ timeout: 5000 });
  assert((await page.locator('.oom-message').count()) === 1, 'not one message');
  const article = page.locator('.oom-message').first();
  assert((await article.locator('h3').textContent()).includes('E1000'), 'the heading does not name E1000');
  const verdict = await article.locator('.oom-verdict').textContent();
  // 24.35G − 15.75G = 8.60G: the excess the message does not print, computed.
  const over = bytesOf(used) - bytesOf(cap);
  for (const n of [bytesOf(used), bytesOf(cap), over]) {
    assert(verdict.includes(human(n)), `verdict "${verdict}" lacks ${human(n)}`);
  }
  assert((await article.locator('.oom-module').textContent()).includes(module), `no program ${module}`);
  assert((await rows()) === 0, 'buffer rows for a message that lists none');
  const limits = await page.locator('.oom-limits').textContent();
  assert(limits.includes('lists no buffers') && limits.includes(`*${module}*`), `limits "${limits}"`);
  await page.screenshot({ path: path.join(repo, 'target', 'oom-e1000.png') });
  app.noNewConsoleErrors(before);
});

test('(h) compiler notes pasted: what remat reached and needed, the involuntary full rematerialization', async () => {
  await app.load();
  const log = readFileSync(fixture('oom/compiler_notes.log'), 'utf8');
  await paste(log);
  await page.locator('.oom-compiler-notes li').first().waitFor({ timeout: 5000 });
  const items = await page.locator('.oom-compiler-notes li').allTextContents();
  assert(items.length === 2, `${items.length} notes`);
  const [, target, reached, original] = log.match(/below ([\d.]+)GiB .* only reduced to ([\d.]+)GiB .* down from ([\d.]+)GiB/);
  assert(items[0] === `remat got the program from ${original} GiB to ${reached} GiB; it needed ${target} GiB`, items[0]);
  assert(items[1].startsWith('dot.12 (') && items[1].includes('{devices=[1,4]<=[4]}'), items[1]);
});

test('(i) a real GPU job log (../shared): the BFC warning, the status and the exception are one message', async () => {
  // Other people's log, read from ../shared/dumps/oom, never copied (issue 34.8).
  const log = path.join(SHARED, 'dumps', 'oom', 'TheDingodile__ML_final__a80test_0.md');
  if (!existsSync(log)) skip(`needs ${log} (../shared beside the repo)`);
  await app.load();
  const before = app.consoleErrors.length;
  const lines = readFileSync(log, 'utf8').split('\n');
  const warning = lines.findIndex((l) => l.includes('ran out of memory trying to allocate')) + 1;
  const again = lines.findIndex((l) => l.includes('Error: RESOURCE_EXHAUSTED')) + 1;
  assert(warning > 0 && again > warning, `lines ${warning}, ${again}`);
  await app.pick([log]);
  await app.waitForOutcome(path.basename(log));
  await page.locator('.oom .oom-message').first().waitFor({ timeout: 5000 });
  assert((await page.locator('.oom-message').count()) === 1, `${await page.locator('.oom-message').count()} messages`);
  const heading = await page.locator('.oom-message h3').textContent();
  assert(heading.includes(`lines ${warning}–`) && heading.includes(`printed again at line ${again}`), heading);
  const notes = await page.locator('.oom-message .oom-notes').textContent();
  assert(notes.includes('Allocator (GPU_0_bfc) ran out of memory'), notes);
  const listed = lines.slice(0, again).filter((l) => /^\s*Buffer \d+:$/.test(l)).length;
  assert((await rows()) === listed, `${await rows()} rows for ${listed} buffers`);
  app.noNewConsoleErrors(before);
});

await run(app);
