// early.js: the page's first requests, sent before the rest of the page has loaded, and handed
// to the API client (createApi's fetchImpl) once each, for the same request with the same token.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EARLY_PATHS, sendEarly, readInFull, early } from '../js/early.js';
import { createApi, requestInit } from '../js/api.js';
import { listQuery, defaultFilters, FIRST_PAGE_SIZE } from '../js/tasks-model.js';

/** A fetch that answers each path from `answers` (status, JSON body) and notes what was sent. */
function fakeFetch(answers, sent) {
  return async (path, init) => {
    sent.push({ path, init });
    const [status, body] = answers[path] || [404, { title: 'Not Found' }];
    return new Response(JSON.stringify(body), { status });
  };
}

test('the early paths are /v1/me and exactly the first page the list asks for', () => {
  assert.deepEqual(EARLY_PATHS, ['/v1/me', `/v1/tasks?${listQuery(defaultFilters(), { limit: FIRST_PAGE_SIZE })}`]);
});

test('outside a page nothing is sent and nothing is taken', () => {
  assert.equal(early.token, null);
  assert.equal(early.take('/v1/me', requestInit('GET', 't')), null);
});

test('the API client takes each early answer once, for the same GET with the same token', async () => {
  const sent = [];
  const fetchImpl = fakeFetch({ '/v1/me': [200, { principal: 'admin' }], '/v1/tasks?limit=50': [200, { tasks: [{ taskId: 'a' }], eventId: '7' }] }, sent);
  const first = sendEarly(EARLY_PATHS, 'tok', fetchImpl);
  assert.deepEqual(
    sent.map((s) => [s.path, s.init.method, s.init.headers.Authorization, s.init.cache]),
    [
      ['/v1/me', 'GET', 'Bearer tok', 'no-store'],
      ['/v1/tasks?limit=50', 'GET', 'Bearer tok', 'no-store'],
    ],
  );
  const api = createApi(() => 'tok', { fetchImpl: (path, init) => first.take(path, init) || fetchImpl(path, init) });
  assert.deepEqual(await api.me(), { principal: 'admin' });
  assert.deepEqual(await api.listTasks('limit=50'), { tasks: [{ taskId: 'a' }], eventId: '7' });
  assert.equal(sent.length, 2, 'both answers were taken: nothing sent again');
  // Taken once: the same request later is sent anew.
  await api.listTasks('limit=50');
  assert.equal(sent.length, 3);
});

test('another token, another method or a closed start takes nothing', async () => {
  const sent = [];
  const first = sendEarly(EARLY_PATHS, 'tok', fakeFetch({}, sent));
  assert.equal(first.take('/v1/me', requestInit('GET', 'other')), null, 'another token');
  assert.equal(first.take('/v1/me', requestInit('POST', 'tok', {})), null, 'not a GET');
  assert.equal(first.take('/v1/tools', requestInit('GET', 'tok')), null, 'not sent early');
  assert.equal(first.take('/v1/me', undefined), null, 'no options');
  first.close();
  assert.equal(first.take('/v1/me', requestInit('GET', 'tok')), null, 'dropped by close()');
  assert.equal(first.take('/v1/tasks?limit=50', requestInit('GET', 'tok')), null, 'dropped by close()');
});

test('a refused or failed early request reaches the client as its own would: 401 and network errors', async () => {
  let authErrors = 0;
  const refused = sendEarly(EARLY_PATHS, 'bad', fakeFetch({ '/v1/me': [401, { title: 'Unauthorized' }] }, []));
  const api = createApi(() => 'bad', { onAuthError: () => authErrors++, fetchImpl: (path, init) => refused.take(path, init) || Promise.reject(new Error('sent twice')) });
  await assert.rejects(api.me(), (e) => e.status === 401);
  assert.equal(authErrors, 1);

  const down = sendEarly(EARLY_PATHS, 'tok', async () => {
    throw new TypeError('Failed to fetch');
  });
  const api2 = createApi(() => 'tok', { fetchImpl: (path, init) => down.take(path, init) || Promise.reject(new Error('sent twice')) });
  await assert.rejects(api2.listTasks('limit=50'), (e) => e.status === 0 && /did not answer/.test(e.message));
});

test('readInFull keeps what the client reads of a response, with the body already read', async () => {
  const r = await readInFull(new Response('{"x":1}', { status: 503, statusText: 'Service Unavailable' }));
  assert.equal(r.ok, false);
  assert.equal(r.status, 503);
  assert.equal(r.statusText, 'Service Unavailable');
  assert.equal(await r.text(), '{"x":1}');
  assert.equal(await r.text(), '{"x":1}', 'read as often as asked');
});
