// A small structural diff of two JSON values, for the timeline of an approval a human approved
// with edited arguments: which keys were added, removed or changed (old → new). Objects are
// compared key by key and arrays index by index, to any depth; anything else is a leaf. No DOM.

import { plainJson } from './format.js';
import { ExactInteger, stringifyJson } from './exact-json.js';

/**
 * @typedef {{path: string, kind: 'added'|'removed'|'changed', from?: any, to?: any}} DiffEntry
 *   `path`: where, as a JSON Pointer-like dotted path (`command`, `env.HOME`, `args[2]`; the
 *   whole value is `(value)`); `from`/`to`: the old and new JSON values (absent for added/removed).
 */

// An ExactInteger (a large integer as its digits) is a number: a leaf, equal by its digits.
const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof ExactInteger);

function keyPath(base, key) {
  const plain = /^[A-Za-z_$][\w$-]*$/.test(key);
  if (!base) return plain ? key : JSON.stringify(key);
  return plain ? `${base}.${key}` : `${base}[${JSON.stringify(key)}]`;
}

/** Whether two JSON values are equal (objects by keys, not key order). */
export function jsonEqual(a, b) {
  if (a === b) return true;
  if (a instanceof ExactInteger || b instanceof ExactInteger) return a instanceof ExactInteger && b instanceof ExactInteger && a.digits === b.digits;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => jsonEqual(x, b[i]));
  if (isObject(a) && isObject(b)) {
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => Object.hasOwn(b, k) && jsonEqual(a[k], b[k]));
  }
  return false;
}

/**
 * The differences from `before` to `after`, in `before`'s key order then `after`'s new keys.
 * Equal values give `[]`.
 * @returns {DiffEntry[]}
 */
export function jsonDiff(before, after, path = '') {
  if (jsonEqual(before, after)) return [];
  if (isObject(before) && isObject(after)) {
    const out = [];
    for (const k of Object.keys(before)) {
      const p = keyPath(path, k);
      if (!Object.hasOwn(after, k)) out.push({ path: p, kind: 'removed', from: before[k] });
      else out.push(...jsonDiff(before[k], after[k], p));
    }
    for (const k of Object.keys(after)) if (!Object.hasOwn(before, k)) out.push({ path: keyPath(path, k), kind: 'added', to: after[k] });
    return out;
  }
  if (Array.isArray(before) && Array.isArray(after)) {
    const out = [];
    const n = Math.max(before.length, after.length);
    for (let i = 0; i < n; i++) {
      const p = `${path}[${i}]`;
      if (i >= after.length) out.push({ path: p, kind: 'removed', from: before[i] });
      else if (i >= before.length) out.push({ path: p, kind: 'added', to: after[i] });
      else out.push(...jsonDiff(before[i], after[i], p));
    }
    return out;
  }
  return [{ path: path || '(value)', kind: 'changed', from: before, to: after }];
}

/** A JSON value on one line, cut at `max` characters. */
function short(v, max = 120) {
  const s = stringifyJson(v);
  const text = s === undefined ? String(v) : s;
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** One diff entry in words: `+ env.DEBUG: "1"`, `- cwd: "/tmp"`, `~ command: "rm -rf /" → "ls"`. */
export function diffLine(entry) {
  // An edit is read to know what will run: nothing in it may hide or reorder its text.
  switch (entry.kind) {
    case 'added':
      return plainJson(`+ ${entry.path}: ${short(entry.to)}`);
    case 'removed':
      return plainJson(`- ${entry.path}: ${short(entry.from)}`);
    default: {
      const [from, to] = changedTexts(entry.from, entry.to);
      return plainJson(`~ ${entry.path}: ${from} → ${to}`);
    }
  }
}

/** Characters of a long changed value shown before its first difference. */
const BEFORE_CHANGE = 30;

/**
 * A changed leaf's old and new values on one line each, cut at `max` characters: where both
 * are longer, each shows the part from just before their first difference ("…" where text is
 * left out), so an edit near the end of a long value is seen, not two equal beginnings.
 */
function changedTexts(from, to, max = 120) {
  const text = (v) => {
    const s = stringifyJson(v);
    return s === undefined ? String(v) : s;
  };
  const a = text(from);
  const b = text(to);
  if (a.length <= max || b.length <= max) return [short(from, max), short(to, max)];
  let at = 0;
  while (at < a.length && at < b.length && a[at] === b[at]) at++;
  const around = (s) => {
    const start = Math.max(0, at - BEFORE_CHANGE);
    const lead = start > 0 ? '…' : '';
    const room = max - lead.length;
    const piece = s.slice(start, start + room);
    return start + room < s.length ? `${lead}${piece.slice(0, room - 1)}…` : `${lead}${piece}`;
  };
  return [around(a), around(b)];
}
