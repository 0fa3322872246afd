// The "Errors" chip: completed tasks whose result is an error (a command that exited
// non-zero) are counted apart from the statuses, filtered with the server's `error=true`, and
// followed live; and long texts are clamped with "Show all" (clamp.js).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TaskList, listQuery, matchesFilters, isErrorTask, defaultFilters, ERROR_COUNT } from '../js/tasks-model.js';
import { clampText, showAllLabel, CLAMP_CHARS, CLAMP_LINES } from '../js/clamp.js';

const at = '2026-12-01T10:00:00.000Z';
const task = (id, over = {}) => ({ taskId: id, seq: Number(id.slice(1)), status: 'working', tool: 'external', title: `job ${id}`, principal: 'admin', arguments: {}, createdAt: at, lastUpdatedAt: at, ...over });
const failedRun = (id) => task(id, { status: 'completed', isError: true, result: { content: [], isError: true }, lastUpdatedAt: '2026-12-01T10:00:01.000Z' });
const change = (kind, t, data = {}, id = 1) => ({ event: { id, kind, taskId: t.taskId, data }, task: t });

test('an error is a completed task whose result says isError, from the server or the result', () => {
  assert.equal(isErrorTask(failedRun('t1')), true);
  assert.equal(isErrorTask(task('t2', { status: 'completed', result: { isError: true } })), true);
  assert.equal(isErrorTask(task('t3', { status: 'completed', isError: false, result: { isError: false } })), false);
  assert.equal(isErrorTask(task('t4', { status: 'failed', error: { code: -32603 } })), false);
  assert.equal(isErrorTask(null), false);
});

test('the errors filter asks the server for error=true and keeps only errors live', () => {
  const f = { ...defaultFilters(), errors: true };
  assert.equal(listQuery(f), 'error=true&limit=200');
  assert.equal(listQuery({ ...f, statuses: ['completed'] }), 'status=completed&error=true&limit=200');
  assert.equal(listQuery(defaultFilters()).includes('error'), false);
  assert.equal(matchesFilters(failedRun('t1'), f), true);
  assert.equal(matchesFilters(task('t2', { status: 'completed', isError: false }), f), false);
  assert.equal(matchesFilters(task('t3'), f), false);
});

test('errors are counted apart, followed live, and left out of the total', () => {
  const list = new TaskList();
  list.reset({ tasks: [], nextCursor: null, counts: { completed: 2, [ERROR_COUNT]: 1 }, eventId: '0' });
  assert.equal(list.total(), 2, 'the error is one of the completed');
  const t = task('t5');
  list.apply(change('created', t, { status: 'working' }, 1));
  list.apply(change('status', failedRun('t5'), { from: 'working', to: 'completed' }, 2));
  assert.deepEqual(list.counts, { working: 0, completed: 3, [ERROR_COUNT]: 2 });
  assert.equal(list.total(), 3);
  const ok = task('t6');
  list.apply(change('created', ok, { status: 'working' }, 3));
  list.apply(change('status', { ...ok, status: 'completed', isError: false, lastUpdatedAt: '2026-12-01T10:00:02.000Z' }, { from: 'working', to: 'completed' }, 4));
  assert.equal(list.counts[ERROR_COUNT], 2);
  // Deleted: its error count goes with it (known from its last snapshot when not loaded).
  list.apply(change('deleted', failedRun('t5'), { status: 'completed' }, 5));
  assert.deepEqual(list.counts, { working: 0, completed: 3, [ERROR_COUNT]: 1 });
});

test('a long text is clamped by characters and by lines, never inside a surrogate pair', () => {
  assert.deepEqual(clampText('short'), { shown: 'short', cut: false, total: 5 });
  const huge = 'x'.repeat(900_000);
  const c = clampText(huge);
  assert.equal(c.cut, true);
  assert.equal(c.total, 900_000);
  assert.equal(c.shown.length, CLAMP_CHARS + 1);
  assert.ok(c.shown.endsWith('…'));
  const many = Array.from({ length: 20 }, (_, i) => `line ${i}`).join('\n');
  const byLines = clampText(many);
  assert.equal(byLines.cut, true);
  assert.equal(byLines.shown.split('\n').length, CLAMP_LINES);
  assert.ok(byLines.shown.endsWith(`line ${CLAMP_LINES - 1}…`));
  const exact = Array.from({ length: CLAMP_LINES }, () => 'a').join('\n');
  assert.equal(clampText(exact).cut, false);
  const emoji = clampText('😀'.repeat(400), { chars: 5 });
  assert.equal(emoji.shown, '😀😀…');
  assert.equal(showAllLabel(921722), 'Show all (921,722 characters)');
});
