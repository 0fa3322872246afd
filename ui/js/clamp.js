// Long texts an agent wrote (a 900 KB approval question, a huge status message) shown clamped:
// the first lines and characters, then "Show all", which opens the whole text in a box that
// scrolls on its own, so what follows it (Accept / Decline) stays in view. clampText is pure;
// clampedText builds the element.

import { h } from './dom.js';
import { shownText } from './format.js';

/** How much of a text is shown before "Show all": characters and lines. */
export const CLAMP_CHARS = 600;
export const CLAMP_LINES = 8;

/**
 * The part of `text` shown while clamped.
 * @returns {{shown: string, cut: boolean, total: number}} `shown` ends with "…" when `cut`;
 *   `total` is the whole text's length in UTF-16 units.
 */
export function clampText(text, { chars = CLAMP_CHARS, lines = CLAMP_LINES } = {}) {
  const s = String(text ?? '');
  let end = Math.min(s.length, chars);
  let at = -1;
  for (let i = 0; i < lines; i++) {
    at = s.indexOf('\n', at + 1);
    if (at < 0 || at >= end) break;
    if (i === lines - 1) end = at;
  }
  if (end >= s.length) return { shown: s, cut: false, total: s.length };
  // Not inside a surrogate pair.
  if (end > 0 && /[\uD800-\uDBFF]/.test(s[end - 1])) end--;
  return { shown: `${s.slice(0, end).trimEnd()}…`, cut: true, total: s.length };
}

/** "Show all (12,345 characters)". */
export function showAllLabel(total) {
  return `Show all (${String(total).replace(/\B(?=(\d{3})+(?!\d))/g, ',')} characters)`;
}

/**
 * `text` in a `tag` element (with `props`), clamped as clampText says (`opts`: `chars`, `lines`);
 * when cut, followed by a "Show all" button that shows the whole text in a scrolling box, and
 * "Show less" back. `opts.keepInView`: a selector of the ancestor (e.g. the prompt card with
 * its Accept / Decline) scrolled into view whole when the text opens. `opts.open`: shown whole
 * from the start (a text the reader had opened, drawn again).
 * @returns {HTMLElement} a wrapper `.clamp` holding the text element and the button
 */
export function clampedText(tag, props, text, opts) {
  const full = shownText(text);
  const { shown, cut, total } = clampText(full, opts);
  const el = h(tag, props, shown);
  if (!cut) return h('div', { class: 'clamp' }, el);
  const toggle = h('button', { type: 'button', class: 'btn-link clamp-toggle', 'aria-expanded': 'false' }, showAllLabel(total));
  const wrap = h('div', { class: 'clamp clamp-cut' }, el, toggle);
  const setOpen = (open) => {
    el.textContent = open ? full : shown;
    el.scrollTop = 0;
    wrap.classList.toggle('clamp-open', open);
    toggle.setAttribute('aria-expanded', String(open));
    toggle.textContent = open ? 'Show less' : showAllLabel(total);
  };
  toggle.addEventListener('click', () => {
    const open = toggle.getAttribute('aria-expanded') !== 'true';
    setOpen(open);
    const keep = opts && opts.keepInView ? wrap.closest(opts.keepInView) : null;
    if (open && keep) keep.scrollIntoView({ block: 'nearest' });
  });
  if (opts && opts.open) setOpen(true);
  return wrap;
}
