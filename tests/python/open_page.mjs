// Opens a page made by the Python package in headless Chromium from file:// and says, as
// one JSON line on stdout, what it showed: the module on screen, the share of ink on its
// HBM diagram, every request the page (and its frames) made, console errors, and where its
// screenshot went. tests/python/test_wheel.py runs it and checks the figures.
//   node tests/python/open_page.mjs file:///…/report.html MODULE [SHOT.png]
// With the page's app inside an <iframe srcdoc> (a notebook's `_repr_html_`), the app is
// looked for in the frame.
import { ink, open } from '../e2e/harness.mjs';
import path from 'node:path';

const [url, module, shot] = process.argv.slice(2);
const app = await open({ viewport: { width: 1280, height: 900 } });
const { page } = app;
const cdp = await app.context.newCDPSession(page);
const network = [];
cdp.on('Network.requestWillBeSent', (e) => network.push(e.request.url));
await cdp.send('Network.enable');
const out = { module: null, ink: 0, requests: [], errors: [], frames: 0, title: null };
try {
  await page.goto(url, { waitUntil: 'load' });
  // The app: in the page, or in the iframe that shows MODULE (a notebook's page may hold
  // several, one per output), else the first.
  let frame = page;
  if ((await page.locator('iframe').count()) > 0) {
    await page.waitForFunction(() => [...document.querySelectorAll('iframe')].every((f) => f.contentDocument?.readyState === 'complete'), null, { timeout: 20000 });
    const frames = () => page.frames().filter((f) => f !== page.mainFrame());
    const shows = (f) => f.evaluate((name) => [...document.querySelectorAll('.module .module-name')].some((e) => e.textContent === name), module).catch(() => false);
    for (let deadline = Date.now() + 30000; frame === page && Date.now() < deadline; await page.waitForTimeout(200)) {
      for (const f of frames()) if (await shows(f)) { frame = f; break; }
    }
    if (frame === page) frame = frames()[0] ?? page;
  }
  out.frames = page.frames().length;
  await frame.waitForFunction(
    (name) => [...document.querySelectorAll('.module .module-name')].some((e) => e.textContent === name),
    module,
    { timeout: 30000 },
  ).catch(() => {});
  out.module = await frame.evaluate(() => document.querySelector('.module .module-name')?.textContent ?? null);
  await frame.waitForFunction(() => document.querySelector('canvas.space-canvas[data-color="0"]')?.width > 0, null, { timeout: 10000 }).catch(() => {});
  await page.waitForTimeout(500);
  out.ink = await ink(frame, 0);
  out.title = await frame.evaluate(() => document.title);
  if (shot) await page.screenshot({ path: path.resolve(shot) });
} catch (err) {
  out.errors.push(`open_page: ${err.message.split('\n')[0]}`);
}
// A data: URL (a static view's PNG) is the page's own bytes: no request leaves it.
out.requests = [...new Set([...network, ...app.requests])].filter((u) => u !== url && !u.startsWith('data:'));
out.errors.push(...app.consoleErrors);
console.log(JSON.stringify(out));
await app.context.close();
process.exit(0);
