// The page's clocks (createTicker in ui/js/timing.js) over injected interval functions: a clock's
// timer is set only while its part needs it, once, and cleared when the last need goes.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createTicker } from '../js/timing.js';

/** Interval functions that record what is set: `live` maps handle → {fn, ms}; `fire(h)` runs one. */
function fakeTimers() {
  const live = new Map();
  let next = 1;
  let sets = 0;
  return {
    live,
    get sets() {
      return sets;
    },
    setTimer(fn, ms) {
      sets++;
      const h = next++;
      live.set(h, { fn, ms });
      return h;
    },
    clearTimer(h) {
      assert.ok(live.has(h), `cleared timer ${h}, which is not set`);
      live.delete(h);
    },
    /** Runs every set timer whose period is `ms` once (one period passing). */
    elapse(ms) {
      for (const t of [...live.values()]) if (t.ms === ms) t.fn();
    },
  };
}

test('ticker: no timer is set until a clock is needed, and none after the last need goes', () => {
  const timers = fakeTimers();
  const ticker = createTicker(timers);
  let ticks = 0;
  ticker.add('list', () => ticks++, 1000);
  ticker.add('inbox', () => {}, 5000);
  assert.equal(timers.live.size, 0, 'adding clocks sets no timer');
  assert.deepEqual(ticker.running(), []);

  ticker.need('list', true);
  assert.deepEqual(ticker.running(), ['list']);
  assert.deepEqual([...timers.live.values()].map((t) => t.ms), [1000]);
  timers.elapse(1000);
  timers.elapse(1000);
  assert.equal(ticks, 2);

  ticker.need('list', false);
  assert.equal(timers.live.size, 0);
  assert.deepEqual(ticker.running(), []);
  timers.elapse(1000);
  assert.equal(ticks, 2, 'a stopped clock does not tick');
});

test('ticker: asking again for what is so sets no second timer and keeps the running one', () => {
  const timers = fakeTimers();
  const ticker = createTicker(timers);
  ticker.add('detail', () => {}, 1000);
  ticker.need('detail', true);
  const [first] = timers.live.keys();
  for (let i = 0; i < 5; i++) ticker.need('detail', true);
  assert.equal(timers.sets, 1);
  assert.deepEqual([...timers.live.keys()], [first]);
  ticker.need('detail', false);
  ticker.need('detail', false);
  assert.equal(timers.live.size, 0);
  // Needed again (a live task appears): a new timer.
  ticker.need('detail', true);
  assert.equal(timers.sets, 2);
  assert.equal(timers.live.size, 1);
});

test('ticker: clocks are independent; each has its own period', () => {
  const timers = fakeTimers();
  const ticker = createTicker(timers);
  const ticked = [];
  ticker.add('list', () => ticked.push('list'), 1000);
  ticker.add('inbox', () => ticked.push('inbox'), 5000);
  ticker.add('approvals', () => ticked.push('approvals'), 1000);
  ticker.need('inbox', true);
  ticker.need('approvals', true);
  assert.deepEqual(ticker.running().sort(), ['approvals', 'inbox']);
  timers.elapse(1000);
  timers.elapse(5000);
  assert.deepEqual(ticked, ['approvals', 'inbox']);
  ticker.need('approvals', false);
  assert.deepEqual(ticker.running(), ['inbox']);
});

test('ticker: a clock needed before it is added starts when it is added', () => {
  const timers = fakeTimers();
  const ticker = createTicker(timers);
  ticker.need('list', true);
  assert.equal(timers.live.size, 0, 'nothing to run yet');
  let ticks = 0;
  ticker.add('list', () => ticks++, 1000);
  assert.deepEqual(ticker.running(), ['list']);
  timers.elapse(1000);
  assert.equal(ticks, 1);
  // Added again (a new tick function): the old timer is cleared, one timer runs the new one.
  let newer = 0;
  ticker.add('list', () => newer++, 1000);
  assert.equal(timers.live.size, 1);
  timers.elapse(1000);
  assert.deepEqual([ticks, newer], [1, 1]);
});

test('ticker: stopAll clears every timer and forgets the needs; parts ask again', () => {
  const timers = fakeTimers();
  const ticker = createTicker(timers);
  ticker.add('list', () => {}, 1000);
  ticker.add('detail', () => {}, 1000);
  ticker.need('list', true);
  ticker.need('detail', true);
  assert.equal(timers.live.size, 2);
  ticker.stopAll();
  assert.equal(timers.live.size, 0);
  assert.deepEqual(ticker.running(), []);
  ticker.need('list', true);
  assert.deepEqual(ticker.running(), ['list']);
});

test('ticker: by default it uses the global setInterval and clearInterval', () => {
  const real = { setInterval: globalThis.setInterval, clearInterval: globalThis.clearInterval };
  const set = [];
  const cleared = [];
  globalThis.setInterval = (fn, ms) => {
    set.push(ms);
    return 'handle';
  };
  globalThis.clearInterval = (h) => cleared.push(h);
  try {
    const ticker = createTicker();
    ticker.add('list', () => {}, 1000);
    ticker.need('list', true);
    ticker.need('list', false);
  } finally {
    Object.assign(globalThis, real);
  }
  assert.deepEqual(set, [1000]);
  assert.deepEqual(cleared, ['handle']);
});
