// Browser tests of the answers panel (#answers): the three peaks, source lines, capacity,
// the step chosen by a click on the curve, by the listed peaks and the peak buttons, the op_name icicle and
// its highlight on the diagram, and the idle stretches.
//   node tests/e2e/answers.test.mjs http://127.0.0.1:PORT/
// Expected figures come from outside the app: XProf's own report for cpu_mlp_train's peak
// heap (12,902,240 B, also in tests/answers.rs) and the idle stretches of TPU dump 000 at
// step 8 of colour 1 worked out by hand from the dump text (tests/answers.rs). Sums are
// checked against the live bytes the panel shows. A 1280×720 screenshot of the panel goes to
// target/answers-panel.png.
import { existsSync, mkdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { SHARED, assert, fixture, open as openBrowser, repo, run, test } from './harness.mjs';

const TPU = fixture('tpu/000_0cb419b3147a3cb6.txt');
const MLP = ['buffer-assignment.txt', 'buffer-assignment-values.txt', 'live-range.txt']
  .map((s) => fixture(`cpu/jax0.10.2/cpu_mlp_train.${s}`));

const app = await openBrowser({ viewport: { width: 1280, height: 720 } });
const { page, consoleErrors } = app;

/** Loads the app, picks `files` and waits for module `name` and the answers panel. */
async function open(files, name) {
  await app.load();
  await app.pickModule(files, name);
  // The panel is closed when a module opens: show it.
  const toggle = page.locator('#answers .answers-toggle');
  if ((await toggle.getAttribute('aria-expanded')) === 'false') await toggle.click();
  await page.locator('#answers .answers-live').waitFor({ timeout: 10000 });
}

/** The MLP training step of jax 0.10.2 open, its panel at the space's peak. */
const mlp = () => open(MLP, 'cpu_mlp_train');

/** TPU dump 000 open, its panel at step 8 of colour 1. */
async function tpuStep8() {
  await open([TPU], '000_0cb419b3147a3cb6');
  await page.locator('#answers-space').selectOption('1');
  await page.locator('#answers-step').fill('8');
  await page.locator('#answers-step').press('Enter');
  await waitStep(8);
}

const live = async () => {
  const el = page.locator('#answers .answers-live');
  return { bytes: Number(await el.getAttribute('data-bytes')), step: Number(await el.getAttribute('data-step')) };
};

/** Waits until the panel answers for `step`. */
const waitStep = (step) =>
  page.waitForFunction(
    (s) => document.querySelector('#answers .answers-live')?.getAttribute('data-step') === String(s),
    step,
    { timeout: 10000 },
  );

/** Clicks "show more" in `#id` until every row is in the DOM. */
async function showAll(id) {
  for (let i = 0; i < 100; i++) {
    const more = page.locator(`#${id} .answers-more`);
    if ((await more.count()) === 0) return;
    await more.click();
  }
}

test('the three peaks are shown, XProf\'s peak heap as XProf reported it', async () => {
  await mlp();
  const fig = async (id) => {
    const row = page.locator(`#answers-peaks tr[data-peak="${id}"]`);
    return { bytes: Number(await row.getAttribute('data-bytes')), sentence: (await row.locator('.sentence').textContent()).trim() };
  };
  // XProf's figures are computed once their table is in view.
  await page.locator('#answers-peaks').scrollIntoViewIfNeeded();
  const [occupied, xla, xprof] = [await fig('occupied'), await fig('xla'), await fig('xprof')];
  assert(xprof.bytes === 12902240, `XProf peak heap ${xprof.bytes}, XProf reported 12,902,240`);
  assert(occupied.bytes > 0 && xla.bytes > 0, `occupied ${occupied.bytes}, XLA ${xla.bytes}`);
  for (const f of [occupied, xla, xprof]) assert(f.sentence.endsWith('.') && f.sentence.length > 40, `sentence "${f.sentence}"`);
  // By default the panel answers for the space's peak: its live bytes are the occupied peak.
  const l = await live();
  assert(l.bytes === occupied.bytes, `live bytes ${l.bytes} at the default step, occupied peak ${occupied.bytes}`);
});

test('the source lines add up to the live bytes shown, largest first', async () => {
  await mlp();
  await showAll('answers-source');
  const rows = (await page.locator('#answers-source tr.source-row').evaluateAll((rs) => rs.map((r) => Number(r.dataset.bytes))));
  assert(rows.length > 1, `${rows.length} source rows`);
  const sum = rows.reduce((a, b) => a + b, 0);
  const l = await live();
  assert(sum === l.bytes, `source rows sum to ${sum}, live bytes ${l.bytes}`);
  assert(rows.every((b, i) => i === 0 || rows[i - 1] >= b), `rows not largest first: ${rows.join(', ')}`);
  const cats = await page.locator('#answers-categories tr.category-row').evaluateAll((rs) => rs.map((r) => Number(r.dataset.bytes)));
  assert(cats.reduce((a, b) => a + b, 0) === l.bytes, `categories sum to ${cats}, live bytes ${l.bytes}`);
});

test('a capacity chosen gives the verdict: headroom on a big device, the excess on a small size', async () => {
  await mlp();
  const peak = Number(await page.locator('#answers-peaks tr[data-peak="occupied"]').getAttribute('data-bytes'));
  await page.locator('#capacity-device').selectOption('TPU v2');
  const verdict = page.locator('#answers-capacity .capacity-verdict');
  await verdict.waitFor({ timeout: 5000 });
  assert((await verdict.getAttribute('data-fits')) === 'true', 'a 12 MB peak does not fit 8 GiB');
  assert(/headroom/.test(await verdict.textContent()), `verdict "${await verdict.textContent()}"`);
  await page.locator('#capacity-size').fill('1MiB');
  await page.locator('#capacity-size').press('Enter');
  await page.locator('#capacity-size').blur();
  await page.waitForFunction(() => document.querySelector('#answers-capacity .capacity-verdict')?.dataset.fits === 'false');
  const text = await verdict.textContent();
  assert(/exceeds/.test(text), `verdict "${text}" for a ${peak}-byte peak in 1 MiB`);
  assert(Number(await verdict.getAttribute('data-capacity')) === 1 << 20, '1MiB is not 1,048,576 bytes');
});

test('a click on the curve chooses the step; the peak buttons move it', async () => {
  await mlp();
  const before = await live();
  const target = before.step > 3 ? 2 : before.step + 3;
  await page.locator('canvas.space-canvas[data-color="0"]').scrollIntoViewIfNeeded();
  const at = await page.evaluate((s) => window.__bufscope_step_px(0, s), target);
  assert(at, `step ${target} is not in view on the curve`);
  await page.mouse.click(at.x, at.y);
  await waitStep(target);
  const after = await live();
  assert(after.bytes !== before.bytes, `live bytes ${after.bytes} at step ${target} as at the peak`);
  assert(Number(await page.locator('#answers-step').inputValue()) === target, 'the step box does not show the step clicked');
  await page.locator('#answers-own-peak').click();
  await waitStep(before.step);
  assert((await live()).bytes === before.bytes, 'back at the peak, other live bytes');
  await page.locator('#answers-step').fill(String(target));
  await page.locator('#answers-step').press('Enter');
  await waitStep(target);
  const next = page.locator('#answers-next-peak');
  if (await next.isEnabled()) {
    await next.click();
    await page.waitForFunction((t) => Number(document.querySelector('#answers .answers-live').dataset.step) > t, target);
  }
  await page.locator('#answers-own-peak').click();
  await waitStep(before.step);
});

test('the peaks are listed; a click on one chooses its step, and next / previous peak walk the list', async () => {
  await mlp();
  const buttons = page.locator('#answers-peaks-list .answers-peak');
  const listed = await buttons.evaluateAll((bs) => bs.map((b) => ({ step: Number(b.dataset.step), bytes: Number(b.dataset.bytes) })));
  const before = await live();
  assert(listed.length >= 2, `${listed.length} peaks listed`);
  assert(listed.some((p) => p.step === before.step && p.bytes === before.bytes), `the space's peak ${before.step} is not listed: ${JSON.stringify(listed)}`);
  assert(listed.every((p, i) => i === 0 || listed[i - 1].step < p.step), `not by step: ${JSON.stringify(listed)}`);
  const other = listed.find((p) => p.step !== before.step);
  await page.locator(`#answers-peaks-list .answers-peak[data-step="${other.step}"]`).click();
  await waitStep(other.step);
  const after = await live();
  assert(after.bytes === other.bytes && after.bytes !== before.bytes, `live bytes ${after.bytes} at listed peak ${other.step} (${other.bytes})`);
  const current = await page.locator('#answers-peaks-list .answers-peak[aria-current="step"]').getAttribute('data-step');
  assert(Number(current) === other.step, `marked ${current}, chose ${other.step}`);
  // Next peak goes to the listed peak after this one.
  const i = listed.findIndex((p) => p.step === other.step);
  if (i + 1 < listed.length) {
    await page.locator('#answers-next-peak').click();
    await waitStep(listed[i + 1].step);
    await page.locator('#answers-prev-peak').click();
    await waitStep(other.step);
  }
  await page.locator('#answers-own-peak').click();
  await waitStep(before.step);
});

/** A part of the panel out of sight follows a new step two frames later: waits until the
 *  icicle's top frame holds the step's live bytes. */
const icicleFollows = () => page.waitForFunction(() => document.querySelector('#answers-icicle .frame')?.dataset.bytes
  === document.querySelector('#answers .answers-live')?.dataset.bytes, null, { timeout: 5000 }).catch(() => {});

test('the icicle draws, and a click on a frame highlights its values on the diagram', async () => {
  await mlp();
  const frames = page.locator('#answers-icicle .frame');
  await icicleFollows();
  assert((await frames.count()) > 1, `${await frames.count()} frames`);
  const top = Number(await frames.first().getAttribute('data-bytes'));
  assert(top === (await live()).bytes, `the top frame holds ${top}, live bytes ${(await live()).bytes}`);
  // The frame below the top that holds fewer values than the whole: its click dims the rest.
  const pixels = () => page.evaluate(() => {
    const c = document.querySelector('canvas.space-canvas[data-color="0"]');
    return Array.from(c.getContext('2d').getImageData(0, 0, c.width, c.height).data);
  });
  const before = await pixels();
  const frame = page.locator('#answers-icicle .frame[data-depth="1"]').first();
  const frameBytes = Number(await frame.getAttribute('data-bytes'));
  assert(frameBytes < top, 'the first frame of depth 1 holds everything');
  await frame.click();
  await page.waitForFunction(() => Number(document.querySelector('#answers-icicle')?.dataset.highlighted) > 0);
  await page.waitForTimeout(300);
  const after = await pixels();
  let changed = 0;
  for (let i = 0; i < after.length; i += 4) if (Math.abs(after[i] - before[i]) + Math.abs(after[i + 1] - before[i + 1]) > 30) changed++;
  assert(changed > 500, `${changed} pixels changed on the diagram after the click`);
  await page.locator('#icicle-clear').click();
  await page.waitForFunction(() => document.querySelector('#answers-icicle')?.dataset.highlighted === '0');
});

test('an icicle frame limiting the table follows the step: the table lists that step\'s values of the frame', async () => {
  await mlp();
  const before = consoleErrors.length;
  const peak = (await live()).step;
  const steps = Number(await page.locator('#answers-step').getAttribute('max')) + 1;
  const goTo = async (step) => {
    await page.locator('#answers-step').fill(String(step));
    await page.locator('#answers-step').press('Enter');
    await waitStep(step);
    await icicleFollows();
  };
  // The frames below the top, unfiltered and zoomed out, by op_name path (each frame's
  // parent is the frame of the row above that spans it): path → [values, DOM index].
  const frames = () => page.locator('#answers-icicle .frame').evaluateAll((els) => {
    const fs = els.map((f, i) => ({
      i, depth: Number(f.dataset.depth), count: Number(f.dataset.count), label: f.title.split(' · ')[0],
      left: parseFloat(f.style.left), right: parseFloat(f.style.left) + parseFloat(f.style.width),
    }));
    const path = (f) => {
      if (f.depth <= 1) return f.label;
      const up = fs.find((p) => p.depth === f.depth - 1 && p.left <= f.left + 1e-3 && f.right <= p.right + 1e-3);
      return up ? `${path(up)}/${f.label}` : null;
    };
    return fs.filter((f) => f.depth > 0).map((f) => [path(f), [f.count, f.i]]).filter((e) => e[0] !== null);
  }).then((es) => new Map(es));
  const framesAt = async (step) => {
    await goTo(step);
    return frames();
  };
  await page.locator('#answers-icicle .icicle-trail .crumb').first().click();
  const atPeak = await framesAt(peak);
  // A frame and another step where it holds more values than at the peak: a limit kept from
  // the peak would leave some of them out.
  let grown = null;
  for (const step of [1, Math.floor(peak / 4), Math.floor(peak / 2), Math.floor((peak + steps) / 2), steps - 2]) {
    if (step <= 0 || step === peak || step >= steps) continue;
    const there = await framesAt(step);
    for (const [label, [n]] of atPeak) {
      if (!grown && there.has(label) && there.get(label)[0] > n) grown = { label, step, n: there.get(label)[0] };
    }
  }
  assert(grown, 'no frame holds more values at another step than at the peak');
  const limit = async (label) => {
    await goTo(peak);
    await page.locator('#answers-icicle .icicle-trail .crumb').first().click();
    const at = (await frames()).get(label);
    assert(at, `no frame "${label}" at the peak`);
    await page.locator('#answers-icicle .frame').nth(at[1]).click();
    await page.locator('#table-filter').waitFor({ timeout: 5000 });
  };
  await limit(grown.label);
  await goTo(grown.step);
  const chip = page.locator('#table-filter');
  await page.waitForFunction((n) => Number(document.querySelector('#table-filter')?.dataset.count) === n, grown.n, { timeout: 5000 })
    .catch(() => {});
  assert(Number(await chip.getAttribute('data-count')) === grown.n,
    `at step ${grown.step} the table is limited to ${await chip.getAttribute('data-count')} values of "${grown.label}", which holds ${grown.n} there`);
  assert(Number(await page.locator('#peak-table').getAttribute('data-lines')) === grown.n, 'the table lists other values than the chip says');
  await page.locator('#icicle-clear').click();
  await page.locator('#answers-icicle .icicle-trail .crumb').first().click();
  await goTo(peak);
  app.noNewConsoleErrors(before);
});

test('idle stretches of TPU 000 at step 8 of colour 1: copy-start.1{0} first, as worked out by hand', async () => {
  const before = consoleErrors.length;
  await tpuStep8();
  // Ranked once asked for.
  await page.locator('#answers-idle-open').click();
  await page.locator('#answers-idle tr.idle-row').first().waitFor({ timeout: 10000 });
  const rows = await page.locator('#answers-idle tr.idle-row').evaluateAll((rs) => rs.map((r) => [r.dataset.name, Number(r.dataset.byteSteps)]));
  const expected = [['copy-start.1{0}', 16384 * 5], ['multiply_reduce_fusion{1}', 8192 * 4], ['multiply_reduce_fusion{0}', 512 * 3]];
  assert(JSON.stringify(rows) === JSON.stringify(expected), `idle rows ${JSON.stringify(rows)}`);
  app.noNewConsoleErrors(before);
});

test('a screenshot of the panel at 1280×720', async () => {
  // TPU 000 at step 8 of colour 1, its idle stretches ranked.
  await tpuStep8();
  await page.locator('#answers-idle-open').click();
  await page.locator('#answers-idle tr.idle-row').first().waitFor({ timeout: 10000 });
  await page.locator('#answers').scrollIntoViewIfNeeded();
  // Below the sticky tool bar.
  await page.evaluate(() => {
    document.querySelector('#answers').scrollIntoView({ block: 'start' });
    window.scrollBy(0, -(document.querySelector('.toolbar')?.offsetHeight ?? 0));
  });
  await page.screenshot({ path: path.join(repo, 'target', 'answers-panel.png') });
  await page.screenshot({ path: path.join(repo, 'target', 'answers-panel-full.png'), fullPage: true });
});

test('a dump without Used values says what idle stretches need', async () => {
  await open([MLP[0], MLP[2]], 'cpu_mlp_train');
  const msg = await page.locator('#answers-idle .idle-message').textContent();
  assert(/buffer-assignment-values/.test(msg), `message "${msg}"`);
  assert((await page.locator('#answers-idle tr.idle-row').count()) === 0, 'idle rows without Used values');
});

if (process.env.UPDATE_SCREENSHOTS === '1') {
  // README "Answering an OOM": our own GPT-2 small dump (jax 0.6.2, CPU) with a capacity of
  // 2 GiB, the answers panel open at the peak; 1280 px wide.
  test('(s) README screenshot: the answers on the GPT-2 dump', async () => {
    const gpt2 = path.join(SHARED, 'dumps', 'cpu', 'jax0.6.2', 'cpu_gpt2_small.buffer-assignment.txt');
    assert(existsSync(gpt2), `no ${gpt2}`);
    await open([gpt2], 'cpu_gpt2_small');
    await page.locator('#capacity-size').fill('2GiB');
    await page.locator('#capacity-size').press('Enter');
    await page.locator('#capacity-size').blur();
    await page.locator('#answers .capacity-verdict').waitFor({ timeout: 10000 });
    await page.waitForTimeout(800);
    const dir = path.join(repo, 'style', 'screenshots');
    mkdirSync(dir, { recursive: true });
    const out = path.join(dir, 'answers-gpt2.png');
    // The whole window, made taller, with the dock below the diagrams dragged up to hold
    // the panel from its step line to the end of the source lines.
    const size = page.viewportSize();
    await page.setViewportSize({ width: 1280, height: 1100 });
    await page.evaluate(() => document.querySelector('.hint-close')?.click());
    const handle = await page.locator('.dock > .splitter').boundingBox();
    await page.mouse.move(handle.x + 300, handle.y + handle.height / 2);
    await page.mouse.down();
    await page.mouse.move(handle.x + 300, 560, { steps: 4 });
    await page.mouse.up();
    await page.evaluate(() => {
      const dock = document.querySelector('.dock-scroll');
      dock.scrollTop += document.querySelector('#answers').getBoundingClientRect().top - dock.getBoundingClientRect().top;
    });
    await page.mouse.move(1, 1);
    await page.waitForTimeout(800);
    await page.screenshot({ path: out });
    await page.setViewportSize(size);
    const kb = statSync(out).size / 1024;
    console.log(`note: wrote ${path.relative(repo, out)} (1280×1100, ${kb.toFixed(0)} KB)`);
    assert(kb < 600, `answers-gpt2.png is ${kb.toFixed(0)} KB, over 600 KB`);
  });
}

await run(app);
