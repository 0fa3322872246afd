// Taskdeck's page, its entry point (index.html loads this module): starts the page with the
// token early.js found (/v1/me and the first list page, whose requests early.js sent already,
// then the live stream, the inbox and the modules loaded later), wires the controls once, and follows the URL fragment. Each part of the page
// is a module of its own: state.js (the one state object), token-screen.js, live.js (the event
// stream), list.js, filters.js, inbox.js, selection.js, cancel.js, open-task.js, keyboard.js,
// lazy.js (modules loaded later), notices.js (toasts), store-banner.js (why writes fail),
// timing.js. No module imports this one.

import { createApi } from './api.js';
import { loadToken, parseTokenFragment, rights, taskFromHash } from './auth.js';
import { early } from './early.js';
import { ListView } from './list-view.js';
import { openHelp, initHelp } from './dialogs.js';
import { h, clear, $ } from './dom.js';
import { state } from './state.js';
import { showTokenScreen, onAuthError, initTokenScreen } from './token-screen.js';
import { connectStream, closeStream, renderConn } from './live.js';
import { reloadList, loadMore, scheduleListRender, renderPending, togglePause } from './list.js';
import { initFilters, renderToolOptions } from './filters.js';
import { reloadInbox, renderInbox } from './inbox.js';
import { initApprovals, reloadApprovals, tickApprovals } from './approvals-view.js';
import { toggleSelect, clearSelection } from './selection.js';
import { bulkCancel } from './cancel.js';
import { focusTask, openTask, narrow } from './open-task.js';
import { loadTheRestWhenIdle, withModule, loadConnectDialog, loadNotifyDialog, loadServersDialog, loadPolicyDialog, loadTaskActions } from './lazy.js';
import { onKey } from './keyboard.js';
import { afterNextFrame } from './timing.js';
import { noteWrite } from './store-banner.js';

async function boot() {
  initTokenScreen(start);
  initHelp();
  // early.js has read (and scrubbed) the fragment already: its token is the page's.
  const token = early.token;
  if (!token) {
    showTokenScreen('');
    return;
  }
  start(token);
}

async function start(token) {
  state.token = token;
  state.authFailed = false;
  // The first /v1/me and list requests were sent by early.js (with this token, or they are not
  // taken): the client reads those answers instead of asking again.
  state.api = createApi(() => state.token, { onAuthError, onWrite: noteWrite, fetchImpl: (path, init) => early.take(path, init) || fetch(path, init) });
  // /v1/me and the first list page go out together, before the live stream: the first rows
  // wait for neither the stream nor /v1/me's round trip. The page carries the id of the newest
  // change it reflects, and the stream resumes from there, so nothing falls between the two.
  // Every request checks the token; the first 401 shows the token screen (onAuthError) and
  // stops the stream.
  const me = state.api.me();
  if (!state.initialized) initApp();
  // The shell is shown at once, before /v1/me answers: its first layout then happens while the
  // requests are in flight instead of in the frame that renders the first rows. A refused token
  // swaps it for the token screen; what only the admin may use stays hidden until /v1/me says.
  $('boot').hidden = true;
  $('token-screen').hidden = true;
  $('app').hidden = false;
  let unreachable = false;
  const listed = reloadList();
  // Both first requests have taken early.js's answers (or sent their own): an answer left there
  // is dropped, so no later request gets it.
  early.close();
  listed.then((eventId) => {
    if (state.authFailed || unreachable) return;
    // The stream, the inbox's and approvals' queries and the modules loaded later wait for the
    // frame that draws the first rows (opening them cost that frame ~10 ms): the rows are what
    // the page is opened for, and the stream resumes from the page's eventId, missing nothing.
    afterNextFrame(() => {
      if (state.authFailed || unreachable) return;
      connectStream(eventId);
      reloadInbox();
      reloadApprovals();
      loadTheRestWhenIdle();
    });
  });
  try {
    state.me = await me;
  } catch (err) {
    if (err.status === 401) return; // onAuthError showed the token screen
    unreachable = true; // the stream is not opened (or stopped if it already was)
    closeStream();
    $('app').hidden = true;
    $('boot').textContent = `Could not reach Taskdeck: ${err.message}`;
    $('boot').hidden = false;
    return;
  }
  if (state.authFailed) return;
  state.detail.syncPrompts(); // who may answer what is known now
  // A human sees and answers like the admin; agents, servers and policies are the admin's.
  const may = rights(state.me);
  clear($('me')).append('Signed in as ', h('strong', {}, state.me.principal), may.seesAll ? h('span', { class: 'pill me-pill' }, 'sees all principals') : '');
  $('me').title = may.administers
    ? 'Signed in with the admin token: you see every principal’s tasks'
    : may.seesAll
      ? 'Signed in as a human: you see every principal’s tasks and answer approvals; agents, servers and policies are managed with the admin token'
      : 'You see only your own tasks';
  $('principal-filter-label').hidden = !may.seesAll;
  $('connect-btn').hidden = !may.administers;
  $('servers-btn').hidden = !may.administers;
  $('policies-btn').hidden = !may.administers;
  $('notify-btn').hidden = !state.desktop;
  state.api
    .tools()
    .then((r) => {
      for (const t of r.tools || []) state.tools.add(t.name);
      renderToolOptions();
    })
    .catch(() => {});
  for (const t of state.timers) clearInterval(t);
  state.timers = [
    setInterval(() => state.detail.tick(), 1000),
    // Running rows count their seconds like the detail does (rows write only what changed).
    setInterval(() => state.list.tick(), 1000),
    setInterval(renderInbox, 5000),
    // The approvals' countdowns, to the second.
    setInterval(tickApprovals, 1000),
  ];
  const wanted = taskFromHash(parseTokenFragment(window.location.hash).hash);
  if (wanted) focusTask(wanted, { focus: false });
}

/**
 * The fragment changed: the desktop shell sets #task=<id> when a notification is clicked
 * (and someone may paste a #token=... link into this tab).
 */
function onHashChange() {
  const { token } = parseTokenFragment(window.location.hash);
  if (token) {
    // Stored and scrubbed from the address bar; a different token means a fresh start.
    loadToken({ location: window.location, storage: sessionStorage, history: window.history });
    if (token !== state.token) {
      window.location.reload();
      return;
    }
  }
  if (!state.me) return; // not signed in yet: start() reads the fragment
  const wanted = taskFromHash(window.location.hash);
  if (wanted) focusTask(wanted, { focus: true });
}

/** Creates the list's view and wires the page's controls; runs once. */
function initApp() {
  state.initialized = true;
  state.list = new ListView($('task-list'), $('task-list-spacer'), state.model, {
    // On a narrow screen the detail replaces the list, so focus follows it there.
    onOpen: (index, how) => openTask(state.model.at(index).id, { ...how, focus: how.focus || narrow() }),
    onToggle: toggleSelect,
    isSelected: (id) => state.selected.has(id),
    openTaskId: () => state.detail.taskId,
    onNearEnd: () => loadMore(),
    schedule: () => scheduleListRender(),
  });
  initFilters();
  $('pause-btn').addEventListener('click', togglePause);
  $('help-btn').addEventListener('click', openHelp);
  $('connect-btn').addEventListener('click', () => withModule(loadConnectDialog, (m) => m.openConnectDialog()));
  $('servers-btn').addEventListener('click', () => withModule(loadServersDialog, (m) => m.openServersDialog()));
  $('policies-btn').addEventListener('click', () => withModule(loadPolicyDialog, (m) => m.openPolicyDialog()));
  if (state.desktop) $('notify-btn').addEventListener('click', () => withModule(loadNotifyDialog, (m) => m.openNotifyDialog()));
  window.addEventListener('hashchange', onHashChange);
  $('bulk-cancel').addEventListener('click', bulkCancel);
  $('bulk-clear').addEventListener('click', clearSelection);
  $('bulk-delete').addEventListener('click', () => withModule(loadTaskActions, (m) => m.bulkDelete()));
  $('clear-finished').addEventListener('click', () => withModule(loadTaskActions, (m) => m.clearFinished()));
  initApprovals();
  document.addEventListener('keydown', onKey);
  renderPending();
  renderConn();
}

boot();
