// One approval opened in the inbox: the call exactly as asked (server, tool, principal,
// arguments pretty-printed, digest; a call whose credentials are masked can be shown whole, as
// the agent sent it, since a masked value may be part of the command), an editor for approving it with edited arguments (JSON, or
// the tool's form when its inputSchema is a flat object of simple fields), and a deny form whose
// reason the agent receives. Errors of an edit (the page's checks, or the server's 422) show
// next to the editor. Where the question offers it, an "Always allow" box: ticked, approving
// also saves the call's narrow policy rule. `hasUnsentEdit` tells whether the editor holds an edit not yet sent (the
// queue's `a`, approving as asked, must not drop it unseen).

import { h, uid } from './dom.js';
import { prettyJson, hidesText } from './format.js';
import { validateField, REASON_MAX_CHARS } from './form-schema.js';
import { checkEdited, errorText, formFields, formValues, formArguments, isUnsentEdit, editorText } from './edited-arguments.js';
import { jsonEqual } from './json-diff.js';
import { shortDigest } from './approvals-model.js';
import { clampedText } from './clamp.js';
import { stringifyJson } from './exact-json.js';

/** A simple input for one form field (the elicitation subset); returns {el, read()}. */
function fieldInput(f, value, id) {
  if (f.kind === 'boolean') {
    const input = h('input', { id, type: 'checkbox', checked: value === true });
    return { el: input, read: () => input.checked };
  }
  if (f.kind === 'select') {
    const select = h('select', { id }, h('option', { value: '' }, '(none)'), f.options.map((o, i) => h('option', { value: String(i), selected: value === o.value }, o.label)));
    return { el: select, read: () => (select.value === '' ? null : f.options[Number(select.value)].value) };
  }
  if (f.kind === 'multiselect') {
    const boxes = f.options.map((o) => h('input', { type: 'checkbox', checked: Array.isArray(value) && value.includes(o.value), 'aria-label': o.label }));
    const el = h('span', { id, class: 'choice-row' }, f.options.map((o, i) => h('label', {}, boxes[i], ` ${o.label}`)));
    return { el, read: () => f.options.filter((o, i) => boxes[i].checked).map((o) => o.value) };
  }
  const input = h('input', { id, type: 'text', spellcheck: 'false', autocomplete: 'off', class: 'mono' });
  input.value = value ?? '';
  return { el: input, read: () => input.value };
}

/**
 * @param {import('./approvals-model.js').Approval} a
 * @param {{approve: (args?: object) => Promise<{errors?: {path: string, message: string}[]}|void>,
 *          deny: (reason: string) => Promise<void>, openTask: () => void,
 *          reveal?: () => Promise<{arguments: object}>, decides?: boolean}} deps
 *   `reveal` fetches the call as the agent sent it (`a.hiddenValues`: its shown arguments mask
 *   credentials).
 *   `approve` resolves with `errors` when the server refused the edit (422). `decides: false`
 *   (a page signed in as an agent): the call is shown, with no way to decide it.
 */
/**
 * Marks `button` as sending (true when it already was: a second press does nothing). Not
 * `disabled`: a disabled button drops the focus to the page, and the queue would not know to
 * hand it to the row that takes the decided one's place (the next `a` then acted elsewhere).
 */
function sending(button) {
  if (button.getAttribute('aria-disabled') === 'true') return true;
  button.setAttribute('aria-disabled', 'true');
  return false;
}

function sent(button) {
  button.removeAttribute('aria-disabled');
}

/** Questions (`taskId/key`) whose hidden values were shown in this page: read whole, from the
 *  queue or from the task's own form, they may be approved from either. */
const readHere = new Set();

/** Whether question `id` (`taskId/key`) was read whole in this page ([`revealControl`]). */
export function wasReadWhole(id) {
  return readHere.has(id);
}

/**
 * "Show hidden values": swaps `argsBlock`'s masked call (`shownArgs`) for the call as the agent
 * sent it (fetched with `fetchRevealed` each time: the server holds it only while the question
 * is open, and records who read it), and back with "Hide values". `onlyRevealed`: the block is
 * shown only while it holds the revealed call; `onRevealed` is called when it was shown; `id`
 * (`taskId/key`) is remembered as read whole ([`wasReadWhole`]). Returns
 * `{el, wasRevealed(), focus()}`: `wasRevealed` tells whether the call was read whole in this
 * page once (here, or under `id` elsewhere).
 */
export function revealControl(shownArgs, argsBlock, fetchRevealed, { id, onlyRevealed = false, onRevealed = () => {} } = {}) {
  const button = h('button', { type: 'button', class: 'btn btn-small approval-reveal' }, 'Show hidden values');
  const note = h('span', { class: 'muted approval-reveal-note', role: 'status' });
  let shown = false;
  let once = false;
  const show = (args, revealed) => {
    shown = revealed;
    once ||= revealed;
    argsBlock.textContent = prettyJson(args ?? {});
    argsBlock.hidden = onlyRevealed && !revealed;
    argsBlock.classList.toggle('revealed', revealed);
    argsBlock.setAttribute('aria-label', revealed ? 'Arguments as they would run' : 'Arguments');
    button.textContent = revealed ? 'Hide values' : 'Show hidden values';
    note.textContent = revealed ? 'Whole, as it would run: approving runs exactly this. The task’s timeline records that you read it.' : '';
  };
  button.addEventListener('click', async () => {
    if (shown) return show(shownArgs, false);
    if (sending(button)) return;
    try {
      show((await fetchRevealed()).arguments, true);
      if (id) readHere.add(id);
      onRevealed();
    } catch (err) {
      note.textContent = `Not shown: ${err && err.message ? err.message : err}`;
    } finally {
      sent(button);
    }
  });
  return { el: h('div', { class: 'approval-reveal-row' }, button, note), wasRevealed: () => once || Boolean(id && readHere.has(id)), focus: () => button.focus() };
}

export function approvalCard(a, deps) {
  const call = h(
    'dl',
    { class: 'approval-call' },
    h('div', {}, h('dt', {}, 'Server'), h('dd', {}, h('code', {}, a.server || '–'))),
    h('div', {}, h('dt', {}, 'Tool'), h('dd', {}, h('code', {}, a.tool || '–'))),
    h('div', {}, h('dt', {}, 'Principal'), h('dd', {}, a.principal || '–')),
    h('div', {}, h('dt', {}, 'Digest'), h('dd', {}, h('code', { class: 'approval-digest', title: a.digest || '' }, shortDigest(a.digest)))),
  );
  const why = a.verdict && a.verdict.reason ? h('p', { class: 'muted approval-verdict' }, `Why it asks: ${a.verdict.reason}`) : null;
  const argsBlock = h('pre', { class: 'json approval-args-full', 'aria-label': 'Arguments' }, prettyJson(a.arguments ?? {}));
  const reveal = a.hiddenValues && deps.decides !== false && deps.reveal ? revealControl(a.arguments, argsBlock, deps.reveal, { id: `${a.taskId}/${a.key}` }) : null;
  const el = h('div', { class: 'approval-body' }, a.message ? clampedText('p', { class: 'approval-message' }, a.message) : null, call, why, argsBlock, reveal && reveal.el);

  const openBtn = h('button', { type: 'button', class: 'btn btn-link approval-open-task' }, 'Open the task');
  openBtn.addEventListener('click', () => deps.openTask());
  if (deps.decides === false) {
    el.append(h('p', { class: 'muted approval-person-only' }, 'A person decides this call (the admin or a human token); this page is signed in as an agent.'), openBtn);
    const nothing = () => {};
    return { el, showErrors: nothing, focusReason: nothing, focusEditor: nothing, canEdit: false, hasUnsentEdit: () => false, alwaysAllow: () => false, readWhole: () => !a.hiddenValues, focusReveal: nothing };
  }

  // ------------------------------------------------ edit, then approve
  let editor = null;
  const errorsBox = h('ul', { class: 'approval-edit-errors form-error', role: 'alert', hidden: true });
  const showErrors = (errors) => {
    errorsBox.replaceChildren(...errors.map((e) => h('li', {}, errorText(e))));
    errorsBox.hidden = errors.length === 0;
  };
  if (a.kind === 'call' && a.editable) {
    // A form's inputs cannot show what hides or reorders text, nor keep a line break in a
    // one-line field, nor an argument the schema does not name: such a call is edited as JSON
    // only, where it reads as it is.
    const schemaFields = hidesText(a.arguments) ? null : formFields(a.inputSchema);
    const named = (k) => schemaFields.some((f) => f.name === k);
    const fields = schemaFields && Object.keys(a.arguments ?? {}).every(named) ? schemaFields : null;
    const jsonId = uid('edit-json');
    const textarea = h('textarea', { id: jsonId, class: 'mono approval-json', rows: 6, spellcheck: 'false' });
    textarea.value = editorText(a.arguments);
    const jsonPane = h('div', { class: 'approval-json-pane' }, h('label', { for: jsonId, class: 'field-label' }, 'Edited arguments (JSON)'), textarea);
    let formPane = null;
    let inputs = null;
    let mode = 'json';
    const readForm = () => {
      const values = {};
      for (const f of fields) values[f.name] = inputs.get(f.name).read();
      return values;
    };
    const buildForm = (args) => {
      inputs = new Map();
      const values = formValues(fields, args);
      formPane.replaceChildren(
        ...fields.map((f) => {
          const id = uid('edit-field');
          const input = fieldInput(f, values[f.name], id);
          inputs.set(f.name, input);
          return h('div', { class: `field field-${f.kind}` }, h('label', { for: id, class: 'field-label' }, f.label, f.required ? h('span', { class: 'req' }, ' (required)') : null), input.el);
        }),
      );
    };
    const modeBtn = fields ? h('button', { type: 'button', class: 'btn btn-small approval-mode' }, 'Edit as a form') : null;
    if (fields) {
      formPane = h('div', { class: 'approval-form-pane', hidden: true });
      modeBtn.addEventListener('click', () => {
        if (mode === 'json') {
          const checked = checkEdited(textarea.value, null);
          if (checked.errors.length) return showErrors(checked.errors);
          buildForm(checked.value);
          mode = 'form';
        } else {
          textarea.value = editorText(formArguments(fields, readForm(), a.arguments));
          mode = 'json';
        }
        showErrors([]);
        jsonPane.hidden = mode !== 'json';
        formPane.hidden = mode !== 'form';
        modeBtn.textContent = mode === 'json' ? 'Edit as a form' : 'Edit as JSON';
      });
    }
    /** The edited arguments after the page's checks, or null (the errors are shown). */
    const edited = () => {
      if (mode === 'form') {
        const values = readForm();
        const errors = fields.map((f) => ({ path: `/${f.name}`, message: validateField(f, values[f.name]) })).filter((e) => e.message);
        if (errors.length) return showErrors(errors), null;
        const args = formArguments(fields, values, a.arguments);
        const checked = checkEdited(stringifyJson(args), a.inputSchema);
        return checked.errors.length ? (showErrors(checked.errors), null) : args;
      }
      const checked = checkEdited(textarea.value, a.inputSchema);
      if (checked.errors.length) return showErrors(checked.errors), null;
      return checked.value;
    };
    const approveEdited = h('button', { type: 'button', class: 'btn btn-primary approval-approve-edited' }, 'Approve edited call');
    const run = async () => {
      const args = edited();
      if (!args || sending(approveEdited)) return;
      showErrors([]);
      try {
        // Unchanged (layout aside), it is the call as asked: approved, and said, as that.
        const r = await deps.approve(changed() ? args : undefined);
        if (r && r.errors) showErrors(r.errors);
      } finally {
        sent(approveEdited);
      }
    };
    approveEdited.addEventListener('click', run);
    textarea.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
        e.preventDefault();
        run();
      }
    });
    textarea.addEventListener('input', () => showErrors([]));
    /** Whether the editor (JSON or the form) shows other arguments than the call as asked. */
    const changed = () => {
      if (mode === 'json') return isUnsentEdit(textarea.value, a.arguments);
      try {
        return !jsonEqual(formArguments(fields, readForm(), a.arguments), formArguments(fields, formValues(fields, a.arguments), a.arguments));
      } catch {
        return true;
      }
    };
    editor = { focus: () => (mode === 'json' ? textarea.focus() : formPane.querySelector('input,select')?.focus()), changed };
    el.appendChild(
      h(
        'section',
        { class: 'approval-edit', 'aria-label': 'Approve with edited arguments' },
        h('div', { class: 'approval-edit-head' }, h('strong', {}, 'Approve with changes'), modeBtn),
        jsonPane,
        formPane,
        errorsBox,
        h('div', { class: 'approval-actions' }, approveEdited, h('span', { class: 'muted' }, 'Ctrl+Enter in the editor')),
      ),
    );
  } else if (a.kind === 'call') {
    el.appendChild(h('p', { class: 'muted' }, 'This call cannot be edited: approve it as asked, or deny it.'));
  }

  // ------------------------------------------------ always allow
  // Offered where the question offers it (not for a call holding credentials, nor one an ask
  // rule decided): checked, the approval (as asked, or edited) also saves its narrow rule.
  const always = a.kind === 'call' ? a.requestedSchema?.properties?.alwaysAllow : null;
  let alwaysBox = null;
  if (always) {
    alwaysBox = h('input', { type: 'checkbox', class: 'approval-always-allow' });
    el.appendChild(h('label', { class: 'approval-always' }, alwaysBox, ` ${always.title || 'Always allow this call'}`, h('span', { class: 'muted' }, ' (when you approve: a rule is added to the policy)')));
  }

  // ------------------------------------------------ deny with a reason
  const reasonId = uid('deny-reason');
  const reason = h('input', { id: reasonId, type: 'text', class: 'approval-reason', autocomplete: 'off', maxlength: String(REASON_MAX_CHARS), placeholder: 'e.g. use the staging database' });
  const denyBtn = h('button', { type: 'submit', class: 'btn btn-danger approval-deny-submit' }, 'Deny');
  const denyForm = h('form', { class: 'approval-deny-form', novalidate: true }, h('label', { for: reasonId, class: 'field-label' }, 'Reason the agent receives'), h('div', { class: 'approval-actions' }, reason, denyBtn));
  denyForm.addEventListener('submit', async (e) => {
    e.preventDefault();
    if (sending(denyBtn)) return;
    try {
      await deps.deny(reason.value);
    } finally {
      sent(denyBtn);
    }
  });
  el.appendChild(denyForm);
  el.appendChild(openBtn);

  return {
    el,
    showErrors,
    focusReason: () => reason.focus(),
    focusEditor: () => (editor ? editor.focus() : reason.focus()),
    canEdit: Boolean(editor),
    hasUnsentEdit: () => Boolean(editor && editor.changed()),
    /** Whether "Always allow" is ticked: the approval saves its narrow rule too. */
    alwaysAllow: () => Boolean(alwaysBox && alwaysBox.checked),
    /** False for a call with hidden values until they were shown here once. */
    readWhole: () => !a.hiddenValues || wasReadWhole(`${a.taskId}/${a.key}`),
    focusReveal: () => reveal && reveal.focus(),
  };
}
