// Shared helpers for the Node client scripts: the check reporter, the "human" (Taskdeck's /v1 API
// with the admin token) and small timing utilities. Configuration comes from run.sh:
//   TD_BASE         http://127.0.0.1:PORT of the real taskdeck (for /v1, the human's side)
//   TD_MCP_URL      the MCP endpoint the client uses (run.sh points it at a logging proxy)
//   TD_AGENT_TOKEN  the agent's bearer token;  TD_AGENT_NAME  its principal
//   TD_ADMIN_TOKEN  the admin token (the human)
//   TD_FS_DIR       the directory the gateway's upstream "fs" (server-filesystem) serves

export const env = {
  base: must('TD_BASE'),
  mcpUrl: must('TD_MCP_URL'),
  agentToken: must('TD_AGENT_TOKEN'),
  agentName: must('TD_AGENT_NAME'),
  adminToken: must('TD_ADMIN_TOKEN'),
  fsDir: must('TD_FS_DIR'),
};

function must(name) {
  const v = process.env[name];
  if (!v) {
    console.error(`missing environment variable ${name} (run this through tests/clients/run.sh)`);
    process.exit(2);
  }
  return v;
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Short printable form of an observed value (for FAILED lines): errors as one line, no stacks. */
export function show(v) {
  const s = typeof v === 'string' ? v : JSON.stringify(plain(v, 0)) ?? String(v);
  return s.length > 1500 ? s.slice(0, 1500) + '…' : s;
}
function plain(v, depth) {
  if (v instanceof Error) {
    const o = { error: `${v.name}: ${String(v.message).replace(/\s+/g, ' ')}` };
    if (v.code !== undefined) o.code = v.code;
    if (v.data !== undefined) o.data = v.data;
    if (v.cause !== undefined && depth < 3) o.cause = plain(v.cause, depth + 1);
    return o;
  }
  if (Array.isArray(v)) return v.map((x) => plain(x, depth + 1));
  if (v && typeof v === 'object') {
    if (depth > 8) return '…';
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plain(x, depth + 1)]));
  }
  return v;
}

/** One line per check: "ok   CLIENT: name" or "FAILED CLIENT: name — observed: ...". */
export class Reporter {
  constructor(client) {
    this.client = client;
    this.passed = 0;
    this.failed = 0;
  }
  check(name, ok, observed) {
    if (ok) {
      this.passed++;
      console.log(`ok     ${this.client}: ${name}`);
    } else {
      this.failed++;
      console.log(`FAILED ${this.client}: ${name} — observed: ${show(observed)}`);
    }
    return !!ok;
  }
  note(text) {
    console.log(`  note ${this.client}: ${text}`);
  }
  /** Runs one scenario; an exception or timeout is one FAILED line, never a crash. */
  async scenario(name, fn, timeoutMs = 30000) {
    let timer;
    try {
      await Promise.race([
        fn(),
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error(`scenario timed out after ${timeoutMs} ms`)), timeoutMs);
        }),
      ]);
    } catch (e) {
      this.check(`${name}: ran to the end`, false, e);
    } finally {
      clearTimeout(timer);
    }
  }
  finish() {
    console.log(`${this.client}: ${this.passed} passed, ${this.failed} failed`);
    // Open SSE streams or pending polls must not keep the process alive.
    process.exit(this.failed === 0 ? 0 : 1);
  }
}

// ---- the human: /v1 with the admin token ------------------------------------------------------

async function v1(method, path, body) {
  const res = await fetch(env.base + path, {
    method,
    headers: {
      authorization: `Bearer ${env.adminToken}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let json;
  try {
    json = JSON.parse(text);
  } catch {
    json = text;
  }
  if (!res.ok) {
    const err = new Error(`${method} ${path}: HTTP ${res.status} ${typeof json === 'string' ? json : JSON.stringify(json)}`);
    err.status = res.status;
    err.body = json;
    throw err;
  }
  return json;
}

export const human = {
  /** GET /v1/tasks?status=input_required for this agent, as the human's inbox shows it. */
  async inbox() {
    const q = new URLSearchParams({ status: 'input_required', principal: env.agentName, limit: '200' });
    return (await v1('GET', `/v1/tasks?${q}`)).tasks;
  },
  /**
   * Waits until a task of this agent asks for input under `key`, found by its taskId or by a
   * predicate on the task (e.g. its arguments), and returns that task.
   */
  async waitForRequest({ taskId, match, key }, timeoutMs = 10000) {
    const deadline = Date.now() + timeoutMs;
    let last;
    for (;;) {
      const tasks = await this.inbox();
      last = tasks;
      const t = tasks.find(
        (t) => (taskId ? t.taskId === taskId : match(t)) && t.inputRequests && key in t.inputRequests,
      );
      if (t) return t;
      if (taskId) {
        const { task } = await this.detail(taskId);
        if (['completed', 'failed', 'cancelled'].includes(task.status)) {
          throw new Error(`task ended ${task.status} (${task.statusMessage ?? ''}) before the human could answer "${key}"`);
        }
      }
      if (Date.now() > deadline) {
        const err = new Error(`the human never saw input request "${key}" (inbox: ${show(last.map((t) => ({ taskId: t.taskId, tool: t.tool, keys: Object.keys(t.inputRequests ?? {}) })))})`);
        throw err;
      }
      await sleep(100);
    }
  },
  /** POST /v1/tasks/{id}/input as the human. */
  answer(taskId, key, response) {
    return v1('POST', `/v1/tasks/${encodeURIComponent(taskId)}/input`, { inputResponses: { [key]: response } });
  },
  /** GET /v1/tasks/{id}: {task, timeline, inputRounds}. */
  detail(taskId) {
    return v1('GET', `/v1/tasks/${encodeURIComponent(taskId)}`);
  },
  async waitForStatus(taskId, statuses, timeoutMs = 10000) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const d = await this.detail(taskId);
      if (statuses.includes(d.task.status)) return d.task;
      if (Date.now() > deadline) return d.task;
      await sleep(100);
    }
  },
  /** Finds this agent's newest task of `tool` whose arguments satisfy `match` (any status). */
  async findTask(tool, match, timeoutMs = 10000) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const q = new URLSearchParams({ principal: env.agentName, tool, limit: '200' });
      const t = (await v1('GET', `/v1/tasks?${q}`)).tasks.find(match);
      if (t) return t;
      if (Date.now() > deadline) throw new Error(`no ${tool} task of ${env.agentName} matched`);
      await sleep(100);
    }
  },
  /**
   * Approves the gateway call `taskId` (its human-only request `approve`) once it waits for the
   * human; returns the task as the inbox showed it (its `inputRequests.approve.params.message`
   * names the server, tool and arguments) with `answered`, the /v1 answer.
   */
  async approveCall(taskId) {
    const asked = await this.waitForRequest({ taskId, key: GATEWAY_APPROVAL });
    return { ...asked, answered: await this.answer(taskId, GATEWAY_APPROVAL, { action: 'accept', content: {} }) };
  },
  /** Declines the gateway call `taskId` with `reason` (the form's `reason` field). */
  async declineCall(taskId, reason) {
    const asked = await this.waitForRequest({ taskId, key: GATEWAY_APPROVAL });
    return { ...asked, answered: await this.answer(taskId, GATEWAY_APPROVAL, { action: 'decline', content: { reason } }) };
  },
  /** Cancels every unfinished task of this agent (cleanup after a failed scenario). */
  async cancelLeftovers() {
    const q = new URLSearchParams({ principal: env.agentName, status: 'working,input_required', limit: '200' });
    let tasks = [];
    try {
      tasks = (await v1('GET', `/v1/tasks?${q}`)).tasks;
    } catch {
      return;
    }
    for (const t of tasks) await v1('POST', `/v1/tasks/${encodeURIComponent(t.taskId)}/cancel`).catch(() => {});
  },
};

/** The key of the human-only approval a gateway call asks for (policy `ask`). */
export const GATEWAY_APPROVAL = 'approve';

/** The question the human sees for a gateway call waiting in the inbox. */
export const askedMessage = (task) => task?.inputRequests?.[GATEWAY_APPROVAL]?.params?.message ?? '';

/** A file in the gateway upstream's directory that does not exist yet. */
export const freshFile = (label) => `${env.fsDir}/${unique(label)}.txt`;

/** The elicitation form request_approval is called with in every scenario. */
export const NOTE_SCHEMA = {
  type: 'object',
  properties: { note: { type: 'string', title: 'Note' } },
  required: ['note'],
};

/** A value unique to this run, so a task is found by what the agent asked. */
export const unique = (label) => `${label}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;

/** The first text content of a CallToolResult. */
export const textOf = (result) => (result?.content ?? []).filter((c) => c?.type === 'text').map((c) => c.text).join('\n');
