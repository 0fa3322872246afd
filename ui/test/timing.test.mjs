import { test } from 'node:test';
import assert from 'node:assert/strict';
import { once, oncePerFrame, afterNextFrame } from '../js/timing.js';

test('once: loads once and shares the promise', async () => {
  let calls = 0;
  const load = once(async () => ++calls);
  const a = load();
  const b = load();
  assert.equal(a, b);
  assert.equal(await a, 1);
  assert.equal(await load(), 1);
  assert.equal(calls, 1);
});

test('once: a failed load is tried again by the next call', async () => {
  let calls = 0;
  const load = once(async () => {
    calls++;
    if (calls === 1) throw new Error('server away');
    return 'module';
  });
  await assert.rejects(load(), /server away/);
  await new Promise((r) => setTimeout(r, 0)); // the rejection handler has run
  assert.equal(await load(), 'module');
  assert.equal(await load(), 'module');
  assert.equal(calls, 2);
});

test('oncePerFrame: many calls before the frame run the function once, then it can be queued again', () => {
  const frames = [];
  const raf = (cb) => frames.push(cb);
  let runs = 0;
  const render = oncePerFrame(() => runs++, raf);
  render();
  render();
  render();
  assert.equal(frames.length, 1, 'one frame requested');
  assert.equal(runs, 0, 'nothing runs before the frame');
  frames.shift()();
  assert.equal(runs, 1);
  render();
  assert.equal(frames.length, 1, 'a call after the frame asks for the next one');
  frames.shift()();
  assert.equal(runs, 2);
});

test('oncePerFrame: a call from inside the function queues another frame', () => {
  const frames = [];
  let runs = 0;
  const render = oncePerFrame(() => {
    runs++;
    if (runs === 1) render();
  }, (cb) => frames.push(cb));
  render();
  frames.shift()();
  assert.equal(frames.length, 1);
  frames.shift()();
  assert.equal(runs, 2);
});

test('afterNextFrame: runs once, in a task after the frame, or after the wait when no frame comes', () => {
  const frames = [];
  const timers = [];
  const deps = { raf: (cb) => frames.push(cb), setTimer: (cb, ms) => timers.push({ cb, ms }), maxWaitMs: 100 };
  let runs = 0;
  afterNextFrame(() => runs++, deps);
  assert.equal(runs, 0, 'nothing runs before the frame');
  assert.deepEqual(timers.map((t) => t.ms), [100], 'only the fallback timer so far');
  frames.shift()();
  assert.equal(runs, 0, 'not inside the frame either');
  assert.deepEqual(timers.map((t) => t.ms), [100, 0]);
  timers.pop().cb();
  assert.equal(runs, 1, 'in the task queued from the frame');
  timers.pop().cb();
  assert.equal(runs, 1, 'the fallback finds it done');

  // A hidden tab draws no frame: the fallback runs it.
  frames.length = 0;
  afterNextFrame(() => runs++, deps);
  timers.pop().cb();
  assert.equal(runs, 2);
});

test('oncePerFrame: now() runs at once, and the frame asked for before runs nothing', () => {
  const frames = [];
  let runs = 0;
  const render = oncePerFrame(() => runs++, (cb) => frames.push(cb));
  render();
  render.now();
  assert.equal(runs, 1, 'ran at once');
  frames.shift()();
  assert.equal(runs, 1, 'the frame found nothing left to do');
  render();
  assert.equal(frames.length, 1, 'a later call asks for a frame again');
  frames.shift()();
  assert.equal(runs, 2);
});

test('oncePerFrame: a call after now() is served by the frame already asked for, once', () => {
  const frames = [];
  let runs = 0;
  const render = oncePerFrame(() => runs++, (cb) => frames.push(cb));
  render();
  render.now();
  render();
  assert.equal(frames.length, 1, 'no second frame asked for');
  frames.shift()();
  assert.equal(runs, 2);
  assert.equal(frames.length, 0);
});
