// The words of the banner a page shows when Taskdeck has not answered for a while.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { offlineText } from '../js/offline-banner.js';

test('the offline banner names the address, since when, and where to look for a restarted Taskdeck', () => {
  const since = new Date(2026, 11, 6, 9, 5, 7).getTime();
  const text = offlineText('127.0.0.1:4747', since);
  assert.match(text, /^Taskdeck has not answered at 127\.0\.0\.1:4747 since 09:05:07; this page keeps trying\. /);
  assert.match(text, /started again on another port, open the address it printed \(“Open the UI: …”\)/);
});
