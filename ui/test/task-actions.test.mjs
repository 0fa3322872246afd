import { test } from 'node:test';
import assert from 'node:assert/strict';
import { canRerun, deletePlan, describeDeletions, rerunCommand, finishedCount, clearFinishedText } from '../js/task-actions.js';

test('only finished commands and taskdeck run jobs with a command line run again', () => {
  assert.equal(canRerun({ tool: 'run_command', status: 'completed' }), true);
  assert.equal(canRerun({ tool: 'run_command', status: 'working' }), false);
  assert.equal(canRerun({ tool: 'external', status: 'failed', arguments: { command: ['make', 'test'] } }), true);
  assert.equal(canRerun({ tool: 'external', status: 'completed', arguments: { name: 'nightly' } }), false);
  assert.equal(canRerun({ tool: 'request_approval', status: 'completed' }), false);
});

test('a selection deletes its finished tasks and keeps the live ones', () => {
  const tasks = { a: { taskId: 'a', status: 'completed' }, b: { taskId: 'b', status: 'working' }, c: { taskId: 'c', status: 'cancelled' } };
  const plan = deletePlan(['a', 'b', 'c', 'gone'], (id) => tasks[id]);
  assert.deepEqual(plan.finished.map((t) => t.taskId), ['a', 'c']);
  assert.equal(plan.live, 1);
});

test('the outcome of a deletion is said in one line', () => {
  assert.equal(describeDeletions({ deleted: 1, results: [{ taskId: 'a', outcome: 'deleted' }] }), 'Deleted 1 task.');
  assert.equal(
    describeDeletions({ deleted: 2, results: [{ outcome: 'deleted' }, { outcome: 'live' }, { outcome: 'deleted' }, { outcome: 'not_found' }] }),
    'Deleted 2 tasks; 1 kept (still running); 1 not found.',
  );
  assert.equal(describeDeletions({ deleted: 7, results: [] }), 'Deleted 7 tasks.');
});

test('running again says the command line it runs, and where', () => {
  assert.deepEqual(rerunCommand({ tool: 'run_command', arguments: { command: 'make test | tee log' } }), { line: 'make test | tee log', cwd: null });
  assert.deepEqual(rerunCommand({ tool: 'run_command', arguments: { argv: ['git', 'commit', '-m', "it's done"], cwd: '/src' } }), {
    line: "git commit -m 'it'\\''s done'",
    cwd: '/src',
  });
  assert.deepEqual(rerunCommand({ tool: 'external', arguments: { name: 'build', command: ['cargo', 'build', '--release'], cwd: '/work/app' } }), {
    line: 'cargo build --release',
    cwd: '/work/app',
  });
  assert.equal(rerunCommand({ tool: 'external', arguments: { name: 'nightly' } }), null);
});

test('the finished tasks are the completed, failed and cancelled ones of the counts', () => {
  assert.equal(finishedCount({ working: 2, input_required: 1, completed: 5, error: 2, failed: 1, cancelled: 3 }), 9);
  assert.equal(finishedCount({ working: 2 }), 0);
  assert.equal(finishedCount(undefined), 0);
});

test('"Clear finished…" says it ignores the search and filters, and whose tasks it clears', () => {
  const filtered = clearFinishedText(2036, { filtered: true, seesAll: true });
  assert.equal(filtered.title, 'Clear all 2,036 finished tasks?');
  assert.equal(filtered.body, 'Deletes all 2,036 finished tasks of every agent and person (completed, failed and cancelled) with their timelines. Running and waiting tasks stay.');
  assert.equal(filtered.note, 'This ignores the search and filters: it is not only the tasks the list shows now, but all 2,036.');
  assert.equal(filtered.confirm, 'Clear 2,036 finished');
  // Nothing says "you can see": read beside 13 rows on screen, it meant the 13.
  for (const text of Object.values(filtered)) assert.doesNotMatch(text, /you can see/);
  const plain = clearFinishedText(3, { filtered: false, seesAll: false });
  assert.equal(plain.note, '');
  assert.match(plain.body, /^Deletes all 3 finished tasks of yours /);
  assert.equal(clearFinishedText(null, { filtered: true }).title, 'Clear all finished tasks?');
});
