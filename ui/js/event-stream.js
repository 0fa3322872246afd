// The live feed: reads GET /v1/events with fetch() (so it can send the bearer token), parses
// it with the SSE parser, and reconnects with Last-Event-ID after any drop so the server
// replays what was missed. No DOM; `fetch` and the timer are injectable for tests.

import { createSseDecoder } from './sse.js';
import { parseJson } from './exact-json.js';

export const DEFAULT_BACKOFF_MS = [500, 1000, 2000, 5000, 10000, 15000];

/**
 * Whether `hostname` is this machine's loopback (the desktop window's server, or `serve` opened
 * locally). There a dead server closes the stream at once, so the stream needs no keep-alives.
 * @param {string} hostname
 */
export function isLoopback(hostname) {
  return hostname === 'localhost' || hostname === '[::1]' || /^127\./.test(hostname);
}

/**
 * Over loopback the stream asks for no keep-alives (`?keepAlive=false`) and reads without an
 * idle timeout, so an idle page wakes neither the server nor itself; elsewhere the server's
 * keep-alive comes every 15 s and 45 s without a byte means a dead connection: reconnect.
 * @param {object} o
 * @param {string} [o.url] default "/v1/events" ("/v1/events?keepAlive=false" over loopback)
 * @param {boolean} [o.loopback] default: whether the page's host is loopback ({@link isLoopback})
 * @param {() => string} o.getToken
 * @param {(change: {event: object, task: object}, id: string) => void} o.onChange
 * @param {() => void} [o.onResync] the server says we fell behind: reload the list
 * @param {(store: {diskFull: boolean, since?: string}) => void} [o.onStore] the server says
 *   whether writes are refused because its disk is full (sent as the stream opens when it is,
 *   then at each change)
 * @param {(state: 'connecting'|'open'|'reconnecting'|'closed', info?: object) => void} [o.onState]
 * @param {() => void} [o.onAuthError] 401/403: the token is not accepted (the stream stops)
 * @param {string} [o.lastEventId] resume after this id
 * @param {typeof fetch} [o.fetchImpl]
 * @param {number[]} [o.backoffMs] delays between reconnect attempts
 * @param {number} [o.idleTimeoutMs] no byte for this long: reconnect (default 45000; 0, none,
 *   over loopback)
 * @param {(fn: () => void, ms: number) => any} [o.setTimer]
 * @param {(t: any) => void} [o.clearTimer]
 */
export function openEventStream(o) {
  const loopback = o.loopback ?? (typeof location !== 'undefined' && isLoopback(location.hostname));
  const url = o.url || (loopback ? '/v1/events?keepAlive=false' : '/v1/events');
  const fetchImpl = o.fetchImpl || ((...a) => fetch(...a));
  const backoff = o.backoffMs || DEFAULT_BACKOFF_MS;
  const idleTimeoutMs = o.idleTimeoutMs ?? (loopback ? 0 : 45000);
  const setTimer = o.setTimer || ((fn, ms) => setTimeout(fn, ms));
  const clearTimer = o.clearTimer || ((t) => clearTimeout(t));
  const onState = o.onState || (() => {});
  let lastEventId = o.lastEventId || '';
  let closed = false;
  let attempt = 0;
  let controller = null;
  let reader = null;
  let retryTimer = null;
  let wake = null;
  let serverRetryMs = null;

  function state(s, info) {
    if (!closed || s === 'closed') onState(s, info);
  }

  // Aborting the request should also end the body, but a stalled body is cancelled explicitly.
  function abortNow() {
    if (controller) controller.abort();
    if (reader) reader.cancel().catch(() => {});
  }

  async function connectOnce() {
    controller = new AbortController();
    reader = null;
    const headers = { Accept: 'text/event-stream', Authorization: `Bearer ${o.getToken()}` };
    if (lastEventId) headers['Last-Event-ID'] = lastEventId;
    let idle = null;
    const armIdle = () => {
      if (idle) clearTimer(idle);
      if (idleTimeoutMs > 0) idle = setTimer(abortNow, idleTimeoutMs);
    };
    try {
      armIdle();
      const resp = await fetchImpl(url, { headers, signal: controller.signal, cache: 'no-store' });
      if (resp.status === 401 || resp.status === 403) {
        closed = true;
        state('closed', { reason: 'auth' });
        if (o.onAuthError) o.onAuthError();
        return;
      }
      if (!resp.ok || !resp.body) throw new Error(`HTTP ${resp.status}`);
      attempt = 0;
      state('open');
      const decoder = createSseDecoder(
        (ev) => {
          if (ev.id) lastEventId = ev.id;
          if (ev.type === 'change') {
            let change;
            try {
              change = parseJson(ev.data);
            } catch {
              return; // a malformed event is skipped, not fatal
            }
            if (change && change.task && change.event) o.onChange(change, ev.id);
          } else if (ev.type === 'resync') {
            if (o.onResync) o.onResync();
          } else if (ev.type === 'store') {
            let store;
            try {
              store = JSON.parse(ev.data);
            } catch {
              return;
            }
            if (store && typeof store.diskFull === 'boolean' && o.onStore) o.onStore(store);
          }
        },
        { onRetry: (ms) => (serverRetryMs = ms) },
      );
      reader = resp.body.getReader();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        armIdle();
        if (value) decoder.push(value);
        if (closed) break;
      }
      decoder.end();
    } catch (err) {
      if (closed) return;
      state('reconnecting', { error: String(err && err.message ? err.message : err) });
    } finally {
      if (idle) clearTimer(idle);
    }
  }

  async function loop() {
    while (!closed) {
      state(attempt === 0 ? 'connecting' : 'reconnecting');
      await connectOnce();
      if (closed) break;
      const delay = serverRetryMs ?? backoff[Math.min(attempt, backoff.length - 1)];
      attempt++;
      state('reconnecting', { delayMs: delay });
      await new Promise((resolve) => {
        wake = resolve;
        retryTimer = setTimer(resolve, delay);
      });
      retryTimer = null;
      wake = null;
    }
  }

  const done = loop();

  return {
    /** Stops the stream for good. */
    close() {
      if (closed) return;
      closed = true;
      if (retryTimer) clearTimer(retryTimer);
      if (wake) wake();
      abortNow();
      onState('closed', { reason: 'closed' });
    },
    /** The id to resume after. */
    get lastEventId() {
      return lastEventId;
    },
    /** Resolves when the stream has stopped (after close() or an auth error). */
    done,
  };
}
