// The rest of the page: every part the first rows do not need, in one module that app.js loads
// with import() after the frame that draws those rows (or as soon as a key or a click needs it
// before then). Its imports are the live stream (live.js, event-stream.js, sse.js), the inbox,
// the approval queue and its cards, opening a task (open-task.js) and loading the detail pane
// and the dialogs (lazy.js), and cancelling. index.html preloads none of them, so they do not
// compete with the modules the first rows wait for (ui/test/preload.test.mjs checks both lists).
// The stream resumes from the first list page's eventId, so no change is missed while this
// module loads.

import { initApprovals } from './approvals-view.js';
import { initBrowserNotifications } from './browser-notify.js';
import { openTask } from './open-task.js';
import { toast } from './notices.js';
import { $ } from './dom.js';
import { state } from './state.js';

export { connectStream } from './live.js';
export { reloadInbox, renderInbox } from './inbox.js';
export { reloadApprovals, tickApprovals, focusApprovals, focusQuestionRow, onApprovalKey } from './approvals-view.js';
export { openTask, focusTask, closeDetail } from './open-task.js';
export { requestCancel, bulkCancel } from './cancel.js';
export { loadDetailAndDialogsWhenIdle, loadConnectDialog, loadNotifyDialog, loadServersDialog, loadPolicyDialog, loadTaskActions } from './lazy.js';

/** Wires the controls of the parts loaded here (the approvals' selection bar, and in a browser
 *  the Notifications button); app.js calls it once, when this module has loaded. */
export function initRest() {
  initApprovals();
  if (!state.desktop) state.notifyChange = initBrowserNotifications($('notify-btn'), { openTask: (id) => openTask(id, { focus: true }), toast });
}
