// The virtualized task list: only the rows in view (plus a few) exist in the DOM, recycled
// as the list scrolls, so 100,000 tasks scroll as smoothly as 10. Rows have a fixed height.
// Keyboard: the grid keeps an "active" row (j/k), exposed with aria-activedescendant.

import { h } from './dom.js';
import { statusBadge } from './status.js';
import { ageChangesIn, formatAge, rowDuration, isTerminal, progressFraction, progressText, shortId, oneLine, argsSummary } from './format.js';
import { outstandingPrompts } from './tasks-model.js';

export const ROW_HEIGHT = 64;
const OVERSCAN = 8;

/**
 * The list learns of scrolling from the container's `scroll` events (the browser sends one
 * before the next frame); until the first one it takes the top as 0 without reading layout.
 */
export class ListView {
  /**
   * @param {HTMLElement} container the scrolling grid element
   * @param {HTMLElement} spacer its child whose height is rows × ROW_HEIGHT
   * @param {import('./tasks-model.js').TaskList} model
   * @param {{onOpen: (index: number, how: {focus: boolean}) => void, onToggle: (index: number, shift: boolean) => void,
   *          isSelected: (taskId: string) => boolean, openTaskId: () => string|null, onNearEnd: () => void,
   *          schedule?: () => void, needTick?: (on: boolean) => void, downSince?: () => number|null}} deps
   *          `downSince`: when the event stream went down (ms), or null: a live row's time stops there.
   *          `schedule`, when given, asks
   *          for the page's one frame callback (which calls `render()` before its other writes) instead
   *          of a frame of the list's own: two renders in one frame would make the second read the
   *          geometry after the first's writes, a forced layout. `needTick`, told after each render
   *          whether a row drawn is live (working, input_required: its times run), starts or stops
   *          the clock that calls `tick()`.
   */
  constructor(container, spacer, model, deps) {
    this.container = container;
    this.spacer = spacer;
    this.model = model;
    this.deps = deps;
    this.pool = [];
    this.active = -1;
    this.activeId = null;
    this.frame = 0;
    /** The pending `onNearEnd` call (a timer id), or 0. */
    this.nearEndTimer = 0;
    this.renderedVersion = -1;
    this.tickCount = 0;
    /** The timeout that redraws the finished rows' ages when the next one changes, or 0; when
     *  it last ran (ms since the epoch). */
    this.ageTimer = 0;
    this.agedAt = 0;
    /** Whether the list may be away from the top (set by every scroll and by our own scrollTop
     *  writes, cleared by resetScroll): while false, render() takes the top as 0 without reading it. */
    this.maybeScrolled = false;
    container.addEventListener(
      'scroll',
      () => {
        this.maybeScrolled = true;
        this.schedule();
      },
      { passive: true },
    );
    /** The list's height in px as of the last layout (0 until the ResizeObserver reports). */
    this.viewHeight = 0;
    if (typeof ResizeObserver !== 'undefined') {
      new ResizeObserver(() => {
        // Layout has just run: reading the height here costs nothing.
        this.viewHeight = container.clientHeight;
        this.schedule();
      }).observe(container);
    }
    container.addEventListener('click', (e) => this.onClick(e));
    container.addEventListener('focus', () => {
      // First focus (a click or Tab): highlight the first row in view, without scrolling.
      if (this.active < 0 && this.model.length) this.setActive(Math.floor(this.container.scrollTop / ROW_HEIGHT), { scroll: false });
      this.updateActiveDescendant();
    });
  }

  /**
   * Notes which task is at the top of the view, so that rows inserted or removed above it
   * (live changes) do not make what the reader is looking at jump. At the very top nothing
   * is kept: new tasks should appear there.
   */
  captureAnchor() {
    const top = this.container.scrollTop;
    if (top <= 0) return null;
    const index = Math.floor(top / ROW_HEIGHT);
    const entry = this.model.at(index);
    return entry ? { id: entry.id, offset: top - index * ROW_HEIGHT } : null;
  }

  restoreAnchor(anchor) {
    if (!anchor) return;
    const index = this.model.indexOf(anchor.id);
    if (index < 0) return;
    this.spacer.style.height = `${this.model.length * ROW_HEIGHT}px`;
    const top = index * ROW_HEIGHT + anchor.offset;
    if (this.container.scrollTop !== top) {
      this.container.scrollTop = top;
      this.maybeScrolled = true;
    }
  }

  schedule() {
    if (this.deps.schedule) {
      this.deps.schedule();
      return;
    }
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      this.render();
    });
  }

  /** Keeps the active row on the same task when rows are inserted or removed above it. */
  reanchorActive() {
    if (!this.activeId) return;
    const i = this.model.indexOf(this.activeId);
    if (i >= 0) this.active = i;
    else this.active = Math.min(this.active, this.model.length - 1);
  }

  render() {
    const m = this.model;
    const n = m.length;
    // Read the geometry before writing anything: a read after a write forces a layout in the
    // middle of the frame (the browser lays out again after this function anyway). A list that
    // never left the top is at 0, and the height is the last layout's, so the usual frame (and
    // the first one, where the whole page is still to be laid out) reads no layout at all.
    let top = this.maybeScrolled ? this.container.scrollTop : 0;
    const height = this.viewHeight || globalThis.innerHeight || 600;
    const rowCount = String(n);
    if (this.container.getAttribute('aria-rowcount') !== rowCount) this.container.setAttribute('aria-rowcount', rowCount);
    const spacerHeight = n * ROW_HEIGHT;
    if (this.spacer.style.height !== `${spacerHeight}px`) {
      this.spacer.style.height = `${spacerHeight}px`;
      // A shorter list may pull the scroll position back: only then is it read again.
      if (this.maybeScrolled && top + height > spacerHeight) top = this.container.scrollTop;
    }
    // Until the first layout has told the list's height (the page's first rows), only the rows
    // the window can show are drawn: the ResizeObserver's report, right after that frame, asks
    // for the frame that adds the rows beyond the view.
    const overscan = this.viewHeight ? OVERSCAN : 0;
    const first = Math.max(0, Math.floor(top / ROW_HEIGHT) - overscan);
    const last = Math.min(n - 1, Math.ceil((top + height) / ROW_HEIGHT) + overscan);
    // A row keeps its task while that task stays in range: scrolling, or a task inserted above,
    // only moves it (a transform). Only rows that come into range are filled, so a frame costs
    // a few rows' worth of DOM writes instead of every row's.
    const wanted = new Set();
    for (let i = first; i <= last; i++) wanted.add(m.at(i).id);
    const kept = new Map();
    const free = [];
    for (const row of this.pool) {
      if (row.key !== null && wanted.has(row.key) && !kept.has(row.key)) kept.set(row.key, row);
      else free.push(row);
    }
    free.reverse(); // reuse in slot order (pop takes the lowest slot first)
    const now = Date.now();
    let live = false;
    /** When the first drawn finished row's age text changes (ms from now). */
    let nextAge = Infinity;
    for (let index = first; index <= last; index++) {
      const entry = m.at(index);
      if (!isTerminal(entry.task.status)) live = true;
      else nextAge = Math.min(nextAge, ageChangesIn(entry.task.createdAt, now));
      let row = kept.get(entry.id);
      if (!row) {
        row = free.pop();
        if (!row) {
          row = this.makeRow(this.pool.length);
          this.pool.push(row);
        }
        row.key = entry.id;
      }
      if (row.el.hidden) row.el.hidden = false;
      this.fillRow(row, index, entry.task, now);
    }
    for (const row of free) {
      if (!row.el.hidden) row.el.hidden = true;
      row.index = -1;
      row.key = null;
    }
    this.updateActiveDescendant();
    this.renderedVersion = m.version;
    // Only a live row's times run (a finished row's duration is fixed): with none drawn, the
    // clock stops. A row scrolled into view is drawn with the time of its render.
    if (this.deps.needTick) this.deps.needTick(live);
    // With no live row the clock stops, but the finished rows' ages ("12m ago") still change:
    // one timeout redraws them when the first of them does (each second for a minute-old task,
    // then each minute, hour, day), at most once a second (rows whose seconds turn at other
    // moments wait for the next one), and none is set while the clock runs.
    clearTimeout(this.ageTimer);
    this.ageTimer = 0;
    if (!live && Number.isFinite(nextAge)) {
      const wait = Math.max(nextAge + 20, this.agedAt + 1000 - now);
      // Drawn from the timeout itself (at most once a second, so no frame to share): the only
      // wake-up an idle page has.
      this.ageTimer = setTimeout(() => {
        this.ageTimer = 0;
        this.agedAt = Date.now();
        this.tickCount++;
        this.render();
      }, wait);
    }
    // The next page is asked for after this frame is drawn, not inside it.
    if (n && m.nextCursor && last >= n - 40 && !this.nearEndTimer) {
      this.nearEndTimer = setTimeout(() => {
        this.nearEndTimer = 0;
        this.deps.onNearEnd();
      }, 0);
    }
  }

  makeRow(slot) {
    // key: the id of the task the row shows (null when unused).
    const r = { key: null, index: -1, task: null, tick: -1, selected: null };
    r.cb = h('input', { type: 'checkbox', class: 'row-check', tabindex: -1 });
    r.badgeSym = h('span', { class: 'badge-symbol', 'aria-hidden': 'true' });
    r.badgeText = h('span', { class: 'badge-text' });
    r.badge = h('span', { class: 'badge' }, r.badgeSym, r.badgeText);
    r.progFill = h('span', { class: 'progress-fill' });
    r.prog = h('span', { class: 'progress progress-small', 'aria-hidden': 'true' }, r.progFill);
    r.progText = h('span', { class: 'row-progress-text' });
    r.progWrap = h('span', { class: 'row-progress', hidden: true }, r.prog, r.progText);
    r.tool = h('span', { class: 'row-tool' });
    r.toolName = h('span', { class: 'row-toolname', hidden: true });
    r.principal = h('span', { class: 'row-principal' });
    r.cancel = h('span', { class: 'row-flag', hidden: true }, 'cancel requested');
    r.id = h('span', { class: 'row-id' });
    r.msg = h('span', { class: 'row-msg' });
    r.age = h('span', { class: 'row-age' });
    r.dur = h('span', { class: 'row-dur' });
    // The first line: the title, then what ran it and whose it is (the tool, the principal,
    // "cancel requested"), which keep their room (styles.css .row-keep): a long title is what
    // is cut. The short id takes what the whole title leaves (.row-labels) and drops out of view
    // before the title loses a letter. The status, progress and message share the second line.
    r.el = h(
      'div',
      { class: 'row', role: 'row', id: `task-row-slot-${slot}` },
      h('span', { class: 'cell cell-check', role: 'gridcell' }, r.cb),
      h('span', { class: 'cell cell-main', role: 'gridcell' }, r.tool, h('span', { class: 'row-keep' }, r.cancel, r.toolName, r.principal), h('span', { class: 'row-labels' }, r.id)),
      h('span', { class: 'cell cell-status', role: 'gridcell' }, r.badge, r.progWrap, r.msg),
      h('span', { class: 'cell cell-time', role: 'gridcell' }, r.age, r.dur),
    );
    r.el.dataset.slot = String(slot);
    this.spacer.appendChild(r.el);
    return r;
  }

  fillRow(r, index, t, now) {
    if (r.index !== index) {
      r.index = index;
      r.el.style.transform = `translateY(${index * ROW_HEIGHT}px)`;
      r.el.setAttribute('aria-rowindex', String(index + 1));
    }
    const selected = this.deps.isSelected(t.taskId);
    const isActive = index === this.active;
    const isOpen = this.deps.openTaskId() === t.taskId;
    r.el.classList.toggle('active', isActive);
    r.el.classList.toggle('open', isOpen);
    r.el.classList.toggle('selected', selected);
    if (r.selected !== selected) {
      r.selected = selected;
      r.el.setAttribute('aria-selected', String(selected));
    }
    if (r.cb.checked !== selected) r.cb.checked = selected;
    // The text depends only on the task; the times (and the label that names the age) also on
    // the clock, re-read on each tick, and written only when their text changed.
    if (r.task !== t) {
      r.task = t;
      r.tick = -1;
      const b = statusBadge(t);
      r.badge.className = `badge badge-${b.key}`;
      r.badgeSym.textContent = b.symbol;
      r.badgeText.textContent = b.label;
      const frac = progressFraction(t.progress);
      const showProg = frac !== null && !isTerminal(t.status);
      r.prog.hidden = !showProg;
      if (showProg) r.progFill.style.width = `${(frac * 100).toFixed(1)}%`;
      // Big numbers are shortened ("1.2M / 98.8M") to fit the row; the tooltip has them whole.
      const full = t.progress && !isTerminal(t.status) ? progressText(t.progress) : '';
      r.progText.textContent = full && progressText(t.progress, { compact: true });
      r.progWrap.title = r.progText.textContent === full ? '' : full;
      r.progWrap.hidden = !showProg && !r.progText.textContent;
      // The title (an external job's name, an approval's question...); the tool beside it when
      // the title is something else.
      r.tool.textContent = oneLine(t.title || t.tool || '(unknown tool)', 200);
      r.tool.title = r.tool.textContent;
      r.toolName.textContent = t.title && t.tool && t.title !== t.tool ? t.tool : '';
      r.toolName.hidden = !r.toolName.textContent;
      r.principal.textContent = t.principal || '';
      r.cancel.hidden = !(t.cancelRequested && !isTerminal(t.status));
      r.id.textContent = shortId(t.taskId);
      r.id.title = t.taskId;
      const msg = rowMessage(t);
      r.msg.textContent = oneLine(msg, 240);
      r.msg.title = oneLine(msg, 1000);
      const name = oneLine(t.title || t.tool || 'task', 120);
      r.cb.setAttribute('aria-label', `Select ${name} ${shortId(t.taskId)}`);
      r.labelHead = `${b.label}: ${name} ${shortId(t.taskId)}${t.principal ? `, by ${t.principal}` : ''}, started `;
      r.labelTail = msg ? `. ${oneLine(msg, 120)}` : '';
      r.labelAge = null;
    }
    if (r.tick !== this.tickCount) {
      r.tick = this.tickCount;
      const age = formatAge(t.createdAt, now);
      // A live task's state is known as of when the stream went down, if it is down.
      const { text: dur, title: durTitle } = rowDuration(t, Math.min(now, (this.deps.downSince && this.deps.downSince()) ?? now));
      if (r.dur.title !== durTitle) r.dur.title = durTitle;
      if (r.age.textContent !== age) r.age.textContent = age;
      if (r.labelAge !== age) {
        r.labelAge = age;
        r.el.setAttribute('aria-label', r.labelHead + age + r.labelTail);
      }
      if (r.dur.textContent !== dur) r.dur.textContent = dur;
    }
  }

  /** Re-renders ages and durations (the 'list' clock calls it every second while a row drawn
   *  is live). */
  tick() {
    this.tickCount++;
    this.schedule();
  }

  rowIndexFromEvent(e) {
    const rowEl = e.target instanceof Element ? e.target.closest('.row') : null;
    if (!rowEl) return -1;
    const r = this.pool[Number(rowEl.dataset.slot)];
    return r ? r.index : -1;
  }

  onClick(e) {
    const index = this.rowIndexFromEvent(e);
    if (index < 0) return;
    if (e.target.classList.contains('row-check')) {
      e.stopPropagation();
      this.setActive(index, { scroll: false });
      this.deps.onToggle(index, e.shiftKey);
      return;
    }
    this.setActive(index, { scroll: false });
    this.container.focus({ preventScroll: true });
    this.deps.onOpen(index, { focus: false });
  }

  setActive(index, { scroll = true } = {}) {
    const n = this.model.length;
    if (!n) {
      this.active = -1;
      this.activeId = null;
      return;
    }
    this.active = Math.max(0, Math.min(n - 1, index));
    this.activeId = this.model.at(this.active).id;
    if (scroll) this.scrollToIndex(this.active);
    this.render();
  }

  /**
   * Puts the active row on task `taskId` (the one just opened): at once when its row is loaded,
   * else when it arrives (reanchorActive finds it); meanwhile no row is active, so the cursor is
   * never left on another task.
   */
  activateTask(taskId) {
    const index = this.model.indexOf(taskId);
    if (index >= 0) {
      this.setActive(index);
      return;
    }
    this.active = -1;
    this.activeId = taskId;
    this.render();
  }

  move(delta) {
    this.setActive(this.active < 0 ? 0 : this.active + delta);
  }

  scrollToIndex(index) {
    const top = index * ROW_HEIGHT;
    // What floats over the foot of the list (the selection bar) is the CSS scroll-padding.
    const view = this.container.clientHeight - (parseFloat(getComputedStyle(this.container).scrollPaddingBottom) || 0);
    if (top < this.container.scrollTop) this.container.scrollTop = top;
    else if (top + ROW_HEIGHT > this.container.scrollTop + view) this.container.scrollTop = top + ROW_HEIGHT - view;
    else return;
    this.maybeScrolled = true;
  }

  updateActiveDescendant() {
    const r = this.pool.find((p) => p.index === this.active && this.active >= 0);
    if (r) this.container.setAttribute('aria-activedescendant', r.el.id);
    else this.container.removeAttribute('aria-activedescendant');
  }

  /** Back to the top (new filters). */
  resetScroll() {
    // Writing scrollTop forces a layout: skipped when the list never left the top (the first
    // load, where that layout cost ~40 ms on a slow machine).
    if (this.maybeScrolled) {
      this.container.scrollTop = 0;
      this.maybeScrolled = false;
    }
    this.active = -1;
    this.activeId = null;
    for (const r of this.pool) r.index = -1;
  }
}

/**
 * What a row says of task `t` beside its status: once finished, its result's text (or its
 * error) or its status message; while live, its status message, else what it asks (see
 * askedText), else its progress message; else its arguments.
 */
export function rowMessage(t) {
  const said = isTerminal(t.status) ? resultSummary(t) || t.statusMessage : t.statusMessage || askedText(t) || (t.progress && t.progress.message);
  return said || argsSummary(t.arguments);
}

/** "KEY: question" of a waiting task's first open request (its key alone when it has no
 *  question), as `taskdeck tasks` shows it; '' when nothing is asked. */
function askedText(t) {
  const [first] = outstandingPrompts(t);
  if (!first) return '';
  return first.message ? `${first.key}: ${first.message}` : first.key;
}

function resultSummary(t) {
  // The badge says it failed, the detail pane gives the JSON-RPC code: the row says why.
  if (t.status === 'failed' && t.error) return String(t.error.message ?? `error ${t.error.code ?? ''}`);
  if (t.status === 'cancelled') return t.statusMessage || 'Cancelled before it finished';
  if (t.status === 'completed' && t.result && Array.isArray(t.result.content)) {
    const text = t.result.content.find((c) => c && c.type === 'text' && typeof c.text === 'string');
    // An answer to a question (`{action, content}`): its first line, where a secret typed in
    // the form is `[redacted]` (the next line has it as typed, for the agent).
    const answer = t.result.structuredContent && typeof t.result.structuredContent.action === 'string';
    if (text) return commandEnd(t.result.structuredContent) || (answer ? text.text.split('\n')[0] : text.text);
  }
  return '';
}

/**
 * A command's result (run_command, `taskdeck run`: a `tail` of its output beside `exitCode`)
 * as a row says it: how it ended (the row's title already names the command), then its
 * output's last line, which says why a failed one failed: `exited with code 3 after 10.0 s …
 * error: something broke`. '' for any other result.
 */
function commandEnd(structured) {
  if (!structured || typeof structured.tail !== 'string' || !('exitCode' in structured)) return '';
  const how = typeof structured.signal === 'string' ? `killed by ${structured.signal}` : typeof structured.exitCode === 'number' ? `exited with code ${structured.exitCode}` : 'ended';
  const after = typeof structured.durationMs === 'number' ? ` after ${(structured.durationMs / 1000).toFixed(1)} s` : '';
  const last = structured.tail.split('\n').map((l) => l.trim()).filter(Boolean).pop();
  return `${how}${after}${last ? ` … ${last}` : ''}`;
}
