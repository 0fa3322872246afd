// The Servers view (admin only): the upstream MCP servers Taskdeck serves behind its own
// endpoint (GET /v1/servers), each with its state chip, tool count, target, last error and the
// stderr tail (collapsible); a form to add one (a command, or a URL; env and header values are
// password inputs, and no answer ever holds them again); Remove with a confirmation.
//
// Live: /v1/events carries task changes only, no server event, so the list is fetched when the
// view opens and again every 3 s while it is open (never while closed).
// Rules and words live in servers-model.js (unit-tested).

import { h, clear, inflate } from './dom.js';
import { confirmDialog } from './dialogs.js';
import { stateChip, serverBody, toolCountText, unservedLines } from './servers-model.js';

/** How often the open view re-fetches the list, in ms. */
export const REFRESH_MS = 3000;

const $ = (id) => document.getElementById(id);

let deps = null;
let timer = null;
let opener = null;
/** Names whose stderr tail the human opened: kept open across refreshes. */
const openTails = new Set();

/** @param {{api: {get: Function, post: Function, del: Function}, toast: Function}} d */
export function initServersDialog(d) {
  deps = d;
  // index.html keeps the dialog's content in a template until this module has loaded.
  const dialog = inflate($('servers-dialog'));
  $('servers-x').addEventListener('click', () => dialog.close());
  $('server-form').addEventListener('submit', (e) => {
    e.preventDefault();
    add();
  });
  for (const radio of document.querySelectorAll('input[name="server-kind"]')) radio.addEventListener('change', showKind);
  $('server-add-row').addEventListener('click', () => addRow());
  dialog.addEventListener('close', () => {
    clearInterval(timer);
    timer = null;
    resetForm(); // secrets typed but not sent leave the page
    if (opener && opener.isConnected) opener.focus();
    opener = null;
  });
}

export function openServersDialog() {
  const dialog = $('servers-dialog');
  if (dialog.open) return;
  opener = document.activeElement instanceof HTMLElement ? document.activeElement : null;
  resetForm();
  dialog.showModal();
  refresh();
  timer = setInterval(refresh, REFRESH_MS);
}

async function refresh() {
  try {
    const r = await deps.api.get('/v1/servers');
    render(r.servers || []);
    setListError(null);
  } catch (err) {
    setListError(`Could not load the servers: ${err.message}`);
  }
}

function setListError(text) {
  $('servers-error').hidden = !text;
  $('servers-error').textContent = text || '';
}

function render(servers) {
  const list = $('servers-list');
  clear(list);
  $('servers-empty').hidden = servers.length > 0;
  for (const s of servers) list.append(row(s));
}

function row(s) {
  const chip = stateChip(s.state);
  const tail = s.stderrTail && s.stderrTail.length
    ? h('details', { class: 'server-tail', open: openTails.has(s.name), ontoggle: (e) => (e.target.open ? openTails.add(s.name) : openTails.delete(s.name)) },
        h('summary', {}, `stderr (last ${s.stderrTail.length} line${s.stderrTail.length === 1 ? '' : 's'})`),
        h('pre', { class: 'server-tail-text' }, s.stderrTail.join('\n')))
    : null;
  const names = [...(s.envKeys || []).map((k) => `env ${k}`), ...(s.headerNames || []).map((k) => `header ${k}`)];
  return h('li', { class: 'server-row', dataset: { name: s.name, state: s.state } },
    h('div', { class: 'server-head' },
      h('strong', { class: 'server-name' }, s.name),
      h('span', { class: `badge server-state tone-${chip.tone}` }, chip.label),
      h('span', { class: 'server-tools muted' }, toolCountText(s)),
      h('span', { class: 'actions-spacer' }),
      h('button', { type: 'button', class: 'btn btn-danger btn-small', 'aria-label': `Remove ${s.name}`, onclick: () => remove(s.name) }, 'Remove')),
    h('code', { class: 'server-target' }, s.target),
    names.length ? h('p', { class: 'field-hint' }, `Secrets kept: ${names.join(', ')}`) : null,
    s.lastError ? h('p', { class: 'server-error' }, `Last error: ${s.lastError}`) : null,
    unservedLines(s).length
      ? h('ul', { class: 'server-unserved field-hint', 'aria-label': 'Tools not served' }, unservedLines(s).map((line) => h('li', {}, `Not served: ${line}`)))
      : null,
    tail);
}

async function remove(name) {
  const ok = await confirmDialog({
    title: `Remove server ${name}?`,
    body: [`Taskdeck stops ${name} and its tools leave the agents’ tool lists. Its entry, with its secrets, is deleted from servers.json.`],
    confirmLabel: 'Remove',
    cancelLabel: 'Keep it',
  });
  if (!ok) return;
  try {
    await deps.api.del(`/v1/servers/${encodeURIComponent(name)}`);
    deps.toast(`Removed ${name}.`);
  } catch (err) {
    deps.toast(`Could not remove ${name}: ${err.message}`, 'bad');
  }
  refresh();
}

function kind() {
  const checked = document.querySelector('input[name="server-kind"]:checked');
  return checked ? checked.value : 'stdio';
}

function showKind() {
  const http = kind() === 'http';
  $('server-stdio-fields').hidden = http;
  $('server-http-fields').hidden = !http;
  $('server-rows-label').textContent = http ? 'Headers (e.g. Authorization)' : 'Environment variables';
}

function addRow() {
  const rows = $('server-rows');
  const n = rows.children.length + 1;
  rows.append(h('div', { class: 'server-kv' },
    h('input', { type: 'text', class: 'server-key', 'aria-label': `Name ${n}`, spellcheck: 'false', autocomplete: 'off', placeholder: 'NAME' }),
    h('input', { type: 'password', class: 'server-value', 'aria-label': `Value ${n}`, autocomplete: 'new-password', placeholder: 'value' }),
    h('button', { type: 'button', class: 'btn btn-icon btn-quiet', 'aria-label': `Remove row ${n}`, onclick: (e) => e.currentTarget.parentElement.remove() }, '×')));
}

function resetForm() {
  $('server-form').reset();
  clear($('server-rows'));
  setFormError(null);
  showKind();
}

function setFormError(text) {
  $('server-form-error').hidden = !text;
  $('server-form-error').textContent = text || '';
}

async function add() {
  const rows = [...document.querySelectorAll('#server-rows .server-kv')].map((r) => ({
    key: r.querySelector('.server-key').value,
    value: r.querySelector('.server-value').value,
  }));
  const { body, error } = serverBody({
    kind: kind(),
    name: $('server-name').value,
    commandLine: $('server-command').value,
    cwd: $('server-cwd').value,
    url: $('server-url').value,
    rows,
  });
  if (error) {
    setFormError(error.message);
    return;
  }
  const submit = $('server-add');
  submit.disabled = true;
  try {
    const status = await deps.api.post('/v1/servers', body);
    deps.toast(`Added ${status.name}.`);
    resetForm();
    refresh();
  } catch (err) {
    setFormError(err.message);
  } finally {
    submit.disabled = false;
  }
}
