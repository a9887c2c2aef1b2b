// The browser's part of the page's first read, without the page (not a test): FILE's byte
// ranges read as the page's read driver reads them (src/ui/read/drive.rs: File.slice() →
// arrayBuffer() in 2 MiB slices, 3 under way ahead of the one used: the first read's `FIRST_SLICE`;
// the read behind's `BEHIND_SLICE` is SLICE_MB=8), each slice copied
// into a WebAssembly.Memory and nothing parsed; then the same with a task (setTimeout 0)
// after each slice. Three rounds in one headless Chromium; prints one JSON line each.
// SLICE_MB and AHEAD (environment) change the slice and how many are under way, to weigh them.
// RANGES is JSON, [[start, end], ...], an end of -1 meaning the file's end; the default is
// the whole file. For the first read of a dump: its bytes before the `Used values` bodies
// and from the `HloLiveRange` line on (docs/benchmarks.md says how to find them).
//   node tests/bench/read_floor.mjs http://127.0.0.1:PORT/ FILE [RANGES]
import { existsSync } from 'node:fs';
import { open } from '../e2e/harness.mjs';

const file = process.argv[3];
if (!file || !existsSync(file)) { console.log(`SKIPPED: ${file} is not there`); process.exit(0); }
const ranges = JSON.parse(process.argv[4] || '[[0,-1]]');
const slice = Number(process.env.SLICE_MB || 2) * 1024 * 1024, ahead = Number(process.env.AHEAD || 3);
const app = await open();
const page = await app.context.newPage();
await page.goto(process.argv[2]);
await page.evaluate(() => {
  const input = Object.assign(document.createElement('input'), { type: 'file', id: 'read-floor' });
  document.body.append(input);
});
await page.locator('#read-floor').setInputFiles([file]);
for (let round = 0; round < 3; round++) {
  for (const yieldEach of [false, true]) {
    const r = await page.evaluate(async ({ ranges, yieldEach, SLICE, AHEAD }) => {
      const f = document.querySelector('#read-floor').files[0];
      const memory = new WebAssembly.Memory({ initial: SLICE / 65536 });
      const asks = [];
      for (const [s, e] of ranges) {
        const end = e < 0 ? f.size : e;
        for (let a = s; a < end; a += SLICE) asks.push([a, Math.min(a + SLICE, end)]);
      }
      const under = [];
      let next = 0, bytes = 0;
      const more = () => {
        while (under.length < AHEAD + 1 && next < asks.length) {
          const [a, b] = asks[next++];
          under.push(f.slice(a, b).arrayBuffer());
        }
      };
      const t = performance.now();
      more();
      while (under.length) {
        const buf = await under.shift();
        more();
        new Uint8Array(memory.buffer, 0, buf.byteLength).set(new Uint8Array(buf));
        bytes += buf.byteLength;
        if (yieldEach) await new Promise((r) => setTimeout(r, 0));
      }
      return { ms: Math.round(performance.now() - t), MB: Math.round(bytes / 1e6), slices: asks.length };
    }, { ranges, yieldEach, SLICE: slice, AHEAD: ahead });
    console.log(JSON.stringify({ round, taskEachSlice: yieldEach, ...r }));
  }
}
await app.context.close();
process.exit(0);
