// The scripted pan and zoom that both benchmarks run (frame_bench.mjs, scale_bench.mjs), and
// how their frame times are summed up. Not a test file (run.sh runs *.test.mjs only).
//
//   const { frames, draws, box } = await panZoom(page, 120);
//   console.log(fmt(stats(frames)));

/**
 * Scripts `steps` wheel zooms and drags over the first diagram on `page` (a module must be
 * on screen) while the hover and time cursor move with the pointer, in three phases of 20
 * steps that repeat: zoom in at a drifting point, drag sideways and down, zoom out while
 * moving. Returns, measured inside the page:
 * * `frames`: intervals between requestAnimationFrame timestamps during the sequence (ms;
 *   what a user sees);
 * * `draws`: the app's own time for each frame it drew (ms; `window.__bufscope_draw_ms`,
 *   filled by src/ui/canvas/hooks.rs when the page defines it);
 * * `box`: the canvas's bounding box.
 */
export async function panZoom(page, steps = 120) {
  const diagram = page.locator('.diagram').first();
  await diagram.waitFor({ timeout: 300000 });
  await page.waitForFunction(() => document.querySelector('.diagram')?.dataset.view, null, { timeout: 60000 });
  await diagram.scrollIntoViewIfNeeded();
  await page.waitForTimeout(500);
  const box = await page.locator('.diagram canvas').first().boundingBox();
  // Inside the block diagram: below the curve, left of the allocation labels.
  const cx = box.x + box.width * 0.45;
  const cy = box.y + box.height * 0.62;

  await page.evaluate(() => {
    window.__bufscope_draw_ms = [];
    window.__bench_frames = [];
    window.__bench_on = true;
    const tick = (t) => {
      window.__bench_frames.push(t);
      if (window.__bench_on) requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  });
  await page.mouse.move(cx, cy);
  for (let i = 0; i < steps; i++) {
    const phase = Math.floor(i / 20) % 3;
    if (phase === 0) {
      // Zoom in at a drifting point.
      await page.mouse.move(cx + (i % 20) * 4, cy - (i % 20) * 2);
      await page.mouse.wheel(0, -120);
    } else if (phase === 1) {
      // Drag (pan) sideways and down.
      await page.mouse.down();
      await page.mouse.move(cx - 30, cy + 8, { steps: 3 });
      await page.mouse.up();
      await page.mouse.move(cx, cy);
    } else {
      await page.mouse.wheel(0, 100);
      await page.mouse.move(cx + (i % 7) * 11, cy + (i % 5) * 9);
    }
  }
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  const { frames, draws } = await page.evaluate(() => {
    window.__bench_on = false;
    const f = window.__bench_frames;
    const draws = window.__bufscope_draw_ms;
    delete window.__bufscope_draw_ms;
    return { frames: f.slice(1).map((t, i) => t - f[i]), draws };
  });
  return { frames, draws, box };
}

/** Count, median, 95th percentile and worst of a list of numbers. */
export function stats(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return {
    n: s.length,
    median: s[Math.floor(s.length / 2)] ?? NaN,
    p95: s[Math.floor(s.length * 0.95)] ?? NaN,
    worst: s[s.length - 1] ?? NaN,
  };
}

export const fmt = ({ n, median, p95, worst }) =>
  `${n} frames, median ${median.toFixed(1)} ms, p95 ${p95.toFixed(1)} ms, worst ${worst.toFixed(1)} ms`;
