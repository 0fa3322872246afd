// The task list's state: loaded pages (newest first), filters, per-status counts, live change
// events applied in place, and the pause buffer. Also the "Needs input" inbox. No DOM: the
// list view reads rows by index and re-renders when `version` changes.

import { isTerminal, toMs } from './format.js';
import { stringifyJson } from './exact-json.js';

/**
 * `errors`: only completed tasks whose result is an error (the server's `error=true`).
 * @returns {{statuses: string[], errors: boolean, tool: string, principal: string, q: string}}
 */
export function defaultFilters() {
  return { statuses: [], errors: false, tool: '', principal: '', q: '' };
}

/**
 * A completed task whose result says `isError: true` (a command that exited non-zero): the
 * server's `isError`, or the result itself for a task shown without it.
 */
export function isErrorTask(task) {
  if (!task || task.status !== 'completed') return false;
  if (typeof task.isError === 'boolean') return task.isError;
  return Boolean(task.result && task.result.isError === true);
}

/** How many tasks the list's first page asks for: few, so the list paints early (they cover a
 *  tall window); the next pages load while the reader looks at it. */
export const FIRST_PAGE_SIZE = 50;

/** The query string for GET /v1/tasks. */
export function listQuery(filters, { cursor = null, limit = 200 } = {}) {
  const p = new URLSearchParams();
  if (filters.statuses && filters.statuses.length) p.set('status', filters.statuses.join(','));
  if (filters.errors) p.set('error', 'true');
  if (filters.tool) p.set('tool', filters.tool);
  if (filters.principal) p.set('principal', filters.principal);
  if (filters.q && filters.q.trim()) p.set('q', filters.q.trim());
  if (cursor) p.set('cursor', cursor);
  p.set('limit', String(limit));
  return p.toString();
}

/** The key of `counts` that counts the completed tasks with an error result (also counted as completed). */
export const ERROR_COUNT = 'error';

/** Consecutive characters a query needs to use the server's trigram search index. */
export const INDEXED_QUERY_CHARS = 3;

/**
 * How long typing in the search box waits before the query runs, in ms. A query with at least
 * INDEXED_QUERY_CHARS consecutive characters other than the LIKE wildcards `%` and `_` is
 * answered from the server's search index in milliseconds, so it runs almost at once (40 ms
 * gathers one burst of keys); a shorter one makes the server scan every task and waits for a
 * pause in typing (250 ms). An empty box applies at once (0).
 */
export function searchDelayMs(q) {
  const text = String(q || '').trim();
  if (!text) return 0;
  const longestRun = Math.max(...text.split(/[%_]/).map((run) => [...run].length));
  return longestRun >= INDEXED_QUERY_CHARS ? 40 : 250;
}

function textOf(v) {
  if (v === undefined || v === null) return '';
  return typeof v === 'string' ? v : stringifyJson(v);
}

/**
 * `s` with case folded like the server's `fold_case`: lowercased, and "ς" as "σ" (the final
 * sigma is the only context-dependent lowercase mapping, and people type either form).
 */
export function foldCase(s) {
  return s.toLowerCase().replaceAll('ς', 'σ');
}

/**
 * Client-side approximation of the server's `q` (case-insensitive substring of tool,
 * arguments, statusMessage, result or taskId), used for tasks that arrive live: matched on what
 * they carry, which for a large task is cut to size (`abridged`; see stillMatches).
 */
export function matchesQuery(task, q) {
  const needle = foldCase(String(q || '').trim());
  if (!needle) return true;
  return [task.tool, task.taskId, task.statusMessage, textOf(task.arguments), textOf(task.result)].some((s) =>
    foldCase(textOf(s)).includes(needle),
  );
}

/** Status, error, tool and principal filters (not the free text). */
export function matchesStructuredFilters(task, filters) {
  if (filters.statuses && filters.statuses.length && !filters.statuses.includes(task.status)) return false;
  if (filters.errors && !isErrorTask(task)) return false;
  if (filters.tool && task.tool !== filters.tool) return false;
  if (filters.principal && task.principal !== filters.principal) return false;
  return true;
}

/** Every filter, free text included. */
export function matchesFilters(task, filters) {
  return matchesStructuredFilters(task, filters) && matchesQuery(task, filters.q);
}

/**
 * Whether `task`, listed under `filters` by the server, stays listed after a change: as
 * matchesFilters, except that a task whose members came cut to size (`abridged`) keeps its place
 * under a search, which the server matched on its whole text (a word in the middle of a large
 * file, which the change no longer carries).
 */
export function stillMatches(task, filters) {
  if (Array.isArray(task.abridged) && task.abridged.length) return matchesStructuredFilters(task, filters);
  return matchesFilters(task, filters);
}

/**
 * True when `incoming` is older than what we hold: a terminal task never becomes live again,
 * and an earlier lastUpdatedAt loses. Equal timestamps are taken (the later event wins).
 */
export function isStale(current, incoming) {
  if (!current) return false;
  if (isTerminal(current.status) && !isTerminal(incoming.status)) return true;
  const a = toMs(current.lastUpdatedAt);
  const b = toMs(incoming.lastUpdatedAt);
  return Number.isFinite(a) && Number.isFinite(b) && b < a;
}

/**
 * `incoming` (a task from a list page or `/v1/events`, whose `abridged` names its members cut to
 * size) with each cut member taken from `current`, the same task read whole, where that has it
 * whole; `abridged` then names only the members still cut (absent when none). Without a
 * `current` of the same task, or when nothing was cut, `incoming` itself.
 */
export function keepWhole(current, incoming) {
  const cut = incoming && Array.isArray(incoming.abridged) ? incoming.abridged : null;
  if (!cut || !current || current.taskId !== incoming.taskId) return incoming;
  const currentCut = Array.isArray(current.abridged) ? current.abridged : [];
  const merged = { ...incoming };
  const still = cut.filter((k) => {
    if (!(k in current) || currentCut.includes(k)) return true;
    merged[k] = current[k];
    return false;
  });
  if (still.length) merged.abridged = still;
  else delete merged.abridged;
  return merged;
}

/**
 * A task's place in the list, newest first: the server's `seq` (its list order; higher is
 * newer), falling back to createdAt for a task without one. Compared with compareOrder.
 * @returns {number[]}
 */
export function orderKey(task) {
  const seq = task && Number.isFinite(task.seq) ? task.seq : null;
  const created = toMs(task && task.createdAt);
  return seq !== null ? [1, seq] : [0, Number.isFinite(created) ? created : Infinity];
}

/** > 0 when key `a` is newer than `b`, < 0 when older, 0 when equal. */
export function compareOrder(a, b) {
  // A seq and a timestamp are not comparable: a task with a seq counts as newer (it came
  // from the server now; one without is only seen in hand-built data).
  if (a[0] !== b[0]) return a[0] - b[0];
  return a[1] === b[1] ? 0 : a[1] > b[1] ? 1 : -1;
}

/**
 * @typedef {{id: string, task: object, key: number[]}} Entry  key: see orderKey
 * @typedef {{event: object, task: object}} Change
 * @typedef {{type: 'inserted'|'updated'|'removed'|'ignored'|'buffered', index?: number}} ApplyResult
 */

export class TaskList {
  constructor(filters = defaultFilters()) {
    /** @type {Entry[]} newest first */
    this.rows = [];
    /** @type {Map<string, Entry>} */
    this.byId = new Map();
    /** Ids of tasks a change took out of the list since its last load (admit leaves them out). */
    this.dropped = new Set();
    this.filters = { ...filters };
    this.nextCursor = null;
    /** @type {Record<string, number>} */
    this.counts = {};
    this.paused = false;
    /** @type {Change[]} */
    this.pending = [];
    /** The newest event id the counts are known to include (from a page's `eventId`). */
    this.countedUpTo = -1;
    /** @type {Change[]|null} changes seen while a page request is in flight */
    this.recording = null;
    /** Bumped on every visible change; views compare it to skip work. */
    this.version = 0;
  }

  get length() {
    return this.rows.length;
  }

  /** @returns {Entry|undefined} */
  at(i) {
    return this.rows[i];
  }

  get(taskId) {
    const e = this.byId.get(taskId);
    return e ? e.task : undefined;
  }

  indexOf(taskId) {
    const e = this.byId.get(taskId);
    return e ? this.rows.indexOf(e) : -1;
  }

  setFilters(filters) {
    this.filters = { ...defaultFilters(), ...filters };
  }

  /** Call before requesting a page; changes arriving meanwhile are re-applied on top of it. */
  beginLoad() {
    this.recording = [];
  }

  /**
   * Replaces the list with a first page ({tasks, nextCursor, counts, eventId}). The page and
   * its counts reflect exactly the changes up to `eventId`; recorded changes after it are
   * applied on top, counts included.
   */
  reset(page) {
    this.rows = [];
    this.byId = new Map();
    this.dropped = new Set();
    this.addTasks(page.tasks || []);
    this.nextCursor = page.nextCursor || null;
    this.counts = { ...(page.counts || {}) };
    this.replayRecorded(page.eventId);
    this.version++;
  }

  /** Adds the next (older) page (its counts are newer than ours: they replace them). */
  appendPage(page) {
    this.addTasks(page.tasks || []);
    this.nextCursor = page.nextCursor || null;
    if (page.counts) this.counts = { ...page.counts };
    this.replayRecorded(page.counts ? page.eventId : undefined);
    this.version++;
  }

  addTasks(tasks) {
    for (const task of tasks) {
      if (!task || typeof task.taskId !== 'string') continue;
      const existing = this.byId.get(task.taskId);
      if (existing) {
        if (!isStale(existing.task, task)) existing.task = task;
        continue;
      }
      const entry = { id: task.taskId, task, key: orderKey(task) };
      this.rows.push(entry);
      this.byId.set(entry.id, entry);
    }
  }

  /**
   * Re-applies the changes recorded while a page was loading. With the page's `eventId` (the
   * server read the page and counts in one snapshot), changes up to it are already in the page
   * and the later ones are applied in full; without it, the page's counts are kept as they are.
   */
  replayRecorded(eventId) {
    const recorded = this.recording || [];
    this.recording = null;
    const upTo = eventId === undefined || eventId === null || eventId === '' ? null : Number(eventId);
    if (upTo !== null) this.countedUpTo = upTo;
    for (const change of recorded) {
      if (this.paused) continue; // still waiting in `pending`
      const id = change.event ? Number(change.event.id) : NaN;
      if (upTo !== null && id <= upTo) continue;
      this.applyNow(change, { counts: upTo !== null });
    }
  }

  /**
   * Applies one change from /v1/events (or buffers it while paused).
   * @param {Change} change
   * @returns {ApplyResult}
   */
  apply(change) {
    if (this.recording) this.recording.push(change);
    if (this.paused) {
      this.pending.push(change);
      return { type: 'buffered' };
    }
    // A change a loaded page already counted (its eventId) is not counted again.
    const counted = change.event && Number(change.event.id) <= this.countedUpTo;
    return this.applyNow(change, { counts: !counted });
  }

  /** @returns {ApplyResult} */
  applyNow(change, { counts = true } = {}) {
    const task = change.task;
    if (!task || typeof task.taskId !== 'string') return { type: 'ignored' };
    if (counts) this.adjustCounts(change);
    const entry = this.byId.get(task.taskId);
    if (change.event && change.event.kind === 'deleted') {
      // Removed from the store (TTL, retention caps): it leaves the list.
      if (!entry) return { type: 'ignored' };
      const index = this.rows.indexOf(entry);
      if (index >= 0) this.rows.splice(index, 1);
      this.byId.delete(task.taskId);
      this.version++;
      return { type: 'removed', index };
    }
    if (entry) {
      if (isStale(entry.task, task)) return { type: 'ignored' };
      if (!stillMatches(task, this.filters)) {
        const index = this.rows.indexOf(entry);
        if (index >= 0) this.rows.splice(index, 1);
        this.byId.delete(task.taskId);
        this.dropped.add(task.taskId);
        this.version++;
        return { type: 'removed', index };
      }
      entry.task = task;
      this.version++;
      return { type: 'updated' };
    }
    if (!matchesFilters(task, this.filters)) return { type: 'ignored' };
    const key = orderKey(task);
    const index = this.insertionIndex(key);
    // Past the loaded pages: it will come with a later page.
    if (index === this.rows.length && this.nextCursor) return { type: 'ignored' };
    const e = { id: task.taskId, task, key };
    this.rows.splice(index, 0, e);
    this.byId.set(e.id, e);
    this.version++;
    return { type: 'inserted', index };
  }

  /**
   * Inserts the tasks of a page the server just read for these filters that the list lacks: a
   * task that arrived live matching the search only in a part its event carried cut to size
   * (`abridged`), or that the client's approximation of the search missed. A task already
   * listed, one a change took out since the last load (the page may be older than that change),
   * or one older than the loaded pages is left out. Returns how many were inserted.
   */
  admit(tasks) {
    let inserted = 0;
    for (const task of tasks) {
      if (!task || typeof task.taskId !== 'string' || this.byId.has(task.taskId) || this.dropped.has(task.taskId)) continue;
      if (!matchesStructuredFilters(task, this.filters)) continue;
      const key = orderKey(task);
      const index = this.insertionIndex(key);
      if (index === this.rows.length && this.nextCursor) continue;
      const e = { id: task.taskId, task, key };
      this.rows.splice(index, 0, e);
      this.byId.set(e.id, e);
      inserted++;
    }
    if (inserted) this.version++;
    return inserted;
  }

  /** First index whose task is not newer than `key` (rows are newest first). */
  insertionIndex(key) {
    let lo = 0;
    let hi = this.rows.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (compareOrder(this.rows[mid].key, key) > 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /**
   * Counts follow creation, status and deletion events of the tasks the other filters select
   * (principal, tool and free text), as the server counts them. The free text is matched on the
   * task as it is now, which can differ from how it was when it was counted: a later page
   * load brings the server's exact counts.
   */
  adjustCounts(change) {
    const { event, task } = change;
    if (!event) return;
    if (this.filters.principal && task.principal !== this.filters.principal) return;
    if (this.filters.tool && task.tool !== this.filters.tool) return;
    if (!matchesQuery(task, this.filters.q)) return;
    const d = event.data || {};
    const bump = (status, n) => {
      if (!status) return;
      this.counts[status] = Math.max(0, (this.counts[status] || 0) + n);
    };
    if (event.kind === 'created') bump(d.status || 'working', 1);
    else if (event.kind === 'status' && d.from !== d.to) {
      bump(d.from, -1);
      bump(d.to, 1);
      // Terminal tasks never change: an error result comes with the status that ends it.
      if (isErrorTask(task)) bump(ERROR_COUNT, 1);
    } else if (event.kind === 'deleted') {
      // The status it was counted under: the row's, when it is loaded (a stream resumed after a
      // page gets only the `deleted` event of a task whose other events went with it).
      const entry = this.byId.get(task.taskId);
      const last = entry ? entry.task : task;
      bump(entry ? entry.task.status : d.status, -1);
      if (isErrorTask(last)) bump(ERROR_COUNT, -1);
    }
    else return;
    this.version++;
  }

  /** Total over the statuses (all of them when none given); the error count is not a status. */
  total(statuses = null) {
    return Object.entries(this.counts)
      .filter(([s]) => s !== ERROR_COUNT && (!statuses || !statuses.length || statuses.includes(s)))
      .reduce((n, [, c]) => n + c, 0);
  }

  /** Freezes the list: later changes wait in `pending`. */
  pause() {
    this.paused = true;
  }

  /**
   * Applies what waited and goes live again.
   * @returns {number} how many changes were applied
   */
  resume() {
    this.paused = false;
    const waiting = this.pending;
    this.pending = [];
    // Changes a page loaded meanwhile already counted (up to its eventId) are not counted twice.
    for (const c of waiting) this.applyNow(c, { counts: !(c.event && Number(c.event.id) <= this.countedUpTo) });
    this.version++;
    return waiting.length;
  }

  /** How many changes are waiting, and for how many distinct tasks. */
  pendingSummary() {
    const tasks = new Set(this.pending.map((c) => c.task && c.task.taskId));
    return { changes: this.pending.length, tasks: tasks.size };
  }
}

/** The "Needs input" inbox: every input_required task the caller can see, newest first. */
export class InputInbox {
  constructor() {
    /** @type {Map<string, object>} */
    this.tasks = new Map();
    /** Ids the stream changed since `beginReset` (null when no snapshot is loading). */
    this.touched = null;
    /** Last state seen of tasks that left the inbox, so a late, older snapshot (e.g. the answer
     *  to a cancel request arriving after the stream said "cancelled") cannot bring them back.
     *  @type {Map<string, object>} */
    this.left = new Map();
    /** How many tasks wait in all when the last snapshot was cut short (null: it was whole). */
    this.total = null;
    this.version = 0;
    /** `list()`'s answer and the version it was sorted at. */
    this.sorted = { version: -1, list: [] };
  }

  get size() {
    return this.tasks.size;
  }

  /** How many tasks wait for input: the ones held, or the server's count when it has more. */
  get count() {
    return this.total === null ? this.tasks.size : Math.max(this.total, this.tasks.size);
  }

  /** Call before fetching a snapshot for `reset`: changes applied from now on are newer. */
  beginReset() {
    this.touched = new Set();
  }

  /**
   * Takes a fetched snapshot of the input_required tasks. What the stream said while it was
   * loading wins over it: a task that left meanwhile (answered, cancelled) stays out, one that
   * arrived meanwhile stays in, and a newer state of a task is kept. `total`: the server's
   * count when the snapshot holds only the newest of them (null when it holds all).
   */
  reset(tasks, total = null) {
    this.total = total;
    const touched = this.touched || new Set();
    this.touched = null;
    const next = new Map();
    for (const t of tasks) {
      if (!t || t.status !== 'input_required') continue;
      const left = this.left.get(t.taskId);
      const current = this.tasks.get(t.taskId);
      if (left && isStale(left, t)) continue;
      next.set(t.taskId, current && isStale(current, t) ? current : t);
    }
    for (const id of touched) {
      const current = this.tasks.get(id);
      const snap = next.get(id);
      if (current && (!snap || isStale(current, snap))) next.set(id, current);
    }
    this.tasks = next;
    this.version++;
  }

  /**
   * Takes a task as it is now (`event`: the change's timeline event, which keeps `total`
   * current while the snapshot was cut short).
   * @returns {'added'|'updated'|'removed'|null}
   */
  apply(task, event = null) {
    if (!task || typeof task.taskId !== 'string') return null;
    if (this.total !== null && event) {
      const d = event.data || {};
      if (event.kind === 'status' && d.from !== d.to) this.total += (d.to === 'input_required') - (d.from === 'input_required');
      else if (event.kind === 'deleted' && d.status === 'input_required') this.total -= 1;
    }
    if (event && event.kind === 'deleted') {
      if (!this.tasks.has(task.taskId)) return null;
      this.tasks.delete(task.taskId);
      this.version++;
      return 'removed';
    }
    if (this.touched) this.touched.add(task.taskId);
    const current = this.tasks.get(task.taskId);
    const seen = current ?? this.left.get(task.taskId);
    if (seen && isStale(seen, task)) return null;
    if (task.status === 'input_required') {
      this.left.delete(task.taskId);
      this.tasks.set(task.taskId, task);
      this.version++;
      return current ? 'updated' : 'added';
    }
    if (current) {
      this.tasks.delete(task.taskId);
      this.rememberLeft(task);
      this.version++;
      return 'removed';
    }
    this.rememberLeft(task);
    return null;
  }

  rememberLeft(task) {
    this.left.delete(task.taskId);
    this.left.set(task.taskId, task);
    if (this.left.size > 10000) this.left.delete(this.left.keys().next().value);
  }

  /** Newest first (sorted again only after a change). */
  list() {
    if (this.sorted.version !== this.version) {
      const keyed = [...this.tasks.values()].map((t) => [orderKey(t), t]);
      keyed.sort((a, b) => compareOrder(b[0], a[0]));
      this.sorted = { version: this.version, list: keyed.map(([, t]) => t) };
    }
    return this.sorted.list;
  }
}

/** The prompts a task waits on: [{key, message, schema, approval}] in key order; `approval`: an
 *  approval question's `_meta["taskdeck/approval"]` (the call it decides), else undefined. */
export function outstandingPrompts(task) {
  const reqs = (task && task.status === 'input_required' && task.inputRequests) || {};
  return Object.keys(reqs)
    .sort()
    .map((key) => {
      const params = (reqs[key] && reqs[key].params) || {};
      return {
        key,
        method: reqs[key] && reqs[key].method,
        mode: params.mode || 'form',
        message: typeof params.message === 'string' ? params.message : '',
        schema: params.requestedSchema || { type: 'object', properties: {} },
        url: typeof params.url === 'string' ? params.url : undefined,
        approval: (params._meta && params._meta['taskdeck/approval']) || undefined,
      };
    });
}
