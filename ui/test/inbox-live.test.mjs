// The inbox's words and count (inbox.js) and the connection indicator's words (conn.js).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { promptMessage, inboxEntryText, inboxTitle, questionCount, questionCountLabel } from '../js/inbox.js';
import { connLabel } from '../js/conn.js';

const waiting = (inputRequests, extra = {}) => ({ taskId: 't1', tool: 'deploy', principal: 'alice', status: 'input_required', inputRequests, ...extra });

test("a task's prompt message is its first request's text message", () => {
  assert.equal(promptMessage(waiting({ approval: { method: 'elicitation/create', params: { message: 'Deploy to prod?' } } })), 'Deploy to prod?');
  assert.equal(promptMessage(waiting({ a: { params: { message: '' } } })), '', 'an empty message is still the message');
  assert.equal(promptMessage(waiting({ a: { params: { message: 42 } } })), null);
  assert.equal(promptMessage(waiting({ a: {} })), null);
  assert.equal(promptMessage(waiting({})), null);
  assert.equal(promptMessage({ taskId: 'x' }), null);
});

test('an inbox entry shows the prompt, else the status message, and counts further prompts', () => {
  const one = inboxEntryText(waiting({ approval: { params: { message: 'Deploy\nto prod?' } } }));
  assert.equal(one.msg, 'Deploy\nto prod?');
  assert.equal(one.more, '');
  assert.equal(one.label, 'Answer deploy from alice: Deploy to prod?');
  const two = inboxEntryText(waiting({ a: { params: { message: 'First' } }, b: { params: { message: 'Second' } }, c: {} }, { statusMessage: 'ignored' }));
  assert.equal(two.msg, 'First');
  assert.equal(two.more, ' (+2 more)');
  assert.equal(inboxEntryText(waiting({ a: { params: {} } }, { statusMessage: 'Waiting for a key' })).msg, 'Waiting for a key');
  assert.equal(inboxEntryText(waiting({}, { statusMessage: null })).msg, '');
  assert.equal(inboxEntryText(waiting({ a: { params: { message: '' } } }, { statusMessage: 'not this' })).msg, '', 'an empty prompt message wins');
});

test('the page title leads with how many tasks wait', () => {
  assert.equal(inboxTitle(0), 'Taskdeck');
  assert.equal(inboxTitle(1), '(1) Taskdeck — 1 task needs input');
  assert.equal(inboxTitle(2500), '(2,500) Taskdeck — 2,500 tasks need input');
});

test('the inbox counts the questions it shows, not the tasks', () => {
  const two = waiting({ a: { params: { message: 'First?' } }, b: { params: { message: 'Second?' } } }, { taskId: 'job' });
  const approval = waiting({ approval: { params: { message: 'Deploy?' } } }, { taskId: 'deploy' });
  const queue = [
    { taskId: 'job', key: 'a' },
    { taskId: 'job', key: 'b' },
    { taskId: 'deploy', key: 'approval' },
  ];
  // Two tasks wait: one asks two questions, the other one; the queue shows three rows.
  assert.equal(questionCount([two, approval], queue, 2), 3);
  // Without the queue (a server with no approvals API), each entry counts its requests; the
  // tasks past the loaded ones count one each.
  assert.equal(questionCount([two, approval], null, 2), 3);
  assert.equal(questionCount([two, approval], null, 5), 6);
  // A task the queue does not list yet (its question just arrived) counts beside the queue.
  assert.equal(questionCount([two, approval, waiting({}, { taskId: 'new' })], queue, 3), 4);
  assert.equal(questionCount([], [], 0), 0);
  assert.equal(questionCountLabel(1), '1 question to answer');
  assert.equal(questionCountLabel(1500), '1,500 questions to answer');
});

test('the connection indicator names each stream state; a drop says why', () => {
  assert.deepEqual(connLabel('connecting'), { state: 'connecting', text: 'Connecting…', title: '' });
  assert.deepEqual(connLabel('open'), { state: 'open', text: 'Live', title: 'Changes appear as they happen' });
  assert.deepEqual(connLabel('reconnecting', { error: 'HTTP 502' }), { state: 'reconnecting', text: 'Reconnecting…', title: 'Connection lost: HTTP 502' });
  assert.deepEqual(connLabel('reconnecting', {}), { state: 'reconnecting', text: 'Reconnecting…', title: '' });
  assert.deepEqual(connLabel('closed', { error: 'x' }), { state: 'closed', text: 'Offline', title: '' });
  assert.deepEqual(connLabel('weird'), { state: 'weird', text: 'weird', title: '' });
});

test('a paused list is not "Live"; a stream that is not open says so, paused or not', () => {
  const paused = connLabel('open', null, true);
  assert.equal(paused.state, 'paused');
  assert.equal(paused.text, 'Paused');
  assert.match(paused.title, /paused.*resume \(p\)/);
  assert.deepEqual(connLabel('reconnecting', { error: 'HTTP 502' }, true), connLabel('reconnecting', { error: 'HTTP 502' }));
  assert.deepEqual(connLabel('closed', null, true), connLabel('closed', null));
});
