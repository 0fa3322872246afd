// The detail pane and the dialogs, loaded on their own. They come after rest.js (the part of the
// page loaded after the first rows, which imports this module): their modules load when the
// browser is idle after that, or at once when they are first used. index.html preloads only
// what the first rows need (ui/test/preload.test.mjs keeps both in step).

import { $ } from './dom.js';
import { rights } from './auth.js';
import { state } from './state.js';
import { once } from './timing.js';
import { toast, announce } from './notices.js';
import { handleTaskSnapshot } from './live.js';
import { notePrincipal } from './filters.js';
import { requestCancel } from './cancel.js';
import { closeDetail } from './open-task.js';
import { focusNextApproval, decidingHere, reloadApprovals } from './approvals-view.js';
import { noteDecided } from './browser-notify.js';
import { confirmDialog } from './dialogs.js';

/** The detail pane (DetailView): loaded, created and stored in state.detail on first call. */
export const loadDetail = once(async () => {
  const { DetailView } = await import('./detail-view.js');
  state.detail = new DetailView($('detail'), {
    api: {
      getTask: (id, query) => state.api.getTask(id, query),
      answer: async (id, responses) => {
        noteDecided([id]);
        // The question's row in the approval queue leaves by this person's answer.
        const done = decidingHere(Object.keys(responses).map((key) => `${id}/${key}`));
        try {
          const r = await state.api.answer(id, responses);
          if (r && r.task) handleTaskSnapshot(r.task);
          // The queue is read again as after a decision there: without waiting for the event
          // stream, the answered question leaves it.
          if (r && Array.isArray(r.accepted) && r.accepted.length) await reloadApprovals();
          return r;
        } finally {
          done();
        }
      },
      taskLog: (id, range) => state.api.taskLog(id, range),
      reveal: (id) => state.api.reveal(id),
    },
    requestCancel,
    announce,
    toast,
    onClose: closeDetail,
    isHuman: () => rights(state.me).seesAll,
    principal: () => state.me && state.me.principal,
    needTick: (on) => state.ticker.need('detail', on),
    focusQueue: focusNextApproval,
  });
  return state.detail;
});

/** The "Connect an agent" dialog (admin only). */
export const loadConnectDialog = once(async () => {
  const m = await import('./connect-dialog.js');
  m.initConnectDialog({
    api: { get: (path) => state.api.get(path), post: (path, body) => state.api.post(path, body) },
    toast,
    onCreated: ({ name }) => {
      notePrincipal(name);
      announce(`Token created for ${name}.`);
    },
  });
  return m;
});

/** The Servers view (admin only). */
export const loadServersDialog = once(async () => {
  const m = await import('./servers-dialog.js');
  m.initServersDialog({
    api: { get: (path) => state.api.get(path), post: (path, body) => state.api.post(path, body), del: (path) => state.api.del(path) },
    toast,
  });
  return m;
});

/** The Policies dialog (admin only). */
export const loadPolicyDialog = once(async () => {
  const m = await import('./policy-dialog.js');
  m.initPolicyDialog({
    api: { get: (path) => state.api.get(path), put: (path, body, headers) => state.api.put(path, body, headers), del: (path) => state.api.del(path) },
    announce,
    toast,
    confirm: confirmDialog,
  });
  return m;
});

/** The desktop shell's notification settings dialog. */
export const loadNotifyDialog = once(async () => {
  const m = await import('./notify-dialog.js');
  m.initNotifyDialog({ bridge: state.desktop, toast });
  return m;
});

/** Deleting and re-running tasks (the list's bulk bar and "Clear finished"). */
export const loadTaskActions = once(() => import('./task-actions.js'));

/** Loads the detail pane and the dialogs (those this user may open) when the browser is idle. */
export function loadDetailAndDialogsWhenIdle() {
  const load = () => {
    loadDetail();
    if (rights(state.me).administers) loadConnectDialog();
    if (rights(state.me).administers) loadPolicyDialog();
    if (state.desktop) loadNotifyDialog();
  };
  if (typeof requestIdleCallback === 'function') requestIdleCallback(load, { timeout: 1000 });
  else setTimeout(load, 200);
}
