import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  AGENT_NAME_MAX,
  normalizeAgentName,
  validateAgentName,
  createAgentError,
  orderConfigs,
  configNote,
  tabKeyTarget,
  liveAgentNames,
} from '../js/agents.js';

test('agent names follow the server rule: 1-64 ASCII letters, digits, - _ .', () => {
  for (const ok of ['a', 'test-agent', 'ci_bot.2', 'A.B-C_d', 'x'.repeat(AGENT_NAME_MAX), '...', '007']) {
    assert.equal(validateAgentName(ok), null, ok);
  }
  assert.equal(validateAgentName(''), 'Enter a name for the agent.');
  assert.match(validateAgentName('x'.repeat(65)), /at most 64 characters \(this one has 65\)/);
  assert.match(validateAgentName('bad name'), /spaces are not allowed/);
  assert.match(validateAgentName('who?'), /“\?” is not allowed/);
  assert.match(validateAgentName('a b!'), /spaces, “!” are not allowed/);
  assert.match(validateAgentName('café'), /“é” is not allowed/, 'letters are ASCII only, as on the server');
  assert.match(validateAgentName('a/b'), /“\/”/);
  assert.match(validateAgentName('anonymous'), /reserved/);
  assert.match(validateAgentName('Anonymous'), /reserved/, 'in any case, as the server says');
  assert.match(validateAgentName('Admin'), /reserved/);
  // Many distinct bad characters: the first five are named.
  assert.match(validateAgentName('!@#$%^&'), /“!”, “@”, “#”, “\$”, “%”… are not allowed/);
});

test('names are trimmed before they are checked and sent', () => {
  assert.equal(normalizeAgentName('  build-bot \n'), 'build-bot');
  assert.equal(normalizeAgentName(undefined), '');
  assert.equal(validateAgentName(normalizeAgentName('  ')), 'Enter a name for the agent.');
});

test('create errors: 409 names the taken token, 403/422/network say what happened', () => {
  assert.equal(createAgentError({ status: 409, message: 'x' }, 'test-agent'), 'A token named “test-agent” already exists. Choose another name, or revoke that token first.');
  assert.equal(
    createAgentError({ status: 409, message: '"AGENT1" differs from the principal "agent1" only in case; use that one, or choose another name' }, 'AGENT1'),
    '"AGENT1" differs from the principal "agent1" only in case; use that one, or choose another name',
  );
  assert.match(createAgentError({ status: 409, message: 'the name "Admin" is reserved: it is the admin\'s' }, 'Admin'), /^The name "Admin" is reserved/);
  assert.equal(createAgentError({ status: 403 }, 'a'), 'Only the admin token can connect agents.');
  assert.equal(createAgentError({ status: 422, message: 'token names are 1-64 characters' }, 'a'), 'token names are 1-64 characters');
  assert.equal(createAgentError({ status: 422 }, 'a'), 'The server did not accept that name.');
  assert.equal(createAgentError({ status: 0, message: 'Taskdeck did not answer (boom).' }, 'a'), 'Taskdeck did not answer (boom).');
  assert.equal(createAgentError({ status: 500, message: 'disk full' }, 'a'), 'Could not create the token: disk full');
  assert.equal(createAgentError(undefined, 'a'), 'Could not create the token: unknown error');
});

test('configurations come in the dialog order, unknown clients last, malformed ones dropped', () => {
  const configs = [
    { client: 'cursor', title: 'Cursor', target: '~/.cursor/mcp.json', kind: 'json', text: '{}' },
    { client: 'zed', title: 'Zed', target: 'settings.json', kind: 'json', text: '{"z":1}' },
    { client: 'claude-code', title: 'Claude Code', target: 'Run in a terminal', kind: 'command', text: 'claude mcp add' },
    { client: 'vscode', target: '.vscode/mcp.json', kind: 'json', text: '{}' },
    { client: 'claude-desktop', title: 'Claude Desktop', target: 'claude_desktop_config.json', kind: 'weird', text: '{}' },
    { client: 'codex', title: 'Codex', target: '~/.codex/config.toml', kind: 'toml', text: '[mcp_servers.taskdeck]' },
    { client: 'broken', title: 'No text' },
    null,
    'nope',
  ];
  const out = orderConfigs(configs);
  assert.deepEqual(out.map((c) => c.client), ['claude-code', 'claude-desktop', 'vscode', 'cursor', 'codex', 'zed']);
  assert.equal(out[4].kind, 'toml');
  assert.equal(out[2].title, 'VS Code', 'a missing title falls back to the known one');
  assert.equal(out[1].kind, 'json', 'an unknown kind is shown as a file');
  assert.equal(out[0].kind, 'command');
  assert.equal(out[5].title, 'Zed');
  assert.deepEqual(orderConfigs(undefined), []);
  assert.deepEqual(orderConfigs({}), []);
});

test('each known client has a hint; unknown clients none', () => {
  assert.match(configNote({ client: 'claude-desktop' }), /mcpServers.*restart Claude Desktop/);
  assert.match(configNote({ client: 'vscode' }), /"servers"/);
  assert.match(configNote({ client: 'cursor' }), /mcpServers/);
  assert.match(configNote({ client: 'claude-code' }), /claude mcp list/);
  assert.match(configNote({ client: 'codex' }), /codex mcp list/);
  assert.equal(configNote({ client: 'zed' }), '');
});

test('tab keys: arrows wrap, Home/End jump, other keys do nothing', () => {
  assert.equal(tabKeyTarget('ArrowRight', 0, 4), 1);
  assert.equal(tabKeyTarget('ArrowRight', 3, 4), 0);
  assert.equal(tabKeyTarget('ArrowLeft', 0, 4), 3);
  assert.equal(tabKeyTarget('ArrowDown', 1, 4), 2);
  assert.equal(tabKeyTarget('ArrowUp', 1, 4), 0);
  assert.equal(tabKeyTarget('Home', 2, 4), 0);
  assert.equal(tabKeyTarget('End', 0, 4), 3);
  assert.equal(tabKeyTarget('Enter', 0, 4), null);
  assert.equal(tabKeyTarget('ArrowRight', 0, 0), null);
});

test('names in use: live tokens only', () => {
  assert.deepEqual(
    liveAgentNames({ agents: [{ name: 'admin', revoked: false }, { name: 'old', revoked: true }, { name: 'ci' }, { revoked: false }, null] }),
    ['admin', 'ci'],
  );
  assert.deepEqual(liveAgentNames(null), []);
  assert.deepEqual(liveAgentNames({ agents: 'x' }), []);
});
