// The Servers view's rules, without DOM (unit-tested in ui/test/servers-model.test.mjs): how a
// server's state is shown, the name rule (the server's own: ^[a-z0-9_-]{1,64}$, starting with a
// letter or digit, no "__", not ending with "_", not "taskdeck"), and the POST /v1/servers body an add form makes.

/** How each state reads, and its tone (a CSS class suffix). */
const STATES = {
  connected: { label: 'connected', tone: 'good' },
  starting: { label: 'starting', tone: 'working' },
  failed: { label: 'failed', tone: 'bad' },
  disabled: { label: 'disabled', tone: 'muted' },
};

/**
 * The chip of a server's state; an unknown state is shown as it is, muted.
 * @param {string} state
 * @returns {{label: string, tone: string}}
 */
export function stateChip(state) {
  return STATES[state] || { label: String(state || 'unknown'), tone: 'muted' };
}

/**
 * Why `name` cannot name a server, or null when it can.
 * @param {string} name
 */
export function validateServerName(name) {
  if (!name) return 'Enter a name.';
  if (name.length > 64) return 'At most 64 characters.';
  if (!/^[a-z0-9_-]+$/.test(name)) return 'Use lowercase letters, digits, “-” and “_”.';
  if (/^[-_]/.test(name)) return 'Start with a letter or a digit.';
  if (name.includes('__')) return '“__” separates a server’s name from its tools’ names.';
  if (name.endsWith('_')) return 'End with a letter, a digit or “-”: NAME__TOOL would not say where the name ends.';
  if (name === 'taskdeck') return '“taskdeck” names Taskdeck’s own tools.';
  return null;
}

/**
 * Splits a command line into words, as a POSIX shell would for quotes and backslashes (no
 * expansion): `npx -y "my pkg"` → ["npx", "-y", "my pkg"]. Throws on an unclosed quote.
 * @param {string} line
 * @returns {string[]}
 */
export function splitCommandLine(line) {
  const words = [];
  let word = null;
  let quote = null;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quote === "'") {
      if (c === "'") quote = null;
      else word += c;
    } else if (quote === '"') {
      if (c === '"') quote = null;
      else if (c === '\\' && i + 1 < line.length && '"\\$`'.includes(line[i + 1])) word += line[++i];
      else word += c;
    } else if (/\s/.test(c)) {
      if (word !== null) words.push(word);
      word = null;
    } else {
      if (word === null) word = '';
      if (c === "'" || c === '"') quote = c;
      else if (c === '\\' && i + 1 < line.length) word += line[++i];
      else word += c;
    }
  }
  if (quote) throw new Error(`Close the ${quote === '"' ? 'double' : 'single'} quote.`);
  if (word !== null) words.push(word);
  return words;
}

/**
 * The POST /v1/servers body of an add form, or the first problem with it.
 * @param {{kind: 'stdio'|'http', name: string, commandLine?: string, cwd?: string, url?: string,
 *          rows?: {key: string, value: string}[]}} form `rows`: env variables (stdio) or
 *          headers (http); rows with an empty key are ignored.
 * @returns {{body?: object, error?: {field: string, message: string}}}
 */
export function serverBody(form) {
  const name = (form.name || '').trim();
  const nameProblem = validateServerName(name);
  if (nameProblem) return { error: { field: 'name', message: nameProblem } };
  const map = {};
  for (const row of form.rows || []) {
    const key = (row.key || '').trim();
    if (!key) continue;
    if (key in map) return { error: { field: 'rows', message: `“${key}” is given twice.` } };
    map[key] = row.value || '';
  }
  if (form.kind === 'http') {
    const url = (form.url || '').trim();
    if (!/^https?:\/\/\S+$/i.test(url)) return { error: { field: 'url', message: 'Enter an http:// or https:// URL.' } };
    const body = { name, url };
    if (Object.keys(map).length) body.headers = map;
    return { body };
  }
  let words;
  try {
    words = splitCommandLine(form.commandLine || '');
  } catch (err) {
    return { error: { field: 'command', message: err.message } };
  }
  if (!words.length) return { error: { field: 'command', message: 'Enter the command that starts the server.' } };
  const body = { name, command: words[0], args: words.slice(1) };
  if (Object.keys(map).length) body.env = map;
  const cwd = (form.cwd || '').trim();
  if (cwd) body.cwd = cwd;
  return { body };
}

/** "14 tools", "1 tool", "8 tools (2 not served)"; while not connected, the tools it offered
 *  when last connected, which agents are still offered ("14 tools, kept while it is down"),
 *  or "—" when it never connected. */
export function toolCountText(server) {
  const count = server.toolCount || 0;
  const served = `${count} tool${count === 1 ? '' : 's'}`;
  if (server.state !== 'connected') return count ? `${served}, kept while it is down` : '—';
  const unserved = (server.unservedTools || []).length;
  return unserved ? `${served} (${unserved} not served)` : served;
}

/** One line per tool the server lists that Taskdeck does not serve: "NAME: why". */
export function unservedLines(server) {
  return (server.unservedTools || []).map((t) => `${t.name}: ${t.reason}`);
}
