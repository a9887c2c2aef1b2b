// Browser tests of hostile input: a 0-byte file, binary files (random bytes, a PNG), a
// single line of 300,000 characters, valid dumps with a 300,000-character op_name or value
// name, and a dump whose names, metadata and file name carry HTML and script. Each gives a
// clear message or the correct module; dump text is shown as text, never parsed as HTML or
// run; the page stays usable (after each, the TPU fixture loads and its diagram is drawn).
//   node tests/e2e/hardening.test.mjs http://127.0.0.1:PORT/   (tests/e2e/run.sh runs it)
// Screenshots go to tests/artifacts/hardening-*.png. The native side of the hostile dump
// (the SVG of `bufscope render`, the JSON of `bufscope summary --json`) is tests/hostile.rs,
// which builds the same dump.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { CPU, TPU, artifacts, assert, dumpFile, ink as canvasInk, open, run, search as searchFor, test, totalBytesUsed } from './harness.mjs';

const app = await open();
const { page } = app;
const TPU_MODULE = path.basename(TPU, '.txt');
const TINY = readFileSync(CPU, 'latin1');

// What the app's own page holds that a dump could try to add.
const WATCHED = 'img, script, iframe, frame, object, embed, svg, foreignObject, style, link, meta, base, form, b';

/** Deterministic bytes (mulberry32), so a failure reproduces. */
function seededBytes(n, seed) {
  const out = Buffer.alloc(n);
  let a = seed >>> 0;
  for (let i = 0; i < n; i++) {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    out[i] = (t ^ (t >>> 14)) & 0xff;
  }
  return out;
}

const frame = () => page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));

const ink = (color) => canvasInk(page, color);

/** Starts recording the longest gap between animation frames. */
async function watchFrames() {
  await page.evaluate(() => {
    const m = (window.__gaps = { longest: 0, running: true });
    let last = performance.now();
    const tick = (t) => {
      m.longest = Math.max(m.longest, t - last);
      last = t;
      if (m.running) requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  });
}
/** Stops recording; the longest gap in ms. */
const longestGap = () => page.evaluate(() => { window.__gaps.running = false; return window.__gaps.longest; });

/** The page still works: the TPU fixture opens, its diagram is drawn and a row selects. */
async function usable(label) {
  const before = app.consoleErrors.length;
  await app.drop([dumpFile(TPU)]);
  await app.waitForOutcome(path.basename(TPU));
  assert((await app.shownModule()) === TPU_MODULE, `after ${label}: the TPU module is not on screen`);
  assert((await app.shownTotal()).bytes === totalBytesUsed(TPU), `after ${label}: wrong total bytes`);
  assert((await page.locator('.report .message').count()) === 0, `after ${label}: a message stayed after a good read`);
  await page.locator('.diagram[data-color="0"]').scrollIntoViewIfNeeded();
  await page.waitForFunction(() => document.querySelector('.diagram[data-color="0"]')?.dataset.view, null, { timeout: 10000 });
  await frame();
  const share = await ink(0);
  assert(share > 0.03, `after ${label}: the TPU diagram is nearly blank (${(share * 100).toFixed(2)}%)`);
  const row = page.locator('#peak-table tr.value-row').first();
  await row.click();
  await page.locator('#details .details-name').waitFor({ timeout: 5000 });
  const name = await row.locator('td.name').textContent();
  assert((await page.locator('#details .details-name').textContent()) === name, `after ${label}: clicking a row did not select it`);
  await page.evaluate(() => scrollTo(0, 0));
  app.noNewConsoleErrors(before);
}

/** The page does not scroll sideways: no line of it is wider than the window. */
async function noSidewaysScroll(label) {
  const { sw, iw } = await page.evaluate(() => ({ sw: document.documentElement.scrollWidth, iw: innerWidth }));
  assert(sw <= iw, `${label}: the page is ${sw}px wide in a ${iw}px window`);
}

/** Drops one file that is not a dump; its error is one clear sentence naming it. */
async function dropBad(name, bytes, expected, { pick = false } = {}) {
  const before = app.consoleErrors.length;
  const t0 = Date.now();
  if (pick) await app.pick({ name, mimeType: 'application/octet-stream', buffer: bytes });
  else await app.drop([{ name, bytes }]);
  await app.waitForOutcome(name);
  const ms = Date.now() - t0;
  const error = page.locator('.report .message.error');
  await error.waitFor({ timeout: 5000 });
  assert(await error.isVisible(), `the error for ${name} is not visible`);
  const items = await error.locator('li').allTextContents();
  assert(items.length === 1, `${items.length} error items for ${name}: ${items.join(' | ')}`);
  const [text] = items;
  assert(expected.some((e) => text.includes(e)), `error for ${name}: "${text}", expected one of ${JSON.stringify(expected)}`);
  assert(text.startsWith(name), `the error does not start with the file's name: "${text}"`);
  // One sentence: it ends with a full stop, and none ends before (file names aside).
  const rest = text.slice(name.length);
  assert(/\.$/.test(rest) && !/[.!?]\s/.test(rest.replace(/`[^`]*`/g, '')), `not one sentence: "${text}"`);
  assert(text.length < 300, `the error is ${text.length} characters long`);
  app.noNewConsoleErrors(before);
  return ms;
}

// ---------------------------------------------------------------- injection watch

/** What a hostile dump could have added to the page (compared with `baseline`). */
function pageFacts() {
  return page.evaluate((watched) => {
    const counts = {};
    for (const e of document.querySelectorAll(watched)) counts[e.localName] = (counts[e.localName] || 0) + 1;
    const handlers = [];
    for (const e of document.querySelectorAll('*')) {
      for (const a of e.attributes) {
        if (/^on/i.test(a.name) || /^\s*javascript:/i.test(a.value)) handlers.push(`<${e.localName} ${a.name}="${a.value.slice(0, 60)}">`);
      }
    }
    const styles = [...document.querySelectorAll('[style]')]
      .map((e) => e.getAttribute('style'))
      .filter((s) => /url\(|expression|import/i.test(s));
    return { counts, handlers, styles, pwned: window.__pwned, csp: window.__csp ?? [] };
  }, WATCHED);
}
/** What the running test's page held when it loaded, and its requests by then. */
let baseline = null;
let requestsAt = 0;

/** Loads the app with its CSP violations recorded (window.__csp) and records what the
 *  page holds (`baseline`) and its requests so far (`requestsAt`), as every test starts. */
async function loadWatched() {
  await app.context.addInitScript(() => {
    window.__csp = [];
    document.addEventListener('securitypolicyviolation', (e) => {
      window.__csp.push({ directive: e.violatedDirective, blocked: e.blockedURI, sample: e.sample });
    }, true);
  });
  await app.load();
  await page.waitForTimeout(300);
  baseline = await pageFacts();
  requestsAt = app.requests.length;
  assert(baseline.pwned === undefined && baseline.handlers.length === 0, `the page itself: ${JSON.stringify(baseline)}`);
  assert(Array.isArray(baseline.csp) && baseline.csp.length === 0, `CSP violations while loading: ${JSON.stringify(baseline.csp)}`);
}

/** Nothing ran, nothing was added, the CSP blocked nothing, and no request was made. */
async function nothingInjected(label) {
  const f = await pageFacts();
  assert(f.pwned === undefined, `${label}: window.__pwned = ${f.pwned}: the dump's script ran`);
  for (const [tag, n] of Object.entries(f.counts)) {
    assert(n <= (baseline.counts[tag] || 0), `${label}: ${n} <${tag}> elements, ${baseline.counts[tag] || 0} before`);
  }
  assert(f.handlers.length === 0, `${label}: event-handler attributes in the page: ${f.handlers.join(' ')}`);
  assert(f.styles.length === 0, `${label}: suspicious inline styles: ${f.styles.join(' ')}`);
  assert(f.csp.length === 0, `${label}: the Content-Security-Policy blocked: ${JSON.stringify(f.csp)}`);
  const csp = [...app.consoleErrors, ...app.consoleWarnings].filter((m) => /Content.Security.Policy|Refused to/i.test(m));
  assert(csp.length === 0, `${label}: CSP messages in the console: ${csp.join(' | ')}`);
  const fresh = app.requests.slice(requestsAt);
  assert(fresh.length === 0, `${label}: requests after the page loaded: ${fresh.join(', ')}`);
}

// ---------------------------------------------------------------- the hostile dump

// Instruction names may hold anything but ` {}<>:,` and tab (the parser's delimiters);
// metadata strings hold anything (quotes CEscaped). The same strings as tests/hostile.rs.
const NAME_ATTR = 'a"onmouseover="window.__pwned=1;"x';
const NAME_ENTITY = '&lt;img/src=x/onerror=window.__pwned=1&gt;&amp;';
const NAME_JS = "');window.__pwned=1;//'";
const OP_IMG = '<img src=x onerror=window.__pwned=1>';
const OP_SVG = `"'><svg onload=window.__pwned=1>`;
const SRC_SCRIPT = '</td><script>window.__pwned=1</script>';
const MODULE = `<svg onload=window.__pwned=1>&amp;"'`;
const HOSTILE_FILE = `${MODULE}.buffer-assignment.txt`;
const JUNK_LINE = '<script>window.__pwned=1</script><img src=x onerror=window.__pwned=1>';

function hostileDump() {
  const rep = (s, from, to) => s.split(from).join(to);
  let d = TINY;
  d = rep(d, 'Arg_1.2', NAME_ATTR);
  d = rep(d, 'Arg_0.1', NAME_ENTITY);
  d = rep(d, 'broadcast_add_fusion', NAME_JS);
  d = rep(d, 'metadata={op_name="y"}', `metadata={op_name="${OP_IMG}" source_file="${SRC_SCRIPT}" source_line=7}`);
  d = rep(d, 'metadata={op_name="x"}', `metadata={op_name="${OP_SVG.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"}`);
  d = rep(d, 'source_file="/home/user/models/programs.py"', `source_file="${SRC_SCRIPT}"`);
  d = rep(d, 'Total bytes used:', `${JUNK_LINE}\nTotal bytes used:`);
  for (const s of [NAME_ATTR, NAME_ENTITY, NAME_JS, OP_IMG, SRC_SCRIPT]) assert(d.includes(s), `the hostile dump lost ${s}`);
  return Buffer.from(d, 'latin1');
}

const search = (text) => searchFor(page, text);

const rowOf = (name) => page.locator('#peak-table tr.value-row').filter({ has: page.locator('td.name', { hasText: name }) });

// ---------------------------------------------------------------- tests

test('the page loads; what it holds is recorded', async () => {
  await loadWatched();
  app.noNewConsoleErrors(0);
});

test('a 0-byte file: one clear sentence; then a real dump opens', async () => {
  await loadWatched();
  await dropBad('empty.buffer-assignment.txt', Buffer.alloc(0), ['is empty'], { pick: true });
  assert((await app.shownModule()) === null, 'a module on screen after an empty file on a fresh page');
  await app.screenshot('hardening-01-empty.png');
  await dropBad('zero.txt', Buffer.alloc(0), ['is empty']);
  await nothingInjected('0-byte file');
  await usable('a 0-byte file');
});

test('binary files (random bytes, a PNG): one clear sentence; the module stays; usable', async () => {
  await loadWatched();
  // The TPU module on screen, to stay there.
  await app.drop([dumpFile(TPU)]);
  await app.waitForOutcome(path.basename(TPU));
  const random = seededBytes(256 * 1024, 7);
  random[0] = 0; // not the gzip magic
  const notText = ['is not a text file'];
  await dropBad('random.bin', random, notText);
  assert((await app.shownModule()) === TPU_MODULE, 'the TPU module left the screen after a binary file');
  const kept = await page.locator('.report .message.kept').textContent();
  assert(kept.includes(path.basename(TPU)), `no note that the TPU dump is still shown: "${kept}"`);
  await app.screenshot('hardening-02-random.png');
  // A PNG: signature, an IHDR chunk, then compressed-looking bytes.
  const png = Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    Buffer.from('0000000d49484452000004000000030008060000007a1f4a2b', 'hex'),
    seededBytes(64 * 1024, 11),
  ]);
  await dropBad('screenshot.png', png, notText);
  // A gzip magic followed by garbage, and the magic alone: the gzip data is said corrupt.
  const corruptGz = ['gzip-compressed, but its gzip data is corrupt'];
  const badGz = Buffer.concat([Buffer.from([0x1f, 0x8b, 0x08, 0x00]), seededBytes(32 * 1024, 3)]);
  await dropBad('dump.buffer-assignment.txt.gz', badGz, corruptGz);
  await dropBad('cut.buffer-assignment.txt.gz', Buffer.from([0x1f, 0x8b]), corruptGz);
  await app.screenshot('hardening-03-png.png');
  await nothingInjected('binary files');
  await usable('binary files');
});

test('one line of 300,000 characters: a clear message and the page usable (times printed)', async () => {
  await loadWatched();
  await watchFrames();
  const ms = await dropBad('one-line.txt', Buffer.from('x'.repeat(300000)), ['is not an XLA buffer-assignment dump']);
  const gap = await longestGap();
  console.log(`note: 300,000-character line: outcome in ${ms} ms, longest frame gap ${gap.toFixed(0)} ms`);
  // The same line ending in a newline, made of markup: the message, nothing rendered.
  const markup = '<img src=x onerror=window.__pwned=1>'.repeat(Math.ceil(300000 / 36)).slice(0, 300000) + '\n';
  await dropBad('markup-line.txt', Buffer.from(markup), ['is not an XLA buffer-assignment dump']);
  await app.screenshot('hardening-04-long-line.png');
  await nothingInjected('a 300,000-character line');
  await usable('a 300,000-character line');
});

/** Drops `dump` (the tiny dump, edited) as MODULE.buffer-assignment.txt, checks the module
 *  opened with its 12,288 bytes, and returns how long that took, in ms. */
async function openTiny(module, dump) {
  const name = `${module}.buffer-assignment.txt`;
  await watchFrames();
  const t0 = Date.now();
  await app.drop([{ name, bytes: Buffer.from(dump, 'latin1') }]);
  await app.waitForOutcome(name);
  const ms = Date.now() - t0;
  assert((await app.shownModule()) === module, `module ${await app.shownModule()}`);
  assert((await app.shownTotal()).bytes === 12288, 'wrong total bytes');
  return ms;
}

/** Hovers the block of value `name` in memory space 0 and returns the tooltip's box. */
async function hoverBlock(name) {
  await page.locator('.diagram[data-color="0"]').scrollIntoViewIfNeeded();
  await frame();
  const p = await page.evaluate((n) => window.__bufscope_block_px(0, n), name);
  assert(p, `no block for ${name.slice(0, 40)}`);
  await page.mouse.move(p.x - 2, p.y);
  await page.mouse.move(p.x, p.y);
  await page.waitForFunction(() => document.querySelector('#tooltip')?.classList.contains('shown'), null, { timeout: 5000 });
  return page.locator('#tooltip').boundingBox();
}

test('a dump with a 300,000-character op_name (its `from instruction:` line): the module, usable', async () => {
  await loadWatched();
  const before = app.consoleErrors.length;
  const op = 'jit(f)/' + 'very_long_scope/'.repeat(18750).slice(0, 300000 - 7);
  assert(op.length === 300000, 'op_name length');
  const dump = TINY.replace('metadata={op_name="y"}', `metadata={op_name="${op}" source_file="/tmp/${'s'.repeat(1000)}.py" source_line=1}`);
  const ms = await openTiny('long_op', dump);
  assert((await page.locator('.report .message.error').count()) === 0, 'an error is shown');
  await noSidewaysScroll('a 300,000-character op_name');
  // The table row keeps its height; the op cell holds the whole op_name as text.
  const row = rowOf('Arg_1.2');
  const box = await row.boundingBox();
  assert(box && box.height < 60, `the row with the long op_name is ${box?.height}px tall`);
  // The cell shows the op_name's start and end (it is cut at its start on screen), its title
  // the whole op_name.
  const cell = row.locator('td.op');
  assert((await cell.getAttribute('title')) === op, 'the op cell\'s title is not the op_name');
  const shownOp = await cell.textContent();
  assert(shownOp.length <= 1000 && shownOp.startsWith('jit(f)/') && shownOp.endsWith(op.slice(-200)),
    `the op cell shows ${shownOp.length} characters: ${shownOp.slice(0, 40)}…${shownOp.slice(-40)}`);
  // Details: the whole op_name, inside the details pane (which scrolls).
  await row.click();
  await page.locator('#details .op-name').waitFor({ timeout: 5000 });
  assert((await page.locator('#details .op-name').textContent()) === op, 'details do not show the op_name');
  const pane = await page.locator('#details').boundingBox();
  assert(pane && pane.height < 1200, `the details pane is ${pane?.height}px tall`);
  // Hover its block: the tooltip stays within the window.
  const tip = await hoverBlock('Arg_1.2');
  const vh = page.viewportSize().height;
  assert(tip && tip.height < vh, `the tooltip is ${tip?.height}px tall (window ${vh}px)`);
  const tipText = await page.locator('#tooltip').textContent();
  assert(tipText.includes('jit(f)/very_long_scope/'), `the tooltip does not show the op_name: ${tipText.slice(0, 200)}`);
  await page.screenshot({ path: path.join(artifacts, 'hardening-05-long-op-hover.png') });
  await page.mouse.move(5, 5);
  // Group by op_name: the group row keeps its height.
  await page.locator('#group-op').check();
  const group = page.locator('#peak-table tr.group-row').filter({ hasText: 'very_long_scope' });
  await group.waitFor({ timeout: 5000 });
  const gbox = await group.boundingBox();
  assert(gbox && gbox.height < 60, `the group row is ${gbox?.height}px tall`);
  await page.locator('#group-op').uncheck();
  // Search runs over the op_name quickly.
  const s0 = Date.now();
  await search('^jit\\(f\\)/(very_long_scope/)+very_long$');
  const count = await page.locator('#search-status .search-count').getAttribute('data-count');
  assert(count === '1', `search over the long op_name: ${count} matches`);
  console.log(`note: 300,000-character op_name: opened in ${ms} ms, searched in ${Date.now() - s0} ms, longest frame gap ${(await longestGap()).toFixed(0)} ms`);
  await search('');
  await app.screenshot('hardening-05-long-op.png');
  app.noNewConsoleErrors(before);
  await nothingInjected('a 300,000-character op_name');
  await usable('a 300,000-character op_name');
});

test('a dump with a 300,000-character value name: the module, usable', async () => {
  await loadWatched();
  const before = app.consoleErrors.length;
  const long = 'n'.repeat(299990) + '_fusion.1';
  const dump = TINY.split('broadcast_add_fusion').join(long);
  const ms = await openTiny('long_name', dump);
  await noSidewaysScroll('a 300,000-character name');
  const row = rowOf('_fusion.1');
  const box = await row.boundingBox();
  assert(box && box.height < 60, `the row with the long name is ${box?.height}px tall`);
  await row.click();
  await page.locator('#details .details-name').waitFor({ timeout: 5000 });
  assert((await page.locator('#details .details-name').textContent()) === long, 'details do not show the name');
  const pane = await page.locator('#details').boundingBox();
  assert(pane && pane.height < 1200, `the details pane is ${pane?.height}px tall`);
  await noSidewaysScroll('a 300,000-character name, selected');
  const tip = await hoverBlock(long);
  const vh = page.viewportSize().height;
  assert(tip && tip.height < vh, `the tooltip is ${tip?.height}px tall (window ${vh}px)`);
  const hover = await page.locator('.hover-line').boundingBox();
  assert(hover && hover.height < 100, `the hover line is ${hover?.height}px tall`);
  await page.screenshot({ path: path.join(artifacts, 'hardening-06-long-name-hover.png') });
  await page.mouse.move(5, 5);
  console.log(`note: 300,000-character value name: opened in ${ms} ms, longest frame gap ${(await longestGap()).toFixed(0)} ms`);
  app.noNewConsoleErrors(before);
  await nothingInjected('a 300,000-character name');
  await usable('a 300,000-character name');
});

test('a dump with HTML and script in its names, metadata and file name: shown as text, never run', async () => {
  await loadWatched();
  const before = app.consoleErrors.length;
  await app.drop([{ name: HOSTILE_FILE, bytes: hostileDump() }]);
  await app.waitForOutcome(HOSTILE_FILE);
  // The module opens, named after its file, literally.
  assert((await app.shownModule()) === MODULE, `module ${JSON.stringify(await app.shownModule())}, expected ${JSON.stringify(MODULE)}`);
  assert((await app.shownTotal()).bytes === 12288, 'wrong total bytes');
  assert((await page.locator('.module .module-files').textContent()) === HOSTILE_FILE, 'the file name is not shown literally');
  // The line of markup is a warning (the file name quoted literally), not markup.
  const warnings = await page.locator('.module .warnings li').allTextContents();
  assert(warnings.length > 0, 'no warning for the line of markup');
  assert(warnings.every((w) => w.startsWith(HOSTILE_FILE)), `warnings: ${warnings.join(' | ')}`);
  // The table: names, op_names and sources as text (and as titles).
  const names = await page.locator('#peak-table tr.value-row td.name').allTextContents();
  for (const n of [NAME_ATTR, NAME_ENTITY, NAME_JS]) assert(names.includes(n), `${n} not among the rows: ${JSON.stringify(names)}`);
  const titles = await page.locator('#peak-table tr.value-row td.name').evaluateAll((tds) => tds.map((td) => td.title));
  for (const n of [NAME_ATTR, NAME_ENTITY, NAME_JS]) assert(titles.includes(n), `${n} not among the titles: ${JSON.stringify(titles)}`);
  const ops = await page.locator('#peak-table tr.value-row td.op').allTextContents();
  for (const o of [OP_IMG, OP_SVG]) assert(ops.includes(o), `${o} not among the op cells: ${JSON.stringify(ops)}`);
  const sources = await page.locator('#peak-table tr.value-row td.source').allTextContents();
  assert(sources.includes(`${SRC_SCRIPT}:7`), `the source is not shown literally: ${JSON.stringify(sources)}`);
  // Details of each value: the raw strings.
  for (const [n, expect] of [[NAME_ATTR, [OP_IMG, `${SRC_SCRIPT}:7`]], [NAME_ENTITY, [OP_SVG]], [NAME_JS, [SRC_SCRIPT]]]) {
    await rowOf(n).first().click();
    await page.waitForFunction((n) => document.querySelector('#details .details-name')?.textContent === n, n, { timeout: 5000 });
    const text = await page.locator('#details').textContent();
    for (const e of [n, ...expect]) assert(text.includes(e), `#details of ${n} does not contain ${e}`);
  }
  await app.screenshot('hardening-07-hostile.png');
  // Grouped by op_name: the group names as text.
  await page.locator('#group-op').check();
  const groups = await page.locator('#peak-table tr.group-row .group-name').allTextContents();
  for (const o of [OP_IMG, OP_SVG]) assert(groups.includes(o), `${o} not among the groups: ${JSON.stringify(groups)}`);
  await page.locator('#peak-table tr.group-row .group-toggle').first().click();
  await app.screenshot('hardening-08-hostile-grouped.png');
  await page.locator('#group-op').uncheck();
  // The tooltip of each block, and the hover line. (Selecting a row zoomed the diagram to
  // it: reset the view with the 0 key first.)
  await page.evaluate(() => document.activeElement?.blur());
  await page.locator('.diagram[data-color="0"]').scrollIntoViewIfNeeded();
  await page.keyboard.press('0');
  await page.waitForFunction((names) => names.every((n) => window.__bufscope_block_px(0, n)),
    [NAME_ENTITY, NAME_ATTR, NAME_JS], { timeout: 5000 })
    .catch(() => { throw new Error('the blocks of the hostile dump are not all in view after 0'); });
  await frame();
  for (const [n, op] of [[NAME_ENTITY, OP_SVG], [NAME_ATTR, OP_IMG], [NAME_JS, null]]) {
    const p = await page.evaluate((n) => window.__bufscope_block_px(0, n), n);
    assert(p, `no block for ${n}`);
    await page.mouse.move(p.x - 2, p.y);
    await page.mouse.move(p.x, p.y);
    await page.waitForFunction((n) => document.querySelector('#tooltip.shown .tip-name')?.textContent === n, n, { timeout: 5000 });
    const tip = await page.locator('#tooltip').textContent();
    if (op) assert(tip.includes(op), `the tooltip of ${n} does not show ${op}: ${tip}`);
    const line = await page.locator('.hover-line').textContent();
    assert(line.startsWith(n), `the hover line does not start with ${n}: ${line}`);
  }
  await page.screenshot({ path: path.join(artifacts, 'hardening-09-hostile-tooltip.png') });
  await page.mouse.move(5, 5);
  await page.evaluate(() => scrollTo(0, 0));
  // The search box: markup typed in is a pattern, not HTML.
  await search('<b>x</b>');
  assert((await page.locator('#search').inputValue()) === '<b>x</b>', 'the search box changed what was typed');
  assert((await page.locator('#search-status').textContent()).includes('no matches'), 'markup in the search box matched something');
  await search('(<img src=x onerror=window.__pwned=1>');
  const err = await page.locator('#search-status .search-error').textContent();
  assert(err.startsWith('Invalid regular expression'), `no error for an invalid pattern: ${err}`);
  await search('window\\.__pwned');
  const count = await page.locator('#search-status .search-count').getAttribute('data-count');
  assert(count === '3', `searching "window\\.__pwned" found ${count} values, expected 3`);
  await page.locator('#search').press('Enter');
  await page.waitForFunction(() => document.querySelector('#details .details-name'), null, { timeout: 5000 });
  await search(OP_IMG.replace(/[.()[\]\\^$|?*+]/g, '\\$&'));
  assert((await page.locator('#search-status .search-count').getAttribute('data-count')) === '1', 'the op_name with markup is not found by search');
  await app.screenshot('hardening-10-hostile-search.png');
  await search('');
  // Hovering every element of the page (onmouseover would fire) and a last look.
  await page.locator('#peak-table tr.value-row').evaluateAll((rows) => rows.forEach((r) => {
    for (const el of [r, ...r.querySelectorAll('*')]) el.dispatchEvent(new MouseEvent('mouseover', { bubbles: true }));
  }));
  await page.waitForTimeout(100);
  app.noNewConsoleErrors(before);
  await nothingInjected('the hostile dump');
  await usable('the hostile dump');
  await nothingInjected('the hostile dump, then the TPU dump');
});

test('hostile file names in error messages are text too', async () => {
  await loadWatched();
  const name = `<img src=x onerror=window.__pwned=1>.txt`;
  await dropBad(name, Buffer.from('<script>window.__pwned=1</script>\n'), ['is not an XLA buffer-assignment dump']);
  const empty = `"'><svg onload=window.__pwned=1>.txt`;
  await dropBad(empty, Buffer.alloc(0), ['is empty']);
  await nothingInjected('hostile file names');
  await usable('hostile file names');
});

await run(app);
