// The banner under the top bar that says why writes fail while the disk holding Taskdeck's
// store is full: shown when the event stream says the server's writes are refused for it
// (`store` events, so a page that only watches sees it too), or when a write of this page is
// refused for it (api.js lastingWriteFailure); gone when the stream says there is room again
// and no write of this page was refused since its last one succeeded. Each failed action still
// shows its own toast.

import { $ } from './dom.js';
import { lastingWriteFailure, STORE_FULL_TEXT } from './api.js';

/** The server's word on its disk (`store` events): full. */
let serverFull = false;
/** This page's last write was refused for a full disk. */
let writeRefused = false;

function render() {
  const banner = $('store-banner');
  if (serverFull || writeRefused) banner.textContent = STORE_FULL_TEXT;
  banner.hidden = !(serverFull || writeRefused);
}

/** Follows one write's end (`createApi`'s `onWrite`): null when it succeeded, else its error. */
export function noteWrite(error) {
  if (!error) {
    writeRefused = false;
  } else if (lastingWriteFailure(error)) {
    writeRefused = true;
  } else {
    return;
  }
  render();
}

/**
 * Follows the server's word on its disk: a `store` event (`{diskFull}`), or null when the stream
 * (re)opens (the server sends one at once when the disk is full). Room again also ends what a
 * refused write of this page showed: the server's writes resume.
 */
export function noteStore(store) {
  serverFull = Boolean(store && store.diskFull);
  if (store && !store.diskFull) writeRefused = false;
  render();
}
