// The inbox's words (inbox.js) and the connection indicator's (live.js).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { promptMessage, inboxEntryText, inboxTitle } from '../js/inbox.js';
import { connLabel } from '../js/live.js';

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

test('the connection indicator names each stream state; a drop says why', () => {
  assert.deepEqual(connLabel('connecting'), { text: 'Connecting…', title: '' });
  assert.deepEqual(connLabel('open'), { text: 'Live', title: 'Changes appear as they happen' });
  assert.deepEqual(connLabel('reconnecting', { error: 'HTTP 502' }), { text: 'Reconnecting…', title: 'Connection lost: HTTP 502' });
  assert.deepEqual(connLabel('reconnecting', {}), { text: 'Reconnecting…', title: '' });
  assert.deepEqual(connLabel('closed', { error: 'x' }), { text: 'Offline', title: '' });
  assert.deepEqual(connLabel('weird'), { text: 'weird', title: '' });
});
