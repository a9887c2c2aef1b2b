// What the profilers (prof_show.mjs, prof_load.mjs) print of a Chromium CPU profile and a
// trace: the top self and total times by function, and the main thread's self time by
// trace event (script, which holds the wasm, apart from style, layout, paint and the rest).
import path from 'node:path';

const name = (n) => `${n.callFrame.functionName || '(anon)'} ${n.callFrame.url ? path.basename(n.callFrame.url) : ''}`;
const top = (m, k) => [...m].sort((a, b) => b[1] - a[1]).slice(0, k).map(([n, t]) => `  ${t.toFixed(1).padStart(7)} ms  ${n}`).join('\n');
export function report(what, profile) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const dt = new Map();
  const { samples, timeDeltas } = profile;
  for (let i = 0; i < samples.length; i++) dt.set(samples[i], (dt.get(samples[i]) || 0) + (timeDeltas[i + 1] ?? 0) / 1000);
  const self = new Map();
  const total = new Map();
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children || []) parent.set(c, n.id);
  for (const [id, t] of dt) {
    const nm = name(byId.get(id));
    self.set(nm, (self.get(nm) || 0) + t);
    const seen = new Set();
    for (let p = id; p !== undefined; p = parent.get(p)) {
      const q = name(byId.get(p));
      if (seen.has(q)) continue;
      seen.add(q);
      total.set(q, (total.get(q) || 0) + t);
    }
  }
  console.log(' self:\n' + top(self, 25));
  console.log(' total:\n' + top(total, 30));
}
/** The main thread's self time by trace event name (complete events nested by time). */
export function mainThread(events) {
  const main = events.find((e) => e.name === 'thread_name' && e.args?.name === 'CrRendererMain');
  if (!main) return;
  const xs = events.filter((e) => e.ph === 'X' && e.pid === main.pid && e.tid === main.tid && e.dur !== undefined)
    .sort((a, b) => a.ts - b.ts || b.dur - a.dur);
  const self = new Map();
  const stack = [];
  let busy = 0;
  for (const e of xs) {
    while (stack.length && stack[stack.length - 1].ts + stack[stack.length - 1].dur <= e.ts) stack.pop();
    const up = stack[stack.length - 1];
    if (up) self.set(up.name, (self.get(up.name) || 0) - e.dur / 1000);
    else busy += e.dur / 1000;
    self.set(e.name, (self.get(e.name) || 0) + e.dur / 1000);
    stack.push(e);
  }
  console.log(` main thread busy ${busy.toFixed(1)} ms; self time by event:\n` + top(self, 14));
}
