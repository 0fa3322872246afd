// The banner under the top bar that says why writes fail while the disk holding Taskdeck's
// store is full (api.js lastingWriteFailure): shown when a write of this page is refused for
// it, gone when one succeeds. Each failed action still shows its own toast.

import { $ } from './dom.js';
import { lastingWriteFailure } from './api.js';

/** Follows one write's end (`createApi`'s `onWrite`): null when it succeeded, else its error. */
export function noteWrite(error) {
  const banner = $('store-banner');
  if (!error) {
    banner.hidden = true;
    return;
  }
  const text = lastingWriteFailure(error);
  if (!text) return;
  banner.textContent = text;
  banner.hidden = false;
}
