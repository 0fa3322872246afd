// The approval inbox's model: every pending approval from GET /v1/approvals, oldest waiting
// first, identical calls (same digest) folded into a group, which rows are shown (a group shows
// its calls once expanded), the highlighted row, the selection (Shift for a range), and the
// words for countdowns, "1 of 2", digests and per-item results. No DOM.

import { formatDuration, shortId, argsSummary } from './format.js';
import { toggleSelection } from './selection-range.js';

/**
 * @typedef {object} Approval  one entry of GET /v1/approvals (plan of issue #15)
 * @property {string} taskId @property {string} key @property {'call'|'question'} kind
 * @property {string} principal @property {string} server @property {string} tool
 * @property {object} arguments @property {string} digest @property {string} message
 * @property {number} waitingSinceMs @property {number|null} expiresAtMs
 * @property {'deny'|'allow'|'ask'} onExpiry @property {number} required
 * @property {string[]} approvedBy @property {string} [editedBy] who edited the call (M of N)
 * @property {boolean} editable @property {object|null} inputSchema
 */

/** A row's id: an approval is `taskId/key`; a group is `group:<digest>`. */
export const approvalId = (a) => `${a.taskId}/${a.key}`;
export const groupId = (digest) => `group:${digest}`;

/** Oldest waiting first; ties by task id then key, so the order is stable. */
export function byWaiting(a, b) {
  return (a.waitingSinceMs ?? 0) - (b.waitingSinceMs ?? 0) || (a.taskId < b.taskId ? -1 : a.taskId > b.taskId ? 1 : 0) || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);
}

/**
 * The queue: approvals oldest first, those of one digest (two or more calls) folded into one
 * group at the place of its oldest. Questions (an agent's own form) are never grouped.
 * @returns {({type: 'approval', id: string, approval: Approval} | {type: 'group', id: string, digest: string, approvals: Approval[]})[]}
 */
export function approvalQueue(approvals) {
  const sorted = [...approvals].sort(byWaiting);
  const byDigest = new Map();
  for (const a of sorted) {
    if (a.kind !== 'call' || !a.digest) continue;
    if (!byDigest.has(a.digest)) byDigest.set(a.digest, []);
    byDigest.get(a.digest).push(a);
  }
  const out = [];
  const placed = new Set();
  for (const a of sorted) {
    const same = a.kind === 'call' && a.digest ? byDigest.get(a.digest) : null;
    if (same && same.length >= 2) {
      if (placed.has(a.digest)) continue;
      placed.add(a.digest);
      out.push({ type: 'group', id: groupId(a.digest), digest: a.digest, approvals: same });
    } else out.push({ type: 'approval', id: approvalId(a), approval: a });
  }
  return out;
}

/**
 * The rows shown: the queue, with the calls of each expanded group after its row.
 * @param {Set<string>} expanded digests of the groups shown open
 * @returns {({type: 'approval', id: string, approval: Approval, inGroup?: string} | {type: 'group', id: string, digest: string, approvals: Approval[], open: boolean})[]}
 */
export function visibleRows(queue, expanded) {
  const rows = [];
  for (const e of queue) {
    if (e.type !== 'group') {
      rows.push(e);
      continue;
    }
    const open = expanded.has(e.digest);
    rows.push({ ...e, open });
    if (open) for (const a of e.approvals) rows.push({ type: 'approval', id: approvalId(a), approval: a, inGroup: e.digest });
  }
  return rows;
}

/** "sha256:1a2b3c4d5e6f…": enough of a digest to tell calls apart at a glance. */
export function shortDigest(digest) {
  if (typeof digest !== 'string') return '';
  const m = /^([a-z0-9]+):([0-9a-f]+)$/.exec(digest);
  return m && m[2].length > 12 ? `${m[1]}:${m[2].slice(0, 12)}…` : digest;
}

/** What happens when time runs out, in a few words. */
export function expiryOutcome(onExpiry) {
  if (onExpiry === 'allow') return 'allowed';
  if (onExpiry === 'ask') return 'handed back to the agent’s own prompt';
  return 'denied';
}

/** "4:05", "1:02:03", "2d 3h": a countdown, to the second under a day. */
export function countdown(ms) {
  const s = Math.max(0, Math.ceil(ms / 1000));
  if (s >= 86_400) return formatDuration(s * 1000);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const pad = (n) => String(n).padStart(2, '0');
  return h ? `${h}:${pad(m)}:${pad(s % 60)}` : `${m}:${pad(s % 60)}`;
}

/**
 * An approval's live countdown to its expiry at `now` (Unix ms).
 * @returns {{text: string, title: string, urgent: boolean, expired: boolean} | null} null: it never expires
 */
export function expiryText(a, now) {
  if (a.expiresAtMs === null || a.expiresAtMs === undefined) return null;
  const left = a.expiresAtMs - now;
  const outcome = expiryOutcome(a.onExpiry);
  if (left <= 0) return { text: `expired: ${outcome}`, title: `The time to answer ran out; the call is ${outcome}.`, urgent: true, expired: true };
  return { text: `${countdown(left)} left`, title: `Unless answered within ${countdown(left)}, the call is ${outcome}.`, urgent: left < 60_000, expired: false };
}

/** "waiting 42s", "waiting 3m 5s": how long an approval has waited at `now`. */
export function waitingText(a, now) {
  return `waiting ${formatDuration(Math.max(0, now - (a.waitingSinceMs ?? now)))}`;
}

/**
 * "1 of 2" when several distinct humans must approve (`required` > 1): how many have, of how
 * many, and who; null for a single approval.
 */
export function quorumText(a) {
  const required = Number(a.required) || 1;
  if (required <= 1) return null;
  const by = Array.isArray(a.approvedBy) ? a.approvedBy : [];
  return { text: `${by.length} of ${required}`, title: by.length ? `${required} people must approve; approved so far by ${by.join(', ')}.` : `${required} different people must approve.` };
}

/**
 * Whether `principal` approved `a` already: a queue entry, or a question's `taskdeck/approval`
 * meta (both carry `approvedBy`). Such a call waits for another person, and their second
 * approval would not count.
 */
export function approvedBy(a, principal) {
  return Boolean(a && principal && Array.isArray(a.approvedBy) && a.approvedBy.includes(principal));
}

/**
 * What the row of a call that `principal` approved already says instead of Approve: that it
 * waits for more people, and how many ("You approved · waits for 1 more person").
 */
export function approvedByMeText(a) {
  const required = Number(a && a.required) || 1;
  const left = Math.max(1, required - ((a && a.approvedBy) || []).length);
  return `You approved · waits for ${left} more ${left === 1 ? 'person' : 'people'}`;
}

/**
 * The parts of a group's row (identical calls, `approvals` oldest first): how many calls one
 * click decides (`count`, always shown whole), the tool, the arguments (what is cut when the
 * row is narrow), whose calls they are, and the whole label for the tooltip.
 * @returns {{count: string, tool: string, args: string, principals: string, title: string}}
 */
export function groupLabel(approvals) {
  const first = approvals[0] || {};
  const n = approvals.length;
  const count = `${n} identical call${n === 1 ? '' : 's'}`;
  const tool = `${first.server} · ${first.tool}`;
  const args = argsSummary(first.arguments, 160) || first.tool || '';
  const who = [...new Set(approvals.map((a) => a.principal).filter(Boolean))];
  const principals = who.length > 2 ? `${who.length} principals` : who.join(', ');
  return { count, tool, args, principals, title: `${count} (${tool}${who.length ? ` from ${who.join(', ')}` : ''}): ${args}` };
}

/** Whether one more approval of `a` (a queue entry or a question's meta) still leaves it
 *  waiting for another person (M of N). */
export function stillWaitsAfterOne(a) {
  return Boolean(a) && (a.approvedBy || []).length + 1 < (a.required || 1);
}

/** The body of POST /v1/approvals/decide for `approvals`. */
export function decideBody(approvals, decision, { reason, arguments: args, alwaysAllow } = {}) {
  const body = { items: approvals.map((a) => ({ taskId: a.taskId, key: a.key })), decision };
  const why = typeof reason === 'string' ? reason.trim() : '';
  if (why) body.reason = why;
  if (args !== undefined) body.arguments = args;
  if (alwaysAllow) body.alwaysAllow = true;
  return body;
}

/**
 * The words for a decide answer's per-item `results`: a summary and each failure.
 * @returns {{text: string, ok: number, failed: {taskId: string, error: string}[]}}
 */
export function describeResults(results, decision, approvals = []) {
  const failed = results.filter((r) => !r.ok).map((r) => ({ taskId: r.taskId, error: r.error || 'failed' }));
  const ok = results.length - failed.length;
  const verb = decision === 'approve' ? 'approved' : 'denied';
  // An approval of a call that needs more people than have approved it (with this one) is a
  // step, not the decision: the call still waits.
  const asked = new Map(approvals.map((a) => [a.taskId, a]));
  const waiting = decision !== 'approve' ? 0 : results.filter((r) => {
    return r.ok && stillWaitsAfterOne(asked.get(r.taskId));
  }).length;
  let text = results.length === 1 ? (ok ? `Call ${verb}.` : `Not ${verb}: ${failed[0].error}`) : `${ok} of ${results.length} ${verb}.`;
  if (waiting) text += results.length === 1 ? ' It still waits for another person to approve it.' : ` ${waiting} still wait for another person to approve them.`;
  if (results.length > 1 && failed.length) text += ` Not decided: ${failed.map((f) => `${shortId(f.taskId)} (${f.error})`).join('; ')}.`;
  return { text, ok, failed };
}

/** Whether a live change can change the pending approvals (refetch then, no polling). */
export function changesApprovals(change) {
  const ev = change && change.event;
  if (!ev) return false;
  const d = ev.data || {};
  switch (ev.kind) {
    case 'status':
      return d.from !== d.to && (d.from === 'input_required' || d.to === 'input_required');
    case 'inputRequested':
    case 'inputAnswered':
    case 'inputSuperseded':
    case 'decision':
      return true;
    case 'deleted':
      return d.status === 'input_required';
    default:
      return false;
  }
}

/** The inbox's state: what the server said, and what the human has opened, highlighted, selected. */
export class ApprovalInbox {
  constructor() {
    /** @type {Approval[]} */
    this.approvals = [];
    /** The queue and the rows shown, derived from the fields here (see `refresh`). */
    this.queue = [];
    this.rows = [];
    /** Digests of the groups shown open. */
    this.expanded = new Set();
    /** Ids (`taskId/key`) of the selected approvals. */
    this.selected = new Set();
    /** Row index last toggled (Shift extends from it), or -1. */
    this.lastToggled = -1;
    /** Id of the highlighted row (j/k), or null. */
    this.activeId = null;
    /** Id of the approval whose call and editor are shown open, or null. */
    this.openId = null;
    /** Why the last decision of an approval failed, by id (shown on its row until it leaves). */
    this.failures = new Map();
    /** True once a load answered; false while none did (or the server has no approvals API). */
    this.loaded = false;
  }

  /** Takes GET /v1/approvals' `approvals`; what is gone leaves the selection and the open rows. */
  reset(approvals) {
    this.approvals = Array.isArray(approvals) ? approvals : [];
    this.loaded = true;
    this.refresh();
  }

  /** Recomputes the rows; drops selection, expansion and highlight of what is gone (the
   *  highlight moves to the row that took the place of the one that left: rows gone above it
   *  at the same time, a selection decided at once, count out). */
  refresh() {
    const was = this.activeIndex;
    const before = this.rows.slice(0, Math.max(was, 0));
    this.queue = approvalQueue(this.approvals);
    const digests = new Set(this.queue.filter((e) => e.type === 'group').map((e) => e.digest));
    for (const d of [...this.expanded]) if (!digests.has(d)) this.expanded.delete(d);
    this.rows = visibleRows(this.queue, this.expanded);
    const ids = new Set(this.approvals.map(approvalId));
    for (const id of [...this.selected]) if (!ids.has(id)) this.selected.delete(id);
    if (this.openId && !ids.has(this.openId)) this.openId = null;
    for (const id of [...this.failures.keys()]) if (!ids.has(id)) this.failures.delete(id);
    if (this.activeId && !this.rows.some((r) => r.id === this.activeId)) {
      const shown = new Set(this.rows.map((r) => r.id));
      const place = Math.max(was, 0) - before.filter((r) => !shown.has(r.id)).length;
      this.activeId = this.rows.length ? this.rows[Math.min(Math.max(place, 0), this.rows.length - 1)].id : null;
    }
    if (this.lastToggled >= this.rows.length) this.lastToggled = -1;
  }

  get size() {
    return this.approvals.length;
  }

  /** The approval with id `id`, or undefined. */
  get(id) {
    return this.approvals.find((a) => approvalId(a) === id);
  }

  /** The highlighted row's index, or -1. */
  get activeIndex() {
    return this.rows.findIndex((r) => r.id === this.activeId);
  }

  /** Moves the highlight by `delta` rows (clamped); from nothing, to the first row. */
  move(delta) {
    if (!this.rows.length) return null;
    const i = this.activeIndex;
    const next = i < 0 ? 0 : Math.min(this.rows.length - 1, Math.max(0, i + delta));
    this.activeId = this.rows[next].id;
    return this.rows[next];
  }

  /** Opens or closes group `digest` (its calls are shown while open). */
  toggleGroup(digest, open = !this.expanded.has(digest)) {
    if (open) this.expanded.add(digest);
    else this.expanded.delete(digest);
    this.rows = visibleRows(this.queue, this.expanded);
  }

  /** Toggles the row at `index` in the selection (Shift: the range from the last toggled). Group rows are not selectable. */
  toggleSelect(index, shift = false) {
    const list = { at: (i) => this.rows[i], length: this.rows.length };
    const last = toggleSelection(this.selected, list, index, this.lastToggled, shift);
    if (last === null) return;
    this.lastToggled = last;
    for (const id of [...this.selected]) if (id.startsWith('group:')) this.selected.delete(id);
  }

  /** The selected approvals, in queue order. */
  selectedApprovals() {
    return [...this.approvals].sort(byWaiting).filter((a) => this.selected.has(approvalId(a)));
  }
}
