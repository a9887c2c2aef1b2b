// Profiles the answers panel's first Show (then a step change and a click on an icicle
// frame) on one dump with Chromium's CPU profiler, printing the top self and total times by function (wasm names need a build
// without wasm-opt: wasm-bindgen of target/wasm32-unknown-unknown/wasm-release/bufscope.wasm);
// the profiles go to target/answers-*.cpuprofile. Not a test:
//   node tests/e2e/prof_show.mjs http://127.0.0.1:PORT/ [FILE]
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { SHARED, open } from './harness.mjs';

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
await new Promise((r) => setTimeout(r, 1500));
const cdp = await page.context().newCDPSession(page);
await cdp.send('Profiler.enable');
await cdp.send('Profiler.setSamplingInterval', { interval: 200 });
function report(what, profile, ms) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const dt = new Map();
  const { samples, timeDeltas } = profile;
  for (let i = 0; i < samples.length; i++) dt.set(samples[i], (dt.get(samples[i]) || 0) + (timeDeltas[i + 1] ?? 0) / 1000);
  const self = new Map();
  const total = new Map();
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children || []) parent.set(c, n.id);
  for (const [id, t] of dt) {
    const n = byId.get(id);
    const name = `${n.callFrame.functionName || '(anon)'} ${n.callFrame.url ? path.basename(n.callFrame.url) : ''}`;
    self.set(name, (self.get(name) || 0) + t);
    const seen = new Set();
    for (let p = id; p !== undefined; p = parent.get(p)) {
      const q = byId.get(p);
      const nm = `${q.callFrame.functionName || '(anon)'} ${q.callFrame.url ? path.basename(q.callFrame.url) : ''}`;
      if (seen.has(nm)) continue;
      seen.add(nm);
      total.set(nm, (total.get(nm) || 0) + t);
    }
  }
  console.log(`== ${what}: ${ms} ms wall`);
  const top = (m, k) => [...m].sort((a, b) => b[1] - a[1]).slice(0, k).map(([n, t]) => `  ${t.toFixed(1).padStart(7)} ms  ${n}`).join('\n');
  console.log(' self:\n' + top(self, 25));
  console.log(' total:\n' + top(total, 25));
}
async function profiled(what, act, done, arg) {
  await cdp.send('Profiler.start');
  const t = Date.now();
  await act();
  await page.waitForFunction(done, arg, { timeout: 600000 });
  await frame();
  const ms = Date.now() - t;
  const { profile } = await cdp.send('Profiler.stop');
  writeFileSync(path.join(process.cwd(), 'target', `answers-${what}.cpuprofile`), JSON.stringify(profile));
  report(what, profile, ms);
}
await profiled('show', () => page.locator('#answers .answers-toggle').click(),
  () => document.querySelector('#answers .answers-live') && document.querySelector('#answers-icicle .frame')
    && document.querySelector('#answers-idle tr.idle-row, #answers-idle .idle-message, #answers-idle-open'));
const before = await page.locator('#answers .answers-live').getAttribute('data-step');
await profiled('step', async () => { await page.locator('#answers-step').fill('1000'); await page.locator('#answers-step').press('Enter'); },
  (b) => document.querySelector('#answers .answers-live')?.dataset.step !== b, before);
const icicle = page.locator('#answers-icicle .frame[data-depth="1"]').first();
if (await icicle.count()) {
  await icicle.scrollIntoViewIfNeeded();
  await profiled('icicle', () => icicle.click(), () => Number(document.querySelector('#answers-icicle')?.dataset.highlighted) > 0);
}
await app.context.close();
