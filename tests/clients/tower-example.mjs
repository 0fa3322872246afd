// TypeScript SDK 1.x (@modelcontextprotocol/sdk, pinned in package.json) over stdio against the
// tower-mcp example server whose tasks Taskdeck's embedded store keeps
// (src-tauri/crates/tower/examples/durable_tasks.rs), through a restart of that server:
//   1. StdioClientTransport starts the example on a fresh temp dir; a 2025-11-25 session.
//   2. client.experimental.tasks.callToolStream(build_report, {task: {ttl}}) sends a
//      task-augmented tools/call: a slow report (1 h, left running) and a quick one (0 s, run to
//      its tasks/result).
//   3. client.close(): the SDK ends the server process.
//   4. A new Client + StdioClientTransport starts the example again on the same dir; the SDK's
//      task API (getTask = tasks/get) finds both tasks: the slow one still working, the quick one
//      completed; an unknown id is an error.
// The result: tower-mcp 0.25.0 has no tasks/result (SEP-2663 removed it; `tasks/get` of a
// completed task carries the CallToolResult inline in `result`), so the SDK's getTaskResult, and
// the tasks/result that ends callToolStream, get -32601 (printed as a note, not a check), and its
// getTask drops the inline `result` (GetTaskResultSchema strips unknown keys). The result is read
// with the SDK's client.request('tasks/get') under GetTaskResultSchema extended by
// `result: CallToolResultSchema`, i.e. validated by the SDK's own schemas.
// TD_EXAMPLE_BIN (set by run.sh) is the example binary: target/debug/examples/durable_tasks.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CallToolResultSchema, GetTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { Reporter, show, sleep } from './lib/common.mjs';

const r = new Reporter('tower-example');
const bin = process.env.TD_EXAMPLE_BIN;
if (!bin || !fs.existsSync(bin)) {
  r.check(`the example binary exists (TD_EXAMPLE_BIN=${bin ?? ''}; build it with cargo build -p taskdeck-tower --example durable_tasks)`, false, bin ?? null);
  r.finish();
}
const dir = fs.mkdtempSync(path.join(process.env.TD_WORK ?? os.tmpdir(), 'tower-example-'));
const KEEP = process.env.KEEP === '1';
const stderrOf = []; // the example's stderr, per start, for FAILED lines

async function start(name) {
  const transport = new StdioClientTransport({ command: bin, args: [dir], stderr: 'pipe' });
  const errs = [];
  stderrOf.push(errs);
  transport.stderr?.on('data', (d) => errs.push(String(d)));
  const client = new Client({ name, version: '1.0.0' }, { capabilities: {} });
  client.onerror = (e) => errs.push(`client error: ${show(e)}`);
  await client.connect(transport);
  return { client, transport, errs };
}

const alive = (pid) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
const taskOf = (m) => m?.task;
const DetailedTaskSchema = GetTaskResultSchema.extend({ result: CallToolResultSchema.optional() });
/** tasks/get through the SDK's client.request, keeping tower-mcp's inline `result`. */
const getDetailed = (client, taskId) => client.request({ method: 'tasks/get', params: { taskId } }, DetailedTaskSchema);
const textOf = (result) => result?.content?.[0]?.text;

let slowId, quickId, quickText;
try {
  await r.scenario('before the restart', async () => {
    const { client, transport } = await start('tower-example-before');
    const pid = transport.pid;
    r.check('before: the SDK starts the example over stdio and initializes (the SDK asks for 2025-11-25)', typeof pid === 'number' && alive(pid) && client.getServerVersion()?.name === 'durable-tasks-example', { pid, server: client.getServerVersion() });
    const caps = client.getServerCapabilities();
    r.check('before: initialize declares capabilities.tasks.requests.tools.call', caps?.tasks?.requests?.tools?.call !== undefined, caps);
    const { tools } = await client.listTools();
    const tool = tools.find((t) => t.name === 'build_report');
    r.check('before: tools/list has build_report with execution.taskSupport optional', tool?.execution?.taskSupport === 'optional', tools);

    // The slow report: the stream is left once the task exists (it would poll for an hour).
    const slowFirst = [];
    for await (const m of client.experimental.tasks.callToolStream({ name: 'build_report', arguments: { seconds: 3600 } }, CallToolResultSchema, { task: { ttl: 600000 } })) {
      slowFirst.push(m);
      if (m.type === 'taskCreated' || slowFirst.length >= 3) break;
    }
    slowId = taskOf(slowFirst[0])?.taskId;
    r.check('before: the slow build_report as a task answers CreateTaskResult (taskCreated, status working, ttl 600000)', slowFirst[0]?.type === 'taskCreated' && typeof slowId === 'string' && slowId.length > 0 && taskOf(slowFirst[0]).status === 'working' && taskOf(slowFirst[0]).ttl === 600000, slowFirst);

    // The quick report: the SDK polls tasks/get until it is terminal, then asks tasks/result.
    const quick = [];
    for await (const m of client.experimental.tasks.callToolStream({ name: 'build_report', arguments: { seconds: 0 } }, CallToolResultSchema, { task: { ttl: 600000 }, timeout: 10000 })) quick.push(m);
    quickId = taskOf(quick[0])?.taskId;
    const statuses = quick.filter((m) => m.type === 'taskStatus').map((m) => m.task.status);
    const fin = quick[quick.length - 1];
    r.check('before: the quick build_report as a task is created (taskCreated) with another taskId', quick[0]?.type === 'taskCreated' && typeof quickId === 'string' && quickId !== slowId, quick);
    r.check("before: callToolStream's tasks/get polling reads the quick task completed", statuses[statuses.length - 1] === 'completed', statuses);
    r.note(`before: callToolStream ends with ${fin?.type === 'result' ? 'the result' : show(fin?.error ?? fin)} (tower-mcp 0.25.0 has no tasks/result)`);
    const got = await getDetailed(client, quickId).catch((e) => e);
    quickText = textOf(got?.result);
    r.check('before: tasks/get of the quick task carries its CallToolResult ("report built in 0 s")', got?.status === 'completed' && quickText === 'report built in 0 s' && got.result.isError !== true, got);
    const slowNow = await client.experimental.tasks.getTask(slowId).catch((e) => e);
    r.check('before: tasks/get reads the slow task working', slowNow?.taskId === slowId && slowNow?.status === 'working', slowNow);

    await client.close();
    let gone = false;
    for (let i = 0; i < 50 && !(gone = !alive(pid)); i++) await sleep(100);
    r.check('before: client.close() ends the example server process', gone, { pid });
  });

  await r.scenario('after the restart', async () => {
    if (!slowId || !quickId) {
      r.check('after: the tasks created before the restart are known', false, { slowId, quickId });
      return;
    }
    const { client, transport } = await start('tower-example-after');
    r.check('after: a new client starts the example again on the same dir (a new process)', typeof transport.pid === 'number' && alive(transport.pid), { pid: transport.pid });
    const slow = await client.experimental.tasks.getTask(slowId).catch((e) => e);
    r.check('after: tasks/get (getTask) finds the slow task created before the restart, still working', slow?.taskId === slowId && slow?.status === 'working', slow);
    r.check('after: the slow task keeps its ttl (600000)', slow?.ttl === 600000, slow);
    const quick = await client.experimental.tasks.getTask(quickId).catch((e) => e);
    r.check('after: tasks/get finds the quick task finished before the restart, completed', quick?.taskId === quickId && quick?.status === 'completed', quick);
    const detailed = await getDetailed(client, quickId).catch((e) => e);
    r.check('after: tasks/get returns the result it had before the restart ("report built in 0 s")', detailed?.status === 'completed' && textOf(detailed?.result) === 'report built in 0 s' && textOf(detailed.result) === quickText && detailed.result.isError !== true, detailed);
    const viaResult = await client.experimental.tasks.getTaskResult(quickId, CallToolResultSchema).catch((e) => e);
    r.note(`after: getTaskResult (tasks/result) answers ${textOf(viaResult) ?? show(viaResult)}`);
    const unknown = await client.experimental.tasks.getTask('0123456789abcdef0123456789abcdef').then(
      (t) => ({ unexpected: t }),
      (e) => e,
    );
    r.check('after: tasks/get of an unknown id is an error (the store does not answer for any id)', unknown instanceof Error, unknown);
    await client.close();
  });
} finally {
  if (r.failed > 0) stderrOf.forEach((errs, i) => errs.length && r.note(`example stderr (start ${i + 1}): ${show(errs.join('').slice(-1500))}`));
  if (!KEEP) fs.rmSync(dir, { recursive: true, force: true });
}
r.finish();
