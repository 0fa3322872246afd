// Keyboard shortcuts (the help dialog lists them): `shortcutFor` decides which one a key press
// asks for from the key and where focus is (no DOM, unit-tested); `onKey` carries it out.
// Shortcuts pause while a dialog is open and while focus is in something that takes text.

import { openHelp, dialogOpen } from './dialogs.js';
import { $, isTypingTarget } from './dom.js';
import { isTerminal } from './format.js';
import { state } from './state.js';
import { toast } from './notices.js';
import { togglePause } from './list.js';
import { toggleSelect } from './selection.js';
import { requestCancel } from './cancel.js';
import { openTask, closeDetail, narrow } from './open-task.js';

/**
 * The shortcut key press `e` asks for, or null. `typing`: focus is in a text field (`inSearch`:
 * the search box); `listFocused`: the task list has focus (arrows, Home/End, Page keys, Enter
 * and Space act on it only then; j/k/x act on it from anywhere).
 */
export function shortcutFor(e, { dialogOpen, typing, inSearch, listFocused }) {
  if (e.defaultPrevented || e.ctrlKey || e.metaKey || e.altKey) return null;
  if (dialogOpen) return null;
  if (typing) return e.key === 'Escape' && inSearch ? 'leave-search' : null;
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

/** Rows a Page key moves: a screenful of the list (`height` px, rows of 64 px) less one. */
export function pageStep(height) {
  return Math.max(1, Math.floor(height / 64) - 1);
}

export function onKey(e) {
  const target = e.target;
  const listFocused = target === $('task-list');
  const command = shortcutFor(e, { dialogOpen: dialogOpen(), typing: isTypingTarget(target), inSearch: target === $('search'), listFocused });
  switch (command) {
    case 'leave-search':
      $('task-list').focus();
      e.preventDefault();
      return;
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
      if (state.list.active >= 0) openTask(state.model.at(state.list.active).id, { focus: narrow() });
      return;
    case 'select':
      if (state.list.active >= 0) {
        e.preventDefault();
        toggleSelect(state.list.active, e.shiftKey);
      }
      return;
    case 'accept':
    case 'decline': {
      const card = state.detail.shortcutPrompt();
      if (!card) {
        if (state.detail.hasLockedPrompts()) toast('Only the person using Taskdeck can answer this prompt.', 'info');
        else if (state.detail.taskId) toast('This task has no open prompt.', 'info');
        return;
      }
      e.preventDefault();
      if (command === 'accept') card.accept();
      else card.decline();
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
      else requestCancel(task);
      return;
    }
    case 'pause':
      e.preventDefault();
      togglePause();
      return;
    case 'inbox': {
      const first = state.inbox.list()[0];
      if (first) {
        e.preventDefault();
        openTask(first.taskId, { focus: true, focusPrompt: true });
      }
      return;
    }
    case 'close':
      if (state.detail.taskId || state.opening) {
        e.preventDefault();
        closeDetail();
      }
      return;
    default:
  }
}
