// One outstanding input request rendered as a form (from its requestedSchema), checked in the
// browser before it is sent, with Accept / Decline / Dismiss. A form without a `reason` field of
// its own gets an optional reason box next to Decline: a Decline sends what was typed in it as
// `content.reason`, which the agent reads ("Declined. Their reason: …"); Enter in that box, or
// in an approval's own reason field, declines (not the form's Accept). An approval question's
// form (a call waiting for a person) reads as the approval queue does, Approve / Deny (no
// Dismiss: dismissing a call denies it, which Deny says plainly, and a "Cancel" there would read
// as the pane's "Cancel task…"), and starts its "Edited arguments" field with the call as
// asked, as the queue's editor does. A text field
// whose name says it holds a credential (`api_password`, `token`: form-schema.js isSecretName)
// is masked, with a Show / Hide toggle, and what is typed in it is written nowhere else.

import { h, uid } from './dom.js';
import { describeForm, initialValues, validateForm, validateField, toContent, declineContent, hasOwnReason, answerHelp, answerVerb, REASON_MAX_CHARS } from './form-schema.js';
import { approvalFormValues, approvalContent, checkEdited, errorText } from './edited-arguments.js';
import { clampedText } from './clamp.js';
import { revealControl } from './approval-card.js';
import { hidesText, shownPlainly } from './format.js';

/** Kinds whose control holds the answer as text the person reads in an input. */
const TEXT_KINDS = new Set(['text', 'email', 'uri', 'date', 'date-time', 'number', 'integer', 'json']);

/**
 * A note under a text field whose value holds characters that hide or reorder text (a default
 * an agent gave, or pasted text): the input shows it as the browser draws it, so the note
 * writes it out (`\u{202e}`) for the person to read what they would send. The value itself is
 * sent as it stands. In a box of several lines (`multiline`) a line break or a tab shows as
 * itself: it is none of those.
 */
function hiddenCharsNote(id) {
  const el = h('div', { id, class: 'field-hint field-hidden-chars', hidden: true });
  return {
    el,
    /** `masked`: the value is a secret shown masked, which the note does not write out either. */
    show(value, multiline = false, masked = false) {
      const hides = typeof value === 'string' && hidesText(multiline ? value.replace(/[\n\t]/g, '') : value);
      el.hidden = !hides;
      el.textContent = !hides ? '' : masked ? 'Holds hidden or reordering characters: Show writes them out.' : `Holds hidden or reordering characters; written out it reads: ${shownPlainly(value, multiline)}`;
    },
  };
}

/**
 * A secret field's control (`f.secret`): a password box the browser neither fills in nor offers
 * to save (an agent's form is no sign-in form), not spell-checked (its words would go to a
 * dictionary service). A private key (its name says `private`) keeps its lines, so it is a box
 * of several lines, masked by the stylesheet. "Show" shows what is typed, "Hide" masks it again.
 * `onToggle` is called after each.
 */
function secretControl(f, value, attrs, onChange, onToggle) {
  const multiline = /private/i.test(f.name);
  const input = multiline
    ? h('textarea', { ...attrs, class: 'mono secret-masked', rows: 4 })
    : h('input', { ...attrs, type: 'password' });
  for (const [k, v] of Object.entries({ autocomplete: 'new-password', spellcheck: 'false', autocapitalize: 'off', autocorrect: 'off' })) input.setAttribute(k, v);
  input.value = value ?? '';
  input.addEventListener('input', onChange);
  const toggle = h('button', { type: 'button', class: 'btn secret-toggle', 'aria-pressed': 'false', 'aria-controls': attrs.id, 'aria-label': `Show ${f.label}` }, 'Show');
  let shown = false;
  toggle.addEventListener('click', () => {
    shown = !shown;
    if (multiline) input.classList.toggle('secret-masked', !shown);
    else input.type = shown ? 'text' : 'password';
    toggle.textContent = shown ? 'Hide' : 'Show';
    toggle.setAttribute('aria-label', `${shown ? 'Hide' : 'Show'} ${f.label}`);
    toggle.setAttribute('aria-pressed', String(shown));
    onToggle();
  });
  const el = h('div', { class: 'secret-row' }, input, toggle);
  return { el, read: () => input.value, focus: () => input.focus(), inputs: [input], masked: () => !shown, multiline };
}

function hintFor(f) {
  const parts = [];
  const range = (lo, hi, unit) => {
    if (lo !== undefined && hi !== undefined) return lo === hi ? `exactly ${lo}${unit}` : `${lo}–${hi}${unit}`;
    if (lo !== undefined) return `at least ${lo}${unit}`;
    if (hi !== undefined) return `at most ${hi}${unit}`;
    return null;
  };
  switch (f.kind) {
    case 'text':
    case 'email':
    case 'uri': {
      if (f.kind === 'email') parts.push('Email address');
      if (f.kind === 'uri') parts.push('Full URL');
      if (f.secret) parts.push('A secret: shown masked (Show to check it), and nowhere else');
      const r = range(f.minLength, f.maxLength, ' characters');
      if (r) parts.push(r[0].toUpperCase() + r.slice(1));
      break;
    }
    case 'date':
      parts.push('Date (YYYY-MM-DD)');
      break;
    case 'date-time':
      parts.push('Date and time, your local time');
      break;
    case 'number':
    case 'integer': {
      parts.push(f.kind === 'integer' ? 'Whole number' : 'Number');
      const r = range(f.minimum ?? f.exclusiveMinimum, f.maximum ?? f.exclusiveMaximum, '');
      if (r) parts.push(r);
      break;
    }
    case 'multiselect': {
      const r = range(f.minItems, f.maxItems, '');
      parts.push(r ? `Choose ${r}` : 'Choose any');
      break;
    }
    case 'json':
      parts.push('JSON value');
      break;
    default:
      break;
  }
  return parts.join(' · ');
}

/** Builds the control(s) for one field; returns {el, read(), focus(), inputs}, and for a secret
 *  field `masked()` (whether it shows masked now) and `multiline`. */
function fieldControl(f, value, ids, onChange, onToggle) {
  const describedBy = [ids.hint, ids.revealed, ids.desc, ids.error].filter(Boolean).join(' ');
  const common = { id: ids.input, 'aria-describedby': describedBy || undefined, 'aria-required': f.required ? 'true' : undefined };
  if (f.secret) return secretControl(f, value, common, onChange, onToggle);
  switch (f.kind) {
    case 'boolean': {
      const input = h('input', { ...common, type: 'checkbox', checked: value === true });
      input.addEventListener('change', onChange);
      const el = h('div', { class: 'check-row' }, input, h('label', { for: ids.input }, f.label, f.required ? h('span', { class: 'req' }, ' (required)') : null));
      return { el, read: () => input.checked, focus: () => input.focus(), inputs: [input], labelled: true };
    }
    case 'select': {
      const radios = f.options.length <= 5;
      if (radios) {
        const inputs = f.options.map((o, i) => {
          const id = `${ids.input}-${i}`;
          const input = h('input', { type: 'radio', name: ids.input, id, value: String(i), checked: value === o.value });
          input.addEventListener('change', onChange);
          return { input, row: h('div', { class: 'check-row' }, input, h('label', { for: id }, o.label)) };
        });
        const el = h('div', { class: 'choice-list', role: 'radiogroup', 'aria-labelledby': ids.label, 'aria-describedby': describedBy || undefined, 'aria-required': f.required ? 'true' : undefined }, inputs.map((x) => x.row));
        if (!f.required) {
          const clearBtn = h('button', { type: 'button', class: 'btn btn-link' }, 'Clear choice');
          clearBtn.addEventListener('click', () => {
            for (const x of inputs) x.input.checked = false;
            onChange();
          });
          el.appendChild(clearBtn);
        }
        return {
          el,
          read: () => {
            const i = inputs.findIndex((x) => x.input.checked);
            return i >= 0 ? f.options[i].value : null;
          },
          focus: () => (inputs.find((x) => x.input.checked) || inputs[0]).input.focus(),
          inputs: inputs.map((x) => x.input),
        };
      }
      const select = h('select', common, h('option', { value: '' }, f.required ? 'Choose…' : '(no answer)'), f.options.map((o, i) => h('option', { value: String(i), selected: value === o.value }, o.label)));
      select.addEventListener('change', onChange);
      return { el: select, read: () => (select.value === '' ? null : f.options[Number(select.value)].value), focus: () => select.focus(), inputs: [select] };
    }
    case 'multiselect': {
      const chosen = new Set(Array.isArray(value) ? value : []);
      const inputs = f.options.map((o, i) => {
        const id = `${ids.input}-${i}`;
        const input = h('input', { type: 'checkbox', id, checked: chosen.has(o.value) });
        input.addEventListener('change', onChange);
        return { input, row: h('div', { class: 'check-row' }, input, h('label', { for: id }, o.label)) };
      });
      const el = h('div', { class: 'choice-list', role: 'group', 'aria-labelledby': ids.label, 'aria-describedby': describedBy || undefined }, inputs.map((x) => x.row));
      return { el, read: () => f.options.filter((o, i) => inputs[i].input.checked).map((o) => o.value), focus: () => inputs[0] && inputs[0].input.focus(), inputs: inputs.map((x) => x.input) };
    }
    case 'json': {
      const ta = h('textarea', { ...common, class: 'mono', rows: 4, spellcheck: 'false' });
      ta.value = value ?? '';
      ta.addEventListener('input', onChange);
      return { el: ta, read: () => ta.value, focus: () => ta.focus(), inputs: [ta] };
    }
    default: {
      const types = { text: 'text', email: 'email', uri: 'url', date: 'date', 'date-time': 'datetime-local', number: 'text', integer: 'text' };
      const long = f.kind === 'text' && (f.maxLength === undefined || f.maxLength > 120);
      const attrs = { ...common, spellcheck: f.kind === 'text' ? 'true' : 'false', autocomplete: 'off' };
      if (f.kind === 'number') attrs.inputmode = 'decimal';
      if (f.kind === 'integer') attrs.inputmode = 'numeric';
      if (f.kind === 'date-time') attrs.step = '1';
      // A long text starts as tall as its first value (an approval's edited arguments: the
      // call as asked, one line a key), up to 10 lines.
      const rows = Math.min(10, Math.max(2, String(value ?? '').split('\n').length));
      const input = long ? h('textarea', { ...attrs, rows }) : h('input', { ...attrs, type: types[f.kind] || 'text' });
      input.value = value ?? '';
      input.addEventListener('input', onChange);
      return { el: input, read: () => input.value, focus: () => input.focus(), inputs: [input] };
    }
  }
}

/**
 * The optional reason box next to Decline, for a form without a `reason` field of its own: the
 * agent reads what is typed in it. Enter in it declines (not the form's Accept); `decline` sends.
 */
function declineReasonBox(decline) {
  const box = h('input', { id: uid('decline-reason'), type: 'text', class: 'prompt-decline-reason', autocomplete: 'off', spellcheck: 'true', maxlength: String(REASON_MAX_CHARS) });
  box.addEventListener('keydown', (e) => {
    if (e.key !== 'Enter' || e.isComposing) return;
    e.preventDefault();
    decline();
  });
  return box;
}

/** A prompt card's head: its message (the card's title, `titleId`; clamped, with "Show all") and request key. */
function promptHead(prompt, titleId) {
  return h('div', { class: 'prompt-head' }, h('span', { class: 'prompt-icon', 'aria-hidden': 'true' }, '?'), h('div', { class: 'prompt-text' }, clampedText('h4', { id: titleId, class: 'prompt-message' }, prompt.message || 'The task asks for input.', { keepInView: '.prompt-card' }), h('div', { class: 'prompt-key muted' }, `Request key: ${prompt.key}`)));
}

/** For an approval whose arguments mask credentials: "Show hidden values" and the call as the
 *  agent sent it, once shown; otherwise null. */
function hiddenValuesRow(prompt, deps, onRevealed) {
  if (!prompt.approval || !prompt.approval.hiddenValues || !deps.reveal) return null;
  const block = h('pre', { class: 'json approval-args-full', 'aria-label': 'Arguments', hidden: true });
  const control = revealControl(prompt.approval.arguments, block, deps.reveal, { id: deps.taskId ? `${deps.taskId}/${prompt.key}` : undefined, onlyRevealed: true, onRevealed });
  return { el: h('div', { class: 'prompt-hidden-values' }, control.el, block), control };
}

/**
 * A request this viewer may not answer (`humanOnly`, and the page is not signed in as the admin):
 * its message and who can answer it, without a form. Same shape as `promptCard`'s card, marked
 * `locked`; keyboard shortcuts pass it by.
 * @param {{key: string, message: string}} prompt
 */
export function lockedPromptCard(prompt, why = 'Only the person using Taskdeck (signed in with the admin token or a human’s token) can answer this request. The task waits for their answer.') {
  const titleId = uid('prompt-title');
  const card = h(
    'section',
    { class: 'prompt-card prompt-locked', tabindex: -1, 'aria-labelledby': titleId, dataset: { key: prompt.key } },
    promptHead(prompt, titleId),
    h('p', { class: 'callout' }, why),
  );
  let gone = false;
  return {
    el: card,
    key: prompt.key,
    locked: true,
    markGone() {
      gone = true;
    },
    get gone() {
      return gone;
    },
    focus() {
      card.focus();
    },
  };
}

/**
 * @param {{key: string, message: string, schema: object, mode?: string, url?: string, approval?: object}} prompt
 *   `approval`: an approval question's `_meta["taskdeck/approval"]` (outstandingPrompts).
 * @param {{send: (key: string, response: object) => Promise<{accepted: string[], ignored: string[]}>,
 *          reveal?: () => Promise<{arguments: object}>, taskId?: string}} deps
 *   `reveal`: the call as the agent sent it, for an approval whose arguments mask credentials
 *   (`approval.hiddenValues`): "Show hidden values" under the question; `taskId`: the task's,
 *   so that the queue knows the call was read whole here.
 */
export function promptCard(prompt, deps) {
  const { fields } = describeForm(prompt.schema);
  const values = approvalFormValues(prompt.approval, fields, initialValues(fields));
  const errors = {};
  const touched = new Set();
  const titleId = uid('prompt-title');
  const formError = h('div', { class: 'form-error', role: 'alert', hidden: true });
  const controls = new Map();
  const errorEls = new Map();
  const fieldEls = new Map();

  const form = h('form', { class: 'prompt-form', novalidate: true, 'aria-labelledby': titleId });
  // Once read whole, the form's "read it first" error has done its work.
  const hidden = hiddenValuesRow(prompt, deps, () => showFormError(''));
  const card = h(
    'section',
    { class: 'prompt-card', tabindex: -1, 'aria-labelledby': titleId, dataset: { key: prompt.key } },
    promptHead(prompt, titleId),
    hidden && hidden.el,
    form,
  );

  if (prompt.mode && prompt.mode !== 'form') {
    form.appendChild(h('p', { class: 'muted' }, `This request uses the “${prompt.mode}” mode, which this page cannot show as a form. You can still decline or cancel it.`));
  }

  function refreshError(name) {
    const f = fields.find((x) => x.name === name);
    const msg = errors[name];
    const el = errorEls.get(name);
    el.textContent = msg || '';
    el.hidden = !msg;
    fieldEls.get(name).classList.toggle('invalid', !!msg);
    for (const input of controls.get(name).inputs) {
      if (msg) input.setAttribute('aria-invalid', 'true');
      else input.removeAttribute('aria-invalid');
    }
    return f;
  }

  for (const f of fields) {
    const ids = { input: uid('f'), label: uid('fl'), error: uid('fe'), hint: null, desc: null };
    const hint = hintFor(f);
    if (hint) ids.hint = uid('fh');
    const revealed = TEXT_KINDS.has(f.kind) ? hiddenCharsNote(uid('fx')) : null;
    ids.revealed = revealed?.el.id ?? null;
    if (f.description) ids.desc = uid('fd');
    const masked = () => Boolean(control.masked && control.masked());
    const onChange = () => {
      values[f.name] = control.read();
      touched.add(f.name);
      revealed?.show(values[f.name], multiline, masked());
      // Re-check a field as soon as it has shown an error, so the message goes away when fixed.
      if (errors[f.name] !== undefined) {
        const msg = validateField(f, values[f.name]);
        if (msg) errors[f.name] = msg;
        else delete errors[f.name];
        refreshError(f.name);
      }
    };
    const control = fieldControl(f, values[f.name], ids, onChange, () => revealed?.show(control.read(), multiline, masked()));
    const multiline = control.multiline ?? control.el.tagName === 'TEXTAREA';
    revealed?.show(values[f.name], multiline, masked());
    controls.set(f.name, control);
    const errorEl = h('div', { id: ids.error, class: 'field-error', hidden: true });
    errorEls.set(f.name, errorEl);
    const isGroup = f.kind === 'multiselect' || (f.kind === 'select' && f.options.length <= 5);
    const label = control.labelled
      ? null
      : isGroup
        ? h('div', { id: ids.label, class: 'field-label' }, f.label, f.required ? h('span', { class: 'req' }, ' (required)') : null)
        : h('label', { id: ids.label, for: ids.input, class: 'field-label' }, f.label, f.required ? h('span', { class: 'req' }, ' (required)') : null);
    const wrap = h(
      'div',
      { class: `field field-${f.kind}${f.secret ? ' field-secret' : ''}` },
      label,
      f.description ? h('div', { id: ids.desc, class: 'field-desc' }, f.description) : null,
      control.el,
      hint ? h('div', { id: ids.hint, class: 'field-hint' }, hint) : null,
      revealed?.el,
      errorEl,
    );
    fieldEls.set(f.name, wrap);
    form.appendChild(wrap);
    // Enter in an approval's reason field ("Reason, if you decline") denies, as in the added
    // reason box and the queue's deny reason: typing why not, then Enter, is no Approve.
    // Shift+Enter breaks a line. Another question's `reason` may be an answer: Enter there is
    // the form's own (it submits).
    if (prompt.approval && f.name === 'reason' && f.kind === 'text') {
      for (const input of control.inputs) {
        input.addEventListener('keydown', (e) => {
          if (e.key !== 'Enter' || e.isComposing || e.shiftKey || e.ctrlKey || e.metaKey || e.altKey) return;
          e.preventDefault();
          send('decline');
        });
      }
    }
    // A blur on a field the human typed in shows its problem (not before they have tried).
    for (const input of control.inputs) {
      input.addEventListener('blur', () => {
        if (!touched.has(f.name)) return;
        const msg = validateField(f, values[f.name]);
        if (msg) errors[f.name] = msg;
        else delete errors[f.name];
        refreshError(f.name);
      });
    }
  }
  if (!fields.length && (!prompt.mode || prompt.mode === 'form')) {
    form.appendChild(h('p', { class: 'muted' }, prompt.approval ? 'No form: answer with Approve or Deny.' : 'No form: answer with Accept or Decline.'));
  }

  // An approval's buttons read as the queue's do (Approve / Deny); another question's, as its answer.
  const words = prompt.approval ? { accept: 'Approve', decline: 'Deny' } : { accept: 'Accept', decline: 'Decline' };
  const acceptBtn = h('button', { type: 'submit', class: 'btn btn-primary', 'aria-keyshortcuts': 'a' }, words.accept);
  const declineBtn = h('button', { type: 'button', class: 'btn', 'aria-keyshortcuts': 'd' }, words.decline);
  const cancelBtn = prompt.approval ? null : h('button', { type: 'button', class: 'btn btn-quiet' }, 'Dismiss');
  const status = h('span', { class: 'prompt-status', role: 'status' });
  if (prompt.mode && prompt.mode !== 'form') acceptBtn.disabled = true;
  const declineBox = hasOwnReason(fields) ? null : declineReasonBox(() => send('decline'));
  form.appendChild(formError);
  form.appendChild(h('div', { class: 'prompt-actions' }, acceptBtn, declineBox ? h('span', { class: 'prompt-decline' }, h('label', { for: declineBox.id, class: 'field-label' }, 'Reason, if you decline (the agent reads it)'), declineBox, declineBtn) : declineBtn, cancelBtn, status));
  form.appendChild(h('p', { class: 'prompt-help muted' }, answerHelp(fields, prompt.approval)));

  let busy = false;
  let gone = false;

  function setBusy(b, text = '') {
    busy = b;
    for (const btn of [acceptBtn, declineBtn, cancelBtn].filter(Boolean)) btn.disabled = b || (btn === acceptBtn && prompt.mode && prompt.mode !== 'form');
    if (declineBox) declineBox.disabled = b;
    status.textContent = text;
  }

  function showFormError(msg) {
    formError.textContent = msg || '';
    formError.hidden = !msg;
  }

  async function send(action) {
    if (busy || gone) return false;
    showFormError('');
    const response = { action };
    if (action === 'accept') {
      // A call with hidden values is approved once read whole.
      if (hidden && !hidden.control.wasRevealed()) {
        showFormError('Read this call whole before approving it: Show hidden values.');
        hidden.control.focus();
        return false;
      }
      for (const f of fields) values[f.name] = controls.get(f.name).read();
      const found = validateForm(fields, values);
      // An edited call is checked here as the queue's editor checks it (its syntax, and its
      // whole numbers: past 64 bits the server would keep another number).
      const edit = prompt.approval && fields.some((f) => f.name === 'arguments') ? values.arguments : '';
      if (!found.arguments && typeof edit === 'string' && edit.trim()) {
        const checked = checkEdited(edit, null);
        if (checked.errors.length) found.arguments = checked.errors.map(errorText).join(' ');
      }
      for (const f of fields) {
        if (found[f.name]) errors[f.name] = found[f.name];
        else delete errors[f.name];
        refreshError(f.name);
      }
      const bad = fields.filter((f) => found[f.name]);
      if (bad.length) {
        showFormError(bad.length === 1 ? 'One field needs attention.' : `${bad.length} fields need attention.`);
        controls.get(bad[0].name).focus();
        return false;
      }
      response.content = approvalContent(prompt.approval, toContent(fields, values));
      // An optional checkbox with no default, never touched, was not answered.
      for (const f of fields) {
        if (f.kind === 'boolean' && !f.required && !f.hasDefault && !touched.has(f.name)) delete response.content[f.name];
      }
    } else if (action === 'decline') {
      for (const f of fields) values[f.name] = controls.get(f.name).read();
      const content = declineContent(fields, values, declineBox ? declineBox.value : '');
      if (content) response.content = content;
    }
    setBusy(true, 'Sending…');
    try {
      const r = await deps.send(prompt.key, response);
      if (r && Array.isArray(r.accepted) && r.accepted.includes(prompt.key)) {
        if (prompt.approval) markGone(action === 'accept' ? 'Approved.' : 'Denied.');
        else markGone(action === 'accept' ? 'Accepted. The task continues.' : action === 'decline' ? 'Declined.' : 'Dismissed.');
        return true;
      }
      markGone('Already answered elsewhere.');
      return false;
    } catch (err) {
      setBusy(false);
      const detail = err && err.problem && err.problem.detail ? err.problem.detail : err && err.message ? err.message : String(err);
      showFormError(err && err.status === 422 ? `The task did not accept this answer: ${detail}` : `Could not send the answer: ${detail}`);
      return false;
    }
  }

  /** The request is no longer outstanding: lock the card and say why. */
  function markGone(text) {
    gone = true;
    setBusy(true, text);
    card.classList.add('prompt-gone');
  }

  form.addEventListener('submit', (e) => {
    e.preventDefault();
    send('accept');
  });
  declineBtn.addEventListener('click', () => send('decline'));
  if (cancelBtn) cancelBtn.addEventListener('click', () => send('cancel'));

  return {
    el: card,
    key: prompt.key,
    accept: () => send('accept'),
    decline: () => send('decline'),
    /** Focuses the decline reason box the page added (Enter in it declines); false when the form has its own reason field. */
    focusDeclineReason() {
      if (!declineBox || declineBox.disabled) return false;
      declineBox.focus();
      return true;
    },
    /** Focuses where a reason for declining goes: the added box, else the form's own `reason` field. */
    focusDecline() {
      if (this.focusDeclineReason()) return;
      if (controls.has('reason')) controls.get('reason').focus();
      else this.focus();
    },
    dismiss: () => send('cancel'),
    markGone,
    get gone() {
      return gone;
    },
    /** This page's own answer is on its way (its result will say what became of it). */
    get sending() {
      return busy && !gone;
    },
    focus() {
      const first = fields[0] && controls.get(fields[0].name);
      if (first) first.focus();
      else acceptBtn.focus();
    },
  };
}
