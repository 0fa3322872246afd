// Cancelling tasks: one (the detail's button, the c key), after a confirmation, and the
// selected ones in bulk, skipping those that already finished.

import { cancelMany, describeBulkCancel, cancelRefusal } from './api.js';
import { confirmDialog } from './dialogs.js';
import { h } from './dom.js';
import { shortId, isTerminal, oneLine, argsSummary } from './format.js';
import { state } from './state.js';
import { toast, announce } from './notices.js';
import { handleTaskSnapshot } from './live.js';
import { clearSelection } from './selection.js';

/** How many of the tasks a bulk cancel stops its confirmation names. */
const BULK_NAMES_SHOWN = 20;

/** What a person knows `task` by: its title as the list shows it (a job's name, a command
 *  line); a task titled only by its tool, with its arguments (`slow_compute (seconds: 60)`). */
export function cancelName(task) {
  const title = task.title || task.tool || 'task';
  const args = task.title && task.title !== task.tool ? '' : argsSummary(task.arguments, 80);
  return oneLine(args ? `${title} (${args})` : title, 120);
}

/** Asks to cancel `task`, then does; resolves to the task's new state, or null. */
export async function requestCancel(task) {
  const name = cancelName(task);
  const ok = await confirmDialog({
    title: 'Cancel this task?',
    body: [
      h('p', {}, 'Cancel ', h('strong', {}, name), ' ', h('code', {}, shortId(task.taskId)), task.principal ? ` started by ${task.principal}?` : '?'),
      h('p', { class: 'muted' }, 'The task is asked to stop. It ends as “cancelled” once it does, which can take a moment. Work it already did is not undone.'),
    ],
    confirmLabel: 'Cancel task',
    cancelLabel: 'Keep running',
  });
  if (!ok) return null;
  try {
    const r = await state.api.cancel(task.taskId);
    if (cancelRefusal(r && r.task)) toast(`${name} ${shortId(task.taskId)} had already finished; nothing to cancel.`, 'warn');
    else toast(`Cancel requested for ${name} ${shortId(task.taskId)}.`, 'info');
    if (r && r.task) handleTaskSnapshot(r.task);
    return r && r.task;
  } catch (err) {
    toast(err.status === 409 ? 'The task had already finished.' : `Could not cancel: ${err.message}`, err.status === 409 ? 'warn' : 'bad');
    return null;
  }
}

/**
 * What a bulk cancel of the selected `ids` would do: the tasks still running (`live`, those
 * `getTask` knows and that have not ended) and how many of the ids are not (`finished`).
 */
export function bulkCancelPlan(ids, getTask) {
  const tasks = ids.map((id) => getTask(id)).filter(Boolean);
  const live = tasks.filter((t) => !isTerminal(t.status));
  return { live, finished: ids.length - live.length };
}

/** The bulk confirmation's words for `live` running tasks and `finished` skipped ones. */
export function bulkCancelText(live, finished) {
  const s = live === 1 ? '' : 's';
  return {
    title: `Cancel ${live} task${s}?`,
    body: `Each of the ${live} running task${s} is asked to stop.`,
    skipped: finished ? `${finished} selected task${finished === 1 ? ' has' : 's have'} already finished and will be skipped.` : null,
    confirm: `Cancel ${live} task${s}`,
  };
}

export async function bulkCancel() {
  const ids = [...state.selected];
  const { live, finished } = bulkCancelPlan(ids, (id) => state.model.get(id));
  if (!live.length) {
    toast('None of the selected tasks is still running.', 'warn');
    return;
  }
  const words = bulkCancelText(live.length, finished);
  // Each task by its name, as the list shows it: a bulk cancel stops nothing unseen.
  const shown = live.slice(0, BULK_NAMES_SHOWN);
  const names = h(
    'ul',
    { class: 'approval-confirm-list' },
    shown.map((t) => h('li', {}, h('strong', {}, cancelName(t)), ' ', h('code', {}, shortId(t.taskId)), t.principal ? ` — ${t.principal}` : '')),
    live.length > shown.length ? h('li', { class: 'muted' }, `and ${live.length - shown.length} more`) : null,
  );
  const ok = await confirmDialog({
    title: words.title,
    body: [h('p', {}, words.body), names, words.skipped ? h('p', { class: 'muted' }, words.skipped) : null].filter(Boolean),
    confirmLabel: words.confirm,
    cancelLabel: 'Keep running',
  });
  if (!ok) return;
  const result = await cancelMany(state.api, live.map((t) => t.taskId));
  const text = describeBulkCancel(result) + (finished ? ` ${finished} already finished, skipped.` : '');
  toast(text, result.failed.length ? 'warn' : 'good');
  announce(text);
  clearSelection();
}
