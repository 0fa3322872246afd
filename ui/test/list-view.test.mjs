// What a list row says beside a task's status (list-view.js rowMessage).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rowMessage } from '../js/list-view.js';

const job = (extra) => ({ taskId: 't1', tool: 'external', status: 'working', arguments: { name: 'x', heartbeatMs: 3600000 }, ...extra });
const ask = (message) => ({ method: 'elicitation/create', params: message === undefined ? {} : { message } });

test('a task waiting for input with no status message shows what it asks, as the CLI does', () => {
  const t = job({ status: 'input_required', inputRequests: { b: ask('Second?'), a: ask('First question?') } });
  assert.equal(rowMessage(t), 'a: First question?', 'the first request by key, not the arguments');
  assert.equal(rowMessage(job({ status: 'input_required', inputRequests: { token: ask() } })), 'token', 'a request without a question: its key');
  // Its status message, when it has one, comes first; so does it over its progress message.
  assert.equal(rowMessage({ ...t, statusMessage: 'Waiting for a human' }), 'Waiting for a human');
  assert.equal(rowMessage({ ...t, progress: { current: 1, message: 'step 1' } }), 'a: First question?');
  // Requests left on a task that no longer waits are not asked any more.
  assert.equal(rowMessage(job({ inputRequests: { a: ask('First question?') } })), 'name: x · heartbeatMs: 3600000');
});

test('the other rows keep their order: status message, progress message, arguments; a finished one its result', () => {
  assert.equal(rowMessage(job({ statusMessage: 'copying', progress: { current: 1, message: 'file 1' } })), 'copying');
  assert.equal(rowMessage(job({ progress: { current: 1, message: 'file 1' } })), 'file 1');
  assert.equal(rowMessage(job({})), 'name: x · heartbeatMs: 3600000');
  const done = { content: [{ type: 'text', text: 'exported 12 rows' }] };
  assert.equal(rowMessage(job({ status: 'completed', statusMessage: 'done', result: done })), 'exported 12 rows');
  assert.equal(rowMessage(job({ status: 'completed', statusMessage: 'done', result: { content: [] } })), 'done');
  assert.equal(rowMessage(job({ status: 'failed', error: { code: -32000, message: 'runner lost' } })), 'runner lost');
  assert.equal(rowMessage(job({ status: 'cancelled' })), 'Cancelled before it finished');
});

test("a command's row says how it ended and its output's last line, which says why it failed", () => {
  const failed = {
    content: [{ type: 'text', text: '`./fail.sh` exited with code 3 after 10.0 s.\nstep 1 of 5: doing\nstep 2 of 5\nerror: something broke at step 5\n' }],
    structuredContent: { exitCode: 3, durationMs: 10000, tail: 'step 1 of 5: doing\nstep 2 of 5\nerror: something broke at step 5\n' },
    isError: true,
  };
  assert.equal(rowMessage(job({ status: 'completed', result: failed })), 'exited with code 3 after 10.0 s … error: something broke at step 5');
  // A command line that holds its own last line still gets it (the line says why it failed).
  const echoed = {
    content: [{ type: 'text', text: '`seq 3; echo error: boom >&2; exit 1` exited with code 1 after 0.0 s.\n1\n2\n3\nerror: boom' }],
    structuredContent: { exitCode: 1, durationMs: 4, tail: '1\n2\n3\nerror: boom' },
  };
  assert.equal(rowMessage(job({ status: 'completed', result: echoed })), 'exited with code 1 after 0.0 s … error: boom');
  // Killed by a signal; no output.
  const killed = { content: [{ type: 'text', text: '`sleep 9` was killed by signal 15 (SIGTERM) after 1.0 s.\n' }], structuredContent: { exitCode: null, signal: 'SIGTERM', durationMs: 1000, tail: '' } };
  assert.equal(rowMessage(job({ status: 'completed', result: killed })), 'killed by SIGTERM after 1.0 s');
  // No output: how it ended; a result that is not a command's: as it is.
  const quiet = { content: [{ type: 'text', text: '`true` exited with code 0 after 0.0 s.\n' }], structuredContent: { exitCode: 0, tail: '' } };
  assert.equal(rowMessage(job({ status: 'completed', result: quiet })), 'exited with code 0');
  const other = { content: [{ type: 'text', text: 'line 1\nline 2' }], structuredContent: { tail: 'x' } };
  assert.equal(rowMessage(job({ status: 'completed', result: other })), 'line 1\nline 2');
});
