// Small text formatters: durations, ages, retention countdowns, sizes, truncation. No DOM.

import { parseJson, stringifyJson } from './exact-json.js';

/** Milliseconds since the epoch for an ISO 8601 string; NaN when absent or invalid. */
export function toMs(iso) {
  if (typeof iso !== 'string' || !iso) return NaN;
  return Date.parse(iso);
}

/**
 * A compact duration: "0.4s", "9.5s", "42s", "12m 5s", "3h 12m", "2d 4h".
 * Negative input counts as zero.
 */
export function formatDuration(ms) {
  if (!Number.isFinite(ms)) return '–';
  ms = Math.max(0, ms);
  if (ms < 10_000) return `${(Math.floor(ms / 100) / 10).toFixed(1)}s`;
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${s % 60}s`;
  const h = Math.floor(m / 60);
  if (h < 24) return `${h}h ${m % 60}m`;
  const d = Math.floor(h / 24);
  return `${d}d ${h % 24}h`;
}

/** How long ago: "just now", "42s ago", "12m ago", "3h ago", "2d ago". */
export function formatAge(iso, now = Date.now()) {
  const t = toMs(iso);
  if (!Number.isFinite(t)) return '–';
  const s = Math.floor((now - t) / 1000);
  if (s < 5) return 'just now';
  if (s < 60) return `${s}s ago`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ago`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h}h ago`;
  return `${Math.floor(h / 24)}d ago`;
}

/**
 * Milliseconds from `now` until {@link formatAge} shows another text for `iso` (Infinity for a
 * time it cannot read): the end of "just now", then of the current second, minute, hour or day.
 * A page with no live row wakes only then to redraw its ages.
 */
export function ageChangesIn(iso, now = Date.now()) {
  const t = toMs(iso);
  if (!Number.isFinite(t)) return Infinity;
  const ms = Math.max(0, now - t);
  if (ms < 5000) return 5000 - ms;
  const step = ms < 60_000 ? 1000 : ms < 3_600_000 ? 60_000 : ms < 48 * 3_600_000 ? 3_600_000 : 86_400_000;
  return step - (ms % step);
}

const TERMINAL = new Set(['completed', 'failed', 'cancelled']);

/** True for completed, failed and cancelled. */
export function isTerminal(status) {
  return TERMINAL.has(status);
}

/** Run time of a task: until its last update once terminal, else until now. */
export function taskDurationMs(task, now = Date.now()) {
  const start = toMs(task.createdAt);
  const end = isTerminal(task.status) ? toMs(task.lastUpdatedAt) : now;
  return end - start;
}

/**
 * How long a finished command ran (its result's `structuredContent.durationMs`, in ms), when
 * that is at least a second less than the task took (`taskDurationMs`): the rest went before
 * it started (waiting for approval). Null otherwise.
 */
export function ranBeforeEnd(task) {
  const ran = task && task.status === 'completed' && task.result && task.result.structuredContent ? task.result.structuredContent.durationMs : undefined;
  if (typeof ran !== 'number' || !Number.isFinite(ran)) return null;
  return taskDurationMs(task) - ran >= 1000 ? ran : null;
}

/**
 * A list row's duration: `for 12s` while the task lives (until `at`), `took 3m` once it ended;
 * for a command that waited to start (ranBeforeEnd), how long it ran (`ran 40s`), the tooltip
 * saying how long it took from the call.
 * @returns {{text: string, title: string}}
 */
export function rowDuration(task, at = Date.now()) {
  if (!isTerminal(task.status)) return { text: `for ${formatDuration(taskDurationMs(task, at))}`, title: '' };
  const took = formatDuration(taskDurationMs(task));
  const ran = ranBeforeEnd(task);
  if (ran === null) return { text: `took ${took}`, title: '' };
  return { text: `ran ${formatDuration(ran)}`, title: `The command ran ${formatDuration(ran)}, after waiting to start (for approval): ${took} from the call to its end` };
}

/**
 * The retention line for a task: when the store will delete it. `ticking`: whether the text
 * changes every second (under an hour left, it counts seconds).
 * @returns {{text: string, urgent: boolean, ticking: boolean}}
 */
export function ttlCountdown(task, now = Date.now()) {
  if (task.ttlMs === null || task.ttlMs === undefined) {
    return {
      text: task.status === 'input_required' ? 'Kept until answered (no expiry while waiting for input)' : 'Kept indefinitely',
      urgent: false,
      ticking: false,
    };
  }
  let expires = toMs(task.expiresAt);
  if (!Number.isFinite(expires)) expires = toMs(task.createdAt) + task.ttlMs;
  const left = expires - now;
  if (!Number.isFinite(left)) return { text: '–', urgent: false, ticking: false };
  if (left <= 0) return { text: 'Expired: removed at the next sweep', urgent: true, ticking: false };
  const verb = isTerminal(task.status) ? 'Deleted' : 'Expires';
  return { text: `${verb} in ${formatDuration(left)}`, urgent: left < 5 * 60_000, ticking: left < 3_600_000 };
}

/**
 * Cuts `text` to `max` characters (default 10,000).
 * @returns {{text: string, truncated: boolean, hidden: number, total: number}}
 */
export function truncate(text, max = 10_000) {
  const s = String(text ?? '');
  if (s.length <= max) return { text: s, truncated: false, hidden: 0, total: s.length };
  const head = headOf(s, max);
  return { text: head, truncated: true, hidden: s.length - head.length, total: s.length };
}

const isHighSurrogate = (c) => c >= 0xd800 && c <= 0xdbff;
const isLowSurrogate = (c) => c >= 0xdc00 && c <= 0xdfff;

/** The first `n` UTF-16 units of `s`, one fewer rather than half a surrogate pair (an emoji). */
export function headOf(s, n) {
  return s.slice(0, n > 0 && n < s.length && isHighSurrogate(s.charCodeAt(n - 1)) ? n - 1 : n);
}

/** The last `n` UTF-16 units of `s`, one fewer rather than half a surrogate pair. */
export function tailOf(s, n) {
  const from = Math.max(0, s.length - n);
  return s.slice(from > 0 && isLowSurrogate(s.charCodeAt(from)) ? from + 1 : from);
}

// Characters that reorder the text around them (bidi embeddings, overrides, isolates and
// marks), or hide where it breaks (zero-width spaces, word joiners, the BOM, line and paragraph
// separators, the soft hyphen), or draw as nothing (the Hangul fillers, the Mongolian vowel
// separator, the interlinear annotation marks, the tag characters U+E0000-U+E007F: invisible
// ASCII look-alikes that can smuggle text past a reader): shown as escapes wherever text is
// shown, so that `a\u{202e}b c` cannot read as `a c b`. Zero-width (non-)joiners and
// variation selectors stay: they join letters and emoji, and pick an emoji's look. The same
// set as the server's (`tools::process::hidden`).
const INVISIBLE = '\\u00ad\\u061c\\u115f\\u1160\\u180e\\u2028\\u2029\\u202a-\\u202e\\u2060-\\u2069\\u3164\\ufeff\\uffa0\\ufff9-\\ufffb\\u{e0000}-\\u{e007f}';
const REORDERING = new RegExp(`[\\u200b\\u200e\\u200f${INVISIBLE}]`, 'gu');
// What else a person cannot see for what it is in a call's arguments: controls (newlines
// included), zero-width characters, line and paragraph separators, the BOM.
const HIDDEN = new RegExp(`[\\u0000-\\u001f\\u007f-\\u009f\\u200b-\\u200f${INVISIBLE}]`, 'gu');
// Of those, the ones JSON.stringify leaves as they are (it escapes U+0000-U+001F itself).
const HIDDEN_IN_JSON = new RegExp(`[\\u007f-\\u009f\\u200b-\\u200f${INVISIBLE}]`, 'gu');

const braced = (c) => `\\u{${c.codePointAt(0).toString(16)}}`;

// Controls other than the whitespace ones (tab, line breaks, carriage return).
const NON_SPACE_CONTROLS = /[\u0000-\u0008\u000e-\u001f\u007f-\u009f]/g;

/** One line, at most `max` characters, with an ellipsis. */
export function oneLine(text, max = 200) {
  // Runs of whitespace (line breaks, tabs, carriage returns) are one space; every other control
  // character and those that reorder text are written out (`\u{1b}`, `\u{202e}`). Nothing is
  // taken out: a dropped escape sequence would take its payload with it (`echo ESC]0;x; touch
  // f; echo BEL done` would read `echo done`).
  const s = String(text ?? '')
    .replace(REORDERING, braced)
    .replace(NON_SPACE_CONTROLS, braced)
    .replace(/\s+/g, ' ')
    .trim();
  return s.length > max ? `${headOf(s, max - 1)}…` : s;
}

/**
 * A value of a call's arguments as a person must read it to approve it: every character that
 * is not seen for what it is written out (`\n`, `\t`, `\r`, others as `\u{202e}`), so
 * `echo a\nrm -rf ~` cannot pass for one `echo`, nor a bidi override hide a word's order.
 * With `keepLines`, newlines and tabs stay (a script shown as lines).
 */
export function shownPlainly(text, keepLines = false) {
  return String(text ?? '').replace(HIDDEN, (c) => {
    if (keepLines && (c === '\n' || c === '\t')) return c;
    return c === '\n' ? '\\n' : c === '\t' ? '\\t' : c === '\r' ? '\\r' : braced(c);
  });
}

// Controls in prose other than its line breaks and tabs: a carriage return (which hides what
// came before it on a terminal, and joins words here), an escape, and the like.
const PROSE_CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

/** Text a person reads as prose (a question, a status message): as it is, but for the
 * characters that reorder it and the controls other than its line breaks and tabs, written
 * out (`\u{202e}`, `\r`, `\u{1b}`), so its words show in their order and none goes unseen. A
 * Windows line break (CR LF) is a line break. */
export function shownText(text) {
  return String(text ?? '')
    .replace(/\r\n/g, '\n')
    .replace(REORDERING, braced)
    .replace(PROSE_CONTROLS, (c) => (c === '\r' ? '\\r' : braced(c)));
}

/** True when a string anywhere in `value` holds a character `shownPlainly` writes out. */
export function hidesText(value) {
  if (typeof value === 'string') return new RegExp(HIDDEN.source, 'u').test(value);
  if (value && typeof value === 'object') return Object.values(value).some(hidesText);
  return false;
}

/** JSON text with the invisible characters JSON.stringify leaves in strings escaped as `\uXXXX`: the same JSON value. */
export function plainJson(text) {
  // A character past the BMP (a tag character) as its two UTF-16 halves, as JSON writes it.
  return text.replace(HIDDEN_IN_JSON, (c) => [...Array(c.length).keys()].map((i) => `\\u${c.charCodeAt(i).toString(16).padStart(4, '0')}`).join(''));
}

/** "1,234,567" for a count (a non-negative integer). Not Intl.NumberFormat: creating one loads
 * ICU data (~30 ms at page load, measured), and toLocaleString creates one per call. */
export function formatCount(n) {
  const digits = String(Math.max(0, Math.trunc(Number(n) || 0)));
  return digits.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/** "512 B", "1.5 KB", "3.2 MB" (1024 steps). */
export function formatBytes(n) {
  if (!Number.isFinite(n) || n < 0) return '–';
  if (n < 1024) return `${n} B`;
  const units = ['KB', 'MB', 'GB', 'TB'];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v < 10 ? v.toFixed(1) : Math.round(v)} ${units[i]}`;
}

/** Decoded size in bytes of a base64 string (whitespace ignored). */
export function base64ByteLength(b64) {
  const s = String(b64 ?? '').replace(/\s+/g, '');
  if (!s) return 0;
  const padding = s.endsWith('==') ? 2 : s.endsWith('=') ? 1 : 0;
  return Math.floor((s.length * 3) / 4) - padding;
}

/** True when `s` is plausibly base64 (only base64 alphabet, right length). */
export function looksLikeBase64(s) {
  if (typeof s !== 'string') return false;
  const t = s.replace(/\s+/g, '');
  return t.length > 0 && t.length % 4 === 0 && /^[A-Za-z0-9+/]+={0,2}$/.test(t);
}

/** Pretty JSON, every invisible character in it escaped (see [`shownPlainly`]); `undefined` becomes "". */
export function prettyJson(value) {
  if (value === undefined) return '';
  try {
    return plainJson(stringifyJson(value, 2));
  } catch {
    return String(value);
  }
}

/** Parses text that is a JSON object or array; null otherwise. */
export function parseJsonObject(text) {
  const s = String(text ?? '').trim();
  if (!(s.startsWith('{') && s.endsWith('}')) && !(s.startsWith('[') && s.endsWith(']'))) return null;
  try {
    const v = parseJson(s);
    return v && typeof v === 'object' ? v : null;
  } catch {
    return null;
  }
}

/** The first 8 characters of an id, for tight places (the full id is always shown on hover/detail). */
export function shortId(id) {
  // Taskdeck ids are `<creation time in hex>-<random hex>`: show the start of the random part.
  const s = String(id ?? '');
  const m = /^[0-9a-f]{12}-([0-9a-f]{8})/.exec(s);
  return m ? m[1] : s.slice(0, 8);
}

function pad(n, w = 2) {
  return String(n).padStart(w, '0');
}

/** Local "YYYY-MM-DD HH:MM:SS". */
export function formatTimestamp(iso) {
  const t = toMs(iso);
  if (!Number.isFinite(t)) return '–';
  const d = new Date(t);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/** Local "HH:MM:SS.mmm" (timeline rows). */
export function formatClock(iso) {
  const t = toMs(iso);
  if (!Number.isFinite(t)) return '–';
  const d = new Date(t);
  return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`;
}

/** Progress as a fraction 0..1 when the total is known, else null. */
export function progressFraction(progress) {
  if (!progress || typeof progress.current !== 'number') return null;
  if (typeof progress.total !== 'number' || !(progress.total > 0)) return null;
  return Math.min(1, Math.max(0, progress.current / progress.total));
}

/** A progress number as it is: "42", "2.5" (no needless ".0"). */
function plainNumber(x) {
  return Number.isInteger(x) ? String(x) : x.toFixed(1);
}

const COMPACT_UNITS = ['', 'K', 'M', 'B', 'T'];

/**
 * A progress number short enough for a list row: as it is below 10,000 ("9999", "2.5"), else
 * in thousands, millions... with at most one decimal ("12.3K", "1.2M", "98.8M"; at most 6
 * characters below 10^18). Written out rather than with Intl.NumberFormat's compact notation:
 * see formatCount.
 */
export function compactNumber(x) {
  if (!Number.isFinite(x) || Math.abs(x) < 10_000) return plainNumber(x);
  const tenths = (v) => Math.round(v * 10) / 10;
  let v = x;
  let unit = 0;
  // 999,950 is "1M", not "1000K".
  while (unit < COMPACT_UNITS.length - 1 && Math.abs(tenths(v)) >= 1000) {
    v /= 1000;
    unit++;
  }
  return `${tenths(v)}${COMPACT_UNITS[unit]}`;
}

/** "3 / 10" or "3" (numbers without a needless ".0"); with `compact`, big numbers shortened
 *  ("1.2M / 98.8M", see compactNumber). */
export function progressText(progress, { compact = false } = {}) {
  if (!progress || typeof progress.current !== 'number') return '';
  const n = compact ? compactNumber : plainNumber;
  return typeof progress.total === 'number' ? `${n(progress.current)} / ${n(progress.total)}` : n(progress.current);
}

/**
 * `text` on one line, at most `max` characters: a longer one keeps its start and its end with
 * "…" between, since two calls that differ often differ at the end (`…","end-P"]`).
 */
export function middleCut(text, max) {
  const s = oneLine(text, Infinity);
  if (s.length <= max) return s;
  const tail = Math.floor((max - 1) * 0.4);
  return `${headOf(s, max - 1 - tail)}…${tailOf(s, tail)}`;
}

/**
 * Arguments in one line for the list: "label: nightly build · seconds: 600".
 * Nested values are compact JSON; each value is cut to 60 characters in its middle
 * ([`middleCut`]); invisible characters are written out (`command: echo a\necho b`, see
 * [`shownPlainly`]).
 */
export function argsSummary(args, max = 200, valueMax = 60) {
  if (!args || typeof args !== 'object' || Array.isArray(args)) return '';
  const parts = [];
  for (const [k, v] of Object.entries(args)) {
    const text = typeof v === 'string' ? shownPlainly(v) : v === undefined ? '' : plainJson(stringifyJson(v) ?? '');
    parts.push(`${k}: ${middleCut(text, valueMax)}`);
  }
  return oneLine(parts.join(' · '), max);
}

/** Whether `argsSummary(args, max)` shows every argument whole (nothing cut from a value or
 *  from the line). */
export function summaryIsWhole(args, max = 200) {
  return argsSummary(args, max) === argsSummary(args, Infinity, Infinity);
}
