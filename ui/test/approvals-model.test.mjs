// The approval inbox's model: order, groups, rows, highlight, selection and its words.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  approvalQueue,
  visibleRows,
  shortDigest,
  countdown,
  expiryText,
  waitingText,
  quorumText,
  decideBody,
  describeResults,
  changesApprovals,
  ApprovalInbox,
  approvedByMeText,
  groupLabel,
} from '../js/approvals-model.js';

const D1 = `sha256:${'a'.repeat(64)}`;
const D2 = `sha256:${'b'.repeat(64)}`;
const approval = (taskId, waitingSinceMs, extra = {}) => ({
  taskId,
  key: 'approve',
  kind: 'call',
  principal: 'claude-code',
  server: 'claude-code',
  tool: 'Bash',
  arguments: { command: `echo ${taskId}` },
  digest: `sha256:${taskId.padEnd(64, '0')}`,
  waitingSinceMs,
  expiresAtMs: null,
  onExpiry: 'deny',
  required: 1,
  approvedBy: [],
  ...extra,
});

test('the queue is oldest waiting first, whatever order the answer had', () => {
  const q = approvalQueue([approval('c', 300), approval('a', 100), approval('b', 200)]);
  assert.deepEqual(q.map((e) => e.id), ['a/approve', 'b/approve', 'c/approve']);
});

test('identical calls fold into one group at their oldest member’s place; questions never do', () => {
  const list = [
    approval('new', 500),
    approval('g2', 300, { digest: D1 }),
    approval('old', 50),
    approval('g1', 100, { digest: D1 }),
    approval('g3', 400, { digest: D1 }),
    approval('q1', 200, { kind: 'question', digest: D2 }),
    approval('q2', 250, { kind: 'question', digest: D2 }),
  ];
  const q = approvalQueue(list);
  assert.deepEqual(q.map((e) => e.id), ['old/approve', `group:${D1}`, 'q1/approve', 'q2/approve', 'new/approve']);
  assert.deepEqual(q[1].approvals.map((a) => a.taskId), ['g1', 'g2', 'g3']);
  const closed = visibleRows(q, new Set());
  assert.equal(closed.length, 5);
  assert.equal(closed[1].open, false);
  const open = visibleRows(q, new Set([D1]));
  assert.deepEqual(open.map((r) => r.id), ['old/approve', `group:${D1}`, 'g1/approve', 'g2/approve', 'g3/approve', 'q1/approve', 'q2/approve', 'new/approve']);
  assert.equal(open[2].inGroup, D1);
});

test('a countdown ticks to the second and says what expiry does', () => {
  assert.equal(countdown(65_000), '1:05');
  assert.equal(countdown(64_001), '1:05', 'a started second counts');
  assert.equal(countdown(3_723_000), '1:02:03');
  assert.equal(countdown(2 * 86_400_000 + 3 * 3_600_000), '2d 3h');
  assert.equal(countdown(-5), '0:00');
  const a = approval('t', 0, { expiresAtMs: 10_000 + 125_000, onExpiry: 'deny' });
  assert.deepEqual(expiryText(a, 10_000), { text: '2:05 left', title: 'Unless answered within 2:05, the call is denied.', urgent: false, expired: false });
  assert.equal(expiryText(a, 10_000 + 100_000).urgent, true, 'under a minute left');
  assert.deepEqual(expiryText({ ...a, onExpiry: 'allow' }, 200_000), { text: 'expired: allowed', title: 'The time to answer ran out; the call is allowed.', urgent: true, expired: true });
  assert.match(expiryText({ ...a, onExpiry: 'ask' }, 0).title, /handed back to the agent’s own prompt/);
  assert.equal(expiryText(approval('t', 0), 0), null, 'never expires');
  assert.equal(waitingText(approval('t', 1000), 43_000), 'waiting 42s');
});

test('"1 of 2" when several people must approve, and who did', () => {
  assert.equal(quorumText(approval('t', 0)), null);
  assert.deepEqual(quorumText(approval('t', 0, { required: 2, approvedBy: ['alice'] })), { text: '1 of 2', title: '2 people must approve; approved so far by alice.' });
  assert.equal(quorumText(approval('t', 0, { required: 3 })).text, '0 of 3');
});

test('a digest shows its first 12 hex digits', () => {
  assert.equal(shortDigest(D1), 'sha256:aaaaaaaaaaaa…');
  assert.equal(shortDigest('sha256:abc'), 'sha256:abc');
  assert.equal(shortDigest(undefined), '');
});

test('the decide body names each item; a reason is trimmed; edited arguments go as an object', () => {
  const a = [approval('t1', 0), approval('t2', 0, { key: 'approve-2' })];
  assert.deepEqual(decideBody(a, 'deny', { reason: '  not now ' }), { items: [{ taskId: 't1', key: 'approve' }, { taskId: 't2', key: 'approve-2' }], decision: 'deny', reason: 'not now' });
  assert.deepEqual(decideBody([a[0]], 'approve', { reason: ' ', arguments: { command: 'ls' } }), { items: [{ taskId: 't1', key: 'approve' }], decision: 'approve', arguments: { command: 'ls' } });
});

test('per-item results: a count, and each failure with its reason', () => {
  assert.deepEqual(describeResults([{ taskId: 't1', ok: true }], 'approve'), { text: 'Call approved.', ok: 1, failed: [] });
  assert.equal(describeResults([{ taskId: 't1', ok: false, error: 'already answered' }], 'deny').text, 'Not denied: already answered');
  // The first of two people: the call still waits.
  const twoPeople = [{ taskId: 't1', required: 2, approvedBy: [] }];
  assert.equal(describeResults([{ taskId: 't1', ok: true }], 'approve', twoPeople).text, 'Call approved. It still waits for another person to approve it.');
  assert.equal(describeResults([{ taskId: 't1', ok: true }], 'approve', [{ taskId: 't1', required: 2, approvedBy: ['ann'] }]).text, 'Call approved.');
  assert.equal(describeResults([{ taskId: 't1', ok: true }], 'deny', twoPeople).text, 'Call denied.');
  const r = describeResults([{ taskId: 'aaaaaaaa-1111-2222-3333-444444444444', ok: true }, { taskId: 'bbbbbbbb-1111-2222-3333-444444444444', ok: false, error: 'already answered' }, { taskId: 'c', ok: true }], 'deny');
  assert.equal(r.ok, 2);
  assert.match(r.text, /^2 of 3 denied\. Not decided: \S+ \(already answered\)\.$/);
});

test('only changes to waiting input refetch the approvals', () => {
  const ev = (kind, data = {}) => ({ event: { kind, data } });
  assert.ok(changesApprovals(ev('status', { from: 'working', to: 'input_required' })));
  assert.ok(changesApprovals(ev('status', { from: 'input_required', to: 'working' })));
  assert.ok(!changesApprovals(ev('status', { from: 'working', to: 'completed' })));
  for (const k of ['inputRequested', 'inputAnswered', 'inputSuperseded', 'decision']) assert.ok(changesApprovals(ev(k)), k);
  assert.ok(changesApprovals(ev('deleted', { status: 'input_required' })));
  assert.ok(!changesApprovals(ev('deleted', { status: 'completed' })));
  assert.ok(!changesApprovals(ev('progress')));
  assert.ok(!changesApprovals({ event: null }));
});

test('the inbox state: highlight moves, groups open, Shift selects a range, gone approvals leave', () => {
  const inbox = new ApprovalInbox();
  inbox.reset([approval('a', 1), approval('g1', 2, { digest: D1 }), approval('g2', 3, { digest: D1 }), approval('b', 4)]);
  assert.deepEqual(inbox.rows.map((r) => r.id), ['a/approve', `group:${D1}`, 'b/approve']);
  assert.equal(inbox.move(1).id, 'a/approve', 'from nothing to the first row');
  assert.equal(inbox.move(1).id, `group:${D1}`);
  inbox.toggleGroup(D1);
  assert.deepEqual(inbox.rows.map((r) => r.id), ['a/approve', `group:${D1}`, 'g1/approve', 'g2/approve', 'b/approve']);
  assert.equal(inbox.move(10).id, 'b/approve', 'clamped at the end');
  inbox.toggleSelect(0);
  inbox.toggleSelect(3, true);
  assert.deepEqual(inbox.selectedApprovals().map((a) => a.taskId), ['a', 'g1', 'g2'], 'the group row itself is not an item');
  inbox.toggleSelect(0);
  assert.deepEqual([...inbox.selected].sort(), ['g1/approve', 'g2/approve']);
  inbox.openId = 'g2/approve';
  inbox.reset([approval('a', 1), approval('g1', 2, { digest: D1 }), approval('b', 4)]);
  assert.deepEqual([...inbox.selected], ['g1/approve']);
  assert.equal(inbox.openId, null);
  assert.equal(inbox.expanded.size, 0, 'a group of one is no group');
  assert.equal(inbox.activeId, 'b/approve');
  assert.equal(inbox.get('a/approve').taskId, 'a');
  inbox.reset([]);
  assert.equal(inbox.activeId, null);
  assert.equal(inbox.move(1), null);
});

test('a decided row hands the highlight to the row that took its place, not to the first', () => {
  const inbox = new ApprovalInbox();
  inbox.reset([approval('a', 1), approval('b', 2), approval('c', 3)]);
  inbox.move(1);
  inbox.move(1);
  assert.equal(inbox.activeId, 'b/approve');
  inbox.reset([approval('a', 1), approval('c', 3)]);
  assert.equal(inbox.activeId, 'c/approve', 'b left: c took its place');
  inbox.reset([approval('a', 1)]);
  assert.equal(inbox.activeId, 'a/approve', 'the last left: the one before it');
});

test('several rows decided at once hand the highlight to the row that took their place', () => {
  const five = ['a', 'b', 'c', 'd', 'e'].map((id, i) => approval(id, i + 1));
  const inbox = new ApprovalInbox();
  inbox.reset(five);
  inbox.activeId = 'b/approve';
  inbox.reset([five[2], five[3], five[4]]);
  assert.equal(inbox.activeId, 'c/approve', 'a and b left: c is where they were');
  inbox.reset(five);
  inbox.activeId = 'b/approve';
  inbox.reset([five[0], five[3], five[4]]);
  assert.equal(inbox.activeId, 'd/approve', 'b and c left: d took their place');
  inbox.reset(five);
  inbox.activeId = 'd/approve';
  inbox.reset([five[0], five[1]]);
  assert.equal(inbox.activeId, 'b/approve', 'the last ones left: the one before them');
});

test('a call I approved that waits for more people says so in a whole sentence', () => {
  const mine = approval('t', 0, { required: 2, approvedBy: ['admin'] });
  assert.equal(approvedByMeText(mine), 'You approved · waits for 1 more person');
  assert.equal(approvedByMeText(approval('t', 0, { required: 3, approvedBy: ['admin'] })), 'You approved · waits for 2 more people');
  assert.doesNotMatch(approvedByMeText(mine), /must$/);
});

test('a group says how many calls it holds, its tool, arguments and whose they are', () => {
  const calls = ['t1', 't2', 't3'].map((id) => approval(id, 0, { principal: 'agent2', server: 'taskdeck', tool: 'run_command', arguments: { argv: ['touch', '/tmp/x'], cwd: '/tmp' } }));
  assert.deepEqual(groupLabel(calls), {
    count: '3 identical calls',
    tool: 'taskdeck · run_command',
    args: 'argv: ["touch","/tmp/x"] · cwd: /tmp',
    principals: 'agent2',
    title: '3 identical calls (taskdeck · run_command from agent2): argv: ["touch","/tmp/x"] · cwd: /tmp',
  });
  const mixed = [...calls, approval('t4', 0, { principal: 'agent1' }), approval('t5', 0, { principal: 'agent3' })];
  assert.equal(groupLabel(mixed).principals, '3 principals');
});
