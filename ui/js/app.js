// Taskdeck's page, its entry point (index.html loads this module): starts the page with the
// token early.js found (/v1/me and the first list page, whose requests early.js sent already),
// wires the controls once, and follows the URL fragment. Its static imports are what the first
// rows need, plus the keys (keyboard.js) and the help dialog, which must answer at once; the
// rest of the page (rest.js: the live stream, the inbox, the approvals, opening a task,
// cancelling, and through lazy.js the detail pane and the dialogs) is imported after the frame
// that draws the first rows, or as soon as a key or a click needs it. Each part of the page is
// a module of its own: state.js (the one state object), token-screen.js, list.js, filters.js,
// selection.js, keyboard.js, dialogs.js, notices.js (toasts), store-banner.js (why writes
// fail), conn.js (the live indicator), me-pill.js (who is signed in), timing.js. No module imports this one.

import { createApi } from './api.js';
import { loadToken, parseTokenFragment, rights, taskFromHash } from './auth.js';
import { early } from './early.js';
import { ListView } from './list-view.js';
import { openHelp, initHelp } from './dialogs.js';
import { $, narrow } from './dom.js';
import { state } from './state.js';
import { showTokenScreen, onAuthError, initTokenScreen, closeStream } from './token-screen.js';
import { reloadList, loadMore, scheduleListRender, renderPending, togglePause } from './list.js';
import { initFilters, renderToolOptions } from './filters.js';
import { toggleSelect, clearSelection } from './selection.js';
import { onKey, onPointerDown, onFocusIn } from './keyboard.js';
import { once, afterNextFrame } from './timing.js';
import { toast } from './notices.js';
import { noteWrite } from './store-banner.js';
import { renderMe } from './me-pill.js';

/** rest.js once it has loaded and run initRest(); null before. */
let rest = null;

/** Loads rest.js (once; a failed load is tried again by the next call). */
const loadRest = once(async () => {
  const m = await import('./rest.js');
  if (!rest) {
    m.initRest();
    rest = m;
  }
  return m;
});

/** Runs `fn` with a module loaded on first use (`load`); a failed load is reported, not thrown.
 *  Calls made in turn run in turn (they wait on the same load). */
function withModule(load, fn) {
  load().then(fn, (err) => toast(`Could not load this part of the page: ${err.message}`, 'bad'));
}

/** Runs `fn` with rest.js, loading it first if it has not loaded. */
function withRest(fn) {
  withModule(loadRest, fn);
}

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
  // The shell is shown at once, before /v1/me answers (it was laid out, undrawn, while the
  // modules loaded: index.html), so the frame that draws the first rows lays out only them. A
  // refused token swaps it for the token screen; what only the admin may use stays hidden until
  // /v1/me says.
  $('boot').hidden = true;
  $('token-screen').hidden = true;
  $('app').hidden = false;
  delete $('app').dataset.booting; // drawn from now on (index.html lays it out hidden)
  let unreachable = false;
  const listed = reloadList();
  // Both first requests have taken early.js's answers (or sent their own): an answer left there
  // is dropped, so no later request gets it.
  early.close();
  listed.then((eventId) => {
    if (state.authFailed || unreachable) return;
    // The rest of the page's modules, the stream, the inbox's and approvals' queries wait for
    // the frame that draws the first rows (loading them would delay it): the rows are what the
    // page is opened for, and the stream resumes from the page's eventId, missing nothing.
    afterNextFrame(() => {
      if (state.authFailed || unreachable) return;
      withRest((m) => {
        if (state.authFailed || unreachable) return;
        m.connectStream(eventId);
        // Each start (a sign-in again too) loads both queues afresh; a key waits for them.
        state.queuesLoaded = Promise.allSettled([m.reloadInbox(), m.reloadApprovals()]);
        m.loadDetailAndDialogsWhenIdle();
      });
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
  renderMe(state.me.principal, may.seesAll);
  $('me').title = may.administers
    ? 'Signed in with the admin token: you see every principal’s tasks'
    : may.seesAll
      ? 'Signed in as a human: you see every principal’s tasks and answer approvals; agents, servers and policies are managed with the admin token'
      : 'You see only your own tasks';
  $('principal-filter-label').hidden = !may.seesAll;
  $('connect-btn').hidden = !may.administers;
  $('servers-btn').hidden = !may.administers;
  $('policies-btn').hidden = !may.administers;
  // In a browser, rest.js's browser-notify.js shows it where notifications can work.
  if (state.desktop) $('notify-btn').hidden = false;
  state.api
    .tools()
    .then((r) => {
      for (const t of r.tools || []) state.tools.add(t.name);
      renderToolOptions();
    })
    .catch(() => {});
  const wanted = taskFromHash(parseTokenFragment(window.location.hash).hash);
  if (wanted) withRest((m) => m.focusTask(wanted, { focus: false }));
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
  if (wanted) withRest((m) => m.focusTask(wanted, { focus: true }));
}

/** Creates the list's view and wires the page's controls; runs once. */
function initApp() {
  state.initialized = true;
  state.list = new ListView($('task-list'), $('task-list-spacer'), state.model, {
    // On a narrow screen the detail replaces the list, so focus follows it there.
    onOpen: (index, how) => {
      const id = state.model.at(index).id;
      const focus = how.focus || narrow();
      withRest((m) => m.openTask(id, { ...how, focus }));
    },
    onToggle: toggleSelect,
    isSelected: (id) => state.selected.has(id),
    openTaskId: () => state.detail.taskId,
    onNearEnd: () => loadMore(),
    schedule: () => scheduleListRender(),
    needTick: (on) => state.ticker.need('list', on),
    downSince: () => state.streamDownSince,
  });
  // The clocks of what shows a running time; each runs only while its part has something it
  // updates (the parts call state.ticker.need as they redraw): with nothing live, none is set.
  state.ticker.add('detail', () => state.detail.tick(), 1000);
  // Live rows count their seconds like the detail does (rows write only what changed).
  state.ticker.add('list', () => state.list.tick(), 1000);
  // The inbox's ages and the approvals' countdowns, once rest.js has loaded them.
  state.ticker.add('inbox', () => rest && rest.renderInbox(), 5000);
  state.ticker.add('approvals', () => rest && rest.tickApprovals(), 1000);
  // With no clock running, a finished row's age ("12m ago") waits: it is brought up to date
  // when the window is looked at again (shown or focused), which sets no timer either.
  const catchUp = () => {
    if (document.visibilityState !== 'visible') return;
    state.list.tick();
    state.detail.tick();
  };
  window.addEventListener('focus', catchUp);
  document.addEventListener('visibilitychange', catchUp);
  initFilters();
  $('pause-btn').addEventListener('click', togglePause);
  $('help-btn').addEventListener('click', openHelp);
  // The dialogs and the task actions load on first use, after rest.js (whose lazy.js loads them).
  const withPart = (load, fn) => withRest((m) => withModule(load(m), fn));
  $('connect-btn').addEventListener('click', () => withPart((m) => m.loadConnectDialog, (d) => d.openConnectDialog()));
  $('servers-btn').addEventListener('click', () => withPart((m) => m.loadServersDialog, (d) => d.openServersDialog()));
  $('policies-btn').addEventListener('click', () => withPart((m) => m.loadPolicyDialog, (d) => d.openPolicyDialog()));
  if (state.desktop) $('notify-btn').addEventListener('click', () => withPart((m) => m.loadNotifyDialog, (d) => d.openNotifyDialog()));
  window.addEventListener('hashchange', onHashChange);
  $('bulk-cancel').addEventListener('click', () => withRest((m) => m.bulkCancel()));
  $('bulk-clear').addEventListener('click', clearSelection);
  $('bulk-delete').addEventListener('click', () => withPart((m) => m.loadTaskActions, (a) => a.bulkDelete()));
  $('clear-finished').addEventListener('click', () => withPart((m) => m.loadTaskActions, (a) => a.clearFinished()));
  document.addEventListener('keydown', (e) => onKey(e, withRest));
  document.addEventListener('pointerdown', onPointerDown, true);
  document.addEventListener('focusin', (e) => onFocusIn(e.target));
  renderPending();
}

boot();
