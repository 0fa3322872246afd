import { test } from 'node:test';
import assert from 'node:assert/strict';
import { coalesced } from '../js/coalesced.js';

test('reads run one at a time; changes during a read make one more read, not one each', async () => {
  const gates = [];
  let runs = 0;
  const kick = coalesced(() => {
    runs++;
    return new Promise((resolve) => gates.push(resolve));
  });
  const tick = () => new Promise((r) => setImmediate(r));
  const first = kick();
  await tick();
  assert.equal(runs, 1);
  kick();
  kick();
  kick();
  await tick();
  assert.equal(runs, 1, 'still one in flight');
  gates.shift()(false);
  await tick();
  assert.equal(runs, 2, 'three changes meanwhile: one more read');
  gates.shift()(true); // more is waiting: read again at once
  await tick();
  assert.equal(runs, 3);
  gates.shift()(false);
  await first;
  assert.equal(runs, 3, 'then it stops');
  const later = kick();
  await tick();
  assert.equal(runs, 4, 'a change after that starts a new read');
  gates.shift()(false);
  await later;

  const failing = coalesced(async () => {
    throw new Error('boom');
  });
  await assert.rejects(failing(), /boom/);
  await assert.rejects(failing(), /boom/, 'a failed run does not leave it stuck');
});
