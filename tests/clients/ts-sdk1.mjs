// TypeScript SDK 1.x (@modelcontextprotocol/sdk, pinned in package.json): a 2025-11-25 session
// (initialize, Mcp-Session-Id) using the SDK's native task API, client.experimental.tasks:
// callToolStream(params, CallToolResultSchema, {task: {ttl}}) sends tools/call with params.task,
// expects CreateTaskResult {task}, polls tasks/get and fetches the outcome with tasks/result
// (which also carries elicitation/create requests to a client that declared elicitation).
// Through the gateway: upstream "fs" (server-filesystem) as fs__TOOL on /mcp and under its own
// names on /mcp/fs.
import fs from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { askedMessage, env, freshFile, human, NOTE_SCHEMA, Reporter, show, sleep, textOf, unique } from './lib/common.mjs';

const r = new Reporter('ts-sdk1');
const RELATED = 'io.modelcontextprotocol/related-task';
const MISSING_CWD = '/nonexistent/taskdeck-client-test-dir';
const transportErrors = [];
const agentAnswers = new Map(); // elicitation message -> content the agent's handler accepts with

async function connect(name, { elicitation, url = env.mcpUrl }) {
  const client = new Client({ name, version: '1.0.0' }, { capabilities: elicitation ? { elicitation: { form: {} } } : {} });
  const elicitations = [];
  if (elicitation) {
    // The agent's own elicitation handler: accepts what the test registered for that message.
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      elicitations.push(request);
      const content = agentAnswers.get(request.params.message);
      return content ? { action: 'accept', content } : { action: 'decline' };
    });
  }
  client.onerror = (e) => transportErrors.push(`${name}: ${show(e)}`);
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${env.agentToken}` } },
  });
  await client.connect(transport);
  return { client, transport, elicitations };
}

/** client.experimental.tasks.callToolStream with a task; returns every message it yielded. */
async function callAsTask(client, params, onMessage, timeout = 15000) {
  const messages = [];
  const stream = client.experimental.tasks.callToolStream(params, CallToolResultSchema, { task: { ttl: 600000 }, timeout });
  for await (const m of stream) {
    messages.push(m);
    onMessage?.(m, messages);
  }
  return messages;
}

/** The human answers once `ready()` holds (or after `maxWaitMs`), as soon as the request is in their inbox. */
async function humanAnswersLater(taskId, key, response, ready, maxWaitMs = 1500) {
  const until = Date.now() + maxWaitMs;
  while (!ready() && Date.now() < until) await sleep(50);
  await human.waitForRequest({ taskId, key });
  return human.answer(taskId, key, response);
}

const statusesOf = (messages) => messages.filter((m) => m.type === 'taskStatus').map((m) => ({ status: m.task.status, statusMessage: m.task.statusMessage }));
const nonTerminal = (statuses) => statuses.filter((s) => !['completed', 'failed', 'cancelled'].includes(s.status));
const finalOf = (messages) => messages[messages.length - 1];

let plain, elicit;
try {
  plain = await connect('ts-sdk1-no-elicitation', { elicitation: false });
  elicit = await connect('ts-sdk1-elicitation', { elicitation: true });
  r.check('initialize (2025-11-25) succeeds and sets an Mcp-Session-Id', !!plain.transport.sessionId && !!elicit.transport.sessionId, plain.transport.sessionId);
} catch (e) {
  r.check('initialize (2025-11-25) succeeds', false, e);
  r.finish();
}

await r.scenario('capabilities', async () => {
  const caps = plain.client.getServerCapabilities();
  r.check('initialize result declares capabilities.tasks.requests.tools.call (2025-11-25 task-augmented tools/call)', caps?.tasks?.requests?.tools?.call !== undefined, caps);
  r.check('initialize result declares capabilities.tasks.cancel (tasks/cancel)', caps?.tasks?.cancel !== undefined, caps?.tasks);
  const { tools } = await plain.client.listTools();
  const support = Object.fromEntries(tools.filter((t) => ['request_approval', 'run_command'].includes(t.name)).map((t) => [t.name, t.execution?.taskSupport]));
  r.check('tools/list: request_approval and run_command declare execution.taskSupport optional|required', ['optional', 'required'].includes(support.request_approval) && ['optional', 'required'].includes(support.run_command), support);
});

await r.scenario('request_approval answered by the human', async () => {
  const message = unique('ts-sdk1: may I deploy?');
  const note = unique('from-the-human');
  let taskId, answering;
  const messages = await callAsTask(
    plain.client,
    { name: 'request_approval', arguments: { message, requestedSchema: NOTE_SCHEMA } },
    (m, all) => {
      if (m.type === 'taskCreated') {
        taskId = m.task.taskId;
        answering = humanAnswersLater(taskId, 'approval', { action: 'accept', content: { note } }, () => statusesOf(all).length >= 3).catch((e) => e);
      }
    },
  );
  const answer = await answering;
  const statuses = statusesOf(messages);
  r.check('human-answered approval: tools/call with params.task answers CreateTaskResult {task} (callToolStream yields taskCreated)', messages[0]?.type === 'taskCreated', messages[0]);
  r.check('human-answered approval: the human answers it through POST /v1/tasks/{id}/input', answer?.accepted?.includes('approval'), answer);
  r.check('human-answered approval: while the human decides, tasks/get reads working (this client declared no elicitation), never input_required', nonTerminal(statuses).length > 0 && nonTerminal(statuses).every((s) => s.status === 'working'), statuses);
  r.check('human-answered approval: the working statusMessage says it waits for a human', statuses.some((s) => s.status === 'working' && /human/i.test(s.statusMessage ?? '')), statuses);
  const fin = finalOf(messages);
  const sc = fin?.result?.structuredContent;
  r.check("human-answered approval: tasks/result returns the human's answer (structuredContent.action accept, content.note)", fin?.type === 'result' && sc?.action === 'accept' && sc?.content?.note === note, fin);
  r.check('human-answered approval: the tasks/result response carries _meta related-task {taskId}', fin?.type === 'result' && fin.result?._meta?.[RELATED]?.taskId === taskId, fin?.result?._meta);
});

await r.scenario('request_approval answered by the agent (elicitation/create on the tasks/result stream)', async () => {
  const message = unique('ts-sdk1: agent, confirm?');
  const note = unique('from-the-agent');
  agentAnswers.set(message, { note });
  let taskId;
  const messages = await callAsTask(
    elicit.client,
    { name: 'request_approval', arguments: { message, requestedSchema: NOTE_SCHEMA } },
    (m) => {
      if (m.type === 'taskCreated') taskId = m.task.taskId;
    },
    8000,
  );
  const seen = elicit.elicitations.filter((e) => e.params.message === message);
  r.check('agent-answered approval: tools/call with params.task answers CreateTaskResult {task}', messages[0]?.type === 'taskCreated', messages[0]);
  // input_required makes callToolStream call tasks/result, whose SSE stream carries the request; a
  // server may also send it on the GET stream while the task reads working (2025-11-25 allows both).
  r.note(`agent-answered approval: statuses seen ${JSON.stringify(statusesOf(messages).map((s) => s.status))}`);
  r.check('agent-answered approval: the server sends elicitation/create to the client (its handler is called once)', seen.length === 1, elicit.elicitations.map((e) => e.params.message));
  r.check('agent-answered approval: the elicitation/create carries _meta related-task {taskId}', seen[0]?.params?._meta?.[RELATED]?.taskId === taskId && !!taskId, seen[0]?.params?._meta);
  const fin = finalOf(messages);
  const sc = fin?.result?.structuredContent;
  r.check("agent-answered approval: tasks/result returns the agent's answer (action accept, content.note)", fin?.type === 'result' && sc?.action === 'accept' && sc?.content?.note === note, fin);
  if (taskId) {
    const d = await human.detail(taskId);
    const round = d.inputRounds?.find((x) => x.key === 'approval');
    r.check('agent-answered approval: Taskdeck records the agent as the one who answered', round?.answeredBy === env.agentName, round);
  }
});

await r.scenario('plain tools/call (no params.task)', async () => {
  const message = unique('ts-sdk1: plain call?');
  const note = unique('plain-human');
  const started = Date.now();
  const result = await plain.client.callTool({ name: 'request_approval', arguments: { message, requestedSchema: NOTE_SCHEMA } }, CallToolResultSchema, { timeout: 5000 });
  const handle = result.structuredContent?.task;
  r.check('plain call: answers at once (not held) with the task handle in structuredContent.task', typeof handle?.taskId === 'string' && Date.now() - started < 5000 && !result.isError, result);
  if (!handle?.taskId) return;
  const answering = human.waitForRequest({ taskId: handle.taskId, key: 'approval' }).then(() => human.answer(handle.taskId, 'approval', { action: 'accept', content: { note } }));
  const seen = [];
  let status;
  for (let i = 0; i < 100; i++) {
    const s = await plain.client.callTool({ name: 'task_status', arguments: { taskId: handle.taskId } });
    status = s.structuredContent?.task;
    seen.push(status?.status);
    if (['completed', 'failed', 'cancelled'].includes(status?.status)) break;
    await sleep(150);
  }
  await answering;
  r.check('plain call: task_status reads working while the human decides (no elicitation declared), never input_required', seen.filter((s) => s !== 'completed').every((s) => s === 'working'), seen);
  r.check("plain call: task_status finally returns the human's answer (completed, action accept, content.note)", status?.status === 'completed' && status?.result?.structuredContent?.action === 'accept' && status?.result?.structuredContent?.content?.note === note, status);
});

await r.scenario('run_command approved by the human, exits 3', async () => {
  const marker = unique('ts1');
  let taskId, answering;
  const before = elicit.elicitations.length;
  const messages = await callAsTask(
    elicit.client,
    { name: 'run_command', arguments: { argv: ['sh', '-c', `echo hi ${marker}; exit 3`] } },
    (m, all) => {
      if (m.type === 'taskCreated') {
        taskId = m.task.taskId;
        answering = humanAnswersLater(taskId, 'approve-command', { action: 'accept', content: {} }, () => statusesOf(all).length >= 3).catch((e) => e);
      }
    },
  );
  const answer = await answering;
  const statuses = statusesOf(messages);
  r.check('run_command: the human approves it through /v1 (key approve-command)', answer?.accepted?.includes('approve-command'), answer);
  r.check('run_command: the agent (which declared elicitation) reads working while the human decides, never input_required', nonTerminal(statuses).length > 0 && nonTerminal(statuses).every((s) => s.status === 'working'), statuses);
  r.check('run_command: the human-only approval is never sent to the agent (no elicitation/create)', !!taskId && answer?.accepted?.includes('approve-command') && elicit.elicitations.length === before, elicit.elicitations.slice(before).map((e) => e.params));
  r.check('run_command: the task ends completed (a tool error is a completed task), so callToolStream fetches tasks/result', statuses[statuses.length - 1]?.status === 'completed', statuses);
  const fin = finalOf(messages);
  r.check('run_command: tasks/result is the CallToolResult with isError true and structuredContent.exitCode 3', fin?.type === 'result' && fin.result?.isError === true && fin.result?.structuredContent?.exitCode === 3, fin);
});

await r.scenario('cancel through tasks/cancel', async () => {
  const message = unique('ts-sdk1: nobody answers this');
  let taskId, cancelling;
  const messages = await callAsTask(
    plain.client,
    { name: 'request_approval', arguments: { message } },
    (m) => {
      if (m.type === 'taskCreated') taskId = m.task.taskId;
      if (m.type === 'taskStatus' && !cancelling) cancelling = plain.client.experimental.tasks.cancelTask(taskId).catch((e) => e);
    },
  );
  const cancelled = await cancelling;
  r.check('cancel: tasks/cancel answers the task, already cancelled (2025-11-25: MUST be cancelled before responding)', cancelled?.status === 'cancelled' && cancelled?.taskId === taskId, cancelled);
  const fin = finalOf(messages);
  r.check('cancel: callToolStream ends with its "was cancelled" error', fin?.type === 'error' && /cancel/i.test(fin.error?.message ?? ''), fin);
  if (taskId) {
    const t = await plain.client.experimental.tasks.getTask(taskId).catch((e) => e);
    r.check('cancel: tasks/get reads cancelled', t?.status === 'cancelled', t);
  }
});

await r.scenario('failing tool: run_command in a cwd that does not exist', async () => {
  let taskId;
  const messages = await callAsTask(
    elicit.client,
    { name: 'run_command', arguments: { argv: ['true'], cwd: MISSING_CWD } },
    (m) => {
      if (m.type === 'taskCreated') taskId = m.task.taskId;
    },
    8000,
  );
  const fin = finalOf(messages);
  // callToolStream never calls tasks/result for a failed task: what it hands the host then is the
  // last tasks/get (statusMessage) and the error "Task <id> failed".
  const lastStatus = statusesOf(messages).pop();
  const text = fin?.type === 'result' ? textOf(fin.result) : `${fin?.error?.message} ${lastStatus?.statusMessage ?? ''}`;
  r.check('missing cwd: the agent gets the real error naming the directory (isError result via tasks/result, or a failed task whose statusMessage names it)', (fin?.type === 'result' ? fin.result?.isError === true : fin?.type === 'error') && (text ?? '').includes(MISSING_CWD), { final: fin, lastStatus });
  if (taskId) {
    const d = await human.detail(taskId);
    r.check('missing cwd: it fails at once, without asking the human', (d.inputRounds ?? []).length === 0 && ['completed', 'failed'].includes(d.task.status), { status: d.task.status, inputRounds: d.inputRounds });
  }
});

// ---- through the gateway: upstream "fs" (server-filesystem over TD_FS_DIR) ------------------

/** Polls task_status until the task ends; returns {status (the last task), seen (statuses)}. */
async function pollTaskStatus(client, taskId, tries = 100) {
  const seen = [];
  let status;
  for (let i = 0; i < tries; i++) {
    const s = await client.callTool({ name: 'task_status', arguments: { taskId } });
    status = s.structuredContent?.task;
    seen.push(status?.status);
    if (['completed', 'failed', 'cancelled'].includes(status?.status)) break;
    await sleep(150);
  }
  return { status, seen };
}

await r.scenario('gateway: plain call of fs__read_text_file', async () => {
  const file = freshFile('ts1-read');
  const text = unique('read through the gateway');
  fs.writeFileSync(file, text);
  await plain.client.listTools(); // the SDK validates results against the tools it listed last
  const result = await plain.client.callTool({ name: 'fs__read_text_file', arguments: { path: file } }, CallToolResultSchema, { timeout: 10000 });
  r.check('gateway read: a read-only upstream tool answers at once with the file text (no task handle)', !result.isError && textOf(result).includes(text) && !result.structuredContent?.task, result);
  const task = await human.findTask('fs__read_text_file', (t) => t.arguments?.path === file);
  const d = await human.detail(task.taskId);
  r.check('gateway read: the call is a completed task in Taskdeck, never asked the human', d.task.status === 'completed' && (d.inputRounds ?? []).length === 0, { status: d.task.status, inputRounds: d.inputRounds });
});

await r.scenario('gateway: fs__write_file as a task (callToolStream), approved by the human', async () => {
  const file = freshFile('ts1-write');
  const content = unique('written by ts-sdk1 as a task');
  let taskId, approving;
  const messages = await callAsTask(plain.client, { name: 'fs__write_file', arguments: { path: file, content } }, (m) => {
    if (m.type === 'taskCreated' && !approving) {
      taskId = m.task.taskId;
      approving = (async () => {
        const asked = await human.waitForRequest({ taskId, key: 'approve' });
        const existedBefore = fs.existsSync(file);
        await human.answer(taskId, 'approve', { action: 'accept', content: {} });
        return { asked, existedBefore };
      })().catch((e) => e);
    }
  });
  const approved = await approving;
  r.check('gateway write: tools/call with params.task answers CreateTaskResult (callToolStream yields taskCreated)', messages[0]?.type === 'taskCreated', messages[0]);
  const message = askedMessage(approved?.asked);
  r.check("gateway write: the human's question names the principal, server, tool and the exact arguments", message.includes(env.agentName) && message.includes('write_file') && message.includes(' fs ') && message.includes(file) && message.includes(content), approved);
  r.check('gateway write: the file does not exist while the call waits for the human', approved?.existedBefore === false, approved);
  const statuses = statusesOf(messages);
  r.check('gateway write: the agent reads working while the human decides, never input_required', nonTerminal(statuses).length > 0 && nonTerminal(statuses).every((s) => s.status === 'working'), statuses);
  const fin = finalOf(messages);
  r.check("gateway write: the stream ends with the upstream's result (not an error)", fin?.type === 'result' && fin.result?.isError !== true && /success/i.test(textOf(fin.result)), fin);
  r.check('gateway write: the file exists with the content after the approval', fs.existsSync(file) && fs.readFileSync(file, 'utf8') === content, fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : 'no file');
});

await r.scenario('gateway: fs__write_file declined by the human with a reason', async () => {
  const file = freshFile('ts1-denied');
  const reason = unique('not in that folder');
  let taskId, declining;
  const messages = await callAsTask(plain.client, { name: 'fs__write_file', arguments: { path: file, content: 'never written' } }, (m) => {
    if (m.type === 'taskCreated' && !declining) {
      taskId = m.task.taskId;
      declining = human.declineCall(taskId, reason).catch((e) => e);
    }
  });
  const declined = await declining;
  r.check('gateway decline: the human declines through /v1 with a reason', declined?.answered?.accepted?.includes('approve'), declined?.answered ?? declined);
  const fin = finalOf(messages);
  r.check("gateway decline: the agent gets an isError result whose text carries the human's reason", fin?.type === 'result' && fin.result?.isError === true && textOf(fin.result).includes(reason), fin);
  r.check('gateway decline: no file was written', !fs.existsSync(file), file);
});

await r.scenario('gateway: plain call of fs__write_file gets the text handle, then task_status', async () => {
  const file = freshFile('ts1-plain-write');
  const content = unique('written by a plain call');
  await plain.client.listTools();
  // callTool validates structuredContent against the tool's outputSchema: the handle must pass.
  const result = await plain.client.callTool({ name: 'fs__write_file', arguments: { path: file, content } }, CallToolResultSchema, { timeout: 5000 }).catch((e) => e);
  const taskId = result?.structuredContent?.task?.taskId;
  r.check("plain gateway write: answered at once with the handle in structuredContent.task, accepted by the SDK's callTool", typeof taskId === 'string' && !result.isError, result);
  if (!taskId) return;
  const approving = human.approveCall(taskId).catch((e) => e);
  const { status, seen } = await pollTaskStatus(plain.client, taskId);
  await approving;
  r.check('plain gateway write: task_status reads working, then completed with the upstream result', seen.filter((s) => s !== 'completed').every((s) => s === 'working') && status?.status === 'completed' && status?.result?.isError !== true, { seen, status });
  r.check('plain gateway write: the file exists after the approval', fs.existsSync(file) && fs.readFileSync(file, 'utf8') === content, file);
});

await r.scenario('gateway: /mcp/fs serves the upstream under its own tool names', async () => {
  const one = await connect('ts-sdk1-mcp-fs', { elicitation: false, url: `${env.mcpUrl}/fs` });
  try {
    const { tools } = await one.client.listTools();
    const names = tools.map((t) => t.name);
    r.check('/mcp/fs: tools/list has read_text_file and write_file, no fs__ prefix and none of Taskdeck\'s own tools', names.includes('read_text_file') && names.includes('write_file') && !names.some((n) => n.includes('__')) && !names.includes('request_approval'), names);
    const file = freshFile('ts1-mcp-fs');
    const text = unique('read on /mcp/fs');
    fs.writeFileSync(file, text);
    const result = await one.client.callTool({ name: 'read_text_file', arguments: { path: file } }, CallToolResultSchema, { timeout: 10000 });
    r.check('/mcp/fs: read_text_file answers with the file text', !result.isError && textOf(result).includes(text), result);
    const task = await human.findTask('fs__read_text_file', (t) => t.arguments?.path === file).catch((e) => e);
    r.check('/mcp/fs: the call is a task of fs__read_text_file in Taskdeck', task?.taskId && task.status === 'completed', task);
  } finally {
    await one.transport.terminateSession().catch(() => {});
    await one.client.close().catch(() => {});
  }
});

r.check('no transport errors reported to client.onerror (GET SSE stream, POSTs)', transportErrors.length === 0, transportErrors);
for (const [label, { client, transport }] of [['no-elicitation client', plain], ['elicitation client', elicit]]) {
  const err = await transport.terminateSession().then(() => null, (e) => e);
  r.check(`${label}: DELETE of the session is accepted (2xx or 405)`, err === null, err);
  await client.close().catch(() => {});
}
await human.cancelLeftovers();
r.finish();
