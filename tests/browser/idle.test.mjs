// The page sets no clock while nothing on it runs (issue #17): with only finished tasks and no
// approval, no setInterval / setTimeout / requestAnimationFrame callback fires for seconds but the
// one timeout that redraws the rows' ages when their text changes (and they stay true); a
// running task brings the clocks back (its row's time counts, and the detail's when it is open),
// and once it has finished they stop again. The real `taskdeck serve` (with its conformance
// fixtures' slow_compute tool) and headless Chromium; the page's timer functions are wrapped by
// an init script that counts the callbacks that run and the intervals that are set.
//
//   TASKDECK_BIN=/path/to/taskdeck node --test tests/browser/idle.test.mjs

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chromium } from 'playwright-core';
import { startTestServer, tearDown, waitFor, openUi, CHROMIUM } from './harness.mjs';
import { formatAge } from '../../ui/js/format.js';

let server;
let base;
let token;
let tmp;
/** The Chromium openUi launched (closed by tearDown). */
let browser;

/** POSTs a job running `tool` with `args`; resolves with its task id. */
async function createJob(tool, args) {
  const resp = await fetch(`${base}/v1/jobs`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ tool, arguments: args }),
  });
  assert.ok(resp.ok, `POST /v1/jobs: ${resp.status}`);
  const job = await resp.json();
  return job.taskId || job.task.taskId;
}

/** The task's status from GET /v1/tasks/{id}. */
async function statusOf(taskId) {
  const resp = await fetch(`${base}/v1/tasks/${taskId}`, { headers: { Authorization: `Bearer ${token}` } });
  assert.ok(resp.ok, `GET /v1/tasks/${taskId}: ${resp.status}`);
  return (await resp.json()).task.status;
}

before(async () => {
  ({ dir: tmp, child: server, url: base, token } = await startTestServer(['--conformance-fixtures']));
  const ids = [];
  for (let i = 0; i < 3; i++) ids.push(await createJob('echo', { note: `idle ${i}` }));
  for (const id of ids) await waitFor(async () => (await statusOf(id)) === 'completed', `echo task ${id} to complete`);
});

after(() => tearDown({ browser, server, tmp }));

/**
 * Runs in the page before its scripts: wraps setInterval, setTimeout and requestAnimationFrame
 * so that `window.__timers` counts the callbacks that ran (`fired`; `once`, those of timeouts and
 * frames; the last few callbacks' sources in `recent`) and holds the periods of the intervals set and not cleared (`intervals`).
 */
function countTimers() {
  const t = { fired: 0, once: 0, ages: 0, recent: [], intervals: new Map() };
  window.__timers = t;
  const note = (kind, fn) => {
    // The timeouts that redraw the finished rows' ages, and the open settled task's, when their
    // text changes.
    if (String(fn).includes('this.ageTimer = 0')) {
      t.ages++;
      return;
    }
    t.fired++;
    if (kind !== 'interval') t.once++;
    t.recent.push(`${kind}: ${String(fn).slice(0, 100)}`);
    if (t.recent.length > 10) t.recent.shift();
  };
  const wrap = (kind, fn) => (typeof fn === 'function' ? (...a) => (note(kind, fn), fn(...a)) : fn);
  const { setInterval: si, clearInterval: ci, setTimeout: st, requestAnimationFrame: raf } = window;
  window.setInterval = (fn, ms, ...a) => {
    const id = si.call(window, wrap('interval', fn), ms, ...a);
    t.intervals.set(id, ms);
    return id;
  };
  window.clearInterval = (id) => {
    t.intervals.delete(id);
    return ci.call(window, id);
  };
  window.setTimeout = (fn, ms, ...a) => st.call(window, wrap('timeout', fn), ms, ...a);
  window.requestAnimationFrame = (fn) => raf.call(window, wrap('frame', fn));
}

/** `{fired, once, recent, intervals}`: the page's timer callbacks so far and the intervals set now. */
const timers = (page) =>
  page.evaluate(() => {
    const t = window.__timers;
    return { fired: t.fired, once: t.once, ages: t.ages, recent: [...t.recent], intervals: [...t.intervals.values()] };
  });

/**
 * Waits `ms` and asserts that no interval is set and no timer callback ran in the page meanwhile
 * but the list's age timeout, at most once a second (the finished tasks here are seconds old, so
 * their "12s ago" changes each second), and that it kept every row's age true.
 */
async function assertQuiet(page, ms, when) {
  const a = await timers(page);
  await new Promise((r) => setTimeout(r, ms));
  const b = await timers(page);
  assert.deepEqual(b.intervals, [], `${when}: intervals still set: ${JSON.stringify(b.intervals)}`);
  assert.equal(b.fired - a.fired, 0, `${when}: ${b.fired - a.fired} timer callbacks ran in ${ms} ms; the last: ${JSON.stringify(b.recent, null, 1)}`);
  assert.ok(b.ages - a.ages <= 2 * (Math.ceil(ms / 1000) + 1), `${when}: the age timeouts (the list's, the detail's) fired ${b.ages - a.ages} times in ${ms} ms`);
  // Every row's age is what formatAge says now, or up to 1.5 s ago (the one-second throttle, and
  // this check's own reads).
  const rows = await page.$$eval('#task-list .row:not([hidden])', (els) =>
    els.map((el) => ({ id: el.querySelector('.row-id').title, age: el.querySelector('.row-age').textContent })),
  );
  assert.ok(rows.length > 0, `${when}: no rows`);
  for (const { id, age } of rows) {
    const resp = await fetch(`${base}/v1/tasks/${id}`, { headers: { Authorization: `Bearer ${token}` } });
    const { createdAt } = (await resp.json()).task;
    const now = Date.now();
    const want = [...new Set(Array.from({ length: 16 }, (_, i) => formatAge(createdAt, now - 100 * i)))];
    assert.ok(want.includes(age), `${when}: task ${id} shows ${age}, created ${createdAt}, expected ${want}`);
  }
}

test('with only finished tasks no timer runs; a running task ticks in the list and the detail, then the clocks stop', async () => {
  const pageErrors = [];
  let page;
  ({ browser, page } = await openUi({ chromium, executablePath: CHROMIUM, base, token, pageErrors, onPage: (p) => p.addInitScript(countTimers) }));
  await page.locator('#task-list .row:not([hidden]) .row-msg', { hasText: 'idle 2' }).waitFor();
  // What the page does once after loading (rest.js, the lazy modules, their idle-time loads) is
  // over: no timeout or frame for 1.5 s (intervals are what is looked at next).
  await waitFor(async () => {
    const a = (await timers(page)).once;
    await new Promise((r) => setTimeout(r, 1500));
    return (await timers(page)).once === a;
  }, 'the page to settle after loading', { timeout: 30_000, interval: 0 });
  await assertQuiet(page, 3000, 'finished tasks only');

  // A running task appears (a live change from the stream): its row counts its seconds.
  const running = await createJob('slow_compute', { seconds: 6, label: 'idle-running' });
  const row = page.locator(`#task-list .row:not([hidden]):has(.row-id[title="${running}"])`);
  await row.locator('.badge', { hasText: /working/i }).waitFor();
  const durations = new Set();
  await waitFor(async () => {
    durations.add(await row.locator('.row-dur').textContent());
    return durations.size >= 3;
  }, "the running row's time to count", { timeout: 5000, interval: 200 }).catch((err) => {
    throw new Error(`${err.message}; seen ${JSON.stringify([...durations])}`);
  });
  assert.deepEqual((await timers(page)).intervals, [1000], 'one clock, the list\'s, runs');

  // Opened, its detail counts too.
  await row.click();
  const duration = page.locator('#detail dd').getByText(/so far/);
  await duration.waitFor();
  const first = await duration.textContent();
  await waitFor(async () => (await duration.textContent()) !== first, 'the detail\'s duration to count', { timeout: 3000 });
  assert.deepEqual((await timers(page)).intervals, [1000, 1000], 'the list\'s and the detail\'s clocks run');

  // Finished: both clocks stop, and the page is quiet again (with the finished task open).
  await waitFor(async () => (await statusOf(running)) === 'completed', 'slow_compute to complete', { timeout: 15_000 });
  await row.locator('.badge', { hasText: /completed/i }).waitFor();
  await page.locator('#detail').getByText(/so far/).waitFor({ state: 'detached' });
  await waitFor(async () => (await timers(page)).intervals.length === 0, 'the clocks to stop', { timeout: 3000 });
  await new Promise((r) => setTimeout(r, 1000)); // the detail's refetch after the last change
  await assertQuiet(page, 3000, 'after the running task finished');
  // The open settled task's own ages ("Created 9s ago") are kept true the same way.
  const r = await fetch(`${base}/v1/tasks/${running}`, { headers: { Authorization: `Bearer ${token}` } });
  const { createdAt } = (await r.json()).task;
  const shown = await page.locator('#detail').innerText();
  const now = Date.now();
  const want = [...new Set(Array.from({ length: 16 }, (_, i) => formatAge(createdAt, now - 100 * i)))];
  assert.ok(want.some((age) => shown.includes(age)), `the detail shows none of ${want}: ${shown.slice(0, 300)}`);
  assert.deepEqual(pageErrors, []);
});
