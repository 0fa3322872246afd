// The gateway's "done when" chain, as a user with Claude Desktop lives it: a
// claude_desktop_config.json with a server-filesystem entry → `taskdeck servers import
// claude-desktop --file F --write` against the running Taskdeck → the rewritten F holds one entry,
// `taskdeck`, running `npx -y mcp-remote http://127.0.0.1:PORT/mcp --header Authorization:Bearer …`.
// Then this script does what Claude Desktop does with that entry: it starts the entry's stdio
// command and talks MCP to it over stdio (the TS SDK 1.x Client with StdioClientTransport, no
// task support, like Claude Desktop). `mcp-remote` is pinned in package.json and run from
// node_modules with the entry's own arguments instead of `npx -y` (nothing is downloaded at test
// time). The agent's write waits for the human, who approves it through /v1; the outcome reaches
// the agent through task_status, and the file exists.
//
// Extra environment (run.sh): TD_BIN (the taskdeck binary), TD_DATA_DIR / TD_CONFIG_DIR (the
// running Taskdeck's), TD_FS_SERVER (server-filesystem's dist/index.js), TD_WORK (a temp dir).
// TD_AGENT_NAME is "claude-desktop", the principal the import creates a token for; TD_AGENT_TOKEN
// is not used (the token is the one the import wrote).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { askedMessage, env, human, Reporter, show, sleep, textOf, unique } from './lib/common.mjs';

const r = new Reporter('claude-desktop');
const bin = process.env.TD_BIN;
const work = path.join(process.env.TD_WORK, 'claude-desktop');
const files = path.join(work, 'files');
const configFile = path.join(work, 'claude_desktop_config.json');
const tdArgs = ['--data-dir', process.env.TD_DATA_DIR, '--config-dir', process.env.TD_CONFIG_DIR];
const port = new URL(env.base).port;
const mcpRemoteBin = path.join(path.dirname(createRequire(import.meta.url).resolve('mcp-remote/package.json')), 'dist/proxy.js');

fs.mkdirSync(files, { recursive: true });
// The user's file before the import: one stdio server and a setting of Claude Desktop's own.
fs.writeFileSync(configFile, JSON.stringify({
  globalShortcut: 'Ctrl+Space',
  mcpServers: { filesystem: { command: 'node', args: [process.env.TD_FS_SERVER, files] } },
}, null, 2));

let entry;
await r.scenario('taskdeck servers import claude-desktop --file F --write', async () => {
  let out, err = '';
  try {
    out = execFileSync(bin, ['servers', 'import', 'claude-desktop', '--file', configFile, '--write', ...tdArgs], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (e) {
    out = e;
    err = String(e.stderr ?? '');
  }
  r.check('import: exits 0', typeof out === 'string', { error: show(out), stderr: err });
  const rewritten = JSON.parse(fs.readFileSync(configFile, 'utf8'));
  const names = Object.keys(rewritten.mcpServers ?? {});
  entry = rewritten.mcpServers?.taskdeck;
  r.check('import: the rewritten file has exactly one MCP server, "taskdeck"', names.length === 1 && names[0] === 'taskdeck', names);
  r.check("import: Claude Desktop's own settings are kept", rewritten.globalShortcut === 'Ctrl+Space', rewritten);
  const [y, remote, url, header, auth] = entry?.args ?? [];
  r.check(`import: the entry runs npx -y mcp-remote http://127.0.0.1:${port}/mcp --header Authorization:Bearer td_…`, entry?.command === 'npx' && y === '-y' && remote === 'mcp-remote' && url === `http://127.0.0.1:${port}/mcp` && header === '--header' && /^Authorization:Bearer td_[A-Za-z0-9_-]+$/.test(auth ?? '') && entry.args.length === 5, { command: entry?.command, args: entry?.args?.map((a) => a.replace(/td_[A-Za-z0-9_-]+/, 'td_…')) });
  const backups = fs.readdirSync(work).filter((f) => f.startsWith('claude_desktop_config.json.taskdeck-backup-'));
  r.check('import: the original file is kept as a backup next to it', backups.length === 1 && JSON.parse(fs.readFileSync(path.join(work, backups[0]), 'utf8')).mcpServers?.filesystem, backups);
  const status = await waitForServer('filesystem');
  r.check('import: the running Taskdeck connects the imported server "filesystem"', status?.state === 'connected' && status.toolCount > 0, status);
});
if (!entry?.args) r.finish();

// ---- Claude Desktop: the entry's stdio command, with mcp-remote from node_modules --------------
const stderrLines = [];
const transport = new StdioClientTransport({
  command: process.execPath,
  args: [mcpRemoteBin, ...entry.args.slice(2)],
  env: { ...process.env, MCP_REMOTE_CONFIG_DIR: path.join(work, 'mcp-remote') },
  stderr: 'pipe',
});
transport.stderr?.on('data', (d) => stderrLines.push(...String(d).split('\n').filter(Boolean)));
const client = new Client({ name: 'claude-ai', version: '0.1.0' }, { capabilities: {} });
const transportErrors = [];
client.onerror = (e) => transportErrors.push(show(e));
try {
  await client.connect(transport);
  r.check('mcp-remote: the stdio entry connects to Taskdeck (initialize over stdio, bridged to Streamable HTTP)', client.getServerVersion()?.name === 'taskdeck', client.getServerVersion());
} catch (e) {
  r.check('mcp-remote: the stdio entry connects to Taskdeck', false, { error: show(e), stderr: stderrLines.slice(-15) });
  r.finish();
}

await r.scenario('the agent reaches the imported server through Taskdeck', async () => {
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name);
  r.check('tools/list: the imported server\'s tools appear as filesystem__TOOL', names.includes('filesystem__read_text_file') && names.includes('filesystem__write_file'), names);
  const file = path.join(files, `${unique('cd-read')}.txt`);
  const text = unique('read by Claude Desktop');
  fs.writeFileSync(file, text);
  const res = await client.callTool({ name: 'filesystem__read_text_file', arguments: { path: file } }, CallToolResultSchema, { timeout: 10000 });
  r.check('read: filesystem__read_text_file answers with the file text at once', !res.isError && textOf(res).includes(text), res);
  const task = await human.findTask('filesystem__read_text_file', (t) => t.arguments?.path === file).catch((e) => e);
  r.check('read: Taskdeck shows the call as a completed task of principal claude-desktop', task?.status === 'completed' && task?.principal === env.agentName, task);
});

await r.scenario('a write waits for the human, who approves it; the agent gets the outcome', async () => {
  const file = path.join(files, `${unique('cd-write')}.txt`);
  const content = unique('written by Claude Desktop');
  const started = Date.now();
  // Claude Desktop has no tasks: the call is answered with the text handle once it waits.
  const res = await client.callTool({ name: 'filesystem__write_file', arguments: { path: file, content } }, CallToolResultSchema, { timeout: 15000 }).catch((e) => e);
  const taskId = res?.structuredContent?.task?.taskId;
  r.check('write: the call is answered at once with the task handle (text names task_status), accepted by the SDK', typeof taskId === 'string' && !res.isError && textOf(res).includes('task_status') && Date.now() - started < 5000, res);
  if (!taskId) return;
  const asked = await human.waitForRequest({ taskId, key: 'approve' });
  const message = askedMessage(asked);
  r.check("write: the human's inbox shows it with the principal, server, tool and exact arguments", message.includes('claude-desktop') && message.includes('filesystem') && message.includes('write_file') && message.includes(file) && message.includes(content), message);
  r.check('write: the file does not exist before the approval', !fs.existsSync(file), file);
  const approving = sleep(500).then(() => human.answer(taskId, 'approve', { action: 'accept', content: {} }));
  const seen = [];
  let status;
  for (let i = 0; i < 100; i++) {
    const s = await client.callTool({ name: 'task_status', arguments: { taskId } }, CallToolResultSchema, { timeout: 10000 });
    status = s.structuredContent?.task;
    seen.push(status?.status);
    if (['completed', 'failed', 'cancelled'].includes(status?.status)) break;
    await sleep(150);
  }
  await approving;
  r.check('write: task_status reads working while the human decides', seen.length > 1 && seen.slice(0, -1).every((x) => x === 'working'), seen);
  r.check("write: task_status then returns the upstream's result (completed, not isError)", status?.status === 'completed' && status.result?.isError !== true && /success/i.test(textOf(status.result)), status);
  r.check('write: the file exists with the content', fs.existsSync(file) && fs.readFileSync(file, 'utf8') === content, file);
});

r.check('no transport errors (client.onerror)', transportErrors.length === 0, { errors: transportErrors, stderr: stderrLines.slice(-15) });
const child = transport.pid;
await client.close().catch(() => {});
let gone = false;
for (let i = 0; i < 50 && !gone; i++) {
  try {
    process.kill(child, 0);
    await sleep(100);
  } catch {
    gone = true;
  }
}
r.check('closing stdin ends the mcp-remote process (as when Claude Desktop quits)', gone, child);
await human.cancelLeftovers();
r.finish();

/** The imported server's status from GET /v1/servers once it is connected (or after 15 s). */
async function waitForServer(name) {
  let last;
  for (let i = 0; i < 150; i++) {
    const res = await fetch(`${env.base}/v1/servers`, { headers: { authorization: `Bearer ${env.adminToken}` } });
    last = (await res.json()).servers?.find((s) => s.name === name);
    if (last?.state === 'connected') return last;
    await sleep(100);
  }
  return last;
}
