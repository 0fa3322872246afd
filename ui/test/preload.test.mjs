// index.html preloads every module app.js needs (<link rel="modulepreload">), so the browser
// fetches them all at once instead of discovering them one import level at a time. This test
// keeps that list equal to the real import graph.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

const ui = join(dirname(fileURLToPath(import.meta.url)), '..');

function importsOf(file) {
  const src = readFileSync(join(ui, 'js', file), 'utf8');
  return [...src.matchAll(/^\s*import\s[^;]*?from\s+'\.\/([\w-]+\.js)'/gms)].map((m) => m[1]);
}

test('index.html preloads exactly the modules app.js imports, directly or not', () => {
  const needed = new Set();
  const queue = ['app.js'];
  while (queue.length) {
    for (const dep of importsOf(queue.pop())) {
      if (!needed.has(dep)) {
        needed.add(dep);
        queue.push(dep);
      }
    }
  }
  const html = readFileSync(join(ui, 'index.html'), 'utf8');
  const preloaded = new Set([...html.matchAll(/<link rel="modulepreload" href="js\/([\w-]+\.js)">/g)].map((m) => m[1]));
  assert.ok(needed.size > 10, `found only ${needed.size} imports: is the import pattern still right?`);
  assert.deepEqual([...preloaded].sort(), [...needed].sort());
});
