// Taskdeck's page: wires the token, the /v1 API, the live event stream, the task list model
// and the views together, and handles keyboard shortcuts. Logic that needs no DOM lives in
// the small modules it imports (and is unit-tested there).

import { createApi, cancelMany, describeBulkCancel, cancelRefusal } from './api.js';
import { loadToken, saveToken, forgetToken, parseTokenFragment, taskFromHash } from './auth.js';
import { openEventStream } from './event-stream.js';
import { TaskList, InputInbox, defaultFilters, listQuery, searchDelayMs } from './tasks-model.js';
import { ListView } from './list-view.js';
import { confirmDialog, openHelp, initHelp, dialogOpen } from './dialogs.js';
import { desktopBridge } from './notify-settings.js';
import { h, clear, isTypingTarget } from './dom.js';
import { STATUSES, statusLabel } from './status.js';
import { formatAge, formatCount, oneLine, shortId, isTerminal } from './format.js';

// The first page is small so the list paints early (it covers a tall window); the next
// pages load while the reader looks at it.
const FIRST_PAGE_SIZE = 50;
const PAGE_SIZE = 200;
const $ = (id) => document.getElementById(id);

const state = {
  token: null,
  me: null,
  api: null,
  stream: null,
  model: new TaskList(defaultFilters()),
  inbox: new InputInbox(),
  list: null,
  detail: null,
  selected: new Set(),
  lastToggled: -1,
  generation: 0,
  loading: false,
  loadingMore: false,
  loadError: null,
  listLoaded: false,
  tools: new Set(),
  principals: new Set(),
  streamState: 'connecting',
  timers: [],
  /** The desktop shell's commands (notification settings...), or null in a plain browser. */
  desktop: desktopBridge(window.__TAURI__),
};

// ---------------------------------------------------------------- modules loaded later

// The first screen (the list) needs neither the detail pane (with its forms, result viewer,
// timeline and output log) nor the dialogs: their modules load once the list is drawn (when
// the browser is idle), or at once when they are first used. index.html preloads only what
// the list needs (ui/test/preload.test.mjs keeps both in step).

/** The detail pane until its modules have loaded: no task is open. */
const NO_DETAIL = {
  taskId: null,
  task: null,
  tick() {},
  onChange() {},
  scheduleRefetch() {},
  shortcutPrompt: () => null,
  hasLockedPrompts: () => false,
  syncPrompts() {},
  close() {},
  requestCancel() {},
};

/** `load` runs once; every call returns its promise. A load that failed (the server was away,
 *  say) is tried again by the next call. */
function once(load) {
  let p = null;
  return () => {
    if (!p) {
      p = load();
      p.catch(() => {
        p = null;
      });
    }
    return p;
  };
}

const loadDetail = once(async () => {
  const { DetailView } = await import('./detail-view.js');
  state.detail = new DetailView($('detail'), {
    api: {
      getTask: (id, query) => state.api.getTask(id, query),
      answer: async (id, responses) => {
        const r = await state.api.answer(id, responses);
        if (r && r.task) handleTaskSnapshot(r.task);
        return r;
      },
      taskLog: (id, range) => state.api.taskLog(id, range),
    },
    requestCancel,
    announce,
    toast,
    onClose: closeDetail,
    isAdmin: () => Boolean(state.me && state.me.admin),
  });
  return state.detail;
});

const loadConnectDialog = once(async () => {
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

const loadNotifyDialog = once(async () => {
  const m = await import('./notify-dialog.js');
  m.initNotifyDialog({ bridge: state.desktop, toast });
  return m;
});

/** Loads what the first screen left out, when the browser has nothing else to do. */
function loadTheRestWhenIdle() {
  const load = () => {
    loadDetail();
    if (state.me && state.me.admin) loadConnectDialog();
    if (state.desktop) loadNotifyDialog();
  };
  if (typeof requestIdleCallback === 'function') requestIdleCallback(load, { timeout: 1000 });
  else setTimeout(load, 200);
}

/** Runs `fn` with a module loaded on first use; a failed load is reported, not thrown. */
function withModule(load, fn) {
  load().then(fn, (err) => toast(`Could not load this part of the page: ${err.message}`, 'bad'));
}

// ---------------------------------------------------------------- boot and token

function showTokenScreen(message) {
  $('boot').hidden = true;
  $('app').hidden = true;
  $('token-screen').hidden = false;
  const err = $('token-error');
  err.textContent = message || '';
  err.hidden = !message;
  $('token-input').value = '';
  $('token-input').focus();
}

function onAuthError() {
  // /v1/me and the stream may both be refused: the token screen is shown once.
  if (state.authFailed) return;
  state.authFailed = true;
  forgetToken(sessionStorage);
  if (state.stream) state.stream.close();
  state.stream = null;
  for (const t of state.timers) clearInterval(t);
  state.timers = [];
  showTokenScreen('The token was not accepted (it may have changed). Paste a current token.');
}

function initTokenScreen() {
  const input = $('token-input');
  const show = $('token-show');
  show.addEventListener('click', () => {
    const visible = input.type === 'text';
    input.type = visible ? 'password' : 'text';
    show.textContent = visible ? 'Show' : 'Hide';
    show.setAttribute('aria-pressed', String(!visible));
  });
  $('token-form').addEventListener('submit', async (e) => {
    e.preventDefault();
    const token = input.value.trim();
    if (!token) {
      showTokenScreen('Paste the token first.');
      return;
    }
    const probe = createApi(() => token);
    try {
      await probe.me();
    } catch (err) {
      showTokenScreen(err.status === 401 ? 'That token was not accepted. Check that you copied the whole file content.' : `Could not reach Taskdeck: ${err.message}`);
      return;
    }
    saveToken(sessionStorage, token);
    start(token);
  });
}

async function boot() {
  initTokenScreen();
  initHelp();
  const token = loadToken({ location: window.location, storage: sessionStorage, history: window.history });
  if (!token) {
    showTokenScreen('');
    return;
  }
  start(token);
}

async function start(token) {
  state.token = token;
  state.authFailed = false;
  state.api = createApi(() => state.token, { onAuthError });
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
  reloadList().then((eventId) => {
    if (state.authFailed || unreachable) return;
    connectStream(eventId);
    // The inbox's query waits for the list's: the first rows are what the page is opened for.
    reloadInbox();
    loadTheRestWhenIdle();
  });
  try {
    state.me = await me;
  } catch (err) {
    if (err.status === 401) return; // onAuthError showed the token screen
    unreachable = true; // the stream is not opened (or stopped if it already was)
    if (state.stream) state.stream.close();
    state.stream = null;
    $('app').hidden = true;
    $('boot').textContent = `Could not reach Taskdeck: ${err.message}`;
    $('boot').hidden = false;
    return;
  }
  if (state.authFailed) return;
  state.detail.syncPrompts(); // who may answer what is known now
  clear($('me')).append('Signed in as ', h('strong', {}, state.me.principal), state.me.admin ? h('span', { class: 'pill me-pill' }, 'sees all principals') : '');
  $('me').title = state.me.admin ? 'Signed in with the admin token: you see every principal’s tasks' : 'You see only your own tasks';
  $('principal-filter-label').hidden = !state.me.admin;
  $('connect-btn').hidden = !state.me.admin;
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

// ---------------------------------------------------------------- live stream

/**
 * Opens the live stream. With `resumeFrom` (the list page's `eventId`) it starts with the
 * changes after that page; without it (the page could not be loaded), the list is loaded once
 * the stream is open.
 */
function connectStream(resumeFrom) {
  let openedOnce = false;
  state.stream = openEventStream({
    getToken: () => state.token,
    lastEventId: resumeFrom || '',
    onChange: handleChange,
    onResync: () => {
      toast('Live updates fell behind; the list was reloaded.', 'warn');
      reloadList();
      reloadInbox();
      if (state.detail.taskId) state.detail.scheduleRefetch();
    },
    onAuthError,
    onState: (s, info) => {
      state.streamState = s;
      renderConn(info);
      if (s === 'open') {
        if (openedOnce || !resumeFrom) {
          // Back after a gap: the replay brings every change, but not the tasks that were
          // created and deleted meanwhile; the counts come from the server again.
          reloadList();
          reloadInbox();
        }
        openedOnce = true;
      }
    },
  });
}

function renderConn(info) {
  const el = $('conn');
  const s = state.streamState;
  el.dataset.state = s;
  const text = {
    connecting: 'Connecting…',
    open: 'Live',
    reconnecting: 'Reconnecting…',
    closed: 'Offline',
  }[s];
  $('conn-text').textContent = text || s;
  el.title = s === 'reconnecting' && info && info.error ? `Connection lost: ${info.error}` : s === 'open' ? 'Changes appear as they happen' : '';
}

function handleChange(change) {
  const task = change.task;
  if (task.tool) noteTool(task.tool);
  if (task.principal) notePrincipal(task.principal);
  // The inbox and the open task stay live even while the list is paused.
  const inboxResult = state.inbox.apply(task, change.event);
  if (inboxResult === 'added') announceInput(task);
  if (inboxResult || state.inbox.total !== null) scheduleInboxRender();
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

function announceInput(task) {
  const prompts = Object.values(task.inputRequests || {});
  const msg = prompts.length && prompts[0].params && typeof prompts[0].params.message === 'string' ? prompts[0].params.message : '';
  $('input-announcer').textContent = `New input request from ${task.principal || 'an agent'}: ${task.tool}${msg ? ` — ${oneLine(msg, 140)}` : ''}`;
}

function announce(text) {
  $('announcer').textContent = text;
}

// ---------------------------------------------------------------- list loading

/** A function that runs `fn` once in the next animation frame, however often it is called before then. */
function oncePerFrame(fn) {
  let queued = false;
  return () => {
    if (queued) return;
    queued = true;
    requestAnimationFrame(() => {
      queued = false;
      fn();
    });
  };
}

const scheduleListRender = oncePerFrame(() => {
  state.list.render();
  renderChips();
  renderFooter();
  renderEmpty();
});

let countsRefresh = null;
function scheduleCountsRefresh() {
  if (countsRefresh) return;
  countsRefresh = setTimeout(async () => {
    countsRefresh = null;
    const gen = state.generation;
    try {
      const page = await state.api.listTasks(listQuery(state.model.filters, { limit: 1 }));
      if (gen !== state.generation || state.model.paused || !page.counts) return;
      state.model.counts = { ...page.counts };
      state.model.version++;
      scheduleListRender();
    } catch {
      // the next change tries again
    }
  }, 1000);
}

/**
 * Loads the first page for the current filters (changes arriving meanwhile are applied on top).
 * Resolves to the page's `eventId`, or null when this load failed or was overtaken by a newer one.
 */
async function reloadList() {
  const gen = ++state.generation;
  let eventId = null;
  state.loading = true;
  state.loadError = null;
  state.model.setFilters(currentFilters());
  state.model.beginLoad();
  renderFooter();
  try {
    const page = await state.api.listTasks(listQuery(state.model.filters, { limit: FIRST_PAGE_SIZE }));
    if (gen !== state.generation) return null;
    state.model.reset(page);
    eventId = page.eventId || null;
    for (const t of page.tasks || []) {
      noteTool(t.tool);
      notePrincipal(t.principal);
    }
    state.list.resetScroll();
    state.listLoaded = true;
  } catch (err) {
    if (gen !== state.generation) return null;
    state.model.recording = null;
    state.loadError = err;
  } finally {
    if (gen === state.generation) state.loading = false;
  }
  scheduleListRender();
  return eventId;
}

async function loadMore() {
  const m = state.model;
  if (state.loading || state.loadingMore || !m.nextCursor) return;
  const gen = state.generation;
  state.loadingMore = true;
  m.beginLoad();
  renderFooter();
  try {
    const page = await state.api.listTasks(listQuery(m.filters, { cursor: m.nextCursor, limit: PAGE_SIZE }));
    if (gen !== state.generation) return;
    m.appendPage(page);
    for (const t of page.tasks || []) notePrincipal(t.principal);
  } catch (err) {
    if (gen === state.generation) {
      m.recording = null;
      state.loadError = err;
    }
  } finally {
    state.loadingMore = false;
  }
  scheduleListRender();
}

/** Pages of 1,000 the inbox loads at most; past them it shows the server's count. */
const INBOX_MAX_PAGES = 10;

async function reloadInbox() {
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
  } catch {
    // keep what we have; the stream keeps it current
  }
  renderInbox();
}

/** Renders the inbox once in the next frame, however many changes arrive before it. */
const scheduleInboxRender = oncePerFrame(() => renderInbox());

function currentFilters() {
  return {
    statuses: [...state.statusFilter],
    tool: $('tool-filter').value,
    principal: state.me && state.me.admin ? $('principal-filter').value : '',
    q: $('search').value,
  };
}

// ---------------------------------------------------------------- rendering bits

function renderChips() {
  const wrap = $('status-filters');
  const counts = state.model.counts;
  const all = state.model.total();
  const make = (key, label, count, pressed) => {
    const btn = h(
      'button',
      { type: 'button', class: `chip chip-${key}`, 'aria-pressed': String(pressed), dataset: { status: key } },
      key !== 'all' ? h('span', { class: 'chip-symbol', 'aria-hidden': 'true' }, chipSymbol(key)) : null,
      h('span', { class: 'chip-label' }, label),
      h('span', { class: 'chip-count' }, formatCount(count)),
    );
    return btn;
  };
  const existing = wrap.querySelectorAll('button.chip');
  const wantKeys = ['all', ...STATUSES];
  if (existing.length !== wantKeys.length) {
    clear(wrap);
    for (const key of wantKeys) wrap.appendChild(make(key, key === 'all' ? 'All' : statusLabel(key), 0, false));
  }
  // Runs on every list frame: write only what changed.
  for (const btn of wrap.querySelectorAll('button.chip')) {
    const key = btn.dataset.status;
    const count = key === 'all' ? all : counts[key] || 0;
    const pressed = key === 'all' ? state.statusFilter.size === 0 : state.statusFilter.has(key);
    setAttr(btn, 'aria-pressed', String(pressed));
    setText(btn.querySelector('.chip-count'), formatCount(count));
    setAttr(btn, 'aria-label', `${key === 'all' ? 'All statuses' : statusLabel(key)}: ${formatCount(count)} task${count === 1 ? '' : 's'}`);
  }
}

function chipSymbol(key) {
  return { working: '◐', input_required: '!', completed: '✓', failed: '✕', cancelled: '⊘' }[key] || '';
}

function renderFooter() {
  const m = state.model;
  const el = $('list-footer');
  let text;
  if (state.loading && !state.listLoaded) text = 'Loading tasks…';
  else if (state.loading) text = 'Updating…';
  else if (state.loadError) text = `Could not load tasks: ${state.loadError.message}`;
  else if (state.loadingMore) text = `${formatCount(m.length)} loaded · loading more…`;
  else if (m.nextCursor) text = `${formatCount(m.length)} loaded · more load as you scroll`;
  else text = `${formatCount(m.length)} task${m.length === 1 ? '' : 's'}`;
  setText(el, text);
  el.classList.toggle('error', !!state.loadError);
}

function setText(el, text) {
  if (el.textContent !== text) el.textContent = text;
}

function setAttr(el, name, value) {
  if (el.getAttribute(name) !== value) el.setAttribute(name, value);
}

function renderEmpty() {
  const el = $('list-empty');
  const m = state.model;
  const show = !state.loading && state.listLoaded && m.length === 0;
  el.hidden = !show;
  if (!show) return;
  const f = m.filters;
  const filtered = f.statuses.length || f.tool || f.principal || (f.q && f.q.trim());
  clear(el);
  el.appendChild(h('p', { class: 'list-empty-title' }, filtered ? 'No tasks match these filters' : 'No tasks yet'));
  el.appendChild(h('p', { class: 'muted' }, filtered ? 'Try another status, tool or search.' : 'Tasks appear here as soon as an agent starts one.'));
  if (filtered) {
    const reset = h('button', { type: 'button', class: 'btn btn-small' }, 'Clear filters');
    reset.addEventListener('click', clearFilters);
    el.appendChild(reset);
  }
}

function clearFilters() {
  state.statusFilter.clear();
  $('search').value = '';
  $('tool-filter').value = '';
  $('principal-filter').value = '';
  reloadList();
}

/** Entries the inbox shows (newest first); the rest are counted and in the list's "Needs input". */
const INBOX_SHOWN = 200;

function renderInbox() {
  const list = state.inbox.list();
  const count = state.inbox.count;
  const box = $('inbox');
  box.hidden = count === 0;
  document.title = count ? `(${formatCount(count)}) Taskdeck — ${count === 1 ? '1 task needs' : `${formatCount(count)} tasks need`} input` : 'Taskdeck';
  $('inbox-count').textContent = formatCount(count);
  const ul = $('inbox-list');
  // Rebuilt often (ages tick): keep keyboard focus on the same task's entry.
  const focused = ul.contains(document.activeElement) ? document.activeElement.dataset.taskId : null;
  const scroll = ul.scrollTop;
  clear(ul);
  const now = Date.now();
  for (const t of list.slice(0, INBOX_SHOWN)) {
    const prompts = Object.values(t.inputRequests || {});
    const msg = prompts.length && prompts[0].params && typeof prompts[0].params.message === 'string' ? prompts[0].params.message : t.statusMessage || '';
    const more = prompts.length > 1 ? ` (+${prompts.length - 1} more)` : '';
    const btn = h(
      'button',
      { type: 'button', class: `inbox-item${state.detail.taskId === t.taskId ? ' open' : ''}`, dataset: { taskId: t.taskId }, 'aria-label': `Answer ${t.tool} from ${t.principal}: ${oneLine(msg, 120)}` },
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

function renderPending() {
  const m = state.model;
  const btn = $('pause-btn');
  const note = $('pending-note');
  if (!m.paused) {
    btn.textContent = 'Pause updates';
    btn.setAttribute('aria-pressed', 'false');
    btn.classList.remove('btn-paused');
    note.textContent = '';
    return;
  }
  const s = m.pendingSummary();
  btn.setAttribute('aria-pressed', 'true');
  btn.classList.add('btn-paused');
  btn.textContent = s.changes ? `Resume (${formatCount(s.changes)})` : 'Resume';
  note.textContent = s.changes ? `Paused · ${formatCount(s.changes)} update${s.changes === 1 ? '' : 's'} to ${formatCount(s.tasks)} task${s.tasks === 1 ? '' : 's'} waiting` : 'Paused · list frozen';
}

function togglePause() {
  const m = state.model;
  if (m.paused) {
    const anchor = state.list.captureAnchor();
    const n = m.resume();
    state.list.restoreAnchor(anchor);
    state.list.reanchorActive();
    announce(n ? `Resumed: ${n} update${n === 1 ? '' : 's'} applied.` : 'Resumed live updates.');
    scheduleListRender();
  } else {
    m.pause();
    announce('Paused: the list is frozen; new changes wait.');
  }
  renderPending();
}

function renderToolOptions() {
  fillSelect($('tool-filter'), 'All tools', 'Tool', [...state.tools].sort());
}

function renderPrincipalOptions() {
  fillSelect($('principal-filter'), 'All principals', 'Principal', [...state.principals].sort());
}

/** Options "All tools", "Tool: a", "Tool: b"... so the closed select names its own filter. */
function fillSelect(select, allLabel, prefix, values) {
  const current = select.value;
  const have = [...select.options].map((o) => o.value);
  const want = ['', ...values];
  if (current && !want.includes(current)) want.push(current);
  if (have.length === want.length && have.every((v, i) => v === want[i])) return;
  clear(select);
  for (const v of want) select.appendChild(h('option', { value: v }, v ? `${prefix}: ${v}` : allLabel));
  select.value = current;
}

let optionTimer = null;
function noteTool(tool) {
  if (!tool || state.tools.has(tool)) return;
  state.tools.add(tool);
  queueOptions();
}
function notePrincipal(p) {
  if (!p || state.principals.has(p)) return;
  state.principals.add(p);
  queueOptions();
}
function queueOptions() {
  if (optionTimer) return;
  optionTimer = setTimeout(() => {
    optionTimer = null;
    renderToolOptions();
    renderPrincipalOptions();
  }, 200);
}

// ---------------------------------------------------------------- toasts

function toast(text, tone = 'info') {
  const close = h('button', { type: 'button', class: 'toast-close', 'aria-label': 'Dismiss' }, '×');
  const el = h('div', { class: `toast toast-${tone}`, role: tone === 'bad' ? 'alert' : undefined }, h('span', { class: 'toast-text' }, text), close);
  const remove = () => el.remove();
  close.addEventListener('click', remove);
  $('toasts').appendChild(el);
  setTimeout(remove, tone === 'bad' ? 12000 : 7000);
}

// ---------------------------------------------------------------- selection and cancel

function renderBulk() {
  const n = state.selected.size;
  $('bulk-bar').hidden = n === 0;
  $('bulk-count').textContent = `${formatCount(n)} selected`;
  scheduleListRender();
}

function toggleSelect(index, shift) {
  const m = state.model;
  const entry = m.at(index);
  if (!entry) return;
  if (shift && state.lastToggled >= 0 && state.lastToggled < m.length) {
    const [a, b] = [Math.min(index, state.lastToggled), Math.max(index, state.lastToggled)];
    for (let i = a; i <= b; i++) state.selected.add(m.at(i).id);
  } else if (state.selected.has(entry.id)) state.selected.delete(entry.id);
  else state.selected.add(entry.id);
  state.lastToggled = index;
  renderBulk();
}

async function requestCancel(task) {
  const ok = await confirmDialog({
    title: 'Cancel this task?',
    body: [
      h('p', {}, 'Cancel ', h('strong', {}, task.tool || 'task'), ' ', h('code', {}, shortId(task.taskId)), task.principal ? ` started by ${task.principal}?` : '?'),
      h('p', { class: 'muted' }, 'The task is asked to stop. It ends as “cancelled” once it does, which can take a moment. Work it already did is not undone.'),
    ],
    confirmLabel: 'Cancel task',
    cancelLabel: 'Keep running',
  });
  if (!ok) return null;
  try {
    const r = await state.api.cancel(task.taskId);
    if (cancelRefusal(r && r.task)) toast(`${task.tool} ${shortId(task.taskId)} had already finished; nothing to cancel.`, 'warn');
    else toast(`Cancel requested for ${task.tool} ${shortId(task.taskId)}.`, 'info');
    if (r && r.task) handleTaskSnapshot(r.task);
    return r && r.task;
  } catch (err) {
    toast(err.status === 409 ? 'The task had already finished.' : `Could not cancel: ${err.message}`, err.status === 409 ? 'warn' : 'bad');
    return null;
  }
}

/** A task state from an API answer (not an event): update the list row in place. */
function handleTaskSnapshot(task) {
  const entry = state.model.byId.get(task.taskId);
  if (entry && !state.model.paused) {
    state.model.applyNow({ event: null, task }, { counts: false });
    scheduleListRender();
  }
  if (state.inbox.apply(task)) scheduleInboxRender();
}

async function bulkCancel() {
  const ids = [...state.selected];
  const tasks = ids.map((id) => state.model.get(id)).filter(Boolean);
  const live = tasks.filter((t) => !isTerminal(t.status));
  const finished = ids.length - live.length;
  if (!live.length) {
    toast('None of the selected tasks is still running.', 'warn');
    return;
  }
  const ok = await confirmDialog({
    title: `Cancel ${live.length} task${live.length === 1 ? '' : 's'}?`,
    body: [
      h('p', {}, `Each of the ${live.length} running task${live.length === 1 ? '' : 's'} is asked to stop.`),
      finished ? h('p', { class: 'muted' }, `${finished} selected task${finished === 1 ? ' has' : 's have'} already finished and will be skipped.`) : null,
    ].filter(Boolean),
    confirmLabel: `Cancel ${live.length} task${live.length === 1 ? '' : 's'}`,
    cancelLabel: 'Keep running',
  });
  if (!ok) return;
  const result = await cancelMany(state.api, live.map((t) => t.taskId));
  const text = describeBulkCancel(result) + (finished ? ` ${finished} already finished, skipped.` : '');
  toast(text, result.failed.length ? 'warn' : 'good');
  announce(text);
  state.selected.clear();
  renderBulk();
}

// ---------------------------------------------------------------- opening tasks

/**
 * Shows a task asked for from outside the list (the URL fragment): highlights its row when
 * it is loaded, and opens its detail (which fetches it, so it need not be in the list).
 */
function focusTask(taskId, { focus }) {
  const index = state.model.indexOf(taskId);
  if (index >= 0 && state.list) state.list.setActive(index);
  return openTask(taskId, { focus, focusPrompt: focus });
}

/** Counts openTask and closeDetail calls: an open that waited for the detail's modules is
 *  dropped when the detail was closed (or another task opened) meanwhile. */
let openSeq = 0;
/** The task being opened while the detail's modules load (Escape cancels it), or null. */
let opening = null;

function openTask(taskId, { focus = false, focusPrompt = false } = {}) {
  const seq = ++openSeq;
  opening = taskId;
  history.replaceState(null, '', `${location.pathname}${location.search}#task=${encodeURIComponent(taskId)}`);
  const p = loadDetail().then(
    (detail) => {
      if (seq !== openSeq) return undefined;
      opening = null;
      const opened = detail.open(taskId, { focus });
      renderInbox();
      scheduleListRender();
      return opened;
    },
    (err) => toast(`Could not load the task's detail: ${err.message}`, 'bad'),
  );
  if (focusPrompt) {
    Promise.resolve(p).then(() => {
      const card = state.detail.shortcutPrompt();
      if (card) card.focus();
    });
  }
  return p;
}

/** True when the layout shows one pane at a time (narrow window or high zoom). */
function narrow() {
  return window.matchMedia('(max-width: 60rem)').matches;
}

function closeDetail() {
  openSeq++;
  opening = null;
  state.detail.close();
  history.replaceState(null, '', `${location.pathname}${location.search}`);
  renderInbox();
  scheduleListRender();
  $('task-list').focus();
}

// ---------------------------------------------------------------- keyboard

function onKey(e) {
  if (e.defaultPrevented || e.ctrlKey || e.metaKey || e.altKey) return;
  if (dialogOpen()) return;
  const target = e.target;
  if (isTypingTarget(target)) {
    if (e.key === 'Escape' && target === $('search')) {
      $('task-list').focus();
      e.preventDefault();
    }
    return;
  }
  const listFocused = target === $('task-list');
  switch (e.key) {
    case '/':
      e.preventDefault();
      $('search').focus();
      $('search').select();
      return;
    case '?':
      e.preventDefault();
      openHelp();
      return;
    case 'j':
    case 'k':
      e.preventDefault();
      state.list.move(e.key === 'j' ? 1 : -1);
      if (!listFocused) $('task-list').focus({ preventScroll: true });
      return;
    case 'ArrowDown':
    case 'ArrowUp':
      if (!listFocused) return;
      e.preventDefault();
      state.list.move(e.key === 'ArrowDown' ? 1 : -1);
      return;
    case 'Home':
    case 'End':
      if (!listFocused) return;
      e.preventDefault();
      state.list.setActive(e.key === 'Home' ? 0 : state.model.length - 1);
      return;
    case 'PageDown':
    case 'PageUp':
      if (!listFocused) return;
      e.preventDefault();
      state.list.move((e.key === 'PageDown' ? 1 : -1) * Math.max(1, Math.floor($('task-list').clientHeight / 64) - 1));
      return;
    case 'Enter':
    case ' ':
      if (!listFocused) return;
      e.preventDefault();
      if (e.key === ' ') {
        if (state.list.active >= 0) toggleSelect(state.list.active, e.shiftKey);
        return;
      }
      if (state.list.active >= 0) openTask(state.model.at(state.list.active).id, { focus: narrow() });
      return;
    case 'x':
      if (state.list.active >= 0) {
        e.preventDefault();
        toggleSelect(state.list.active, e.shiftKey);
      }
      return;
    case 'a':
    case 'd': {
      const card = state.detail.shortcutPrompt();
      if (!card) {
        if (state.detail.hasLockedPrompts()) toast('Only the person using Taskdeck can answer this prompt.', 'info');
        else if (state.detail.taskId) toast('This task has no open prompt.', 'info');
        return;
      }
      e.preventDefault();
      if (e.key === 'a') card.accept();
      else card.decline();
      return;
    }
    case 'c': {
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
    case 'p':
      e.preventDefault();
      togglePause();
      return;
    case 'i': {
      const first = state.inbox.list()[0];
      if (first) {
        e.preventDefault();
        openTask(first.taskId, { focus: true, focusPrompt: true });
      }
      return;
    }
    case 'Escape':
      if (state.detail.taskId || opening) {
        e.preventDefault();
        closeDetail();
      }
      return;
    default:
  }
}

// ---------------------------------------------------------------- setup

function initApp() {
  state.initialized = true;
  state.statusFilter = new Set();
  state.detail = NO_DETAIL;
  state.list = new ListView($('task-list'), $('task-list-spacer'), state.model, {
    // On a narrow screen the detail replaces the list, so focus follows it there.
    onOpen: (index, how) => openTask(state.model.at(index).id, { ...how, focus: how.focus || narrow() }),
    onToggle: toggleSelect,
    isSelected: (id) => state.selected.has(id),
    openTaskId: () => state.detail.taskId,
    onNearEnd: () => loadMore(),
    schedule: () => scheduleListRender(),
  });
  renderChips();
  $('status-filters').addEventListener('click', (e) => {
    const btn = e.target instanceof Element ? e.target.closest('button.chip') : null;
    if (!btn) return;
    const key = btn.dataset.status;
    if (key === 'all') state.statusFilter.clear();
    else if (e.shiftKey || e.ctrlKey || e.metaKey) {
      // Shift/Ctrl-click combines statuses.
      if (state.statusFilter.has(key)) state.statusFilter.delete(key);
      else state.statusFilter.add(key);
    } else if (state.statusFilter.size === 1 && state.statusFilter.has(key)) state.statusFilter.clear();
    else {
      state.statusFilter.clear();
      state.statusFilter.add(key);
    }
    renderChips();
    reloadList();
  });
  let searchTimer = null;
  $('search').addEventListener('input', () => {
    clearTimeout(searchTimer);
    // Typing is coalesced (briefly when the server answers from its index); clearing the box
    // is one deliberate act and applies at once.
    const delay = searchDelayMs($('search').value);
    if (!delay) reloadList();
    else searchTimer = setTimeout(reloadList, delay);
  });
  $('filters').addEventListener('submit', (e) => {
    e.preventDefault();
    clearTimeout(searchTimer);
    reloadList();
  });
  $('tool-filter').addEventListener('change', reloadList);
  $('principal-filter').addEventListener('change', reloadList);
  $('pause-btn').addEventListener('click', togglePause);
  $('help-btn').addEventListener('click', openHelp);
  $('connect-btn').addEventListener('click', () => withModule(loadConnectDialog, (m) => m.openConnectDialog()));
  if (state.desktop) $('notify-btn').addEventListener('click', () => withModule(loadNotifyDialog, (m) => m.openNotifyDialog()));
  window.addEventListener('hashchange', onHashChange);
  $('bulk-cancel').addEventListener('click', bulkCancel);
  $('bulk-clear').addEventListener('click', () => {
    state.selected.clear();
    renderBulk();
  });
  document.addEventListener('keydown', onKey);
  renderPending();
  renderConn();
}

boot();
