import { test } from 'node:test';
import assert from 'node:assert/strict';
import { browserNotice, notifyState, noteDecided, endedByOwnDecision, OWN_DECISION_MS, SWITCH_KEY, THRESHOLD_MS, permissionOutcome, notifyButtonText } from '../js/browser-notify.js';

const at = (ms) => new Date(Date.UTC(2026, 11, 4, 12, 0, 0) + ms).toISOString();
const change = (task, kind = 'status') => ({ event: { kind, data: {} }, task: { taskId: 't1', principal: 'deploy-bot', title: 'make deploy', createdAt: at(0), lastUpdatedAt: at(2000), ...task } });

test('a task that starts waiting for input notifies, focused or not, with its question', () => {
  const c = change({ status: 'input_required', inputRequests: { approval: { method: 'elicitation/create', params: { message: 'Ship\nit?' } } } });
  for (const focused of [true, false]) {
    assert.deepEqual(browserNotice(c, { focused }), { taskId: 't1', tag: 'taskdeck-t1', title: 'deploy-bot needs input: make deploy', body: 'Ship\nit?' });
  }
});

test('a question is notified as it reads: its lines kept, what reorders it written out', () => {
  const c = change({ status: 'input_required', inputRequests: { approve: { params: { message: 'Run:\n\n   echo one\n   echo two\u202e ok' } } } });
  assert.equal(browserNotice(c, { focused: true }).body, 'Run:\necho one\necho two\\u{202e} ok');
});

test('a question that titles its own task is said once, in the body', () => {
  const c = change({ status: 'input_required', title: 'Publish the notes?', inputRequests: { approval: { params: { message: 'Publish the notes?' } } } });
  const n = browserNotice(c, { focused: true });
  assert.equal(n.title, 'deploy-bot needs input');
  assert.equal(n.body, 'Publish the notes?');
});

test('an end notifies when the task ran at least the threshold, or the page is not focused', () => {
  const done = change({ status: 'completed', result: { content: [{ type: 'text', text: 'all good' }], isError: false } });
  assert.equal(browserNotice(done, { focused: true }), null, 'a short task ended in front of you');
  assert.equal(browserNotice(done, { focused: false }).title, 'make deploy completed');
  const long = change({ status: 'completed', lastUpdatedAt: at(THRESHOLD_MS), result: { content: [{ type: 'text', text: 'exit 2' }], isError: true } });
  assert.deepEqual(browserNotice(long, { focused: true }), { taskId: 't1', tag: 'taskdeck-t1', title: 'make deploy completed with error', body: 'exit 2' });
  const declined = change({ status: 'completed', result: { content: [{ type: 'text', text: 'alice declined this call' }], isError: true, _meta: { 'io.taskdeck/refusal': 'declined' } } });
  assert.equal(browserNotice(declined, { focused: false }).title, 'make deploy declined');
  const failed = change({ status: 'failed', lastUpdatedAt: at(60_000), error: { code: -32603, message: 'Task expired' } });
  assert.equal(browserNotice(failed, { focused: true }).body, 'Task expired');
});

test('only status changes notify, and a long body is cut', () => {
  assert.equal(browserNotice(change({ status: 'working' }), { focused: false }), null);
  assert.equal(browserNotice(change({ status: 'completed' }, 'progress'), { focused: false }), null);
  const long = change({ status: 'input_required', inputRequests: { k: { params: { message: 'x'.repeat(500) } } } });
  const n = browserNotice(long, { focused: false });
  assert.equal(n.body.length, 200);
  assert.ok(n.body.endsWith('…'));
});

test('the switch is on only with the permission granted and the person having turned it on here', () => {
  const storage = (v) => ({ getItem: (k) => (k === SWITCH_KEY ? v : null) });
  const env = (permission, wanted, secure = true) => ({ Notification: { permission }, localStorage: storage(wanted), isSecureContext: secure });
  assert.equal(notifyState(env('granted', 'on')), 'on');
  assert.equal(notifyState(env('granted', 'off')), 'off');
  assert.equal(notifyState(env('default', 'on')), 'off');
  assert.equal(notifyState(env('denied', 'on')), 'blocked');
  assert.equal(notifyState(env('granted', 'on', false)), 'unsupported');
  assert.equal(notifyState({ localStorage: storage('on') }), 'unsupported');
});

test('a task this page just decided is not notified when it ends; one that runs on is', () => {
  noteDecided(['t9'], 1_000);
  assert.equal(endedByOwnDecision({ taskId: 't9', status: 'completed' }, 3_000), true, 'denied here a moment ago');
  assert.equal(endedByOwnDecision({ taskId: 't9', status: 'working' }, 3_000), false);
  assert.equal(endedByOwnDecision({ taskId: 't9', status: 'completed' }, 1_000 + OWN_DECISION_MS + 1), false, 'approved here, ended much later');
  assert.equal(endedByOwnDecision({ taskId: 'other', status: 'failed' }, 3_000), false);
});

test('every answer to the permission question is told, with what to do next; a blocked page says so on its button', () => {
  assert.equal(permissionOutcome('granted').tone, 'good');
  assert.match(permissionOutcome('denied').text, /blocked notifications.*site settings.*click Notifications again/);
  assert.equal(permissionOutcome('denied').tone, 'warn');
  assert.match(permissionOutcome('default').text, /closed without an answer.*Click Notifications again and choose Allow/);
  assert.match(permissionOutcome('Illegal invocation').text, /did not ask for permission \(Illegal invocation\)/);
  assert.equal(notifyButtonText('blocked'), 'Notifications blocked');
  assert.equal(notifyButtonText('off'), 'Notifications off');
  assert.equal(notifyButtonText('on'), 'Notifications on');
});
