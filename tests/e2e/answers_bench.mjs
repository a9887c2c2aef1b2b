// Times the answers panel on the 94 MB dump (../shared/dumps/cpu/jax0.6.2/
// cpu_deep_unrolled_500.buffer-assignment.txt): the load with the panel open, then a step
// chosen by the previous / next peak buttons and by number, each until the panel shows it.
// Not a test (run.sh runs *.test.mjs only):
//   node tests/e2e/answers_bench.mjs http://127.0.0.1:PORT/
import { existsSync } from 'node:fs';
import path from 'node:path';
import { SHARED, open } from './harness.mjs';

const file = path.join(SHARED, 'dumps/cpu/jax0.6.2/cpu_deep_unrolled_500.buffer-assignment.txt');
if (!existsSync(file)) {
  console.log(`SKIPPED: ${file} is not there`);
  process.exit(0);
}
const app = await open({ viewport: { width: 1280, height: 720 } });
const { page } = app;
await app.load();
let t = Date.now();
await page.locator('#file-input').setInputFiles([file]);
await page.locator('#answers .answers-toggle').click();
await page.locator('#answers .answers-live').waitFor({ timeout: 600000 });
await page.locator('#answers-icicle .frame').first().waitFor({ timeout: 600000 });
console.log(`load until the panel shows: ${Date.now() - t} ms`);
const step = async () => page.locator('#answers .answers-live').getAttribute('data-step');
async function timed(what, act) {
  const before = await step();
  const start = Date.now();
  await act();
  await page.waitForFunction((b) => document.querySelector('#answers .answers-live')?.dataset.step !== b, before, { timeout: 600000 });
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0))));
  console.log(`${what}: ${Date.now() - start} ms (step ${before} → ${await step()})`);
}
await timed('previous peak', () => page.locator('#answers-prev-peak').click());
await timed('next peak', () => page.locator('#answers-next-peak').click());
await timed('step typed (1000)', async () => {
  await page.locator('#answers-step').fill('1000');
  await page.locator('#answers-step').press('Enter');
});
await timed("this space's peak", () => page.locator('#answers-own-peak').click());
const rows = await page.locator('#answers tr, #answers .frame').count();
console.log(`rows and frames in the panel: ${rows}`);
await page.screenshot({ path: path.join(process.cwd(), 'target', 'answers-deep500.png') });
await app.context.close();
