// The detail pane: one task's header (status, ids, times, retention countdown, progress,
// cancel), its outstanding prompts as forms, its outcome (result / completed with error /
// failed / cancelled), a command's output (log-view.js), arguments, input rounds and full
// timeline. It follows the task live; prompt cards are kept (not rebuilt) while they stay
// outstanding, so typing is never lost.

import { h, clear, copyButton, section } from './dom.js';
import { statusBadge } from './status.js';
import {
  ageChangesIn,
  formatAge,
  toMs,
  formatDuration,
  formatTimestamp,
  formatClock,
  taskDurationMs,
  ranBeforeEnd,
  ttlCountdown,
  isTerminal,
  progressFraction,
  progressText,
  shownText,
  oneLine,
} from './format.js';
import { describeEvent, groupTimeline, describeProgressRun, describeRound } from './timeline.js';
import { diffLine } from './json-diff.js';
import { clampedText } from './clamp.js';

/** Timeline events shown at first, and added by each "Show earlier events". */
const TIMELINE_PAGE = 500;
/** How much of a question asked shows in the input rounds and the timeline before "Show all":
 *  a few lines, so that a long one does not push the rest of the task out of view. */
const QUESTION_CLAMP = { lines: 4, chars: 400 };
/** How long after a re-read of the open task failed it is tried again (ms): doubled after each
 *  failure in a row, up to REFETCH_RETRY_MAX_MS. */
const REFETCH_RETRY_MS = 2000;
const REFETCH_RETRY_MAX_MS = 30_000;
import { outstandingPrompts, isStale, keepWhole } from './tasks-model.js';
import { approvedBy, formAnswerText } from './approvals-model.js';
import { promptCard, lockedPromptCard } from './prompt-form.js';
import { answerVerb } from './form-schema.js';
import { resultView, errorView, jsonBlock, textBlock } from './result-view.js';
import { LogView, hasOutputLog } from './log-view.js';
import { coalesced } from './coalesced.js';
import { state } from './state.js';
import { canRerun, requestDelete, requestRerun } from './task-actions.js';
import { stringifyJson } from './exact-json.js';

export function badgeEl(task, extraClass = '') {
  const b = statusBadge(task);
  return h('span', { class: `badge badge-${b.key} ${extraClass}`.trim() }, h('span', { class: 'badge-symbol', 'aria-hidden': 'true' }, b.symbol), h('span', { class: 'badge-text' }, b.label));
}

export class DetailView {
  /**
   * @param {HTMLElement} root
   * @param {{api: {getTask: Function, answer: Function, taskLog: Function}, requestCancel: (task: object) => Promise<object|null>, announce: (s: string) => void,
   *          toast: (s: string, tone?: string) => void, onClose: () => void, isHuman: () => boolean,
   *          needTick?: (on: boolean) => void, focusQueue?: (taskId: string) => boolean,
   *          principal?: () => string|undefined}} deps
   *        `isHuman`: whether this page may answer `humanOnly` requests (signed in as a person:
   *        the admin or a human). `principal`: who is signed in (an approval they gave already
   *        is not asked of them again). `needTick`: told whether the header shows times that run to
   *        the second (starts or stops the clock that calls `tick()`). `focusQueue`: focuses the
   *        approval queue's next row other than task `taskId`'s; false when none waits.
   */
  constructor(root, deps) {
    /** The timeout that redraws a settled task's ages and countdown when they change, or 0. */
    this.ageTimer = 0;
    this.root = root;
    this.deps = deps;
    this.taskId = null;
    this.task = null;
    this.events = [];
    this.eventIds = new Set();
    this.rounds = [];
    this.cards = new Map();
    this.loadSeq = 0;
    /** Older timeline events exist on the server (not loaded). */
    this.timelineMore = false;
    /** How many of the newest events the timeline shows. */
    this.shownEvents = TIMELINE_PAGE;
    /** The pending re-read of the open task's detail (scheduleRefetch), and the retry of a
     *  failed one. */
    this.refreshTimer = null;
    this.retryTimer = null;
    this.retryMs = REFETCH_RETRY_MS;
    this.readAgain = coalesced(() => this.readDetail());
    this.timelineTimer = null;
    this.renderedOutcomeFor = null;
    this.openGroups = new Set();
    /** The questions the reader opened with "Show all" (`round:<key>`, `event:<id>`), with how
     *  far their box is scrolled: redrawn open, where they were. */
    this.openTexts = new Map();
    this.early = [];
    this.log = null;
    /** "No task selected" as index.html first shows it (its keys in <kbd>), shown again
     *  whenever no task is open: the same markup in every path. */
    this.emptyHint = (root.querySelector(':scope > .detail-empty') || h('div', { class: 'detail-empty' })).cloneNode(true);
  }

  /** Opens a task (loads its detail). */
  async open(taskId, { focus = false } = {}) {
    if (this.taskId === taskId && this.task) {
      if (focus) this.root.focus();
      return;
    }
    this.stopRefetch();
    this.taskId = taskId;
    this.task = null;
    /** True while the pane shows that the task could not be loaded (not a 404): loaded again
     *  when the connection comes back. */
    this.loadFailed = false;
    this.tick();
    this.events = [];
    this.eventIds = new Set();
    this.timelineMore = false;
    this.shownEvents = TIMELINE_PAGE;
    this.rounds = [];
    this.cards = new Map();
    this.renderedOutcomeFor = null;
    this.openGroups = new Set();
    this.openTexts = new Map();
    this.early = [];
    this.disposeLog();
    const seq = ++this.loadSeq;
    clear(this.root);
    this.root.appendChild(h('div', { class: 'detail-loading', role: 'status' }, 'Loading task…'));
    this.root.classList.add('open');
    document.body.classList.add('detail-open');
    let data;
    try {
      data = await this.deps.api.getTask(taskId);
    } catch (err) {
      if (seq !== this.loadSeq) return;
      this.loadFailed = err.status !== 404;
      clear(this.root);
      this.root.appendChild(this.closeBar());
      this.root.appendChild(
        h('div', { class: 'detail-missing' }, h('p', { class: 'detail-empty-title' }, err.status === 404 ? 'Task not found' : 'Could not load the task'), h('p', { class: 'muted' }, err.status === 404 ? 'It may have expired and been removed, or it belongs to another principal.' : err.message)),
      );
      return;
    }
    if (seq !== this.loadSeq) return;
    this.task = data.task;
    this.addEvents(data.timeline || []);
    this.timelineMore = !!data.timelineMore;
    this.rounds = data.inputRounds || [];
    this.build();
    // Changes that arrived while the detail was loading.
    const early = this.early;
    this.early = [];
    for (const change of early) this.onChange(change);
    if (focus) this.root.focus();
  }

  close() {
    this.loadSeq++;
    this.stopRefetch();
    this.taskId = null;
    this.task = null;
    this.tick();
    this.cards = new Map();
    this.disposeLog();
    this.root.classList.remove('open');
    document.body.classList.remove('detail-open');
    clear(this.root);
    this.root.appendChild(this.emptyHint.cloneNode(true));
  }

  /** Stops the output panel of the task shown before; its late answers are dropped. */
  disposeLog() {
    if (this.log) this.log.dispose();
    this.log = null;
  }

  closeBar() {
    const back = h('button', { type: 'button', class: 'btn btn-small detail-back', 'aria-label': 'Close the task detail' }, '← Back to list');
    back.addEventListener('click', () => this.deps.onClose());
    return h('div', { class: 'detail-closebar' }, back);
  }

  build() {
    const t = this.task;
    this.renderedMessage = null;
    this.renderedArgs = null;
    this.renderedTitle = null;
    clear(this.root);
    this.root.appendChild(this.closeBar());

    // Header
    this.el = {};
    // The title (an external job's name, an approval's question...), and the tool when it differs.
    // The space lets the tool go to the next line whole (styles.css keeps it in one piece).
    this.el.title = h('h2', { class: 'detail-title' });
    this.el.badge = h('span', { class: 'detail-badge' });
    this.el.cancelNote = h('span', { class: 'pill pill-warn', hidden: true }, h('span', { 'aria-hidden': 'true' }, '⏳ '), 'Cancel requested — waiting for the task to stop');
    this.el.cancelBtn = h('button', { type: 'button', class: 'btn btn-danger', 'aria-keyshortcuts': 'c' }, 'Cancel task…');
    this.el.cancelBtn.addEventListener('click', () => this.requestCancel());
    // A finished task: run its command again, or delete it.
    this.el.rerunBtn = h('button', { type: 'button', class: 'btn detail-rerun', hidden: true }, 'Run again…');
    this.el.rerunBtn.addEventListener('click', () => requestRerun(this.task));
    this.el.deleteBtn = h('button', { type: 'button', class: 'btn detail-delete', hidden: true }, 'Delete…');
    this.el.deleteBtn.addEventListener('click', () => requestDelete(this.task));
    const idCode = h('code', { class: 'task-id' }, t.taskId);
    this.el.createdAge = h('span');
    this.el.createdAt = h('span', { class: 'meta-sub' });
    this.el.created = h('span', { class: 'meta-stack' }, this.el.createdAge, this.el.createdAt);
    this.el.duration = h('span');
    this.el.updated = h('span');
    this.el.ttl = h('span');
    this.el.principal = h('span', {}, t.principal || '–');
    const meta = h(
      'dl',
      { class: 'meta' },
      h('div', { class: 'meta-item meta-wide' }, h('dt', {}, 'Task ID'), h('dd', {}, idCode, copyButton(() => t.taskId, 'Copy', 'Copy task ID'))),
      h('div', { class: 'meta-item' }, h('dt', {}, 'Principal'), h('dd', {}, this.el.principal)),
      h('div', { class: 'meta-item' }, h('dt', {}, 'Created'), h('dd', {}, this.el.created)),
      h('div', { class: 'meta-item', title: 'From the task’s creation to its end, waits for answers included (a command’s own run time is in its result)' }, h('dt', {}, 'Duration'), h('dd', {}, this.el.duration)),
      h('div', { class: 'meta-item' }, h('dt', {}, 'Last update'), h('dd', {}, this.el.updated)),
      h('div', { class: 'meta-item meta-wide' }, h('dt', {}, 'Retention'), h('dd', {}, this.el.ttl)),
    );
    this.el.progressFill = h('div', { class: 'progress-fill' });
    this.el.progressBar = h('div', { class: 'progress', role: 'progressbar', 'aria-label': 'Task progress', 'aria-valuemin': '0' }, this.el.progressFill);
    this.el.progressText = h('span', { class: 'progress-text' });
    this.el.progress = h('div', { class: 'detail-progress', hidden: true }, this.el.progressBar, this.el.progressText);
    this.el.message = h('div', { class: 'status-message', hidden: true });
    const head = h(
      'header',
      { class: 'detail-head' },
      h(
        'div',
        { class: 'detail-title-row' },
        h('div', { class: 'detail-title-wrap' }, this.el.title, h('div', { class: 'detail-status-row' }, this.el.badge, this.el.cancelNote)),
        h('div', { class: 'detail-actions' }, this.el.cancelBtn, this.el.rerunBtn, this.el.deleteBtn),
      ),
      meta,
      this.el.progress,
      this.el.message,
    );
    this.root.appendChild(head);

    // Prompts
    this.el.promptList = h('div', { class: 'prompt-list' });
    this.el.promptsNote = h('p', { class: 'muted section-note' });
    this.el.prompts = section('Input needed', this.el.promptsNote, this.el.promptList);
    this.el.prompts.classList.add('prompts-section');
    this.root.appendChild(this.el.prompts);

    // Outcome
    this.el.outcomeBody = h('div');
    this.el.outcome = section('Outcome', this.el.outcomeBody);
    this.root.appendChild(this.el.outcome);

    // Output of a command, followed live (hidden until the command has started)
    if (hasOutputLog(t)) {
      this.log = new LogView(this.deps.api, t);
      this.root.appendChild(this.log.el);
    }

    // Arguments (a call a person approved edited shows the edit: refresh() follows them)
    this.el.argsBody = h('div');
    this.root.appendChild(section('Arguments', this.el.argsBody));

    // Input rounds
    this.el.roundsBody = h('div');
    this.el.rounds = section('Input rounds', this.el.roundsBody);
    this.root.appendChild(this.el.rounds);

    // Timeline
    this.el.timelineBody = h('div');
    this.root.appendChild(section('Timeline', this.el.timelineBody));

    this.refresh();
    this.renderRounds();
    this.renderTimeline();
  }

  /** Brings the header, prompts, outcome and output in line with `this.task`. */
  refresh() {
    const t = this.task;
    if (!t || !this.el) return;
    clear(this.el.badge).appendChild(badgeEl(t, 'badge-large'));
    const terminal = isTerminal(t.status);
    this.el.cancelNote.hidden = !(t.cancelRequested && !terminal);
    this.el.cancelBtn.hidden = terminal;
    this.el.rerunBtn.hidden = !canRerun(t);
    this.el.deleteBtn.hidden = !terminal;
    this.el.cancelBtn.disabled = !!t.cancelRequested;
    this.el.cancelBtn.textContent = t.cancelRequested ? 'Cancel requested' : 'Cancel task…';
    this.el.principal.textContent = t.principal || '–';
    // The title and the arguments change when a person approves a call edited.
    const title = `${t.title || ''}\u0000${t.tool || ''}`;
    if (this.renderedTitle !== title) {
      this.renderedTitle = title;
      const toolLabel = t.title && t.tool && t.title !== t.tool ? [' ', h('span', { class: 'detail-tool muted' }, t.tool)] : null;
      clear(this.el.title).append(t.title || t.tool || 'task', ...(toolLabel || []));
    }
    const args = stringifyJson(t.arguments ?? {});
    if (this.renderedArgs !== args) {
      this.renderedArgs = args;
      clear(this.el.argsBody).appendChild(jsonBlock(t.arguments ?? {}, { copyLabel: 'arguments' }));
    }

    const frac = progressFraction(t.progress);
    if (t.progress && !terminal) {
      this.el.progress.hidden = false;
      this.el.progressBar.hidden = frac === null;
      if (frac !== null) {
        this.el.progressFill.style.width = `${(frac * 100).toFixed(1)}%`;
        this.el.progressBar.setAttribute('aria-valuenow', String(Math.round(frac * 100)));
        this.el.progressBar.setAttribute('aria-valuemax', '100');
        this.el.progressBar.setAttribute('aria-valuetext', progressText(t.progress));
      }
      this.el.progressText.textContent = [progressText(t.progress), frac !== null ? `${Math.round(frac * 100)}%` : null, t.progress.message && shownText(t.progress.message)].filter(Boolean).join(' · ');
    } else {
      this.el.progress.hidden = true;
    }
    const msg = typeof t.statusMessage === 'string' ? t.statusMessage : '';
    this.el.message.hidden = !msg;
    if (this.renderedMessage !== msg) {
      this.renderedMessage = msg;
      clear(this.el.message);
      if (msg) this.el.message.appendChild(textBlock(msg, { className: 'message-text', label: 'Status message' }));
    }

    this.syncPrompts();
    this.renderOutcome();
    // Every change of a running command may come with new output: the panel reads on.
    if (this.log) this.log.update(t);
    this.tick();
  }

  /** Ages, duration and the retention countdown; the 'detail' clock calls it every second while
   *  they run to the second (deps.needTick: the task is live, or under an hour from deletion);
   *  otherwise its own timeout, when the next of them changes. */
  tick() {
    const t = this.task;
    clearTimeout(this.ageTimer);
    this.ageTimer = 0;
    if (!t || !this.el) {
      if (this.deps.needTick) this.deps.needTick(false);
      return;
    }
    const now = Date.now();
    this.el.createdAge.textContent = formatAge(t.createdAt, now);
    this.el.createdAt.textContent = formatTimestamp(t.createdAt);
    // A live task's state is known as of when the event stream went down, if it is down.
    const down = isTerminal(t.status) ? null : state.streamDownSince;
    const ran = ranBeforeEnd(t);
    this.el.duration.textContent =
      `${formatDuration(taskDurationMs(t, Math.min(now, down ?? now)))}` +
      (isTerminal(t.status) ? '' : down === null ? ' so far' : ' so far, when Taskdeck last answered') +
      (ran === null ? '' : ` (the command ran ${formatDuration(ran)}; before that it waited to start, for approval)`);
    this.el.updated.textContent = formatAge(t.lastUpdatedAt, now);
    const removed = this.events.some((e) => e.kind === 'deleted');
    const ttl = removed ? { text: 'Removed from Taskdeck: what is shown is its last state', urgent: false } : ttlCountdown(t, now);
    this.el.ttl.textContent = ttl.text;
    this.el.ttl.classList.toggle('urgent', ttl.urgent);
    const ticking = !isTerminal(t.status) || Boolean(ttl.ticking);
    if (this.deps.needTick) this.deps.needTick(ticking);
    if (ticking) return;
    // A settled task's ages ("12m ago") and its retention countdown (to the minute) still
    // change: one timeout redraws them when the first does, at most once a second.
    let wait = Math.min(ageChangesIn(t.createdAt, now), ageChangesIn(t.lastUpdatedAt, now));
    const expires = toMs(t.expiresAt);
    if (!removed && Number.isFinite(expires) && expires > now) wait = Math.min(wait, ((expires - now) % 60_000) + 1);
    if (Number.isFinite(wait)) {
      this.ageTimer = setTimeout(() => {
        this.ageTimer = 0;
        this.tick();
      }, Math.max(wait + 20, 1000));
    }
  }

  /** Whether this page may not answer `key` (a `humanOnly` request, and not a person). The
   *  rounds come with the detail; a request that arrived since is known from its event. */
  lockedFor(key) {
    if (this.approvedAlready(key)) return true;
    if (this.deps.isHuman()) return false;
    if (this.rounds.some((r) => r.key === key && r.humanOnly)) return true;
    return this.events.some((e) => e.kind === 'inputRequested' && e.data && e.data.key === key && e.data.humanOnly === true);
  }

  /** Whether `key` asks for one more person's approval of a call this person approved already
   *  (M of N): their second Accept would not count. */
  approvedAlready(key) {
    const me = this.deps.principal && this.deps.principal();
    const request = this.task && (this.task.inputRequests || {})[key];
    const meta = request && request.params && request.params._meta && request.params._meta['taskdeck/approval'];
    return approvedBy(meta, me);
  }

  /** Whether a request this page may not answer is shown (the a/d keys say so). */
  hasLockedPrompts() {
    for (const card of this.cards.values()) if (card.locked && !card.gone) return true;
    return false;
  }

  /** Redraws the task's input-request cards; nothing to do while no task is open. */
  syncPrompts() {
    if (!this.task) return;
    const prompts = outstandingPrompts(this.task);
    const keys = new Set(prompts.map((p) => p.key));
    // A card removed with the focus in it (or just sent from: sending disables its controls,
    // which drops the focus to the page) hands the focus on (`focusNextDecision`).
    const active = document.activeElement;
    const nowhere = !active || active === document.body;
    let focusLost = false;
    for (const [key, card] of this.cards) {
      if (keys.has(key)) {
        // A request that arrived live is shown before its round (and `humanOnly`) is known.
        if (!!card.locked === this.lockedFor(key)) continue;
      } else if (!card.gone && !card.sending) this.deps.announce(`The input request “${key}” was answered or withdrawn elsewhere.`);
      if (card.el.contains(active) || (nowhere && card.sending)) focusLost = true;
      card.el.remove();
      this.cards.delete(key);
    }
    const taskId = this.task && this.task.taskId;
    for (const p of prompts) {
      if (this.cards.has(p.key)) continue;
      const why = this.approvedAlready(p.key) ? 'You approved this call already: it waits for another person to approve it.' : undefined;
      const card = this.lockedFor(p.key) ? lockedPromptCard(p, why) : promptCard(p, { send: (key, response) => this.sendAnswer(key, response), reveal: () => this.deps.api.reveal(taskId), taskId });
      this.cards.set(p.key, card);
      this.el.promptList.appendChild(card.el);
    }
    this.el.prompts.hidden = this.cards.size === 0;
    const note = this.cards.size > 0 && [...this.cards.values()].every((c) => c.locked)
      ? 'The task is waiting for the person using Taskdeck.'
      : 'The task is waiting for you. Answers are checked here before they are sent.';
    if (this.el.promptsNote.textContent !== note) this.el.promptsNote.textContent = note;
    if (focusLost) this.focusNextDecision();
  }

  /**
   * After an answered request's card left with the focus: the focus goes to what waits next
   * for this person, this task's next open request (its card), else the approval queue's row
   * (`deps.focusQueue`), else this pane.
   */
  focusNextDecision() {
    const next = this.shortcutPrompt();
    // The card itself, not its first field: `a` and `d` act on it, Tab goes into its fields.
    if (next) next.el.focus();
    else if (!(this.deps.focusQueue && this.deps.focusQueue(this.taskId))) this.root.focus({ preventScroll: true });
  }

  async sendAnswer(key, response) {
    const id = this.task.taskId;
    const params = ((this.task.inputRequests || {})[key] || {}).params || {};
    const question = typeof params.message === 'string' && params.message.trim() ? oneLine(params.message, 60) : key;
    // An approval's notice says when the call still waits for another person (formAnswerText).
    const meta = params._meta && params._meta['taskdeck/approval'];
    const r = await this.deps.api.answer(id, { [key]: response });
    const used = Boolean(r.accepted && r.accepted.includes(key));
    const verb = answerVerb(response.action, meta);
    // An approval is named as the queue names its call (its tool and command), not by its
    // question's preamble ("admin wants to run in …").
    if (meta) this.deps.toast(formAnswerText(meta, response, used), used ? 'good' : 'warn');
    else if (used) this.deps.toast(`Answer sent: ${verb} “${question}”.`, 'good');
    else this.deps.toast(`“${question}” was already answered; your answer was not used.`, 'warn');
    if (r.task && this.taskId === id) this.applyTask(r.task);
    // The answer is in the input rounds now: shown without waiting for the event stream.
    if (used && this.taskId === id) this.scheduleRefetch();
    return r;
  }

  renderOutcome() {
    const t = this.task;
    if (!isTerminal(t.status)) {
      this.el.outcome.hidden = true;
      this.renderedOutcomeFor = null;
      return;
    }
    // A terminal task does not change again, but its result or error may arrive cut to size
    // (`abridged`) in the event that ended it: it is shown once read whole.
    const cut = Array.isArray(t.abridged) && t.abridged.some((k) => k === 'result' || k === 'error');
    const shown = cut ? `${t.status} cut` : t.status;
    if (this.renderedOutcomeFor === shown) return;
    this.renderedOutcomeFor = shown;
    clear(this.el.outcomeBody);
    this.el.outcome.hidden = false;
    if (cut) this.el.outcomeBody.appendChild(h('p', { class: 'muted outcome-reading' }, 'Reading the result…'));
    else if (t.status === 'completed') {
      const { key } = statusBadge(t);
      this.el.outcomeBody.appendChild(resultView(t.result, t.taskId, { declined: key === 'completed-declined', denied: key === 'completed-denied' }));
    }
    else if (t.status === 'failed') this.el.outcomeBody.appendChild(errorView(t.error));
    else {
      this.el.outcomeBody.appendChild(
        h(
          'div',
          { class: 'outcome outcome-muted' },
          h('span', { class: 'outcome-symbol', 'aria-hidden': 'true' }, '⊘'),
          h('div', {}, h('strong', {}, 'Cancelled'), h('div', { class: 'outcome-note' }, 'The task stopped before it finished; it has no result.')),
        ),
      );
    }
  }

  /** A question asked (a round's, an event's), clamped to QUESTION_CLAMP; open when the reader
   *  had opened question `id` before this redraw (restoreOpenTexts scrolls it back). */
  questionText(id, className, text) {
    const wrap = clampedText('div', { class: className }, text, { ...QUESTION_CLAMP, open: this.openTexts.has(id) });
    wrap.dataset.textId = id;
    return wrap;
  }

  /** Notes which questions under `root` are open, and how far scrolled, before it is redrawn. */
  noteOpenTexts(root) {
    for (const wrap of root.querySelectorAll('.clamp-cut[data-text-id]')) {
      if (wrap.classList.contains('clamp-open')) this.openTexts.set(wrap.dataset.textId, wrap.firstElementChild.scrollTop);
      else this.openTexts.delete(wrap.dataset.textId);
    }
  }

  /** Scrolls the questions redrawn open under `root` back to where the reader left them. */
  restoreOpenTexts(root) {
    for (const wrap of root.querySelectorAll('.clamp-open[data-text-id]')) wrap.firstElementChild.scrollTop = this.openTexts.get(wrap.dataset.textId) || 0;
  }

  renderRounds() {
    this.noteOpenTexts(this.el.roundsBody);
    clear(this.el.roundsBody);
    this.el.rounds.hidden = this.rounds.length === 0;
    const list = h('ol', { class: 'rounds' });
    for (const r of this.rounds) {
      const d = describeRound(r);
      const when = r.state === 'answered' && r.answeredAt ? `${formatTimestamp(r.answeredAt)}` : `asked ${formatTimestamp(r.createdAt)}`;
      list.appendChild(
        h(
          'li',
          { class: `round round-${r.state}` },
          h('div', { class: 'round-head' }, this.questionText(`round:${r.key}`, 'round-title', d.title), h('span', { class: `pill pill-${r.state}` }, d.state)),
          h('div', { class: 'round-meta muted' }, `Key ${r.key} · ${when}`),
          d.answer ? textBlock(d.answer, { className: 'json', label: 'Answer content' }) : null,
        ),
      );
    }
    this.el.roundsBody.appendChild(list);
    this.restoreOpenTexts(this.el.roundsBody);
  }

  renderTimeline() {
    this.timelineTimer = null;
    if (!this.el) return;
    // Keep folded runs of reports the reader opened open across re-renders.
    for (const d of this.el.timelineBody.querySelectorAll('details[data-first]')) {
      if (d.open) this.openGroups.add(d.dataset.first);
      else this.openGroups.delete(d.dataset.first);
    }
    this.noteOpenTexts(this.el.timelineBody);
    clear(this.el.timelineBody);
    // A long-running task can have many thousands of events: only the newest are in the DOM.
    const hidden = Math.max(0, this.events.length - this.shownEvents);
    if (hidden || this.timelineMore) {
      const label = hidden ? `Show ${Math.min(hidden, TIMELINE_PAGE).toLocaleString('en-US')} earlier events (${hidden.toLocaleString('en-US')} hidden)` : 'Load earlier events';
      this.el.timelineBody.appendChild(h('button', { class: 'btn btn-small timeline-earlier', type: 'button', onclick: () => this.showEarlier() }, label));
    }
    const items = groupTimeline(hidden ? this.events.slice(hidden) : this.events);
    const list = h('ol', { class: 'timeline' });
    const approvalKeys = new Set(this.rounds.filter((r) => r.request && r.request.params && r.request.params._meta && r.request.params._meta['taskdeck/approval']).map((r) => r.key));
    const eventRow = (ev) => {
      const d = describeEvent(ev, { approvalKeys });
      return h(
        'li',
        { class: `tl tl-${d.tone}` },
        h('time', { class: 'tl-time', datetime: ev.at, title: formatTimestamp(ev.at) }, formatClock(ev.at)),
        h('span', { class: 'tl-dot', 'aria-hidden': 'true' }),
        h(
          'div',
          { class: 'tl-body' },
          h('span', { class: 'tl-title' }, d.title),
          d.detail && d.prose ? this.questionText(`event:${ev.id}`, 'tl-detail tl-prose', d.detail) : null,
          d.detail && !d.prose ? h('div', { class: 'tl-detail' }, d.detail) : null,
          d.diff ? h('ul', { class: 'tl-diff', 'aria-label': 'What the human changed' }, d.diff.map((e) => h('li', { class: `diff-${e.kind}` }, diffLine(e)))) : null,
        ),
      );
    };
    for (const item of items) {
      if (item.type === 'event') list.appendChild(eventRow(item.event));
      else {
        const first = item.events[0];
        const inner = h('ol', { class: 'timeline timeline-inner' }, item.events.map(eventRow));
        list.appendChild(
          h(
            'li',
            { class: 'tl tl-muted tl-group' },
            h('time', { class: 'tl-time', datetime: first.at }, formatClock(first.at)),
            h('span', { class: 'tl-dot', 'aria-hidden': 'true' }),
            h('details', { class: 'tl-body', dataset: { first: String(first.id) }, open: this.openGroups.has(String(first.id)) }, h('summary', {}, describeProgressRun(item.events)), inner),
          ),
        );
      }
    }
    if (!this.events.length) list.appendChild(h('li', { class: 'muted' }, 'No events yet.'));
    this.el.timelineBody.appendChild(list);
    this.restoreOpenTexts(this.el.timelineBody);
  }

  /** Adds timeline events not seen yet, keeping them in id order. */
  addEvents(events) {
    let unordered = false;
    for (const e of events) {
      if (!e) continue;
      if (this.eventIds.has(e.id)) {
        // The stream's copy cut to size (`abridged`) gives way to the timeline's whole one.
        const i = e.abridged ? -1 : this.events.findIndex((x) => x.id === e.id && x.abridged);
        if (i >= 0) this.events[i] = e;
        continue;
      }
      if (this.events.length && this.events[this.events.length - 1].id > e.id) unordered = true;
      this.eventIds.add(e.id);
      this.events.push(e);
    }
    if (unordered) this.events.sort((a, b) => a.id - b.id);
  }

  /** Shows the next page of earlier events, loading it from the server when needed. */
  async showEarlier() {
    this.shownEvents += TIMELINE_PAGE;
    if (this.events.length < this.shownEvents && this.timelineMore && this.events.length) {
      const id = this.taskId;
      try {
        const data = await this.deps.api.getTask(id, `timelineBefore=${this.events[0].id}&timelineLimit=${TIMELINE_PAGE}`);
        if (this.taskId !== id) return;
        this.addEvents(data.timeline || []);
        this.timelineMore = !!data.timelineMore;
      } catch (err) {
        this.deps.toast?.(`Could not load earlier events: ${err.message}`, 'error');
      }
    }
    this.renderTimeline();
  }

  scheduleTimeline() {
    if (this.timelineTimer) return;
    this.timelineTimer = setTimeout(() => this.renderTimeline(), 150);
  }

  /**
   * Takes a newer version of the task (from an event or an API answer). An event's members cut
   * to size (`abridged`) keep the whole ones the pane read; one it never read whole (the result
   * of a task that just ended) is read again.
   */
  applyTask(task) {
    if (!this.task || task.taskId !== this.task.taskId) return;
    if (isStale(this.task, task)) return;
    this.task = keepWhole(this.task, task);
    if (this.task.abridged) this.scheduleRefetch();
    this.refresh();
  }

  /** A live change for any task; ignored unless it is the open one. */
  onChange(change) {
    if (!change.task || change.task.taskId !== this.taskId) return;
    if (!this.task) {
      this.early.push(change);
      return;
    }
    const ev = change.event;
    // A removed task's log cannot be read any more: the output shown is its last state.
    if (ev && ev.kind === 'deleted' && this.log) this.log.dispose();
    if (ev && !this.eventIds.has(ev.id)) {
      this.addEvents([ev]);
      this.scheduleTimeline();
    }
    const ended = isTerminal(change.task.status) && !isTerminal(this.task.status);
    this.applyTask(change.task);
    // The input rounds are read again when a question changes, and once more when the task
    // ends: its last answers are then final, whatever change the pane saw or missed. An event
    // the stream cut to size is read whole with them.
    if ((ev && (ev.abridged || ['inputRequested', 'inputAnswered', 'inputSuperseded'].includes(ev.kind))) || ended) this.scheduleRefetch();
  }

  /**
   * Reads the open task's detail again, 300 ms after the first change that asks for it (its
   * input rounds are only there). The reads run one at a time, and a change during a read makes
   * one more after it: an answer that left earlier, when the question was still open, can never
   * land after a later one.
   */
  scheduleRefetch() {
    if (this.refreshTimer) return;
    this.refreshTimer = setTimeout(() => {
      this.refreshTimer = null;
      this.readAgain();
    }, 300);
  }

  /** Stops the re-reads of the task shown before (a read under way is dropped when it lands). */
  stopRefetch() {
    clearTimeout(this.refreshTimer);
    this.refreshTimer = null;
    clearTimeout(this.retryTimer);
    this.retryTimer = null;
    this.retryMs = REFETCH_RETRY_MS;
  }

  /** One read of the open task's detail (readAgain's step). */
  async readDetail() {
    const id = this.taskId;
    if (!id || !this.task) return false;
    let data;
    try {
      data = await this.deps.api.getTask(id);
    } catch (err) {
      // Tried again in a while: after the task's end no event would ask again. Gone (404): the
      // pane keeps what it shows, its `deleted` event says the rest.
      if (err.status !== 404 && this.taskId === id && !this.retryTimer) {
        this.retryTimer = setTimeout(() => {
          this.retryTimer = null;
          if (this.taskId === id) this.scheduleRefetch();
        }, this.retryMs);
        this.retryMs = Math.min(this.retryMs * 2, REFETCH_RETRY_MAX_MS);
      }
      return false;
    }
    this.retryMs = REFETCH_RETRY_MS;
    if (this.taskId !== id || !this.el || !this.task) return false;
    this.rounds = data.inputRounds || [];
    this.renderRounds();
    this.syncPrompts();
    this.addEvents(data.timeline || []);
    this.scheduleTimeline();
    this.applyTask(data.task);
    return false;
  }

  async requestCancel() {
    if (!this.task || isTerminal(this.task.status) || this.task.cancelRequested) return;
    const t = await this.deps.requestCancel(this.task);
    if (t) this.applyTask(t);
  }

  /** The prompt the a/d shortcuts act on: the one holding focus, else the first still open. */
  shortcutPrompt() {
    const active = document.activeElement;
    for (const card of this.cards.values()) if (!card.gone && !card.locked && card.el.contains(active)) return card;
    for (const card of this.cards.values()) if (!card.gone && !card.locked) return card;
    return null;
  }

}
