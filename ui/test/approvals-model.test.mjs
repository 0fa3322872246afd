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
  callName,
  goneText,
  askedAtOf,
  formAnswerText,
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

test('calls with hidden values never fold into a group: what is masked may differ', () => {
  const list = [approval('h1', 100, { digest: D1, hiddenValues: true }), approval('h2', 200, { digest: D1, hiddenValues: true })];
  assert.deepEqual(approvalQueue(list).map((e) => e.id), ['h1/approve', 'h2/approve']);
  // One of them without: still no group of two.
  const mixed = [approval('h1', 100, { digest: D1, hiddenValues: true }), approval('p1', 200, { digest: D1 })];
  assert.deepEqual(approvalQueue(mixed).map((e) => e.id), ['h1/approve', 'p1/approve']);
});

test('a countdown ticks to the second and says what expiry does', () => {
  assert.equal(countdown(65_000), '1:05');
  assert.equal(countdown(64_001), '1:05', 'a started second counts');
  assert.equal(countdown(3_723_000), '1:02:03');
  assert.equal(countdown(2 * 86_400_000 + 3 * 3_600_000), '2d 3h');
  assert.equal(countdown(-5), '0:00');
  const a = approval('t', 0, { expiresAtMs: 10_000 + 125_000, onExpiry: 'deny' });
  // The row says what happens then, not only when (the tooltip says it in a sentence).
  assert.deepEqual(expiryText(a, 10_000), { text: '2:05 → deny', title: 'Unless answered within 2:05, the call is denied.', urgent: false, expired: false });
  assert.equal(expiryText({ ...a, onExpiry: 'allow' }, 10_000).text, '2:05 → allow');
  assert.equal(expiryText({ ...a, onExpiry: 'ask' }, 10_000).text, '2:05 → agent’s prompt');
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

test('per-item results: a count, and each failure with its reason; one call is named', () => {
  const one = [approval('t1', 0, { tool: 'run_command', arguments: { command: 'echo a1' } })];
  assert.deepEqual(describeResults([{ taskId: 't1', ok: true }], 'approve', one), { text: 'Approved “run_command: echo a1”.', ok: 1, failed: [] });
  assert.equal(describeResults([{ taskId: 't1', ok: true }], 'approve', one, { edited: true }).text, 'Approved “run_command: echo a1” with your edit.');
  assert.equal(describeResults([{ taskId: 't1', ok: true }], 'deny', one).text, 'Denied “run_command: echo a1”.');
  assert.equal(describeResults([{ taskId: 't1', ok: false, error: 'already answered' }], 'deny', one).text, 'Not denied “run_command: echo a1”: already answered');
  assert.equal(describeResults([{ taskId: 't1', ok: true }], 'approve').text, 'Approved the call.', 'not sent: unnamed');
  // The first of two people: the call still waits.
  const twoPeople = [{ ...one[0], required: 2, approvedBy: [] }];
  assert.equal(describeResults([{ taskId: 't1', ok: true }], 'approve', twoPeople).text, 'Approved “run_command: echo a1”. It still waits for another person to approve it.');
  assert.equal(describeResults([{ taskId: 't1', ok: true }], 'approve', [{ ...one[0], required: 2, approvedBy: ['ann'] }]).text, 'Approved “run_command: echo a1”.');
  assert.equal(describeResults([{ taskId: 't1', ok: true }], 'deny', twoPeople).text, 'Denied “run_command: echo a1”.');
  // "Always allow": said saved, or said how it counts with several approvers; a note of the
  // server's (what was not done as asked) is said instead.
  assert.equal(describeResults([{ taskId: 't1', ok: true }], 'approve', one, { alwaysAllow: true }).text, 'Approved “run_command: echo a1”. It is always allowed from now on: its rule is added at the end of the policy.');
  assert.equal(describeResults([{ taskId: 't1', ok: true }], 'approve', [{ ...one[0], required: 2, approvedBy: ['ann'] }], { alwaysAllow: true }).text, 'Approved “run_command: echo a1”. Its rule is saved if everyone who approved it ticked “Always allow”.');
  assert.equal(describeResults([{ taskId: 't1', ok: true }], 'approve', twoPeople, { alwaysAllow: true }).text, 'Approved “run_command: echo a1”. It still waits for another person to approve it. Its rule is saved only if they tick “Always allow” too.');
  assert.equal(describeResults([{ taskId: 't1', ok: true }], 'approve', one, { alwaysAllow: true, edited: true }).text, 'Approved “run_command: echo a1” with your edit. The call as edited is always allowed from now on: its rule is added at the end of the policy.');
  assert.equal(describeResults([{ taskId: 't1', ok: true, note: 'approved without "always allow": no rule was saved' }], 'approve', one, { alwaysAllow: true }).text, 'Approved “run_command: echo a1”. Approved without "always allow": no rule was saved.');
  const r = describeResults([{ taskId: 'aaaaaaaa-1111-2222-3333-444444444444', ok: true }, { taskId: 'bbbbbbbb-1111-2222-3333-444444444444', ok: false, error: 'already answered' }, { taskId: 'c', ok: true }], 'deny');
  assert.equal(r.ok, 2);
  assert.match(r.text, /^2 of 3 denied\. Not decided: \S+ \(already answered\)\.$/);
});

test('an approval answered in its task’s form is named as the queue names the call, not by its question’s preamble', () => {
  const meta = { server: 'taskdeck', tool: 'run_command', principal: 'admin', arguments: { command: 'echo hi' }, required: 1, approvedBy: [] };
  assert.equal(formAnswerText(meta, { action: 'accept', content: {} }), 'Approved “run_command: echo hi”.');
  assert.equal(formAnswerText(meta, { action: 'accept', content: { arguments: '{"command": "echo edited"}' } }), 'Approved “run_command: echo hi” with your edit.');
  assert.equal(formAnswerText(meta, { action: 'decline', content: { reason: 'no' } }), 'Denied “run_command: echo hi”.');
  assert.equal(formAnswerText(meta, { action: 'cancel' }), 'Denied “run_command: echo hi”.', 'an approval’s Cancel denies the call');
  assert.equal(formAnswerText({ ...meta, required: 2 }, { action: 'accept' }), 'Approved “run_command: echo hi”. It still waits for another person to approve it.');
  assert.equal(formAnswerText(meta, { action: 'accept' }, false), '“run_command: echo hi” was already decided; your answer was not used.');
  for (const r of [{ action: 'accept' }, { action: 'decline' }]) assert.doesNotMatch(formAnswerText(meta, r), /wants to run/);
});

test('a call is named in one short line: its one string argument, else its arguments in short; a question by its text', () => {
  assert.equal(callName(approval('t', 0, { tool: 'run_command', arguments: { command: 'echo a1\necho a2' } })), 'run_command: echo a1 echo a2');
  assert.equal(callName(approval('t', 0, { tool: 'write', arguments: { path: '/tmp/x', mode: 420 } })), 'write: path: /tmp/x · mode: 420');
  assert.equal(callName(approval('t', 0, { tool: 'ping', arguments: {} })), 'ping');
  // A command is named by its line, whatever comes with it (its cwd, Claude's description).
  assert.equal(callName(approval('t', 0, { tool: 'run_command', arguments: { command: './progress.sh', cwd: '/tmp/w' } })), 'run_command: ./progress.sh');
  assert.equal(callName(approval('t', 0, { tool: 'Bash', arguments: { command: 'ls', description: 'List files' } })), 'Bash: ls');
  const long = callName(approval('t', 0, { tool: 'run_command', arguments: { command: `echo ${'x'.repeat(200)}` } }));
  assert.equal(long.length, 60);
  assert.ok(long.endsWith('…'));
  assert.equal(callName(approval('t', 0, { kind: 'question', message: 'Delete the\nbackup?' })), 'Delete the backup?');
  // Cut: the line is cut once, never ending "……", with a command or several arguments.
  for (let n = 40; n < 120; n++) {
    const command = callName(approval('t', 0, { tool: 'run_command', arguments: { command: `for i in 1 2 3; do ${'e'.repeat(n)}; done`, timeoutMs: 5000 } }));
    assert.ok(command.length <= 60 && !command.includes('……') && command.startsWith('run_command: for i'), command);
    const several = callName(approval('t', 0, { tool: 'write', arguments: { path: `/tmp/${'e'.repeat(n)}`, mode: 420 } }));
    assert.ok(several.length <= 60 && !several.includes('……') && several.startsWith('write: path: /tmp/e'), several);
  }
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

test('a row decided here hands the highlight to the row that took its place, not to the first', () => {
  const inbox = new ApprovalInbox();
  inbox.reset([approval('a', 1), approval('b', 2), approval('c', 3)]);
  inbox.move(1);
  inbox.move(1);
  assert.equal(inbox.activeId, 'b/approve');
  inbox.deciding.add('b/approve');
  inbox.reset([approval('a', 1), approval('c', 3)]);
  assert.equal(inbox.activeId, 'c/approve', 'b left: c took its place');
  inbox.deciding.add('c/approve');
  inbox.reset([approval('a', 1)]);
  assert.equal(inbox.activeId, 'a/approve', 'the last left: the one before it');
});

test('several rows decided here at once hand the highlight to the row that took their place', () => {
  const five = ['a', 'b', 'c', 'd', 'e'].map((id, i) => approval(id, i + 1));
  const inbox = new ApprovalInbox();
  inbox.deciding = new Set(five.map((a) => `${a.taskId}/approve`));
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

test('a highlighted call decided elsewhere keeps its place and the highlight: nothing slides under it', () => {
  const inbox = new ApprovalInbox();
  const [a1, a2, a3] = ['a1', 'a2', 'a3'].map((id, i) => approval(id, i + 1));
  inbox.reset([a1, a2, a3]);
  inbox.move(1);
  assert.equal(inbox.activeId, 'a1/approve');
  inbox.openId = 'a1/approve';
  inbox.reset([a2, a3]);
  assert.equal(inbox.activeId, 'gone:a1/approve', 'not a2');
  assert.equal(inbox.openId, null, 'no other call is opened in its stead');
  assert.deepEqual(inbox.rows.map((r) => r.id), ['gone:a1/approve', 'a2/approve', 'a3/approve']);
  assert.equal(inbox.rows[0].was.approval, a1);
  assert.deepEqual(inbox.leftElsewhere.map((r) => r.id), ['a1/approve']);
  assert.equal(inbox.size, 2, 'the kept place is no approval');
  // Another reload keeps it where it is (a row above it leaving too).
  inbox.reset([a3]);
  assert.deepEqual(inbox.rows.map((r) => r.id), ['gone:a1/approve', 'a3/approve']);
  assert.deepEqual(inbox.leftElsewhere, [], 'told once');
  // Selecting it selects nothing.
  inbox.toggleSelect(0);
  assert.equal(inbox.selected.size, 0);
  // j goes to the row that took its place, and the kept place goes.
  assert.equal(inbox.move(1).id, 'a3/approve');
  assert.deepEqual(inbox.rows.map((r) => r.id), ['a3/approve']);
  // k from a kept place goes to the row above it; a click (activeId set) alike.
  inbox.reset([a1, a2, a3]);
  inbox.activeId = 'a3/approve';
  inbox.reset([a1, a2]);
  assert.equal(inbox.activeId, 'gone:a3/approve');
  assert.deepEqual(inbox.rows.map((r) => r.id), ['a1/approve', 'a2/approve', 'gone:a3/approve']);
  assert.equal(inbox.move(1).id, 'gone:a3/approve', 'nothing below it');
  assert.equal(inbox.move(-1).id, 'a2/approve');
  inbox.reset([a1, a2, a3]);
  inbox.activeId = 'a2/approve';
  inbox.reset([a1, a3]);
  assert.equal(inbox.activeId, 'gone:a2/approve');
  inbox.activeId = 'a3/approve';
  assert.deepEqual(inbox.rows.map((r) => r.id), ['a1/approve', 'a3/approve']);
  // The last call decided elsewhere: no place kept in an empty queue, but the person is told.
  inbox.reset([a3]);
  inbox.reset([]);
  assert.equal(inbox.activeId, null);
  assert.deepEqual(inbox.rows, []);
  assert.deepEqual(inbox.leftElsewhere.map((r) => r.id), ['a3/approve']);
});

test('a kept place survives a group opening and closing, and a group decided elsewhere keeps one too', () => {
  const inbox = new ApprovalInbox();
  const calls = [approval('a', 1), approval('g1', 2, { digest: D1 }), approval('g2', 3, { digest: D1 }), approval('b', 4)];
  inbox.reset(calls);
  inbox.activeId = 'b/approve';
  inbox.reset(calls.slice(0, 3));
  inbox.toggleGroup(D1, true);
  assert.deepEqual(inbox.rows.map((r) => r.id), ['a/approve', `group:${D1}`, 'g1/approve', 'g2/approve', 'gone:b/approve']);
  assert.equal(inbox.activeId, 'gone:b/approve');
  inbox.toggleGroup(D1, false);
  inbox.activeId = `group:${D1}`;
  inbox.reset([calls[0], calls[1], calls[3]]);
  assert.equal(inbox.activeId, `gone:group:${D1}`, 'the group fell apart: its last call does not slide under the highlight');
  assert.match(goneText(inbox.rows[1].was, null, 1), /^1 of the 2 identical calls “Bash: echo g1” were decided elsewhere; 1 still waits, below$/);
});

test('an opened call decided elsewhere while another row is highlighted is told, and nothing else opens', () => {
  const inbox = new ApprovalInbox();
  const [a, b] = [approval('a', 1), approval('b', 2)];
  inbox.reset([a, b]);
  inbox.openId = 'a/approve';
  inbox.activeId = 'b/approve';
  inbox.reset([b]);
  assert.equal(inbox.openId, null);
  assert.equal(inbox.activeId, 'b/approve', 'the person moved there themselves');
  assert.deepEqual(inbox.leftElsewhere.map((r) => r.id), ['a/approve']);
});

test('a call asked again unchanged (the next person of M of N) keeps the highlight and stays open; edited, it keeps a place', () => {
  const inbox = new ApprovalInbox();
  const first = approval('t', 5, { required: 2 });
  const other = approval('o', 1);
  inbox.reset([other, first]);
  inbox.activeId = 't/approve';
  inbox.openId = 't/approve';
  const again = { ...first, key: 'approve#2', waitingSinceMs: 9, askedAtMs: 5, approvedBy: ['alice'] };
  inbox.reset([other, again]);
  assert.equal(inbox.activeId, 't/approve#2');
  assert.equal(inbox.openId, 't/approve#2');
  const edited = { ...again, key: 'approve#3', digest: D2, editedBy: 'bob', arguments: { command: 'echo edited' } };
  inbox.reset([other, edited]);
  assert.equal(inbox.activeId, 'gone:t/approve#2');
  assert.equal(inbox.openId, null);
  assert.equal(goneText(inbox.rows[1].was, { how: 'edited', by: 'bob' }), '“Bash: echo t” was edited by bob: it asks again, below');
  // My own first approval of two: the highlight goes on to the next call, past the same call
  // asked again for the other person.
  const inbox2 = new ApprovalInbox();
  const c = approval('c', 7);
  inbox2.reset([other, first, c]);
  inbox2.activeId = 't/approve';
  inbox2.deciding.add('t/approve');
  inbox2.reset([other, again, c]);
  assert.deepEqual(inbox2.rows.map((r) => r.id), ['o/approve', 't/approve#2', 'c/approve'], 'asked again, it keeps its place');
  assert.equal(inbox2.activeId, 'c/approve');
});

test('what became of a call decided elsewhere, in words', () => {
  const row = { type: 'approval', approval: approval('t', 0, { tool: 'run_command', arguments: { command: 'echo a1' } }) };
  assert.equal(goneText(row, { how: 'denied', by: 'alice' }), '“run_command: echo a1” was denied by alice');
  assert.equal(goneText(row, { how: 'approved', by: 'bob' }), '“run_command: echo a1” was approved by bob');
  assert.equal(goneText(row, { how: 'expired' }), '“run_command: echo a1” expired: denied');
  assert.equal(goneText(row, { how: 'expired', onExpiry: 'allow' }), '“run_command: echo a1” expired: allowed');
  assert.equal(goneText(row, { how: 'cancelled' }), '“run_command: echo a1” was cancelled');
  assert.equal(goneText(row, null), '“run_command: echo a1” was decided elsewhere');
  const group = { type: 'group', approvals: [row.approval, row.approval, row.approval] };
  assert.equal(goneText(group, null), 'The 3 identical calls “run_command: echo a1” were decided elsewhere');
});

test('the queue orders by when a call was first asked: a call asked again keeps its place and its time', () => {
  const meta = (askedAtMs) => ({ inputRequests: { 'approve#2': { params: { _meta: { 'taskdeck/approval': { askedAtMs } } } } } });
  const two = approval('two', 240_000, { key: 'approve#2' });
  assert.equal(askedAtOf(two, meta(1000)), 1000);
  assert.equal(askedAtOf(two, undefined), undefined);
  assert.equal(askedAtOf({ ...two, askedAtMs: 7 }, meta(1000)), 7, 'its own first');
  const inbox = new ApprovalInbox();
  const tasks = new Map();
  inbox.taskOf = (id) => tasks.get(id);
  inbox.reset([approval('b', 60_000), approval('c', 120_000), two]);
  assert.deepEqual(inbox.rows.map((r) => r.approval.taskId), ['b', 'c', 'two'], 'not known yet: this round’s time');
  tasks.set('two', meta(1000));
  assert.equal(inbox.tasksChanged(), true);
  assert.deepEqual(inbox.rows.map((r) => r.approval.taskId), ['two', 'b', 'c']);
  assert.equal(waitingText(inbox.get('two/approve#2'), 241_000), 'waiting 4m 0s');
  assert.equal(inbox.tasksChanged(), false, 'nothing new: not ordered again');
  // Learnt once, kept for the next round, when its task is not at hand.
  tasks.clear();
  inbox.reset([approval('b', 60_000), approval('two', 300_000, { key: 'approve#3' })]);
  assert.deepEqual(inbox.rows.map((r) => r.approval.taskId), ['two', 'b']);
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
