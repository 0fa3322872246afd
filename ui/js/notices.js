// What the page tells the reader outside the views: toasts (visible notices that go away by
// themselves, or once the page is live again for those saying Taskdeck could not be reached)
// and the screen-reader announcer.

import { h, $ } from './dom.js';

/** How long a notice of `tone` stays in view, in ms: a failure longer. */
export function noticeMs(tone) {
  return tone === 'bad' ? 12000 : 7000;
}

/**
 * Shows notice `text`. `untilLive`: it tells that Taskdeck could not be reached (a request that
 * did not get through); it goes once the page is live again (`backLive`), not left to say so
 * after the connection is back. `about`: the id of what it tells the person to do something
 * with (a waiting call): it goes with that thing ([dropNotices]), not left to ask for what was
 * done or can no longer be.
 */
export function toast(text, tone = 'info', { untilLive = false, about = undefined } = {}) {
  const close = h('button', { type: 'button', class: 'toast-close', 'aria-label': 'Dismiss' }, '×');
  const el = h('div', { class: `toast toast-${tone}${untilLive ? ' toast-offline' : ''}`, role: tone === 'bad' ? 'alert' : undefined, dataset: about === undefined ? {} : { about } }, h('span', { class: 'toast-text' }, text), close);
  const remove = () => el.remove();
  close.addEventListener('click', remove);
  // The same notice again (a key pressed twice) replaces the one showing: they do not pile up.
  for (const same of $('toasts').querySelectorAll('.toast')) {
    if (same.querySelector('.toast-text')?.textContent === text) same.remove();
  }
  $('toasts').appendChild(el);
  setTimeout(remove, noticeMs(tone));
}

/** Removes the notices about things `gone(about)` says are gone (see [toast]'s `about`). */
export function dropNotices(gone) {
  for (const el of $('toasts').querySelectorAll('.toast[data-about]')) {
    if (gone(el.dataset.about)) el.remove();
  }
}

/** The page is live again: the notices that Taskdeck could not be reached go, and one says the
 *  connection is back and what was not sent must be sent again. */
export function backLive() {
  const stale = [...$('toasts').querySelectorAll('.toast-offline')];
  if (!stale.length) return;
  for (const el of stale) el.remove();
  toast('Connected again. What could not be sent then was not done: try it again.', 'info');
}

/** Says `text` to screen readers (politely). */
export function announce(text) {
  $('announcer').textContent = text;
}
