// Frame-time benchmark of the interactive diagram on the 94 MB dump (not part of the tests).
//   node tests/bench/frame_bench.mjs http://127.0.0.1:PORT/ [DUMP] [STEPS]
// Serve a release build first, e.g.
//   trunk build --release --features test-hooks --dist target/e2e-dist && node tests/e2e/serve.mjs target/e2e-dist 0
// Loads the dump into the page (setInputFiles on #file-input), then scripts STEPS (default
// 120) wheel zooms and drags over the first diagram while the hover and time cursor move
// with the pointer. Prints, from inside the page:
// * frame intervals: requestAnimationFrame timestamps during the sequence (what a user sees);
// * draw times: the app's own measure of each frame it drew (`window.__bufscope_draw_ms`,
//   filled by src/ui/canvas/hooks.rs when the page defines it);
// each as frames, median and worst. The sequence itself is `panZoom` in frames.mjs, which
// tests/bench/scale_bench.mjs (`./dev bench`) runs too.
import { createRequire } from 'node:module';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fmt, panZoom, stats } from './frames.mjs';

const tools = process.env.BUFSCOPE_TOOLS || path.join(os.homedir(), '.cache', 'bufscope-tools');
const { chromium } = createRequire(path.join(tools, 'package.json'))('playwright-core');

const base = process.argv[2];
const repo = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..', '..');
const dump = process.argv[3] || path.join(repo, '..', 'shared', 'dumps/cpu/jax0.6.2/cpu_deep_unrolled_500.buffer-assignment.txt');
const steps = Number(process.argv[4] || 120);
if (!base || !existsSync(dump)) {
  console.error('usage: node tests/bench/frame_bench.mjs BASE_URL [DUMP] [STEPS] (the dump must exist)');
  process.exit(2);
}

const profile = mkdtempSync(path.join(os.tmpdir(), 'bufscope-bench-'));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
  viewport: { width: 1200, height: 900 },
});
const page = context.pages()[0] || (await context.newPage());
page.on('pageerror', (err) => console.error(`page error: ${err.message}`));

try {
  await page.goto(base, { waitUntil: 'load' });
  await page.locator('#file-input').waitFor({ state: 'attached', timeout: 20000 });
  const t0 = Date.now();
  await page.locator('#file-input').setInputFiles(dump);
  const diagram = page.locator('.diagram').first();
  await diagram.waitFor({ timeout: 300000 });
  await page.waitForFunction(() => document.querySelector('.diagram')?.dataset.view, null, { timeout: 60000 });
  console.log(`loaded ${path.basename(dump)} in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  const { frames, draws, box } = await panZoom(page, steps);
  console.log(`${steps} scripted wheel/drag steps on ${box.width.toFixed(0)}×${box.height.toFixed(0)} CSS px`);
  console.log(`frame intervals (rAF): ${fmt(stats(frames))}`);
  console.log(`app draw time per frame: ${fmt(stats(draws))}`);
} finally {
  await context.close();
  rmSync(profile, { recursive: true, force: true });
}
