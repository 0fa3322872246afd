// The approval inbox's model: every pending approval from GET /v1/approvals, oldest waiting
// first (since the call was first asked), identical calls (same digest) folded into a group,
// which rows are shown (a group shows its calls once expanded), the highlighted row, the
// selection (Shift for a range), the place kept for a highlighted call decided elsewhere, and
// the words for countdowns, "1 of 2", digests, calls' names and per-item results. No DOM.

import { formatDuration, shortId, argsSummary, oneLine } from './format.js';
import { toggleSelection } from './selection-range.js';

/**
 * @typedef {object} Approval  one entry of GET /v1/approvals (plan of issue #15)
 * @property {string} taskId @property {string} key @property {'call'|'question'} kind
 * @property {string} principal @property {string} server @property {string} tool
 * @property {object} arguments @property {string} digest @property {string} message
 * @property {number} waitingSinceMs when this round of the question was asked
 * @property {number} [askedAtMs] when the call was first asked (the same in every round of one
 *   approval: M of N, an edit asked again); from the question's `_meta["taskdeck/approval"]`,
 *   filled in by `ApprovalInbox` (absent from older servers) @property {number|null} expiresAtMs
 * @property {'deny'|'allow'|'ask'} onExpiry @property {number} required
 * @property {string[]} approvedBy @property {string} [editedBy] who edited the call (M of N)
 * @property {boolean} editable @property {object|null} inputSchema
 */

/** A row's id: an approval is `taskId/key`; a group is `group:<digest>`. */
export const approvalId = (a) => `${a.taskId}/${a.key}`;
export const groupId = (digest) => `group:${digest}`;

/** Since when `a` has waited (Unix ms): since its call was first asked (`askedAtMs`), so a call
 *  asked again (its second approver's round, an edit) keeps its place and its time; else since
 *  this round was asked. */
export function waitingSince(a) {
  return typeof a.askedAtMs === 'number' ? a.askedAtMs : a.waitingSinceMs;
}

/** `askedAtMs` of approval `a`: its own, else its question's in `task` (the waiting task, its
 *  `inputRequests[key].params._meta["taskdeck/approval"]`), else undefined. */
export function askedAtOf(a, task) {
  if (typeof a.askedAtMs === 'number') return a.askedAtMs;
  const req = task && task.inputRequests && task.inputRequests[a.key];
  const meta = req && req.params && req.params._meta && req.params._meta['taskdeck/approval'];
  return meta && typeof meta.askedAtMs === 'number' ? meta.askedAtMs : undefined;
}

/** Oldest waiting first; ties by task id then key, so the order is stable. */
export function byWaiting(a, b) {
  return (waitingSince(a) ?? 0) - (waitingSince(b) ?? 0) || (a.taskId < b.taskId ? -1 : a.taskId > b.taskId ? 1 : 0) || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);
}

/**
 * A call or question named in one short line, for notices ("run_command: echo a1"): a question
 * by its text; a call by its tool and its one string argument, or its `command` (a shell line,
 * with its `cwd` or a `description` beside it: "run_command: make test"), or its arguments in
 * short.
 */
export function callName(a, max = 60) {
  if (!a) return 'the call';
  if (a.kind === 'question') return oneLine(a.message || a.tool, max);
  const args = a.arguments && typeof a.arguments === 'object' && !Array.isArray(a.arguments) ? a.arguments : {};
  const values = Object.values(args);
  // The summary gets the room the tool's name leaves, so that the line is cut once (one "…").
  const room = Math.max(1, max - String(a.tool).length - 2);
  const what = values.length === 1 && typeof values[0] === 'string' ? values[0] : typeof args.command === 'string' ? args.command : argsSummary(args, room, room);
  return oneLine(what ? `${a.tool}: ${what}` : a.tool, max);
}

/**
 * The queue: approvals oldest first, those of one digest (two or more calls) folded into one
 * group at the place of its oldest. Questions (an agent's own form) are never grouped, nor calls
 * with hidden values (`hiddenValues`): what is masked may differ from one to the next.
 * @returns {({type: 'approval', id: string, approval: Approval} | {type: 'group', id: string, digest: string, approvals: Approval[]})[]}
 */
export function approvalQueue(approvals) {
  const sorted = [...approvals].sort(byWaiting);
  const byDigest = new Map();
  const groupable = (a) => a.kind === 'call' && a.digest && !a.hiddenValues;
  for (const a of sorted) {
    if (!groupable(a)) continue;
    if (!byDigest.has(a.digest)) byDigest.set(a.digest, []);
    byDigest.get(a.digest).push(a);
  }
  const out = [];
  const placed = new Set();
  for (const a of sorted) {
    const same = groupable(a) ? byDigest.get(a.digest) : null;
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

/** What happens when time runs out, in the fewest words, for a row's "59:49 → deny". */
export function expiryAction(onExpiry) {
  if (onExpiry === 'allow') return 'allow';
  if (onExpiry === 'ask') return 'agent’s prompt';
  return 'deny';
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
  // The row says what happens then, not only when: "4:05 → deny" (as short as a narrow row needs).
  return { text: `${countdown(left)} → ${expiryAction(a.onExpiry)}`, title: `Unless answered within ${countdown(left)}, the call is ${outcome}.`, urgent: left < 60_000, expired: false };
}

/** "waiting 42s", "waiting 3m 5s": how long an approval has waited at `now` (since its call was
 *  first asked, when the server says). */
export function waitingText(a, now) {
  return `waiting ${formatDuration(Math.max(0, now - (waitingSince(a) ?? now)))}`;
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
 * The words for a decide answer's per-item `results`: a summary and each failure. One call is
 * named (`approvals`, what was sent; "Approved “run_command: echo hi”."), and `edited` (its
 * arguments were edited before approving) says so, so that a toast tells which call went how.
 * @returns {{text: string, ok: number, failed: {taskId: string, error: string}[]}}
 */
export function describeResults(results, decision, approvals = [], { edited = false, alwaysAllow = false } = {}) {
  const failed = results.filter((r) => !r.ok).map((r) => ({ taskId: r.taskId, error: r.error || 'failed' }));
  const ok = results.length - failed.length;
  const verb = decision === 'approve' ? 'approved' : 'denied';
  // An approval of a call that needs more people than have approved it (with this one) is a
  // step, not the decision: the call still waits.
  const asked = new Map(approvals.map((a) => [a.taskId, a]));
  const waiting = decision !== 'approve' ? 0 : results.filter((r) => {
    return r.ok && stillWaitsAfterOne(asked.get(r.taskId));
  }).length;
  let text = `${ok} of ${results.length} ${verb}.`;
  if (results.length === 1) {
    const one = asked.get(results[0].taskId);
    const name = one ? `“${callName(one)}”` : 'the call';
    const how = edited && decision === 'approve' ? ' with your edit' : '';
    const Verb = verb[0].toUpperCase() + verb.slice(1);
    text = ok ? `${Verb} ${name}${how}.` : `Not ${verb} ${name}: ${failed[0].error}`;
  }
  if (waiting) text += results.length === 1 ? ' It still waits for another person to approve it.' : ` ${waiting} still wait for another person to approve them.`;
  // What was not done as asked (no rule saved, an edit not used) is said; so is a rule saved.
  const note = results.length === 1 && results[0].ok ? results[0].note : null;
  if (note) text += ` ${note[0].toUpperCase()}${note.slice(1)}${/[.!?]$/.test(note) ? '' : '.'}`;
  else if (alwaysAllow && ok && decision === 'approve') {
    // A rule lets the call run with no human at all: with several approvers, it takes each
    // one's "Always allow" (docs/approvals.md). An edited call's rule is for the call as edited.
    const one = results.length === 1 ? asked.get(results[0].taskId) : null;
    const it = edited ? 'The call as edited' : 'It';
    if (waiting) text += ' Its rule is saved only if they tick “Always allow” too.';
    else if (one && one.required > 1) text += ' Its rule is saved if everyone who approved it ticked “Always allow”.';
    else text += ` ${it} is always allowed from now on: its rule is added at the end of the policy.`;
  }
  if (results.length > 1 && failed.length) text += ` Not decided: ${failed.map((f) => `${shortId(f.taskId)} (${f.error})`).join('; ')}.`;
  return { text, ok, failed };
}

/**
 * The notice of an approval answered in its task's form, in the queue's words: the call named
 * as the queue names it, not by its question's text ("Approved “run_command: echo hi”.", "…
 * with your edit.", "Denied “…”."; a form's Cancel denies the call too). `meta`: the question's
 * `_meta["taskdeck/approval"]`; `response`: the answer sent (an edit is its
 * `content.arguments`); `used`: false when the answer came too late (already answered).
 */
export function formAnswerText(meta, response, used = true) {
  const call = { kind: 'call', tool: meta.tool, arguments: meta.arguments };
  if (!used) return `“${callName(call)}” was already decided; your answer was not used.`;
  const approve = response.action === 'accept';
  const edited = approve && response.content && response.content.arguments !== undefined;
  const waits = approve && stillWaitsAfterOne(meta);
  return `${approve ? 'Approved' : 'Denied'} “${callName(call)}”${edited ? ' with your edit' : ''}.${waits ? ' It still waits for another person to approve it.' : ''}`;
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

/**
 * What became of a call that left the queue while the person had it highlighted (not by their
 * own decision), in words for its row and a notice: "“run_command: echo a1” was denied by
 * alice". `row`: the row that left (a call, or a group of identical calls); `outcome`: what the
 * live stream said of its task (`{how: 'approved'|'denied'|'expired'|'cancelled'|'edited', by?,
 * onExpiry?}`), or null when it said nothing; `left`: how many of a group's calls still wait.
 */
export function goneText(row, outcome, left = 0) {
  if (row.type === 'group') {
    const n = row.approvals.length;
    const what = `${n - left} of the ${n} identical calls “${callName(row.approvals[0])}”`;
    return left ? `${what} were decided elsewhere; ${left} still wait${left === 1 ? 's' : ''}, below` : `The ${n} identical calls “${callName(row.approvals[0])}” were decided elsewhere`;
  }
  const words = outcomeWords(outcome, row.approval.onExpiry);
  return `“${callName(row.approval)}” ${words}${outcome && outcome.how === 'edited' ? ', below' : ''}`;
}

/** What became of a call, after its name: "was denied by alice", "expired: denied", "was
 *  decided elsewhere" (`outcome` as for goneText; `onExpiry`: the call's own terms). */
export function outcomeWords(outcome, onExpiry) {
  const by = outcome && outcome.by ? ` by ${outcome.by}` : '';
  switch (outcome && outcome.how) {
    case 'approved':
    case 'denied':
      return `was ${outcome.how}${by}`;
    case 'expired':
      return `expired: ${expiryOutcome(outcome.onExpiry ?? onExpiry)}`;
    case 'cancelled':
      return `was cancelled${by}`;
    case 'edited':
      return `was edited${by}: it asks again`;
    default:
      return by ? `was decided${by}` : 'was decided elsewhere';
  }
}

/** Puts kept place `gone` into `rows`: before the row that took its place when that row is
 *  still there (a group opened above it moves both; none: at the end), else at its index. */
function placeGone(rows, gone) {
  let at = gone.before === undefined ? -1 : gone.before === null ? rows.length : rows.findIndex((r) => r.id === gone.before);
  if (at < 0) at = Math.min(gone.place, rows.length);
  rows.splice(at, 0, gone);
  gone.place = at;
  gone.before = at + 1 < rows.length ? rows[at + 1].id : null;
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
    /** Id of the highlighted row (j/k), or null (see `activeId`). */
    this.active = null;
    /** Id of the approval whose call and editor are shown open, or null. */
    this.openId = null;
    /** Why the last decision of an approval failed, by id (shown on its row until it leaves). */
    this.failures = new Map();
    /** True once a load answered; false while none did (or the server has no approvals API). */
    this.loaded = false;
    /** Ids of the approvals this page is deciding (sent, not yet reloaded): their rows leave by
     *  the person's own doing, and the highlight goes on to the row that takes their place. */
    this.deciding = new Set();
    /**
     * The row kept in the place of the highlighted call (or group) that left the queue by
     * someone else's doing (another person, another tab, its expiry), or null:
     * `{type: 'gone', id: 'gone:…', was: the row that left, place: its index}`. The highlight
     * stays on it, and no key acts on it, until the person moves (j/k, a click): the next
     * `a` must never approve a call that merely slid under the highlight.
     */
    this.gone = null;
    /** The waiting task of an approval (for the `askedAtMs` of its question), or undefined. */
    this.taskOf = () => undefined;
    /** When each call was first asked, by task id, as learnt (a later round may not say). */
    this.askedAt = new Map();
    /** The rows the person had highlighted or open that the last `refresh` found gone by
     *  someone else's doing (the page tells them). */
    this.leftElsewhere = [];
  }

  /** Id of the highlighted row, or null. Moving it off a kept place (`gone`) lets that go. */
  get activeId() {
    return this.active;
  }

  set activeId(id) {
    this.active = id;
    if (this.gone && id !== this.gone.id) {
      this.gone = null;
      this.rows = this.rows.filter((r) => r.type !== 'gone');
    }
  }

  /** Takes GET /v1/approvals' `approvals`; what is gone leaves the selection and the open rows. */
  reset(approvals) {
    this.approvals = Array.isArray(approvals) ? approvals : [];
    this.loaded = true;
    this.refresh();
  }

  /** Fills in each call's `askedAtMs` (its own, its task's question's, or as learnt before).
   *  Returns true when one changed. */
  learnAskedAt() {
    let changed = false;
    for (const a of this.approvals) {
      const asked = askedAtOf(a, this.taskOf(a.taskId)) ?? (a.kind === 'call' ? this.askedAt.get(a.taskId) : undefined);
      if (asked === undefined) continue;
      if (a.kind === 'call') this.askedAt.set(a.taskId, asked);
      if (a.askedAtMs !== asked) {
        a.askedAtMs = asked;
        changed = true;
      }
    }
    const waiting = new Set(this.approvals.map((a) => a.taskId));
    for (const id of [...this.askedAt.keys()]) if (!waiting.has(id)) this.askedAt.delete(id);
    return changed;
  }

  /** The waiting tasks changed (the inbox loaded): orders the queue again when a call's first
   *  asking is known now. Returns true when the rows were recomputed. */
  tasksChanged() {
    if (!this.loaded || !this.learnAskedAt()) return false;
    this.refresh();
    return true;
  }

  /**
   * Recomputes the rows; drops selection, expansion and highlight of what is gone. A highlighted
   * row that left:
   * - by this page's decision: the highlight moves to the row that took its place (rows gone
   *   above it at the same time, a selection decided at once, count out; the same call asked
   *   again for another person's approval is passed over);
   * - asked again unchanged (its next round: M of N): the highlight, and the open call, follow it;
   * - otherwise (decided elsewhere, expired, edited by another person): a `gone` row keeps its
   *   place and the highlight.
   */
  refresh() {
    const prev = this.rows;
    const was = this.activeIndex;
    const left = was >= 0 ? prev[was] : null;
    const openBefore = this.openId ? this.get(this.openId) ?? prev.find((r) => r.id === this.openId)?.approval : null;
    this.learnAskedAt();
    this.queue = approvalQueue(this.approvals);
    const digests = new Set(this.queue.filter((e) => e.type === 'group').map((e) => e.digest));
    for (const d of [...this.expanded]) if (!digests.has(d)) this.expanded.delete(d);
    const rows = visibleRows(this.queue, this.expanded);
    const ids = new Set(this.approvals.map(approvalId));
    for (const id of [...this.selected]) if (!ids.has(id)) this.selected.delete(id);
    for (const id of [...this.failures.keys()]) if (!ids.has(id)) this.failures.delete(id);
    /** The same call asked again, unchanged (same task, digest and editor, another key). */
    const askedAgain = (a) => a && this.approvals.find((b) => b.taskId === a.taskId && b.digest === a.digest && b.editedBy === a.editedBy && approvalId(b) !== approvalId(a));
    const mine = (r) => r && (r.type === 'group' ? r.approvals : [r.approval]).every((a) => this.deciding.has(approvalId(a)));
    this.leftElsewhere = [];
    if (this.openId && !ids.has(this.openId)) {
      const openRow = prev.find((r) => r.id === this.openId);
      const next = !mine(openRow) && askedAgain(openBefore);
      if (!next && openRow && !mine(openRow) && openRow !== left) this.leftElsewhere.push(openRow);
      this.openId = next ? approvalId(next) : null;
    }
    const shown = new Set(rows.map((r) => r.id));
    // Where the highlighted row was, less the rows that left above it.
    const place = Math.max(was, 0) - prev.slice(0, Math.max(was, 0)).filter((r) => r.type !== 'gone' && !shown.has(r.id)).length;
    let gone = null;
    let active = this.active;
    if (left && left.type === 'gone') {
      gone = { ...left, place };
    } else if (left && !shown.has(left.id) && rows.length) {
      const again = left.type === 'approval' && askedAgain(left.approval);
      if (mine(left)) {
        // The row that took its place, past the calls just decided that wait for another person.
        const decidedTasks = new Set((left.type === 'group' ? left.approvals : [left.approval]).map((a) => a.taskId));
        const other = (r) => !(r.type === 'approval' && decidedTasks.has(r.approval.taskId));
        const from = Math.min(place, rows.length - 1);
        const pick = rows.slice(from).find(other) || rows.slice(0, from).reverse().find(other) || rows[from];
        active = pick.id;
      } else if (again && shown.has(approvalId(again))) {
        active = approvalId(again);
      } else {
        gone = { type: 'gone', id: `gone:${left.id}`, was: left, place };
        active = gone.id;
        this.leftElsewhere.push(left);
      }
    } else if (left && !shown.has(left.id)) {
      // The queue is empty: nothing can slide under the highlight, but the person is told.
      if (!mine(left) && !(left.type === 'approval' && askedAgain(left.approval))) this.leftElsewhere.push(left);
      active = null;
    }
    if (gone && rows.length) placeGone(rows, gone);
    else gone = null;
    this.rows = rows;
    this.gone = gone;
    this.active = rows.some((r) => r.id === active) ? active : null;
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
    return this.rows.findIndex((r) => r.id === this.active);
  }

  /** Moves the highlight by `delta` rows (clamped); from nothing, to the first row. From a kept
   *  place (`gone`), j goes to the row that took it, k to the one above. */
  move(delta) {
    if (!this.rows.length) return null;
    const i = this.activeIndex;
    const next = i < 0 ? 0 : Math.min(this.rows.length - 1, Math.max(0, i + delta));
    const row = this.rows[next];
    this.activeId = row.id;
    return row;
  }

  /** Opens or closes group `digest` (its calls are shown while open). */
  toggleGroup(digest, open = !this.expanded.has(digest)) {
    if (open) this.expanded.add(digest);
    else this.expanded.delete(digest);
    const rows = visibleRows(this.queue, this.expanded);
    if (this.gone) placeGone(rows, this.gone);
    this.rows = rows;
  }

  /** Toggles the row at `index` in the selection (Shift: the range from the last toggled). Only
   *  calls and questions are selected (not a group's row, nor a kept place). */
  toggleSelect(index, shift = false) {
    const list = { at: (i) => this.rows[i], length: this.rows.length };
    const last = toggleSelection(this.selected, list, index, this.lastToggled, shift);
    if (last === null) return;
    this.lastToggled = last;
    for (const id of [...this.selected]) if (!this.get(id)) this.selected.delete(id);
  }

  /** Selects every call of `approvals` (a group's), or, when all of them are selected
   *  already, none of them. */
  toggleSelectAll(approvals) {
    const ids = approvals.map(approvalId);
    const all = ids.every((id) => this.selected.has(id));
    for (const id of ids) {
      if (all) this.selected.delete(id);
      else this.selected.add(id);
    }
  }

  /** The selected approvals, in queue order. */
  selectedApprovals() {
    return [...this.approvals].sort(byWaiting).filter((a) => this.selected.has(approvalId(a)));
  }
}
