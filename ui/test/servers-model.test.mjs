import { test } from 'node:test';
import assert from 'node:assert/strict';
import { stateChip, validateServerName, splitCommandLine, serverBody, toolCountText, unservedLines } from '../js/servers-model.js';

test('each state has its chip; an unknown one is shown muted', () => {
  assert.deepEqual(stateChip('connected'), { label: 'connected', tone: 'good' });
  assert.deepEqual(stateChip('failed'), { label: 'failed', tone: 'bad' });
  assert.equal(stateChip('starting').tone, 'working');
  assert.equal(stateChip('disabled').tone, 'muted');
  assert.deepEqual(stateChip('exploded'), { label: 'exploded', tone: 'muted' });
});

test('names follow the server’s rule', () => {
  for (const good of ['fs', 'my-server_2', 'x'.repeat(64)]) assert.equal(validateServerName(good), null, good);
  for (const bad of ['', 'Fs', 'a b', 'a__b', 'co_', '-fs', '_fs', 'taskdeck', 'x'.repeat(65)]) assert.ok(validateServerName(bad), bad);
});

test('command lines split like a shell', () => {
  assert.deepEqual(splitCommandLine('npx -y @scope/pkg'), ['npx', '-y', '@scope/pkg']);
  assert.deepEqual(splitCommandLine(`cmd "my dir" 'it''s' a\\ b ""`), ['cmd', 'my dir', 'its', 'a b', '']);
  assert.deepEqual(splitCommandLine('  '), []);
  assert.throws(() => splitCommandLine('cmd "open'), /double quote/);
});

test('a stdio form makes command, args, env and cwd', () => {
  const r = serverBody({ kind: 'stdio', name: ' fs ', commandLine: 'npx -y server "/my dir"', cwd: '/tmp', rows: [{ key: 'KEY', value: 's3cret' }, { key: '', value: 'ignored' }] });
  assert.deepEqual(r.body, { name: 'fs', command: 'npx', args: ['-y', 'server', '/my dir'], env: { KEY: 's3cret' }, cwd: '/tmp' });
  assert.deepEqual(serverBody({ kind: 'stdio', name: 'fs', commandLine: 'x' }).body, { name: 'fs', command: 'x', args: [] });
  assert.equal(serverBody({ kind: 'stdio', name: 'fs', commandLine: ' ' }).error.field, 'command');
  assert.equal(serverBody({ kind: 'stdio', name: 'Bad', commandLine: 'x' }).error.field, 'name');
  assert.equal(serverBody({ kind: 'stdio', name: 'fs', commandLine: 'x', rows: [{ key: 'A', value: '1' }, { key: 'A', value: '2' }] }).error.field, 'rows');
});

test('an http form makes url and headers', () => {
  const r = serverBody({ kind: 'http', name: 'docs', url: 'https://x.example/mcp', rows: [{ key: 'Authorization', value: 'Bearer t' }] });
  assert.deepEqual(r.body, { name: 'docs', url: 'https://x.example/mcp', headers: { Authorization: 'Bearer t' } });
  assert.equal(serverBody({ kind: 'http', name: 'docs', url: 'ftp://x' }).error.field, 'url');
});

test('tool counts show only for connected servers', () => {
  assert.equal(toolCountText({ state: 'connected', toolCount: 1 }), '1 tool');
  assert.equal(toolCountText({ state: 'connected', toolCount: 14 }), '14 tools');
  assert.equal(toolCountText({ state: 'failed', toolCount: 0 }), '—');
  // Its tools stay offered while it reconnects: the count says so.
  assert.equal(toolCountText({ state: 'failed', toolCount: 14 }), '14 tools, kept while it is down');
  const odd = { state: 'connected', toolCount: 8, unservedTools: [{ name: 'badref', reason: 'invalid input schema' }, { name: 'bad name', reason: 'its name' }] };
  assert.equal(toolCountText(odd), '8 tools (2 not served)');
  assert.deepEqual(unservedLines(odd), ['badref: invalid input schema', 'bad name: its name']);
  assert.deepEqual(unservedLines({ state: 'connected', toolCount: 1 }), []);
});
