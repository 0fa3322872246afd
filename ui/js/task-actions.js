// Cleaning up and running again: delete one finished task, the selected ones, or every finished
// task ("Clear finished", after a confirmation that says how many), and run a finished command again (a new task:
// `run_command` with the same arguments, which the policy decides on again). The server does
// the work (`DELETE /v1/tasks/{id}`, `POST /v1/task-deletions`, `POST /v1/tasks/{id}/rerun`);
// deleted tasks leave the list through the event stream's `deleted` events.

import { confirmDialog } from './dialogs.js';
import { h } from './dom.js';
import { shortId, isTerminal, formatCount, oneLine, shownPlainly } from './format.js';
import { state } from './state.js';
import { toast, announce } from './notices.js';
import { clearSelection } from './selection.js';
import { closeDetail, openTask } from './open-task.js';
import { isFiltered } from './filters.js';
import { rights } from './auth.js';

/** True when the server can run `task` again: a finished `run_command`, or a `taskdeck run` job that reported its command line. */
export function canRerun(task) {
  if (!task || !isTerminal(task.status)) return false;
  if (task.tool === 'run_command') return true;
  const argv = task.tool === 'external' && task.arguments && task.arguments.command;
  return Array.isArray(argv) && argv.length > 0;
}

/** `s` as a shell word: as it is when it has no character a shell reads, else in single quotes. */
function shellWord(s) {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replaceAll("'", "'\\''")}'`;
}

/**
 * What running `task` again runs: `{line, cwd}` (the command line as a shell would read it, and
 * the working directory or null), or null when its arguments name no command.
 */
export function rerunCommand(task) {
  const a = (task && task.arguments) || {};
  const argv = Array.isArray(a.argv) ? a.argv : task && task.tool === 'external' && Array.isArray(a.command) ? a.command : null;
  const line = argv ? argv.map((w) => shellWord(String(w))).join(' ') : typeof a.command === 'string' ? a.command : '';
  if (!line) return null;
  return { line, cwd: typeof a.cwd === 'string' && a.cwd ? a.cwd : null };
}

/** What deleting the selected `ids` would do: the finished tasks `getTask` knows (`finished`) and how many are still live (kept). */
export function deletePlan(ids, getTask) {
  const tasks = ids.map((id) => getTask(id)).filter(Boolean);
  const finished = tasks.filter((t) => isTerminal(t.status));
  return { finished, live: tasks.length - finished.length };
}

/** "Deleted 3 tasks; 1 kept (still running)." from a `POST /v1/task-deletions` answer. */
export function describeDeletions(reply) {
  const deleted = reply && Number.isInteger(reply.deleted) ? reply.deleted : 0;
  const kept = ((reply && reply.results) || []).filter((r) => r.outcome !== 'deleted');
  const live = kept.filter((r) => r.outcome === 'live').length;
  const gone = kept.length - live;
  const parts = [`Deleted ${deleted} task${deleted === 1 ? '' : 's'}`];
  if (live) parts.push(`${live} kept (still running)`);
  if (gone) parts.push(`${gone} not found`);
  return `${parts.join('; ')}.`;
}

/** Deletes the finished `task` after a confirmation; closes its detail. */
export async function requestDelete(task) {
  const ok = await confirmDialog({
    title: 'Delete this task?',
    body: [
      h('p', {}, 'Delete ', h('strong', {}, task.title || task.tool), ' ', h('code', {}, shortId(task.taskId)), ' and its timeline?'),
      h('p', { class: 'muted' }, 'Its decisions stay in the audit log.'),
    ],
    confirmLabel: 'Delete task',
    cancelLabel: 'Keep it',
  });
  if (!ok) return false;
  try {
    await state.api.del(`/v1/tasks/${encodeURIComponent(task.taskId)}`);
  } catch (err) {
    toast(err.status === 409 ? 'The task is still running: cancel it first.' : `Could not delete: ${err.message}`, err.status === 409 ? 'warn' : 'bad');
    return false;
  }
  toast(`Deleted ${task.title || task.tool} ${shortId(task.taskId)}.`, 'good');
  closeDetail();
  return true;
}

/** Runs the finished command `task` again after a confirmation (which shows the command line), and opens the new task. */
export async function requestRerun(task) {
  // The command is confirmed as it will run: a list's copy may be cut (`abridged`).
  if (task && Array.isArray(task.abridged) && task.abridged.includes('arguments')) {
    try {
      task = (await state.api.getTask(task.taskId)).task;
    } catch (err) {
      toast(`Could not read the command: ${err.message}`, 'bad');
      return null;
    }
  }
  const cmd = rerunCommand(task);
  const ok = await confirmDialog({
    title: 'Run this command again?',
    body: [
      cmd
        ? [
            h('p', {}, 'Start a new task that runs ', h('strong', {}, oneLine(task.title || task.tool)), ' again:'),
            h('pre', { class: 'rerun-command' }, h('code', {}, shownPlainly(cmd.line, true))),
            cmd.cwd ? h('p', { class: 'rerun-cwd' }, 'in ', h('code', {}, shownPlainly(cmd.cwd))) : null,
          ]
        : h('p', {}, 'Start a new task that runs ', h('strong', {}, oneLine(task.title || task.tool)), ' again.'),
      h('p', { class: 'muted' }, 'It is a new run_command call of yours: the policy decides on it again, and may ask for approval.'),
    ].flat().filter(Boolean),
    confirmLabel: 'Run again',
    cancelLabel: 'Back',
  });
  if (!ok) return null;
  try {
    const r = await state.api.post(`/v1/tasks/${encodeURIComponent(task.taskId)}/rerun`, {});
    const id = r && r.task && r.task.taskId;
    toast(`Started again as ${shortId(id)}.`, 'good');
    if (id) {
      // The list's cursor follows the new task (its row may arrive after this answer).
      if (state.list) state.list.activateTask(id);
      openTask(id, { focus: true });
    }
    return id;
  } catch (err) {
    toast(`Could not run it again: ${err.message}`, 'bad');
    return null;
  }
}

/** Deletes the selected tasks that have finished (running ones are kept), after a confirmation. */
export async function bulkDelete() {
  const ids = [...state.selected];
  const { finished, live } = deletePlan(ids, (id) => state.model.get(id));
  if (!finished.length) {
    toast('None of the selected tasks has finished.', 'warn');
    return;
  }
  const n = finished.length;
  const ok = await confirmDialog({
    title: `Delete ${n} task${n === 1 ? '' : 's'}?`,
    body: [
      h('p', {}, `The ${n} finished task${n === 1 ? '' : 's'} and their timelines are deleted.`),
      live ? h('p', { class: 'muted' }, `${live} selected task${live === 1 ? ' is' : 's are'} still running and will be kept.`) : null,
    ].filter(Boolean),
    confirmLabel: `Delete ${n} task${n === 1 ? '' : 's'}`,
    cancelLabel: 'Keep them',
  });
  if (!ok) return;
  await deleteAndSay({ taskIds: finished.map((t) => t.taskId) });
  clearSelection();
}

/** How many finished (completed, failed, cancelled) tasks per-status `counts` of GET /v1/tasks hold. */
export function finishedCount(counts) {
  return ['completed', 'failed', 'cancelled'].reduce((n, k) => n + ((counts && counts[k]) || 0), 0);
}

/**
 * How many finished tasks the caller may see: the list's counts when no tool, principal, search
 * or error filter narrows them and the list is live; else the server's counts (null if it does
 * not answer).
 */
async function finishedTotal() {
  const m = state.model;
  const f = m.filters;
  if (!f.tool && !f.principal && !(f.q && f.q.trim()) && !f.errors && !m.paused) return finishedCount(m.counts);
  try {
    return finishedCount((await state.api.listTasks('limit=1')).counts);
  } catch {
    return null;
  }
}

/**
 * The words of "Clear finished…"'s confirmation for `n` finished tasks (null: not known).
 * The server clears every finished task the caller may see (`finished: true`), whatever the
 * list shows: `filtered` (a search, status, tool or principal filter narrows the list) says so
 * plainly, so "all N" is not read as the rows on screen; `seesAll` (a person: every principal's
 * tasks) or an agent's own.
 * @returns {{title: string, body: string, note: string, confirm: string}} `note`: '' when unfiltered
 */
export function clearFinishedText(n, { filtered = false, seesAll = false } = {}) {
  const what = n === null ? 'every finished task' : n === 1 ? 'the 1 finished task' : `all ${formatCount(n)} finished tasks`;
  const whose = seesAll ? 'of every agent and person' : 'of yours';
  return {
    title: n === null ? 'Clear all finished tasks?' : `Clear ${what}?`,
    body: `Deletes ${what} ${whose} (completed, failed and cancelled) with their timelines. Running and waiting tasks stay.`,
    note: filtered ? `This ignores the search and filters: it is not only the tasks the list shows now, but ${n === null ? 'every finished task' : n === 1 ? 'that 1 task' : `all ${formatCount(n)}`}.` : '',
    confirm: n === null ? 'Clear finished' : `Clear ${formatCount(n)} finished`,
  };
}

/** Deletes every finished task the caller may see, after a confirmation that says how many. */
export async function clearFinished() {
  const n = await finishedTotal();
  if (n === 0) {
    toast('There are no finished tasks to clear.', 'info');
    return;
  }
  // Tasks may finish or go before the server acts: "all N" is what the list knows now.
  const words = clearFinishedText(n, { filtered: isFiltered(state.model.filters), seesAll: rights(state.me).seesAll });
  const ok = await confirmDialog({
    title: words.title,
    body: [
      h('p', {}, words.body),
      words.note ? h('p', {}, h('strong', {}, words.note)) : null,
      h('p', { class: 'muted' }, 'Decisions stay in the audit log.'),
    ].filter(Boolean),
    confirmLabel: words.confirm,
    cancelLabel: 'Keep them',
  });
  if (!ok) return;
  await deleteAndSay({ finished: true });
}

async function deleteAndSay(body) {
  try {
    const reply = await state.api.post('/v1/task-deletions', body);
    const text = describeDeletions(reply);
    toast(text, 'good');
    announce(text);
  } catch (err) {
    toast(`Could not delete: ${err.message}`, 'bad');
  }
}
