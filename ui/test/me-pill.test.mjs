// The "sees all principals" pill of the top bar (me-pill.js) is never cut: it shows whole,
// else short, else out of sight.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pillFit, PILL_FULL, PILL_SHORT } from '../js/me-pill.js';

test('the pill takes the first form that fits whole: whole, then short, then none', () => {
  assert.equal(pillFit(() => true), 'full');
  assert.equal(pillFit((form) => form === 'short'), 'short');
  assert.equal(pillFit(() => false), 'none');
  // Tried from the most room down, and no further than the first that fits.
  const tried = [];
  pillFit((form) => (tried.push(form), form === 'short'));
  assert.deepEqual(tried, ['full', 'short']);
});

test('the short form is a shorter start of the whole words, not a fragment of them', () => {
  assert.equal(PILL_FULL, 'sees all principals');
  assert.ok(PILL_FULL.startsWith(`${PILL_SHORT} `));
});
