import { test } from 'node:test';
import assert from 'node:assert/strict';
import { once, oncePerFrame } from '../js/timing.js';

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
