// Who is signed in, in the top bar (#me): "Signed in as NAME" and, for a person (who sees every
// principal's tasks), the pill "sees all principals". The pill is never cut to a fragment: when
// the top bar has no room for it whole (a wide window keeps the bar on one line, and the note
// beside Pause, "Reconnecting…", take their room from it: styles.css), it says "sees all", and
// with no room for that either it goes out of sight. Either way a screen reader still reads the
// whole words, and #me's tooltip says them. Who is signed in is never cut (styles.css).

import { h, clear, $ } from './dom.js';

/** The pill's words, whole and short. */
export const PILL_FULL = 'sees all principals';
export const PILL_SHORT = 'sees all';

/** The pill's forms, most room first. */
const FITS = ['full', 'short'];

/**
 * The first of the pill's forms ('full', 'short') that `fits(form)` says shows whole, else
 * 'none' (out of sight).
 * @param {(form: string) => boolean} fits
 */
export function pillFit(fits) {
  return FITS.find((form) => fits(form)) || 'none';
}

/** Whether `pill` shows whole: not cut by its own box (it shrinks in the top bar's grid) nor by #me's. */
function whole(pill, me) {
  if (pill.scrollWidth > pill.clientWidth + 1) return false;
  return pill.getBoundingClientRect().right <= me.getBoundingClientRect().right + 0.5;
}

/** Shows the pill in #me in the first form that fits whole (forces a layout per form tried). */
export function fitMePill() {
  const me = $('me');
  const pill = me.querySelector('.me-pill');
  if (!pill) return;
  const fit = pillFit((form) => {
    pill.dataset.fit = form;
    return whole(pill, me);
  });
  if (pill.dataset.fit !== fit) pill.dataset.fit = fit;
}

let observer = null;

/**
 * Draws #me for `principal` (`seesAll`: the pill too), and from then on fits the pill whenever
 * the room in the top bar changes: the window's width, or an item of the bar (the live
 * indicator, the note beside Pause, a button shown or relabelled). Not #me itself, nor the
 * spacer: their sizes follow the pill's form, and the pill is fitted at once, in the observer's
 * report, before the frame is drawn.
 */
export function renderMe(principal, seesAll) {
  const me = $('me');
  clear(me).append(
    h('span', { class: 'me-who' }, 'Signed in as ', h('strong', {}, principal)),
    seesAll ? h('span', { class: 'pill me-pill', dataset: { fit: 'full' } }, h('span', { class: 'me-pill-full' }, PILL_FULL), h('span', { class: 'me-pill-short', 'aria-hidden': 'true' }, PILL_SHORT)) : '',
  );
  if (!seesAll || typeof ResizeObserver === 'undefined') return;
  if (!observer) {
    observer = new ResizeObserver(fitMePill);
    const bar = me.parentElement;
    observer.observe(bar);
    for (const el of bar.children) if (el !== me && !el.classList.contains('topbar-spacer')) observer.observe(el);
    // The note's width changes inside .live-controls, which may not change size (it shrinks).
    observer.observe($('pending-note'));
  }
  fitMePill();
}
