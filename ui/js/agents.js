// "Connect an agent": the rules and words behind the dialog. No DOM.
//
// POST /v1/agents {name} (admin only) makes a token for a new principal and answers with
// ready-to-paste configurations, one per MCP client. Names follow the server's rule: 1-64
// ASCII letters, digits, '-', '_' and '.'; "admin" and "anonymous" are reserved in any case,
// and no two principals differ only in case.

export const AGENT_NAME_MAX = 64;
const NAME_CHAR = /[A-Za-z0-9._-]/;
const RESERVED = new Set(['admin', 'anonymous']);

/** The clients, in the order the dialog shows them. */
export const CLIENTS = [
  { client: 'claude-code', title: 'Claude Code' },
  { client: 'claude-desktop', title: 'Claude Desktop' },
  { client: 'vscode', title: 'VS Code' },
  { client: 'cursor', title: 'Cursor' },
  { client: 'codex', title: 'Codex' },
];

/** The name as it will be sent: surrounding spaces are dropped. */
export function normalizeAgentName(raw) {
  return String(raw ?? '').trim();
}

/**
 * What is wrong with a (normalized) agent name, or null when the server will take it.
 * @param {string} name
 * @returns {string|null}
 */
export function validateAgentName(name) {
  const s = String(name ?? '');
  if (!s) return 'Enter a name for the agent.';
  const chars = [...s];
  if (chars.length > AGENT_NAME_MAX) return `Use at most ${AGENT_NAME_MAX} characters (this one has ${chars.length}).`;
  const bad = [...new Set(chars.filter((c) => !NAME_CHAR.test(c)))];
  if (bad.length) {
    const shown = bad.slice(0, 5).map((c) => (c === ' ' ? 'spaces' : `“${c}”`));
    return `Use only letters (a–z, A–Z), digits, “-”, “_” and “.”; ${shown.join(', ')}${bad.length > 5 ? '…' : ''} ${bad.length === 1 && bad[0] !== ' ' ? 'is' : 'are'} not allowed.`;
  }
  if (RESERVED.has(s.toLowerCase())) return `“${s}” is reserved; choose another name.`;
  return null;
}

/**
 * The message for a failed POST /v1/agents.
 * @param {{status?: number, message?: string}} error an ApiError (or anything thrown)
 * @param {string} name the name that was sent
 */
export function createAgentError(error, name) {
  const status = error && error.status;
  if (status === 409) {
    // The server says when the name is another principal's in other case, or reserved: then
    // revoking a token with this very name is no way out.
    const said = (error && error.message) || '';
    if (/only in case|reserved/.test(said)) return said.charAt(0).toUpperCase() + said.slice(1);
    return `A token named “${name}” already exists. Choose another name, or revoke that token first.`;
  }
  if (status === 403) return 'Only the admin token can connect agents.';
  if (status === 422) return (error && error.message) || 'The server did not accept that name.';
  if (status === 0) return (error && error.message) || 'Taskdeck did not answer.';
  return `Could not create the token: ${(error && error.message) || 'unknown error'}`;
}

/**
 * The server's configurations that can be shown, in CLIENTS order (unknown clients last, in
 * the server's order).
 * @param {unknown} configs
 * @returns {{client: string, title: string, target: string, kind: string, text: string}[]}
 */
export function orderConfigs(configs) {
  const list = Array.isArray(configs)
    ? configs.filter((c) => c && typeof c === 'object' && typeof c.client === 'string' && c.client && typeof c.text === 'string')
    : [];
  const known = CLIENTS.map((k) => k.client);
  const rank = (c) => {
    const i = known.indexOf(c.client);
    return i < 0 ? known.length : i;
  };
  return list
    .map((c, i) => ({ c, i }))
    .sort((a, b) => rank(a.c) - rank(b.c) || a.i - b.i)
    .map(({ c }) => ({
      client: c.client,
      title: typeof c.title === 'string' && c.title ? c.title : (CLIENTS.find((k) => k.client === c.client) || { title: c.client }).title,
      target: typeof c.target === 'string' ? c.target : '',
      kind: c.kind === 'command' || c.kind === 'toml' ? c.kind : 'json',
      text: c.text,
    }));
}

/** A hint shown under a configuration (how to merge it, what it needs), or ''. */
export function configNote(config) {
  switch (config.client) {
    case 'claude-code':
      return 'Run it once; Claude Code then lists “taskdeck” among its MCP servers in every project (check with: claude mcp list).';
    case 'claude-desktop':
      return 'If the file already has "mcpServers", add the "taskdeck" entry inside it, then restart Claude Desktop. Needs Node.js: it runs mcp-remote through npx.';
    case 'vscode':
      return 'In your workspace folder. If the file already exists, add the "taskdeck" entry to its "servers".';
    case 'cursor':
      return 'If the file already has "mcpServers", add the "taskdeck" entry inside it.';
    case 'codex':
      return 'Add it to the file (in $CODEX_HOME when that is set); if it already has [mcp_servers.taskdeck], replace that table. Check with: codex mcp list.';
    default:
      return '';
  }
}

/**
 * The tab that a key press moves to in a tab list of `count` tabs (WAI-ARIA tabs pattern:
 * arrows wrap, Home and End jump), or null when the key does not move.
 */
export function tabKeyTarget(key, current, count) {
  if (count <= 0) return null;
  switch (key) {
    case 'ArrowRight':
    case 'ArrowDown':
      return (current + 1) % count;
    case 'ArrowLeft':
    case 'ArrowUp':
      return (current - 1 + count) % count;
    case 'Home':
      return 0;
    case 'End':
      return count - 1;
    default:
      return null;
  }
}

/** "admin, build-bot, ci" — the live (not revoked) token names from GET /v1/agents. */
export function liveAgentNames(response) {
  const agents = response && Array.isArray(response.agents) ? response.agents : [];
  return agents.filter((a) => a && typeof a.name === 'string' && !a.revoked).map((a) => a.name);
}
