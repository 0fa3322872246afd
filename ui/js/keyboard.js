// Keyboard shortcuts (the help dialog lists them): `shortcutFor` decides which one a key press
// asks for from the key and where focus is (no DOM, unit-tested); `onKey` carries it out.
// Shortcuts pause while a dialog is open and while focus is in something that takes text.
// This module is in the page's first load, so a key pressed as soon as the rows show is taken
// at once (and its default prevented then); what a shortcut does in a module loaded after the
// first rows (rest.js: opening a task, cancelling, the approval queue) runs through `later`,
// which loads that module first, in the order the keys came.

import { openHelp, dialogOpen } from './dialogs.js';
import { $, isTypingTarget, narrow } from './dom.js';
import { isTerminal } from './format.js';
import { state } from './state.js';
import { toast } from './notices.js';
import { togglePause } from './list.js';
import { toggleSelect } from './selection.js';

/** Keys on a row of the approval queue (focus in it): what each asks for. */
const APPROVAL_KEYS = {
  j: 'approval-down',
  ArrowDown: 'approval-down',
  k: 'approval-up',
  ArrowUp: 'approval-up',
  Enter: 'approval-open',
  a: 'approval-approve',
  d: 'approval-deny',
  e: 'approval-edit',
  x: 'approval-select',
  X: 'approval-select',
  A: 'approval-approve-selected',
  D: 'approval-deny-selected',
  Escape: 'approval-leave',
};

/**
 * The shortcut key press `e` asks for, or null. `typing`: focus is in a text field (`inSearch`:
 * the search box); `listFocused`: the task list has focus (arrows, Home/End, Page keys, Enter
 * and Space act on it only then; j/k/x act on it from anywhere); `inApprovals`: focus is on a
 * row of the approval queue (j/k/a/d/e/x/A/D/Enter/Escape act on the queue then; Enter only on
 * the row itself, `onApprovalRow`, so a focused button keeps its own Enter). Escape in a text
 * field of an opened call (its reason, its edited arguments) goes back to the call's row, what
 * was typed kept; a second Escape closes the call. In the selection bar's reason box
 * (`inSelectionReason`), Enter asks to deny the selected calls (as "Deny selected…") and Escape
 * goes back to the queue's highlighted row, the reason kept. Escape in a field of a task's
 * answer form (`inPrompt`) goes back to the question's row in the approval queue when it has
 * one (in a narrow window, where the pane hides the queue, closing the pane), else to the form
 * itself, what was typed kept: the keys after it are shortcuts again.
 */
export function shortcutFor(e, { dialogOpen, typing, inSearch, listFocused, inApprovals = false, onApprovalRow = false, inSelectionReason = false, inPrompt = false }) {
  if (e.defaultPrevented || e.ctrlKey || e.metaKey || e.altKey) return null;
  if (dialogOpen) return null;
  if (typing) {
    if (inSelectionReason && e.key === 'Enter' && !e.isComposing && !e.shiftKey) return 'approval-deny-selected-send';
    if (e.key !== 'Escape') return null;
    if (inSearch) return 'leave-search';
    if (inPrompt) return 'leave-prompt-field';
    return inApprovals || inSelectionReason ? 'approval-leave-field' : null;
  }
  // On a prompt's button or checkbox (not its card): back to its row, as from its fields.
  if (e.key === 'Escape' && inPrompt) return 'leave-prompt-field';
  if (inApprovals && Object.hasOwn(APPROVAL_KEYS, e.key) && (e.key !== 'Enter' || onApprovalRow)) return APPROVAL_KEYS[e.key];
  const onList = (command) => (listFocused ? command : null);
  switch (e.key) {
    case '/':
      return 'search';
    case '?':
      return 'help';
    case 'j':
      return 'down';
    case 'k':
      return 'up';
    case 'ArrowDown':
      return onList('down');
    case 'ArrowUp':
      return onList('up');
    case 'Home':
      return onList('first');
    case 'End':
      return onList('last');
    case 'PageDown':
      return onList('page-down');
    case 'PageUp':
      return onList('page-up');
    case 'Enter':
      return onList('open');
    case ' ':
      return onList('toggle');
    case 'x':
      return 'select';
    case 'a':
      return 'accept';
    case 'd':
      return 'decline';
    case 'c':
      return 'cancel';
    case 'p':
      return 'pause';
    case 'i':
      return 'inbox';
    case 'Escape':
      return 'close';
    default:
      return null;
  }
}

/** How long after a character typed into a text field the next key still belongs to that typing. */
export const TYPING_GAP_MS = 1000;

/**
 * True when a character key pressed at `atMs`, with focus not in a text field (`typingNow`
 * false), continues typing that a focus change cut off: the key before it (`prev`: `{atMs,
 * typing, character}`) was a character typed into a text field that has left the page since
 * (`fieldGone`: its row went, its call decided elsewhere or its task cancelled), however long
 * ago, or into another field less than TYPING_GAP_MS before. The rest of the words must not act
 * as shortcuts on whatever took the focus (`a` approving the next call), also after a pause
 * in the middle of a sentence.
 */
export function continuesCutTyping(prev, atMs, typingNow, fieldGone = false) {
  if (typingNow || prev === null || !prev.typing || !prev.character) return false;
  return fieldGone || atMs - prev.atMs < TYPING_GAP_MS;
}

/** Keys that act without being characters: dropped with the characters after cut typing (the
 * Enter meant to send a reason must not answer whatever took the focus). */
const ACTING_KEYS = new Set(['Enter', 'ArrowUp', 'ArrowDown', 'ArrowLeft', 'ArrowRight', 'Home', 'End', 'PageUp', 'PageDown', 'Backspace', 'Delete']);

/** Keys that only change another key (Shift for a capital): neither text nor a shortcut. */
const MODIFIER_KEYS = new Set(['Shift', 'Control', 'Alt', 'AltGraph', 'Meta', 'CapsLock', 'Dead', 'Compose', 'Process', 'Unidentified']);

/**
 * The key before the current one (`{atMs, typing, character, field}`, `field` the text field
 * it was typed into), for `continuesCutTyping`; and whether keys are being dropped: once
 * typing is cut, characters and [`ACTING_KEYS`] are dropped until Escape, Tab or a click says
 * the person is done with what they were typing.
 */
let lastKey = null;
let dropping = false;
/** The form control (a text field, a checkbox of a form, a select) the focus is in, or was in
 *  when it left the page (until the next focus). */
let activeField = null;
/** The focus left a text field by that field going away (its call decided elsewhere, its row
 *  gone) rather than by the person: the next key, whatever was typed before, was meant for it. */
let cut = false;

const gone = (el) => !el.isConnected || !el.getClientRects().length;

/** A click (any pointer press): the person has moved on from what they were typing. */
export function onPointerDown() {
  lastKey = null;
  dropping = false;
  activeField = null;
  cut = false;
}

/** The page moved the focus on after the person's own decision (a field of theirs may have gone
 *  with it): not a cut. */
export function decidedHere() {
  activeField = null;
  cut = false;
}

/**
 * The focus moved to `target` (a `focusin`). Leaving a form control that went away, for anything
 * but that control, is a cut: the person who opened a reason box with `d` and has typed nothing
 * yet, or ticked a checkbox of a question, still means the next key for it, not for the row
 * that took its place.
 */
export function onFocusIn(target) {
  if (activeField && target !== activeField && gone(activeField)) cut = true;
  activeField = target instanceof Element && ['INPUT', 'SELECT', 'TEXTAREA'].includes(target.tagName) ? target : null;
}

/** Rows a Page key moves: a screenful of the list (`height` px, rows of 64 px) less one. */
export function pageStep(height) {
  return Math.max(1, Math.floor(height / 64) - 1);
}

/**
 * Carries out the shortcut key press `e` asks for, if any. `later(fn)` calls `fn` with the
 * module rest.js once it has loaded (at once when it has): calls made in turn run in turn.
 * @param {KeyboardEvent} e
 * @param {(fn: (rest: typeof import('./rest.js')) => void) => void} later
 */
export function onKey(e, later) {
  const target = e.target;
  if (MODIFIER_KEYS.has(e.key)) return;
  const typing = isTypingTarget(target);
  const unmodified = !e.ctrlKey && !e.metaKey && !e.altKey;
  const character = e.key.length === 1 && unmodified;
  if ((dropping || cut) && !typing) {
    // Escape ends the dropping and does nothing else; Tab ends it and moves on.
    if (e.key === 'Escape') {
      e.preventDefault();
      onPointerDown();
      return;
    }
    if (e.key === 'Tab') onPointerDown();
  }
  // Enter in a one-line field (or Ctrl+Enter anywhere) sends it: its going away next is no cut.
  if (target === activeField && e.key === 'Enter' && (target.tagName !== 'TEXTAREA' || e.ctrlKey || e.metaKey)) activeField = null;
  const field = lastKey && lastKey.field;
  const fieldGone = Boolean(field) && gone(field);
  const acts = character || (ACTING_KEYS.has(e.key) && unmodified);
  if (acts && (dropping || cut || continuesCutTyping(lastKey, e.timeStamp, typing, fieldGone))) {
    e.preventDefault();
    cut = false;
    if (!dropping) toast('What you were typing in has closed (decided or changed elsewhere): the keys that followed were ignored. Press Esc to use the shortcuts again.', 'info');
    dropping = true;
    return;
  }
  if (typing) dropping = false;
  // A key on a checkbox, radio or select of a form acts on that form (`a` accepts it): its card
  // going away next is the person's doing, no cut.
  if (target === activeField && !typing) activeField = null;
  lastKey = { atMs: e.timeStamp, typing, character, field: typing ? target : null };
  const listFocused = target === $('task-list');
  const queue = $('approvals-list');
  const inApprovals = queue.contains(target);
  const onApprovalRow = inApprovals && target.parentElement === queue;
  const inSelectionReason = target === $('approvals-reason');
  const prompt = target instanceof Element ? target.closest('.prompt-card') : null;
  // Inside a prompt's card: in a field or on a button, not on the card itself (whose Esc closes).
  const inPrompt = Boolean(prompt) && prompt !== target;
  const command = shortcutFor(e, { dialogOpen: dialogOpen(), typing, inSearch: target === $('search'), listFocused, inApprovals, onApprovalRow, inSelectionReason, inPrompt });
  // A key held down decides nothing by its repeats: it would open a call ("Review…") and then
  // approve it, and the next, with nobody reading them.
  if (e.repeat && ['approval-approve', 'approval-approve-selected', 'accept'].includes(command)) {
    e.preventDefault();
    return;
  }
  if (command && command.startsWith('approval-')) {
    e.preventDefault();
    const shift = e.shiftKey;
    later((rest) => rest.onApprovalKey(command, shift));
    return;
  }
  switch (command) {
    case 'leave-search':
      $('task-list').focus();
      e.preventDefault();
      return;
    case 'leave-prompt-field': {
      e.preventDefault();
      // A question of the approval queue goes back to its row there (as a call's fields do),
      // so that j moves to the next approval; another prompt's form takes the focus.
      const taskId = new URLSearchParams(location.hash.slice(1)).get('task');
      const inQueue = taskId && [...$('approvals-list').querySelectorAll('.approval')].some((r) => r.dataset.taskId === taskId);
      if (inQueue) {
        later((rest) => {
          // A narrow window shows the detail in place of the list, queue included: the row is
          // out of sight until the pane closes.
          const narrow = !$('approvals-list').getClientRects().length;
          if (narrow) rest.closeDetail();
          if (!rest.focusQuestionRow(taskId) && !narrow) prompt.focus();
        });
      } else prompt.focus();
      return;
    }
    case 'search':
      e.preventDefault();
      $('search').focus();
      $('search').select();
      return;
    case 'help':
      e.preventDefault();
      openHelp();
      return;
    case 'down':
    case 'up':
      e.preventDefault();
      state.list.move(command === 'down' ? 1 : -1);
      if (!listFocused) $('task-list').focus({ preventScroll: true });
      return;
    case 'first':
    case 'last':
      e.preventDefault();
      state.list.setActive(command === 'first' ? 0 : state.model.length - 1);
      return;
    case 'page-down':
    case 'page-up':
      e.preventDefault();
      state.list.move((command === 'page-down' ? 1 : -1) * pageStep($('task-list').clientHeight));
      return;
    case 'toggle':
      e.preventDefault();
      if (state.list.active >= 0) toggleSelect(state.list.active, e.shiftKey);
      return;
    case 'open':
      e.preventDefault();
      if (state.list.active >= 0) {
        const id = state.model.at(state.list.active).id;
        const focus = narrow();
        later((rest) => rest.openTask(id, { focus }));
      }
      return;
    case 'select':
      if (state.list.active >= 0) {
        e.preventDefault();
        toggleSelect(state.list.active, e.shiftKey);
      }
      return;
    case 'accept':
    case 'decline': {
      // After the task an earlier key opened is shown (Enter then a at once acts on its prompt).
      // `d` answers nothing: it focuses where the reason for a "no" goes, the prompt's decline
      // reason box or the form's own `reason` field (Enter there, or Decline, declines), as `d`
      // in the approval queue does. No decision is taken by one key.
      e.preventDefault();
      later(async () => {
        await state.openDone;
        const card = state.detail.shortcutPrompt();
        if (!card) {
          if (state.detail.hasLockedPrompts()) toast('Only the person using Taskdeck can answer this prompt.', 'info');
          else if (state.detail.taskId) toast('This task has no open prompt.', 'info');
          return;
        }
        if (command === 'accept') card.accept();
        else card.focusDecline();
      });
      return;
    }
    case 'cancel': {
      e.preventDefault();
      const task = state.detail.task || (state.list.active >= 0 ? state.model.at(state.list.active).task : null);
      if (!task) return;
      if (isTerminal(task.status)) {
        toast('That task has already finished.', 'info');
        return;
      }
      if (task.cancelRequested) {
        toast('Cancel was already requested for that task.', 'info');
        return;
      }
      if (state.detail.task && state.detail.task.taskId === task.taskId) state.detail.requestCancel();
      else later((rest) => rest.requestCancel(task));
      return;
    }
    case 'pause':
      e.preventDefault();
      togglePause();
      return;
    case 'inbox': {
      // The approval queue first (focusApprovals focuses it when it has a row), once both have
      // loaded (a key pressed as the first rows show comes before their first answers).
      e.preventDefault();
      later(async (rest) => {
        state.queuesLoaded ||= Promise.allSettled([rest.reloadInbox(), rest.reloadApprovals()]);
        await state.queuesLoaded;
        if (state.approvals.rows.length) {
          rest.focusApprovals();
          return;
        }
        const first = state.inbox.list()[0];
        if (first) rest.openTask(first.taskId, { focus: true, focusPrompt: true });
      });
      return;
    }
    case 'close': {
      // A task asked for by an earlier key may still be opening once rest.js runs that key.
      const open = () => state.detail.taskId || state.opening;
      if (open()) e.preventDefault();
      later((rest) => {
        if (open()) rest.closeDetail();
      });
      return;
    }
    default:
  }
}
