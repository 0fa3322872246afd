// The banner under the top bar that says Taskdeck has not answered for a while: the event stream
// has been down for OFFLINE_BANNER_MS. Taskdeck stopped, or it was started again on another port,
// which a page on the old address cannot follow by itself: the banner says where to look. It
// goes as the stream opens again. The top bar's "Reconnecting…" says the rest of the time.

import { $ } from './dom.js';
import { state } from './state.js';

/** How long the stream is down before the banner shows, in ms: longer than a restart takes. */
export const OFFLINE_BANNER_MS = 10_000;

/** When the stream went down (ms since the epoch), or null while it is open (also kept in
 * `state.streamDownSince`, which the list and the detail read). */
let downSince = null;
let timer = null;

const pad = (n) => String(n).padStart(2, '0');



/**
 * The banner's words for a page served from `host` ("127.0.0.1:4747") whose stream went down at
 * `sinceMs` (shown as local HH:MM:SS).
 */
export function offlineText(host, sinceMs) {
  const d = new Date(sinceMs);
  const at = `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
  return (
    `Taskdeck has not answered at ${host} since ${at}; this page keeps trying. ` +
    'If Taskdeck was started again on another port, open the address it printed ' +
    '(“Open the UI: …”), or its window.'
  );
}

function render() {
  const banner = $('offline-banner');
  const down = downSince !== null && Date.now() - downSince >= OFFLINE_BANNER_MS;
  if (down) banner.textContent = offlineText(location.host, downSince);
  banner.hidden = !down;
}

/**
 * Follows the event stream's state (event-stream.js `onState`): a stream that keeps
 * reconnecting shows the banner once it has been down for OFFLINE_BANNER_MS; an open stream
 * (or a closed one: the token screen takes over) hides it.
 * @param {'connecting'|'open'|'reconnecting'|'closed'} s
 */
export function noteStreamState(s) {
  if (s === 'open' || s === 'closed') {
    downSince = null;
    state.streamDownSince = null;
    clearTimeout(timer);
    timer = null;
    render();
  } else if (s === 'reconnecting' && downSince === null) {
    downSince = Date.now();
    state.streamDownSince = downSince;
    timer = setTimeout(render, OFFLINE_BANNER_MS);
  }
}
