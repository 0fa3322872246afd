// Benchmarks the UI page at rest (issue #17, BENCHMARKS.md "Cold start, first paint, idle and
// memory", part C): a server with --tasks stored tasks (all finished), the page open in headless
// Chromium with its event stream connected, then --seconds with nothing happening. Per UI folder
// (--ui, repeatable; served through bench-server.mjs's proxy, so versions are compared against
// one server): the page's timer callbacks (setInterval / setTimeout / requestAnimationFrame,
// counted by an init script), Chromium's Performance.getMetrics (TaskDuration, ScriptDuration:
// the renderer's main thread busy, and running script) and the CPU time of the browser's
// renderer processes over that time (SystemInfo.getProcessInfo's cpuTime, from the OS).
//
//   TASKDECK_BIN=target/release/taskdeck node tests/browser/bench-idle.mjs --ui ui --ui /other/ui [--tasks 10000] [--seconds 60]

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { startServer, client, seed, startUiProxy } from './bench-server.mjs';
import { BIN, CHROMIUM } from './harness.mjs';

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : dflt;
};
const uis = args.flatMap((a, i) => (args[i - 1] === '--ui' ? [path.resolve(a)] : []));
const TASKS = Number(opt('--tasks', 10_000));
const SECONDS = Number(opt('--seconds', 60));
if (!uis.length) throw new Error('give at least one --ui DIR');

/** Counts the page's timer callbacks in `window.__timerFires` (runs before the page's scripts). */
function countTimers() {
  window.__timerFires = { interval: 0, timeout: 0, frame: 0 };
  const wrap = (kind, fn) =>
    typeof fn === 'function'
      ? (...a) => {
          window.__timerFires[kind]++;
          return fn(...a);
        }
      : fn;
  const { setInterval: si, setTimeout: st, requestAnimationFrame: raf } = window;
  window.setInterval = (fn, ms, ...a) => si.call(window, wrap('interval', fn), ms, ...a);
  window.setTimeout = (fn, ms, ...a) => st.call(window, wrap('timeout', fn), ms, ...a);
  window.requestAnimationFrame = (fn) => raf.call(window, wrap('frame', fn));
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'taskdeck-idle-'));
const server = await startServer(BIN, dir);
try {
  const api = client(server.base, server.token);
  const seeded = await seed(api, TASKS);
  console.log(`- ${TASKS} tasks stored (seeded ${seeded.added} in ${seeded.seconds.toFixed(0)} s); ${SECONDS} s idle per page; load average ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}.`);
  await new Promise((r) => setTimeout(r, 10_000)); // the server's search index catches up
  for (const ui of uis) {
    const proxy = await startUiProxy(ui, server.base);
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'] });
    try {
      const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
      await page.addInitScript(countTimers);
      const cdp = await page.context().newCDPSession(page);
      await cdp.send('Performance.enable');
      await page.goto(`${proxy.base}/#token=${encodeURIComponent(server.token)}`);
      await page.locator('#conn[data-state="open"]').waitFor();
      await page.locator('#task-list .row').first().waitFor();
      await new Promise((r) => setTimeout(r, 5000)); // the page's loading is over
      const metrics = async () => Object.fromEntries((await cdp.send('Performance.getMetrics')).metrics.map((m) => [m.name, m.value]));
      // The browser's processes and their CPU time so far (SystemInfo.getProcessInfo: pid, type, seconds).
      const bcdp = await browser.newBrowserCDPSession();
      const procs = async () => (await bcdp.send('SystemInfo.getProcessInfo')).processInfo.filter((p) => p.type === 'renderer');
      const m0 = await metrics();
      const f0 = await page.evaluate(() => ({ ...window.__timerFires }));
      const c0 = await procs();
      const t0 = Date.now();
      await new Promise((r) => setTimeout(r, SECONDS * 1000));
      const secs = (Date.now() - t0) / 1000;
      const c1 = await procs();
      const f1 = await page.evaluate(() => ({ ...window.__timerFires }));
      const m1 = await metrics();
      const ms = (k) => ((m1[k] - m0[k]) * 1000).toFixed(1);
      const fires = Object.fromEntries(Object.keys(f1).map((k) => [k, f1[k] - f0[k]]));
      const before = new Map(c0.map((p) => [p.id, p.cpuTime]));
      const cpu = c1.reduce((n, p) => n + (p.cpuTime - (before.get(p.id) ?? 0)), 0) * 1000;
      console.log(
        `- ui ${ui}: over ${secs.toFixed(1)} s, timer callbacks ${JSON.stringify(fires)}; TaskDuration ${ms('TaskDuration')} ms, ScriptDuration ${ms('ScriptDuration')} ms, ` +
          `LayoutCount +${m1.LayoutCount - m0.LayoutCount}, RecalcStyleCount +${m1.RecalcStyleCount - m0.RecalcStyleCount}; renderer CPU (${c1.length} renderer process${c1.length === 1 ? '' : 'es'}) ${cpu.toFixed(0)} ms (${((cpu / 10 / secs)).toFixed(3)}% of a core).`,
      );
    } finally {
      await browser.close();
      await proxy.close();
    }
  }
} finally {
  await server.stop();
  fs.rmSync(dir, { recursive: true, force: true });
}
