// Profiles the answers panel on one dump with Chromium: the first Show, a step typed
// (1000, away from the peak), the space's own peak (≈25,000 values live on the 94 MB
// dump) and a click on an icicle frame. For each it prints the wall time, the main
// thread's time by trace event (script, which holds the wasm, apart from style, layout,
// paint and the rest) and the top self and total times by function from the CPU profiler
// (wasm names need a build without wasm-opt: copy target/e2e-dist and put
// target/wasm-bindgen/release/bufscope_bg.wasm in place of its `*_bg.wasm`); the profiles
// go to target/answers-*.cpuprofile. Not a test:
//   node tests/bench/prof_show.mjs http://127.0.0.1:PORT/ [FILE]
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { SHARED, open } from '../e2e/harness.mjs';
import { mainThread, report } from './profile.mjs';

const file = process.argv[3] || path.join(SHARED, 'dumps/cpu/jax0.6.2/cpu_deep_unrolled_500.buffer-assignment.txt');
if (!existsSync(file)) { console.log(`SKIPPED: ${file} is not there`); process.exit(0); }
const app = await open({ viewport: { width: 1280, height: 720 } });
const { page } = app;
await app.load();
const frame = () => page.evaluate(() => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0))));
await page.locator('#file-input').setInputFiles([file]);
await page.locator('#answers .answers-toggle').waitFor({ timeout: 600000 });
await page.waitForFunction(() => document.querySelector('canvas.space-canvas'), null, { timeout: 600000 });
await frame();
await app.waitForDetails(600000);
await new Promise((r) => setTimeout(r, 1500));
const cdp = await page.context().newCDPSession(page);
await cdp.send('Profiler.enable');
await cdp.send('Profiler.setSamplingInterval', { interval: 200 });
async function profiled(what, act, done, arg) {
  const events = [];
  const collect = (d) => events.push(...d.value);
  cdp.on('Tracing.dataCollected', collect);
  await cdp.send('Tracing.start', { categories: 'devtools.timeline,v8.execute,blink', transferMode: 'ReportEvents' });
  await cdp.send('Profiler.start');
  const t = Date.now();
  await act();
  await page.waitForFunction(done, arg, { timeout: 600000 });
  await frame();
  const ms = Date.now() - t;
  const { profile } = await cdp.send('Profiler.stop');
  const finished = new Promise((r) => cdp.once('Tracing.tracingComplete', r));
  await cdp.send('Tracing.end');
  await finished;
  cdp.off('Tracing.dataCollected', collect);
  writeFileSync(path.join(process.cwd(), 'target', `answers-${what}.cpuprofile`), JSON.stringify(profile));
  console.log(`== ${what}: ${ms} ms wall`);
  mainThread(events);
  report(what, profile);
}
await profiled('show', () => page.locator('#answers .answers-toggle').click(),
  () => document.querySelector('#answers .answers-live') && document.querySelector('#answers-icicle .frame')
    && document.querySelector('#answers-idle tr.idle-row, #answers-idle .idle-message, #answers-idle-open'));
// Where the bench looks at the panel from (the dock scrolled to its top).
await page.locator('#answers').scrollIntoViewIfNeeded();
await frame();
const stepIsNot = (b) => document.querySelector('#answers .answers-live')?.dataset.step !== b;
const step = () => page.locator('#answers .answers-live').getAttribute('data-step');
await profiled('step', async () => { await page.locator('#answers-step').fill('1000'); await page.locator('#answers-step').press('Enter'); },
  stepIsNot, await step());
await profiled('peak', () => page.locator('#answers-own-peak').click(), stepIsNot, await step());
const icicle = page.locator('#answers-icicle .frame[data-depth="1"]').first();
if (await icicle.count()) {
  await icicle.scrollIntoViewIfNeeded();
  await profiled('icicle', () => icicle.click(), () => Number(document.querySelector('#answers-icicle')?.dataset.highlighted) > 0);
}
await app.context.close();
