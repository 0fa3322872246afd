// The reference client of the 2026-07-28 tasks extension (SEP-2663): @modelcontextprotocol/ext-tasks
// on the TypeScript SDK v2 client (@modelcontextprotocol/client, versions pinned in package.json).
// The Client negotiates with server/discover (versionNegotiation mode 'auto'); ext-tasks sends
// tools/call and tasks/* itself through the host's rawDispatch (the SDK v2 codecs reject
// resultType "task"), with params._meta protocolVersion/clientInfo/clientCapabilities(+tasks
// extension) from v2RequestFraming; the transport derives MCP-Protocol-Version, Mcp-Method and
// Mcp-Name from the body. It polls tasks/get (the result or error is inlined), answers
// inputRequests with tasks/update through onInputRequest and cancels with tasks/cancel.
// Through the gateway: upstream "fs" (server-filesystem) as fs__TOOL.
import fs from 'node:fs';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import {
  createApplicationInputHandler,
  createTaskSessionEndpointId,
  createTaskSessionFromClient,
  DispatchError,
} from '@modelcontextprotocol/ext-tasks/client';
import { askedMessage, env, freshFile, human, NOTE_SCHEMA, Reporter, show, sleep, textOf, unique } from './lib/common.mjs';

const r = new Reporter('ext-tasks');
const MISSING_CWD = '/nonexistent/taskdeck-client-test-dir';
const backgroundErrors = [];
const agentAnswers = new Map(); // elicitation message -> content the agent's input handler accepts with

/**
 * The host's request coordinator (ext-tasks' RawClientDispatch): sends one JSON-RPC request on the
 * connected transport under an id of its own and takes the reply before the SDK Client sees it.
 */
function createRawDispatch(transport) {
  const waiting = new Map();
  let next = 0;
  const forward = transport.onmessage;
  transport.onmessage = (message, extra) => {
    if (message && typeof message.id === 'string' && !('method' in message) && waiting.has(message.id)) {
      const resolve = waiting.get(message.id);
      waiting.delete(message.id);
      resolve(message);
      return;
    }
    forward?.(message, extra);
  };
  return async (request, options = {}) => {
    const id = `ext-tasks-${++next}`;
    const timeoutMs = options.context?.requestTimeoutMs ?? 15000;
    let timer;
    const reply = new Promise((resolve, reject) => {
      waiting.set(id, resolve);
      timer = setTimeout(() => {
        waiting.delete(id);
        reject(new DispatchError(`no reply to ${request.method} within ${timeoutMs} ms`));
      }, timeoutMs);
      options.signal?.addEventListener('abort', () => {
        waiting.delete(id);
        reject(options.signal.reason instanceof Error ? options.signal.reason : new Error('aborted'));
      }, { once: true });
    });
    reply.catch(() => {});
    try {
      await transport.send({ ...request, jsonrpc: '2.0', id }, { headers: options.context?.headers, requestSignal: options.signal });
    } catch (error) {
      waiting.delete(id);
      clearTimeout(timer);
      // A JSON-RPC error sent with a non-400 status (e.g. 404 for -32601) still answers the request.
      try {
        const parsed = JSON.parse(error?.data?.text ?? '');
        if (parsed?.error) return { kind: 'error', error: { code: parsed.error.code, message: parsed.error.message, ...(parsed.error.data === undefined ? {} : { data: parsed.error.data }) } };
      } catch {}
      throw new DispatchError(`transport refused ${request.method}: ${error?.message}`, false, { cause: error });
    }
    try {
      const response = await reply;
      if (response.error) {
        const { code, message, data } = response.error;
        return { kind: 'error', error: { code, message, ...(data === undefined ? {} : { data }) } };
      }
      return { kind: 'result', result: response.result };
    } finally {
      clearTimeout(timer);
    }
  };
}

async function connect(name, { elicitation }) {
  const clientInfo = { name, version: '1.0.0' };
  const capabilities = elicitation ? { elicitation: { form: {} } } : {};
  const client = new Client(clientInfo, { capabilities, versionNegotiation: { mode: 'auto' } });
  client.onerror = (e) => backgroundErrors.push(`${name} client.onerror: ${show(e)}`);
  const transport = new StreamableHTTPClientTransport(new URL(env.mcpUrl), {
    requestInit: { headers: { Authorization: `Bearer ${env.agentToken}` } },
  });
  await client.connect(transport);
  const inputs = [];
  const session = createTaskSessionFromClient(client, {
    endpointId: await createTaskSessionEndpointId('taskdeck-client-tests', { url: env.mcpUrl, name }),
    rawDispatch: createRawDispatch(transport),
    v2RequestFraming: { protocolVersion: client.getNegotiatedProtocolVersion(), clientInfo, clientCapabilities: capabilities },
    onError: (e) => backgroundErrors.push(`${name} session.onError: ${show(e)}`),
    // Without onInputRequest (a host with no elicitation UI) ext-tasks answers an elicitation
    // inputRequest with {action: "cancel"} by itself (dist/client/task-protocol-v2.js).
    ...(elicitation
      ? {
          onInputRequest: createApplicationInputHandler({
            elicitation: async (request, context) => {
              inputs.push({ params: request.params, taskId: context.taskId, inputId: context.inputId, delivery: context.delivery });
              const content = agentAnswers.get(request.params.message);
              return content ? { action: 'accept', content } : { action: 'decline' };
            },
            sampling: async () => {
              throw new Error('this client does not sample');
            },
            roots: async () => ({ roots: [] }),
          }),
        }
      : {}),
  });
  return { client, transport, session, inputs };
}

/** session.callTool, then settle() while recording every task snapshot the execution observed. */
async function callAndSettle(session, name, args, duringTask) {
  const execution = await session.callTool(name, args);
  const events = [];
  const taskId = execution.kind === 'task' ? execution.handle.taskId : undefined;
  const side = taskId && duringTask ? duringTask(taskId, events, execution).catch((e) => e) : Promise.resolve();
  const { outcome } = await execution.settle({ onEvent: (e) => events.push(e) });
  return { execution, taskId, events, outcome, side: await side };
}

const tasksOf = (events) => events.filter((e) => e.type === 'task').map((e) => ({ status: e.task.status, statusMessage: e.task.statusMessage }));
const outcomeView = (o) => (o?.status === 'failed' ? { status: 'failed', error: show(o.error) } : o);

let plain, elicit;
try {
  plain = await connect('ext-tasks-no-elicitation', { elicitation: false });
  elicit = await connect('ext-tasks-elicitation', { elicitation: true });
  r.check('server/discover negotiates the 2026-07-28 era', plain.client.getProtocolEra() === 'modern' && plain.client.getNegotiatedProtocolVersion() === '2026-07-28', { era: plain.client.getProtocolEra(), version: plain.client.getNegotiatedProtocolVersion() });
  const ext = plain.client.getServerCapabilities()?.extensions?.['io.modelcontextprotocol/tasks'];
  r.check('server/discover advertises capabilities.extensions["io.modelcontextprotocol/tasks"] = {} (ext-tasks requires exactly an empty object)', ext && typeof ext === 'object' && Object.keys(ext).length === 0, plain.client.getServerCapabilities());
} catch (e) {
  r.check('connect (server/discover) and create the ext-tasks session', false, e);
  r.finish();
}

await r.scenario('request_approval answered by the human', async () => {
  const message = unique('ext-tasks: may I deploy?');
  const note = unique('from-the-human');
  const { execution, taskId, events, outcome, side } = await callAndSettle(plain.session, 'request_approval', { message, requestedSchema: NOTE_SCHEMA }, async (taskId) => {
    await sleep(1000); // the agent polls meanwhile (pollIntervalMs)
    await human.waitForRequest({ taskId, key: 'approval' });
    return human.answer(taskId, 'approval', { action: 'accept', content: { note } });
  });
  const seen = tasksOf(events);
  r.check('human-answered approval: tools/call answers a CreateTaskResult (resultType task), so the execution is a task', execution.kind === 'task' && !!taskId, { kind: execution.kind });
  r.check('human-answered approval: the human answers it through POST /v1/tasks/{id}/input', side?.accepted?.includes('approval'), side);
  r.check('human-answered approval: tasks/get reads working (this client declared no elicitation), never input_required', seen.length > 0 && seen.every((t) => t.status !== 'input_required'), seen);
  r.check('human-answered approval: a working statusMessage says it waits for a human', seen.some((t) => t.status === 'working' && /human/i.test(t.statusMessage ?? '')), seen);
  const sc = outcome?.result?.structuredContent;
  r.check("human-answered approval: the inlined tasks/get result is the human's answer (completed, action accept, content.note)", outcome?.status === 'completed' && sc?.action === 'accept' && sc?.content?.note === note, outcomeView(outcome));
});

await r.scenario('request_approval answered by the agent through tasks/update', async () => {
  const message = unique('ext-tasks: agent, confirm?');
  const note = unique('from-the-agent');
  agentAnswers.set(message, { note });
  const { execution, taskId, events, outcome } = await callAndSettle(elicit.session, 'request_approval', { message, requestedSchema: NOTE_SCHEMA });
  const asked = elicit.inputs.filter((i) => i.params?.message === message);
  r.check('agent-answered approval: the execution is a task', execution.kind === 'task' && !!taskId, { kind: execution.kind });
  r.check('agent-answered approval: tasks/get reads input_required with inputRequests.approval (this client declared elicitation)', tasksOf(events).some((t) => t.status === 'input_required'), tasksOf(events));
  r.check('agent-answered approval: the input handler is asked once, for this task (delivery task-update)', asked.length === 1 && asked[0].taskId === taskId && asked[0].inputId === 'approval' && asked[0].delivery === 'task-update', asked);
  const sc = outcome?.result?.structuredContent;
  r.check("agent-answered approval: the inlined result is the agent's answer (completed, action accept, content.note)", outcome?.status === 'completed' && sc?.action === 'accept' && sc?.content?.note === note, outcomeView(outcome));
  if (taskId) {
    const d = await human.detail(taskId);
    const round = d.inputRounds?.find((x) => x.key === 'approval');
    r.check('agent-answered approval: Taskdeck records the agent as the one who answered', round?.answeredBy === env.agentName, round);
  }
});

await r.scenario('run_command approved by the human, exits 3', async () => {
  const marker = unique('ext');
  const before = elicit.inputs.length;
  const { execution, taskId, events, outcome, side } = await callAndSettle(elicit.session, 'run_command', { argv: ['sh', '-c', `echo hi ${marker}; exit 3`] }, async (taskId) => {
    await sleep(1000);
    await human.waitForRequest({ taskId, key: 'approve-command' });
    return human.answer(taskId, 'approve-command', { action: 'accept', content: {} });
  });
  const seen = tasksOf(events);
  r.check('run_command: the execution is a task', execution.kind === 'task' && !!taskId, { kind: execution.kind });
  r.check('run_command: the human approves it through /v1 (key approve-command)', side?.accepted?.includes('approve-command'), side);
  r.check('run_command: the agent (which declared elicitation) reads working while the human decides, never input_required', seen.length > 0 && seen.every((t) => t.status !== 'input_required'), seen);
  r.check("run_command: the agent's input handler is never asked for the human-only approval", !!taskId && side?.accepted?.includes('approve-command') && elicit.inputs.length === before, elicit.inputs.slice(before));
  r.check('run_command: the task completes with the inlined CallToolResult isError true, structuredContent.exitCode 3', outcome?.status === 'completed' && outcome.result?.isError === true && outcome.result?.structuredContent?.exitCode === 3, outcomeView(outcome));
});

await r.scenario('cancel through tasks/cancel (a running sleep 30)', async () => {
  const marker = unique('ext-sleep');
  const execution = await plain.session.callTool('run_command', { argv: ['sh', '-c', `sleep 30 # ${marker}`] });
  const taskId = execution.kind === 'task' ? execution.handle.taskId : undefined;
  r.check('cancel: the execution is a task', !!taskId, { kind: execution.kind });
  if (!taskId) return;
  await human.waitForRequest({ taskId, key: 'approve-command' });
  await human.answer(taskId, 'approve-command', { action: 'accept', content: {} });
  await human.waitForStatus(taskId, ['working']);
  await sleep(300); // the command is running
  const t0 = Date.now();
  const ack = await execution.cancel().then(() => 'acknowledged', (e) => e);
  r.check('cancel: tasks/cancel is acknowledged ({resultType: "complete"})', ack === 'acknowledged', ack);
  const outcome = await execution.result();
  r.check('cancel: the execution settles cancelled', outcome?.status === 'cancelled', outcomeView(outcome));
  let snap;
  for (;;) {
    snap = await plain.session.task(taskId).snapshot().catch((e) => e);
    if (snap instanceof Error || ['completed', 'failed', 'cancelled'].includes(snap.status) || Date.now() - t0 > 12000) break;
    await sleep(200);
  }
  r.check('cancel: tasks/get then reads cancelled (the sleep was stopped)', snap?.status === 'cancelled', snap instanceof Error ? snap : { status: snap?.status, statusMessage: snap?.statusMessage });
  r.check('cancel: it ends within 6 s of the cancel (SIGTERM to the process group)', Date.now() - t0 < 6000, `${Date.now() - t0} ms`);
});

await r.scenario('failing tool: run_command in a cwd that does not exist', async () => {
  const { execution, taskId, outcome } = await callAndSettle(plain.session, 'run_command', { argv: ['true'], cwd: MISSING_CWD });
  const text = outcome?.status === 'completed' ? textOf(outcome.result) : outcome?.status === 'failed' ? `${outcome.error?.message} ${JSON.stringify(outcome.error?.data ?? '')}` : '';
  r.check('missing cwd: the agent gets the real error naming the directory (isError result inlined, or the failed task\'s error)', ((outcome?.status === 'completed' && outcome.result?.isError === true) || outcome?.status === 'failed') && text.includes(MISSING_CWD), { kind: execution.kind, outcome: outcomeView(outcome) });
  if (taskId) {
    const d = await human.detail(taskId);
    r.check('missing cwd: it fails at once, without asking the human', (d.inputRounds ?? []).length === 0, d.inputRounds);
  }
});

await r.scenario('gateway: fs__read_text_file answers with its result (settled within the threshold)', async () => {
  const file = freshFile('ext-read');
  const text = unique('read by ext-tasks');
  fs.writeFileSync(file, text);
  const execution = await plain.session.callTool('fs__read_text_file', { path: file });
  const { outcome } = await execution.settle();
  r.check('gateway read: the agent gets the file text at once (a quick read-only call is answered with its CallToolResult, not a task)', execution.kind === 'immediate' && outcome?.result?.isError !== true && textOf(outcome?.result).includes(text), { kind: execution.kind, outcome: outcomeView(outcome) });
});

await r.scenario('gateway: fs__write_file is a task, approved by the human', async () => {
  const file = freshFile('ext-write');
  const content = unique('written by ext-tasks');
  const { execution, taskId, events, outcome, side } = await callAndSettle(plain.session, 'fs__write_file', { path: file, content }, async (taskId) => {
    await sleep(600); // the agent polls meanwhile
    const asked = await human.waitForRequest({ taskId, key: 'approve' });
    const existedBefore = fs.existsSync(file);
    await human.answer(taskId, 'approve', { action: 'accept', content: {} });
    return { asked, existedBefore };
  });
  const seen = tasksOf(events);
  r.check('gateway write: tools/call answers a CreateTaskResult (resultType task)', execution.kind === 'task' && !!taskId, { kind: execution.kind });
  r.check("gateway write: the human's question names the server, tool and arguments", askedMessage(side?.asked).includes('write_file') && askedMessage(side?.asked).includes(file), side);
  r.check('gateway write: the file does not exist while the call waits for the human', side?.existedBefore === false, side);
  r.check('gateway write: tasks/get reads working while the human decides, never input_required', seen.length > 0 && seen.every((t) => t.status !== 'input_required'), seen);
  r.check("gateway write: the settled outcome is the upstream's result (completed, not isError)", outcome?.status === 'completed' && outcome.result?.isError !== true && /success/i.test(textOf(outcome.result)), outcomeView(outcome));
  r.check('gateway write: the file exists with the content', fs.existsSync(file) && fs.readFileSync(file, 'utf8') === content, file);
});

r.check('no background errors reported by ext-tasks (onError) or the SDK client (onerror)', backgroundErrors.length === 0, backgroundErrors);
for (const c of [plain, elicit]) {
  await c.session.close().catch(() => {});
  await c.client.close().catch(() => {});
}
await human.cancelLeftovers();
r.finish();
