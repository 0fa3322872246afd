// Selecting rows (selection.js) and what a bulk cancel of them does (cancel.js).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { toggleSelection } from '../js/selection.js';
import { bulkCancelPlan, bulkCancelText, cancelName } from '../js/cancel.js';

/** A list of rows with ids t0..t(n-1), as the list model shows them. */
const rows = (n) => ({ length: n, at: (i) => (i >= 0 && i < n ? { id: `t${i}` } : undefined) });

test('a toggle selects a row, a second one deselects it', () => {
  const sel = new Set();
  assert.equal(toggleSelection(sel, rows(5), 2, -1, false), 2);
  assert.deepEqual([...sel], ['t2']);
  assert.equal(toggleSelection(sel, rows(5), 2, 2, false), 2);
  assert.deepEqual([...sel], []);
});

test('Shift selects every row between the last toggle and this one, in either direction', () => {
  const sel = new Set(['t0']);
  assert.equal(toggleSelection(sel, rows(10), 6, 3, true), 6);
  assert.deepEqual([...sel].sort(), ['t0', 't3', 't4', 't5', 't6']);
  const back = new Set();
  toggleSelection(back, rows(10), 1, 4, true);
  assert.deepEqual([...back].sort(), ['t1', 't2', 't3', 't4']);
  // A range only adds: selected rows inside it stay selected.
  const keep = new Set(['t2']);
  toggleSelection(keep, rows(10), 3, 1, true);
  assert.deepEqual([...keep].sort(), ['t1', 't2', 't3']);
});

test('Shift without a usable last toggle toggles the one row', () => {
  const sel = new Set();
  toggleSelection(sel, rows(5), 3, -1, true);
  assert.deepEqual([...sel], ['t3']);
  const shrunk = new Set();
  toggleSelection(shrunk, rows(5), 1, 7, true); // the list got shorter since
  assert.deepEqual([...shrunk], ['t1']);
});

test('a row that is not there changes nothing', () => {
  const sel = new Set(['t1']);
  assert.equal(toggleSelection(sel, rows(3), 5, 1, true), null);
  assert.deepEqual([...sel], ['t1']);
});

test('a bulk cancel skips the tasks that ended or are gone from the list', () => {
  const tasks = new Map([
    ['a', { taskId: 'a', status: 'working' }],
    ['b', { taskId: 'b', status: 'completed' }],
    ['c', { taskId: 'c', status: 'input_required' }],
    ['d', { taskId: 'd', status: 'cancelled' }],
  ]);
  const plan = bulkCancelPlan(['a', 'b', 'c', 'd', 'gone'], (id) => tasks.get(id));
  assert.deepEqual(
    plan.live.map((t) => t.taskId),
    ['a', 'c'],
  );
  assert.equal(plan.finished, 3, 'ended and missing tasks are both skipped');
  assert.deepEqual(bulkCancelPlan([], (id) => tasks.get(id)), { live: [], finished: 0 });
});

test('the bulk confirmation counts what is cancelled and what is skipped', () => {
  assert.deepEqual(bulkCancelText(1, 0), { title: 'Cancel 1 task?', body: 'Each of the 1 running task is asked to stop.', skipped: null, confirm: 'Cancel 1 task' });
  const t = bulkCancelText(3, 1);
  assert.equal(t.title, 'Cancel 3 tasks?');
  assert.equal(t.body, 'Each of the 3 running tasks is asked to stop.');
  assert.equal(t.skipped, '1 selected task has already finished and will be skipped.');
  assert.equal(t.confirm, 'Cancel 3 tasks');
  assert.equal(bulkCancelText(2, 4).skipped, '4 selected tasks have already finished and will be skipped.');
});

test('a cancel names the task as the list does: its title (a job name), else its tool', () => {
  assert.equal(cancelName({ tool: 'external', title: 'ui-runner-B' }), 'ui-runner-B');
  assert.equal(cancelName({ tool: 'run_command', title: 'make deploy\nand more' }), 'make deploy and more');
  assert.equal(cancelName({ tool: 'slow_compute' }), 'slow_compute');
  assert.equal(cancelName({ tool: 'slow_compute', title: 'slow_compute', arguments: { seconds: 60, label: 'nightly' } }), 'slow_compute (seconds: 60 · label: nightly)');
  assert.equal(cancelName({}), 'task');
});
