// index.html preloads every module the first screen needs (<link rel="modulepreload">), so the
// browser fetches them all at once instead of discovering them one import level at a time.
// Modules the page loads later are not preloaded: they would compete with the first rows'.
// Those are rest.js and what it imports (app.js imports it with import() after the first rows'
// frame: the stream, the inbox, the approvals, opening a task), and the detail pane and the
// dialogs (`import('./x.js')` in lazy.js). This test keeps all of it in step with the code, and
// fails when a module of the rest is imported statically by the first load again. It also checks
// that index.html lays out the app shell (undrawn) from the start, while those modules load, and
// that what the first screen does not show (the token screen, the dialogs loaded later) is kept
// in templates that only their own modules put in place.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

const ui = join(dirname(fileURLToPath(import.meta.url)), '..');

function importsOf(file) {
  const src = readFileSync(join(ui, 'js', file), 'utf8');
  return [...src.matchAll(/^\s*import\s[^;]*?from\s+'\.\/([\w-]+\.js)'/gms)].map((m) => m[1]);
}

/** The modules `entry` (default app.js, the page's entry point) imports statically, directly or not. */
function staticImports(entry = 'app.js') {
  const needed = new Set();
  const queue = [entry];
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
  assert.ok(needed.size > 15, `found only ${needed.size} imports: is the import pattern still right?`);
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

/** The module names `files` load with import('./x.js') (code lines only: doc comments name
 *  modules in JSDoc types, `import('./x.js').Type`). */
function dynamicImports(files) {
  const found = [];
  for (const file of files) {
    const src = readFileSync(join(ui, 'js', file), 'utf8')
      .split('\n')
      .filter((line) => !/^\s*(\*|\/\/|\/\*)/.test(line))
      .join('\n');
    found.push(...[...src.matchAll(/import\('\.\/([\w-]+\.js)'\)/g)].map((m) => m[1]));
  }
  return found.sort();
}

/**
 * What the first rows wait for: app.js's static imports. A module added here is fetched before
 * the first row can be drawn (about 1.5 ms each at 1,000,000 tasks, BENCHMARKS.md): if it is not
 * needed for the first rows or for a key pressed at once, import it from rest.js instead.
 */
const FIRST_LOAD = [
  'api.js', 'approvals-model.js', 'auth.js', 'conn.js', 'dialogs.js', 'dom.js', 'early.js', 'exact-json.js', 'filters.js', 'format.js', 'keyboard.js',
  'list-view.js', 'list.js', 'me-pill.js', 'notices.js', 'notify-settings.js', 'selection-range.js', 'selection.js', 'state.js',
  'status.js', 'store-banner.js', 'tasks-model.js', 'timing.js', 'token-screen.js',
];

/** What rest.js brings, after the first rows: none of it may come back into the first load. */
const REST = [
  'approval-card.js', 'approvals-view.js', 'browser-notify.js', 'cancel.js', 'clamp.js', 'edited-arguments.js', 'event-stream.js', 'form-schema.js',
  'inbox.js', 'json-diff.js', 'lazy.js', 'live.js', 'offline-banner.js', 'open-task.js', 'sse.js',
];

test('the first load is exactly the modules the first rows and the keys need; rest.js and its modules are not in it', () => {
  const first = staticImports();
  for (const file of ['rest.js', ...REST]) assert.ok(!first.has(file), `${file} is imported statically by the first load (app.js's imports), so the first rows wait for it`);
  assert.deepEqual([...first].sort(), FIRST_LOAD);
  // rest.js brings exactly these (beyond what the first load has already).
  const rest = [...staticImports('rest.js')].filter((f) => !first.has(f)).sort();
  assert.deepEqual(rest, REST);
  // app.js loads rest.js with import(), and only that.
  assert.deepEqual(dynamicImports(['app.js', ...first]), ['rest.js']);
});

test('what the page loads later exists, and is not preloaded', () => {
  const first = staticImports();
  const restGraph = [...staticImports('rest.js')].filter((f) => !first.has(f));
  const later = ['rest.js', ...restGraph, ...dynamicImports(['rest.js', ...restGraph])];
  assert.deepEqual(dynamicImports(['rest.js', ...restGraph]), ['connect-dialog.js', 'detail-view.js', 'notify-dialog.js', 'policy-dialog.js', 'servers-dialog.js', 'task-actions.js']);
  const html = readFileSync(join(ui, 'index.html'), 'utf8');
  for (const file of later) {
    assert.ok(readFileSync(join(ui, 'js', file), 'utf8').length > 0, file);
    assert.ok(!html.includes(`js/${file}`), `${file} is preloaded`);
  }
});

test('the app shell is laid out, undrawn, from the start: its first layout happens while the modules load', () => {
  const html = readFileSync(join(ui, 'index.html'), 'utf8');
  const css = readFileSync(join(ui, 'styles.css'), 'utf8');
  const app = /<div id="app"[^>]*>/.exec(html);
  assert.ok(app, 'index.html has #app');
  // `hidden` is display: none (no layout at all); data-booting is visibility: hidden (laid out).
  assert.ok(!/\bhidden\b/.test(app[0]), `#app starts without [hidden]: ${app[0]}`);
  assert.match(app[0], /\bdata-booting\b/);
  assert.match(css, /\.app\[data-booting\]\s*\{\s*visibility:\s*hidden;\s*\}/);
  // The boot line sits over the app, so hiding it moves nothing the app has laid out.
  assert.match(css, /\.boot\s*\{[^}]*position:\s*fixed/);
  assert.match(readFileSync(join(ui, 'js', 'app.js'), 'utf8'), /delete \$\('app'\)\.dataset\.booting/);
});

/** index.html's elements that keep their content in a `<template>` (dom.js inflate), and the module that puts it in place. */
const TEMPLATED = {
  'token-screen': 'token-screen.js',
  'agent-dialog': 'connect-dialog.js',
  'servers-dialog': 'servers-dialog.js',
  'policy-dialog': 'policy-dialog.js',
  'notify-dialog': 'notify-dialog.js',
};

test('the only form in the first document is the filters: the token screen and the later dialogs are templates their modules inflate', () => {
  const html = readFileSync(join(ui, 'index.html'), 'utf8').replace(/<!--[\s\S]*?-->/g, '');
  // What is inside a <template> is not in the document (nor scanned for forms at DOMContentLoaded).
  const outside = html.replace(/<template>[\s\S]*?<\/template>/g, '');
  const forms = [...outside.matchAll(/<form id="([\w-]+)"/g)].map((m) => m[1]);
  assert.deepEqual(forms, ['filters']);
  assert.ok(!/<input[^>]*type="password"/.test(outside), 'no password field in the first document');
  /** The markup in the template of the element with this id. */
  const templateOf = (id) => new RegExp(`id="${id}"[^>]*>\\s*<template>([\\s\\S]*?)</template>`).exec(html)[1];
  for (const [id, module] of Object.entries(TEMPLATED)) {
    const el = new RegExp(`<(\\w+) id="${id}"[^>]*>\\s*<template>([\\s\\S]*?)</template>\\s*</\\1>`).exec(html);
    assert.ok(el, `#${id} holds one <template> and nothing else`);
    assert.match(el[2], /<form id="[\w-]+"/, `#${id}'s template has its form`);
    const src = readFileSync(join(ui, 'js', module), 'utf8');
    assert.match(src, new RegExp(`inflate\\(\\$\\('${id}'\\)\\)|inflate\\(screen\\)`), `${module} inflates #${id}`);
    // The module that inflates it is not in the first load, or (the token screen) inflates it only when shown.
    if (id !== 'token-screen') assert.ok(!staticImports().has(module), `${module} is in the first load`);
  }
  // Every id a templated element's module looks up is in the document or in that template.
  for (const [id, module] of Object.entries(TEMPLATED)) {
    const tpl = templateOf(id);
    const src = readFileSync(join(ui, 'js', module), 'utf8');
    const used = [...src.matchAll(/\$\('([\w-]+)'\)/g)].map((m) => m[1]);
    assert.ok(used.length > 3, `${module}: found only ${used.length} lookups`);
    for (const name of used) {
      assert.ok(outside.includes(`id="${name}"`) || tpl.includes(`id="${name}"`), `${module} looks up #${name}, in neither the document nor #${id}'s template`);
    }
  }
  // No other module looks up what is inside a template (it would not be there before that module ran).
  for (const file of readdirSync(join(ui, 'js'))) {
    const src = readFileSync(join(ui, 'js', file), 'utf8');
    for (const [, name] of src.matchAll(/(?:\$|getElementById)\('([\w-]+)'\)/g)) {
      if (outside.includes(`id="${name}"`) || !html.includes(`id="${name}"`)) continue;
      const owner = Object.entries(TEMPLATED).find(([id]) => templateOf(id).includes(`id="${name}"`));
      assert.ok(owner && owner[1] === file, `${file} looks up #${name}, which only ${owner ? owner[1] : 'no module'} puts in place`);
    }
  }
});
