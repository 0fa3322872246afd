// Live updates: the event stream from /v1/events and what each change does to the list, the
// inbox and the open task, plus task states that come back in API answers. The stream's state
// shows in the top bar (#conn, conn.js). A refused token closes it (token-screen.js closeStream).

import { openEventStream } from './event-stream.js';
import { state } from './state.js';
import { toast, backLive } from './notices.js';
import { onAuthError } from './token-screen.js';
import { reloadList, scheduleListRender, scheduleCountsRefresh, renderPending } from './list.js';
import { noteTool, notePrincipal } from './filters.js';
import { reloadInbox, scheduleInboxRender, announceInput } from './inbox.js';
import { renderBulk } from './selection.js';
import { reloadApprovals, onApprovalChange } from './approvals-view.js';
import { noteStore } from './store-banner.js';
import { noteStreamState } from './offline-banner.js';
import { renderConn } from './conn.js';

/**
 * Opens the live stream. With `resumeFrom` (the list page's `eventId`) it starts with the
 * changes after that page; without it (the page could not be loaded), the list is loaded once
 * the stream is open.
 */
export function connectStream(resumeFrom) {
  let openedOnce = false;
  state.stream = openEventStream({
    getToken: () => state.token,
    lastEventId: resumeFrom || '',
    onChange: handleChange,
    onResync: () => {
      toast('Live updates fell behind; the list was reloaded.', 'warn');
      reloadList();
      reloadInbox();
      reloadApprovals();
      if (state.detail.taskId) state.detail.scheduleRefetch();
    },
    onAuthError,
    onStore: noteStore,
    onState: (s, info) => {
      state.streamState = s;
      renderConn(info ?? null);
      noteStreamState(s);
      if (s === 'open') {
        // What the disk was before the gap no longer holds; a full disk is said again at once.
        noteStore(null);
        // A notice that Taskdeck could not be reached no longer holds either.
        backLive();
        if (openedOnce || !resumeFrom) {
          // Back after a gap: the replay brings every change, but not the tasks that were
          // created and deleted meanwhile; the counts come from the server again.
          reloadList();
          reloadInbox();
          reloadApprovals();
          // A task that could not be loaded while Taskdeck was away is loaded now.
          if (state.detail.loadFailed && state.detail.taskId) state.detail.open(state.detail.taskId);
        }
        openedOnce = true;
      }
    },
  });
}

function handleChange(change) {
  const task = change.task;
  if (task.tool) noteTool(task.tool);
  if (task.principal) notePrincipal(task.principal);
  // The inbox and the open task stay live even while the list is paused.
  const inboxResult = state.inbox.apply(task, change.event);
  if (inboxResult === 'added') announceInput(task);
  if (inboxResult || state.inbox.total !== null) scheduleInboxRender();
  onApprovalChange(change);
  if (state.notifyChange) state.notifyChange(change);
  state.detail.onChange(change);
  // A task's text changes as it runs, so whether it matches the free text changes too: the
  // counts under a search come from the server again (at most once a second).
  if (state.model.filters.q && state.model.filters.q.trim()) scheduleCountsRefresh();
  const anchor = state.model.paused ? null : state.list.captureAnchor();
  const r = state.model.apply(change);
  if (r.type === 'inserted' || r.type === 'removed') state.list.restoreAnchor(anchor);
  if (r.type === 'buffered') renderPending();
  else if (r.type === 'ignored') scheduleListRender(); // the counts may have changed
  else {
    state.list.reanchorActive();
    if (r.type === 'removed' && state.selected.has(task.taskId)) {
      state.selected.delete(task.taskId);
      renderBulk();
    }
    scheduleListRender();
  }
}

/** A task state from an API answer (not an event): update the list row in place. */
export function handleTaskSnapshot(task) {
  const entry = state.model.byId.get(task.taskId);
  if (entry && !state.model.paused) {
    state.model.applyNow({ event: null, task }, { counts: false });
    scheduleListRender();
  }
  if (state.inbox.apply(task)) scheduleInboxRender();
}
