// The task list: loading its pages for the current filters, redrawing it (rows, chips, footer,
// empty state) at most once a frame, and pausing it while the reader looks at it. The rows
// themselves are drawn by ListView (list-view.js) over the TaskList model (tasks-model.js).

import { listQuery, FIRST_PAGE_SIZE } from './tasks-model.js';
import { h, clear, $, setText } from './dom.js';
import { formatCount } from './format.js';
import { state } from './state.js';
import { oncePerFrame } from './timing.js';
import { announce } from './notices.js';
import { renderConn } from './conn.js';
import { currentFilters, isFiltered, renderChips, clearFilters, noteTool, notePrincipal } from './filters.js';

/** How many tasks each further page asks for. */
const PAGE_SIZE = 200;

export const scheduleListRender = oncePerFrame(() => {
  state.list.render();
  renderChips();
  renderFooter();
  renderEmpty();
});

/** How many of the newest tasks matching a search are read again with its counts (the first
 *  page's size). */
const SEARCH_RECHECK = FIRST_PAGE_SIZE;
/** How long a failed re-read waits before it is tried again, in ms. */
const RECHECK_RETRY_MS = 5000;

let countsRefresh = null;
/**
 * Asks the server for the counts and the newest matching tasks again in a second: under a
 * search, changes may move the counts, and a new task may match in a part its event carried cut
 * to size, which the client could not see (TaskList.admit).
 */
export function scheduleCountsRefresh(delayMs = 1000) {
  if (countsRefresh) return;
  countsRefresh = setTimeout(async () => {
    countsRefresh = null;
    // A paused list takes no rows: read again once it runs.
    if (state.model.paused) {
      if (state.model.filters.q && state.model.filters.q.trim()) scheduleCountsRefresh();
      return;
    }
    const gen = state.generation;
    try {
      const page = await state.api.listTasks(listQuery(state.model.filters, { limit: SEARCH_RECHECK }));
      if (gen !== state.generation || !page.counts) return;
      if (state.model.paused) {
        scheduleCountsRefresh();
        return;
      }
      const anchor = state.list.captureAnchor();
      if (state.model.admit(page.tasks || [])) state.list.restoreAnchor(anchor);
      state.model.counts = { ...page.counts };
      state.model.version++;
      scheduleListRender();
    } catch {
      // Tried again: no change may come to ask (a reload after a reconnect supersedes it).
      if (gen === state.generation) scheduleCountsRefresh(RECHECK_RETRY_MS);
    }
  }, delayMs);
}

/**
 * Loads the first page for the current filters (changes arriving meanwhile are applied on top).
 * Resolves to the page's `eventId`, or null when this load failed or was overtaken by a newer one.
 */
export async function reloadList() {
  const gen = ++state.generation;
  // The page's first rows are drawn as soon as their answer is read, not in the next frame's
  // callbacks: the answer often comes while the page is still busy with its first layout, and
  // the rows then join that layout and the frame after it instead of waiting one more frame.
  // Nothing has scrolled or been laid out with rows yet, so drawing them reads no layout.
  const first = !state.listLoaded;
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
  if (first && state.listLoaded) scheduleListRender.now();
  else scheduleListRender();
  return eventId;
}

/** Loads the next page (the list scrolled near its end), unless one is loading already. */
export async function loadMore() {
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

/** The footer's line: loading, failed, or how many tasks are loaded (and whether more are). */
export function footerText({ loading, listLoaded, loadError, loadingMore, length, nextCursor }) {
  if (loading && !listLoaded) return 'Loading tasks…';
  if (loading) return 'Updating…';
  if (loadError) return `Could not load tasks: ${loadError.message}`;
  if (loadingMore) return `${formatCount(length)} loaded · loading more…`;
  if (nextCursor) return `${formatCount(length)} loaded · more load as you scroll`;
  return `${formatCount(length)} task${length === 1 ? '' : 's'}`;
}

function renderFooter() {
  const m = state.model;
  const el = $('list-footer');
  const text = footerText({
    loading: state.loading,
    listLoaded: state.listLoaded,
    loadError: state.loadError,
    loadingMore: state.loadingMore,
    length: m.length,
    nextCursor: m.nextCursor,
  });
  setText(el, text);
  el.classList.toggle('error', !!state.loadError);
}

function renderEmpty() {
  const el = $('list-empty');
  const m = state.model;
  const show = !state.loading && state.listLoaded && m.length === 0;
  el.hidden = !show;
  if (!show) return;
  const filtered = isFiltered(m.filters);
  clear(el);
  el.appendChild(h('p', { class: 'list-empty-title' }, filtered ? 'No tasks match these filters' : 'No tasks yet'));
  el.appendChild(h('p', { class: 'muted' }, filtered ? 'Try another status, tool or search.' : 'Tasks appear here as soon as an agent starts one.'));
  if (filtered) {
    const reset = h('button', { type: 'button', class: 'btn btn-small' }, 'Clear filters');
    reset.addEventListener('click', clearFilters);
    el.appendChild(reset);
  }
}

// ---------------------------------------------------------------- pause

/** The pause button's label, the note beside it and the note's tooltip; `summary` is the
 *  model's pendingSummary() while paused, null while live. The note does not repeat "Paused":
 *  the live indicator beside it says so, and the top bar's room goes to who is signed in. */
export function pauseText(summary) {
  if (!summary) return { button: 'Pause updates', note: '', title: '' };
  const s = summary;
  const note = s.changes ? `${formatCount(s.changes)} update${s.changes === 1 ? '' : 's'} to ${formatCount(s.tasks)} task${s.tasks === 1 ? '' : 's'} waiting` : 'list frozen';
  return { button: s.changes ? `Resume (${formatCount(s.changes)})` : 'Resume', note, title: `Paused · ${note}` };
}

/** Draws the pause button, the note beside it (cut with "…" when the top bar is full: whole in
 *  its tooltip) and the live indicator, which says "Paused" while the list is. */
export function renderPending() {
  const m = state.model;
  const btn = $('pause-btn');
  const note = $('pending-note');
  const t = pauseText(m.paused ? m.pendingSummary() : null);
  btn.textContent = t.button;
  btn.setAttribute('aria-pressed', String(m.paused));
  btn.classList.toggle('btn-paused', m.paused);
  note.textContent = t.note;
  note.title = t.title;
  renderConn();
}

export function togglePause() {
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
