// UI performance benchmark: the real `taskdeck serve` with many stored tasks, the page in
// headless Chromium, timings taken inside the page (bench-page.js). Prints a markdown report.
//
//   node tests/browser/bench.mjs [--tasks 100000] [--data DIR] [--seconds 10] [--rate 1000]
//                                [--scroll-seconds 3] [--scroll-step 100] [--runs 5] [--json FILE]
//                                [--only firstpaint,filters,scroll,updates] [--ui DIR] [--profile DIR]
//   TASKDECK_BIN=/path/to/taskdeck (default target/debug/taskdeck), CHROMIUM (default /usr/bin/chromium)
//
// --data DIR keeps a seeded store in DIR/data, DIR/cfg (seeded or topped up when it holds fewer
// than --tasks); without it a temporary store is seeded and deleted at the end. Seeding 100,000
// tasks through a debug build takes a few minutes; pass --data to pay that once. Each run
// checkpoints the seeded store's WAL with the sqlite3 CLI (BENCH_NO_COMPACT=1 skips it), then
// works on a temporary copy, so the live phases never grow the seeded store. --ui DIR serves the page from another copy of ui/
// through a small local proxy (to compare two UI versions against one binary; the proxy adds a
// hop, so compare proxied runs with proxied runs). --profile DIR records CPU profiles of the page
// during the live-update phases (DIR/updates.cpuprofile, DIR/inserts.cpuprofile) and lists the
// functions that took the most time.
//
// Measured:
//  1. first paint: navigation start → the first task row is in the DOM, and after the frame
//     that rendered it (a message posted from the MutationObserver callback);
//  2. filters: the click / last keystroke's event.timeStamp → the rows in view are exactly the
//     first rows the API returns for that filter (and after that frame);
//  3. update-to-screen latency under a stream of changes: each change's server time (event
//     `at`) → the first rendered frame whose row shows that change or a later one of the same task;
//  4. scrolling: scrollTop += step in every requestAnimationFrame for a few seconds; frame
//     intervals from the rAF timestamps.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { startServer, startUiProxy, client, seed, storedTasks, followEvents, pool, SEARCH_TERM } from './bench-server.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '..', '..');

// ---------------------------------------------------------------- options

function parseArgs(argv) {
  const o = { tasks: 100000, data: null, seconds: 10, rate: 1000, scrollSeconds: 3, scrollStep: 100, runs: 5, json: null, only: null, ui: null, profile: null };
  const names = { '--tasks': 'tasks', '--data': 'data', '--seconds': 'seconds', '--rate': 'rate', '--scroll-seconds': 'scrollSeconds', '--scroll-step': 'scrollStep', '--runs': 'runs', '--json': 'json', '--only': 'only', '--ui': 'ui', '--profile': 'profile' };
  for (let i = 0; i < argv.length; i++) {
    const key = names[argv[i]];
    if (!key || i + 1 >= argv.length) {
      console.error(`unknown or incomplete option ${argv[i]}\nusage: node tests/browser/bench.mjs [--tasks N] [--data DIR] [--seconds S] [--rate R] [--scroll-seconds S] [--scroll-step PX] [--runs N] [--json FILE] [--only firstpaint,filters,scroll,updates] [--ui DIR] [--profile DIR]`);
      process.exit(2);
    }
    const v = argv[++i];
    o[key] = ['data', 'json', 'only', 'ui', 'profile'].includes(key) ? v : Number(v);
  }
  return o;
}

const opt = parseArgs(process.argv.slice(2));
const BIN = process.env.TASKDECK_BIN || path.join(repo, 'target', 'debug', 'taskdeck');
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const PAGE_SCRIPT = fs.readFileSync(path.join(here, 'bench-page.js'), 'utf8');
const VIEWPORT = { width: 1280, height: 860 };
const want = (part) => !opt.only || opt.only.split(',').includes(part);
const log = (s) => process.stderr.write(`${s}\n`);
// Typed into the search box; its prefixes match more tasks, so only the whole term narrows to its rows.
const TERM = `${SEARCH_TERM} 9`;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// ---------------------------------------------------------------- statistics

function quantile(sorted, q) {
  if (!sorted.length) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[i];
}
function summary(values) {
  const s = [...values].filter(Number.isFinite).sort((a, b) => a - b);
  return { n: s.length, min: s[0], p50: quantile(s, 0.5), p95: quantile(s, 0.95), p99: quantile(s, 0.99), max: s[s.length - 1] };
}
const ms = (v) => (Number.isFinite(v) ? `${v < 10 ? v.toFixed(1) : Math.round(v)} ms` : 'n/a');

// ---------------------------------------------------------------- everything we start is stopped

const cleanups = [];
async function cleanupAll() {
  while (cleanups.length) {
    const fn = cleanups.pop();
    try {
      await fn();
    } catch (err) {
      log(`cleanup: ${err.message}`);
    }
  }
}
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.on(sig, async () => {
    await cleanupAll();
    process.exit(130);
  });
}

// ---------------------------------------------------------------- the store

/**
 * Folds the SQLite write-ahead log back into the database (server stopped) with the sqlite3
 * CLI, when there is one. Seeding (and the live-update phases of earlier runs) leave a WAL of
 * up to gigabytes: the server only runs PASSIVE checkpoints, and under constant writes the WAL
 * is never restarted, which makes every read slower (see BENCHMARKS.md). Each run starts from
 * the same compact store. Returns the WAL size found, in bytes (null when not compacted).
 */
function compactStore(dir) {
  const db = path.join(dir, 'data', 'taskdeck.sqlite3');
  if (!fs.existsSync(db) || process.env.BENCH_NO_COMPACT) return null;
  const walFile = `${db}-wal`;
  const size = fs.existsSync(walFile) ? fs.statSync(walFile).size : 0;
  try {
    execFileSync('sqlite3', [db, 'PRAGMA wal_checkpoint(TRUNCATE);'], { stdio: 'ignore' });
  } catch {
    log('sqlite3 CLI not found: the store is used as it is (its WAL may slow reads)');
    return null;
  }
  return size;
}

/**
 * Waits (server running) until the search index in DIR/data/search.sqlite3 has seen the store's
 * last event, as it has on a store in daily use; returns the seconds waited (null without the
 * sqlite3 CLI). A store seeded by an older Taskdeck gets its index built here.
 */
async function waitForSearchIndex(dir) {
  const sql = (db, q) => execFileSync('sqlite3', [path.join(dir, 'data', db), q], { encoding: 'utf8' }).trim();
  const started = Date.now();
  try {
    for (;;) {
      const newest = Number(sql('taskdeck.sqlite3', 'SELECT ifnull(max(id), 0) FROM events;'));
      let seen = -1;
      try {
        seen = Number(sql('search.sqlite3', "SELECT ifnull(max(value), 0) FROM meta WHERE key = 'event_id';") || 0);
      } catch {
        // Not created yet.
      }
      if (seen >= newest) return (Date.now() - started) / 1000;
      if (Date.now() - started > 300_000) throw new Error(`search index still behind after 300 s (${seen} of ${newest})`);
      await new Promise((r) => setTimeout(r, 200));
    }
  } catch (e) {
    if (e.code === 'ENOENT') return null;
    throw e;
  }
}

/**
 * With --profile DIR: starts a CPU profile of the page (Chrome DevTools protocol, 0.5 ms
 * sampling). `stop(name)` writes DIR/name.cpuprofile (open it in DevTools) and returns the
 * page's main-thread time by function, largest first. Without --profile: a no-op.
 */
async function profilePage(page) {
  if (!opt.profile) return { stop: async () => null };
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Profiler.enable');
  await cdp.send('Profiler.setSamplingInterval', { interval: 500 });
  await cdp.send('Profiler.start');
  return {
    stop: async (name) => {
      const { profile } = await cdp.send('Profiler.stop');
      await cdp.detach();
      fs.mkdirSync(opt.profile, { recursive: true });
      fs.writeFileSync(path.join(opt.profile, `${name}.cpuprofile`), JSON.stringify(profile));
      const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
      const self = new Map();
      profile.samples.forEach((id, i) => {
        const f = nodes.get(id).callFrame;
        const key = `${f.functionName || '(anonymous)'} ${f.url ? `${f.url.split('/').pop()}:${f.lineNumber + 1}` : ''}`.trim();
        self.set(key, (self.get(key) || 0) + (profile.timeDeltas[i] || 0) / 1000);
      });
      return [...self].sort((a, b) => b[1] - a[1]).slice(0, 12).map(([fn, ms]) => [fn, Math.round(ms)]);
    },
  };
}

// ---------------------------------------------------------------- page helpers

async function newPage(browser) {
  const context = await browser.newContext({ viewport: VIEWPORT, colorScheme: 'light' });
  await context.addInitScript({ content: PAGE_SCRIPT });
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  return { context, page, errors };
}

/** Opens the UI and waits for the first row; returns the page's own timings (ms since navigation start). */
async function openUi(browser, base, token) {
  const tab = await newPage(browser);
  // The harness evaluates nothing in the page until its first row is rendered: Playwright's
  // first evaluation compiles its helper script (~10 ms of the page's main thread here), which
  // polling would put in the middle of what is measured. The page logs a console message instead.
  const rendered = tab.page.waitForEvent('console', { predicate: (m) => m.text() === 'taskdeck-bench: first row rendered', timeout: 60_000 });
  await tab.page.goto(`${base}/#token=${encodeURIComponent(token)}`, { waitUntil: 'commit' });
  await rendered;
  const t = await tab.page.evaluate(() => {
    const B = window.__bench;
    const res = performance.getEntriesByType('resource');
    const find = (re) => res.find((r) => re.test(r.name));
    const me = find(/\/v1\/me$/);
    const tasks = find(/\/v1\/tasks\?/);
    const paint = Object.fromEntries(performance.getEntriesByType('paint').map((p) => [p.name, p.startTime]));
    const nav = performance.getEntriesByType('navigation')[0];
    const f = (re) => B.fetches.find((x) => re.test(x.url)) || {};
    return {
      meStart: f(/\/v1\/me$/).start,
      eventsStart: f(/\/v1\/events/).start,
      eventsOpen: f(/\/v1\/events/).headers,
      firstRow: B.firstRow,
      firstRowPainted: B.firstRowPainted,
      fcp: paint['first-contentful-paint'],
      domContentLoaded: nav ? nav.domContentLoadedEventEnd : null,
      meEnd: me ? me.responseEnd : null,
      tasksStart: tasks ? tasks.startTime : null,
      tasksEnd: tasks ? tasks.responseEnd : null,
      tasksBytes: tasks ? tasks.encodedBodySize : null,
    };
  });
  return { ...tab, t };
}

/** Clicks/types `act`, then waits until the rows in view are the first of `ids`. */
async function timeFilter(page, ids, act, inputType) {
  await page.evaluate(([ids, inputType]) => window.__bench.watchFor(ids, inputType), [ids, inputType]);
  await act();
  await page.waitForFunction(() => window.__bench.watch && window.__bench.watch.painted !== null, null, { timeout: 30_000, polling: 20 });
  return page.evaluate((inputType) => {
    const B = window.__bench;
    const inputs = B.inputs.filter((e) => e.type === inputType);
    // From the last such event before the rows were right (the last keystroke when typing).
    const before = inputs.filter((e) => e.t <= B.watch.t);
    const start = before.length ? before[before.length - 1].t : NaN;
    return { dom: B.watch.t - start, painted: B.watch.painted - start };
  }, inputType);
}

async function idsFor(api, query) {
  const r = await api.get(`/v1/tasks?limit=40${query ? `&${query}` : ''}`);
  return r.tasks.map((t) => t.taskId);
}

// ---------------------------------------------------------------- update-to-screen latency

/**
 * Sends `rate` changes per second for `seconds` with `send(seq)` (at most `inFlight` at once),
 * while Node follows /v1/events. Returns what was sent and the number of failures.
 */
async function drive(seconds, rate, send, inFlight = 64) {
  const t0 = Date.now();
  let sent = 0;
  let failed = 0;
  let busy = 0;
  let capped = 0;
  const total = Math.round(seconds * rate);
  await new Promise((resolve) => {
    const tick = () => {
      const due = Math.min(total, Math.floor(((Date.now() - t0) * rate) / 1000));
      while (sent < due) {
        if (busy >= inFlight) {
          capped++;
          break;
        }
        const seq = sent++;
        busy++;
        send(seq)
          .catch(() => failed++)
          .finally(() => busy--);
      }
      if (sent >= total) {
        const wait = setInterval(() => {
          if (busy === 0) {
            clearInterval(wait);
            resolve();
          }
        }, 5);
      } else setTimeout(tick, 2);
    };
    tick();
  });
  return { sent, failed, seconds: (Date.now() - t0) / 1000, capped };
}

/**
 * For each server event of `events` ({id, taskId, at, recv, covers(record)}) the first page
 * record (time order) of the same task that shows it or a later state.
 */
function latencies(events, records, covers, arrivals = new Map()) {
  const byTask = new Map();
  for (const r of records) {
    if (!byTask.has(r.id)) byTask.set(r.id, []);
    byTask.get(r.id).push(r);
  }
  const dom = [];
  const painted = [];
  const wire = [];
  const raw = [];
  const transport = [];
  const page = [];
  let unseen = 0;
  for (const e of events) {
    wire.push(e.recv - e.at);
    const recs = byTask.get(e.taskId) || [];
    const r = recs.find((rec) => covers(rec, e));
    if (!r || r.painted === null) {
      unseen++;
      continue;
    }
    dom.push(r.t - e.at);
    painted.push(r.painted - e.at);
    const arrived = arrivals.get(e.id);
    if (arrived !== undefined) {
      transport.push(arrived - e.at);
      page.push(r.painted - arrived);
    }
    raw.push([e.at, e.recv - e.at, r.t - e.at, r.painted - e.at]);
  }
  return { dom: summary(dom), painted: summary(painted), wire: summary(wire), transport: summary(transport), page: summary(page), unseen, events: events.length, raw };
}

/** Mode A: reports to external jobs whose rows are in view (each report = one change). */
async function updateStream(page, base, token, api) {
  const rowsInView = await page.evaluate(() => Math.floor(document.getElementById('task-list').clientHeight / 64));
  const jobs = [];
  for (let i = 0; i < rowsInView; i++) {
    const job = await api.post('/v1/jobs', { external: { name: `bench-live-${i}`, heartbeatMs: 600000 } });
    jobs.push(job.taskId || job.task.taskId);
  }
  await page.waitForFunction((ids) => {
    const shown = new Set(window.__bench.visibleRows().map((r) => r.id));
    return ids.every((id) => shown.has(id));
  }, jobs, { timeout: 30_000, polling: 50 });
  await sleep(500);

  const wanted = new Set(jobs);
  const events = [];
  const markerEvent = new Map(); // marker → highest event id whose task snapshot shows it
  const stream = followEvents(base, token, (change, recv) => {
    if (!change || !wanted.has(change.task.taskId)) return;
    const m = /^u(\d+)$/.exec(change.task.statusMessage || '');
    const e = { id: change.event.id, taskId: change.task.taskId, at: Date.parse(change.event.at), recv, marker: m ? m[0] : null, kind: change.event.kind };
    events.push(e);
    if (e.marker) markerEvent.set(`${e.taskId}|${e.marker}`, Math.max(markerEvent.get(`${e.taskId}|${e.marker}`) || 0, e.id));
  });
  await stream.opened;
  await sleep(300);
  await page.evaluate(() => {
    window.__bench.longTasks = [];
    window.__bench.startRecording();
  });
  const sentAt = Date.now();
  const prof = await profilePage(page);
  const d = await drive(opt.seconds, opt.rate, (seq) => api.post(`/v1/jobs/${jobs[seq % jobs.length]}/report`, { statusMessage: `u${seq}` }));
  await sleep(1500);
  const profile = await prof.stop('updates');
  const { records, arrivals } = await page.evaluate(() => window.__bench.stopRecording());
  const arrivedAt = new Map(arrivals);
  const longTasks = await page.evaluate(() => window.__bench.longTasks.map((l) => [performance.timeOrigin + l.start, l.duration]));
  await stream.close();
  const inWindow = events.filter((e) => e.marker && e.recv >= sentAt);
  const lat = latencies(inWindow, records, (rec, e) => {
    const covered = markerEvent.get(`${rec.id}|${rec.msg}`);
    return covered !== undefined && covered >= e.id;
  }, arrivedAt);
  const span = inWindow.length ? (inWindow[inWindow.length - 1].at - inWindow[0].at) / 1000 : 0;
  const kinds = {};
  for (const e of inWindow) kinds[e.kind] = (kinds[e.kind] || 0) + 1;
  // Clean up: finish the jobs so they do not linger as "working".
  await pool(jobs.length, 8, (i) => api.post(`/v1/jobs/${jobs[i]}/report`, { result: { content: [{ type: 'text', text: 'bench done' }] } }).catch(() => {}));
  return { ...lat, drive: d, rows: jobs.length, changesPerSecond: span ? inWindow.length / span : 0, longTasks, kinds, profile };
}

/** Mode B: new echo tasks (created + completed = two changes each) inserted at the top of the list. */
async function insertStream(page, base, token, api) {
  const run = `ins${Date.now().toString(36)}`;
  const events = [];
  const stream = followEvents(base, token, (change, recv) => {
    if (!change) return;
    const note = change.task.arguments && change.task.arguments.note;
    if (typeof note !== 'string' || !note.startsWith(run)) return;
    const kind = change.event.kind;
    const to = change.event.data && change.event.data.to;
    events.push({ id: change.event.id, taskId: change.task.taskId, at: Date.parse(change.event.at), recv, kind, to });
  });
  await stream.opened;
  await sleep(300);
  await page.evaluate(() => window.__bench.startRecording());
  const prof = await profilePage(page);
  const d = await drive(opt.seconds, opt.rate / 2, (seq) => api.post('/v1/jobs', { tool: 'echo', arguments: { n: seq, note: `${run} ${seq}` } }));
  await sleep(1500);
  const profile = await prof.stop('inserts');
  const { records, arrivals } = await page.evaluate(() => window.__bench.stopRecording());
  const arrivedAt = new Map(arrivals);
  await stream.close();
  const created = events.filter((e) => e.kind === 'created');
  const finished = events.filter((e) => e.kind === 'status' && e.to === 'completed');
  const latCreated = latencies(created, records, () => true, arrivedAt);
  const latDone = latencies(finished, records, (rec) => rec.badge.includes('badge-completed'), arrivedAt);
  const all = latencies(
    [...created, ...finished],
    records,
    (rec, e) => e.kind === 'created' || rec.badge.includes('badge-completed'),
    arrivedAt,
  );
  const span = events.length ? (events[events.length - 1].at - events[0].at) / 1000 : 0;
  return { created: latCreated, finished: latDone, all, drive: d, changesPerSecond: span ? events.length / span : 0, other: events.length - created.length - finished.length, profile };
}

// ---------------------------------------------------------------- scrolling

async function scrollRun(page, seconds, step) {
  await page.evaluate(() => {
    document.getElementById('task-list').scrollTop = 0;
    window.__bench.longTasks = [];
  });
  await sleep(500);
  return page.evaluate(
    ({ seconds, step }) =>
      new Promise((resolve) => {
        const list = document.getElementById('task-list');
        const times = [];
        let blank = 0;
        const start = performance.now();
        const covered = () => {
          // Is every row position in view filled with a rendered row? (what the last frame showed)
          const top = list.scrollTop;
          const n = Number(list.getAttribute('aria-rowcount')) || 0;
          const first = Math.floor(top / 64);
          const last = Math.min(n - 1, Math.floor((top + list.clientHeight - 1) / 64));
          const have = new Set();
          for (const el of list.querySelectorAll('.row:not([hidden])')) have.add(Number(el.getAttribute('aria-rowindex')) - 1);
          for (let i = first; i <= last; i++) if (!have.has(i)) return false;
          return true;
        };
        const frame = (t) => {
          times.push(t);
          if (!covered()) blank++;
          if (t - start >= seconds * 1000) {
            const B = window.__bench;
            resolve({ times, blank, scrolledPx: list.scrollTop, rows: Number(list.getAttribute('aria-rowcount')), longTasks: B.longTasks.filter((l) => l.start >= start) });
            return;
          }
          list.scrollTop += step;
          requestAnimationFrame(frame);
        };
        requestAnimationFrame(frame);
      }),
    { seconds, step },
  );
}

function frameStats(r) {
  const gaps = [];
  for (let i = 1; i < r.times.length; i++) gaps.push(r.times[i] - r.times[i - 1]);
  const s = summary(gaps);
  const over = (limit) => gaps.filter((g) => g > limit).length;
  // Frames lost: how many 16.7 ms vsync slots were skipped in total.
  const lost = gaps.reduce((n, g) => n + Math.max(0, Math.round(g / (1000 / 60)) - 1), 0);
  const slowFrames = gaps.map((g, i) => [i + 1, Math.round(g)]).filter(([, g]) => g > 25);
  return { frames: gaps.length, slowFrames, ...s, over17: over(17.5), over25: over(25), over33: over(33.4), lost, blank: r.blank, scrolledPx: r.scrolledPx, rows: r.rows, longTasks: r.longTasks.length, longestTask: Math.max(0, ...r.longTasks.map((l) => l.duration)) };
}

// ---------------------------------------------------------------- main

async function main() {
  if (!fs.existsSync(BIN)) throw new Error(`taskdeck binary not found at ${BIN} (build it, or set TASKDECK_BIN)`);
  if (!fs.existsSync(CHROMIUM)) throw new Error(`Chromium not found at ${CHROMIUM} (set CHROMIUM)`);
  // The seeded store stays as it is: each run works on a copy (the live phases add tasks).
  const seedDir = opt.data ? path.resolve(opt.data) : fs.mkdtempSync(path.join(os.tmpdir(), 'taskdeck-bench-seed-'));
  if (!opt.data) cleanups.push(() => fs.rmSync(seedDir, { recursive: true, force: true }));
  const load0 = os.loadavg();

  log(`server: ${BIN}; seeded store: ${seedDir}`);
  const wal = compactStore(seedDir);
  const seeding = await startServer(BIN, seedDir);
  cleanups.push(() => seeding.stop());
  let api = client(seeding.base, seeding.token);
  const have = await storedTasks(api);
  if (have < opt.tasks) {
    log(`seeding ${opt.tasks - have} tasks (${have} stored)…`);
    const s = await seed(api, opt.tasks);
    log(`seeded ${s.added} in ${s.seconds.toFixed(0)} s`);
  } else log(`reusing ${have} stored tasks`);
  const indexWait = await waitForSearchIndex(seedDir);
  if (indexWait !== null) log(`search index current after ${indexWait.toFixed(1)} s`);
  await seeding.stop();
  const walAfterSeeding = compactStore(seedDir);
  const runDir = fs.mkdtempSync(path.join(os.tmpdir(), 'taskdeck-bench-run-'));
  cleanups.push(() => fs.rmSync(runDir, { recursive: true, force: true }));
  fs.cpSync(seedDir, runDir, { recursive: true });
  const server = await startServer(BIN, runDir);
  cleanups.push(() => server.stop());
  api = client(server.base, server.token);
  const stored = await storedTasks(api);
  // The page's origin: the server itself, or (--ui DIR) a local proxy serving another UI copy.
  let pageBase = server.base;
  if (opt.ui) {
    const proxy = await startUiProxy(path.resolve(opt.ui), server.base);
    cleanups.push(() => proxy.close());
    pageBase = proxy.base;
    log(`page served from ${opt.ui} through ${pageBase}`);
  }

  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  cleanups.push(() => browser.close());
  const results = { stored, opt, bin: BIN, walFound: wal === null && walAfterSeeding === null ? null : Math.max(wal || 0, walAfterSeeding || 0) };
  const errors = [];

  // 1. First paint (a fresh context each time: no cache, no sessionStorage). The first run warms
  //    the server's page cache and is not counted.
  if (want('firstpaint')) {
    log('first paint…');
    const firsts = [];
    for (let i = 0; i <= opt.runs; i++) {
      const tab = await openUi(browser, pageBase, server.token);
      errors.push(...tab.errors);
      if (i > 0) firsts.push(tab.t);
      await tab.context.close();
    }
    results.firstPaint = firsts;
  }

  // The page for the rest.
  const tab = await openUi(browser, pageBase, server.token);
  const { page } = tab;
  await page.locator('#conn[data-state="open"]').waitFor();
  await sleep(1000);

  // 2. Filters.
  if (want('filters')) {
    log('filters…');
    const allIds = await idsFor(api, '');
    const failedIds = await idsFor(api, 'status=failed');
    const searchIds = await idsFor(api, `q=${encodeURIComponent(TERM)}`);
    const apiTimes = {};
    for (const [name, q] of [['all', ''], ['failed', 'status=failed'], ['search', `q=${encodeURIComponent(TERM)}`]]) {
      const t = [];
      for (let i = 0; i < 3; i++) {
        const t0 = performance.now();
        await api.get(`/v1/tasks?limit=200${q ? `&${q}` : ''}`);
        t.push(performance.now() - t0);
      }
      apiTimes[name] = summary(t).p50;
    }
    results.apiTimes = apiTimes;
    const filt = { statusOn: [], statusOff: [], searchType: [], searchEnter: [], searchClear: [] };
    const chip = (s) => page.locator(`#status-filters button.chip[data-status="${s}"]`);
    for (let i = 0; i < opt.runs; i++) {
      filt.statusOn.push(await timeFilter(page, failedIds, () => chip('failed').click(), 'click'));
      await sleep(300);
      filt.statusOff.push(await timeFilter(page, allIds, () => chip('all').click(), 'click'));
      await sleep(300);
      await page.locator('#search').click();
      filt.searchType.push(await timeFilter(page, searchIds, () => page.keyboard.type(TERM, { delay: 80 }), 'input'));
      await sleep(300);
      filt.searchClear.push(await timeFilter(page, allIds, () => page.locator('#search').fill(''), 'input'));
      await sleep(300);
      await page.locator('#search').fill(TERM);
      filt.searchEnter.push(await timeFilter(page, searchIds, () => page.keyboard.press('Enter'), 'keydown'));
      await sleep(300);
      await timeFilter(page, allIds, () => page.locator('#search').fill(''), 'input');
      await sleep(300);
    }
    results.filters = filt;
  }
  await page.locator('#task-list').focus();
  await page.evaluate(() => (document.getElementById('task-list').scrollTop = 0));

  // 4. Scrolling (before the live streams grow the list).
  if (want('scroll')) {
    log('scrolling…');
    results.scroll = frameStats(await scrollRun(page, opt.scrollSeconds, opt.scrollStep));
    results.scrollSlow = frameStats(await scrollRun(page, opt.scrollSeconds, 16));
  }
  await page.evaluate(() => (document.getElementById('task-list').scrollTop = 0));
  await sleep(500);

  // 3. Update-to-screen latency.
  if (want('updates')) {
    log(`live updates (${opt.rate}/s for ${opt.seconds} s)…`);
    results.updates = await updateStream(page, server.base, server.token, api);
    await sleep(1000);
    log(`live inserts (${opt.rate / 2} tasks/s = ~${opt.rate} changes/s for ${opt.seconds} s)…`);
    results.inserts = await insertStream(page, server.base, server.token, api);
  }
  errors.push(...tab.errors);
  results.errors = errors;
  results.machine = {
    cpus: os.cpus().length,
    cpu: os.cpus()[0] && os.cpus()[0].model,
    memGiB: Math.round(os.totalmem() / 2 ** 30),
    kernel: os.release(),
    chromium: browser.version(),
    node: process.version,
    loadBefore: load0,
    loadAfter: os.loadavg(),
    gpu: 'none (--disable-gpu, software compositing)',
  };
  await cleanupAll();
  return results;
}

// ---------------------------------------------------------------- report

function pass(ok) {
  return ok ? 'met' : '**missed**';
}

/** "met at p50 and p95, **missed** at p99" for a latency summary against `limit` ms. */
function verdict(s, limit) {
  const ok = ['p50', 'p95', 'p99'].filter((k) => s[k] < limit);
  const bad = ['p50', 'p95', 'p99'].filter((k) => !(s[k] < limit));
  if (!bad.length) return 'met (p99)';
  if (!ok.length) return '**missed** (p50)';
  return `met at ${ok.join(', ')}; **missed** at ${bad.join(', ')}`;
}

function report(r) {
  const cmd = `node tests/browser/bench.mjs ${process.argv.slice(2).join(' ')}`.trim();
  const m = r.machine;
  const out = [];
  const details = [];
  out.push(`Command: \`${process.env.TASKDECK_BIN ? `TASKDECK_BIN=${process.env.TASKDECK_BIN} ` : ''}${cmd}\` (${new Date().toISOString().slice(0, 10)})`);
  out.push(`Machine: ${m.cpus} cores (${m.cpu}), ${m.memGiB} GiB, Linux ${m.kernel}, no GPU; Chromium ${m.chromium} headless (--disable-gpu), Node ${m.node}; server \`${r.bin}\`; load average ${m.loadBefore.map((x) => x.toFixed(1)).join(' ')} before, ${m.loadAfter.map((x) => x.toFixed(1)).join(' ')} after.`);
  out.push(`Store: ${r.stored.toLocaleString('en-US')} tasks${r.walFound !== null ? ` (its WAL was checkpointed before the run: ${(r.walFound / 2 ** 20).toFixed(0)} MiB)` : ''}. Viewport ${VIEWPORT.width}×${VIEWPORT.height}.${opt.ui ? ` Page served from \`${opt.ui}\` through a local proxy.` : ''}`);
  out.push('');
  out.push('| measurement | target | p50 | p95 / max | result |');
  out.push('|---|---|---|---|---|');
  if (r.firstPaint) {
    const fp = summary(r.firstPaint.map((t) => t.firstRowPainted));
    out.push(`| first paint: navigation → first row rendered (${fp.n} fresh tabs) | < 200 ms | ${ms(fp.p50)} | max ${ms(fp.max)} | ${pass(fp.p50 < 200)} |`);
    const f = r.firstPaint;
    const med = (k) => ms(summary(f.map((t) => t[k])).p50);
    details.push(`- First paint, medians (ms since navigation start): first contentful paint ${med('fcp')}, DOMContentLoaded ${med('domContentLoaded')}, /v1/me requested ${med('meStart')} and answered ${med('meEnd')}, /v1/events requested ${med('eventsStart')} and open ${med('eventsOpen')}, /v1/tasks requested ${med('tasksStart')} and answered ${med('tasksEnd')}, first row in the DOM ${med('firstRow')}, rendered ${med('firstRowPainted')}. Every run: ${f.map((t) => Math.round(t.firstRowPainted)).join(', ')} ms.`);
  }
  if (r.filters) {
    const filterRow = (label, list) => {
      const s = summary(list.map((x) => x.painted));
      out.push(`| ${label} (${s.n} runs) | < 100 ms | ${ms(s.p50)} | max ${ms(s.max)} | ${pass(s.p50 < 100)} |`);
    };
    filterRow('filter: click status "Failed" → narrowed rows rendered', r.filters.statusOn);
    filterRow('filter: click "All" → full list rendered', r.filters.statusOff);
    filterRow(`search: last keystroke of "${TERM}" → narrowed rows rendered`, r.filters.searchType);
    filterRow(`search: Enter in the search box → narrowed rows rendered`, r.filters.searchEnter);
    filterRow('search: cleared → full list rendered', r.filters.searchClear);
    details.push(`- The API alone (Node client, limit=200): all ${ms(r.apiTimes.all)}, status=failed ${ms(r.apiTimes.failed)}, q=${TERM} ${ms(r.apiTimes.search)} (medians of 3).`);
    for (const [k, label] of [['statusOn', 'status Failed'], ['statusOff', 'All'], ['searchType', 'search typed'], ['searchEnter', 'search Enter'], ['searchClear', 'search cleared']]) {
      details.push(`- ${label}: ${r.filters[k].map((x) => `${Math.round(x.painted)}`).join(', ')} ms (rows in the DOM: ${r.filters[k].map((x) => `${Math.round(x.dom)}`).join(', ')} ms).`);
    }
  }
  if (r.updates) {
    const u = r.updates;
    out.push(`| update → row rendered: ${u.events} reports to ${u.rows} rows in view at ${Math.round(u.changesPerSecond)} changes/s | < 50 ms | ${ms(u.painted.p50)} | p95 ${ms(u.painted.p95)}, p99 ${ms(u.painted.p99)}, max ${ms(u.painted.max)} | ${verdict(u.painted, 50)} |`);
    const ins = r.inserts.all;
    out.push(`| update → row rendered: ${r.inserts.created.events} new tasks at the top (created + completed) at ${Math.round(r.inserts.changesPerSecond)} changes/s | < 50 ms | ${ms(ins.painted.p50)} | p95 ${ms(ins.painted.p95)}, p99 ${ms(ins.painted.p99)}, max ${ms(ins.painted.max)} | ${verdict(ins.painted, 50)} |`);
    const lt = u.longTasks || [];
    details.push(`- Updates: server event → Node SSE client (a worker thread) p50 ${ms(u.wire.p50)}, p99 ${ms(u.wire.p99)} (the server's part); → the page's stream reader p50 ${ms(u.transport.p50)}, p99 ${ms(u.transport.p99)}; → row in the DOM p50 ${ms(u.dom.p50)}, p99 ${ms(u.dom.p99)}; → rendered p50 ${ms(u.painted.p50)}, p99 ${ms(u.painted.p99)}. The page's own part (stream reader → rendered) p50 ${ms(u.page.p50)}, p95 ${ms(u.page.p95)}, p99 ${ms(u.page.p99)}. ${u.drive.sent} reports sent in ${u.drive.seconds.toFixed(1)} s (asked: ${opt.rate}/s), ${u.drive.failed} failed${u.drive.capped ? `, the 64-in-flight cap was hit ${u.drive.capped} times` : ''}; ${u.unseen} changes never reached a rendered row; events by kind: ${Object.entries(u.kinds || {}).map(([k, n]) => `${k} ${n}`).join(', ')}; ${lt.length} long tasks in the page (longest ${ms(Math.max(0, ...lt.map((l) => l[1])))}).`);
    const c = r.inserts;
    details.push(`- Inserts: created → row p50 ${ms(c.created.painted.p50)}, p99 ${ms(c.created.painted.p99)}; completed → badge p50 ${ms(c.finished.painted.p50)}, p99 ${ms(c.finished.painted.p99)}; server → Node p50 ${ms(c.all.wire.p50)}, p99 ${ms(c.all.wire.p99)}; → the page's stream reader p50 ${ms(c.all.transport.p50)}, p99 ${ms(c.all.transport.p99)}; the page's own part (stream reader → rendered) p50 ${ms(c.all.page.p50)}, p95 ${ms(c.all.page.p95)}, p99 ${ms(c.all.page.p99)}. ${c.drive.sent} tasks in ${c.drive.seconds.toFixed(1)} s (asked: ${opt.rate / 2}/s), ${c.drive.failed} failed; ${c.all.unseen} of ${c.all.events} changes never reached a rendered row (pushed out of view before a frame showed them).`);
  }
  if (r.scroll) {
    for (const [label, s] of [[`${opt.scrollStep} px/frame`, r.scroll], ['16 px/frame', r.scrollSlow]]) {
      out.push(`| scrolling ${label} for ${opt.scrollSeconds} s: frames > 25 ms (a vsync missed) | 0 | ${ms(s.p50)} frame | ${s.over25} of ${s.frames} frames > 25 ms, ${s.over33} > 33 ms, max ${ms(s.max)} | ${pass(s.over25 === 0)} |`);
      details.push(`- Scrolling ${label}: ${s.frames} frames, p50 ${ms(s.p50)}, p95 ${ms(s.p95)}, max ${ms(s.max)}; ${s.over17} > 17.5 ms, ${s.over25} > 25 ms, ${s.over33} > 33 ms${s.slowFrames.length ? ` (frame #: ms ${s.slowFrames.slice(0, 8).map(([i, g]) => `${i}: ${g}`).join(', ')})` : ''}; ${s.lost} vsyncs missed in total; ${s.blank} frames with an unfilled row in view; ${s.longTasks} long tasks (longest ${ms(s.longestTask)}); scrolled to ${s.scrolledPx} px of ${s.rows} loaded rows.`);
    }
  }
  for (const [label, phase] of [['reports', r.updates], ['inserts', r.inserts]]) {
    if (phase && phase.profile) details.push(`- Page CPU profile during the ${label} (\`${opt.profile}/${label === 'reports' ? 'updates' : 'inserts'}.cpuprofile\`), self time: ${phase.profile.map(([fn, t]) => `${fn} ${t} ms`).join(', ')}.`);
  }
  if (r.errors.length) details.push(`- Page errors: ${[...new Set(r.errors)].slice(0, 5).join(' | ')}`);
  out.push('', 'Details:', ...details);
  return out.join('\n');
}

let exitCode = 0;
try {
  const r = await main();
  if (opt.json) fs.writeFileSync(opt.json, JSON.stringify(r, null, 1));
  console.log(report(r));
} catch (err) {
  console.error(err);
  exitCode = 1;
} finally {
  await cleanupAll();
}
process.exit(exitCode);
