// The structural JSON diff the timeline shows for an approval with edited arguments.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { jsonDiff, jsonEqual, diffLine } from '../js/json-diff.js';

test('equal values have no differences, whatever the key order', () => {
  assert.deepEqual(jsonDiff({ a: 1, b: [1, { c: null }] }, { b: [1, { c: null }], a: 1 }), []);
  assert.ok(jsonEqual(null, null));
  assert.ok(!jsonEqual(null, {}));
  assert.ok(!jsonEqual([1], { 0: 1 }));
  assert.ok(!jsonEqual(1, '1'));
});

test('added, removed and changed keys, with old and new values, to any depth', () => {
  const before = { command: 'rm -rf build', cwd: '/tmp', env: { A: '1', B: '2' } };
  const after = { command: 'rm -rf build/tmp', env: { A: '1', C: '3' }, timeoutMs: 5000 };
  assert.deepEqual(jsonDiff(before, after), [
    { path: 'command', kind: 'changed', from: 'rm -rf build', to: 'rm -rf build/tmp' },
    { path: 'cwd', kind: 'removed', from: '/tmp' },
    { path: 'env.B', kind: 'removed', from: '2' },
    { path: 'env.C', kind: 'added', to: '3' },
    { path: 'timeoutMs', kind: 'added', to: 5000 },
  ]);
});

test('arrays compare index by index; a type change is one change', () => {
  assert.deepEqual(jsonDiff({ args: ['a', 'b'] }, { args: ['a', 'c', 'd'] }), [
    { path: 'args[1]', kind: 'changed', from: 'b', to: 'c' },
    { path: 'args[2]', kind: 'added', to: 'd' },
  ]);
  assert.deepEqual(jsonDiff({ args: ['a', 'b'] }, { args: ['a'] }), [{ path: 'args[1]', kind: 'removed', from: 'b' }]);
  assert.deepEqual(jsonDiff({ x: { y: 1 } }, { x: [1] }), [{ path: 'x', kind: 'changed', from: { y: 1 }, to: [1] }]);
  assert.deepEqual(jsonDiff(1, 2), [{ path: '(value)', kind: 'changed', from: 1, to: 2 }]);
});

test('keys that are not identifiers are quoted in the path', () => {
  assert.deepEqual(jsonDiff({ 'a b': 1 }, { 'a b': 2 }), [{ path: '"a b"', kind: 'changed', from: 1, to: 2 }]);
  assert.deepEqual(jsonDiff({ o: { 'x.y': 1 } }, { o: {} }), [{ path: 'o["x.y"]', kind: 'removed', from: 1 }]);
});

test('each entry reads as one line', () => {
  assert.equal(diffLine({ path: 'command', kind: 'changed', from: 'rm -rf /', to: 'ls' }), '~ command: "rm -rf /" → "ls"');
  assert.equal(diffLine({ path: 'env.DEBUG', kind: 'added', to: '1' }), '+ env.DEBUG: "1"');
  // An edit that hides its order cannot: the override is written out.
  assert.equal(diffLine({ path: 'command', kind: 'changed', from: 'echo a', to: 'echo a\u202e b' }), '~ command: "echo a" → "echo a\\u202e b"');
  assert.equal(diffLine({ path: 'cwd', kind: 'removed', from: null }), '- cwd: null');
  assert.equal(diffLine({ path: 'x', kind: 'added', to: 'y'.repeat(200) }).length, '+ x: '.length + 120);
});

test('a change near the end of two long values shows where they differ', () => {
  const head = `HEAD-${'a'.repeat(40000)}`;
  const line = diffLine({ path: 'content', kind: 'changed', from: `${head}old tail`, to: `${head}new tail` });
  const [from, to] = line.slice('~ content: '.length).split(' → ');
  assert.match(from, /^…a+old tail"$/);
  assert.match(to, /^…a+new tail"$/);
  assert.ok(from.length <= 120 && to.length <= 120, line);
  // A change in the middle: both sides cut after it too.
  const mid = diffLine({ path: 'c', kind: 'changed', from: `${'b'.repeat(500)}X${'c'.repeat(500)}`, to: `${'b'.repeat(500)}Y${'c'.repeat(500)}` });
  assert.match(mid, /^~ c: …b{30}Xc+… → …b{30}Yc+…$/);
  // Short values as they are.
  assert.equal(diffLine({ path: 'n', kind: 'changed', from: 1, to: 2 }), '~ n: 1 → 2');
});
