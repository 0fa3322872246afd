import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openEventStream } from '../js/event-stream.js';

/** A response whose body yields `chunks` then ends (or stays open when `hold`). */
function sseResponse(chunks, { hold = false, status = 200 } = {}) {
  const enc = new TextEncoder();
  let release;
  const held = new Promise((r) => (release = r));
  const body = new ReadableStream({
    async start(controller) {
      for (const c of chunks) controller.enqueue(enc.encode(c));
      if (hold) await held;
      controller.close();
    },
  });
  const resp = new Response(body, { status, headers: { 'content-type': 'text/event-stream' } });
  resp.release = release;
  return resp;
}

const change = (id, taskId = 't1') =>
  `id: ${id}\nevent: change\ndata: ${JSON.stringify({ event: { id, kind: 'progress', taskId }, task: { taskId } })}\n\n`;

test('delivers change events, then reconnects with Last-Event-ID after the stream ends', async () => {
  const calls = [];
  const responses = [sseResponse([change(1), change(2).slice(0, 10), change(2).slice(10)]), sseResponse([change(3)], { hold: true })];
  const got = [];
  let resolveThird;
  const third = new Promise((r) => (resolveThird = r));
  const stream = openEventStream({
    getToken: () => 'tok',
    fetchImpl: async (url, init) => {
      calls.push({ url, headers: init.headers });
      return responses.shift();
    },
    onChange: (c, id) => {
      got.push(id);
      if (id === '3') resolveThird();
    },
    backoffMs: [1],
    idleTimeoutMs: 0,
  });
  await third;
  assert.deepEqual(got, ['1', '2', '3']);
  assert.equal(calls.length, 2);
  assert.equal(calls[0].url, '/v1/events');
  assert.equal(calls[0].headers.Authorization, 'Bearer tok');
  assert.equal(calls[0].headers['Last-Event-ID'], undefined);
  assert.equal(calls[1].headers['Last-Event-ID'], '2');
  assert.equal(stream.lastEventId, '3');
  stream.close();
  await stream.done;
});

test('a resync event calls onResync; a malformed change is skipped', async () => {
  let resynced = 0;
  const got = [];
  const states = [];
  const resp = sseResponse(['event: change\ndata: {oops\n\n', 'event: resync\ndata: {}\n\n', change(5)], { hold: true });
  let done;
  const seen = new Promise((r) => (done = r));
  const stream = openEventStream({
    getToken: () => 't',
    fetchImpl: async () => resp,
    onChange: (c, id) => {
      got.push(id);
      done();
    },
    onResync: () => resynced++,
    onState: (s) => states.push(s),
    idleTimeoutMs: 0,
  });
  await seen;
  assert.equal(resynced, 1);
  assert.deepEqual(got, ['5']);
  assert.deepEqual(states.slice(0, 2), ['connecting', 'open']);
  stream.close();
  await stream.done;
  assert.equal(states.at(-1), 'closed');
});

test('store events report the disk; they have no id and leave Last-Event-ID alone', async () => {
  const stores = [];
  const resp = sseResponse(
    [
      change(7),
      'event: store\ndata: {"diskFull":true,"since":"2026-12-03T10:00:00.000Z"}\n\n',
      'event: store\ndata: {oops\n\n',
      'event: store\ndata: {"diskFull":false}\n\n',
    ],
    { hold: true },
  );
  let done;
  const seen = new Promise((r) => (done = r));
  const stream = openEventStream({
    getToken: () => 't',
    fetchImpl: async () => resp,
    onChange: () => {},
    onStore: (s) => {
      stores.push(s);
      if (stores.length === 2) done();
    },
    idleTimeoutMs: 0,
  });
  await seen;
  assert.deepEqual(stores, [{ diskFull: true, since: '2026-12-03T10:00:00.000Z' }, { diskFull: false }]);
  assert.equal(stream.lastEventId, '7');
  stream.close();
  await stream.done;
});

test('401 stops the stream and reports an auth error; network errors retry', async () => {
  let authErrors = 0;
  let n = 0;
  const stream = openEventStream({
    getToken: () => 'bad',
    fetchImpl: async () => {
      n++;
      if (n === 1) throw new TypeError('network down');
      return new Response('{}', { status: 401 });
    },
    onChange: () => {},
    onAuthError: () => authErrors++,
    backoffMs: [1],
    idleTimeoutMs: 0,
  });
  await stream.done;
  assert.equal(n, 2);
  assert.equal(authErrors, 1);
});

test('a silent connection is dropped after the idle timeout and reopened', async () => {
  let n = 0;
  let second;
  const reopened = new Promise((r) => (second = r));
  const stream = openEventStream({
    getToken: () => 't',
    fetchImpl: async (url, init) => {
      n++;
      if (n === 2) second();
      // A body that never sends anything, but honours the abort signal.
      const body = new ReadableStream({
        start(controller) {
          init.signal.addEventListener('abort', () => controller.error(new Error('aborted')));
        },
      });
      return new Response(body, { status: 200 });
    },
    onChange: () => {},
    backoffMs: [1],
    idleTimeoutMs: 20,
  });
  await reopened;
  assert.equal(n, 2);
  stream.close();
  await stream.done;
});

test('over loopback the stream asks for no keep-alives and arms no idle timer; elsewhere both', async () => {
  for (const [loopback, wantUrl, wantIdleTimer] of [
    [true, '/v1/events?keepAlive=false', false],
    [false, '/v1/events', true],
  ]) {
    const urls = [];
    const timers = [];
    let opened;
    const open = new Promise((r) => (opened = r));
    const stream = openEventStream({
      loopback,
      getToken: () => 't',
      fetchImpl: async (url) => {
        urls.push(url);
        opened();
        return sseResponse([change(1)], { hold: true });
      },
      onChange: () => {},
      setTimer: (fn, ms) => {
        timers.push(ms);
        return setTimeout(() => {}, 0);
      },
      clearTimer: (t) => clearTimeout(t),
    });
    await open;
    await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(urls, [wantUrl]);
    assert.equal(timers.includes(45000), wantIdleTimer, `loopback ${loopback}: timers ${timers}`);
    stream.close();
    await stream.done;
  }
});

test('loopback hosts are told apart from others', async () => {
  const { isLoopback } = await import('../js/event-stream.js');
  for (const h of ['127.0.0.1', '127.4.5.6', 'localhost', '[::1]']) assert.ok(isLoopback(h), h);
  for (const h of ['192.168.1.2', 'example.com', 'localhost.example.com', '10.0.0.1', '']) assert.ok(!isLoopback(h), h);
});
