// The page's first requests, sent as early as the page can: index.html loads this module with a
// script of its own, first in <head> (and its two imports right after it), so it runs as soon as
// the HTML is parsed, while the other modules still load (app.js runs once all have come). It finds the
// token (auth.js loadToken: the fragment's, which it stores and scrubs from the address bar, or
// the tab's stored one) and sends GET /v1/me and the list's first page with it. app.js (which
// imports this module, so both share one instance) starts with that token, and its API client
// takes these answers instead of sending the same requests again; it reads them like any other
// answer (errors, 401). The token goes only into the Authorization header, as in api.js.

import { loadToken } from './auth.js';
import { requestInit } from './api.js';

/**
 * The paths of the requests sent early: who signed in, and the list's first page with no filter
 * (FIRST_PAGE_SIZE tasks, as list.js asks for it: ui/test/early.test.mjs checks that the two
 * agree). Written out rather than built with tasks-model.js, so this module waits for only two
 * small imports before it runs.
 */
export const EARLY_PATHS = Object.freeze(['/v1/me', '/v1/tasks?limit=50']);

/**
 * `response` with its body read: what api.js reads of a Response (ok, status, statusText, and
 * text(), which here resolves at once). The body is read as it arrives, while the page's other
 * modules load; a Response's own text() would wait for a task of its own after the page started,
 * putting the first rows a frame later.
 * @param {Response} response
 * @returns {Promise<{ok: boolean, status: number, statusText: string, text: () => Promise<string>}>}
 */
export async function readInFull(response) {
  const body = await response.text();
  return { ok: response.ok, status: response.status, statusText: response.statusText, text: async () => body };
}

/**
 * Sends a GET for each of `paths` with `token` at once and keeps each answer until it is taken.
 * `take(path, init)` hands over the answer (a promise of it, read in full: readInFull) for
 * a GET of `path` with the same Authorization header, once; for any other request it returns
 * null, and the caller sends its own. `close()` drops what was not taken, so no later request
 * can get an old answer.
 * @param {string[]} paths
 * @param {string} token
 * @param {typeof fetch} fetchImpl
 * @returns {{take: (path: string, init: RequestInit) => Promise<{ok: boolean, status: number, statusText: string, text: () => Promise<string>}>|null, close: () => void}}
 */
export function sendEarly(paths, token, fetchImpl) {
  const pending = new Map();
  for (const path of paths) {
    const init = requestInit('GET', token);
    const answer = fetchImpl(path, init).then(readInFull);
    // A failure is the business of whoever takes the answer (api.js turns it into an ApiError).
    answer.catch(() => {});
    pending.set(path, { answer, authorization: init.headers.Authorization });
  }
  return {
    take(path, init) {
      const sent = pending.get(path);
      if (!sent || !init || init.method !== 'GET' || !init.headers || init.headers.Authorization !== sent.authorization) return null;
      pending.delete(path);
      return sent.answer;
    },
    close() {
      pending.clear();
    },
  };
}

/** What the page found before its other modules ran; taken nothing from when there is no page. */
const NONE = { token: null, take: () => null, close() {} };

function startPage() {
  const token = loadToken({ location: window.location, storage: sessionStorage, history: window.history });
  if (!token) return NONE;
  return { token, ...sendEarly(EARLY_PATHS, token, (...a) => fetch(...a)) };
}

/**
 * The page's start: `token` (the token loadToken found as this module ran, or null: the token
 * screen asks for one), and `take`/`close` over the answers of EARLY_PATHS sent with it (see
 * sendEarly). Outside a browser page (unit tests) there is no token and nothing is sent.
 * @type {{token: string|null, take: (path: string, init: RequestInit) => ReturnType<typeof readInFull>|null, close: () => void}}
 */
export const early = typeof window === 'undefined' || typeof document === 'undefined' ? NONE : startPage();
