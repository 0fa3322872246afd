// Helpers for the UI benchmark (bench.mjs): start/stop `taskdeck serve`, call /v1, seed a
// store with many tasks, and follow /v1/events from Node (the reference clock for "when did the
// server send it"). No browser here.

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import http from 'node:http';

/**
 * Starts `taskdeck serve` on `dir`/data and `dir`/cfg.
 * @returns {Promise<{child: import('node:child_process').ChildProcess, base: string, token: string, stop: () => Promise<void>}>}
 */
export function startServer(bin, dir) {
  fs.mkdirSync(dir, { recursive: true });
  const child = spawn(bin, ['serve', '--port', '0', '--data-dir', path.join(dir, 'data'), '--config-dir', path.join(dir, 'cfg'), '--conformance-fixtures'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
  };
  return new Promise((resolve, reject) => {
    let started = false;
    const timer = setTimeout(() => {
      stop();
      reject(new Error(`server did not start in time; output:\n${out}`));
    }, 60_000);
    const onData = (chunk) => {
      out += chunk.toString();
      if (out.length > 100_000) out = out.slice(-50_000);
      const url = /running headless on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      const tokenFile = /Admin token:\s*(\S+)/.exec(out);
      if (url && tokenFile) {
        clearTimeout(timer);
        started = true;
        resolve({ child, base: url[1], token: fs.readFileSync(tokenFile[1], 'utf8').trim(), stop });
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('exit', (code) => {
      if (started) return;
      clearTimeout(timer);
      reject(new Error(`server exited early (${code}); output:\n${out}`));
    });
  });
}

/** A tiny /v1 client. */
export function client(base, token) {
  async function call(method, p, body) {
    const resp = await fetch(base + p, {
      method,
      headers: { Authorization: `Bearer ${token}`, ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await resp.text();
    let json = null;
    try {
      json = text ? JSON.parse(text) : null;
    } catch {
      json = null;
    }
    if (!resp.ok) throw new Error(`${method} ${p}: HTTP ${resp.status} ${text.slice(0, 300)}`);
    return json;
  }
  return {
    get: (p) => call('GET', p),
    post: (p, body) => call('POST', p, body ?? {}),
  };
}

/** Total tasks in the store (sum of the per-status counts). */
export async function storedTasks(api) {
  const r = await api.get('/v1/tasks?limit=1');
  return Object.values(r.counts || {}).reduce((a, b) => a + b, 0);
}

/** Runs `count` jobs `fn(i)` with at most `concurrency` in flight. */
export async function pool(count, concurrency, fn) {
  let next = 0;
  let done = 0;
  async function worker() {
    while (next < count) {
      const i = next++;
      await fn(i);
      done++;
    }
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
  return done;
}

/**
 * The kind of the i-th seeded task. Mostly instantly completed `echo` tasks; 1% failed and
 * 0.5% cancelled external jobs (so the status filters narrow to a small, spread-out subset);
 * every 100th echo note contains "needle" (the search term).
 */
export function seedKind(i) {
  if (i % 100 === 50) return 'failed';
  if (i % 200 === 25) return 'cancelled';
  return 'echo';
}

export const SEARCH_TERM = 'needle';

/** Adds tasks until the store holds `target`; prints progress to stderr. */
export async function seed(api, target, { concurrency = 50, log = (s) => process.stderr.write(s) } = {}) {
  const have = await storedTasks(api);
  const missing = Math.max(0, target - have);
  if (!missing) return { added: 0, seconds: 0 };
  const t0 = Date.now();
  let last = t0;
  let added = 0;
  await pool(missing, concurrency, async (k) => {
    const i = have + k;
    const kind = seedKind(i);
    if (kind === 'echo') {
      await api.post('/v1/jobs', { tool: 'echo', arguments: { n: i, note: i % 100 === 0 ? `${SEARCH_TERM} ${i}` : `bench ${i}` } });
    } else {
      const job = await api.post('/v1/jobs', { external: { name: `seed-${kind}-${i}`, heartbeatMs: 600000 } });
      const id = job.taskId || (job.task && job.task.taskId);
      if (kind === 'failed') await api.post(`/v1/jobs/${id}/report`, { error: { code: -1, message: `seeded failure ${i}` } });
      else await api.post(`/v1/jobs/${id}/report`, { cancelled: true });
    }
    added++;
    const now = Date.now();
    if (now - last > 5000) {
      last = now;
      log(`  seeded ${have + added}/${target} (${Math.round((added * 1000) / (now - t0))}/s)\n`);
    }
  });
  return { added, seconds: (Date.now() - t0) / 1000 };
}

// Runs in a worker thread so that its receive times are not delayed by the load generator on
// the main thread.
const FOLLOWER = `
const { parentPort, workerData } = require('node:worker_threads');
const { base, token } = workerData;
const controller = new AbortController();
let batch = [];
const flush = () => { if (batch.length) { parentPort.postMessage({ changes: batch }); batch = []; } };
const timer = setInterval(flush, 100);
parentPort.on('message', (m) => { if (m === 'close') { controller.abort(); } });
(async () => {
  const resp = await fetch(base + '/v1/events', { headers: { Authorization: 'Bearer ' + token, Accept: 'text/event-stream' }, signal: controller.signal });
  parentPort.postMessage({ opened: true });
  const decoder = new TextDecoder();
  let buf = '';
  for await (const chunk of resp.body) {
    const recv = Date.now();
    buf += decoder.decode(chunk, { stream: true });
    let cut;
    while ((cut = buf.indexOf('\\n\\n')) >= 0) {
      const block = buf.slice(0, cut);
      buf = buf.slice(cut + 2);
      let type = 'message';
      const data = [];
      for (const line of block.split('\\n')) {
        if (line.startsWith('event:')) type = line.slice(6).trim();
        else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
      }
      if (type === 'change' && data.length) {
        try {
          const c = JSON.parse(data.join('\\n'));
          batch.push({ recv, event: { id: c.event.id, at: c.event.at, kind: c.event.kind, data: c.event.data },
            task: { taskId: c.task.taskId, status: c.task.status, statusMessage: c.task.statusMessage, arguments: c.task.arguments } });
        } catch {}
      } else if (type === 'resync') batch.push({ recv, resync: true });
    }
  }
})().catch(() => {}).finally(() => { flush(); clearInterval(timer); parentPort.postMessage({ done: true }); });
`;

/**
 * Follows /v1/events in a worker thread and calls `onChange(change, receivedAtMs)` for each
 * change (`change` null for a resync). close() resolves once everything received was delivered.
 * @returns {{close: () => Promise<void>, opened: Promise<void>}}
 */
export function followEvents(base, token, onChange) {
  const worker = new Worker(FOLLOWER, { eval: true, workerData: { base, token } });
  let resolveOpen;
  let resolveDone;
  const opened = new Promise((r) => (resolveOpen = r));
  const done = new Promise((r) => (resolveDone = r));
  worker.on('message', (m) => {
    if (m.opened) resolveOpen();
    if (m.changes) for (const c of m.changes) onChange(c.resync ? null : c, c.recv);
    if (m.done) resolveDone();
  });
  worker.on('error', () => {
    resolveOpen();
    resolveDone();
  });
  worker.on('exit', () => {
    resolveOpen();
    resolveDone();
  });
  return {
    opened,
    close: async () => {
      worker.postMessage('close');
      await Promise.race([done, new Promise((r) => setTimeout(r, 2000))]);
      await worker.terminate();
    },
  };
}

const MIME = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.mjs': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8', '.svg': 'image/svg+xml', '.png': 'image/png', '.json': 'application/json' };

/**
 * Serves the page from `uiDir` and forwards everything else (/v1, /mcp) to `upstream`, for
 * comparing two versions of the UI against one server without rebuilding it. The extra hop
 * adds a little latency to every request, so compare proxied runs with proxied runs only.
 * @returns {Promise<{base: string, close: () => Promise<void>}>}
 */
export function startUiProxy(uiDir, upstream) {
  const up = new URL(upstream);
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://x');
    if (url.pathname.startsWith('/v1') || url.pathname.startsWith('/mcp')) {
      const headers = { ...req.headers, host: up.host };
      if (headers.origin) headers.origin = up.origin;
      const preq = http.request({ host: up.hostname, port: up.port, method: req.method, path: req.url, headers }, (pres) => {
        res.writeHead(pres.statusCode, pres.headers);
        res.flushHeaders();
        pres.on('data', (chunk) => res.write(chunk));
        pres.on('end', () => res.end());
      });
      preq.on('error', () => res.destroy());
      res.on('close', () => preq.destroy());
      req.pipe(preq);
      return;
    }
    const rel = url.pathname === '/' ? 'index.html' : decodeURIComponent(url.pathname).replace(/^\/+/, '');
    const file = path.resolve(uiDir, rel);
    if (!file.startsWith(path.resolve(uiDir) + path.sep) || !fs.existsSync(file) || !fs.statSync(file).isFile()) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'Content-Type': MIME[path.extname(file)] || 'application/octet-stream', 'Cache-Control': 'no-cache' });
    res.end(fs.readFileSync(file));
  });
  server.keepAliveTimeout = 60_000;
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      resolve({
        base: `http://127.0.0.1:${server.address().port}`,
        close: () => new Promise((r) => {
          server.closeAllConnections();
          server.close(() => r());
        }),
      });
    });
  });
}
