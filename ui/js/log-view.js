// The Output section of the detail pane: the output log (GET /v1/tasks/{id}/log) of a command
// task, of an external job whose runner reports its output (`taskdeck run`), or of a gateway
// call whose upstream logs (its `notifications/message`),
// followed live without a timer. The panel reads on from where it stopped whenever the task
// changes (each new output line changes its statusMessage, which the event stream brings), and
// once more when the task ends, until the server says the log is complete. Before the command
// starts the server answers `exists: false` (an empty log, not an error): the panel stays hidden
// and asks again on the next change. Earlier output loads on request; at most MAX_KEPT_BYTES
// stay on the page, the oldest going first. The output comes from untrusted commands: it only
// ever goes in as text nodes.

import { h, section } from './dom.js';
import { formatBytes, isTerminal, shownText } from './format.js';
import { coalesced } from './coalesced.js';

/** Bytes from the end of the log read when the panel opens. */
export const TAIL_BYTES = 64 * 1024;
/** Bytes one "Show earlier output" loads. */
export const EARLIER_BYTES = 64 * 1024;
/** Most bytes one live read asks for (it reads again at once while more is waiting). */
export const READ_BYTES = 256 * 1024;
/** Most output kept on the page. */
export const MAX_KEPT_BYTES = 1024 * 1024;
/** Least room under the cap worth a "Show earlier output" that cannot reach the log's start. */
export const MIN_EARLIER_BYTES = 4 * 1024;
/** Live reads are added to the last span while it stays this small (fewer, larger text nodes). */
export const MERGE_BYTES = 64 * 1024;

/**
 * @typedef {{offset: number, end: number}} Span bytes `offset..end` of the log. The spans on
 *   screen are contiguous, one text node each.
 * @typedef {{offset: number, end: number, text: string}} Piece a span as read, with its text
 *   (the server replaces invalid UTF-8)
 */

/**
 * Only run_command tasks, external jobs (whose runner may report output: `taskdeck run` does)
 * and gateway calls (`server__tool`, whose upstream may log) have an output log; the server
 * answers 404 for the others.
 */
export function hasOutputLog(task) {
  return !!task && (task.tool === 'run_command' || task.tool === 'external' || String(task.tool).includes('__'));
}

/**
 * `text` as a terminal shows it: each line redrawn with `\r` (a progress bar) shows its
 * drawings one over the other, a later one writing over the start of the one before, so a
 * short drawing over a long line leaves that line's end in sight, as on a terminal
 * (`ERROR: 3 tests FAILED\rOK` reads `OKROR: 3 tests FAILED`, not `OK`); a `\r` that ends the
 * line redraws nothing. The log keeps every drawing; only what is shown changes, so the
 * pieces' byte offsets stay exact. Characters that reorder or hide text are written out
 * (`\u{202e}`), as everywhere in the page.
 * @param {string} text
 */
export function asDrawn(text) {
  if (!text.includes('\r')) return shownText(text);
  // The redraws first: what is left holds no carriage return for shownText to write out.
  const drawn = text
    .split('\n')
    .map((line) => line.split('\r').reduce((shown, drawing) => drawing + shown.slice(drawing.length), ''))
    .join('\n');
  return shownText(drawn);
}

/** A log answer `{offset, nextOffset, text}` as a piece. */
export function pieceOf(answer) {
  return { offset: answer.offset, end: answer.nextOffset, text: String(answer.text ?? '') };
}

const utf8 = new TextEncoder();

/**
 * A piece read from an arbitrary offset usually starts inside a line (or a character): this
 * drops that partial line, so the view starts at a line start and the next earlier read ends at
 * one (the server cuts a range at its last line end). Offsets must stay exact, and text only
 * gives byte counts where no bytes were replaced (U+FFFD): the line start is counted from the
 * piece's start when the partial line is clean, else back from its end when the rest is (a
 * newline always starts a fresh character, so the rest decodes the same however the piece
 * began). The piece stays as it is when it starts the log, when nothing would be left, or when
 * neither side is clean.
 * @param {Piece} piece
 * @returns {Piece}
 */
export function fromLineStart(piece) {
  if (piece.offset === 0) return piece;
  const nl = piece.text.indexOf('\n');
  if (nl < 0 || nl === piece.text.length - 1) return piece;
  const partial = piece.text.slice(0, nl + 1);
  const rest = piece.text.slice(nl + 1);
  let offset;
  if (!partial.includes('\uFFFD')) offset = piece.offset + utf8.encode(partial).length;
  else if (!rest.includes('\uFFFD')) offset = piece.end - utf8.encode(rest).length;
  else return piece;
  return { offset, end: piece.end, text: rest };
}

/**
 * Reads the output right before `first` (a range from earlierRange). The server cuts a range at
 * its last line end, so when `first` is inside a line the rest of that line (it has no line end,
 * so it is not cut) takes a second read. The partial line the range starts with is dropped.
 * @param {(range: object) => Promise<object>} read one log read, e.g. api.taskLog for a task
 * @returns {Promise<Piece>} ending at `first`
 */
export async function readEarlier(read, first, range) {
  let piece = pieceOf(await read(range));
  while (piece.end < first) {
    const rest = pieceOf(await read({ offset: piece.end, limit: first - piece.end }));
    if (rest.offset !== piece.end || rest.end <= rest.offset) throw new Error('the log did not answer the range asked for');
    piece = { offset: piece.offset, end: rest.end, text: piece.text + rest.text };
  }
  if (piece.end !== first) throw new Error('the log did not answer the range asked for');
  return fromLineStart(piece);
}

/** Bytes of the log the spans cover. */
export function keptBytes(spans) {
  return spans.length ? spans[spans.length - 1].end - spans[0].offset : 0;
}

/**
 * Adds a span read live after the last one; it is merged into the last span while that stays
 * within `mergeBytes`. Returns a new list (the same list for an empty span): one longer when
 * the span was added, as long when it was merged.
 * @param {Span[]} spans
 * @param {Span} span must start where the last one ends
 * @returns {Span[]}
 */
export function appendSpan(spans, span, mergeBytes = MERGE_BYTES) {
  if (span.end <= span.offset) return spans;
  const last = spans[spans.length - 1];
  if (last && last.end !== span.offset) throw new RangeError(`output read at ${span.offset} does not follow the output ending at ${last.end}`);
  if (last && span.end - last.offset <= mergeBytes) return [...spans.slice(0, -1), { offset: last.offset, end: span.end }];
  return [...spans, { offset: span.offset, end: span.end }];
}

/**
 * Drops the oldest spans until the rest fit in `cap` bytes; the newest span always stays.
 * @param {Span[]} spans
 * @returns {{spans: Span[], dropped: number}} `dropped`: how many spans left the front
 */
export function trimSpans(spans, cap = MAX_KEPT_BYTES) {
  let dropped = 0;
  while (dropped < spans.length - 1 && spans[spans.length - 1].end - spans[dropped].offset > cap) dropped++;
  return { spans: dropped ? spans.slice(dropped) : spans, dropped };
}

/**
 * The range "Show earlier output" reads: up to `chunk` bytes right before `first`, no more than
 * the cap leaves room for, and nothing before `start`, where the log's kept output begins (a
 * command that wrote more than the log keeps has its oldest output dropped: the answer's
 * `keptFrom`). Null when nothing comes before, or when the room left is too small to be worth
 * it (a sliver that starts inside a line) and the rest would not fit anyway.
 * @returns {{offset: number, limit: number}|null}
 */
export function earlierRange(first, kept, { chunk = EARLIER_BYTES, cap = MAX_KEPT_BYTES, min = MIN_EARLIER_BYTES, start = 0 } = {}) {
  const room = cap - kept;
  const before = first - start;
  if (!(before > 0) || room <= 0 || (before > room && room < min)) return null;
  const limit = Math.min(chunk, before, room);
  return { offset: first - limit, limit };
}

/**
 * What the line above the output says about the output before it: null when the view starts
 * at the log's start; `canLoad` when "Show earlier output" can bring it in. `start`: where the
 * log's kept output begins (see earlierRange).
 * @returns {{canLoad: boolean, text: string}|null}
 */
export function earlierNote(first, kept, cap = MAX_KEPT_BYTES, start = 0) {
  if (!(first > start)) {
    return start > 0 ? { canLoad: false, text: `${formatBytes(start)} of earlier output no longer kept: the log keeps the latest 16 MB.` } : null;
  }
  if (earlierRange(first, kept, { cap, start })) return { canLoad: true, text: `${formatBytes(first - start)} before this` };
  return { canLoad: false, text: `${formatBytes(first)} of earlier output not shown: this page keeps the last ${formatBytes(cap)}.` };
}

/**
 * The status line under the output.
 * @param {{complete: boolean, terminal: boolean, size: number}} s
 * @returns {{state: 'live'|'ending'|'complete', text: string}}
 */
export function statusLine({ complete, terminal, size }) {
  if (complete) return { state: 'complete', text: `Output complete · ${size > 0 ? formatBytes(size) : 'no output'}` };
  if (terminal) return { state: 'ending', text: 'Reading the rest of the output…' };
  return { state: 'live', text: `Live · ${size > 0 ? `${formatBytes(size)} so far` : 'no output yet'}` };
}

/** True when a scroller shows its end (within `slack` pixels): new output then keeps it there. */
export function atBottom({ scrollTop, scrollHeight, clientHeight }, slack = 4) {
  return scrollHeight - scrollTop - clientHeight <= slack;
}

export class LogView {
  /**
   * The Output section of one command task; hidden until its log exists. Call update(task) with
   * every newer version of the task, and dispose() when the task is no longer shown.
   * @param {{taskLog: (id: string, range: object) => Promise<object>}} api
   * @param {object} task
   */
  constructor(api, task) {
    this.api = api;
    this.taskId = task.taskId;
    this.task = task;
    /** @type {Span[]} the output on screen, one text node each in `pre` */
    this.spans = [];
    this.next = 0; // where the next live read starts
    // The log's last line, still open (no newline yet), as read and as shown: a progress bar
    // redraws it with `\r` across reads, so each read draws it again with what came.
    this.open = '';
    this.openShown = 0;
    this.size = 0; // the log's size at the last answer
    this.keptFrom = 0; // where its kept output begins (the oldest is dropped past 16 MiB)
    this.found = false; // the log exists
    this.complete = false;
    this.gone = false; // nothing more will come (complete, the command never ran, or the log went)
    this.error = null; // of the live reads
    this.earlierError = null;
    this.loadingEarlier = false;
    this.disposed = false;
    this.pump = coalesced(() => this.readNext());

    this.pre = h('pre', { class: 'log-output', tabindex: 0, role: 'log', 'aria-live': 'off', 'aria-label': 'Command output', hidden: true });
    this.earlierBtn = h('button', { type: 'button', class: 'btn btn-small' }, 'Show earlier output');
    this.earlierBtn.addEventListener('click', () => this.loadEarlier());
    this.earlierText = h('span', { class: 'muted' });
    this.earlierErrorText = h('span', { class: 'log-error', hidden: true });
    this.earlierRow = h('div', { class: 'log-earlier', hidden: true }, this.earlierBtn, this.earlierText, this.earlierErrorText);
    this.stateText = h('span', { class: 'log-state' });
    this.errorText = h('span', { class: 'log-error', hidden: true });
    this.retryBtn = h('button', { type: 'button', class: 'btn btn-small', hidden: true }, 'Try again');
    this.retryBtn.addEventListener('click', () => this.pump());
    this.status = h('div', { class: 'log-status' }, h('span', { class: 'log-dot', 'aria-hidden': 'true' }), this.stateText, this.errorText, this.retryBtn);
    this.el = section('Output', this.earlierRow, this.pre, this.status);
    this.el.classList.add('log-section');
    this.el.hidden = true;
  }

  /** Where the output on screen starts in the log. */
  get first() {
    return this.spans.length ? this.spans[0].offset : this.next;
  }

  /** A newer version of the task: read what it wrote since (a no-op once the log is complete). */
  update(task) {
    if (this.disposed || task.taskId !== this.taskId) return;
    this.task = task;
    if (this.gone) return;
    // A command waiting for its approval has not started: it has no log yet.
    if (!this.found && task.status === 'input_required' && task.tool === 'run_command') return;
    this.pump();
  }

  /** Stops following: answers that arrive later are dropped. */
  dispose() {
    this.disposed = true;
  }

  /** One read: the tail at first, then on from `next`. Resolves true when more is waiting. */
  async readNext() {
    if (this.disposed || this.gone) return false;
    const terminal = isTerminal(this.task.status);
    const range = this.found ? { offset: this.next, limit: READ_BYTES } : { tail: TAIL_BYTES };
    let answer;
    try {
      answer = await this.api.taskLog(this.taskId, range);
    } catch (err) {
      if (this.disposed) return false;
      if (err && err.status === 404) {
        // The task itself is gone (removed, or no longer visible to this page).
        this.error = this.found ? 'The output log is no longer available.' : null;
        this.gone = true;
      } else this.error = `Could not read the output: ${(err && err.message) || err}`;
      this.render();
      return false;
    }
    if (this.disposed) return false;
    if (answer.exists === false) {
      // No log file: the command has not started yet (it starts once approved; the next change
      // of the task asks again), or never will once the task has ended (declined, cancelled).
      if (this.found) this.error = 'The output log is no longer available.';
      else this.error = null;
      this.gone = this.found || answer.complete === true || terminal;
      this.render();
      return false;
    }
    const piece = pieceOf(answer);
    this.error = null;
    this.size = answer.size;
    this.keptFrom = Number(answer.keptFrom) || 0;
    if (this.found && piece.offset !== this.next) {
      // Not where this view left off (the log was replaced): start again from its end.
      this.reset();
      return true;
    }
    const follow = this.pre.hidden || atBottom(this.pre);
    this.found = true;
    this.add(piece);
    this.complete = answer.complete === true;
    this.gone = this.complete;
    this.render();
    if (follow) this.pre.scrollTop = this.pre.scrollHeight;
    return !this.complete && piece.end > piece.offset && answer.nextOffset < answer.size;
  }

  /**
   * Appends a piece read live, then drops the oldest output beyond the cap. The line left open
   * by the reads before (a progress bar's drawings) is drawn again with the piece, so a `\r`
   * that came in a later read writes over it, as on a terminal.
   */
  add(piece) {
    this.next = piece.end;
    const spans = appendSpan(this.spans, piece);
    if (spans === this.spans) return;
    const raw = this.open + piece.text;
    const lineEnd = raw.lastIndexOf('\n') + 1;
    const open = raw.slice(lineEnd);
    const openShown = asDrawn(open);
    const shown = asDrawn(raw.slice(0, lineEnd)) + openShown;
    const last = this.pre.lastChild;
    if (this.openShown && last) last.deleteData(last.length - this.openShown, this.openShown);
    this.open = open;
    this.openShown = openShown.length;
    if (spans.length === this.spans.length) this.pre.lastChild.appendData(shown);
    else this.pre.appendChild(document.createTextNode(shown));
    this.spans = spans;
    const trimmed = trimSpans(spans);
    if (!trimmed.dropped) return;
    // Keep the lines the reader looks at in place (the browser's scroll anchoring is off here).
    const height = this.pre.scrollHeight;
    for (let i = 0; i < trimmed.dropped; i++) this.pre.firstChild.remove();
    this.spans = trimmed.spans;
    this.pre.scrollTop -= height - this.pre.scrollHeight;
  }

  reset() {
    this.spans = [];
    this.open = '';
    this.openShown = 0;
    this.pre.replaceChildren();
    this.next = 0;
    this.found = false;
  }

  /** "Show earlier output": the range before the first span, prepended in place. */
  async loadEarlier() {
    const first = this.first;
    const range = earlierRange(first, keptBytes(this.spans), { start: this.keptFrom });
    if (!range || this.loadingEarlier || this.disposed) return;
    this.loadingEarlier = true;
    this.render();
    try {
      const piece = await readEarlier((r) => this.api.taskLog(this.taskId, r), first, range);
      // Dropped when the view moved on meanwhile (closed, or trimmed by new output).
      if (this.disposed || this.first !== first) return;
      this.prepend(piece);
      this.earlierError = null;
    } catch (err) {
      if (!this.disposed) this.earlierError = `Could not read it: ${(err && err.message) || err}`;
    } finally {
      this.loadingEarlier = false;
      if (!this.disposed) {
        const hadFocus = document.activeElement === this.earlierBtn;
        this.render();
        if (hadFocus && this.earlierRow.hidden) this.pre.focus();
      }
    }
  }

  prepend(piece) {
    if (piece.end <= piece.offset) return;
    // What the reader looks at stays in place; the earlier lines are above it.
    const top = this.pre.scrollTop;
    const height = this.pre.scrollHeight;
    this.pre.insertBefore(document.createTextNode(asDrawn(piece.text)), this.pre.firstChild);
    this.spans = [{ offset: piece.offset, end: piece.end }, ...this.spans];
    this.pre.scrollTop = top + (this.pre.scrollHeight - height);
  }

  render() {
    this.el.hidden = !this.found && !this.error;
    this.pre.hidden = this.spans.length === 0;
    const note = earlierNote(this.first, keptBytes(this.spans), MAX_KEPT_BYTES, this.keptFrom);
    this.earlierRow.hidden = !note;
    if (note) {
      this.earlierBtn.hidden = !note.canLoad;
      // Not `disabled`: the button keeps keyboard focus while it loads.
      this.earlierBtn.setAttribute('aria-disabled', String(this.loadingEarlier));
      this.earlierBtn.textContent = this.loadingEarlier ? 'Loading earlier output…' : 'Show earlier output';
      this.earlierText.textContent = note.text;
      this.earlierErrorText.hidden = !this.earlierError;
      this.earlierErrorText.textContent = this.earlierError || '';
    }
    const line = statusLine({ complete: this.complete, terminal: isTerminal(this.task.status), size: this.size });
    this.status.dataset.state = this.found ? line.state : 'none';
    this.stateText.hidden = !this.found;
    this.stateText.textContent = line.text;
    this.errorText.hidden = !this.error;
    this.errorText.textContent = this.error || '';
    this.retryBtn.hidden = !this.error || this.gone;
  }
}
