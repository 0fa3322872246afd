// The "Connect an agent" dialog (admin only): asks for a name, creates the agent's token
// (POST /v1/agents), then shows the configuration for each MCP client in tabs, with Copy
// buttons. The token is shown this once; it leaves the DOM when the dialog closes.
// Rules and words live in agents.js (unit-tested).

import { h, clear, copyButton, uid, inflate } from './dom.js';
import {
  normalizeAgentName,
  validateAgentName,
  createAgentError,
  orderConfigs,
  configNote,
  tabKeyTarget,
  liveAgentNames,
} from './agents.js';

const $ = (id) => document.getElementById(id);

let deps = null;
let opener = null;
let busy = false;

/**
 * @param {{api: {get: Function, post: Function}, toast: (text: string, tone?: string) => void,
 *          onCreated?: (agent: {name: string}) => void}} d
 */
/** Removes the shown token from the page and brings the form back. */
function forgetResult() {
  clear($('agent-result'));
  $('agent-result').hidden = true;
  $('agent-form').hidden = false;
}

/** Closes the dialog; the token leaves the DOM at once, not when the 'close' event comes.
 *  Not while a token is being created: it would be made and never shown (names are single-use). */
function closeDialog() {
  if (busy) return;
  forgetResult();
  $('agent-dialog').close();
}

export function initConnectDialog(d) {
  deps = d;
  // index.html keeps the dialog's content in a template until this module has loaded.
  const dialog = inflate($('agent-dialog'));
  $('agent-form').addEventListener('submit', (e) => {
    e.preventDefault();
    create();
  });
  $('agent-cancel').addEventListener('click', closeDialog);
  $('agent-x').addEventListener('click', closeDialog);
  // Escape: the dialog's 'close' event comes a task later; the token leaves the page now.
  // While a token is being created, Escape does nothing (see closeDialog).
  dialog.addEventListener('cancel', (e) => {
    if (busy) e.preventDefault();
    else forgetResult();
  });
  $('agent-name').addEventListener('input', () => {
    // Errors go away as soon as the name is edited; a wrong character is reported at once.
    const name = normalizeAgentName($('agent-name').value);
    const problem = name ? validateAgentName(name) : null;
    setNameError(problem && !problem.startsWith('Enter') ? problem : null);
    showFormError(null);
  });
  dialog.addEventListener('close', () => {
    forgetResult();
    if (opener && opener.isConnected) opener.focus();
    opener = null;
  });
}

export function openConnectDialog() {
  const dialog = $('agent-dialog');
  if (dialog.open) return;
  opener = document.activeElement instanceof HTMLElement ? document.activeElement : null;
  $('agent-form').hidden = false;
  $('agent-result').hidden = true;
  clear($('agent-result'));
  $('agent-name').value = '';
  setNameError(null);
  showFormError(null);
  setBusy(false);
  $('agent-existing').hidden = true;
  dialog.showModal();
  $('agent-name').focus();
  loadNamesInUse();
}

/** "Names in use: admin, ci-bot." under the field, so a taken name is not a surprise. */
function loadNamesInUse() {
  deps.api
    .get('/v1/agents')
    .then((r) => {
      const names = liveAgentNames(r);
      const el = $('agent-existing');
      if (!$('agent-dialog').open) return;
      el.hidden = !names.length;
      el.textContent = names.length ? `Names in use: ${names.slice(0, 12).join(', ')}${names.length > 12 ? `, and ${names.length - 12} more` : ''}.` : '';
    })
    .catch(() => {});
}

function setNameError(message) {
  const err = $('agent-name-error');
  const input = $('agent-name');
  err.textContent = message || '';
  err.hidden = !message;
  $('agent-name-field').classList.toggle('invalid', !!message);
  if (message) input.setAttribute('aria-invalid', 'true');
  else input.removeAttribute('aria-invalid');
}

function showFormError(message) {
  const el = $('agent-error');
  el.textContent = message || '';
  el.hidden = !message;
}

function setBusy(on) {
  busy = on;
  const btn = $('agent-create');
  btn.disabled = on;
  btn.textContent = on ? 'Creating…' : 'Create token';
  $('agent-cancel').disabled = on;
  $('agent-x').disabled = on;
  $('agent-form').setAttribute('aria-busy', String(on));
}

async function create() {
  if (busy) return;
  const input = $('agent-name');
  const name = normalizeAgentName(input.value);
  const problem = validateAgentName(name);
  if (problem) {
    setNameError(problem);
    input.focus();
    return;
  }
  setNameError(null);
  showFormError(null);
  setBusy(true);
  let agent;
  try {
    agent = await deps.api.post('/v1/agents', { name });
  } catch (err) {
    setBusy(false);
    const message = createAgentError(err, name);
    if (err && (err.status === 409 || err.status === 422)) {
      setNameError(message);
      input.focus();
      input.select();
    } else showFormError(message);
    return;
  }
  setBusy(false);
  if (!$('agent-dialog').open) return; // closed while waiting: the token is not shown later
  showResult(agent || {}, name);
  if (deps.onCreated) deps.onCreated({ name: (agent && agent.name) || name });
}

function codeBlock(text, label, copyLabel, wrap) {
  // A command wraps; JSON keeps its indentation and scrolls sideways on a narrow screen.
  // Focusable so that a long block scrolls with the keyboard.
  const pre = h('pre', { class: `code-block${wrap ? '' : ' code-block-nowrap'}`, tabindex: '0' }, text);
  return h(
    'div',
    { class: 'code-wrap' },
    h('div', { class: 'code-head' }, h('span', { class: 'code-kind' }, label), copyButton(() => text, 'Copy', copyLabel)),
    pre,
  );
}

function showResult(agent, fallbackName) {
  const name = typeof agent.name === 'string' && agent.name ? agent.name : fallbackName;
  const token = typeof agent.token === 'string' ? agent.token : '';
  const mcpUrl = typeof agent.mcpUrl === 'string' ? agent.mcpUrl : '';
  const configs = orderConfigs(agent.configs);
  const root = $('agent-result');
  clear(root);

  const warning = h(
    'div',
    { class: 'callout callout-warn', role: 'alert' },
    h('span', { class: 'callout-icon', 'aria-hidden': 'true' }, '!'),
    h(
      'div',
      {},
      h('strong', {}, 'Copy it now: the token is shown only once.'),
      h('p', { class: 'callout-text' }, `Taskdeck keeps only a fingerprint of it. If it is lost, make a new one under the same name (its tasks stay its own): taskdeck token revoke ${name} && taskdeck token create ${name}.`),
    ),
  );
  const intro = h('p', { class: 'agent-intro' }, 'Token created for ', h('strong', {}, name), '. Set up its MCP client:');

  const tabIds = configs.map(() => uid('agent-tab'));
  const panelIds = configs.map(() => uid('agent-panel'));
  const tabs = [];
  const panels = [];
  const select = (i, focus) => {
    tabs.forEach((t, j) => {
      const on = i === j;
      t.setAttribute('aria-selected', String(on));
      t.tabIndex = on ? 0 : -1;
      panels[j].hidden = !on;
    });
    if (focus) tabs[i].focus();
  };
  configs.forEach((c, i) => {
    const tab = h('button', { type: 'button', role: 'tab', id: tabIds[i], class: 'tab', 'aria-controls': panelIds[i], dataset: { client: c.client } }, c.title);
    tab.addEventListener('click', () => select(i, false));
    tab.addEventListener('keydown', (e) => {
      const to = tabKeyTarget(e.key, i, configs.length);
      if (to === null) return;
      e.preventDefault();
      select(to, true);
    });
    tabs.push(tab);
    const note = configNote(c);
    panels.push(
      h(
        'div',
        { role: 'tabpanel', id: panelIds[i], class: 'tab-panel', 'aria-labelledby': tabIds[i], dataset: { client: c.client } },
        h('dl', { class: 'where' }, h('dt', {}, c.kind === 'command' ? 'Where' : 'File'), h('dd', {}, c.kind === 'command' ? c.target : h('code', {}, c.target))),
        codeBlock(c.text, { command: 'Command', toml: 'TOML' }[c.kind] || 'JSON', `Copy the ${c.title} ${c.kind === 'command' ? 'command' : 'configuration'}`, c.kind === 'command'),
        note ? h('p', { class: 'field-hint' }, note) : null,
      ),
    );
  });

  const other = h(
    'details',
    { class: 'agent-other' },
    h('summary', {}, 'Another client'),
    h('p', { class: 'field-hint' }, 'Any MCP client that speaks Streamable HTTP works: give it the URL, and send the token as a bearer token.'),
    h(
      'dl',
      { class: 'where where-stack' },
      h('dt', {}, 'MCP URL'),
      h('dd', {}, h('code', { class: 'agent-url' }, mcpUrl), copyButton(() => mcpUrl, 'Copy', 'Copy the MCP URL')),
      h('dt', {}, 'Header'),
      h('dd', {}, h('code', { class: 'agent-token' }, `Authorization: Bearer ${token}`), copyButton(() => `Authorization: Bearer ${token}`, 'Copy', 'Copy the Authorization header')),
    ),
  );

  const done = h('button', { type: 'button', class: 'btn btn-primary' }, 'Done');
  done.addEventListener('click', closeDialog);
  const another = h('button', { type: 'button', class: 'btn' }, 'Connect another');
  another.addEventListener('click', () => {
    clear(root);
    root.hidden = true;
    $('agent-form').hidden = false;
    $('agent-name').value = '';
    setNameError(null);
    showFormError(null);
    $('agent-name').focus();
    loadNamesInUse();
  });

  root.append(
    warning,
    intro,
    configs.length ? h('div', { class: 'tabs', role: 'tablist', 'aria-label': 'MCP client' }, tabs) : null,
    ...panels,
    other,
    h('div', { class: 'dialog-actions' }, another, done),
  );
  $('agent-form').hidden = true;
  root.hidden = false;
  if (configs.length) select(0, true);
  else done.focus();
}
