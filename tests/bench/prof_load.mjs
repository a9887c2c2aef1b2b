// Profiles the loading of one dump with Chromium (by default the 94 MB one of ../shared):
// from the file input's change until the diagram is drawn (or, with UNTIL=complete, until
// the module is complete: `Used values` read). It prints the wall times in the page, the
// main thread's time by trace event and the top self and total times by function
// (profile.mjs); the profile goes to target/load-UNTIL.cpuprofile. Wasm names need a build
// without wasm-opt (see prof_show.mjs). Not a test:
//   [UNTIL=complete] node tests/bench/prof_load.mjs http://127.0.0.1:PORT/ [FILE]
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { SHARED, open, watchLoad } from '../e2e/harness.mjs';
import { mainThread, report } from './profile.mjs';

const file = process.argv[3] || path.join(SHARED, 'dumps/cpu/jax0.6.2/cpu_deep_unrolled_500.buffer-assignment.txt');
if (!existsSync(file)) { console.log(`SKIPPED: ${file} is not there`); process.exit(0); }
const app = await open({ viewport: { width: 1280, height: 720 } });
const { page } = app;
await app.load();
const name = path.basename(file);
const until = process.env.UNTIL === 'complete' ? 'complete' : 'diagram';
await watchLoad(page, name);
const cdp = await page.context().newCDPSession(page);
await cdp.send('Profiler.enable');
await cdp.send('Profiler.setSamplingInterval', { interval: 200 });
const events = [];
cdp.on('Tracing.dataCollected', (d) => events.push(...d.value));
await cdp.send('Tracing.start', { categories: 'devtools.timeline,v8.execute,blink', transferMode: 'ReportEvents' });
await cdp.send('Profiler.start');
await page.locator('#file-input').setInputFiles([file]);
await page.waitForFunction((u) => window.__load[u === 'complete' ? 'complete' : 'shown'] !== null, until, { timeout: 600000, polling: 'raf' });
const { profile } = await cdp.send('Profiler.stop');
const finished = new Promise((r) => cdp.once('Tracing.tracingComplete', r));
await cdp.send('Tracing.end');
await finished;
const m = await page.evaluate(() => window.__load);
const timings = await page.locator('.report').evaluate((r) => ({ ...r.dataset }));
console.log(`diagram ${(m.shown - m.change).toFixed(0)} ms after the pick${m.complete === null ? '' : `, complete ${(m.complete - m.change).toFixed(0)} ms`}; report ${JSON.stringify(timings)}`);
writeFileSync(path.join(process.cwd(), 'target', `load-${until}.cpuprofile`), JSON.stringify(profile));
console.log(`== pick to ${until}`);
mainThread(events);
report(until, profile);
await app.context.close();
