// The list's words (footer, pause) and the filters' logic (chips, selects), from list.js and
// filters.js; their DOM parts are covered by tests/browser.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { footerText, pauseText } from '../js/list.js';
import { clickChip, isFiltered, selectValues, chipLabel, chipSymbol, chipTitle, scopeText, inboxScopeNote } from '../js/filters.js';
import { STATUSES } from '../js/status.js';

test('the footer says what the list is doing, loading first, then errors, then counts', () => {
  const base = { loading: false, listLoaded: true, loadError: null, loadingMore: false, length: 1234, nextCursor: null };
  assert.equal(footerText({ ...base, loading: true, listLoaded: false }), 'Loading tasks…');
  assert.equal(footerText({ ...base, loading: true, loadError: new Error('x') }), 'Updating…');
  assert.equal(footerText({ ...base, loadError: new Error('timed out'), loadingMore: true }), 'Could not load tasks: timed out');
  assert.equal(footerText({ ...base, loadingMore: true, nextCursor: 'c' }), '1,234 loaded · loading more…');
  assert.equal(footerText({ ...base, nextCursor: 'c' }), '1,234 loaded · more load as you scroll');
  assert.equal(footerText(base), '1,234 tasks');
  assert.equal(footerText({ ...base, length: 1 }), '1 task');
  assert.equal(footerText({ ...base, length: 0 }), '0 tasks');
});

test('the pause button and note count what waits', () => {
  assert.deepEqual(pauseText(null), { button: 'Pause updates', note: '', title: '' });
  assert.deepEqual(pauseText({ changes: 0, tasks: 0 }), { button: 'Resume', note: 'list frozen', title: 'Paused · list frozen' });
  assert.deepEqual(pauseText({ changes: 1, tasks: 1 }), { button: 'Resume (1)', note: '1 update to 1 task waiting', title: 'Paused · 1 update to 1 task waiting' });
  assert.deepEqual(pauseText({ changes: 1500, tasks: 3 }), { button: 'Resume (1,500)', note: '1,500 updates to 3 tasks waiting', title: 'Paused · 1,500 updates to 3 tasks waiting' });
});

test('a chip click shows one status, a second click shows all; Shift/Ctrl combines', () => {
  const s = new Set();
  assert.equal(clickChip(s, 'failed', false), s, 'the set is changed in place');
  assert.deepEqual([...s], ['failed']);
  clickChip(s, 'working', false);
  assert.deepEqual([...s], ['working'], 'a plain click replaces');
  clickChip(s, 'working', false);
  assert.deepEqual([...s], [], 'clicking the only status again shows all');
  clickChip(s, 'working', true);
  clickChip(s, 'failed', true);
  assert.deepEqual([...s].sort(), ['failed', 'working']);
  clickChip(s, 'working', false);
  assert.deepEqual([...s], ['working'], 'a plain click on one of several keeps it alone');
  clickChip(s, 'failed', true);
  clickChip(s, 'working', true);
  assert.deepEqual([...s], ['failed'], 'a combining click removes');
  clickChip(s, 'all', true);
  assert.deepEqual([...s], [], 'All clears, whatever the modifier');
});

test('filters count as narrowing when any is set; blank search text does not', () => {
  const none = { statuses: [], tool: '', principal: '', q: '' };
  assert.equal(isFiltered(none), false);
  assert.equal(isFiltered({ ...none, q: '   ' }), false);
  assert.equal(isFiltered({ ...none, q: 'deploy' }), true);
  assert.equal(isFiltered({ ...none, statuses: ['failed'] }), true);
  assert.equal(isFiltered({ ...none, tool: 'run_command' }), true);
  assert.equal(isFiltered({ ...none, principal: 'alice' }), true);
});

test('a select keeps "all" first and the current choice even when it is no longer seen', () => {
  assert.deepEqual(selectValues('', ['a', 'b']), ['', 'a', 'b']);
  assert.deepEqual(selectValues('b', ['a', 'b']), ['', 'a', 'b']);
  assert.deepEqual(selectValues('gone', ['a']), ['', 'a', 'gone']);
  assert.deepEqual(selectValues('', []), ['']);
});

test('each status chip has a symbol and an accessible name with its count', () => {
  for (const s of STATUSES) assert.ok(chipSymbol(s), s);
  assert.equal(chipSymbol('all'), '');
  assert.equal(chipLabel('all', 12), 'All statuses: 12 tasks');
  assert.equal(chipLabel('input_required', 1), 'Needs input: 1 task');
  assert.equal(chipLabel('failed', 0), 'Failed: 0 tasks');
});

test('under a search or filter a chip says it counts the matching tasks, and the inbox that it is not filtered', () => {
  const none = { statuses: ['failed'], errors: false, tool: '', principal: '', q: '  ' };
  assert.equal(scopeText(none), '', 'a status alone narrows nothing the chips count');
  assert.equal(chipLabel('input_required', 0, scopeText(none)), 'Needs input: 0 tasks');
  assert.equal(chipTitle('input_required', 0, scopeText(none)), '');
  assert.deepEqual(inboxScopeNote(none), { text: '', title: '' });

  const q = { ...none, q: ' deploy ' };
  assert.equal(scopeText(q), 'matching “deploy”');
  assert.equal(chipLabel('input_required', 0, scopeText(q)), 'Needs input: 0 tasks matching “deploy”');
  assert.equal(chipTitle('input_required', 0, scopeText(q)), 'Needs input: 0 tasks matching “deploy”. The “Needs input” box above lists every task waiting, whatever the search and filters.');
  assert.equal(chipTitle('failed', 2, scopeText(q)), 'Failed: 2 tasks matching “deploy”');
  assert.equal(inboxScopeNote(q).text, 'not filtered by the search');
  assert.equal(inboxScopeNote(q).title, 'This box lists every task waiting for an answer. The search narrows only the list below and its chips: there “Needs input” counts the waiting tasks matching “deploy”.');

  const tool = { ...none, tool: 'run_command', principal: 'alice' };
  assert.equal(scopeText(tool), 'tool run_command · of alice');
  assert.equal(inboxScopeNote(tool).text, 'not filtered by the tool or principal filter');
  const both = { ...tool, q: 'x' };
  assert.equal(inboxScopeNote(both).text, 'not filtered by the search or filters');
  assert.match(inboxScopeNote(both).title, /The search or filters narrow only the list below/);
  // A long or multi-line search is written on one line, cut.
  assert.match(scopeText({ ...none, q: `a\nb${'c'.repeat(100)}` }), /^matching “a bc+…”$/);
});
