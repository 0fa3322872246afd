// Re-running and cleaning up in headless Chromium against the real `taskdeck serve`: a finished
// run_command task runs again from its detail (a new task, decided by the policy again), and
// the confirmation of a `taskdeck run` job's shows its command line and directory; one finished
// task is deleted from its detail, and "Clear finished…" deletes every finished task after
// asking (it says how many, and under a search that it ignores it), leaving the running one;
// after a re-run the list's cursor is on the new task, the open one. The list follows through the event stream.
// A task whose arguments and result the event stream carries cut to size (`abridged`) shows
// them whole in its detail and in its re-run's confirmation; under a search, a task that matches
// only in the part cut stays listed, and a new one shows.
//
//   cd tests/browser && npm ci && node --test task-actions.test.mjs
//   TASKDECK_BIN=/path/to/taskdeck  CHROMIUM=/path/to/chromium

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { openUi, startServer, tearDown, waitFor, BIN, CHROMIUM } from './harness.mjs';


let server;
let base;
let token;
let tmp;
let browser;
let page;
const pageErrors = [];

/** Starts `run_command` through the jobs API (`POST /v1/jobs`); resolves with its task id. */
async function runCommand(command) {
  const resp = await fetch(`${base}/v1/jobs`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ tool: 'run_command', arguments: { command } }),
  });
  assert.equal(resp.status, 202, await resp.clone().text());
  return (await resp.json()).taskId;
}

/** POSTs `body` as JSON to `url` (a /v1 path) as the admin; resolves with the answer, which must be a success. */
async function post(url, body) {
  const resp = await fetch(`${base}${url}`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await resp.text();
  assert.ok(resp.ok, text);
  return JSON.parse(text);
}

async function apiTask(taskId) {
  const resp = await fetch(`${base}/v1/tasks/${taskId}`, { headers: { Authorization: `Bearer ${token}` } });
  return resp.status === 200 ? (await resp.json()).task : null;
}

const row = (taskId) => page.locator('#task-list .row:not([hidden])', { has: page.locator(`.row-id[title="${taskId}"]`) });

before(async () => {
  assert.ok(fs.existsSync(BIN), `taskdeck binary not found at ${BIN}`);
  const started = await startServer(BIN);
  server = started.child;
  base = started.url;
  tmp = started.dir;
  token = fs.readFileSync(started.tokenFile, 'utf8').trim();
  // Commands run at once under this policy (the re-run is decided by it again).
  fs.writeFileSync(path.join(tmp, 'cfg', 'policy.json'), JSON.stringify({ rules: [
    { principal: '*', server: 'taskdeck', tool: 'run_command', arguments: { command: 'echo *' }, decision: 'allow' },
    { principal: '*', server: 'taskdeck', tool: 'run_command', arguments: { command: 'sleep *' }, decision: 'allow' },
    { principal: '*', server: 'taskdeck', tool: 'run_command', arguments: { command: 'true two people' }, decision: 'ask', approval: { humans: 2 } },
  ] }));
  ({ browser, page } = await openUi({ chromium, executablePath: CHROMIUM, base, token, pageErrors }));
});

after(() => tearDown({ browser, server, tmp }));

test('a call that needs two people, approved by this one, is not offered to them again', async () => {
  const id = await runCommand('true two people');
  await waitFor(async () => (await apiTask(id))?.status === 'input_required', 'the approval to be asked');
  const resp = await fetch(`${base}/v1/approvals/decide`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ items: [{ taskId: id }], decision: 'approve' }),
  });
  assert.equal(resp.status, 200);
  await waitFor(async () => Object.keys((await apiTask(id))?.inputRequests || {}).some((k) => k.endsWith('#2')), 'the second person to be asked');
  await row(id).click();
  const card = page.locator('#detail .prompt-card');
  await card.waitFor();
  await card.getByText('You approved this call already: it waits for another person to approve it.').waitFor();
  assert.equal(await card.locator('button', { hasText: /^(Approve|Accept)$/ }).count(), 0, 'no Approve to press again');
  await fetch(`${base}/v1/tasks/${id}/cancel`, { method: 'POST', headers: { Authorization: `Bearer ${token}` } });
});

test('a finished command runs again from its detail, and a finished task is deleted', async () => {
  const first = await runCommand('echo again');
  await waitFor(async () => (await apiTask(first))?.status === 'completed', 'the command to finish');
  await row(first).click();
  const rerun = page.locator('#detail .detail-rerun');
  await rerun.waitFor();
  await rerun.click();
  await page.locator('#confirm-yes', { hasText: 'Run again' }).click();
  // The detail moves to the new task, which the policy allows at once.
  const second = await waitFor(async () => {
    const id = await page.evaluate(() => decodeURIComponent((window.location.hash.match(/task=([^&]+)/) || [])[1] || ''));
    return id && id !== first && id;
  }, 'the new task to open');
  await waitFor(async () => (await apiTask(second))?.status === 'completed', 'the re-run to finish');
  assert.equal((await apiTask(second)).arguments.command, 'echo again');
  // The list's cursor followed: one row is highlighted, the new task's, which is the open one.
  await row(second).waitFor();
  await waitFor(async () => (await page.locator('#task-list .row.open:not([hidden])').count()) === 1, 'the new task\'s row open');
  const marked = await page.locator('#task-list .row:not([hidden])').evaluateAll((rows) =>
    rows.filter((r) => r.classList.contains('active') || r.classList.contains('open')).map((r) => ({ id: r.querySelector('.row-id').title, active: r.classList.contains('active'), open: r.classList.contains('open') })),
  );
  assert.deepEqual(marked, [{ id: second, active: true, open: true }], 'the cursor is on the opened task, not left on the old one');

  // A running task has no Delete; the finished one has, and goes after the confirmation.
  await page.locator('#detail .detail-delete:not([hidden])').click();
  await page.locator('#confirm-yes', { hasText: 'Delete task' }).click();
  await row(second).waitFor({ state: 'detached' });
  assert.equal(await apiTask(second), null, 'deleted on the server');
  assert.ok(await apiTask(first), 'the other task stays');
});

test('"Run again…" on a taskdeck run job shows the command line and directory it runs', async () => {
  const resp = await fetch(`${base}/v1/jobs`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ external: { name: 'build', command: ['sh', '-c', 'echo built'], cwd: tmp, heartbeatMs: 600_000 } }),
  });
  assert.equal(resp.status, 202);
  const id = (await resp.json()).taskId;
  await fetch(`${base}/v1/jobs/${id}/report`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ result: { content: [{ type: 'text', text: 'built' }] } }),
  });
  await waitFor(async () => (await apiTask(id))?.status === 'completed', 'the job to finish');
  await row(id).click();
  await page.locator('#detail .detail-rerun:not([hidden])').click();
  const body = page.locator('#confirm-body');
  await body.locator('.rerun-command', { hasText: "sh -c 'echo built'" }).waitFor();
  assert.equal(await body.locator('.rerun-cwd code').textContent(), tmp);
  // Backing out runs nothing.
  await page.locator('#confirm-no').click();
  assert.equal(await page.locator('#confirm-dialog[open]').count(), 0);
});

test('a task the event stream carries cut to size shows whole in its detail and its re-run', async () => {
  const word = `${'a'.repeat(3000)}-END`;
  const { taskId: id } = await post('/v1/jobs', { external: { name: 'long line', command: ['echo', word], heartbeatMs: 600_000 } });
  await row(id).click();
  const detail = page.locator('#detail');
  await detail.locator('.json', { hasText: word }).waitFor();
  // Each report's event carries the arguments cut; the pane keeps them whole.
  await post(`/v1/jobs/${id}/report`, { progress: { current: 1, total: 2, message: 'halfway there' } });
  await detail.locator('.detail-progress', { hasText: 'halfway there' }).waitFor();
  assert.ok((await detail.locator('.json').first().textContent()).includes(word), 'the arguments stay whole');
  // The event that ends it carries its result cut too: the pane shows it whole.
  const output = `${'o'.repeat(6000)}\nDONE`;
  await post(`/v1/jobs/${id}/report`, { result: { content: [{ type: 'text', text: output }] } });
  await detail.locator('.text-block', { hasText: 'DONE' }).waitFor();
  assert.equal(await detail.locator('.text-block', { hasText: 'DONE' }).textContent(), output);
  assert.equal(await detail.locator('button[aria-label="Copy the text result"]').count(), 1);
  // "Run again…" confirms the command whole.
  await detail.locator('.detail-rerun:not([hidden])').click();
  await page.locator('#confirm-body .rerun-command', { hasText: word }).waitFor();
  await page.locator('#confirm-no').click();
});

test('a search keeps and finds tasks that match only in the part their events carry cut', async () => {
  const blob = (word) => `${'x'.repeat(5000)} ${word} ${'y'.repeat(5000)}`;
  const { taskId: first } = await post('/v1/jobs', { external: { name: 'middle one', blob: blob('MIDONLY123'), heartbeatMs: 600_000 } });
  await page.locator('#search').fill('MIDONLY123');
  await row(first).waitFor();
  // Its next change carries the blob cut: the row stays.
  await post(`/v1/jobs/${first}/report`, { progress: { current: 1, total: 2, message: 'still matching' } });
  await row(first).filter({ hasText: 'still matching' }).waitFor();
  // A new task matching only in its middle shows too, once the search is read again.
  const { taskId: second } = await post('/v1/jobs', { external: { name: 'middle two', blob: blob('MIDONLY123'), heartbeatMs: 600_000 } });
  await row(second).waitFor({ timeout: 5000 });
  await page.locator('#list-footer', { hasText: /^2 tasks$/ }).waitFor();
  assert.equal(await row(first).count(), 1);
  // One created while the list is paused shows once it runs again.
  await page.locator('#pause-btn').click();
  await page.locator('#pause-btn[aria-pressed="true"]').waitFor();
  const { taskId: third } = await post('/v1/jobs', { external: { name: 'middle three', blob: blob('MIDONLY123'), heartbeatMs: 600_000 } });
  await page.waitForTimeout(1500);
  assert.equal(await row(third).count(), 0, 'a paused list takes no rows');
  await page.locator('#pause-btn[aria-pressed="true"]').click();
  await row(third).waitFor({ timeout: 5000 });
  for (const id of [first, second, third]) await post(`/v1/jobs/${id}/report`, { cancelled: true });
  await page.locator('#search').fill('');
});

test('"Clear finished…" deletes every finished task after asking and keeps the running one', async () => {
  const done = await runCommand('echo done');
  const running = await runCommand('sleep 30');
  await waitFor(async () => (await apiTask(done))?.status === 'completed', 'the short command to finish');
  await row(running).waitFor();
  await page.locator('#clear-finished').click();
  // Backing out deletes nothing.
  await page.locator('#confirm-no').click();
  assert.ok(await apiTask(done));
  // It says how many it deletes: every finished task, also while a search narrows the list.
  const counts = (await (await fetch(`${base}/v1/tasks?limit=1`, { headers: { Authorization: `Bearer ${token}` } })).json()).counts;
  const finished = (counts.completed || 0) + (counts.failed || 0) + (counts.cancelled || 0);
  assert.ok(finished >= 2, JSON.stringify(counts));
  await page.locator('#search').fill('echo done');
  await page.locator('#list-footer', { hasText: /^1 task$/ }).waitFor();
  await page.locator('#clear-finished').click();
  await page.locator('#confirm-title', { hasText: `Clear all ${finished} finished tasks?` }).waitFor();
  // Under a search it says that it ignores it: "all N" is not the rows on screen.
  await page.locator('#confirm-body', { hasText: `This ignores the search and filters: it is not only the tasks the list shows now, but all ${finished}.` }).waitFor();
  assert.doesNotMatch(await page.locator('#confirm-body').textContent(), /you can see/);
  await page.locator('#confirm-no').click();
  // The dialog's close event (a task after the click) gives focus back to the button: typing
  // before it would lose keys to that move.
  await page.waitForFunction(() => document.activeElement?.id === 'clear-finished');
  await page.locator('#search').fill('');
  await row(running).waitFor();
  await page.locator('#clear-finished').click();
  await page.locator('#confirm-title', { hasText: `Clear all ${finished} finished tasks?` }).waitFor();
  assert.doesNotMatch(await page.locator('#confirm-body').textContent(), /ignores the search/, 'no note without a search');
  await page.locator('#confirm-yes', { hasText: `Clear ${finished} finished` }).click();
  await page.locator('.toast-text', { hasText: /^Deleted \d+ tasks?\.$/ }).waitFor();
  await row(done).waitFor({ state: 'detached' });
  assert.equal(await apiTask(done), null);
  assert.equal((await apiTask(running)).status, 'working');
  await fetch(`${base}/v1/tasks/${running}/cancel`, { method: 'POST', headers: { Authorization: `Bearer ${token}` } });
});

test('the page logged no errors', () => {
  assert.deepEqual(pageErrors, []);
});
