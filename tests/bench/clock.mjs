// The benchmarks' in-page clock: what a user waits for, from an input event to the painted
// frame that shows its outcome. Armed before the interaction, it starts at the first
// pointerdown, keydown or change event (the event's own timestamp: when the browser received
// the input) and stops once a frame whose animation-frame callback found `done(arg)` true
// has been painted (a task posted from that callback runs after the frame's rendering).
// `done` runs in the page; it is sent as text, since the page's CSP forbids `new Function`.
// Not a test (run.sh runs *.test.mjs only).

/** Arms the clock in `page` for the next interaction. */
export async function arm(page, done, arg) {
  await page.evaluate(`window.__bench_done = (${done.toString()})`);
  await page.evaluate((a) => {
    const cond = window.__bench_done;
    const clock = { t0: null, t1: null };
    window.__bench_clock = clock;
    const start = (e) => { if (clock.t0 === null) clock.t0 = e.timeStamp; };
    const kinds = ['pointerdown', 'keydown', 'change'];
    for (const k of kinds) document.addEventListener(k, start, true);
    const poll = () => {
      if (clock.t0 !== null && cond(a)) {
        setTimeout(() => {
          clock.t1 = performance.now();
          for (const k of kinds) document.removeEventListener(k, start, true);
        }, 0);
      } else requestAnimationFrame(poll);
    };
    requestAnimationFrame(poll);
  }, arg);
}

/** Waits (at most `timeout` ms) until the armed clock has stopped; its reading in ms. */
export async function reading(page, timeout) {
  await page.waitForFunction(() => window.__bench_clock.t1 !== null, null, { timeout });
  return Math.round(await page.evaluate(() => window.__bench_clock.t1 - window.__bench_clock.t0));
}
