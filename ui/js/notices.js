// What the page tells the reader outside the views: toasts (visible notices that go away by
// themselves) and the screen-reader announcer.

import { h, $ } from './dom.js';

/** How long a notice of `tone` stays in view, in ms: a failure longer. */
export function noticeMs(tone) {
  return tone === 'bad' ? 12000 : 7000;
}

export function toast(text, tone = 'info') {
  const close = h('button', { type: 'button', class: 'toast-close', 'aria-label': 'Dismiss' }, '×');
  const el = h('div', { class: `toast toast-${tone}`, role: tone === 'bad' ? 'alert' : undefined }, h('span', { class: 'toast-text' }, text), close);
  const remove = () => el.remove();
  close.addEventListener('click', remove);
  $('toasts').appendChild(el);
  setTimeout(remove, noticeMs(tone));
}

/** Says `text` to screen readers (politely). */
export function announce(text) {
  $('announcer').textContent = text;
}
