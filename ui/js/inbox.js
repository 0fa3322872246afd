// The "Needs input" inbox above the list: every task waiting for an answer (loaded apart from
// the list's filters, kept current by the stream), its count of the questions it shows, the
// page title's count of the tasks waiting, and the urgent announcement when a new request
// arrives. An entry opens its task on the prompt. Tasks whose request is an approval are listed
// in the approval queue above (approvals-view.js) instead.

import { listQuery } from './tasks-model.js';
import { h, clear, $ } from './dom.js';
import { formatAge, formatCount, oneLine } from './format.js';
import { state } from './state.js';
import { oncePerFrame } from './timing.js';
import { openTask } from './open-task.js';

/** Called after each load of the waiting tasks (the approval queue learns from them when a
 *  call was first asked). */
const loadedListeners = [];

/** Calls `fn` after each load of the waiting tasks. */
export function onInboxLoaded(fn) {
  loadedListeners.push(fn);
}

/** Pages of 1,000 the inbox loads at most; past them it shows the server's count. */
const INBOX_MAX_PAGES = 10;
/** Entries the inbox shows (newest first); the rest are counted and in the list's "Needs input". */
const INBOX_SHOWN = 200;

/** The message of a task's first open prompt; null when it has no prompt, or no text message. */
export function promptMessage(task) {
  const prompts = Object.values(task.inputRequests || {});
  return prompts.length && prompts[0].params && typeof prompts[0].params.message === 'string' ? prompts[0].params.message : null;
}

/** The page title: the count of tasks waiting, first, so it shows in a tab strip. */
export function inboxTitle(count) {
  return count ? `(${formatCount(count)}) Taskdeck — ${count === 1 ? '1 task needs' : `${formatCount(count)} tasks need`} input` : 'Taskdeck';
}

/**
 * How many questions the inbox shows, which its count says: each call and question of the
 * approval queue (`approvals`, null when the server lists none), and each open request of a
 * waiting task the queue leaves out (its entry says "(+1 more)"). `taskCount`: the tasks waiting
 * in all; without a queue, those past the loaded `tasks` count one each.
 */
export function questionCount(tasks, approvals, taskCount) {
  const queued = new Set((approvals || []).map((a) => a.taskId));
  let n = approvals ? approvals.length : Math.max(0, taskCount - tasks.length);
  for (const t of tasks) if (!queued.has(t.taskId)) n += Math.max(1, Object.keys(t.inputRequests || {}).length);
  return n;
}

/** The inbox count's words for a screen reader and its tooltip: "3 questions to answer". */
export function questionCountLabel(n) {
  return `${formatCount(n)} question${n === 1 ? '' : 's'} to answer`;
}

/** What an inbox entry says about waiting task `t`: its message (or status message), how many
 *  more prompts it has, and the entry's accessible name. */
export function inboxEntryText(t) {
  const prompts = Object.values(t.inputRequests || {});
  const message = promptMessage(t);
  const msg = message !== null ? message : t.statusMessage || '';
  const more = prompts.length > 1 ? ` (+${prompts.length - 1} more)` : '';
  return { msg, more, label: `Answer ${t.tool} from ${t.principal}: ${oneLine(msg, 120)}` };
}

/** Tells screen readers (assertively) that `task` asks for input. */
export function announceInput(task) {
  const msg = promptMessage(task) || '';
  $('input-announcer').textContent = `New input request from ${task.principal || 'an agent'}: ${task.tool}${msg ? ` — ${oneLine(msg, 140)}` : ''}`;
}

export async function reloadInbox() {
  state.inbox.beginReset();
  try {
    const tasks = [];
    let cursor = null;
    let total = 0;
    for (let n = 0; n < INBOX_MAX_PAGES; n++) {
      const page = await state.api.listTasks(listQuery({ statuses: ['input_required'] }, { limit: 1000, cursor }));
      if (n === 0) total = (page.counts && page.counts.input_required) || 0;
      tasks.push(...(page.tasks || []));
      cursor = page.nextCursor || null;
      if (!cursor) break;
    }
    state.inbox.reset(tasks, cursor ? total : null);
    for (const fn of loadedListeners) fn();
  } catch {
    // keep what we have; the stream keeps it current
  }
  renderInbox();
}

export function renderInbox() {
  const list = state.inbox.list();
  const count = state.inbox.count;
  const questions = questionCount(list, state.approvals.loaded ? state.approvals.approvals : null, count);
  const box = $('inbox');
  box.hidden = questions === 0;
  document.title = inboxTitle(count);
  const badge = $('inbox-count');
  badge.textContent = formatCount(questions);
  badge.title = questionCountLabel(questions);
  $('inbox-count-label').textContent = badge.title;
  const ul = $('inbox-list');
  // Rebuilt often (ages tick): keep keyboard focus on the same task's entry.
  const focused = ul.contains(document.activeElement) ? document.activeElement.dataset.taskId : null;
  const scroll = ul.scrollTop;
  clear(ul);
  const now = Date.now();
  const queued = new Set(state.approvals.approvals.map((a) => a.taskId));
  const shown = list.filter((x) => !queued.has(x.taskId)).slice(0, INBOX_SHOWN);
  // Entries show their ages: the 'inbox' clock redraws them while there is one.
  state.ticker.need('inbox', shown.length > 0);
  for (const t of shown) {
    const { msg, more, label } = inboxEntryText(t);
    const btn = h(
      'button',
      { type: 'button', class: `inbox-item${state.detail.taskId === t.taskId ? ' open' : ''}`, dataset: { taskId: t.taskId }, 'aria-label': label },
      h('span', { class: 'inbox-main' }, h('span', { class: 'inbox-msg' }, oneLine(msg, 160) || 'Waiting for input', more), h('span', { class: 'inbox-meta' }, `${t.tool} · ${t.principal}`)),
      h('span', { class: 'inbox-age' }, formatAge(t.lastUpdatedAt, now)),
      h('span', { class: 'inbox-go', 'aria-hidden': 'true' }, 'Answer →'),
    );
    btn.addEventListener('click', () => openTask(t.taskId, { focus: true, focusPrompt: true }));
    ul.appendChild(h('li', {}, btn));
    if (focused === t.taskId) btn.focus({ preventScroll: true });
  }
  if (count > INBOX_SHOWN) {
    ul.appendChild(h('li', { class: 'inbox-more muted' }, `and ${formatCount(count - INBOX_SHOWN)} more, older: choose “Needs input” above the list to see them all`));
  }
  ul.scrollTop = scroll;
}

/** Renders the inbox once in the next frame, however many changes arrive before it. */
export const scheduleInboxRender = oncePerFrame(() => renderInbox());
