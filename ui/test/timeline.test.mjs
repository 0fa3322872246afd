import { test } from 'node:test';
import assert from 'node:assert/strict';
import { describeEvent, groupTimeline, describeProgressRun, describeRound } from '../js/timeline.js';

test('each event kind reads as a sentence', () => {
  const cases = [
    [{ kind: 'created', data: { status: 'working', tool: 'slow_compute' } }, 'Created: tool slow_compute'],
    [{ kind: 'status', data: { from: 'working', to: 'input_required', statusMessage: null } }, 'Status: Working → Needs input'],
    [{ kind: 'status', data: { from: 'working', to: 'completed' } }, 'Status: Working → Completed'],
    [{ kind: 'progress', data: { current: 3, total: 10, message: 'step 3 of 10' } }, 'Progress 3 / 10'],
    [{ kind: 'statusMessage', data: { statusMessage: 'Waiting' } }, 'Message'],
    [{ kind: 'inputRequested', data: { key: 'approval', request: { params: { message: 'Deploy?' } } } }, 'Asked for input (approval)'],
    [{ kind: 'inputAnswered', data: { key: 'approval', by: 'admin', action: 'accept' } }, 'admin accepted approval'],
    [{ kind: 'inputAnswered', data: { key: 'approval', by: 'alice', action: 'decline' } }, 'alice declined approval'],
    [{ kind: 'inputAnswered', data: { key: 'k', by: 'bob', action: 'cancel' } }, 'bob dismissed k'],
    [{ kind: 'inputSuperseded', data: { key: 'k' } }, 'Input request withdrawn (k)'],
    [{ kind: 'cancelRequested', data: { by: 'admin' } }, 'Cancel requested by admin'],
    [{ kind: 'hiddenValuesShown', data: { by: 'alice' } }, 'alice read the call whole'],
    [{ kind: 'ttl', data: { ttlMs: null, reason: 'waiting for input' } }, 'Retention: unlimited (waiting for input)'],
    [{ kind: 'ttl', data: { ttlMs: 86_400_000, reason: 'input answered' } }, 'Retention: 1d 0h from creation (input answered)'],
    [{ kind: 'resumed', data: { reason: 'restart' } }, 'Resumed'],
    [{ kind: 'hosted', data: { owner: 'alice' } }, 'Run by its own program for alice'],
    [{ kind: 'hosted', data: { owner: null } }, 'Run by its own program'],
    [{ kind: 'meta', data: { meta: { trace: 'abc' } } }, 'Metadata'],
    [{ kind: 'somethingNew', data: { a: 1 } }, 'Event: somethingNew'],
  ];
  for (const [ev, title] of cases) assert.equal(describeEvent(ev).title, title, ev.kind);
  // An approval reads as its buttons: approved or denied, and its Cancel denies the call too.
  const approvalKeys = new Set(['approve-command#1']);
  assert.equal(describeEvent({ kind: 'inputAnswered', data: { key: 'approve-command#1', by: 'bob', action: 'cancel' } }, { approvalKeys }).title, 'bob denied the call (approve-command#1)');
  assert.equal(describeEvent({ kind: 'inputAnswered', data: { key: 'approve-command#1', by: 'bob', action: 'accept' } }, { approvalKeys }).title, 'bob approved the call (approve-command#1)');
  assert.equal(describeEvent(cases[8][0], { approvalKeys }).title, 'bob dismissed k');
  assert.equal(describeEvent(cases[3][0]).detail, 'step 3 of 10');
  assert.equal(describeEvent(cases[4][0]).detail, 'Waiting');
  assert.equal(describeEvent(cases[5][0]).detail, 'Deploy?');
  assert.equal(describeEvent(cases[2][0]).tone, 'good');
  assert.equal(describeEvent({ kind: 'status', data: { from: 'working', to: 'failed' } }).tone, 'bad');
  assert.equal(describeEvent({ kind: 'status', data: { from: 'working', to: 'failed', statusMessage: 'boom\nline' } }).detail, 'boom line');
  // A cancel given a reason says it, written out on one line.
  const why = describeEvent({ kind: 'cancelRequested', data: { by: 'claude-code', reason: 'Claude stopped\nwaiting' } });
  assert.equal(why.detail, 'Claude stopped waiting');
  assert.match(describeEvent(cases[10][0]).detail, /asked to stop/);
});

test('a question asked keeps its lines, shown as prose (the detail clamps it)', () => {
  const message = `Check each item:\n${Array.from({ length: 60 }, (_, i) => `- item ${i}`).join('\n')}\u202e`;
  const asked = describeEvent({ kind: 'inputRequested', data: { key: 'confirm', request: { params: { message } } } });
  assert.equal(asked.prose, true);
  assert.equal(asked.detail.split('\n').length, 61, 'every line break kept, nothing cut');
  assert.ok(asked.detail.endsWith('- item 59\\u{202e}'), 'a character that reorders text is written out');
  assert.equal(describeEvent({ kind: 'statusMessage', data: { statusMessage: 'a\nb' } }).prose, undefined, 'other details stay one line');
});

test('runs of three or more reports (progress, status messages) fold into one item', () => {
  const p = (id, n) => ({ id, kind: 'progress', data: { current: n, total: 10 } });
  const m = (id, text) => ({ id, kind: 'statusMessage', data: { statusMessage: text } });
  const evs = [{ id: 1, kind: 'created', data: {} }, p(2, 1), p(3, 2), p(4, 3), { id: 5, kind: 'inputRequested', data: {} }, p(6, 4), m(7, 'linking')];
  const g = groupTimeline(evs);
  assert.deepEqual(g.map((x) => x.type), ['event', 'progress', 'event', 'event', 'event']);
  assert.deepEqual(g[1].events.map((e) => e.id), [2, 3, 4]);
  assert.equal(describeProgressRun(g[1].events), 'Progress 1 / 10 → 3 / 10 (3 updates)');
  assert.equal(groupTimeline([]).length, 0);
  // A build printing its lines: one item, saying how many and the last.
  const lines = groupTimeline([m(1, 'line 1'), m(2, 'line 2'), m(3, 'line 3\nmore')]);
  assert.deepEqual(lines.map((x) => x.type), ['progress']);
  assert.equal(describeProgressRun(lines[0].events), '3 messages, the last: “line 3 more”');
  assert.equal(describeProgressRun([p(1, 1), m(2, 'a'), p(3, 4), m(4, 'linking')]), 'Progress 1 / 10 → 4 / 10 and 2 messages (4 updates), the last: “linking”');
  // A progress report's own message is newer than the status message before it.
  const copying = (id, n) => ({ id, kind: 'progress', data: { current: n, total: 5, message: `copying ${n}/5` } });
  assert.equal(describeProgressRun([m(1, 'preparing'), copying(2, 1), copying(3, 5)]), 'Progress 1 / 5 → 5 / 5 and 1 message (3 updates), the last: “copying 5/5”');
});

test('input rounds say who answered what', () => {
  const request = { method: 'elicitation/create', params: { message: 'Deploy to prod?' } };
  const answered = describeRound({ key: 'approval', request, state: 'answered', response: { action: 'accept', content: { reason: 'ok' } }, answeredBy: 'admin' });
  assert.equal(answered.title, 'Deploy to prod?');
  assert.equal(answered.state, 'Accepted by admin');
  assert.equal(answered.answer, '{\n  "reason": "ok"\n}');
  assert.equal(describeRound({ key: 'k', request: {}, state: 'outstanding' }).state, 'Waiting for an answer');
  assert.equal(describeRound({ key: 'k', request: {}, state: 'outstanding' }).title, 'k');
  assert.equal(describeRound({ key: 'k', request, state: 'superseded' }).state, 'Withdrawn by the task');
  assert.equal(describeRound({ key: 'k', request, state: 'answered', response: { action: 'decline' }, answeredBy: 'bob' }).state, 'Declined by bob');
  assert.equal(describeRound({ key: 'k', request, state: 'answered', response: { action: 'cancel' }, answeredBy: 'bob' }).state, 'Dismissed by bob');
  // An approval's Cancel denies the call.
  const approval = { method: 'elicitation/create', params: { message: 'Run?', _meta: { 'taskdeck/approval': { tool: 'run_command' } } } };
  assert.equal(describeRound({ key: 'approve-command#1', request: approval, state: 'answered', response: { action: 'cancel' }, answeredBy: 'bob' }).state, 'Denied by bob');
  assert.equal(describeRound({ key: 'approve-command#1', request: approval, state: 'answered', response: { action: 'accept', content: { alwaysAllow: false } }, answeredBy: 'bob' }).state, 'Approved by bob');
  // A plain approval shows no answer; "always allow" is worth showing.
  assert.equal(describeRound({ key: 'approve-command#1', request: approval, state: 'answered', response: { action: 'accept', content: { alwaysAllow: false } } }).answer, undefined);
  assert.equal(describeRound({ key: 'approve-command#1', request: approval, state: 'answered', response: { action: 'accept', content: { alwaysAllow: true } } }).answer, '{\n  "alwaysAllow": true\n}');
});

test('an approval answered with an edit shows the edited call as JSON, not as text quoted inside JSON', () => {
  const approval = { method: 'elicitation/create', params: { message: 'Run?', _meta: { 'taskdeck/approval': { tool: 'run_command' } } } };
  const edited = describeRound({ key: 'approve-command', request: approval, state: 'answered', response: { action: 'accept', content: { arguments: '{"command":"echo edited","env":{"API_TOKEN":"[redacted]"}}' } }, answeredBy: 'admin' });
  assert.equal(edited.answer, '{\n  "arguments": {\n    "command": "echo edited",\n    "env": {\n      "API_TOKEN": "[redacted]"\n    }\n  }\n}');
  assert.doesNotMatch(edited.answer, /\\"/, 'no quoted JSON');
  // Text that is no JSON object stays as it was sent; another question's answer is not touched.
  const broken = describeRound({ key: 'approve-command', request: approval, state: 'answered', response: { action: 'accept', content: { arguments: '{"command": ' } } });
  assert.equal(broken.answer, '{\n  "arguments": "{\\"command\\": "\n}');
  const question = { method: 'elicitation/create', params: { message: 'Which?' } };
  const other = describeRound({ key: 'k', request: question, state: 'answered', response: { action: 'accept', content: { arguments: '{"a":1}' } } });
  assert.equal(other.answer, '{\n  "arguments": "{\\"a\\":1}"\n}');
});

test('an edited call reads as such, its diff left to the decision beside it', () => {
  const ev = describeEvent({ kind: 'argumentsEdited', data: { previous: { command: 'echo a' }, arguments: { command: 'echo b' } } });
  assert.equal(ev.title, 'Call edited by the approver');
  assert.equal(ev.tone, 'warn');
  assert.equal(ev.diff, undefined);
});

test('a decision says who decided the call and how; an edited approval carries the diff', () => {
  const base = { server: 'claude-code', tool: 'Bash', digest: 'sha256:00', arguments: { command: 'rm -rf build' } };
  const edited = describeEvent({ kind: 'decision', data: { ...base, decision: 'allow', decidedBy: 'human', human: 'alice', editedArguments: { command: 'rm -rf build/tmp' } } });
  assert.equal(edited.title, 'Approved claude-code Bash by alice with edited arguments');
  assert.equal(edited.tone, 'good');
  assert.deepEqual(edited.diff, [{ path: 'command', kind: 'changed', from: 'rm -rf build', to: 'rm -rf build/tmp' }]);
  const denied = describeEvent({ kind: 'decision', data: { ...base, decision: 'deny', decidedBy: 'human', human: 'bob', reason: 'not on Fridays', editedArguments: null } });
  assert.deepEqual(denied, { title: 'Denied claude-code Bash by bob', detail: 'Reason: not on Fridays', tone: 'bad', diff: undefined });
  assert.equal(describeEvent({ kind: 'decision', data: { ...base, decision: 'allow', decidedBy: 'rule', rule: 'r-1a2b3c4d' } }).title, 'Allowed claude-code Bash by rule r-1a2b3c4d');
  assert.equal(describeEvent({ kind: 'decision', data: { ...base, decision: 'deny', decidedBy: 'expiry' } }).title, 'Nobody answered in time: claude-code Bash denied');
  assert.equal(describeEvent({ kind: 'decision', data: { decision: 'ask', decidedBy: 'expiry' } }).tone, 'warn');
  assert.equal(describeEvent({ kind: 'decision', data: { ...base, decision: 'allow', decidedBy: 'default' } }).title, 'Allowed claude-code Bash by default');
});

test('an answered round does not write out a secret typed in its form', () => {
  const round = { key: 'creds', state: 'answered', answeredBy: 'admin', request: { params: { message: 'Creds?' } }, response: { action: 'accept', content: { user: 'bob', api_password: 'hunter2' } } };
  const { answer } = describeRound(round);
  assert.ok(!answer.includes('hunter2'), answer);
  assert.match(answer, /"api_password": "\[redacted\]"/);
  assert.match(answer, /"user": "bob"/);
});
