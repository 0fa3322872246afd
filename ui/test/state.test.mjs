// The page's state (ui/js/state.js) is one object declared up front: no module adds a field
// later, and every field says what it holds.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { state, NO_DETAIL } from '../js/state.js';

const js = join(dirname(fileURLToPath(import.meta.url)), '..', 'js');

test('the state is sealed: a field not declared cannot be added', () => {
  assert.ok(Object.isSealed(state));
  assert.throws(() => {
    state.somethingNew = 1;
  }, TypeError);
  assert.equal(state.detail, NO_DETAIL, 'no task is open before the detail loads');
});

test('every state.<field> the modules use is declared in state.js', () => {
  const declared = new Set(Object.keys(state));
  const used = new Map();
  for (const file of readdirSync(js).filter((f) => f.endsWith('.js'))) {
    const src = readFileSync(join(js, file), 'utf8');
    for (const m of src.matchAll(/\bstate\.(\w+)/g)) {
      if (m[1] === 'js') continue; // the module's name (imports, comments)
      if (!used.has(m[1])) used.set(m[1], file);
    }
  }
  assert.ok(used.size > 15, `found only ${used.size} fields: is the pattern still right?`);
  for (const [field, file] of used) assert.ok(declared.has(field), `state.${field} (in ${file}) is not declared in state.js`);
  for (const field of declared) assert.ok(used.has(field), `state.${field} is declared but no module uses it`);
});

test('every field of the state has a comment saying what it holds', () => {
  const src = readFileSync(join(js, 'state.js'), 'utf8');
  const body = src.slice(src.indexOf('export const state'));
  for (const field of Object.keys(state)) {
    assert.match(body, new RegExp(`\\*/\\n  ${field}:`), `state.${field} has no /** comment */ right above it`);
  }
});
