// index.html preloads every module the first screen needs (<link rel="modulepreload">), so the
// browser fetches them all at once instead of discovering them one import level at a time.
// Modules the page loads later (`import('./x.js')` in lazy.js: the detail pane, the dialogs)
// are not preloaded: they would compete with the list's. This test keeps both in step with the
// code.
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

/** The modules app.js (the entry point) imports, directly or not. */
function staticImports() {
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
  return needed;
}

test('index.html loads app.js and preloads exactly the modules it imports, directly or not', () => {
  const needed = staticImports();
  const html = readFileSync(join(ui, 'index.html'), 'utf8');
  const preloaded = new Set([...html.matchAll(/<link rel="modulepreload" href="js\/([\w-]+\.js)">/g)].map((m) => m[1]));
  assert.ok(needed.size > 20, `found only ${needed.size} imports: is the import pattern still right?`);
  assert.ok(!needed.has('app.js'), 'no module imports the entry point (its evaluation starts the page)');
  assert.match(html, /<script type="module" src="js\/app\.js"><\/script>/);
  // early.js has a script of its own (it runs before app.js's graph has loaded): not preloaded.
  assert.ok(needed.has('early.js'), 'app.js takes the first answers from early.js');
  needed.delete('early.js');
  assert.deepEqual([...preloaded].sort(), [...needed].sort());
});

test('early.js has its own script, first in <head>, before the stylesheet and app.js, its imports preloaded first', () => {
  const html = readFileSync(join(ui, 'index.html'), 'utf8');
  // Not async: Chromium runs async module scripts late (after the other modules' fetches);
  // a deferred one runs as soon as the HTML is parsed, before app.js (document order).
  const script = html.indexOf('<script type="module" src="js/early.js"></script>');
  assert.ok(script > 0, 'early.js is loaded by a module script of its own');
  assert.ok(script < html.indexOf('<link rel="stylesheet"'), 'before the stylesheet');
  assert.ok(script < html.indexOf('<script type="module" src="js/app.js">'), 'before app.js');
  for (const dep of importsOf('early.js')) {
    const link = html.indexOf(`<link rel="modulepreload" href="js/${dep}">`);
    assert.ok(link > script && link < html.indexOf('<link rel="stylesheet"'), `${dep} is preloaded right after early.js`);
  }
});

test('what the page loads later exists, and is not preloaded', () => {
  const later = [];
  for (const file of ['app.js', ...staticImports()]) {
    // Code lines only: doc comments name modules in JSDoc types (`import('./x.js').Type`).
    const src = readFileSync(join(ui, 'js', file), 'utf8')
      .split('\n')
      .filter((line) => !/^\s*(\*|\/\/|\/\*)/.test(line))
      .join('\n');
    later.push(...[...src.matchAll(/import\('\.\/([\w-]+\.js)'\)/g)].map((m) => m[1]));
  }
  assert.deepEqual(later.sort(), ['connect-dialog.js', 'detail-view.js', 'notify-dialog.js', 'policy-dialog.js', 'servers-dialog.js', 'task-actions.js']);
  const html = readFileSync(join(ui, 'index.html'), 'utf8');
  for (const file of later) {
    assert.ok(readFileSync(join(ui, 'js', file), 'utf8').length > 0, file);
    assert.ok(!html.includes(`js/${file}`), `${file} is preloaded`);
  }
});
