// The approval queue in the inbox: every pending approval of every agent, oldest waiting first,
// each with its live countdown and "1 of 2"; identical calls grouped (approve or deny them all
// once the group is opened and the decision confirmed); several selected and decided at once
// with one reason, with per-item results. Loaded from GET /v1/approvals, and again when the
// stream says a task's input changed (no polling). A highlighted call decided elsewhere keeps
// its place, saying what became of it, and no key acts there until the person moves on.
// keyboard.js decides which key asks for what; onApprovalKey carries out the queue's keys.

import { h, $, clear, setText } from './dom.js';
import { oneLine, argsSummary, shortId, shownText, summaryIsWhole } from './format.js';
import { state } from './state.js';
import { toast, announce, noticeMs, dropNotices } from './notices.js';
import { confirmDialog, updateConfirm } from './dialogs.js';
import { openTask } from './open-task.js';
import { handleTaskSnapshot } from './live.js';
import { approvalId, expiryText, waitingText, quorumText, decideBody, describeResults, changesApprovals, approvedBy, approvedByMeText, groupLabel, goneText, outcomeWords, groupId } from './approvals-model.js';
import { approvalCard, wasReadWhole } from './approval-card.js';
import { REASON_MAX_CHARS } from './form-schema.js';
import { scheduleInboxRender, onInboxLoaded } from './inbox.js';
import { noteDecided } from './browser-notify.js';
import { rights } from './auth.js';
import { decidedHere } from './keyboard.js';

/** Row elements by row id, kept across renders so what the human typed in an open row stays. */
const rowEls = new Map();
/** Approvals' cards (approvalCard) by approval id: the open one's, and those opened before, with
 * what was typed in them, until they are decided. */
const cards = new Map();
let loadSeq = 0;
let refetchTimer = null;
/** The pending removal of the last decision's outcome line (a timer id), or 0. */
let resultTimer = 0;
/** What the stream said became of a waiting task (decided by whom, expired, cancelled), by task
 *  id, for the words of a highlighted call decided elsewhere (goneText's `outcome`). */
const outcomes = new Map();
/** The open bulk confirmation's list, updated as its calls are decided elsewhere, or null. */
let openConfirm = null;

/** Loads the pending approvals; a server without the approvals API leaves the queue hidden. */
export async function reloadApprovals() {
  const seq = ++loadSeq;
  try {
    const r = await state.api.approvals();
    if (seq !== loadSeq) return;
    state.approvals.reset(r.approvals || []);
    tellLeftElsewhere();
  } catch (err) {
    if (seq !== loadSeq || err.status === 401) return;
    if (err.status === 404 || err.status === 405) state.approvals.loaded = false;
  }
  renderApprovals();
  scheduleInboxRender(); // the plain list leaves out what the queue shows
}

/** What became of the task of `approval` as the stream told (goneText's `outcome`), or null. */
function outcomeOf(approval) {
  // Still waiting, on another question: someone changed the call (an edit asked again).
  const again = state.approvals.approvals.find((b) => b.taskId === approval.taskId);
  if (again) return { how: 'edited', by: again.editedBy };
  return outcomes.get(approval.taskId) || null;
}

/** The words for kept place or left row `row` (a call, or a group of identical calls). */
function goneWords(row) {
  if (row.type === 'group') {
    const ids = new Set(row.approvals.map(approvalId));
    return goneText(row, null, state.approvals.approvals.filter((a) => ids.has(approvalId(a))).length);
  }
  return goneText(row, outcomeOf(row.approval));
}

/** Tells the person of each call they had highlighted or open that went by someone else's
 *  doing: its kept place says it (and a screen reader hears it); one with no place in view
 *  (an open call the highlight had left, the queue emptied) gets a notice. */
function tellLeftElsewhere() {
  const inbox = state.approvals;
  for (const row of inbox.leftElsewhere) {
    const words = goneWords(row);
    if (inbox.gone && inbox.gone.was === row) announce(`${words}. Nothing was done here: j or k to go on.`);
    else toast(`${words}.`, 'info');
  }
}

/** Notes what the stream says became of a waiting task, for goneWords. */
function noteOutcome(change) {
  const ev = change && change.event;
  const taskId = change && change.task && change.task.taskId;
  if (!ev || !taskId) return;
  const d = ev.data || {};
  let outcome = null;
  if (ev.kind === 'decision' && d.decision && d.decision !== 'ask') {
    outcome = d.decidedBy === 'expiry' ? { how: 'expired', onExpiry: d.decision === 'allow' ? 'allow' : 'deny' } : { how: d.decision === 'allow' ? 'approved' : 'denied', by: d.human || (d.decidedBy === 'rule' ? 'a rule' : undefined) };
  } else if (ev.kind === 'inputExpired') outcome = outcomes.get(taskId) || { how: 'expired' };
  else if (ev.kind === 'status' && d.to === 'cancelled') outcome = { how: 'cancelled' };
  else if (ev.kind === 'inputAnswered' && d.by && !outcomes.has(taskId)) outcome = { how: null, by: d.by };
  if (!outcome) return;
  outcomes.delete(taskId);
  outcomes.set(taskId, outcome);
  if (outcomes.size > 500) outcomes.delete(outcomes.keys().next().value);
}

/** A live change: refetch (once for a burst) when it can change what waits for approval. */
export function onApprovalChange(change) {
  noteOutcome(change);
  if (!changesApprovals(change) || refetchTimer) return;
  refetchTimer = setTimeout(() => {
    refetchTimer = null;
    reloadApprovals();
  }, 120);
}

/** Ids of the tasks the queue shows (the plain inbox list leaves them out). */
export function approvalTaskIds() {
  return new Set(state.approvals.approvals.map((a) => a.taskId));
}

/**
 * Decides `approvals` through POST /v1/approvals/decide and reports per item. Resolves with the
 * 422 errors when edited arguments were refused (nothing was decided then).
 */
export async function decide(approvals, decision, opts = {}) {
  if (!approvals.length) return;
  if (!rights(state.me).seesAll) {
    // The server refuses an agent's decision on an approval; say why rather than "not approved".
    toast(`Only a person decides approvals: this page is signed in as the agent ${state.me.principal}. Open Taskdeck with the admin's or a human's token to decide.`, 'warn');
    return;
  }
  noteDecided(approvals.map((a) => a.taskId));
  const done = decidingHere(approvals.map(approvalId));
  try {
    return await sendDecision(approvals, decision, opts);
  } finally {
    done();
  }
}

/**
 * Notes that this page is deciding (or answering) approvals `ids` (`taskId/key`): their rows
 * leave by this person's doing (the stream may say so before the answer comes), and the
 * highlight goes on to the row that takes their place. Returns the function to call once the
 * answer came (and the queue was reloaded after it, when this page reloads it).
 */
export function decidingHere(ids) {
  for (const id of ids) state.approvals.deciding.add(id);
  return () => {
    // Kept a moment longer: the reload the stream asks for may come after the answer.
    setTimeout(() => {
      for (const id of ids) state.approvals.deciding.delete(id);
    }, 2000);
  };
}

async function sendDecision(approvals, decision, opts) {
  let r;
  try {
    r = await state.api.decide(decideBody(approvals, decision, opts));
  } catch (err) {
    if (err.status === 422 && err.problem && Array.isArray(err.problem.errors)) return { errors: err.problem.errors };
    if (err.status === 422) return { errors: [{ path: '', message: err.message }] };
    // Not reached (status 0): the notice goes once the page is live again.
    toast(`Could not send the decision: ${String(err.message).replace(/\.$/, '')}. Nothing was decided.`, 'bad', { untilLive: !err.status });
    return;
  }
  const results = Array.isArray(r && r.results) ? r.results : [];
  const words = describeResults(results, decision, approvals, { edited: opts.arguments !== undefined, alwaysAllow: Boolean(opts.alwaysAllow) });
  for (const item of results) if (item.ok && item.task) handleTaskSnapshot(item.task);
  const byTask = new Map(approvals.map((a) => [a.taskId, a]));
  for (const f of words.failed) if (byTask.has(f.taskId)) state.approvals.failures.set(approvalId(byTask.get(f.taskId)), f.error);
  for (const a of approvals) if (results.some((x) => x.ok && x.taskId === a.taskId)) state.approvals.selected.delete(approvalId(a));
  // The outcome above the queue goes away with its toast (the queue, and the whole inbox,
  // hides once it is empty: the toast keeps the outcome in view then).
  const tone = words.failed.length > 0 ? 'bad' : 'info';
  showResult(words.text, tone);
  toast(words.text, tone);
  announce(words.text);
  await reloadApprovals();
  // The rows and boxes that went were this person's decision, not someone else's.
  decidedHere();
  return { results };
}

/** Shows a decision's outcome above the queue for as long as its toast, until the next one. */
function showResult(text, tone) {
  const line = $('approvals-result');
  clearTimeout(resultTimer);
  setText(line, text);
  line.classList.toggle('error', tone === 'bad');
  resultTimer = setTimeout(() => {
    resultTimer = 0;
    clear(line);
    line.classList.remove('error');
  }, noticeMs(tone));
}

/**
 * Confirms, then decides several approvals: each call is listed in the dialog first. Resolves
 * with `decide`'s outcome, or undefined when not confirmed.
 */
export async function decideMany(approvals, decision, reason) {
  if (!approvals.length) return;
  // A call with hidden values is approved only once read whole, one by one.
  const unread = decision === 'approve' ? approvals.filter((a) => a.hiddenValues && !readWhole(a)).length : 0;
  if (unread) {
    toast(`${unread === 1 ? 'One of these calls hides' : `${unread} of these calls hide`} values that look like credentials: open ${unread === 1 ? 'it' : 'each'} and read it whole (Show hidden values) before approving.`, 'warn');
    return;
  }
  const verb = decision === 'approve' ? 'Approve' : 'Deny';
  // What is approved is listed whole (nothing cut from a long call, as its row would), denials
  // in short.
  const said = (a) => (decision === 'approve' ? argsSummary(a.arguments, Infinity, Infinity) : oneLine(argsSummary(a.arguments), 100));
  const items = approvals.map((a) => ({
    a,
    li: h('li', {}, h('code', {}, `${a.server} · ${a.tool}`), ` ${said(a)} — ${a.principal}, task ${shortId(a.taskId)}`, h('span', { class: 'approval-confirm-gone', hidden: true })),
  }));
  const words = (n) => ({ title: n ? `${verb} ${n} call${n === 1 ? '' : 's'}?` : 'Nothing left to decide', confirmLabel: n ? `${verb} ${n}` : verb });
  // While it asks, what it lists may be decided elsewhere: each such call says so, and the
  // count (and what the button decides) is of those still waiting.
  const confirm = {
    update() {
      const waiting = pendingOf(approvals);
      const ids = new Set(waiting.map(approvalId));
      for (const { a, li } of items) {
        const gone = !ids.has(approvalId(a));
        li.classList.toggle('decided-elsewhere', gone);
        const note = li.querySelector('.approval-confirm-gone');
        note.hidden = !gone;
        setText(note, gone ? ` · ${outcomeWords(outcomeOf(a), a.onExpiry)}: left out` : '');
      }
      updateConfirm({ ...words(waiting.length), disabled: waiting.length === 0 });
    },
  };
  openConfirm = confirm;
  let ok;
  try {
    ok = await confirmDialog({
      ...words(approvals.length),
      body: [
        h('ul', { class: 'approval-confirm-list' }, items.map((i) => i.li)),
        reason && reason.trim() ? h('p', {}, `Reason the agents receive: ${shownText(reason.trim())}`) : null,
      ].filter(Boolean),
      cancelLabel: 'Back',
      tone: decision === 'approve' ? 'primary' : 'danger',
    });
  } finally {
    if (openConfirm === confirm) openConfirm = null;
  }
  // Only what still waits is sent: a call decided elsewhere meanwhile is not decided again.
  approvals = pendingOf(approvals);
  if (!ok || !approvals.length) return;
  // The highlight goes to the first of them: once they are decided, the row that took their
  // place has it (and the focus, when it was in the queue or its selection bar).
  const ids = new Set(approvals.map(approvalId));
  const first = state.approvals.rows.find((r) => r.type === 'approval' && ids.has(r.id));
  if (first) state.approvals.activeId = first.id;
  return decide(approvals, decision, { reason });
}

/** Whether call `a`'s hidden values (if any) were shown in its opened card. */
function readWhole(a) {
  return !a.hiddenValues || wasReadWhole(`${a.taskId}/${a.key}`);
}

/** Those of `approvals` the queue still holds. */
function pendingOf(approvals) {
  return approvals.filter((a) => state.approvals.get(approvalId(a)));
}

/**
 * Decides the selection with the selection bar's reason, after asking. Once the server took
 * the decision, the reason box is emptied (unless retyped meanwhile): the next selection is
 * not denied with a reason written for this one.
 */
async function decideSelection(decision) {
  const box = $('approvals-reason');
  const reason = box.value;
  const r = await decideMany(state.approvals.selectedApprovals(), decision, reason);
  if (r && r.results && box.value === reason) box.value = '';
}

/** The selection bar's "Deny selected…" (Enter in its reason box too): lists them, asks, denies with its reason. */
function denySelected() {
  return decideSelection('deny');
}

/**
 * Approves approval `a` (row `id`) as asked, unless its call holds an edit not sent (open, or
 * closed with the edit kept): then it says so and opens the call in its editor, so the edit is
 * not silently dropped.
 */
function approveAsAsked(a, id) {
  // Opened by a press of "Review…" a moment ago: a second press that fast (a double click, a
  // key held or pressed twice) was aimed at "Review…", and nobody read the call in that time.
  if (reviewedAt.get(id) > Date.now() - REVIEW_SETTLE_MS) {
    toast('This call was opened for you to read it: read it, then approve it (a, or Approve).', 'info', { about: id });
    return;
  }
  switch (reviewFirst(a, id)) {
    // A call that masks values may hide its command there: it is opened first, where "Show
    // hidden values" reads it whole, and approved once read whole there.
    case 'hidden':
      if (state.approvals.openId !== id) {
        openApproval(id, true);
        toast('This call hides values that look like credentials, so it is open now: read it whole (Show hidden values), then approve it (a, or Approve).', 'info', { about: id });
      } else {
        toast('Read this call whole before approving it: Show hidden values.', 'info', { about: id });
        cards.get(id)?.focusReveal();
      }
      return;
    // Approved as asked only once the person could read all of it: a call whose row cuts it
    // (a long value, or a row too narrow for its line) is opened first, in full.
    case 'cut':
      reviewedAt.set(id, Date.now());
      openApproval(id, true);
      toast('This call is longer than its row, so it is open now: read it all, then approve it (a, or Approve).', 'info', { about: id });
      return;
  }
  const card = cards.get(id);
  if (card && card.hasUnsentEdit()) {
    toast('This call has an edit not sent: approve it with Ctrl+Enter in the editor, or undo the edit.', 'info', { about: id });
    openApproval(id, true);
    card.focusEditor();
    return;
  }
  // "Always allow" counts only while the person sees it ticked: in the call opened.
  decide([a], 'approve', { alwaysAllow: state.approvals.openId === id && card?.alwaysAllow() });
}

/** When (ms) a press of "Review…" opened each call (row id), so that the press right after it
 *  does not approve what it just opened. */
const reviewedAt = new Map();
/** How long after "Review…" opened a call a press of Approve does not approve it (ms): longer
 *  than a double click or a key's repeat, shorter than reading a call. */
const REVIEW_SETTLE_MS = 1000;

/** Why a press of call `a`'s Approve (row `id`) opens it instead of approving it: 'hidden' (it
 *  masks values not yet read whole), 'cut' (its row does not show it whole and it is not open),
 *  or '' when a press approves it. The button's label and the press both follow it. */
function reviewFirst(a, id) {
  if (a.hiddenValues && !readWhole(a)) return 'hidden';
  if (state.approvals.openId !== id && !rowShowsWhole(a, id)) return 'cut';
  return '';
}

/** The tooltip of a "Review…" button, by [reviewFirst]'s reason. */
const REVIEW_WHY = {
  hidden: 'This call hides values that look like credentials: Review opens it, to read it whole (Show hidden values) before you approve it',
  cut: 'This call is longer than its row: Review opens it, to read it all before you approve it',
};

/** Names each row's Approve button by what a press does: "Review…" while it would open the
 *  call first ([reviewFirst]), else "Approve". Measures every row before it writes any, so the
 *  page is laid out once. */
function labelApproveButtons() {
  const found = [];
  for (const row of state.approvals.rows) {
    if (row.type !== 'approval') continue;
    const button = rowEls.get(`${row.type}:${row.id}`)?.querySelector('.approval-approve');
    if (button) found.push([button, row.approval, REVIEW_WHY[reviewFirst(row.approval, row.id)]]);
  }
  for (const [button, a, why] of found) {
    setText(button, why ? 'Review…' : 'Approve');
    button.setAttribute('aria-label', `${why ? 'Review' : 'Approve'} ${rowWhat(a)}`);
    if (why) button.title = why;
    else button.removeAttribute('title');
  }
}

/** How a row's controls name the call they act on, for screen readers. */
function rowWhat(a) {
  return a.kind === 'question' ? oneLine(a.message || a.tool, 80) : `${a.tool} from ${a.principal}: ${oneLine(argsSummary(a.arguments), 80)}`;
}

/** The most characters of a call's arguments its row shows. */
const ROW_ARGS_MAX = 120;

/** Whether the row of call `a` (id `id`) shows its arguments whole: nothing cut in the text,
 *  and the line not cut by the row's width. */
function rowShowsWhole(a, id) {
  if (!summaryIsWhole(a.arguments, ROW_ARGS_MAX)) return false;
  // The server and tool too: two tools may differ only past where the row cuts the name.
  const row = rowEls.get(`approval:${id}`);
  return !row || [...row.querySelectorAll('.approval-args, .approval-tool')].every(textFits);
}

/** Whether `el`'s text fits its box, unclipped, measured in fractions of a pixel: the laid-out
 *  text (a Range over it, whatever the ellipsis draws) against the box's content width.
 *  scrollWidth and clientWidth are whole pixels: a text cut by a fraction of one (its last
 *  letters behind the "…") can read as fitting there. */
function textFits(el) {
  const range = document.createRange();
  range.selectNodeContents(el);
  const text = range.getBoundingClientRect().width;
  const cs = getComputedStyle(el);
  const inner = el.getBoundingClientRect().width - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight) - parseFloat(cs.borderLeftWidth) - parseFloat(cs.borderRightWidth);
  return text <= inner + 0.01;
}

/** Opens (or closes) the approval `id`'s call and editor; returns its card when open. */
export function openApproval(id, open = state.approvals.openId !== id) {
  state.approvals.openId = open ? id : null;
  state.approvals.activeId = id;
  renderApprovals();
  return open ? cards.get(id) : null;
}

/** True when the signed-in person approved `a` already (it waits for more people). */
function approvedByMe(a) {
  return approvedBy(a, state.me && state.me.principal);
}

function approvalRow(a, inGroup) {
  const id = approvalId(a);
  // Screen readers name each row's controls by the call they act on, not "Approve" alone.
  const what = rowWhat(a);
  const check = h('input', { type: 'checkbox', class: 'approval-check', 'aria-label': `Select ${what}` });
  check.addEventListener('click', (e) => {
    const index = state.approvals.rows.findIndex((r) => r.id === id);
    state.approvals.toggleSelect(index, e.shiftKey);
    renderApprovals();
  });
  const summary = h(
    'button',
    { type: 'button', class: 'approval-summary', 'aria-expanded': 'false' },
    h('span', { class: 'approval-tool', title: a.kind === 'question' ? undefined : `${a.server} · ${a.tool}` }, a.kind === 'question' ? oneLine(a.message || a.tool, 200) : `${a.server} · ${a.tool}`),
    h('span', { class: 'approval-args' }, a.kind === 'question' ? a.tool : argsSummary(a.arguments, ROW_ARGS_MAX)),
    h('span', { class: 'approval-principal', title: a.principal }, a.principal),
  );
  summary.addEventListener('click', () => (a.kind === 'question' ? openTask(a.taskId, { focus: true, focusPrompt: true }) : openApproval(id)));
  const approve = h('button', { type: 'button', class: 'btn btn-small btn-primary approval-approve', 'aria-keyshortcuts': 'a', 'aria-label': `Approve ${what}` }, 'Approve');
  approve.addEventListener('click', () => approveAsAsked(a, id));
  // Enter held on the button would press it again and again: after "Review…" opened the call,
  // a repeat would approve it unread.
  approve.addEventListener('keydown', (e) => {
    if (e.repeat) e.preventDefault();
  });
  const deny = h('button', { type: 'button', class: 'btn btn-small approval-deny', 'aria-keyshortcuts': 'd', 'aria-label': `Deny ${what}` }, 'Deny…');
  deny.addEventListener('click', () => openApproval(id, true)?.focusReason());
  const answer = h('button', { type: 'button', class: 'btn btn-small approval-answer', 'aria-label': `Answer ${what}` }, 'Answer →');
  answer.addEventListener('click', () => openTask(a.taskId, { focus: true, focusPrompt: true }));
  const li = h(
    'li',
    { class: `approval${inGroup ? ' in-group' : ''}`, tabindex: '-1', dataset: { id, taskId: a.taskId, kind: a.kind } },
    h('div', { class: 'approval-head' }, check, summary,
      // Another human rewrote the call: who approves it now approves that edit, not the agent's call.
      a.editedBy ? h('span', { class: 'pill approval-edited', title: `${a.editedBy} edited this call: it runs as edited, not as the agent asked (open it to see both)` }, `edited by ${a.editedBy}`) : null,
      // Values are masked: approved once read whole, in the opened call.
      a.hiddenValues ? h('span', { class: 'pill approval-hidden', title: 'Values that look like credentials are hidden in this call: open it and read it whole (Show hidden values) before approving' }, 'values hidden') : null,
      h('span', { class: 'pill approval-quorum', hidden: true }), h('span', { class: 'approval-expiry' }), h('span', { class: 'approval-wait' }), a.kind === 'question' ? answer : !rights(state.me).seesAll ? h('span', { class: 'muted approval-person-only' }, 'A person decides') : approvedByMe(a) ? [h('span', { class: 'muted approval-person-only approval-approved-by-me' }, approvedByMeText(a)), deny] : [approve, deny]),
    h('div', { class: 'approval-failure form-error', role: 'alert', hidden: true }),
  );
  return li;
}

function groupRow(row) {
  const n = row.approvals.length;
  // How many calls one click decides comes first and is never cut; the arguments give way.
  const toggle = h(
    'button',
    { type: 'button', class: 'approval-group-toggle' },
    h('span', { class: 'approval-group-count' }),
    h('span', { class: 'approval-tool' }),
    h('span', { class: 'approval-args' }),
    h('span', { class: 'approval-principal' }),
  );
  toggle.addEventListener('click', () => {
    state.approvals.activeId = row.id;
    toggleGroup(row.digest);
  });
  const reason = h('input', { type: 'text', class: 'approval-group-reason', maxlength: String(REASON_MAX_CHARS), placeholder: 'Reason, if you deny', 'aria-label': 'Reason the agents receive if you deny' });
  const all = h('button', { type: 'button', class: 'btn btn-small btn-primary approval-group-approve' }, `Approve all ${n} identical`);
  all.addEventListener('click', () => decideMany(currentGroup(row.digest), 'approve'));
  const none = h('button', { type: 'button', class: 'btn btn-small btn-danger approval-group-deny' }, 'Deny all');
  none.addEventListener('click', () => decideMany(currentGroup(row.digest), 'deny', reason.value));
  reason.addEventListener('keydown', (e) => {
    if (e.key !== 'Enter' || e.isComposing || e.shiftKey) return;
    e.preventDefault();
    decideMany(currentGroup(row.digest), 'deny', reason.value);
  });
  return h(
    'li',
    { class: 'approval-group', tabindex: '-1', dataset: { id: row.id, digest: row.digest } },
    h('div', { class: 'approval-head' }, toggle, h('span', { class: 'approval-expiry' }), h('span', { class: 'approval-wait' })),
    h('div', { class: 'approval-group-actions', hidden: true }, all, reason, none),
  );
}

/** The row kept in the place of a highlighted call decided elsewhere: what became of it, and
 *  that nothing here acts until the person moves on. */
function goneRow(row) {
  return h(
    'li',
    { class: 'approval-gone', tabindex: '-1', role: 'status', dataset: { id: row.id } },
    h('span', { class: 'approval-gone-text' }),
    h('span', { class: 'approval-gone-hint' }, 'Nothing to decide here: j / k or a click moves on'),
  );
}

/** Opens or closes group `digest`; opened, its row and its buttons ("Approve all N identical",
 *  "Deny all") are scrolled into view (the calls under them may go past the bottom). */
function toggleGroup(digest, open) {
  state.approvals.toggleGroup(digest, open);
  renderApprovals();
  const el = rowEls.get(`group:${groupId(digest)}`);
  if (el && state.approvals.expanded.has(digest)) el.scrollIntoView({ block: 'nearest' });
}

/** The calls of group `digest` as the queue holds them now. */
function currentGroup(digest) {
  const g = state.approvals.queue.find((e) => e.type === 'group' && e.digest === digest);
  return g ? g.approvals : [];
}

/** Writes what changes with time or state into a row element. */
function updateRow(el, row, now) {
  const inbox = state.approvals;
  el.classList.toggle('active', inbox.activeId === row.id);
  el.tabIndex = inbox.activeId === row.id ? 0 : -1;
  if (row.type === 'gone') {
    setText(el.querySelector('.approval-gone-text'), `${goneWords(row.was)}.`);
    return;
  }
  if (row.type === 'group') {
    const first = row.approvals[0];
    const label = groupLabel(row.approvals);
    const toggle = el.querySelector('.approval-group-toggle');
    setText(toggle.querySelector('.approval-group-count'), `${row.open ? '▾' : '▸'} ${label.count}`);
    setText(toggle.querySelector('.approval-tool'), label.tool);
    setText(toggle.querySelector('.approval-args'), label.args);
    setText(toggle.querySelector('.approval-principal'), label.principals);
    toggle.title = label.title;
    toggle.setAttribute('aria-expanded', String(row.open));
    // The group grows while it is on screen: its label counts the calls it holds now.
    setText(el.querySelector('.approval-group-approve'), `Approve all ${row.approvals.length} identical`);
    el.querySelector('.approval-group-actions').hidden = !row.open || !rights(state.me).seesAll;
    writeTimes(el, first, now);
    return;
  }
  const a = row.approval;
  const id = row.id;
  el.querySelector('.approval-check').checked = inbox.selected.has(id);
  el.classList.toggle('selected', inbox.selected.has(id));
  const q = quorumText(a);
  const pill = el.querySelector('.approval-quorum');
  pill.hidden = !q;
  if (q) {
    setText(pill, q.text);
    pill.title = q.title;
  }
  writeTimes(el, a, now);
  const failure = inbox.failures.get(id);
  const failEl = el.querySelector('.approval-failure');
  failEl.hidden = !failure;
  setText(failEl, failure ? `Not decided: ${failure}` : '');
  const open = inbox.openId === id;
  el.classList.toggle('open', open);
  el.querySelector('.approval-summary').setAttribute('aria-expanded', String(open));
  // A closed call keeps its card (its edit, its reason) until it is decided: opening another
  // call, or going back to the queue, loses nothing typed.
  let card = cards.get(id);
  if (open) {
    if (!card) {
      card = approvalCard(a, {
        approve: (args) => decide([a], 'approve', { arguments: args, alwaysAllow: cards.get(id)?.alwaysAllow() }),
        deny: (reason) => decide([a], 'deny', { reason }),
        openTask: () => openTask(a.taskId, { focus: true }),
        // Read whole, its Approve approves: relabelled once the card has recorded the read.
        reveal: () =>
          state.api.reveal(a.taskId).then((revealed) => {
            setTimeout(labelApproveButtons);
            return revealed;
          }),
        decides: rights(state.me).seesAll,
      });
      cards.set(id, card);
    }
    if (card.el.parentNode !== el) el.appendChild(card.el);
  } else if (card && card.el.parentNode) card.el.remove();
}

function writeTimes(el, a, now) {
  const exp = expiryText(a, now);
  const expEl = el.querySelector('.approval-expiry');
  setText(expEl, exp ? exp.text : '');
  expEl.title = exp ? exp.title : 'Does not expire';
  expEl.classList.toggle('urgent', Boolean(exp && exp.urgent));
  setText(el.querySelector('.approval-wait'), waitingText(a, now));
}

export function renderApprovals() {
  const inbox = state.approvals;
  const ul = $('approvals-list');
  const bar = $('approvals-bar');
  // Read before the box may hide: a hidden box's focused row loses the focus.
  const hadFocus = ul.contains(document.activeElement);
  const barHadFocus = bar.contains(document.activeElement);
  const box = $('approvals');
  box.hidden = !inbox.loaded || inbox.size === 0;
  const now = Date.now();
  const wanted = [];
  const seen = new Set();
  for (const row of inbox.rows) {
    const key = `${row.type}:${row.id}`;
    seen.add(key);
    let el = rowEls.get(key);
    if (!el) {
      el = row.type === 'group' ? groupRow(row) : row.type === 'gone' ? goneRow(row) : approvalRow(row.approval, row.inGroup);
      rowEls.set(key, el);
    }
    updateRow(el, row, now);
    wanted.push(el);
  }
  for (const [key, el] of rowEls) {
    if (seen.has(key)) continue;
    el.remove();
    rowEls.delete(key);
  }
  for (const id of [...cards.keys()]) if (!inbox.get(id)) cards.delete(id);
  for (const id of [...reviewedAt.keys()]) if (!inbox.get(id)) reviewedAt.delete(id);
  // What a notice asked of a call (read it, then approve it) is moot once it is decided; of a
  // group (open it first), once it is open or gone.
  dropNotices((about) => {
    if (!about.startsWith('group:')) return !inbox.get(about);
    const group = inbox.rows.find((r) => r.type === 'group' && r.id === about.slice('group:'.length));
    return !group || group.open;
  });
  // Moving a focused node blurs it: reorder only when the order changed.
  const current = [...ul.children];
  if (current.length !== wanted.length || current.some((el, i) => el !== wanted[i])) {
    const focused = ul.contains(document.activeElement) ? document.activeElement : null;
    // Emptied for a moment, the list would scroll back to its top (a group opened far down
    // would leave the view): it keeps its place.
    const top = ul.scrollTop;
    ul.replaceChildren(...wanted);
    ul.scrollTop = top;
    if (focused && focused.isConnected) focused.focus({ preventScroll: true });
  }
  // A decided row leaves with the focus in it (its row, its reason box): the focus goes to the
  // row that took its place, so the next key acts on the queue, not on the page behind it.
  if (hadFocus && !ul.contains(document.activeElement)) refocus();
  labelApproveButtons();
  // A short window shows the queue's first row only, until a call or a group is opened.
  ul.classList.toggle('has-open', inbox.openId !== null || inbox.rows.some((r) => r.type === 'group' && r.open));
  const n = inbox.selected.size;
  bar.hidden = n === 0;
  // A selection decided (or cleared) hides the bar with the focus in it (its buttons, its
  // reason box): the focus goes to the queue's row that took the decided ones' place.
  if (barHadFocus && bar.hidden) refocus();
  setText($('approvals-selected'), `${n} selected`);
  if (openConfirm) openConfirm.update();
  setText($('approvals-count'), String(inbox.size));
  // Every pending approval shows how long it has waited (and maybe a countdown), to the second.
  state.ticker.need('approvals', inbox.size > 0);
}

/** The countdowns and waiting times: the 'approvals' clock calls it every second while one is
 *  pending (renderApprovals says when). */
export function tickApprovals() {
  if (!state.approvals.size) return;
  const now = Date.now();
  for (const row of state.approvals.rows) {
    const el = rowEls.get(`${row.type}:${row.id}`);
    if (el && row.type !== 'gone') writeTimes(el, row.type === 'group' ? row.approvals[0] : row.approval, now);
  }
}

/** Gives the focus to the queue's highlighted row, or to the task list when no row shows. */
function refocus() {
  const row = state.approvals.rows[state.approvals.activeIndex];
  const el = row && rowEls.get(`${row.type}:${row.id}`);
  if (el && el.getClientRects().length) el.focus({ preventScroll: true });
  else $('task-list').focus({ preventScroll: true });
}

/** Focuses the highlighted row (the first when none is). */
export function focusApprovals() {
  const inbox = state.approvals;
  if (!inbox.rows.length) return false;
  if (!inbox.activeId || inbox.activeIndex < 0) inbox.activeId = inbox.rows[0].id;
  renderApprovals();
  const row = inbox.rows[inbox.activeIndex];
  const el = rowEls.get(`${row.type}:${row.id}`);
  if (el) {
    el.focus();
    el.scrollIntoView({ block: 'nearest' });
  }
  return true;
}

/**
 * Focuses the queue's highlighted row, or, when that row is task `taskId`'s question (just
 * answered, its row not yet gone), the nearest row after it (else before it) that is not;
 * false when no other row waits. Rows whose task the page already knows no longer waits
 * (answered a moment ago, the queue not yet reloaded) are passed over too.
 */
export function focusNextApproval(taskId) {
  const inbox = state.approvals;
  const answered = (id) => {
    const task = state.model.get(id);
    return id === taskId || (task !== undefined && task.status !== 'input_required');
  };
  const other = (r) => !(r.type === 'approval' && answered(r.approval.taskId));
  const rows = inbox.rows;
  if (!rows.some(other)) return false;
  const from = Math.max(0, inbox.activeIndex);
  if (!other(rows[from])) inbox.activeId = (rows.slice(from).find(other) || rows.slice(0, from).reverse().find(other)).id;
  return focusApprovals();
}

/**
 * Puts the highlight and the focus on the queue's row of task `taskId`'s question; false when
 * the queue has none (it was answered, or is not a question of the queue).
 */
export function focusQuestionRow(taskId) {
  const row = state.approvals.rows.find((r) => r.type === 'approval' && r.approval.taskId === taskId);
  if (!row) return false;
  state.approvals.activeId = row.id;
  return focusApprovals();
}

/** Wires the selection bar; runs once. */
export function initApprovals() {
  // A call's first asking is in its waiting task's question (the inbox holds those tasks).
  state.approvals.taskOf = (taskId) => state.inbox.tasks.get(taskId);
  onInboxLoaded(() => {
    if (state.approvals.tasksChanged()) renderApprovals();
  });
  $('approvals-approve').addEventListener('click', () => decideSelection('approve'));
  $('approvals-deny').addEventListener('click', denySelected);
  $('approvals-clear').addEventListener('click', () => {
    state.approvals.selected.clear();
    renderApprovals();
  });
  clear($('approvals-result'));
  // The inbox may hide the queue under its focused row, or the selection bar under its focused
  // button (nothing waits any more), before the queue itself is reloaded: the focus then falls
  // to the page, and keys would act on what is behind it. It goes to the queue's next row, or
  // the task list.
  const onFocusOut = (e) => {
    if (e.relatedTarget) return;
    const left = e.target;
    setTimeout(() => {
      const lost = !document.activeElement || document.activeElement === document.body;
      if (lost && (!left.isConnected || !left.getClientRects().length)) refocus();
    });
  };
  $('approvals-list').addEventListener('focusout', onFocusOut);
  $('approvals-bar').addEventListener('focusout', onFocusOut);
  // A narrower window cuts more rows: their Approve says "Review…" then, and back when wider.
  if (typeof ResizeObserver !== 'undefined') {
    let width = 0;
    new ResizeObserver(([entry]) => {
      if (entry.contentRect.width === width) return;
      width = entry.contentRect.width;
      labelApproveButtons();
    }).observe($('approvals-list'));
  }
}

/**
 * Carries out a key of the approval queue on its highlighted row: `command` is one of
 * keyboard.js's `approval-*` shortcuts, `shift` whether Shift was held (x extends a range).
 */
export function onApprovalKey(command, shift) {
  const inbox = state.approvals;
  // The keys act on the row the focus is on: a click focuses a row without moving the
  // highlight, and `a` must not approve the highlighted one instead of the one clicked.
  const focusedRow = document.activeElement instanceof Element ? document.activeElement.closest('#approvals-list > li') : null;
  if (focusedRow && focusedRow.dataset.id && inbox.rows.some((r) => r.id === focusedRow.dataset.id) && focusedRow.dataset.id !== inbox.activeId) {
    inbox.activeId = focusedRow.dataset.id;
    renderApprovals();
  }
  const row = inbox.rows[inbox.activeIndex];
  const approval = row && row.type === 'approval' ? row.approval : null;
  // On the place of a call decided elsewhere, a key that decides, opens or selects does
  // nothing (it would act on a call the person has not looked at): it says why.
  if (row && row.type === 'gone' && ['approval-open', 'approval-approve', 'approval-deny', 'approval-edit', 'approval-select'].includes(command)) {
    toast(`${goneWords(row.was)}: nothing was done. Move to a call first (j / k, or click it).`, 'info');
    return;
  }
  switch (command) {
    case 'approval-down':
    case 'approval-up':
      inbox.move(command === 'approval-down' ? 1 : -1);
      focusApprovals();
      return;
    case 'approval-open':
      if (row && row.type === 'group') toggleGroup(row.digest);
      else if (approval && approval.kind === 'question') openTask(approval.taskId, { focus: true, focusPrompt: true });
      else if (approval) openApproval(row.id);
      return;
    case 'approval-approve':
      if (approval && approval.kind === 'question') openTask(approval.taskId, { focus: true, focusPrompt: true });
      else if (approval) approveAsAsked(approval, row.id);
      else if (row && row.open) toast(`To approve them all: “Approve all ${row.approvals.length} identical” (it lists them and asks first); or j to one call and a.`, 'info');
      else if (row) toast('Open the group (Enter) to see its calls before approving them.', 'info', { about: `group:${row.id}` });
      return;
    case 'approval-deny':
    case 'approval-edit': {
      if (row && row.type === 'group' && command === 'approval-deny') {
        // The group's reason box, for "Deny all" (Enter there asks first).
        toggleGroup(row.digest, true);
        const el = rowEls.get(`group:${row.id}`);
        if (el) el.querySelector('.approval-group-reason').focus({ preventScroll: true });
        return;
      }
      if (!approval) return;
      if (approval.kind === 'question') {
        // A question is answered in its task's form: `d` opens it in the decline reason box.
        if (command === 'approval-deny') openTask(approval.taskId, { focus: true, focusDecline: true });
        return;
      }
      const card = openApproval(row.id, true);
      if (!card) return;
      if (command === 'approval-deny') card.focusReason();
      else if (card.canEdit) card.focusEditor();
      else {
        toast('This call cannot be edited: approve it as asked, or deny it.', 'info');
        card.focusReason();
      }
      return;
    }
    case 'approval-select':
      if (row && row.type === 'group' && !shift) {
        // Its calls are selected where they can be seen: in the opened group, all at once.
        if (!row.open) {
          toast('Open the group (Enter) to select its calls: x there selects them all.', 'info', { about: `group:${row.id}` });
          return;
        }
        inbox.toggleSelectAll(row.approvals);
        renderApprovals();
      } else if (row) {
        inbox.toggleSelect(inbox.activeIndex, shift);
        renderApprovals();
      }
      return;
    case 'approval-approve-selected':
    case 'approval-deny-selected': {
      const chosen = inbox.selectedApprovals();
      if (!chosen.length) {
        toast('Select approvals first (x; Shift+x for a range).', 'info');
        return;
      }
      if (command === 'approval-approve-selected') decideSelection('approve');
      else $('approvals-reason').focus();
      return;
    }
    case 'approval-deny-selected-send':
      denySelected();
      return;
    case 'approval-leave-field':
      focusApprovals();
      return;
    case 'approval-leave':
      if (inbox.openId) {
        openApproval(inbox.openId, false);
        focusApprovals();
      } else if (row && row.type === 'group' && row.open) {
        inbox.toggleGroup(row.digest, false);
        renderApprovals();
        focusApprovals();
      } else $('task-list').focus();
      return;
    default:
  }
}
