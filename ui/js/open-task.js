// Opening and closing a task in the detail pane: from a row, the inbox, a key, or the URL
// fragment (#task=<id>, which the address bar keeps for the open task). The pane's modules may
// still be loading (lazy.js): an open waits for them, and a close meanwhile drops it.

import { $ } from './dom.js';
import { state } from './state.js';
import { toast } from './notices.js';
import { loadDetail } from './lazy.js';
import { renderInbox } from './inbox.js';
import { scheduleListRender } from './list.js';

/**
 * Shows a task asked for from outside the list (the URL fragment): highlights its row when
 * it is loaded, and opens its detail (which fetches it, so it need not be in the list).
 */
export function focusTask(taskId, { focus }) {
  const index = state.model.indexOf(taskId);
  if (index >= 0 && state.list) state.list.setActive(index);
  return openTask(taskId, { focus, focusPrompt: focus });
}

/**
 * Opens task `taskId` in the detail pane. `focus`: the pane takes the focus; `focusPrompt`: its
 * first open prompt does; `focusDecline`: that prompt's decline reason box does (the approval
 * queue's `d` on a question), else the prompt.
 */
export function openTask(taskId, { focus = false, focusPrompt = false, focusDecline = false } = {}) {
  const seq = ++state.openSeq;
  state.opening = taskId;
  history.replaceState(null, '', `${location.pathname}${location.search}#task=${encodeURIComponent(taskId)}`);
  const p = loadDetail().then(
    (detail) => {
      if (seq !== state.openSeq) return undefined;
      state.opening = null;
      const opened = detail.open(taskId, { focus });
      renderInbox();
      scheduleListRender();
      return opened;
    },
    (err) => toast(`Could not load the task's detail: ${err.message}`, 'bad'),
  );
  state.openDone = p;
  if (focusPrompt || focusDecline) {
    Promise.resolve(p).then(() => {
      const card = state.detail.shortcutPrompt();
      if (card && focusDecline && card.focusDecline) card.focusDecline();
      else if (card) card.focus();
    });
  }
  return p;
}

export function closeDetail() {
  state.openSeq++;
  state.opening = null;
  state.detail.close();
  history.replaceState(null, '', `${location.pathname}${location.search}`);
  renderInbox();
  scheduleListRender();
  $('task-list').focus();
}
