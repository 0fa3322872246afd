// The approval inbox in headless Chromium against the real `taskdeck serve`: approvals made by
// real agent calls of `run_command` over /mcp (each waits for a human under the default
// policy), answered in the page: the queue's order, approve with edited JSON (the task's
// timeline then shows the diff), deny with a reason, a group of identical calls approved after
// opening it, a multi-select denied with one reason, the server's 422 next to the editor,
// approve from the keyboard, and a decision's outcome line that goes away after a few seconds.
// The agent's own view (tasks/get) proves what it received.
//
//   cd tests/browser && npm ci && node --test inbox-triage.test.mjs
//   TASKDECK_BIN=/path/to/taskdeck  CHROMIUM=/path/to/chromium

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { openUi, startServer, tearDown, waitFor, BIN, CHROMIUM, repo } from './harness.mjs';

const PROTOCOL = '2026-07-28';

let server;
let base;
let token;
let tmp;
let browser;
let page;
const pageErrors = [];
/** 422s the test provokes on purpose (the browser logs each failed request as an error). */
let expected422 = 0;

let rpcId = 0;
/** One MCP request as an agent sends it (2026-07-28 with the tasks extension). */
async function mcp(method, name, params) {
  const resp = await fetch(`${base}/mcp`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      'MCP-Protocol-Version': PROTOCOL,
      'Mcp-Method': method,
      'Mcp-Name': name,
      Authorization: `Bearer ${token}`,
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: ++rpcId,
      method,
      params: { ...params, _meta: { 'io.modelcontextprotocol/protocolVersion': PROTOCOL, 'io.modelcontextprotocol/clientCapabilities': { extensions: { 'io.modelcontextprotocol/tasks': {} } } } },
    }),
  });
  const json = await resp.json();
  if (json.error) throw new Error(`${method}: ${json.error.code} ${json.error.message}`);
  return json.result;
}

/** An agent asks to run `command`; resolves with the task id once its approval is listed. */
async function askToRun(command) {
  const r = await mcp('tools/call', 'run_command', { name: 'run_command', arguments: { command } });
  assert.equal(r.resultType, 'task');
  await waitFor(async () => (await pending()).some((a) => a.taskId === r.taskId), `the approval of ${command}`);
  return r.taskId;
}

/** GET /v1/approvals' pending approvals. */
async function pending() {
  const resp = await fetch(`${base}/v1/approvals`, { headers: { Authorization: `Bearer ${token}` } });
  assert.equal(resp.status, 200);
  return (await resp.json()).approvals;
}

/** What the agent finally gets (tasks/get until the task has ended). */
function outcome(taskId) {
  return waitFor(async () => {
    const t = await mcp('tasks/get', taskId, { taskId });
    return ['completed', 'failed', 'cancelled'].includes(t.status) && t;
  }, `task ${taskId} to end`);
}

/** An agent asks a `request_approval` question; resolves with the task id once the queue lists it. */
async function askQuestion(message) {
  const r = await mcp('tools/call', 'request_approval', { name: 'request_approval', arguments: { message } });
  assert.equal(r.resultType, 'task');
  await waitFor(async () => (await pending()).some((a) => a.taskId === r.taskId), `the question ${message}`);
  return r.taskId;
}

/** Denies `taskId`'s call through the API, as another person would, and waits for its row to go. */
async function denyElsewhere(taskId) {
  const resp = await fetch(`${base}/v1/approvals/decide`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ items: [{ taskId }], decision: 'deny', reason: 'decided elsewhere' }),
  });
  assert.equal(resp.status, 200);
  await rowOf(taskId).waitFor({ state: 'detached' });
}

/** The focused element: a queue row's task id, else its id from index.html, else its class list, else its tag. */
const focused = () =>
  page.evaluate(() => {
    const el = document.activeElement;
    if (el.classList.contains('approval')) return el.dataset.taskId;
    const madeId = /-\d+$/.test(el.id); // uid() numbers the ids the page makes
    return el.id && !madeId ? `#${el.id}` : el.className ? `.${el.className.split(' ').join('.')}` : el.tagName;
  });

const resultText = (t) => (t.result && t.result.content ? t.result.content.map((c) => c.text || '').join('\n') : JSON.stringify(t));
const rowOf = (taskId) => page.locator(`#approvals-list .approval[data-task-id="${taskId}"]`);

/** From the task list: `i` to the queue, `e` on its first row; returns once its editor has the focus. */
async function editFromTheQueue() {
  await page.locator('#task-list').focus();
  await page.keyboard.press('i');
  await page.keyboard.press('e');
  await waitFor(() => page.evaluate(() => document.activeElement.classList.contains('approval-json')), 'the editor');
}

/** Decides everything still pending, so each test starts with an empty queue. */
async function clearQueue() {
  const left = await pending();
  if (!left.length) return;
  const resp = await fetch(`${base}/v1/approvals/decide`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ items: left.map((a) => ({ taskId: a.taskId, key: a.key })), decision: 'deny', reason: 'test cleanup' }),
  });
  assert.equal(resp.status, 200);
  await page.locator('#approvals-list .approval').first().waitFor({ state: 'detached' });
  // A reason box that was open went with its call: the page drops the next keys until the
  // person clicks (or presses Esc). The next test starts as a person who clicked.
  await page.dispatchEvent('body', 'pointerdown');
}

/** The Claude Code PermissionRequest event of the fixtures, as the hook reads it on stdin. */
function permissionRequest() {
  return fs.readFileSync(path.join(repo, 'tests', 'fixtures', 'hooks', 'claude-code', 'PermissionRequest.json'), 'utf8');
}

/**
 * Runs `taskdeck hook claude-code` as Claude Code does, with the token of a new agent `name`
 * (what `taskdeck hook install` makes) and `event` on stdin: `{exited, printed()}`.
 */
async function claudeCodeHook(name, event) {
  const made = await fetch(`${base}/v1/agents`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ name }),
  });
  assert.equal(made.status, 201);
  const hookToken = (await made.json()).token;
  const hook = spawn(BIN, ['hook', 'claude-code', '--port', new URL(base).port, '--token', hookToken], { stdio: ['pipe', 'pipe', 'pipe'] });
  let printed = '';
  hook.stdout.on('data', (c) => (printed += c.toString()));
  const exited = new Promise((r) => hook.once('exit', r));
  hook.stdin.end(event);
  return { exited, printed: () => printed };
}

before(async () => {
  assert.ok(fs.existsSync(BIN), `taskdeck binary not found at ${BIN}`);
  const started = await startServer(BIN);
  tmp = started.dir;
  server = started.child;
  base = started.url;
  token = fs.readFileSync(started.tokenFile, 'utf8').trim();
  // 422s the tests provoke on purpose are not page errors (the browser logs each failed request).
  const onPage = (p) =>
    p.on('console', (m) => {
      if (m.type() !== 'error') return;
      if (/status of 422/.test(m.text()) && expected422 > 0) expected422--;
      else pageErrors.push(m.text());
    });
  ({ browser, page } = await openUi({ chromium, executablePath: CHROMIUM, base, token, pageErrors, onPage }));
});

after(() => tearDown({ browser, server, tmp }));

test('the queue is oldest waiting first and counts down nothing when nothing expires', async () => {
  const ids = [];
  for (const word of ['first', 'second', 'third']) {
    ids.push(await askToRun(`echo ${word}`));
    await new Promise((r) => setTimeout(r, 30));
  }
  await rowOf(ids[2]).waitFor();
  assert.deepEqual(await page.$$eval('#approvals-list .approval', (els) => els.map((e) => e.dataset.taskId)), ids);
  assert.match(await rowOf(ids[0]).locator('.approval-wait').textContent(), /^waiting /);
  assert.match(await rowOf(ids[0]).locator('.approval-summary').textContent(), /taskdeck · run_command/);
  await clearQueue();
});

test('approve with edited JSON: the agent gets the edited call, the timeline shows the diff', async () => {
  const taskId = await askToRun('echo original');
  const row = rowOf(taskId);
  await row.locator('.approval-summary').click();
  // The call exactly as asked, and its digest in short.
  const args = JSON.parse(await row.locator('.approval-args-full').textContent());
  assert.deepEqual(args, { command: 'echo original' });
  assert.match(await row.locator('.approval-digest').textContent(), /^sha256:[0-9a-f]{12}…$/);
  // A syntax error is caught in the page, before anything is sent.
  const editor = row.locator('.approval-json');
  await editor.fill('{"command": ');
  await row.locator('.approval-approve-edited').click();
  await row.locator('.approval-edit-errors', { hasText: 'Not valid JSON' }).waitFor();
  await editor.fill('{"command": "echo edited"}');
  await row.locator('.approval-approve-edited').click();
  // The notice names the call, and says it went with the edit.
  await page.locator('.toast-text', { hasText: 'Approved “run_command: echo original” with your edit.' }).waitFor();
  const done = await outcome(taskId);
  assert.equal(done.status, 'completed');
  // The edited call ran, and the agent is told it was not its own.
  const [ran, note, output] = resultText(done).split('\n');
  assert.match(ran, /^`echo edited` exited with code 0 after /);
  assert.equal(note, 'A person edited this call before approving it: you asked for `echo original`; `echo edited` ran instead.');
  assert.equal(output, 'edited');
  await row.waitFor({ state: 'detached' });

  await page.evaluate((id) => {
    window.location.hash = `#task=${id}`;
  }, taskId);
  const diff = page.locator('#detail .tl-diff li');
  await diff.first().waitFor();
  assert.deepEqual(await diff.allTextContents(), ['~ command: "echo original" → "echo edited"']);
});

test('a decision\'s outcome line above the queue goes away after a few seconds', async () => {
  const first = await askToRun('echo first of two');
  const second = await askToRun('echo second of two');
  await rowOf(first).locator('.approval-approve').click();
  const line = page.locator('#approvals-result');
  await line.getByText('Approved “run_command: echo first of two”.').waitFor();
  await rowOf(first).waitFor({ state: 'detached' });
  // The other call still waits (the queue stays in view), but the confirmation does not.
  const shown = Date.now();
  await waitFor(async () => (await line.textContent()) === '', 'the outcome line to clear', { timeout: 12_000 });
  assert.ok(Date.now() - shown >= 3000, 'it was readable for a few seconds');
  assert.equal(await rowOf(second).isVisible(), true);
  await clearQueue();
});

test('deny with a reason: the agent receives it', async () => {
  const taskId = await askToRun('echo never');
  const row = rowOf(taskId);
  await row.locator('.approval-deny').click();
  const reason = row.locator('.approval-reason');
  await reason.waitFor();
  assert.equal(await page.evaluate(() => document.activeElement.classList.contains('approval-reason')), true, 'Deny… focuses the reason');
  await reason.fill('use the staging box');
  await reason.press('Enter');
  const done = await outcome(taskId);
  assert.match(resultText(done), /use the staging box/);
});

test('three identical calls group; "Approve all 3 identical" shows only once the group is open, and asks first', async () => {
  const ids = [];
  for (let i = 0; i < 3; i++) ids.push(await askToRun('echo same'));
  const group = page.locator('#approvals-list .approval-group');
  await group.locator('.approval-group-toggle', { hasText: '3 identical calls' }).waitFor();
  // How many calls one click decides, the tool, the arguments and whose calls they are.
  assert.deepEqual(await group.locator('.approval-group-toggle > span').allTextContents(), ['▸ 3 identical calls', 'taskdeck · run_command', 'command: echo same', 'admin']);
  assert.equal(await group.locator('.approval-group-approve').isVisible(), false, 'no approve-all before the calls are shown');
  assert.equal(await page.locator('#approvals-list .approval.in-group').count(), 0);
  await group.locator('.approval-group-toggle').click();
  await page.locator('#approvals-list .approval.in-group').nth(2).waitFor();
  await group.locator('.approval-group-approve', { hasText: 'Approve all 3 identical' }).click();
  const dialog = page.locator('#confirm-dialog[open]');
  await dialog.waitFor();
  assert.equal(await dialog.locator('.approval-confirm-list li').count(), 3);
  await page.locator('#confirm-yes').click();
  for (const id of ids) assert.equal((await outcome(id)).status, 'completed');
  await page.locator('.toast-text', { hasText: '3 of 3 approved.' }).waitFor();
  await group.waitFor({ state: 'detached' });
});

test('keyboard on a group: d opens it in its reason box and Enter denies all (after asking); Esc closes it, then leaves', async () => {
  const ids = [];
  for (let i = 0; i < 4; i++) ids.push(await askToRun('echo grouped'));
  const group = page.locator('#approvals-list .approval-group');
  await group.locator('.approval-group-toggle', { hasText: '4 identical calls' }).waitFor();
  await page.locator('#task-list').focus();
  await page.keyboard.press('i');
  await waitFor(async () => (await focused()).startsWith('.approval-group'), 'focus on the group');
  // x on the closed group selects nothing it does not show, and says where to select them.
  await page.keyboard.press('x');
  await page.locator('.toast-text', { hasText: 'Open the group (Enter) to select its calls' }).waitFor();
  assert.equal(await page.locator('#approvals-bar').isVisible(), false, 'nothing selected');
  // Enter opens it, Esc closes it and stays on it, Esc again goes back to the task list.
  await page.keyboard.press('Enter');
  await waitFor(async () => (await group.locator('.approval-group-toggle').getAttribute('aria-expanded')) === 'true', 'the group open');
  // Opened, the notice that asked for it goes.
  await page.locator('.toast-text', { hasText: 'Open the group (Enter) to select its calls' }).waitFor({ state: 'detached', timeout: 3000 });
  // x on the open group selects its 4 calls; x again, none.
  await page.keyboard.press('x');
  await page.locator('#approvals-selected', { hasText: '4 selected' }).waitFor();
  await page.keyboard.press('x');
  await page.locator('#approvals-bar').waitFor({ state: 'hidden' });
  await page.keyboard.press('a');
  await page.locator('.toast-text', { hasText: 'Approve all 4 identical' }).waitFor();
  await page.keyboard.press('Escape');
  await waitFor(async () => (await group.locator('.approval-group-toggle').getAttribute('aria-expanded')) === 'false', 'the group closed');
  assert.ok((await focused()).startsWith('.approval-group'), 'still on the group');
  // d: the group opens with the focus in its reason box; Enter asks, then denies all.
  await page.keyboard.press('d');
  await waitFor(async () => (await focused()) === '.approval-group-reason', 'the group\'s reason box');
  await page.keyboard.type('flaky suite');
  await page.keyboard.press('Enter');
  const dialog = page.locator('#confirm-dialog[open]');
  await dialog.waitFor();
  assert.equal(await dialog.locator('.approval-confirm-list li').count(), 4);
  await page.locator('#confirm-yes').click();
  for (const id of ids) assert.match(resultText(await outcome(id)), /flaky suite/);
  await group.waitFor({ state: 'detached' });
});

test('several selected (Shift for a range) are denied at once with one reason', async () => {
  const ids = [await askToRun('echo a1'), await askToRun('echo a2'), await askToRun('echo a3')];
  await rowOf(ids[2]).waitFor();
  await rowOf(ids[0]).locator('.approval-check').click();
  await rowOf(ids[2]).locator('.approval-check').click({ modifiers: ['Shift'] });
  await page.locator('#approvals-selected', { hasText: '3 selected' }).waitFor();
  await page.locator('#approvals-reason').fill('batch says no');
  await page.locator('#approvals-deny').click();
  await page.locator('#confirm-yes').click();
  for (const id of ids) assert.match(resultText(await outcome(id)), /batch says no/);
  await page.locator('.toast-text', { hasText: '3 of 3 denied.' }).waitFor();
  // The bar goes once the queue is reloaded after the decision (a moment after its toast).
  await page.locator('#approvals-bar').waitFor({ state: 'hidden' });
});

test('the server’s 422 for edited arguments shows next to the editor, and nothing is decided', async () => {
  const taskId = await askToRun('echo keep');
  const row = rowOf(taskId);
  await row.locator('.approval-summary').click();
  // Valid for the schema the page checks (every field optional), but run_command needs one of
  // command and argv: only the server knows.
  await row.locator('.approval-json').fill('{"cwd": "/tmp"}');
  expected422++;
  await row.locator('.approval-approve-edited').click();
  await row.locator('.approval-edit-errors li').first().waitFor();
  assert.ok((await pending()).some((a) => a.taskId === taskId), 'still pending');
  await clearQueue();
});

test('keyboard: i goes to the queue, j/k move, a approves, x and Shift+A approve a selection after confirming', async () => {
  const ids = [await askToRun('echo k1'), await askToRun('echo k2'), await askToRun('echo k3')];
  await rowOf(ids[2]).waitFor();
  await page.locator('#task-list').focus();
  await page.keyboard.press('i');
  await waitFor(() => page.evaluate(() => document.activeElement.classList.contains('approval')), 'focus on the queue');
  await page.keyboard.press('j');
  await page.keyboard.press('k');
  assert.equal(await page.evaluate(() => document.activeElement.dataset.taskId), ids[0]);
  await page.keyboard.press('a');
  assert.equal((await outcome(ids[0])).status, 'completed');
  await rowOf(ids[0]).waitFor({ state: 'detached' });
  await page.keyboard.press('i');
  await page.keyboard.press('x');
  await page.keyboard.press('j');
  await page.keyboard.press('x');
  await page.locator('#approvals-selected', { hasText: '2 selected' }).waitFor();
  await page.keyboard.press('Shift+A');
  await page.locator('#confirm-dialog[open]').waitFor();
  await page.locator('#confirm-yes').click();
  for (const id of ids.slice(1)) assert.equal((await outcome(id)).status, 'completed');
  // The keys are in the help.
  await page.locator('#task-list').focus();
  await page.keyboard.press('?');
  await page.locator('#help-dialog[open]', { hasText: 'Approve the selected calls' }).waitFor();
  await page.keyboard.press('Escape');
});

test('keyboard: after a decision the focus stays in the queue, on the row that took its place', async () => {
  const ids = [await askToRun('echo f1'), await askToRun('echo f2'), await askToRun('echo f3'), await askToRun('echo f4')];
  await rowOf(ids[3]).waitFor();
  const focusedTask = () => page.evaluate(() => (document.activeElement.classList.contains('approval') ? document.activeElement.dataset.taskId : document.activeElement.tagName));
  await page.locator('#task-list').focus();
  await page.keyboard.press('i');
  await page.keyboard.press('j');
  assert.equal(await focusedTask(), ids[1]);
  // Approve the second: the third takes its place, and has the focus.
  await page.keyboard.press('a');
  await rowOf(ids[1]).waitFor({ state: 'detached' });
  await waitFor(async () => (await focusedTask()) === ids[2], 'focus on the next row after approving');
  // Deny it with a reason typed in its box: the focus leaves the box for the fourth row.
  await page.keyboard.press('d');
  await waitFor(() => page.evaluate(() => document.activeElement.classList.contains('approval-reason')), 'the reason box');
  await page.keyboard.type('not today');
  await page.keyboard.press('Enter');
  assert.match(resultText(await outcome(ids[2])), /not today/);
  await rowOf(ids[2]).waitFor({ state: 'detached' });
  await waitFor(async () => (await focusedTask()) === ids[3], 'focus on the next row after denying');
  // The queue's keys still act on the queue: k moves up, a approves the first.
  await page.keyboard.press('k');
  assert.equal(await focusedTask(), ids[0]);
  await page.keyboard.press('a');
  assert.equal((await outcome(ids[0])).status, 'completed');
  await rowOf(ids[0]).waitFor({ state: 'detached' });
  await waitFor(async () => (await focusedTask()) === ids[3], 'focus on the last row left');
  await clearQueue();
  // With the queue empty, the focus goes to the task list.
  await waitFor(() => page.evaluate(() => document.activeElement.id === 'task-list'), 'focus on the task list');
});

test('keyboard: Escape in an opened call\'s editor goes back to its row with the edit kept; again closes it', async () => {
  const taskId = await askToRun('echo esc');
  const row = rowOf(taskId);
  await row.waitFor();
  await editFromTheQueue();
  await page.keyboard.press('End');
  await page.keyboard.type(' ');
  await page.keyboard.press('Escape');
  await waitFor(async () => (await page.evaluate(() => document.activeElement.dataset.taskId)) === taskId, 'focus on the call\'s row');
  assert.equal(await row.locator('.approval-json').count(), 1, 'the call is still open');
  assert.match(await row.locator('.approval-json').inputValue(), /echo esc"\s*\}\s$/, 'the edit is kept');
  await page.keyboard.press('Escape');
  await waitFor(async () => (await row.locator('.approval-json').count()) === 0, 'the call closed');
  assert.equal(await page.evaluate(() => document.activeElement.dataset.taskId), taskId);
  await clearQueue();
});

test('keyboard: a reason typed in one call\'s deny box is still there after working on another call', async () => {
  const ids = [await askToRun('echo r1'), await askToRun('echo r2')];
  await rowOf(ids[1]).waitFor();
  await page.locator('#task-list').focus();
  await page.keyboard.press('i');
  await waitFor(async () => (await focused()) === ids[0], 'focus on the first call');
  await page.keyboard.press('d');
  await waitFor(async () => (await focused()) === '.approval-reason', 'the first call\'s reason box');
  await page.keyboard.type('not on friday');
  await page.keyboard.press('Escape');
  await waitFor(async () => (await focused()) === ids[0], 'back on the first row');
  await page.keyboard.press('j');
  await page.keyboard.press('d');
  await waitFor(async () => (await focused()) === '.approval-reason', 'the second call\'s reason box');
  assert.equal(await rowOf(ids[0]).locator('.approval-reason').count(), 0, 'only one call is open');
  await page.keyboard.type('wrong host');
  await page.keyboard.press('Escape');
  await page.keyboard.press('k');
  await page.keyboard.press('d');
  await waitFor(async () => (await focused()) === '.approval-reason', 'the first call\'s reason box again');
  assert.equal(await rowOf(ids[0]).locator('.approval-reason').inputValue(), 'not on friday');
  await page.keyboard.press('Enter');
  assert.match(resultText(await outcome(ids[0])), /not on friday/);
  // The second call kept its own.
  await waitFor(async () => (await focused()) === ids[1], 'the focus on the second call\'s row');
  await page.keyboard.press('d');
  assert.equal(await rowOf(ids[1]).locator('.approval-reason').inputValue(), 'wrong host');
  await clearQueue();
});

test('keyboard: typing a reason whose call is decided elsewhere never acts on the next call', async () => {
  const ids = [await askToRun('echo t1'), await askToRun('echo t2')];
  await rowOf(ids[1]).waitFor();
  await page.locator('#task-list').focus();
  await page.keyboard.press('i');
  await page.keyboard.press('d');
  await waitFor(() => page.evaluate(() => document.activeElement.classList.contains('approval-reason')), 'the reason box');
  await page.keyboard.type('hold on ', { delay: 30 });
  // Someone else denies that call while the reason is being typed.
  await denyElsewhere(ids[0]);
  // The rest of the words ("a" approves, "d" denies, "e" edits on a queue row) do nothing.
  await page.keyboard.type('a sec, deal', { delay: 30 });
  await page.locator('.toast-text', { hasText: 'keys that followed were ignored' }).waitFor();
  await new Promise((r) => setTimeout(r, 300));
  assert.ok((await pending()).some((a) => a.taskId === ids[1]), 'the next call is still waiting');
  assert.equal(await page.locator('#approvals-list .approval-reason').count(), 0, 'no reason box opened');
  // A pause in the middle of the sentence changes nothing: "and" approves nothing, even with
  // a capital (Shift is no way out).
  await new Promise((r) => setTimeout(r, 1500));
  // The highlight stays where the denied call was, which says what became of it.
  await waitFor(async () => (await focused()) === '.approval-gone.active', 'focus on the place of the denied call');
  assert.equal(await page.locator('.approval-gone .approval-gone-text').textContent(), '“run_command: echo t1” was denied by admin.');
  await page.keyboard.type(' And', { delay: 30 });
  await new Promise((r) => setTimeout(r, 300));
  assert.ok((await pending()).some((a) => a.taskId === ids[1]), 'the next call still waits after the pause');
  // Escape says the person is done with it: the keys are shortcuts again, j goes to the next call.
  await page.keyboard.press('Escape');
  await page.keyboard.press('j');
  await waitFor(async () => (await focused()) === ids[1], 'focus on the next call');
  await page.keyboard.press('a');
  assert.equal((await outcome(ids[1])).status, 'completed');
});

test('keyboard: the Enter meant to send a reason whose call was decided elsewhere answers nothing', async () => {
  const call = await askToRun('echo e1');
  const question = await askQuestion('Delete the backup?');
  await rowOf(question).waitFor();
  await page.locator('#task-list').focus();
  await page.keyboard.press('i');
  await waitFor(async () => (await focused()) === call, 'focus on the call');
  await page.keyboard.press('d');
  await waitFor(async () => (await focused()) === '.approval-reason', 'the reason box');
  await page.keyboard.type('not now', { delay: 30 });
  await denyElsewhere(call);
  // Enter on the question's row would open its form, and Enter again accept it.
  for (const key of ['Enter', 'Enter', 'ArrowDown', 'Enter']) await page.keyboard.press(key);
  await page.locator('.toast-text', { hasText: 'keys that followed were ignored' }).last().waitFor();
  await new Promise((r) => setTimeout(r, 500));
  assert.ok((await pending()).some((a) => a.taskId === question), 'the question still waits');
  assert.equal(await page.locator('.prompt-card').count(), 0, 'no form opened');
  await page.keyboard.press('Escape');
  await clearQueue();
});

test('keyboard: a reason box opened but not typed in, whose call is decided elsewhere, lets no key act on the next call', async () => {
  const ids = [await askToRun('echo u1'), await askToRun('echo u2')];
  await rowOf(ids[1]).waitFor();
  await page.locator('#task-list').focus();
  await page.keyboard.press('i');
  await waitFor(async () => (await focused()) === ids[0], 'focus on the first call');
  await page.keyboard.press('d');
  await waitFor(async () => (await focused()) === '.approval-reason', 'the reason box');
  await denyElsewhere(ids[0]);
  await waitFor(async () => (await focused()) === '.approval-gone.active', 'focus on the place of the denied call');
  // The first letter of the reason the person was about to type.
  await page.keyboard.press('a');
  await page.locator('.toast-text', { hasText: 'keys that followed were ignored' }).last().waitFor();
  await new Promise((r) => setTimeout(r, 300));
  assert.ok((await pending()).some((a) => a.taskId === ids[1]), 'the next call still waits');
  // Past Escape, a on that place still approves nothing: it says what became of the call.
  await page.keyboard.press('Escape');
  await page.keyboard.press('a');
  await page.locator('.toast-text', { hasText: '“run_command: echo u1” was denied by admin: nothing was done' }).waitFor();
  assert.ok((await pending()).some((a) => a.taskId === ids[1]), 'the next call still waits after Escape');
  await clearQueue();
});

test('Deny clicked in an opened call leaves the focus in the queue: the next a approves the next call, not the open task', async () => {
  const ids = [await askToRun('echo f1'), await askToRun('echo f2'), await askToRun('echo f3')];
  await rowOf(ids[2]).waitFor();
  // The third call's task is open in the detail pane, where `a` would accept it.
  await page.locator('#task-list .row', { has: page.locator(`.row-id[title="${ids[2]}"]`) }).click();
  await page.locator('#detail .prompt-card').waitFor();
  await page.locator('#task-list').focus();
  await page.keyboard.press('i');
  await waitFor(async () => (await focused()) === ids[0], 'focus on the first call');
  await page.keyboard.press('Enter');
  await rowOf(ids[0]).locator('.approval-deny-submit').click();
  assert.equal((await outcome(ids[0])).status, 'completed');
  await waitFor(async () => (await focused()) === ids[1], 'focus on the row that took its place');
  await page.keyboard.press('a');
  assert.equal((await outcome(ids[1])).status, 'completed');
  assert.ok((await pending()).some((a) => a.taskId === ids[2]), 'the open task still waits');
  await clearQueue();
});

test('a approves the row the focus is on: a click on a row moves the highlight to it', async () => {
  const ids = [await askToRun('echo c1'), await askToRun('echo c2')];
  await rowOf(ids[1]).waitFor();
  await page.locator('#task-list').focus();
  await page.keyboard.press('i');
  await waitFor(async () => (await focused()) === ids[0], 'the first call highlighted');
  await rowOf(ids[1]).locator('.approval-wait').click();
  await waitFor(async () => (await focused()) === ids[1], 'the clicked row focused');
  await page.keyboard.press('a');
  assert.equal((await outcome(ids[1])).status, 'completed');
  assert.ok((await pending()).some((a) => a.taskId === ids[0]), 'the highlighted-before call still waits');
  await clearQueue();
});

test('a call longer than its row is opened by Approve first, and approved only once read in full', async () => {
  // Its middle would be cut from the row: a first Approve (or a) opens it instead.
  const command = `echo ${'a'.repeat(70)}; echo middle-part; echo ${'b'.repeat(70)}`;
  const id = await askToRun(command);
  const row = rowOf(id);
  await row.waitFor();
  assert.ok(!(await row.locator('.approval-args').textContent()).includes('middle-part'), 'the row cuts it');
  // Its button says what a press does: it opens the call first.
  const button = row.locator('.approval-approve');
  assert.equal(await button.textContent(), 'Review…');
  assert.match(await button.getAttribute('title'), /longer than its row/);
  // A double click's second press lands on "Approve" at once: it approves nothing unread.
  await button.dblclick();
  await row.locator('.approval-args-full').waitFor();
  assert.ok((await row.locator('.approval-args-full').textContent()).includes('middle-part'));
  await page.locator('.toast', { hasText: 'opened for you to read it' }).waitFor();
  assert.ok((await pending()).some((p) => p.taskId === id), 'not approved unread');
  assert.equal(await button.textContent(), 'Approve', 'open, it approves');
  assert.equal(await button.getAttribute('title'), null);
  await new Promise((r) => setTimeout(r, 1100));
  assert.equal(await page.locator('.toast', { hasText: 'longer than its row, so it is open now' }).count(), 1, 'what Review… asked is said');
  await button.click();
  assert.equal((await outcome(id)).status, 'completed');
  // Approved, the call's notices (read it, then approve it) go: they ask for what is done.
  await page.locator('.toast', { hasText: 'longer than its row' }).waitFor({ state: 'detached', timeout: 3000 });
  await page.locator('.toast', { hasText: 'opened for you to read it' }).waitFor({ state: 'detached', timeout: 3000 });
  // A short call is approved at once, and says so.
  const short = await askToRun('echo short');
  await rowOf(short).waitFor();
  assert.equal(await rowOf(short).locator('.approval-approve').textContent(), 'Approve');
  await rowOf(short).locator('.approval-approve').click();
  assert.equal((await outcome(short)).status, 'completed');
});

test('"Always allow" in the opened call: approving with it ticked saves the rule, and the same call then runs unasked', async () => {
  const policyOf = async () => (await (await fetch(`${base}/v1/policy`, { headers: { Authorization: `Bearer ${token}` } })).json()).rules;
  const before = await policyOf();
  const id = await askToRun('echo always-ok');
  const row = rowOf(id);
  await row.locator('.approval-summary').click();
  const box = row.locator('.approval-always-allow');
  await box.waitFor();
  assert.match(await row.locator('.approval-always').textContent(), /Always allow/);
  await box.check();
  await row.locator('.approval-approve').click();
  assert.equal((await outcome(id)).status, 'completed');
  await page.locator('.toast-text', { hasText: 'It is always allowed from now on' }).waitFor();
  const added = (await policyOf()).filter((r) => !before.some((b) => b.id === r.id));
  assert.equal(added.length, 1, JSON.stringify(added));
  assert.equal(added[0].tool, 'run_command');
  // The same call again: the rule lets it run, with no question.
  const again = await mcp('tools/call', 'run_command', { name: 'run_command', arguments: { command: 'echo always-ok' } });
  assert.equal((await outcome(again.taskId)).status, 'completed');
  assert.ok(!(await pending()).some((a) => a.taskId === again.taskId), 'not asked');
  // Not ticked, an approval saves nothing.
  const other = await askToRun('echo once-only');
  await rowOf(other).locator('.approval-summary').click();
  await rowOf(other).locator('.approval-always-allow').waitFor();
  await rowOf(other).locator('.approval-approve').click();
  assert.equal((await outcome(other)).status, 'completed');
  assert.equal((await policyOf()).length, before.length + 1);
  const put = await fetch(`${base}/v1/policy`, { method: 'PUT', headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' }, body: JSON.stringify({ rules: before }) });
  assert.equal(put.status, 200);
});

test('a row that cuts its call (by a fraction of a pixel, or in its tool name) says Review…; one that fits it says Approve', async () => {
  const id = await askToRun('echo abcdefghij');
  const row = rowOf(id);
  await row.waitFor();
  const args = row.locator('.approval-args');
  const textWidth = await args.evaluate((el) => {
    const r = document.createRange();
    r.selectNodeContents(el);
    return r.getBoundingClientRect().width;
  });
  const viewport = page.viewportSize();
  // The args box made a set width, then the queue's width nudged so the rows are measured again.
  const labelAt = async (px, nudge) => {
    await args.evaluate((el, w) => Object.assign(el.style, { flex: `0 0 ${w}px`, minWidth: '0', maxWidth: 'none' }), px);
    await page.setViewportSize({ width: viewport.width + nudge, height: viewport.height });
    await page.waitForTimeout(200);
    return row.locator('.approval-approve').textContent();
  };
  try {
    assert.equal(await labelAt(textWidth - 0.4, 1), 'Review…', `text ${textWidth}px in ${textWidth - 0.4}px: its last letter is behind the "…"`);
    assert.equal(await labelAt(textWidth + 0.4, 2), 'Approve', 'a box the text fits');
    // The tool's name cut (two tools may differ past the cut): Review… too, the name whole on hover.
    const tool = row.locator('.approval-tool');
    assert.equal(await tool.getAttribute('title'), 'taskdeck · run_command');
    await tool.evaluate((el) => Object.assign(el.style, { flex: '0 0 40px', minWidth: '0' }));
    await page.setViewportSize({ width: viewport.width + 3, height: viewport.height });
    await page.waitForTimeout(200);
    assert.equal(await row.locator('.approval-approve').textContent(), 'Review…', 'the tool name cut');
  } finally {
    await page.setViewportSize(viewport);
  }
  await clearQueue();
});

test('a key held on "Review…" (a, or Enter on the button) opens the call and approves nothing', async () => {
  const command = `echo ${'c'.repeat(70)}; echo held-key; echo ${'d'.repeat(70)}`;
  for (const how of ['a', 'Enter']) {
    const id = await askToRun(`${command} ${how}`);
    const row = rowOf(id);
    const button = row.locator('.approval-approve');
    assert.equal(await button.textContent(), 'Review…');
    if (how === 'a') await row.focus();
    else await button.focus();
    // Held for 2 s: one press, then the key's repeats (keydown with repeat: true).
    await page.keyboard.down(how);
    for (let i = 0; i < 60; i++) {
      await page.keyboard.down(how);
      await new Promise((r) => setTimeout(r, 33));
    }
    await page.keyboard.up(how);
    await row.locator('.approval-args-full').waitFor();
    assert.ok((await pending()).some((p) => p.taskId === id), `${how} held: not approved unread`);
    await clearQueue();
  }
});

test('approving a selection lists each call whole in its confirmation, nothing cut from its middle', async () => {
  const command = `echo ${'a'.repeat(70)}; echo middle-of-bulk; echo ${'b'.repeat(70)}`;
  const id = await askToRun(command);
  const row = rowOf(id);
  await row.locator('.approval-check').click();
  await page.locator('#approvals-approve').click();
  const list = page.locator('.approval-confirm-list');
  await list.waitFor();
  assert.ok((await list.textContent()).includes('middle-of-bulk'), await list.textContent());
  await page.keyboard.press('Escape');
  await list.waitFor({ state: 'hidden' });
  assert.ok((await pending()).some((p) => p.taskId === id), 'nothing approved');
  await clearQueue();
});

test('a call with characters that reorder or hide text reads as what would run, in its row and opened', async () => {
  // Shown raw, the override makes this read `echo safe # neddih ohce ; done`.
  const id = await askToRun('echo safe \u202e; echo hidden #\u202c done\necho second');
  const row = rowOf(id);
  await row.waitFor();
  const summary = await row.locator('.approval-args').textContent();
  assert.ok(summary.includes('echo safe \\u{202e}; echo hidden #\\u{202c} done\\necho second'), summary);
  assert.ok(!/[\u202e\u202c]/.test(summary), summary);
  await row.locator('.approval-summary').click();
  const full = await row.locator('.approval-args-full').textContent();
  assert.ok(full.includes('\\u202e') && !/[\u202e\u202c]/.test(full), full);
  await clearQueue();
});

test('a call with a masked credential is read whole with “Show hidden values”, and the timeline says who read it', async () => {
  const r = await mcp('tools/call', 'run_command', { name: 'run_command', arguments: { command: 'echo deployed', env: { API_TOKEN: 'touch-me-42' } } });
  const id = r.taskId;
  await waitFor(async () => (await pending()).some((a) => a.taskId === id && a.hiddenValues === true), 'the approval, with hidden values');
  const row = rowOf(id);
  assert.equal(await row.locator('.approval-hidden').textContent(), 'values hidden', 'the row says so');
  // Approve on its row opens it instead: it is approved where it can be read whole.
  assert.equal(await row.locator('.approval-approve').textContent(), 'Review…');
  await row.locator('.approval-approve').click();
  await page.locator('.toast', { hasText: 'hides values that look like credentials' }).waitFor();
  const full = row.locator('.approval-args-full');
  await full.waitFor();
  assert.ok((await pending()).some((p) => p.taskId === id), 'not approved unread');
  assert.ok((await full.textContent()).includes('[redacted]'), 'masked at first');
  assert.ok(!(await full.textContent()).includes('touch-me-42'));
  // Open, but not read whole: Approve (a double click's second press too) still approves nothing.
  await row.locator('.approval-approve').click();
  await page.locator('.toast', { hasText: 'Read this call whole before approving it' }).waitFor();
  assert.ok((await pending()).some((p) => p.taskId === id), 'not approved unread');
  const reveal = row.locator('.approval-reveal');
  // Tried again: the same notice, once (notices do not pile up).
  await row.locator('.approval-approve').click();
  await new Promise((r) => setTimeout(r, 200));
  assert.equal(await page.locator('.toast', { hasText: 'Read this call whole before approving it' }).count(), 1);
  assert.equal(await page.evaluate(() => document.activeElement.className), 'btn btn-small approval-reveal', 'the button that reads it has the focus');
  assert.equal(await row.locator('.approval-approve').textContent(), 'Review…', 'open, not yet read whole');
  await reveal.click();
  await waitFor(async () => (await full.textContent()).includes('touch-me-42'), 'the call as the agent sent it');
  await waitFor(async () => (await row.locator('.approval-approve').textContent()) === 'Approve', 'read whole, its button approves');
  assert.deepEqual(JSON.parse(await full.textContent()), { command: 'echo deployed', env: { API_TOKEN: 'touch-me-42' } });
  assert.equal(await full.getAttribute('aria-label'), 'Arguments as they would run');
  assert.equal(await reveal.textContent(), 'Hide values');
  await reveal.click();
  assert.ok((await full.textContent()).includes('[redacted]'), 'hidden again');
  // The task's own question, in the detail pane, reads it whole too.
  await page.evaluate((taskId) => {
    window.location.hash = `#task=${taskId}`;
  }, id);
  const inDetail = page.locator('#detail .prompt-hidden-values');
  assert.equal(await inDetail.locator('pre').isHidden(), true, 'nothing shown until asked');
  await inDetail.locator('.approval-reveal').click();
  await waitFor(async () => (await inDetail.locator('pre').textContent()).includes('touch-me-42'), 'the call whole in the detail pane');
  await row.locator('.approval-approve').click();
  assert.equal((await outcome(id)).status, 'completed');
  await page.evaluate((taskId) => {
    window.location.hash = `#task=${taskId}`;
  }, id);
  await page.locator('#detail', { hasText: 'read the call whole' }).waitFor();
  assert.ok(!(await page.locator('#detail').textContent()).includes('touch-me-42'), 'the task shows it masked');

  // Another, answered in the task's own form: its Accept approves nothing before the call was
  // read whole (there or in the queue); once read, the form's error goes and Accept approves.
  const other = (await mcp('tools/call', 'run_command', { name: 'run_command', arguments: { command: 'echo again', env: { API_TOKEN: 'form-secret-43' } } })).taskId;
  await waitFor(async () => (await pending()).some((a) => a.taskId === other), 'the second approval');
  await page.evaluate((taskId) => {
    window.location.hash = `#task=${taskId}`;
  }, other);
  const form = page.locator('#detail .prompt-card');
  await form.locator('button[type="submit"]').click();
  const error = form.locator('.form-error', { hasText: 'Read this call whole before approving it' });
  await error.waitFor();
  assert.ok((await pending()).some((p) => p.taskId === other), 'not approved unread');
  await form.locator('.approval-reveal').click();
  await waitFor(async () => (await form.locator('.prompt-hidden-values pre').textContent()).includes('form-secret-43'), 'the call whole in the form');
  await error.waitFor({ state: 'hidden' });
  await form.locator('button[type="submit"]').click();
  assert.equal((await outcome(other)).status, 'completed');
});

test('a form field whose value holds reordering characters says so, written out; the value sent is the one shown', async () => {
  const r = await mcp('tools/call', 'request_approval', {
    name: 'request_approval',
    arguments: {
      message: 'Which branch?',
      requestedSchema: { type: 'object', properties: { branch: { type: 'string', title: 'Branch', maxLength: 40, default: 'main\u202e; safe' } } },
    },
  });
  await waitFor(async () => (await pending()).some((a) => a.taskId === r.taskId), 'the question');
  await rowOf(r.taskId).locator('.approval-answer').click();
  const card = page.locator('.prompt-card[data-key="approval"]');
  const field = card.getByRole('textbox', { name: 'Branch' });
  const note = card.locator('.field-hidden-chars');
  await note.waitFor();
  assert.equal(await field.inputValue(), 'main\u202e; safe', 'the default as given');
  const said = await note.textContent();
  assert.ok(said.includes('main\\u{202e}; safe') && !said.includes('\u202e'), said);
  assert.ok((await field.getAttribute('aria-describedby')).includes(await note.getAttribute('id')));
  await field.fill('release');
  assert.equal(await note.isHidden(), true, 'plain text: no note');
  await field.fill('main\u202e; safe');
  await note.waitFor();
  await card.getByRole('button', { name: 'Accept' }).click();
  const done = await outcome(r.taskId);
  assert.equal(done.status, 'completed');
  await page.locator('#task-list').focus();
  await page.keyboard.press('Escape');
});

test('an optional checkbox left alone is not answered; one ticked is', async () => {
  const ask = async () => {
    const r = await mcp('tools/call', 'request_approval', {
      name: 'request_approval',
      arguments: { message: 'Deploy where?', requestedSchema: { type: 'object', properties: { env: { type: 'string', title: 'Environment' }, notify: { type: 'boolean', title: 'Notify the team' } }, required: ['env'] } },
    });
    await waitFor(async () => (await pending()).some((a) => a.taskId === r.taskId), 'the question');
    await rowOf(r.taskId).locator('.approval-answer').click();
    return { id: r.taskId, card: page.locator('.prompt-card[data-key="approval"]') };
  };
  const first = await ask();
  await first.card.getByRole('textbox', { name: 'Environment' }).fill('staging');
  await first.card.getByRole('button', { name: 'Accept' }).click();
  const untouched = await outcome(first.id);
  assert.deepEqual(untouched.result.structuredContent.content, { env: 'staging' });
  const second = await ask();
  await second.card.getByRole('textbox', { name: 'Environment' }).fill('prod');
  await second.card.getByLabel('Notify the team').check();
  await second.card.getByLabel('Notify the team').uncheck();
  await second.card.getByRole('button', { name: 'Accept' }).click();
  const answered = await outcome(second.id);
  assert.deepEqual(answered.result.structuredContent.content, { env: 'prod', notify: false }, 'touched: a "no"');
  await page.locator('#task-list').focus();
  await page.keyboard.press('Escape');
});

test('a question row: d opens its task in the decline reason box; Enter declines with that reason, which the agent reads', async () => {
  const taskId = await askQuestion('Drop the old index?');
  const row = rowOf(taskId);
  await row.waitFor();
  assert.equal(await row.getAttribute('data-kind'), 'question');
  await page.locator('#task-list').focus();
  await page.keyboard.press('i');
  await waitFor(async () => (await focused()) === taskId, 'focus on the question');
  await page.keyboard.press('d');
  await waitFor(async () => (await focused()) === '.prompt-decline-reason', 'the decline reason box in the detail');
  const box = page.locator('.prompt-card[data-key="approval"]').getByLabel('Reason, if you decline (the agent reads it)');
  assert.equal(await box.evaluate((el) => el.classList.contains('prompt-decline-reason')), true);
  assert.equal(await box.evaluate((el) => el.maxLength), 2000, 'the server keeps 2,000 characters of a reason');
  await page.keyboard.type('it is still in use');
  await page.keyboard.press('Enter');
  const done = await outcome(taskId);
  assert.match(resultText(done), /^Declined\. Their reason: it is still in use$/);
  await row.waitFor({ state: 'detached' });
  await page.locator('#task-list').focus();
  await page.keyboard.press('Escape');
});

test('Escape in a question\'s decline box goes back to its row with the text kept; j and d then decline the next one', async () => {
  const ids = [await askQuestion('Purge the cache?'), await askQuestion('Purge the logs?')];
  await rowOf(ids[1]).waitFor();
  await page.locator('#task-list').focus();
  await page.keyboard.press('i');
  await waitFor(async () => (await focused()) === ids[0], 'focus on the first question');
  await page.keyboard.press('d');
  await waitFor(async () => (await focused()) === '.prompt-decline-reason', 'the decline reason box');
  await page.keyboard.type('half typed');
  await page.keyboard.press('Escape');
  await waitFor(async () => (await focused()) === ids[0], 'focus back on the question\'s row');
  const box = page.locator('.prompt-card[data-key="approval"] .prompt-decline-reason');
  assert.equal(await box.inputValue(), 'half typed');
  // `j` is a shortcut again: it moves to the next question and types nothing into the reason;
  // `d` there opens the second question's box, and Enter declines that one.
  await page.keyboard.press('j');
  await waitFor(async () => (await focused()) === ids[1], 'focus on the second question');
  assert.equal(await box.inputValue(), 'half typed');
  await page.keyboard.press('d');
  await waitFor(async () => (await focused()) === '.prompt-decline-reason', 'the second decline box');
  await page.keyboard.type('not now');
  await page.keyboard.press('Enter');
  assert.match(resultText(await outcome(ids[1])), /^Declined\. Their reason: not now$/);
  assert.ok((await pending()).some((a) => a.taskId === ids[0]), 'the first still waits');
  await clearQueue();
  await page.locator('#task-list').focus();
  await page.keyboard.press('Escape');
});

test('in a question’s form, d focuses the decline reason box instead of declining at once; a still accepts', async () => {
  const first = await askQuestion('Rotate the keys?');
  await rowOf(first).waitFor();
  await page.locator('#task-list').focus();
  await page.keyboard.press('i');
  await waitFor(async () => (await focused()) === first, 'focus on the question');
  await page.keyboard.press('Enter');
  const card = page.locator('.prompt-card[data-key="approval"]');
  await waitFor(async () => (await focused()) === '.btn.btn-primary', 'Accept (a form without fields)');
  await page.keyboard.press('d');
  await waitFor(async () => (await focused()) === '.prompt-decline-reason', 'the decline reason box');
  await new Promise((r) => setTimeout(r, 300));
  assert.ok((await pending()).some((a) => a.taskId === first), 'd alone declined nothing');
  await card.locator('.prompt-decline-reason').fill('not this week');
  await card.getByRole('button', { name: 'Decline' }).click();
  assert.match(resultText(await outcome(first)), /Their reason: not this week$/);
  // Accept keeps its key.
  const second = await askQuestion('Rotate them now?');
  await page.locator(`#approvals-list .approval[data-task-id="${second}"] .approval-answer`).click();
  await waitFor(async () => (await focused()) === '.btn.btn-primary', 'Accept in the second question');
  await page.keyboard.press('a');
  assert.equal(resultText(await outcome(second)), 'Accepted.');
  await page.locator('#task-list').focus();
  await page.keyboard.press('Escape');
});

test('in a call’s own form, d focuses its reason field and answers nothing; Enter there denies; its buttons and notice read as the queue’s', async () => {
  const taskId = await askToRun('echo from the form');
  await page.evaluate((id) => {
    window.location.hash = `#task=${id}`;
  }, taskId);
  const card = page.locator('#detail .prompt-card[data-key="approve-command"]');
  await card.waitFor();
  // Approve / Deny, as in the queue (with their keys); no Accept / Decline.
  const approve = card.getByRole('button', { name: 'Approve', exact: true });
  const deny = card.getByRole('button', { name: 'Deny', exact: true });
  assert.equal(await approve.getAttribute('aria-keyshortcuts'), 'a');
  assert.equal(await deny.getAttribute('aria-keyshortcuts'), 'd');
  assert.equal(await card.getByRole('button', { name: /^(Accept|Decline)$/ }).count(), 0);
  assert.match(await card.locator('.prompt-help').textContent(), /^Deny denies the call/);
  // The question reads in normal weight, as in the queue.
  const weight = await card.locator('.prompt-message').evaluate((el) => Number(getComputedStyle(el).fontWeight));
  assert.ok(weight <= 400, `the question's weight: ${weight}`);
  // `d` on the card: the focus goes to the form's own reason field; nothing is answered.
  await card.focus();
  await page.keyboard.press('d');
  const reason = card.getByLabel('Reason, if you decline');
  await waitFor(() => reason.evaluate((el) => el === document.activeElement), 'the form’s reason field');
  await new Promise((r) => setTimeout(r, 300));
  assert.ok((await pending()).some((a) => a.taskId === taskId), 'd alone denied nothing');
  // Typed there, Enter denies the call with that reason (it is no Approve).
  await page.keyboard.type('not from here');
  await page.keyboard.press('Enter');
  const done = await outcome(taskId);
  assert.equal(done.result.isError, true);
  assert.match(resultText(done), /Their reason: not from here$/);
  // The notice names the call as the queue does, not by the question's preamble.
  const toast = page.locator('.toast-text', { hasText: 'Denied “run_command: echo from the form”.' });
  await toast.waitFor();
  assert.doesNotMatch(await toast.textContent(), /wants to run/);
  await page.locator('#task-list').focus();
  await page.keyboard.press('Escape');
});

test('a call approved in its own form with an edit: the notice says so, and its input round shows the edited call as JSON', async () => {
  const taskId = await askToRun('echo before the edit');
  await page.evaluate((id) => {
    window.location.hash = `#task=${id}`;
  }, taskId);
  const card = page.locator('#detail .prompt-card[data-key="approve-command"]');
  await card.getByLabel('Edited arguments (JSON object), to approve a changed call').fill('{"command": "echo after the edit"}');
  await card.getByRole('button', { name: 'Approve', exact: true }).click();
  await page.locator('.toast-text', { hasText: 'Approved “run_command: echo before the edit” with your edit.' }).waitFor();
  const done = await outcome(taskId);
  assert.match(resultText(done), /after the edit/);
  // The round's answer: the edited call as JSON, not as JSON text quoted inside JSON.
  const answer = page.locator('#detail .round .json', { hasText: 'after the edit' });
  await answer
    .first()
    .waitFor()
    .catch(async (err) => {
      // What the pane showed, and what the server says, for the next time this is not met.
      const shown = await page.locator('#detail').innerText();
      const detail = await (await fetch(`${base}/v1/tasks/${taskId}`, { headers: { Authorization: `Bearer ${token}` } })).json();
      throw new Error(`${err.message}\npane:\n${shown}\nserver's inputRounds: ${JSON.stringify(detail.inputRounds)}`);
    });
  const text = await answer.first().textContent();
  assert.doesNotMatch(text, /\\"/, text);
  assert.deepEqual(JSON.parse(text).arguments, { command: 'echo after the edit' });
  // The pane's arguments and title follow the edit, as the task's own do.
  const args = page.locator('#detail section', { has: page.locator('h3', { hasText: /^Arguments$/ }) }).locator('.json');
  await waitFor(async () => /after the edit/.test(await args.textContent()), 'the arguments as edited');
  assert.doesNotMatch(await args.textContent(), /before the edit/);
  await waitFor(async () => /after the edit/.test(await page.locator('#detail .detail-title').textContent()), 'the title as edited');
  await page.locator('#task-list').focus();
  await page.keyboard.press('Escape');
});

test('answering a question in its form hands the focus to the next waiting question, then to the pane', async () => {
  const ids = [await askQuestion('Tag the release?'), await askQuestion('Publish the notes?')];
  await rowOf(ids[1]).waitFor();
  await page.locator('#task-list').focus();
  await page.keyboard.press('i');
  await waitFor(async () => (await focused()) === ids[0], 'focus on the first question');
  await page.keyboard.press('Enter');
  await waitFor(async () => (await focused()) === '.btn.btn-primary', 'Accept in the first question');
  await page.keyboard.press('a');
  assert.equal(resultText(await outcome(ids[0])), 'Accepted.');
  await waitFor(async () => (await focused()) === ids[1], 'the focus on the second question\'s row');
  await page.keyboard.press('Enter');
  await waitFor(async () => (await focused()) === '.btn.btn-primary', 'Accept in the second question');
  await page.keyboard.press('a');
  assert.equal(resultText(await outcome(ids[1])), 'Accepted.');
  // Nothing waits any more: the focus stays in the task's pane (not lost to the page).
  await waitFor(async () => (await focused()) === '#detail', 'the focus on the detail pane');
  await page.keyboard.press('Escape');
  await waitFor(async () => (await focused()) === '#task-list', 'Escape closes the pane');
});

test('the selection bar’s reason box: Escape goes back to the queue, Enter denies the selection (after asking), the focus stays in the queue', async () => {
  const ids = [await askToRun('echo s1'), await askToRun('echo s2'), await askToRun('echo s3'), await askToRun('echo s4')];
  await rowOf(ids[3]).waitFor();
  await page.locator('#task-list').focus();
  await page.keyboard.press('i');
  await page.keyboard.press('x');
  await page.keyboard.press('j');
  await page.keyboard.press('x');
  await page.locator('#approvals-selected', { hasText: '2 selected' }).waitFor();
  await page.keyboard.press('Shift+D');
  await waitFor(async () => (await focused()) === '#approvals-reason', 'the selection bar’s reason box');
  assert.equal(await page.locator('#approvals-reason').evaluate((el) => el.maxLength), 2000);
  await page.keyboard.press('Control+A');
  await page.keyboard.type('wrong repo');
  // Escape: back to the highlighted row, the reason kept; the next j moves in the queue.
  await page.keyboard.press('Escape');
  await waitFor(async () => (await focused()) === ids[1], 'focus back on the highlighted row');
  await page.keyboard.press('j');
  await waitFor(async () => (await focused()) === ids[2], 'j moved in the queue');
  assert.equal(await page.locator('#approvals-reason').inputValue(), 'wrong repo');
  // Enter in the box: the same confirmation as "Deny selected…".
  await page.keyboard.press('Shift+D');
  await waitFor(async () => (await focused()) === '#approvals-reason', 'the reason box again');
  await page.keyboard.press('Enter');
  const dialog = page.locator('#confirm-dialog[open]');
  await dialog.waitFor();
  assert.equal(await dialog.locator('.approval-confirm-list li').count(), 2);
  await dialog.getByText('Reason the agents receive: wrong repo').waitFor();
  await page.locator('#confirm-yes').click();
  for (const id of ids.slice(0, 2)) assert.match(resultText(await outcome(id)), /wrong repo/);
  await rowOf(ids[1]).waitFor({ state: 'detached' });
  // The focus is on the row that took the decided ones' place, and j acts on the queue.
  await waitFor(async () => (await focused()) === ids[2], 'focus on the row in their place');
  await page.keyboard.press('j');
  await waitFor(async () => (await focused()) === ids[3], 'j moved in the queue');
  // The reason went with its decision: the next selection starts without it.
  await waitFor(async () => (await page.locator('#approvals-reason').inputValue()) === '', 'the reason box emptied');
  await clearQueue();
});

test('deciding a selection with the mouse leaves the focus on the row in its place, and on the task list once the queue is empty', async () => {
  const ids = [await askToRun('echo m1'), await askToRun('echo m2'), await askToRun('echo m3')];
  await rowOf(ids[2]).waitFor();
  await rowOf(ids[0]).locator('.approval-check').click();
  await rowOf(ids[1]).locator('.approval-check').click();
  await page.locator('#approvals-approve').click();
  await page.locator('#confirm-yes').click();
  for (const id of ids.slice(0, 2)) assert.equal((await outcome(id)).status, 'completed');
  await rowOf(ids[1]).waitFor({ state: 'detached' });
  await waitFor(async () => (await focused()) === ids[2], 'focus on the row that took their place');
  await page.keyboard.press('x');
  await page.locator('#approvals-selected', { hasText: '1 selected' }).waitFor();
  await page.locator('#approvals-deny').click();
  await page.locator('#confirm-yes').click();
  await outcome(ids[2]);
  await waitFor(async () => (await focused()) === '#task-list', 'focus on the task list');
});

test('every reason box keeps at most 2,000 characters, what the server keeps', async () => {
  const taskId = await askToRun('echo long');
  await rowOf(taskId).locator('.approval-deny').click();
  const reason = rowOf(taskId).locator('.approval-reason');
  await reason.waitFor();
  assert.equal(await reason.evaluate((el) => el.maxLength), 2000);
  await reason.fill('x'.repeat(2100));
  assert.equal((await reason.inputValue()).length, 2000);
  await clearQueue();
  const same = [await askToRun('echo twin'), await askToRun('echo twin')];
  await page.locator('#approvals-list .approval-group-toggle', { hasText: '2 identical calls' }).click();
  assert.equal(await page.locator('#approvals-list .approval-group-reason').evaluate((el) => el.maxLength), 2000);
  await clearQueue();
  await page.locator('#approvals-list .approval-group').waitFor({ state: 'detached' });
});

test('a, with the open call holding an edit not sent, approves nothing: it says so and focuses the editor', async () => {
  const taskId = await askToRun('echo as asked');
  const row = rowOf(taskId);
  await row.waitFor();
  await editFromTheQueue();
  await row.locator('.approval-json').fill('{"command": "echo edited"}');
  await page.keyboard.press('Escape');
  await waitFor(async () => (await focused()) === taskId, 'back on the row');
  await page.keyboard.press('a');
  await page.locator('.toast-text', { hasText: 'This call has an edit not sent: approve it with Ctrl+Enter in the editor, or undo the edit.' }).waitFor();
  await waitFor(() => page.evaluate(() => document.activeElement.classList.contains('approval-json')), 'the editor, focused');
  await new Promise((r) => setTimeout(r, 300));
  assert.ok((await pending()).some((a) => a.taskId === taskId), 'nothing was approved');
  // The edit undone (layout aside), a approves the call as asked.
  await row.locator('.approval-json').fill('{ "command": "echo as asked" }');
  await page.keyboard.press('Escape');
  await waitFor(async () => (await focused()) === taskId, 'back on the row');
  await page.keyboard.press('a');
  const done = await outcome(taskId);
  assert.equal(done.status, 'completed');
  assert.match(resultText(done), /as asked/);
});

/** A human's token named `name` (made once, through POST /v1/agents). */
const humans = new Map();
async function humanToken(name) {
  if (!humans.has(name)) {
    const resp = await fetch(`${base}/v1/agents`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name, role: 'human' }),
    });
    assert.equal(resp.status, 201, await resp.clone().text());
    humans.set(name, (await resp.json()).token);
  }
  return humans.get(name);
}

/** Decides `taskId`'s open approval as the person whose token is `as` (another tab, another person). */
async function decideAs(as, taskId, decision) {
  const resp = await fetch(`${base}/v1/approvals/decide`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${as}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ items: [{ taskId }], decision }),
  });
  assert.equal(resp.status, 200);
  const r = (await resp.json()).results[0];
  assert.equal(r.ok, true, JSON.stringify(r));
}

test('a highlighted call decided by someone else keeps its place: no key acts there until j or k moves on', async () => {
  const alice = await humanToken('alice');
  const ids = [await askToRun('echo h1'), await askToRun('echo h2'), await askToRun('echo h3')];
  await rowOf(ids[2]).waitFor();
  // The row says what happens at expiry, not only when.
  assert.match(await rowOf(ids[0]).locator('.approval-expiry').textContent(), /^(\d+:)?\d+:\d\d → deny$/);
  await page.locator('#task-list').focus();
  await page.keyboard.press('i');
  await waitFor(async () => (await focused()) === ids[0], 'the first call highlighted');
  // Alice, in her own tab, denies the call the admin is looking at.
  await decideAs(alice, ids[0], 'deny');
  const gone = page.locator('#approvals-list .approval-gone');
  await gone.waitFor();
  assert.equal(await gone.locator('.approval-gone-text').textContent(), '“run_command: echo h1” was denied by alice.');
  await waitFor(async () => (await focused()) === '.approval-gone.active', 'the highlight kept on its place');
  // Nothing slid under the highlight: a, d, e, x and Enter act on no other call.
  for (const key of ['a', 'd', 'e', 'x', 'Enter']) await page.keyboard.press(key);
  await page.locator('.toast-text', { hasText: '“run_command: echo h1” was denied by alice: nothing was done' }).first().waitFor();
  await new Promise((r) => setTimeout(r, 300));
  const waiting = (await pending()).map((a) => a.taskId);
  assert.ok(waiting.includes(ids[1]) && waiting.includes(ids[2]), 'the other calls still wait');
  assert.equal(await page.locator('#approvals-list .approval.open').count(), 0, 'nothing opened');
  assert.equal(await page.locator('#approvals-bar').isVisible(), false, 'nothing selected');
  // j goes to the call that took its place, which the person now sees; the kept place goes.
  await page.keyboard.press('j');
  await waitFor(async () => (await focused()) === ids[1], 'the next call highlighted');
  await gone.waitFor({ state: 'detached' });
  // An opened call decided elsewhere alike: no other call opens in its stead, and a does nothing.
  await page.keyboard.press('Enter');
  await rowOf(ids[1]).locator('.approval-args-full').waitFor();
  await decideAs(alice, ids[1], 'approve');
  await gone.locator('.approval-gone-text', { hasText: '“run_command: echo h2” was approved by alice.' }).waitFor();
  assert.equal(await page.locator('#approvals-list .approval.open').count(), 0, 'no other call opened');
  await page.keyboard.press('a');
  await new Promise((r) => setTimeout(r, 300));
  assert.ok((await pending()).some((a) => a.taskId === ids[2]), 'the last call still waits');
  await clearQueue();
});

test('opening a group far down the queue keeps it in view, with its buttons', async () => {
  for (let i = 0; i < 14; i++) await askToRun(`echo filler ${i}`);
  for (let i = 0; i < 3; i++) await askToRun('echo grouped far down');
  const list = page.locator('#approvals-list');
  const group = list.locator('.approval-group');
  await group.locator('.approval-group-toggle', { hasText: '3 identical calls' }).waitFor();
  /** Whether `el` shows whole inside the queue's scrolled box. */
  const inView = (loc) =>
    loc.evaluate((el) => {
      const box = el.closest('#approvals-list').getBoundingClientRect();
      const r = el.getBoundingClientRect();
      return r.height > 0 && r.top >= box.top - 1 && r.bottom <= box.bottom + 1;
    });
  for (const how of ['click', 'Enter']) {
    await group.scrollIntoViewIfNeeded();
    assert.ok((await list.evaluate((el) => el.scrollTop)) > 0, 'the queue is scrolled to the group');
    if (how === 'click') await group.locator('.approval-group-toggle').click();
    else {
      await group.focus();
      await page.keyboard.press('Enter');
    }
    await group.locator('.approval-group-approve').waitFor();
    assert.ok((await list.evaluate((el) => el.scrollTop)) > 0, `${how}: the queue did not jump to its top`);
    assert.ok(await inView(group.locator('.approval-group-toggle')), `${how}: the group's row in view`);
    assert.ok(await inView(group.locator('.approval-group-approve')), `${how}: "Approve all 3 identical" in view`);
    assert.ok(await inView(group.locator('.approval-group-deny')), `${how}: "Deny all" in view`);
    await group.locator('.approval-group-toggle').click();
    await group.locator('.approval-group-approve').waitFor({ state: 'hidden' });
  }
  await clearQueue();
});

test('the bulk confirmation follows calls decided elsewhere while it is open: its count, its list, what it sends', async () => {
  const alice = await humanToken('alice');
  const ids = [await askToRun('echo s1'), await askToRun('echo s2'), await askToRun('echo s3')];
  await rowOf(ids[2]).waitFor();
  await rowOf(ids[0]).locator('.approval-check').click();
  await rowOf(ids[2]).locator('.approval-check').click({ modifiers: ['Shift'] });
  await page.locator('#approvals-selected', { hasText: '3 selected' }).waitFor();
  await page.locator('#approvals-approve').click();
  const dialog = page.locator('#confirm-dialog[open]');
  await dialog.waitFor();
  const yes = page.locator('#confirm-yes');
  assert.equal(await yes.textContent(), 'Approve 3');
  // Approving is the action asked for, not a destructive one; the safe button keeps the focus.
  assert.match(await yes.getAttribute('class'), /\bbtn-primary\b/);
  assert.doesNotMatch(await yes.getAttribute('class'), /\bbtn-danger\b/);
  assert.equal(await page.evaluate(() => document.activeElement.id), 'confirm-no');
  await decideAs(alice, ids[1], 'deny');
  await waitFor(async () => (await yes.textContent()) === 'Approve 2', 'the count of those still waiting');
  assert.equal(await page.locator('#confirm-title').textContent(), 'Approve 2 calls?');
  const item = dialog.locator('.approval-confirm-list li').nth(1);
  assert.match(await item.getAttribute('class'), /decided-elsewhere/);
  assert.match(await item.textContent(), /was denied by alice: left out$/);
  await yes.click();
  for (const id of [ids[0], ids[2]]) assert.equal((await outcome(id)).status, 'completed');
  await page.locator('.toast-text', { hasText: '2 of 2 approved.' }).last().waitFor();
  // Deny keeps its red button.
  const more = [await askToRun('echo s4'), await askToRun('echo s5')];
  await rowOf(more[0]).locator('.approval-check').click();
  await rowOf(more[1]).locator('.approval-check').click();
  await page.locator('#approvals-deny').click();
  await dialog.waitFor();
  assert.match(await yes.getAttribute('class'), /\bbtn-danger\b/);
  await page.locator('#confirm-no').click();
  await clearQueue();
});

test('a call asked again after the first of two approvals keeps its place and the time it has waited', async () => {
  const policy = async () => (await (await fetch(`${base}/v1/policy`, { headers: { Authorization: `Bearer ${token}` } })).json()).rules;
  const putPolicy = async (rules) => {
    const resp = await fetch(`${base}/v1/policy`, { method: 'PUT', headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' }, body: JSON.stringify({ rules }) });
    assert.equal(resp.status, 200, await resp.text());
  };
  const before = await policy();
  await putPolicy([...before, { principal: '*', server: 'taskdeck', tool: 'run_command', arguments: { command: 'echo two*' }, decision: 'ask', approval: { humans: 2 } }]);
  try {
    const alice = await humanToken('alice');
    const two = await askToRun('echo two people');
    await new Promise((r) => setTimeout(r, 3000));
    const later = await askToRun('echo asked later');
    await rowOf(later).waitFor();
    // Alice approves first: the call is asked again, for a second person.
    await decideAs(alice, two, 'approve');
    await rowOf(two).locator('.approval-quorum', { hasText: '1 of 2' }).waitFor();
    assert.deepEqual(await page.$$eval('#approvals-list .approval', (els) => els.map((e) => e.dataset.taskId)), [two, later], 'it keeps its place');
    const waited = /^waiting (\d+(?:\.\d+)?)s$/.exec(await rowOf(two).locator('.approval-wait').textContent());
    assert.ok(waited && Number(waited[1]) >= 3, `it waited since first asked: ${waited && waited[0]}`);
  } finally {
    await putPolicy(before);
    await clearQueue();
  }
});

test('the outcome of a decision that could not be sent goes once the page is live again', async () => {
  const id = await askToRun('echo offline');
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  try {
    const p = await context.newPage();
    p.on('pageerror', (e) => pageErrors.push(e.message));
    // The stream is down, and the decision does not get through.
    await p.route('**/v1/events**', (route) => route.fulfill({ status: 503, body: 'down for the test' }));
    await p.route('**/v1/approvals/decide', (route) => route.abort());
    await p.goto(`${base}/#token=${encodeURIComponent(token)}`);
    await p.locator('#conn[data-state="reconnecting"]').waitFor();
    await p.locator(`#approvals-list .approval[data-task-id="${id}"] .approval-approve`).click();
    const failed = p.locator('.toast-text', { hasText: 'Could not send the decision' });
    await failed.waitFor();
    assert.match(await failed.textContent(), /Nothing was decided\.$/);
    // Back: the stale notice goes at once, and the page says what to do.
    await p.unroute('**/v1/events**');
    await p.locator('#conn[data-state="open"]').waitFor({ timeout: 20_000 });
    await failed.waitFor({ state: 'detached', timeout: 1500 });
    await p.locator('.toast-text', { hasText: 'Connected again' }).waitFor();
  } finally {
    await context.close();
  }
  await clearQueue();
});

test('with the event stream down, a call approved in its task’s form shows its answer in the input rounds', async () => {
  const id = await askToRun('echo while offline');
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  try {
    const p = await context.newPage();
    p.on('pageerror', (e) => pageErrors.push(e.message));
    await p.route('**/v1/events**', (route) => route.fulfill({ status: 503, body: 'down for the test' }));
    await p.goto(`${base}/#token=${encodeURIComponent(token)}`);
    await p.locator('#conn[data-state="reconnecting"]').waitFor();
    await p.evaluate((taskId) => {
      window.location.hash = `#task=${taskId}`;
    }, id);
    const round = p.locator('#detail .round').first();
    await round.locator('.pill', { hasText: 'Waiting for an answer' }).waitFor();
    await p.locator('#detail .prompt-card[data-key="approve-command"]').getByRole('button', { name: 'Approve', exact: true }).click();
    // No event says the question was answered: the pane reads the task again after its answer,
    // and the queue is read again (its row goes).
    await round.locator('.pill', { hasText: /^Approved by admin$/ }).waitFor({ timeout: 10_000 });
    await p.locator(`#approvals-list .approval[data-task-id="${id}"]`).waitFor({ state: 'detached', timeout: 10_000 });
    assert.match(resultText(await outcome(id)), /while offline/);
  } finally {
    await context.close();
  }
});

test('a call carrying an id past 2^53 is shown, edited and approved with its digits as the agent sent them', async () => {
  // A Discord channel id: JSON.parse would read 1234567890123456800.
  const ID = '1234567890123456789';
  const event = permissionRequest().replace('"tool_name": "Bash"', '"tool_name": "mcp__discord__send_message"').replace(/"tool_input": \{[^}]*\}/, `"tool_input": {"channel_id": ${ID}, "content": "deploy done"}`);
  assert.match(event, new RegExp(`"channel_id": ${ID}`));
  const hook = await claudeCodeHook('claude-code-ids', event);

  const approval = await waitFor(async () => (await pending()).find((a) => a.server === 'discord' && a.tool === 'send_message'), 'the prompt in the queue');
  const row = rowOf(approval.taskId);
  await row.locator('.approval-summary').click();
  assert.match(await row.locator('.approval-args-full').textContent(), new RegExp(`"channel_id": ${ID},`));
  // The pane shows it whole too.
  await page.evaluate((id) => {
    window.location.hash = `#task=${id}`;
  }, approval.taskId);
  const args = page.locator('#detail section', { has: page.locator('h3', { hasText: /^Arguments$/ }) }).locator('.json');
  await waitFor(async () => (await args.textContent()).includes(`"channel_id": ${ID}`), 'the id whole in the pane');
  // Edited elsewhere in the queue's editor, the id goes back as it came.
  const editor = row.locator('.approval-json');
  const text = await editor.inputValue();
  assert.match(text, new RegExp(`"channel_id": ${ID}`));
  await editor.fill(text.replace('deploy done', 'deploy finished'));
  await row.locator('.approval-approve-edited').click();
  assert.equal(await hook.exited, 0);
  assert.match(hook.printed(), new RegExp(`"updatedInput":\\{[^}]*"channel_id":${ID}[,}]`), hook.printed());
  assert.match(hook.printed(), /"content":"deploy finished"/);
  await row.waitFor({ state: 'detached' });
  await page.locator('#task-list').focus();
  await page.keyboard.press('Escape');
});

test('a float past 2^53 shows with its exponent and is approved as asked from the editor; a typed id past 64 bits is refused', async () => {
  const event = permissionRequest().replace('"tool_name": "Bash"', '"tool_name": "mcp__metrics__record"').replace(/"tool_input": \{[^}]*\}/, '"tool_input": {"ratio": 1.2345678901234567e19, "label": "q3"}');
  const hook = await claudeCodeHook('claude-code-floats', event);
  const approval = await waitFor(async () => (await pending()).find((a) => a.server === 'metrics' && a.tool === 'record'), 'the prompt in the queue');
  const row = rowOf(approval.taskId);
  await row.locator('.approval-summary').click();
  // As the float it is, not as digits nobody sent (12345678901234567000).
  assert.match(await row.locator('.approval-args-full').textContent(), /"ratio": 1\.2345678901234567e\+19,/);
  const editor = row.locator('.approval-json');
  const asked = await editor.inputValue();
  // A whole number past 64 bits cannot be carried as typed: refused in the page.
  await editor.fill(asked.replace('"q3"', '123456789012345678901234'));
  await row.locator('.approval-approve-edited').click();
  await row.getByText(/123456789012345678901234 is past the whole numbers Taskdeck keeps exactly/).waitFor();
  // Put back as asked and sent from the editor: the call as asked, said so, and no updatedInput.
  await editor.fill(asked);
  await editor.press('Control+Enter');
  const toast = page.locator('.toast-text', { hasText: 'label: q3' });
  await toast.waitFor();
  assert.match(await toast.textContent(), /^Approved “[^”]*”\.$/);
  assert.equal(await hook.exited, 0);
  const answer = JSON.parse(hook.printed());
  assert.equal(answer.hookSpecificOutput.decision.behavior, 'allow');
  assert.equal(answer.hookSpecificOutput.decision.updatedInput, undefined, hook.printed());
  await row.waitFor({ state: 'detached' });
});

test('at 420 px, Escape in a question opened from the queue closes it and goes back to its row; a group shows its command', async () => {
  const wide = page.viewportSize();
  await page.setViewportSize({ width: 420, height: 800 });
  try {
    const taskId = await askQuestion('Rotate the staging keys?');
    await rowOf(taskId).locator('.approval-summary').click();
    const card = page.locator('.prompt-card[data-key="approval"]');
    await card.waitFor();
    await waitFor(async () => card.evaluate((el) => el.contains(document.activeElement)), 'the focus in the question');
    // The detail takes the whole window here: the queue is out of sight until it closes.
    assert.equal(await page.locator('#approvals-list').isVisible(), false);
    await page.keyboard.press('Escape');
    await waitFor(async () => (await focused()) === taskId, 'the focus back on the question’s row');
    assert.equal(await page.locator('#approvals-list').isVisible(), true);
    await clearQueue();
    // A group of identical calls gives its command a line of its own, as a single call does.
    const command = 'ls -la /srv/releases/2026-12-07/build-artifacts';
    for (let i = 0; i < 3; i++) await askToRun(command);
    const toggle = page.locator('#approvals-list .approval-group .approval-group-toggle');
    await toggle.waitFor();
    const shown = await toggle.locator('.approval-args').evaluate((el) => el.clientWidth);
    const line = await toggle.evaluate((el) => el.clientWidth);
    assert.ok(shown >= 0.9 * line, `the command has ${shown} of the row's ${line} px`);
    assert.ok(await toggle.locator('.approval-tool').evaluate((el) => el.clientWidth >= el.scrollWidth), 'the tool is cut');
    await clearQueue();
  } finally {
    await page.setViewportSize(wide);
  }
});

test('the page logged no errors', () => {
  assert.deepEqual(pageErrors, []);
});

test('a Claude Code permission prompt, edited in the window, reaches Claude Code as updatedInput', async () => {
  const hook = await claudeCodeHook('claude-code', permissionRequest());

  const approval = await waitFor(async () => (await pending()).find((a) => a.server === 'claude-code' && a.tool === 'Bash'), 'the Bash prompt in the queue');
  assert.equal(approval.principal, 'claude-code');
  const row = rowOf(approval.taskId);
  await row.locator('.approval-summary').click();
  const asked = JSON.parse(await row.locator('.approval-args-full').textContent());
  assert.equal(asked.command, 'rm -rf build');
  await row.locator('.approval-json').fill(JSON.stringify({ ...asked, command: 'rm -rf build/cache' }));
  await row.locator('.approval-approve-edited').click();

  assert.equal(await hook.exited, 0);
  const answer = JSON.parse(hook.printed());
  assert.equal(answer.hookSpecificOutput.hookEventName, 'PermissionRequest');
  assert.equal(answer.hookSpecificOutput.decision.behavior, 'allow');
  assert.equal(answer.hookSpecificOutput.decision.updatedInput.command, 'rm -rf build/cache');
  await row.waitFor({ state: 'detached' });
});
