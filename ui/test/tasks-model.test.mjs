import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TaskList, InputInbox, listQuery, matchesFilters, isStale, outstandingPrompts, orderKey, compareOrder, searchDelayMs, keepWhole } from '../js/tasks-model.js';

let clock = Date.parse('2026-11-29T10:00:00Z');
const iso = (ms) => new Date(ms).toISOString();

function task(id, over = {}) {
  clock += 1000;
  return {
    taskId: id,
    status: 'working',
    tool: 'slow_compute',
    principal: 'admin',
    arguments: { label: id },
    createdAt: iso(clock),
    lastUpdatedAt: iso(clock),
    ttlMs: 1000,
    ...over,
  };
}
const later = (t, over) => ({ ...t, lastUpdatedAt: iso(Date.parse(t.lastUpdatedAt) + 500), ...over });
const ev = (kind, t, data = {}) => ({ event: { id: ++ev.n, kind, taskId: t.taskId, data }, task: t });
ev.n = 0;

test('listQuery carries only the filters that are set', () => {
  assert.equal(listQuery({ statuses: [], tool: '', principal: '', q: '  ' }), 'limit=200');
  assert.equal(
    listQuery({ statuses: ['working', 'input_required'], tool: 'x y', principal: 'p', q: 'deploy' }, { cursor: '42', limit: 50 }),
    'status=working%2Cinput_required&tool=x+y&principal=p&q=deploy&cursor=42&limit=50',
  );
});

test('a change updates its row in place, keeping the order', () => {
  const [a, b, c] = [task('a'), task('b'), task('c')];
  const list = new TaskList();
  list.reset({ tasks: [c, b, a], nextCursor: null, counts: { working: 3 } });
  const v = list.version;
  const b2 = later(b, { progress: { current: 5, total: 10 } });
  assert.deepEqual(list.apply(ev('progress', b2, { current: 5, total: 10 })), { type: 'updated' });
  assert.deepEqual(list.rows.map((r) => r.id), ['c', 'b', 'a']);
  assert.equal(list.get('b').progress.current, 5);
  assert.ok(list.version > v);
});

test('a new task goes on top; counts follow created and status events', () => {
  const a = task('a');
  const list = new TaskList();
  list.reset({ tasks: [a], nextCursor: null, counts: { working: 1 } });
  const n = task('n');
  assert.deepEqual(list.apply(ev('created', n, { status: 'working', tool: 'slow_compute' })), { type: 'inserted', index: 0 });
  assert.equal(list.counts.working, 2);
  list.apply(ev('status', later(n, { status: 'completed' }), { from: 'working', to: 'completed' }));
  assert.deepEqual(list.counts, { working: 1, completed: 1 });
  assert.equal(list.total(), 2);
  assert.equal(list.total(['completed']), 1);
});

test('stale and out-of-order updates are ignored; terminal never goes back', () => {
  const a = task('a');
  const list = new TaskList();
  list.reset({ tasks: [a], nextCursor: null, counts: {} });
  const done = later(a, { status: 'completed' });
  list.apply(ev('status', done));
  assert.deepEqual(list.apply(ev('progress', a)), { type: 'ignored' });
  assert.equal(list.get('a').status, 'completed');
  assert.equal(isStale(done, { ...done, status: 'working', lastUpdatedAt: iso(Date.now() + 1e9) }), true);
  assert.equal(isStale(a, a), false, 'same timestamp is taken');
});

test('a task that leaves the status filter is removed; one that enters it is inserted by creation time', () => {
  const [a, b, c] = [task('a'), task('b'), task('c')];
  const list = new TaskList({ statuses: ['working'], tool: '', principal: '', q: '' });
  list.reset({ tasks: [c, a], nextCursor: null, counts: {} });
  assert.deepEqual(list.apply(ev('status', later(c, { status: 'completed' }))), { type: 'removed', index: 0 });
  assert.deepEqual(list.rows.map((r) => r.id), ['a']);
  // b was input_required (not listed) and now works again: it belongs above a.
  assert.deepEqual(list.apply(ev('status', later(b, { status: 'working' }))), { type: 'inserted', index: 0 });
  assert.deepEqual(list.rows.map((r) => r.id), ['b', 'a']);
});

test('an old task past the loaded pages is left for the next page', () => {
  const old = task('old');
  const [x, y] = [task('x'), task('y')];
  const list = new TaskList();
  list.reset({ tasks: [y, x], nextCursor: '5', counts: {} });
  assert.deepEqual(list.apply(ev('progress', later(old))), { type: 'ignored' });
  list.appendPage({ tasks: [old], nextCursor: null });
  assert.deepEqual(list.rows.map((r) => r.id), ['y', 'x', 'old']);
  assert.equal(list.nextCursor, null);
});

test('tool, principal and free-text filters apply to live tasks', () => {
  const t = task('zz', { tool: 'request_approval', principal: 'ci', arguments: { message: 'Deploy to PROD?' } });
  assert.equal(matchesFilters(t, { statuses: [], tool: 'request_approval', principal: '', q: '' }), true);
  assert.equal(matchesFilters(t, { statuses: [], tool: 'other', principal: '', q: '' }), false);
  assert.equal(matchesFilters(t, { statuses: [], tool: '', principal: 'admin', q: '' }), false);
  assert.equal(matchesFilters(t, { statuses: [], tool: '', principal: '', q: 'deploy to prod' }), true);
  assert.equal(matchesFilters(t, { statuses: [], tool: '', principal: '', q: 'rollback' }), false);
  const list = new TaskList({ statuses: [], tool: '', principal: '', q: 'rollback' });
  list.reset({ tasks: [], nextCursor: null, counts: {} });
  assert.equal(list.apply(ev('created', t, { status: 'working' })).type, 'ignored');
  assert.equal(list.counts.working, undefined, 'counts are narrowed by the free text, as on the server');
});

test('counts follow only the tasks the tool filter and the free text select', () => {
  const list = new TaskList({ statuses: [], tool: 'external', principal: '', q: 'trigger' });
  list.reset({ tasks: [], nextCursor: null, counts: { working: 1 } });
  const other = task('o', { tool: 'request_approval', arguments: { message: 'trigger' } });
  list.apply(ev('created', other, { status: 'working' }));
  list.apply(ev('status', later(other, { status: 'input_required' }), { from: 'working', to: 'input_required' }));
  const unrelated = task('u', { tool: 'external', arguments: { name: 'nightly' } });
  list.apply(ev('created', unrelated, { status: 'working' }));
  assert.deepEqual(list.counts, { working: 1 }, 'another tool and a text that does not match change nothing');
  const job = task('j', { tool: 'external', arguments: { name: 'trigger' } });
  list.apply(ev('created', job, { status: 'working' }));
  list.apply(ev('status', later(job, { status: 'failed' }), { from: 'working', to: 'failed' }));
  assert.deepEqual(list.counts, { working: 1, failed: 1 });
});

test('a task deleted from the store leaves the list and its count', () => {
  const [a, b] = [task('a', { status: 'completed' }), task('b')];
  const list = new TaskList();
  list.reset({ tasks: [b, a], nextCursor: null, counts: { working: 1, completed: 1 } });
  assert.deepEqual(list.apply(ev('deleted', a, { status: 'completed', tool: a.tool, principal: a.principal })), { type: 'removed', index: 1 });
  assert.deepEqual(list.rows.map((r) => r.id), ['b']);
  assert.deepEqual(list.counts, { working: 1, completed: 0 });
  assert.equal(list.total(), 1);
  // One that was never loaded (an older page) still leaves the counts.
  const old = task('old', { status: 'failed' });
  list.counts.failed = 3;
  assert.deepEqual(list.apply(ev('deleted', old, { status: 'failed' })), { type: 'ignored' });
  assert.equal(list.counts.failed, 2);
});

test('pause buffers changes and resume applies them', () => {
  const a = task('a');
  const list = new TaskList();
  list.reset({ tasks: [a], nextCursor: null, counts: { working: 1 } });
  list.pause();
  const n = task('n');
  assert.deepEqual(list.apply(ev('created', n, { status: 'working' })), { type: 'buffered' });
  list.apply(ev('progress', later(a, { progress: { current: 1 } })));
  list.apply(ev('progress', later(a, { progress: { current: 2 } })));
  assert.deepEqual(list.pendingSummary(), { changes: 3, tasks: 2 });
  assert.deepEqual(list.rows.map((r) => r.id), ['a'], 'frozen');
  assert.equal(list.counts.working, 1, 'counts frozen too');
  assert.equal(list.resume(), 3);
  assert.deepEqual(list.rows.map((r) => r.id), ['n', 'a']);
  assert.equal(list.get('a').progress.current, 2);
  assert.equal(list.counts.working, 2);
  assert.deepEqual(list.pendingSummary(), { changes: 0, tasks: 0 });
});

test('changes seen while a page loads are re-applied on top of it', () => {
  const a = task('a');
  const list = new TaskList();
  list.beginLoad();
  const a2 = later(a, { status: 'completed' });
  list.apply(ev('status', a2, { from: 'working', to: 'completed' }));
  // The page was read before that change.
  list.reset({ tasks: [a], nextCursor: null, counts: { working: 1 } });
  assert.equal(list.get('a').status, 'completed');
  assert.deepEqual(list.counts, { working: 1 }, 'the page counts are not adjusted twice');
});

test('with the page eventId, changes it already reflects are skipped and later ones counted', () => {
  const [a, b] = [task('a'), task('b')];
  const list = new TaskList();
  list.beginLoad();
  const a2 = later(a, { status: 'completed' });
  const seen = ev('status', a2, { from: 'working', to: 'completed' }); // in the page's snapshot
  list.apply(seen);
  const b2 = later(b, { status: 'failed' });
  const after = ev('status', b2, { from: 'working', to: 'failed' }); // after it
  list.apply(after);
  list.reset({ tasks: [b, a2], nextCursor: null, counts: { working: 1, completed: 1 }, eventId: String(seen.event.id) });
  assert.equal(list.get('a').status, 'completed');
  assert.equal(list.get('b').status, 'failed', 'a later change is applied to the row');
  assert.deepEqual(list.counts, { working: 0, completed: 1, failed: 1 }, 'and counted once');
});

test('changes that waited while paused are not counted again after a page counted them', () => {
  const a = task('a');
  const list = new TaskList();
  list.reset({ tasks: [a], nextCursor: null, counts: { working: 1 }, eventId: '0' });
  list.pause();
  const a2 = later(a, { status: 'completed' });
  const change = ev('status', a2, { from: 'working', to: 'completed' });
  list.apply(change);
  // A reload while paused: the server's page already has the change.
  list.beginLoad();
  list.reset({ tasks: [a2], nextCursor: null, counts: { completed: 1 }, eventId: String(change.event.id) });
  list.resume();
  assert.deepEqual(list.counts, { completed: 1 });
});

test('a change arriving after a page that already counted it is not counted again', () => {
  const a = task('a');
  const a2 = later(a, { status: 'completed' });
  const list = new TaskList();
  list.beginLoad();
  const change = ev('status', a2, { from: 'working', to: 'completed' });
  list.reset({ tasks: [a2], nextCursor: null, counts: { completed: 1 }, eventId: String(change.event.id) });
  list.apply(change); // the stream lags behind the page
  assert.deepEqual(list.counts, { completed: 1 });
  list.apply(ev('created', task('b'), { status: 'working' }));
  assert.deepEqual(list.counts, { completed: 1, working: 1 }, 'later changes are counted');
  assert.equal(list.get('a').status, 'completed');
});

test('a deleted task leaves the count it was counted under', () => {
  const a = task('a', { status: 'input_required' });
  const list = new TaskList();
  list.reset({ tasks: [a], nextCursor: null, counts: { input_required: 1 }, eventId: '0' });
  // Resumed after the page: the task was answered, completed and deleted; only `deleted` is left.
  list.apply(ev('deleted', { taskId: 'a', status: 'completed' }, { status: 'completed' }));
  assert.deepEqual(list.counts, { input_required: 0 });
  assert.equal(list.length, 0);
});

test('pages never duplicate rows', () => {
  const [a, b] = [task('a'), task('b')];
  const list = new TaskList();
  list.reset({ tasks: [b, a], nextCursor: '1', counts: {} });
  list.appendPage({ tasks: [a], nextCursor: null });
  assert.equal(list.length, 2);
  assert.equal(list.indexOf('a'), 1);
});

test('the list orders by seq, not by createdAt (equal or skewed clocks do not reorder)', () => {
  // Same createdAt millisecond, and a clock that stepped back: seq still decides.
  const at = iso(clock);
  const s1 = task('s1', { seq: 1, createdAt: at });
  const s2 = task('s2', { seq: 2, createdAt: at });
  const s3 = task('s3', { seq: 3, createdAt: iso(Date.parse(at) - 60_000) });
  const list = new TaskList();
  list.reset({ tasks: [s2, s1], nextCursor: null, counts: {} });
  assert.deepEqual(list.apply(ev('created', s3, { status: 'working' })), { type: 'inserted', index: 0 });
  const mid = task('mid', { seq: 2.5, createdAt: iso(Date.parse(at) + 999_999) });
  assert.deepEqual(list.apply(ev('created', mid, { status: 'working' })), { type: 'inserted', index: 1 });
  assert.deepEqual(list.rows.map((r) => r.id), ['s3', 'mid', 's2', 's1']);
  // Without seq (hand-built data), createdAt still orders.
  assert.ok(compareOrder(orderKey({ createdAt: iso(2000) }), orderKey({ createdAt: iso(1000) })) > 0);
  assert.ok(compareOrder(orderKey({ seq: 1 }), orderKey({ createdAt: iso(clock) })) > 0, 'a seq outranks a bare timestamp');
  assert.equal(compareOrder(orderKey({ seq: 7 }), orderKey({ seq: 7 })), 0);
  // The inbox too.
  const inbox = new InputInbox();
  inbox.reset([
    task('old', { seq: 10, status: 'input_required', createdAt: iso(clock + 5000) }),
    task('new', { seq: 11, status: 'input_required', createdAt: iso(clock - 5000) }),
  ]);
  assert.deepEqual(inbox.list().map((t) => t.taskId), ['new', 'old']);
});

test('the inbox keeps input_required tasks, newest first, and drops answered ones', () => {
  const inbox = new InputInbox();
  const [p, q] = [task('p', { status: 'input_required' }), task('q', { status: 'input_required' })];
  inbox.reset([p, task('w')]);
  assert.equal(inbox.size, 1);
  assert.equal(inbox.apply(q), 'added');
  assert.deepEqual(inbox.list().map((t) => t.taskId), ['q', 'p']);
  assert.equal(inbox.apply(later(p, { status: 'working' })), 'removed');
  assert.equal(inbox.apply(later(p, { status: 'working' })), null);
  assert.deepEqual(inbox.list().map((t) => t.taskId), ['q']);
});

test('an inbox cut short at its last page counts what the server counted, and follows events', () => {
  const inbox = new InputInbox();
  const [p, q] = [task('p', { status: 'input_required' }), task('q', { status: 'input_required' })];
  inbox.reset([p, q], 1017);
  assert.equal(inbox.size, 2);
  assert.equal(inbox.count, 1017);
  const n = task('n');
  inbox.apply(later(n, { status: 'input_required' }), { kind: 'status', data: { from: 'working', to: 'input_required' } });
  assert.equal(inbox.count, 1018);
  // One that was not loaded is answered: the count drops although the inbox never held it.
  const far = task('far', { status: 'working' });
  assert.equal(inbox.apply(far, { kind: 'status', data: { from: 'input_required', to: 'working' } }), null);
  assert.equal(inbox.count, 1017);
  // A whole snapshot: the count is what it holds.
  inbox.reset([p]);
  assert.equal(inbox.count, 1);
  assert.equal(inbox.apply(q, { kind: 'deleted', data: { status: 'completed' } }), null);
  assert.equal(inbox.apply(p, { kind: 'deleted', data: { status: 'input_required' } }), 'removed');
  assert.equal(inbox.count, 0);
});

test('outstanding prompts come from inputRequests in key order', () => {
  const t = task('m', {
    status: 'input_required',
    inputRequests: {
      'second-answer': { method: 'elicitation/create', params: { mode: 'form', message: 'Second?', requestedSchema: { type: 'object', properties: {} } } },
      'first-answer': { method: 'elicitation/create', params: { mode: 'form', message: 'First?', _meta: { 'taskdeck/approval': { tool: 'run_command', arguments: { command: 'ls' }, editable: true } } } },
    },
  });
  const prompts = outstandingPrompts(t);
  assert.deepEqual(prompts.map((p) => [p.key, p.message]), [['first-answer', 'First?'], ['second-answer', 'Second?']]);
  assert.deepEqual(prompts[0].schema, { type: 'object', properties: {} });
  // An approval question carries the call it decides; another question none.
  assert.deepEqual(prompts[0].approval, { tool: 'run_command', arguments: { command: 'ls' }, editable: true });
  assert.equal(prompts[1].approval, undefined);
  assert.deepEqual(outstandingPrompts({ ...t, status: 'working' }), []);
});

test('100,000 rows: a live update near the end and an insert at the top stay fast', () => {
  const tasks = [];
  let ms = Date.parse('2026-01-01T00:00:00Z');
  for (let i = 0; i < 100_000; i++) {
    ms -= 10;
    tasks.push({ taskId: `t${i}`, status: 'working', tool: 'x', principal: 'admin', createdAt: iso(ms), lastUpdatedAt: iso(ms) });
  }
  const list = new TaskList();
  list.reset({ tasks, nextCursor: null, counts: { working: 100_000 } });
  const started = performance.now();
  for (let i = 0; i < 1000; i++) {
    const t = tasks[99_000 + i];
    list.apply({ event: { id: i, kind: 'progress', data: {} }, task: { ...t, progress: { current: i } } });
  }
  list.apply(ev('created', task('fresh', { createdAt: '2026-06-01T00:00:00Z' }), { status: 'working' }));
  const took = performance.now() - started;
  assert.equal(list.rows[0].id, 'fresh');
  assert.equal(list.get('t99500').progress.current, 500);
  assert.ok(took < 500, `took ${took} ms`);
});

test('a late, older snapshot does not bring a cancelled task back into the inbox', async () => {
  const { InputInbox } = await import('../js/tasks-model.js');
  const inbox = new InputInbox();
  const waiting = { taskId: 't1', status: 'input_required', lastUpdatedAt: '2026-11-29T10:00:00.327Z', inputRequests: { a: {} } };
  assert.equal(inbox.apply(waiting), 'added');
  assert.equal(inbox.apply({ ...waiting, status: 'cancelled', lastUpdatedAt: '2026-11-29T10:00:00.333Z' }), 'removed');
  // The cancel request's own answer (older: still input_required, cancelRequested) arrives last.
  assert.equal(inbox.apply({ ...waiting, cancelRequested: true }), null);
  assert.equal(inbox.size, 0);
});

test('an inbox snapshot that was loading while the stream moved on does not undo the stream', () => {
  const inbox = new InputInbox();
  const [gone, stays, arrives] = ['gone', 'stays', 'arrives'].map((id) => task(id, { status: 'input_required' }));
  inbox.reset([gone, stays]);
  inbox.beginReset();
  // While the snapshot loads: one is cancelled, one gets newer, a new one comes in.
  assert.equal(inbox.apply(later(gone, { status: 'cancelled' })), 'removed');
  const newer = later(stays, { statusMessage: 'still waiting' });
  assert.equal(inbox.apply(newer), 'updated');
  assert.equal(inbox.apply(arrives), 'added');
  // The snapshot was taken before all of that.
  inbox.reset([gone, stays]);
  assert.deepEqual(inbox.list().map((t) => t.taskId).sort(), ['arrives', 'stays']);
  assert.equal(inbox.tasks.get('stays').statusMessage, 'still waiting');
  // Without a load in progress a snapshot is taken as it is.
  inbox.reset([stays]);
  assert.deepEqual(inbox.list().map((t) => t.taskId), ['stays']);
});

test('search runs at once when the server can use its index, after a pause when it must scan', () => {
  assert.equal(searchDelayMs(''), 0);
  assert.equal(searchDelayMs('   '), 0);
  assert.equal(searchDelayMs('ne'), 250);
  assert.equal(searchDelayMs('a%b_c'), 250, 'wildcards break the runs the index needs');
  assert.equal(searchDelayMs('nee'), 40);
  assert.equal(searchDelayMs(' needle 9 '), 40);
  assert.equal(searchDelayMs('ééé'), 40, 'characters, not bytes');
});

test('keepWhole: a cut member is taken from the task read whole, until that has it cut too', () => {
  const whole = { taskId: 't', status: 'working', arguments: { content: 'x'.repeat(5000) } };
  const event = { taskId: 't', status: 'working', statusMessage: 'half', arguments: { content: 'x…x' }, abridged: ['arguments'] };
  const merged = keepWhole(whole, event);
  assert.equal(merged.arguments, whole.arguments);
  assert.equal(merged.statusMessage, 'half');
  assert.equal('abridged' in merged, false);
  // The task ended: its result was never read whole, so it stays cut (and says so).
  const ended = { ...event, status: 'completed', result: { content: [{ type: 'text', text: 'a…b' }] }, abridged: ['arguments', 'result'] };
  const next = keepWhole(merged, ended);
  assert.equal(next.arguments, whole.arguments);
  assert.deepEqual(next.result, ended.result);
  assert.deepEqual(next.abridged, ['result']);
  // Taken from a cut copy: still cut.
  assert.deepEqual(keepWhole(next, ended).abridged, ['result']);
  // Nothing cut, or another task: the incoming task itself.
  const plain = { taskId: 't', status: 'working' };
  assert.equal(keepWhole(whole, plain), plain);
  assert.equal(keepWhole({ taskId: 'u', arguments: {} }, event), event);
  assert.equal(keepWhole(null, event), event);
});

test('a listed task whose change comes cut to size stays under the search the server matched', () => {
  const filters = { statuses: [], tool: '', principal: '', q: 'needle' };
  const whole = task('big', { arguments: { content: `start ${'x'.repeat(3000)} needle ${'y'.repeat(3000)} end` } });
  const list = new TaskList(filters);
  list.reset({ tasks: [whole], nextCursor: null, counts: { working: 1 } });
  // Its next change carries the arguments cut: the word is in the part cut out.
  const cut = later(whole, { statusMessage: 'writing', arguments: { content: 'start x…y end' }, abridged: ['arguments'] });
  assert.equal(list.apply(ev('statusMessage', cut)).type, 'updated');
  assert.equal(list.rows.length, 1);
  // Whole, a change that no longer matches leaves; other filters apply to a cut task too.
  assert.equal(list.apply(ev('status', later(cut, { status: 'failed' }))).type, 'updated');
  const other = new TaskList({ ...filters, statuses: ['working'] });
  other.reset({ tasks: [whole], nextCursor: null, counts: { working: 1 } });
  assert.equal(other.apply(ev('status', later(cut, { status: 'failed' }))).type, 'removed');
  const plain = task('small', { arguments: { content: 'needle' } });
  list.reset({ tasks: [plain], nextCursor: null, counts: { working: 1 } });
  assert.equal(list.apply(ev('statusMessage', later(plain, { arguments: { content: 'thread' } }))).type, 'removed');
});

test('admit inserts the tasks a search page holds that the list lacks, in order, and no others', () => {
  const filters = { statuses: ['working'], tool: '', principal: '', q: 'needle' };
  const list = new TaskList(filters);
  const old = task('old', { arguments: { content: 'needle' } });
  const gone = task('gone', { arguments: { content: 'needle' } });
  const newest = task('newest', { arguments: { content: 'start x…y end' }, abridged: ['arguments'] });
  list.reset({ tasks: [gone, old], nextCursor: null, counts: { working: 2 } });
  // Arrives cut: the client cannot see the match, and leaves it out.
  assert.equal(list.apply(ev('created', newest, { status: 'working' })).type, 'ignored');
  // A change takes `gone` out of the list (it no longer matches the status filter).
  assert.equal(list.apply(ev('status', later(gone, { status: 'failed' }))).type, 'removed');
  // The server's page, read before that change, still holds `gone`; a failed one is no match.
  const failed = task('failed', { status: 'failed' });
  assert.equal(list.admit([newest, gone, old, failed]), 1);
  assert.deepEqual(list.rows.map((r) => r.id), ['newest', 'old']);
  assert.equal(list.admit([newest]), 0);
});
