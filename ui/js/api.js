// The /v1 HTTP API client: bearer token on every request, problem+json errors as ApiError.
// No DOM; `fetch` is injectable.

import { parseJson, stringifyJson } from './exact-json.js';

export class ApiError extends Error {
  /**
   * @param {number} status HTTP status (0 for a network failure)
   * @param {{type?: string, title?: string, status?: number, detail?: string, reason?: string}} problem
   */
  constructor(status, problem = {}) {
    super(problem.detail || problem.title || (status ? `HTTP ${status}` : 'Network error'));
    this.name = 'ApiError';
    this.status = status;
    this.problem = problem;
  }
}

/** The banner's words while the store's disk is full. */
export const STORE_FULL_TEXT = 'The disk holding Taskdeck’s store is full: free some space; writes resume by themselves.';

/**
 * What the page keeps saying after a write failed, beyond the failure's own notice: for a
 * write refused because the store's disk is full (503 problem+json with `reason: "disk_full"`,
 * docs/http-api.md), STORE_FULL_TEXT; null for every other failure, which says all in its notice.
 * @param {ApiError|null|undefined} error
 * @returns {string|null}
 */
export function lastingWriteFailure(error) {
  if (error && error.status === 503 && error.problem && error.problem.reason === 'disk_full') return STORE_FULL_TEXT;
  return null;
}

/**
 * The fetch options of one /v1 request: JSON wanted, the bearer token, the body as JSON (when
 * there is one), never from the HTTP cache. early.js sends the page's first requests with these.
 * @param {string} method e.g. 'GET'
 * @param {string} token the bearer token
 * @param {unknown} [body] sent as JSON when not undefined
 * @param {Record<string, string>} [extraHeaders] more request headers (e.g. If-Match)
 * @returns {RequestInit & {headers: Record<string, string>}}
 */
export function requestInit(method, token, body, extraHeaders = {}) {
  const headers = { ...extraHeaders, Accept: 'application/json', Authorization: `Bearer ${token}` };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  return { method, headers, body: body === undefined ? undefined : stringifyJson(body), cache: 'no-store' };
}

/**
 * @param {() => string} getToken
 * @param {{fetchImpl?: typeof fetch, onAuthError?: () => void, onWrite?: (error: ApiError|null) => void}} [options]
 *   `fetchImpl` resolves to a Response, or to what is read of one: `ok`, `status`, `statusText`
 *   and `text()` (early.js's answers). `onWrite` hears how each write (POST, PUT, DELETE) ended:
 *   null when it succeeded, else its ApiError.
 */
export function createApi(getToken, options = {}) {
  const fetchImpl = options.fetchImpl || ((...a) => fetch(...a));

  async function request(method, path, body, headers) {
    if (method === 'GET' || !options.onWrite) return send(method, path, body, headers);
    try {
      const answer = await send(method, path, body, headers);
      options.onWrite(null);
      return answer;
    } catch (err) {
      options.onWrite(err);
      throw err;
    }
  }

  async function send(method, path, body, headers) {
    let resp;
    try {
      resp = await fetchImpl(path, requestInit(method, getToken(), body, headers));
    } catch (err) {
      throw new ApiError(0, { title: 'Network error', detail: `Taskdeck did not answer (${err && err.message ? err.message : err}).` });
    }
    const text = await resp.text();
    let json = null;
    if (text) {
      try {
        json = parseJson(text);
      } catch {
        json = null;
      }
    }
    if (!resp.ok) {
      if (resp.status === 401 && options.onAuthError) options.onAuthError();
      throw new ApiError(resp.status, json && typeof json === 'object' ? json : { title: resp.statusText, detail: text.slice(0, 500) });
    }
    return json;
  }

  return {
    get: (path) => request('GET', path),
    post: (path, body) => request('POST', path, body ?? {}),
    /** `headers`: more request headers, e.g. `{'If-Match': '"<version>"'}`. */
    put: (path, body, headers) => request('PUT', path, body ?? {}, headers),
    del: (path) => request('DELETE', path),
    me: () => request('GET', '/v1/me'),
    tools: () => request('GET', '/v1/tools'),
    listTasks: (query) => request('GET', `/v1/tasks?${query}`),
    /** `query`: e.g. "timelineBefore=42" to page back through a long timeline. */
    getTask: (id, query = '') => request('GET', `/v1/tasks/${encodeURIComponent(id)}${query ? `?${query}` : ''}`),
    answer: (id, inputResponses) => request('POST', `/v1/tasks/${encodeURIComponent(id)}/input`, { inputResponses }),
    cancel: (id) => request('POST', `/v1/tasks/${encodeURIComponent(id)}/cancel`, {}),
    /** Every pending approval, oldest waiting first: `{approvals, groups}`. */
    approvals: () => request('GET', '/v1/approvals'),
    /** Decides approvals: `{items: [{taskId, key}], decision, reason?, arguments?, alwaysAllow?}` → `{results}`
     *  (one per item); 422 with `errors: [{path, message}]` when edited arguments do not validate. */
    decide: (body) => request('POST', '/v1/approvals/decide', body),
    /** The call an open approval shows masked, as the agent sent it: `{taskId, arguments}`
     *  (a person's token only; 409 once nothing is held). */
    reveal: (id) => request('POST', `/v1/tasks/${encodeURIComponent(id)}/reveal`, {}),
    /** A byte range of a command task's output log: `{offset}` or `{tail}`, optional `limit`. */
    taskLog: (id, range) => request('GET', `/v1/tasks/${encodeURIComponent(id)}/log?${logQuery(range)}`),
  };
}

/**
 * The query of a log read, e.g. "offset=1024&limit=65536": the fields that are given, in a
 * fixed order. The server reads `offset` first when both it and `tail` are there.
 * @param {{offset?: number, tail?: number, limit?: number}} [range]
 */
export function logQuery(range = {}) {
  const q = new URLSearchParams();
  for (const key of ['offset', 'tail', 'limit']) if (range[key] !== undefined && range[key] !== null) q.set(key, String(range[key]));
  return q.toString();
}

const TERMINAL = new Set(['completed', 'failed', 'cancelled']);

/**
 * Judges one cancel answer by the task it returns (the server answers 200 for a task that had
 * already ended, 202 otherwise; the task says the same and more): still running with
 * cancelRequested, or cancelled, means the request took; finished any other way means it
 * came too late.
 * @returns {string|null} null when accepted, else why not
 */
export function cancelRefusal(task) {
  if (!task || typeof task !== 'object') return null;
  if (task.status === 'cancelled') return null;
  if (TERMINAL.has(task.status)) return 'already finished';
  return null;
}

/** Why a cancel request failed, in a few words. */
function failureReason(error) {
  if (error && error.status === 409) return 'already finished';
  if (error && error.status === 404) return 'not found';
  return (error && error.message) || 'error';
}

/**
 * Cancels several tasks, at most `concurrency` requests at a time.
 * @returns {Promise<{accepted: string[], failed: {taskId: string, reason: string}[]}>}
 */
export async function cancelMany(api, taskIds, concurrency = 4) {
  const accepted = [];
  const failed = [];
  let next = 0;
  async function worker() {
    while (next < taskIds.length) {
      const id = taskIds[next++];
      try {
        const r = await api.cancel(id);
        const refusal = cancelRefusal(r && r.task);
        if (refusal) failed.push({ taskId: id, reason: refusal });
        else accepted.push(id);
      } catch (error) {
        failed.push({ taskId: id, reason: failureReason(error) });
      }
    }
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, taskIds.length) }, worker));
  return { accepted, failed };
}

/** "3 of 4 cancel requests accepted; 1 already finished." */
export function describeBulkCancel({ accepted, failed }) {
  const total = accepted.length + failed.length;
  const head = `${accepted.length} of ${total} cancel request${total === 1 ? '' : 's'} accepted`;
  if (!failed.length) return head + '.';
  const reasons = new Map();
  for (const f of failed) reasons.set(f.reason, (reasons.get(f.reason) || 0) + 1);
  return `${head}; ${[...reasons].map(([why, n]) => `${n} ${why}`).join(', ')}.`;
}
