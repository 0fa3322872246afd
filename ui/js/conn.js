// The top bar's live indicator (#conn): the event stream's state, which live.js reports, and
// whether the list is paused (list.js): while paused, the page is not "Live" though the stream
// is open (the inbox and the open task still follow it, the list's changes wait).

import { $ } from './dom.js';
import { state } from './state.js';

/** The report that came with the stream's last state (`info.error`: why it dropped), kept for
 *  the redraws a pause makes. */
let streamInfo = null;

/**
 * The indicator for stream state `s` (`info.error`: why it dropped) and a list that is
 * `paused` or not: its `state` (styles.css colors it: the stream's, or "paused" while the stream
 * is open), word and tooltip. A stream that is not open says so, paused or not.
 */
export function connLabel(s, info, paused = false) {
  if (s === 'open' && paused) {
    return { state: 'paused', text: 'Paused', title: 'The list is paused: its changes wait until you resume (p). The inbox and the open task stay live.' };
  }
  const text = {
    connecting: 'Connecting…',
    open: 'Live',
    reconnecting: 'Reconnecting…',
    closed: 'Offline',
  }[s];
  return {
    state: s,
    text: text || s,
    title: s === 'reconnecting' && info && info.error ? `Connection lost: ${info.error}` : s === 'open' ? 'Changes appear as they happen' : '',
  };
}

/** Draws the indicator for `state.streamState` and the list's pause. `info`: the report that
 *  came with a new stream state (null: none); left out, the last one's. */
export function renderConn(info) {
  if (info !== undefined) streamInfo = info;
  const el = $('conn');
  const { state: shown, text, title } = connLabel(state.streamState, streamInfo, state.model.paused);
  el.dataset.state = shown;
  $('conn-text').textContent = text;
  el.title = title;
}
