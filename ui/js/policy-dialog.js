// The Policies dialog (admin only): the approval policy's rules in order (first match wins),
// each with its principal, server, tool, argument patterns, decision (with an ask's own
// terms), note and creation time; a rule can be moved up or down, or revoked; a small form
// adds one at the end. Reads and writes /v1/policy (the server keeps the rules in
// policy.json). Every write names the version of the file it was made to (If-Match): when the
// file changed meanwhile (another admin, a human's "always allow", a hand edit), nothing is
// written, the dialog shows the rules as they are now and says to make the change again, so
// an open dialog never writes an old copy over rules added since. A rule that can never match
// (written into the file by hand) is marked with why; the other rules can still be changed. Rules and words live in
// policies.js (unit-tested).

import { h, clear, $, inflate } from './dom.js';
import { moveRule, ruleFromForm, describeArguments, describeTerms, createdText, ruleSummary } from './policies.js';

let deps = null;
let opener = null;
/** The rules as last read or stored. */
let rules = [];
/** The file's version those rules came from, and its approval terms (kept as they are). */
let version = null;
let approval = null;
/** Rule id → why it can never match a call (a hand edit of policy.json; the server says). */
let neverMatching = new Map();
let busy = false;

/**
 * @param {{api: {get: Function, put: Function, del: Function}, announce: (text: string) => void,
 *   toast: (text: string, tone?: string) => void, confirm: typeof import('./dialogs.js').confirmDialog}} d
 */
export function initPolicyDialog(d) {
  deps = d;
  // index.html keeps the dialog's content in a template until this module has loaded.
  const dialog = inflate($('policy-dialog'));
  $('policy-form').addEventListener('submit', (e) => {
    e.preventDefault();
    add();
  });
  $('policy-close').addEventListener('click', () => dialog.close());
  $('policy-x').addEventListener('click', () => dialog.close());
  dialog.addEventListener('close', () => {
    if (opener && opener.isConnected) opener.focus();
    opener = null;
  });
}

export function openPolicyDialog() {
  const dialog = $('policy-dialog');
  if (dialog.open) return;
  opener = document.activeElement instanceof HTMLElement ? document.activeElement : null;
  showError(null);
  dialog.showModal();
  reload();
}

function showError(text) {
  $('policy-error').textContent = text || '';
  $('policy-error').hidden = !text;
}

function problemText(err) {
  return err && err.problem && err.problem.detail ? err.problem.detail : err && err.message ? err.message : String(err);
}

async function reload() {
  try {
    const r = await deps.api.get('/v1/policy');
    took(r);
    // A file that is not valid holds rules this dialog cannot show: adding one here would
    // replace them all, so nothing is written until the file is fixed.
    $('policy-problem').textContent = r.problem
      ? `The policy file is not valid, so none of its rules apply: ${r.problem}. Fix the file (its rules are kept as they are); this dialog changes nothing until then.`
      : '';
    $('policy-problem').hidden = !r.problem;
    $('policy-add').disabled = Boolean(r.problem);
    render();
  } catch (err) {
    showError(`Could not read the policy: ${problemText(err)}`);
  }
}

/** Takes what the server answered: the rules, the file's version and its approval terms. */
function took(r) {
  rules = Array.isArray(r.rules) ? r.rules : [];
  version = typeof r.version === 'string' ? r.version : null;
  approval = r.approval && typeof r.approval === 'object' ? r.approval : null;
  neverMatching = new Map((Array.isArray(r.neverMatching) ? r.neverMatching : []).map((w) => [w.rule, w.why]));
}

/** Stores `next` as the whole rule list, if the file is still the version it was read at;
 *  true when it was stored. */
async function store(next, done) {
  if (busy) return false;
  busy = true;
  showError(null);
  let stale = false;
  try {
    const body = approval ? { rules: next, approval } : { rules: next };
    const r = await deps.api.put('/v1/policy', body, version ? { 'If-Match': `"${version}"` } : undefined);
    took(r);
    render();
    deps.announce(done);
    return true;
  } catch (err) {
    stale = err && err.status === 412;
    showError(
      stale
        ? 'The policy changed while this dialog was open (another admin, an “always allow”, or an edit of policy.json), so nothing was saved. The rules below are the current ones: make your change again.'
        : `Could not save the policy: ${problemText(err)}`,
    );
    return false;
  } finally {
    busy = false;
    if (stale) await reload();
  }
}

/** Revokes `rule` once confirmed (it names the rule: what it decides, for whom, its arguments
 *  and note), then says so. */
async function revoke(rule) {
  if (busy) return;
  const summary = ruleSummary(rule);
  const ok = await deps.confirm({
    title: 'Revoke this rule?',
    body: [
      h('p', {}, h('strong', {}, summary)),
      rule.arguments && Object.keys(rule.arguments).length ? h('p', {}, `Arguments: ${describeArguments(rule.arguments, rule)}`) : null,
      rule.note ? h('p', {}, `Note: ${rule.note}`) : null,
      h('p', { class: 'muted' }, 'Calls it decided will be decided by the rules after it, or by the default (read-only tools run, the others ask). It cannot be undone here: add the rule again to bring it back.'),
    ].filter(Boolean),
    confirmLabel: 'Revoke rule',
    cancelLabel: 'Keep it',
  });
  if (!ok || busy) return;
  busy = true;
  showError(null);
  try {
    await deps.api.del(`/v1/policy/rules/${encodeURIComponent(rule.id)}`);
    deps.announce(`Rule revoked: ${summary}.`);
    deps.toast(`Rule revoked: ${summary}.`, 'info');
  } catch (err) {
    showError(`Could not revoke the rule: ${problemText(err)}`);
  } finally {
    busy = false;
  }
  const at = rules.findIndex((r) => r.id === rule.id);
  await reload();
  // Its button went with it: the focus goes to the rule now in its place (else the close button).
  const next = $('policy-rules').querySelectorAll('.policy-revoke')[Math.max(0, at)];
  (next || $('policy-x')).focus();
}

async function add() {
  const value = (id) => $(id).value;
  const { rule, error } = ruleFromForm({
    principal: value('policy-principal'),
    server: value('policy-server'),
    tool: value('policy-tool'),
    argumentLines: value('policy-arguments'),
    decision: value('policy-decision'),
    note: value('policy-note'),
  });
  if (error) {
    showError(error);
    return;
  }
  if (await store([...rules, rule], 'Rule added at the end.')) {
    for (const id of ['policy-principal', 'policy-server', 'policy-tool', 'policy-arguments', 'policy-note']) $(id).value = '';
  }
}

function move(rule, delta) {
  const next = moveRule(rules, rule.id, delta);
  if (next !== rules) store(next, `Rule ${rule.id} moved ${delta < 0 ? 'up' : 'down'}.`);
}

function render() {
  const box = clear($('policy-rules'));
  if (!rules.length) {
    box.append(h('p', { class: 'muted policy-empty' }, 'No rules: every call gets its default (read-only tools run, the others ask).'));
    return;
  }
  const head = ['#', 'Principal', 'Server', 'Tool', 'Arguments', 'Decision', 'Note', 'Created', ''];
  const rows = rules.map((rule, i) => {
    const summary = ruleSummary(rule);
    return h(
      'tr',
      { dataset: { ruleId: rule.id } },
      // Each cell names its column (`data-label`): a narrow dialog shows rules as cards of labelled lines.
      h('td', { class: 'policy-pos', dataset: { label: '#' } }, String(i + 1)),
      h('td', { dataset: { label: 'Principal' } }, h('code', {}, rule.principal)),
      h('td', { dataset: { label: 'Server' } }, h('code', {}, rule.server)),
      h('td', { dataset: { label: 'Tool' } }, h('code', {}, rule.tool)),
      h(
        'td',
        { class: 'policy-args', dataset: { label: 'Arguments' } },
        h(
          'div',
          {},
          describeArguments(rule.arguments, rule),
          neverMatching.has(rule.id) ? h('div', { class: 'form-error policy-never' }, `Matches no call, so it decides nothing: ${neverMatching.get(rule.id)}. Revoke it, or fix it in policy.json.`) : null,
        ),
      ),
      h(
        'td',
        { dataset: { label: 'Decision' } },
        h(
          'div',
          {},
          h('span', { class: `pill decision decision-${rule.decision}` }, rule.decision),
          rule.decision === 'ask' && describeTerms(rule.approval) ? h('div', { class: 'muted policy-terms' }, describeTerms(rule.approval)) : null,
        ),
      ),
      h('td', { class: 'policy-note', dataset: { label: 'Note' } }, rule.note || ''),
      h('td', { class: 'policy-created', dataset: { label: 'Created' } }, createdText(rule.createdAtMs)),
      h(
        'td',
        { class: 'policy-actions' },
        h('button', { type: 'button', class: 'btn btn-icon btn-quiet', 'aria-label': `Move up: ${summary}`, title: 'Move up', disabled: i === 0, onclick: () => move(rule, -1) }, '↑'),
        h('button', { type: 'button', class: 'btn btn-icon btn-quiet', 'aria-label': `Move down: ${summary}`, title: 'Move down', disabled: i === rules.length - 1, onclick: () => move(rule, 1) }, '↓'),
        h('button', { type: 'button', class: 'btn btn-danger policy-revoke', 'aria-label': `Revoke: ${summary}`, onclick: () => revoke(rule) }, 'Revoke'),
      ),
    );
  });
  box.append(
    h(
      'table',
      { class: 'policy-table' },
      h('caption', { class: 'muted' }, 'The first rule that matches a call decides it.'),
      h('thead', {}, h('tr', {}, head.map((t) => h('th', { scope: 'col' }, t)))),
      h('tbody', {}, rows),
    ),
  );
}
