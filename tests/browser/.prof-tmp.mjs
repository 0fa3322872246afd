// temporary profiling helper (not delivered)
import fs from 'node:fs';
import { chromium } from 'playwright-core';
import { startServer, client, pool } from './bench-server.mjs';
const mode = process.argv[2] || 'scroll';
const dir = '/tmp/taskdeck-bench-100k';
const s = await startServer('/tmp/taskdeck-bench-bin', dir);
const api = client(s.base, s.token);
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'] });
try {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  await ctx.addInitScript({ content: fs.readFileSync(new URL('./bench-page.js', import.meta.url), 'utf8') });
  const page = await ctx.newPage();
  await page.goto(`${s.base}/#token=${s.token}`);
  await page.waitForFunction(() => window.__bench.firstRowPainted !== null);
  await page.waitForTimeout(1000);
  const cdp = await ctx.newCDPSession(page);
  await browser.startTracing(page, { path: `/tmp/prof/${mode}.trace.json`, categories: ['devtools.timeline', 'disabled-by-default-devtools.timeline.frame', 'v8.execute', 'blink.user_timing'] });
  await cdp.send('Profiler.enable');
  await cdp.send('Profiler.setSamplingInterval', { interval: 200 });
  await cdp.send('Profiler.start');
  if (mode === 'scroll') {
    await page.evaluate(() => new Promise((res) => { const l = document.getElementById('task-list'); const t0 = performance.now(); const f = (t) => { if (t - t0 > 3000) return res(); l.scrollTop += 100; requestAnimationFrame(f); }; requestAnimationFrame(f); }));
  } else {
    const jobs = [];
    for (let i = 0; i < 12; i++) jobs.push((await api.post('/v1/jobs', { external: { name: `p${i}`, heartbeatMs: 600000 } })).taskId);
    const t0 = Date.now(); let seq = 0;
    await pool(3000, 32, async () => { const k = seq++; await api.post(`/v1/jobs/${jobs[k % jobs.length]}/report`, { statusMessage: `u${k}` }); });
    console.log('reports/s', 3000 / ((Date.now() - t0) / 1000));
    await pool(jobs.length, 4, (i) => api.post(`/v1/jobs/${jobs[i]}/report`, { result: { content: [] } }));
  }
  const { profile } = await cdp.send('Profiler.stop');
  await browser.stopTracing();
  fs.writeFileSync(`/tmp/prof/${mode}.cpuprofile`, JSON.stringify(profile));
  // self time by function
  const self = new Map();
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const dt = profile.timeDeltas;
  for (let i = 0; i < profile.samples.length; i++) {
    const n = byId.get(profile.samples[i]);
    const k = `${n.callFrame.functionName || '(anon)'} ${n.callFrame.url.split('/').pop()}:${n.callFrame.lineNumber + 1}`;
    self.set(k, (self.get(k) || 0) + (dt[i] || 0) / 1000);
  }
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  console.log('total sampled ms', total.toFixed(0));
  for (const [k, v] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 30)) console.log(v.toFixed(1).padStart(8), k);
} finally {
  await browser.close();
  await s.stop();
}
