// Load check for the "Needs input" inbox (BENCHMARKS.md): 1,300 tasks wait for input, then 300
// more arrive (4 at a time) while a probe measures how long the page takes to answer a trivial
// evaluate every 300 ms. Against a running Taskdeck with an empty store:
//   node tests/browser/inbox-load.mjs http://127.0.0.1:PORT ADMIN_TOKEN
import { chromium } from 'playwright-core';
const [base, token] = process.argv.slice(2);
const post = (i) => fetch(`${base}/v1/jobs`, { method: 'POST', headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' }, body: JSON.stringify({ tool: 'request_approval', arguments: { message: `m ${i}` } }) });
for (let i = 0; i < 1300; i += 20) await Promise.all(Array.from({ length: 20 }, (_, k) => post(i + k)));
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
const page = await browser.newPage();
await page.goto(`${base}/#token=${encodeURIComponent(token)}`);
await page.locator('#inbox-count').filter({ hasText: '1,300' }).waitFor({ timeout: 30000 });
let worst = 0, stop = false;
const probe = (async () => { while (!stop) { const t = Date.now(); await page.evaluate(() => 1); worst = Math.max(worst, Date.now() - t); await new Promise((r) => setTimeout(r, 300)); } })();
const t0 = Date.now();
for (let i = 0; i < 300; i += 4) await Promise.all(Array.from({ length: 4 }, (_, k) => post(2000 + i + k)));
await page.locator('#inbox-count').filter({ hasText: '1,600' }).waitFor({ timeout: 60000 });
stop = true; await probe;
console.log(`300 creations in ${Date.now() - t0} ms; longest page.evaluate wait ${worst} ms; title: ${await page.title()}`);
await browser.close();
