// Prints a proxy log (lib/proxy.mjs) compactly: node traffic.mjs FILE [--full]
// One line per HTTP exchange: verb, status, the MCP routing headers the client sent, the JSON-RPC
// message(s) and a summary of the answer (result keys / status / error), in request order.
import fs from 'node:fs';

const [file, flag] = process.argv.slice(2);
const full = flag === '--full';
const entries = fs
  .readFileSync(file, 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((l) => JSON.parse(l))
  .sort((a, b) => a.n - b.n);

function messagesOf(body, contentType = '') {
  if (!body) return [];
  if (contentType.includes('text/event-stream')) {
    return body
      .split(/\n\n/)
      .map((ev) => ev.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trimStart()).join('\n'))
      .filter((d) => d.trim())
      .map((d) => {
        try {
          return JSON.parse(d);
        } catch {
          return { unparsed: d };
        }
      });
  }
  try {
    const j = JSON.parse(body);
    return Array.isArray(j) ? j : [j];
  } catch {
    return [{ unparsed: body.slice(0, 200) }];
  }
}

function summarizeRequest(m) {
  if (!m || typeof m !== 'object') return String(m);
  const p = m.params ?? {};
  const meta = p._meta ?? {};
  const parts = [];
  if (m.method) parts.push(m.method);
  if ('id' in m) parts.push(`#${m.id}`);
  if (p.name) parts.push(`name=${p.name}`);
  if (p.taskId) parts.push(`taskId=${p.taskId.slice(0, 12)}…`);
  if (p.task) parts.push(`task=${JSON.stringify(p.task)}`);
  if (p.inputResponses) parts.push(`inputResponses=${JSON.stringify(p.inputResponses)}`);
  if (p.protocolVersion) parts.push(`protocolVersion=${p.protocolVersion}`);
  if (p.capabilities) parts.push(`capabilities=${JSON.stringify(p.capabilities)}`);
  const caps = meta['io.modelcontextprotocol/clientCapabilities'];
  if (caps) parts.push(`_meta.clientCapabilities=${JSON.stringify(caps)}`);
  if (meta['io.modelcontextprotocol/protocolVersion']) parts.push(`_meta.protocolVersion=${meta['io.modelcontextprotocol/protocolVersion']}`);
  if (meta['io.modelcontextprotocol/related-task']) parts.push(`_meta.related-task=${JSON.stringify(meta['io.modelcontextprotocol/related-task'])}`);
  if (!m.method && 'result' in m) parts.push(`response result=${JSON.stringify(m.result).slice(0, 160)}`);
  if (!m.method && m.error) parts.push(`response error=${JSON.stringify(m.error)}`);
  return parts.join(' ');
}

function summarizeAnswer(m) {
  if (!m || typeof m !== 'object') return String(m);
  if (m.method) return `server→client ${summarizeRequest(m)}`;
  if (m.error) return `error ${m.error.code} ${m.error.message}`;
  const r = m.result ?? {};
  const bits = [];
  if (r.resultType) bits.push(`resultType=${r.resultType}`);
  if (r.status) bits.push(`status=${r.status}`);
  if (r.task) bits.push(`task.status=${r.task.status}`);
  if (r.statusMessage) bits.push(`statusMessage=${JSON.stringify(r.statusMessage).slice(0, 80)}`);
  if (r.inputRequests) bits.push(`inputRequests=${Object.keys(r.inputRequests)}`);
  if (r.result) bits.push(`result.resultType=${r.result.resultType} isError=${r.result.isError}`);
  if (r.error) bits.push(`error=${JSON.stringify(r.error)}`);
  if ('isError' in r) bits.push(`isError=${r.isError}`);
  if (r.structuredContent?.task) bits.push(`structuredContent.task.status=${r.structuredContent.task.status}`);
  if (r.capabilities) bits.push(`capabilities=${JSON.stringify(r.capabilities)}`);
  if (r.protocolVersion) bits.push(`protocolVersion=${r.protocolVersion}`);
  if (!bits.length) bits.push(`keys=${Object.keys(r)}`);
  return bits.join(' ');
}

for (const e of entries) {
  const h = e.reqHeaders ?? {};
  const hdr = ['mcp-protocol-version', 'mcp-method', 'mcp-name', 'mcp-session-id', 'last-event-id', 'accept']
    .filter((k) => h[k] !== undefined && (k !== 'accept' || e.method === 'GET'))
    .map((k) => `${k}: ${k === 'mcp-session-id' ? h[k].slice(0, 8) + '…' : h[k]}`)
    .join('; ');
  const reqs = messagesOf(e.reqBody).map(summarizeRequest).join(' | ');
  const answers = messagesOf(e.resBody, e.resHeaders?.['content-type']).map(summarizeAnswer).join(' | ');
  console.log(`#${e.n} ${e.method} ${e.status}${e.aborted ? ` (ended: ${e.aborted})` : ''} ${e.ms}ms [${hdr}] ${reqs}${answers ? `\n     → ${answers}` : ''}`);
  if (full) console.log(`     raw request: ${e.reqBody}\n     raw response: ${e.resBody}`);
}
