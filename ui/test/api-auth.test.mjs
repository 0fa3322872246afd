import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createApi, ApiError, cancelMany, describeBulkCancel, cancelRefusal, lastingWriteFailure, STORE_FULL_TEXT } from '../js/api.js';
import { parseTokenFragment, loadToken, TOKEN_KEY, taskFromHash, rights, refusedTokenText } from '../js/auth.js';

function memoryStorage() {
  const m = new Map();
  return { getItem: (k) => (m.has(k) ? m.get(k) : null), setItem: (k, v) => m.set(k, String(v)), removeItem: (k) => m.delete(k) };
}

test('the token is taken from the fragment, stored, and scrubbed from the URL', () => {
  assert.deepEqual(parseTokenFragment('#token=abc'), { token: 'abc', hash: '' });
  assert.deepEqual(parseTokenFragment('#task=1&token=abc'), { token: 'abc', hash: '#task=1' });
  assert.deepEqual(parseTokenFragment('#other'), { token: null, hash: '#other' });
  assert.deepEqual(parseTokenFragment(''), { token: null, hash: '' });
  const storage = memoryStorage();
  const replaced = [];
  const history = { replaceState: (s, t, url) => replaced.push(url) };
  const token = loadToken({ location: { hash: '#token=s3cret', pathname: '/', search: '' }, storage, history });
  assert.equal(token, 's3cret');
  assert.equal(storage.getItem(TOKEN_KEY), 's3cret');
  assert.deepEqual(replaced, ['/']);
  // Next load: no fragment, the stored token is used and the URL is left alone.
  assert.equal(loadToken({ location: { hash: '', pathname: '/', search: '' }, storage, history }), 's3cret');
  assert.equal(replaced.length, 1);
});

test('#task=<id> names the task to show, next to other parameters or alone', () => {
  assert.equal(taskFromHash('#task=58589a8b-1202-49bd-bcb3-65e04e79d22a'), '58589a8b-1202-49bd-bcb3-65e04e79d22a');
  assert.equal(taskFromHash('task=abc'), 'abc', 'as the desktop shell sets it, without #');
  assert.equal(taskFromHash('#token=t&task=abc'), 'abc');
  assert.equal(taskFromHash('#task=a%2Fb'), 'a/b');
  assert.equal(taskFromHash('#task='), null);
  assert.equal(taskFromHash('#token=t'), null);
  assert.equal(taskFromHash(''), null);
  assert.equal(taskFromHash(undefined), null);
  // After the token is taken out of the fragment, the task is still there.
  assert.equal(taskFromHash(parseTokenFragment('#token=t&task=abc').hash), 'abc');
});

test('API errors carry the problem document; 401 reports an auth error', async () => {
  let authErrors = 0;
  const seen = [];
  const api = createApi(() => 'tok', {
    onAuthError: () => authErrors++,
    fetchImpl: async (url, init) => {
      seen.push([url, init.method, init.headers.Authorization, init.body]);
      if (url.endsWith('/input')) {
        return new Response(JSON.stringify({ type: 'about:blank', title: 'Unprocessable Entity', status: 422, detail: 'reason: too short' }), {
          status: 422,
          headers: { 'content-type': 'application/problem+json' },
        });
      }
      if (url === '/v1/me') return new Response('{"detail":"Unauthorized"}', { status: 401 });
      return new Response(JSON.stringify({ ok: true }), { status: 200 });
    },
  });
  assert.deepEqual(await api.getTask('a/b'), { ok: true });
  assert.equal(seen[0][0], '/v1/tasks/a%2Fb');
  assert.equal(seen[0][2], 'Bearer tok');
  await assert.rejects(api.answer('t1', { approval: { action: 'accept', content: {} } }), (e) => {
    assert.ok(e instanceof ApiError);
    assert.equal(e.status, 422);
    assert.equal(e.message, 'reason: too short');
    return true;
  });
  assert.equal(seen[1][3], '{"inputResponses":{"approval":{"action":"accept","content":{}}}}');
  await assert.rejects(api.me(), (e) => e.status === 401);
  assert.equal(authErrors, 1);
});

test('bulk cancel reports partial success, judging each answer by the task it returns', async () => {
  const api = {
    cancel: async (id) => {
      if (id === 'gone') throw new ApiError(404, { detail: 'Task not found' });
      if (id === 'done') return { task: { taskId: id, status: 'completed', cancelRequested: false } }; // 202, but too late
      if (id === 'fast') return { task: { taskId: id, status: 'cancelled' } };
      return { task: { taskId: id, status: 'working', cancelRequested: true } };
    },
  };
  const r = await cancelMany(api, ['a', 'fast', 'done', 'b']);
  assert.deepEqual(r.accepted.sort(), ['a', 'b', 'fast']);
  assert.deepEqual(r.failed, [{ taskId: 'done', reason: 'already finished' }]);
  assert.equal(describeBulkCancel(r), '3 of 4 cancel requests accepted; 1 already finished.');
  const r2 = await cancelMany(api, ['gone', 'a'], 1);
  assert.equal(describeBulkCancel(r2), '1 of 2 cancel requests accepted; 1 not found.');
  assert.equal(describeBulkCancel({ accepted: ['a'], failed: [] }), '1 of 1 cancel request accepted.');
  assert.equal(cancelRefusal({ status: 'failed' }), 'already finished');
  assert.equal(cancelRefusal({ status: 'input_required', cancelRequested: true }), null);
});

test('a human sees and answers like the admin but administers nothing; an agent does neither', () => {
  assert.deepEqual(rights({ principal: 'admin', role: 'admin', admin: true }), { seesAll: true, administers: true });
  assert.deepEqual(rights({ principal: 'alice', role: 'human', admin: false }), { seesAll: true, administers: false });
  assert.deepEqual(rights({ principal: 'bot', role: 'agent', admin: false }), { seesAll: false, administers: false });
  // A Taskdeck that sends no role: `admin` alone decides.
  assert.deepEqual(rights({ principal: 'admin', admin: true }), { seesAll: true, administers: true });
  assert.deepEqual(rights({ principal: 'bot', admin: false }), { seesAll: false, administers: false });
  assert.deepEqual(rights(null), { seesAll: false, administers: false });
});

test('a write refused on a full disk is told apart, and onWrite hears how every write ended', async () => {
  const answers = [
    { status: 503, body: { type: 'about:blank', title: 'Service Unavailable', status: 503, detail: 'the disk holding the task store is full', reason: 'disk_full' } },
    { status: 500, body: { title: 'Internal Server Error', status: 500, detail: 'boom' } },
    { status: 202, body: { task: { taskId: 't', status: 'working' } } },
    { status: 200, body: { tasks: [] } },
  ];
  const fetchImpl = async () => {
    const a = answers.shift();
    return new Response(JSON.stringify(a.body), { status: a.status, headers: { 'Content-Type': 'application/json' } });
  };
  const heard = [];
  const api = createApi(() => 'tok', { fetchImpl, onWrite: (e) => heard.push(e) });
  const full = await api.cancel('t').catch((e) => e);
  assert.equal(lastingWriteFailure(full), STORE_FULL_TEXT);
  const other = await api.cancel('t').catch((e) => e);
  assert.equal(other.message, 'boom');
  assert.equal(lastingWriteFailure(other), null);
  await api.cancel('t');
  await api.listTasks('limit=1'); // a read is not a write
  assert.deepEqual(heard.map((e) => e && e.status), [503, 500, null]);
  assert.equal(lastingWriteFailure(null), null);
});

test('a person whose token was refused is told to ask for a new one, not to paste the admin token', () => {
  const human = refusedTokenText({ principal: 'alice', role: 'human', admin: false });
  assert.equal(human.person, true);
  assert.equal(human.error, 'Your token (alice) was revoked or is no longer valid. Ask whoever administers this Taskdeck for a new one, and paste it below.');
  assert.doesNotMatch(human.error, /admin token|taskdeck serve/);
  // The admin's own (or a page that never signed in) keeps the admin token's hint.
  assert.equal(refusedTokenText({ principal: 'admin', role: 'admin', admin: true }).person, false);
  assert.equal(refusedTokenText(null).person, false);
});
