// End-to-end test of the Taskdeck web UI: the real `taskdeck serve` binary, a real agent
// talking MCP over HTTP, and the page in headless Chromium (Debian's /usr/bin/chromium).
//
//   cd tests/browser && npm ci && node --test
//   TASKDECK_BIN=/path/to/taskdeck node --test      (default: target/debug/taskdeck)
//   CHROMIUM=/path/to/chromium                      (default: /usr/bin/chromium)

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { startServer as startServerIn, tearDown, waitFor, BIN, CHROMIUM, repo } from './harness.mjs';

const ARTIFACTS = path.join(repo, 'test-artifacts');
const PROTOCOL = '2026-07-28';

let server;
let base;
let token;
let tmp;
let browser;
let page;
const pageErrors = [];

// ---------------------------------------------------------------- helpers

/** Starts a server with the conformance fixtures (and `extra` flags); see harness.mjs. */
function startServer(extra = []) {
  return startServerIn(BIN, ['--conformance-fixtures', ...extra]);
}

let rpcId = 0;
/** One MCP request as an agent would send it (protocol 2026-07-28 with the tasks extension). */
async function mcp(method, name, params, bearer = token) {
  const body = {
    jsonrpc: '2.0',
    id: ++rpcId,
    method,
    params: {
      ...params,
      _meta: {
        'io.modelcontextprotocol/protocolVersion': PROTOCOL,
        'io.modelcontextprotocol/clientCapabilities': { extensions: { 'io.modelcontextprotocol/tasks': {} } },
      },
    },
  };
  const resp = await fetch(`${base}/mcp`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      'MCP-Protocol-Version': PROTOCOL,
      'Mcp-Method': method,
      'Mcp-Name': name,
      Authorization: `Bearer ${bearer}`,
    },
    body: JSON.stringify(body),
  });
  const json = await resp.json();
  if (json.error) throw new Error(`${method}: ${json.error.code} ${json.error.message}`);
  return json.result;
}

/** An agent starts a task; returns its id. */
async function startTask(tool, args) {
  const r = await mcp('tools/call', tool, { name: tool, arguments: args });
  assert.equal(r.resultType, 'task', `${tool} should run as a task`);
  return r.taskId;
}

/** The agent's view of a task (MCP tasks/get). */
async function agentGet(taskId) {
  return mcp('tasks/get', taskId, { taskId });
}

/** The /v1 API's view of a task. */
async function apiTask(taskId) {
  const resp = await fetch(`${base}/v1/tasks/${taskId}`, { headers: { Authorization: `Bearer ${token}` } });
  assert.equal(resp.status, 200);
  return (await resp.json()).task;
}

/** A task's row on screen, found by the full id its short id carries as a tooltip. */
const row = (taskId) => page.locator('#task-list .row:not([hidden])', { has: page.locator(`.row-id[title="${taskId}"]`) });

/** Task ids of the rows on screen, in order. */
async function visibleRowIds() {
  return page.$$eval('#task-list .row:not([hidden])', (rows) =>
    rows
      .map((r) => ({ y: new DOMMatrixReadOnly(getComputedStyle(r).transform).m42, id: r.querySelector('.row-id').title }))
      .sort((a, b) => a.y - b.y)
      .map((r) => r.id),
  );
}

/** HTTP error statuses a test provokes on purpose (the browser logs each as a console error). */
const expectedHttpErrors = new Map();
function expectHttpError(status) {
  expectedHttpErrors.set(status, (expectedHttpErrors.get(status) || 0) + 1);
}

/**
 * Records the answers to page `p`'s reads of task `taskId`'s output log, in the order they came:
 * `{status, exists, complete}` each (the last two once the body is in). `stop()` ends the
 * recording and resolves when every body is in.
 */
function recordLogReads(p, taskId) {
  const reads = [];
  const bodies = [];
  const onResponse = (resp) => {
    if (!new URL(resp.url()).pathname.endsWith(`/v1/tasks/${taskId}/log`)) return;
    const read = { status: resp.status() };
    reads.push(read);
    bodies.push(
      resp.json().then(
        (body) => Object.assign(read, { exists: body.exists, complete: body.complete }),
        () => {},
      ),
    );
  };
  p.on('response', onResponse);
  return {
    reads,
    stop: async () => {
      p.off('response', onResponse);
      await Promise.all(bodies);
    },
  };
}

/** In the page: the text of the line at the top of a scrolled <pre> made of text nodes. */
function lineAtTop(pre) {
  const box = pre.getBoundingClientRect();
  const at = document.caretRangeFromPoint(box.left + 16, box.top + 14);
  let offset = at.startOffset;
  for (let n = at.startContainer.previousSibling; n; n = n.previousSibling) offset += n.textContent.length;
  const text = pre.textContent;
  const start = text.lastIndexOf('\n', offset - 1) + 1;
  const end = text.indexOf('\n', start);
  return text.slice(start, end < 0 ? undefined : end);
}

/** Page errors and console errors fail the last test. */
function watchErrors(p) {
  p.on('pageerror', (e) => pageErrors.push(e.message));
  p.on('console', (m) => {
    if (m.type() !== 'error') return;
    const status = /^Failed to load resource: the server responded with a status of (\d+)/.exec(m.text());
    const n = status ? expectedHttpErrors.get(Number(status[1])) || 0 : 0;
    if (n > 0) expectedHttpErrors.set(Number(status[1]), n - 1);
    else pageErrors.push(m.text());
  });
}

/** A second tab (its own sessionStorage) signed in with `bearer`, at `fragment` after the token. */
async function openTab(bearer, fragment = '', contextOptions = {}) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 }, colorScheme: 'light', ...contextOptions });
  if (contextOptions.initScript) await context.addInitScript(contextOptions.initScript);
  const p = await context.newPage();
  watchErrors(p);
  await p.goto(`${base}/#token=${encodeURIComponent(bearer)}${fragment}`);
  await p.locator('#conn[data-state="open"]').waitFor();
  return { context, page: p };
}

/** GET /v1/me with `bearer`. */
async function me(bearer) {
  const resp = await fetch(`${base}/v1/me`, { headers: { Authorization: `Bearer ${bearer}` } });
  assert.equal(resp.status, 200);
  return resp.json();
}

let agentToken = null;

// ---------------------------------------------------------------- setup

before(async () => {
  assert.ok(fs.existsSync(BIN), `taskdeck binary not found at ${BIN} (build it, or set TASKDECK_BIN)`);
  assert.ok(fs.existsSync(CHROMIUM), `Chromium not found at ${CHROMIUM} (apt-get install -y chromium, or set CHROMIUM)`);
  const started = await startServer();
  tmp = started.dir;
  server = started.child;
  base = started.url;
  token = fs.readFileSync(started.tokenFile, 'utf8').trim();
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 }, colorScheme: 'light' });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
  page = await context.newPage();
  watchErrors(page);
  await page.goto(`${base}/#token=${encodeURIComponent(token)}`);
  await page.locator('#conn[data-state="open"]').waitFor();
});

after(() => tearDown({ browser, server, tmp }));

// ---------------------------------------------------------------- tests

test('the token leaves the address bar and the page shows the signed-in principal', async () => {
  assert.ok(!page.url().includes('token='), `token still in URL: ${page.url()}`);
  assert.equal(await page.evaluate(() => sessionStorage.getItem('taskdeck.token')), token);
  await page.locator('#me', { hasText: 'admin' }).waitFor();
});

test('an approval request appears live, is answered in the form, and the agent gets the answer', async () => {
  const taskId = await startTask('request_approval', {
    message: 'Deploy to prod?',
    requestedSchema: { type: 'object', properties: { reason: { type: 'string', minLength: 3 } }, required: ['reason'] },
  });

  // The row and the inbox's entry appear without a reload: an agent's question waits in the
  // approval queue with every other decision (its summary opens the task's form).
  await row(taskId).locator('.badge', { hasText: 'Needs input' }).waitFor();
  const inboxItem = page.locator(`#approvals-list .approval[data-task-id="${taskId}"] .approval-summary`, { hasText: 'Deploy to prod?' });
  await inboxItem.waitFor();
  await waitFor(() => page.locator('#input-announcer').textContent().then((t) => t.includes('Deploy to prod?')), 'the aria-live announcement');

  await inboxItem.click();
  const card = page.locator('.prompt-card[data-key="approval"]');
  await card.waitFor();
  await card.locator('.prompt-message', { hasText: 'Deploy to prod?' }).waitFor();

  // Too short: the browser refuses before anything is sent.
  const reason = card.getByLabel('reason');
  await reason.fill('no');
  await card.getByRole('button', { name: 'Accept' }).click();
  await card.locator('.field-error', { hasText: 'Enter at least 3 characters' }).waitFor();
  assert.equal((await apiTask(taskId)).status, 'input_required', 'nothing was sent');

  await reason.fill('Ship it: tests are green');
  await card.getByRole('button', { name: 'Accept' }).click();

  // The agent polls tasks/get and sees the human's answer.
  const done = await waitFor(async () => {
    const t = await agentGet(taskId);
    return t.status === 'completed' && t;
  }, 'the task to complete');
  assert.deepEqual(done.result.structuredContent, { action: 'accept', content: { reason: 'Ship it: tests are green' } });

  // The prompt vanished, the row and the detail show the outcome, the inbox entry is gone.
  await card.waitFor({ state: 'detached' });
  await row(taskId).locator('.badge', { hasText: 'Completed' }).waitFor();
  await page.locator('#detail .outcome-good', { hasText: 'Completed' }).waitFor();
  await page.locator('#detail .round', { hasText: 'Accepted by admin' }).waitFor();
  await inboxItem.waitFor({ state: 'detached' });
  // The page's own answer is not announced as someone else's (the live change that removes the
  // prompt can come before the answer's response).
  const announced = await page.locator('#announcer').textContent();
  assert.ok(!announced.includes('elsewhere'), `announced: ${announced}`);
});

test('a form field named as a credential is a password box with Show / Hide, and what is typed in it shows nowhere else', async () => {
  const post = (p, body) => fetch(`${base}${p}`, { method: 'POST', headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  const started = await post('/v1/jobs', { external: { name: 'deploy with creds', heartbeatMs: 3600000 } });
  assert.equal(started.status, 202);
  const jobId = (await started.json()).taskId;
  const requestedSchema = {
    type: 'object',
    properties: { user: { type: 'string', title: 'User' }, api_password: { type: 'string', title: 'API password' }, ssh_private_key: { type: 'string', title: 'SSH key' } },
    required: ['user', 'api_password'],
  };
  assert.ok((await post(`/v1/jobs/${jobId}/report`, { inputRequests: { creds: { method: 'elicitation/create', params: { message: 'Credentials for prod?', requestedSchema } } } })).ok);
  await row(jobId).click();
  const card = page.locator('.prompt-card[data-key="creds"]');
  await card.waitFor();
  const user = card.getByLabel('User (required)', { exact: true });
  const password = card.getByLabel('API password (required)', { exact: true });
  const key = card.getByLabel('SSH key', { exact: true });
  assert.deepEqual(await user.evaluate((i) => [i.type, getComputedStyle(i).webkitTextSecurity]), ['textarea', 'none'], 'a field not named as a credential is plain');
  const attrs = (el) => el.evaluate((i) => ({ tag: i.tagName, type: i.getAttribute('type'), autocomplete: i.getAttribute('autocomplete'), spellcheck: i.getAttribute('spellcheck'), masked: getComputedStyle(i).webkitTextSecurity }));
  assert.deepEqual(await attrs(password), { tag: 'INPUT', type: 'password', autocomplete: 'new-password', spellcheck: 'false', masked: 'disc' });
  // A private key keeps its lines: a box of several lines, masked all the same.
  assert.deepEqual(await attrs(key), { tag: 'TEXTAREA', type: null, autocomplete: 'new-password', spellcheck: 'false', masked: 'disc' });
  const secret = `hunter2-${Date.now()}`;
  await user.fill('deployer');
  await password.fill(secret);
  await key.fill('-----BEGIN KEY-----\nabc\n-----END KEY-----');
  // Show shows what was typed, Hide masks it again; the toggle says which.
  const show = card.getByRole('button', { name: 'Show API password' });
  assert.equal(await show.getAttribute('aria-pressed'), 'false');
  await show.click();
  assert.equal(await password.getAttribute('type'), 'text');
  const hide = card.getByRole('button', { name: 'Hide API password' });
  assert.equal(await hide.getAttribute('aria-pressed'), 'true');
  assert.equal(await hide.textContent(), 'Hide');
  assert.equal(await password.inputValue(), secret, 'showing keeps the value');
  await hide.click();
  assert.equal(await password.getAttribute('type'), 'password');
  await card.getByRole('button', { name: 'Show SSH key' }).click();
  assert.equal(await key.evaluate((i) => getComputedStyle(i).webkitTextSecurity), 'none');
  await card.getByRole('button', { name: 'Hide SSH key' }).click();
  assert.equal(await key.evaluate((i) => getComputedStyle(i).webkitTextSecurity), 'disc');
  await card.getByRole('button', { name: 'Accept' }).click();
  // Sent as typed, lines and all...
  const answered = await waitFor(async () => {
    const t = await (await fetch(`${base}/v1/tasks/${jobId}`, { headers: { Authorization: `Bearer ${token}` } })).json();
    const round = (t.inputRounds || []).find((r) => r.key === 'creds' && r.state === 'answered');
    return round && round.response.content;
  }, 'the answer to reach the task');
  assert.deepEqual(answered, { user: 'deployer', api_password: secret, ssh_private_key: '-----BEGIN KEY-----\nabc\n-----END KEY-----' });
  // ...and written out nowhere in the page: not in the notice, nor in the input rounds.
  const round = page.locator('#detail .round', { hasText: 'Accepted by admin' });
  await round.waitFor();
  assert.match(await round.textContent(), /"api_password": "\[redacted\]"/);
  assert.match(await round.textContent(), /"user": "deployer"/);
  await page.locator('#toasts', { hasText: 'Answer sent' }).waitFor();
  const text = await page.evaluate(() => document.body.innerText + [...document.querySelectorAll('[title], [aria-label]')].map((el) => `${el.title} ${el.getAttribute('aria-label')}`).join(' '));
  assert.ok(!text.includes(secret), 'the secret is written nowhere in the page');
  assert.ok(!text.includes('BEGIN KEY'), 'nor the private key');
  assert.ok((await post(`/v1/jobs/${jobId}/report`, { cancelled: true, statusMessage: 'done' })).ok);
});

test('a secret typed in request_approval’s masked box reaches the agent and is written nowhere in the page', async () => {
  const secret = 's3cr3t-value-typed';
  const taskId = await startTask('request_approval', {
    message: 'Deploy config?',
    requestedSchema: { type: 'object', properties: { env: { type: 'string' }, api_token: { type: 'string' } }, required: ['env'] },
  });
  await row(taskId).click();
  const card = page.locator('.prompt-card[data-key="approval"]');
  await card.getByLabel('env').fill('prod');
  await card.getByLabel('api_token', { exact: true }).fill(secret);
  await card.getByRole('button', { name: 'Accept' }).click();
  const done = await waitFor(async () => {
    const t = await agentGet(taskId);
    return t.status === 'completed' && t;
  }, 'the task to complete');
  assert.deepEqual(done.result.structuredContent, { action: 'accept', content: { env: 'prod', api_token: secret } });
  assert.ok(done.result.content[0].text.includes(secret), 'the agent reads it in the text too');
  await page.locator('#detail .outcome-good', { hasText: 'Completed' }).waitFor();
  await row(taskId).locator('.badge', { hasText: 'Completed' }).waitFor();
  await page.locator('#detail .round', { hasText: 'Accepted by admin' }).waitFor();
  await waitFor(async () => (await row(taskId).textContent()).includes('"api_token":"[redacted]"'), 'the row to say how it was answered');
  const text = await page.evaluate(() => document.body.innerText + [...document.querySelectorAll('[title], [aria-label]')].map((el) => `${el.title} ${el.getAttribute('aria-label')}`).join(' '));
  assert.ok(!text.includes(secret), 'the secret is written nowhere in the page');
});

test('a prompt answered elsewhere disappears live', async () => {
  const taskId = await startTask('confirm_delete', { filename: 'old.log' });
  await row(taskId).click();
  const card = page.locator('.prompt-card[data-key="confirm-delete"]');
  await card.waitFor();
  // Someone else (a script, another window) answers through the API.
  const resp = await fetch(`${base}/v1/tasks/${taskId}/input`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ inputResponses: { 'confirm-delete': { action: 'accept', content: { confirm: true } } } }),
  });
  assert.equal(resp.status, 200);
  await card.waitFor({ state: 'detached' });
  await row(taskId).locator('.badge', { hasText: 'Completed' }).waitFor();
});

test('cancel from the UI (after confirming) ends a long task as cancelled', async () => {
  const taskId = await startTask('slow_compute', { seconds: 60, label: 'to-cancel' });
  await row(taskId).click();
  await page.locator('#detail .detail-title', { hasText: 'slow_compute' }).waitFor();
  await page.locator('#detail .badge', { hasText: 'Working' }).waitFor();

  // Backing out of the dialog keeps it running.
  await page.getByRole('button', { name: 'Cancel task…' }).click();
  const dialog = page.locator('#confirm-dialog');
  await dialog.waitFor();
  await dialog.getByRole('button', { name: 'Keep running' }).click();
  await dialog.waitFor({ state: 'hidden' });
  assert.equal((await apiTask(taskId)).status, 'working');

  await page.getByRole('button', { name: 'Cancel task…' }).click();
  await dialog.getByRole('button', { name: 'Cancel task' }).click();
  const t = await waitFor(async () => {
    const task = await apiTask(taskId);
    return task.status === 'cancelled' && task;
  }, 'the task to be cancelled');
  assert.equal(t.status, 'cancelled');
  await page.locator('#detail .badge', { hasText: 'Cancelled' }).waitFor();
  await row(taskId).locator('.badge', { hasText: 'Cancelled' }).waitFor();
});

test('search and the status filter narrow the list', async () => {
  const label = `needle-${Date.now()}`;
  const found = await startTask('slow_compute', { seconds: 0.2, label });
  const failed = await startTask('protocol_error_job', {});
  await waitFor(async () => (await apiTask(found)).status === 'completed' && (await apiTask(failed)).status === 'failed', 'both tasks to finish');
  await row(failed).locator('.badge', { hasText: 'Failed' }).waitFor();
  assert.ok((await visibleRowIds()).length > 2);

  // Free text (server-side q, debounced).
  await page.keyboard.press('Escape'); // leave whatever had focus
  await page.locator('#task-list').focus();
  await page.keyboard.press('/');
  assert.equal(await page.evaluate(() => document.activeElement.id), 'search');
  await page.keyboard.type(label);
  await waitFor(async () => {
    const ids = await visibleRowIds();
    return ids.length === 1 && ids[0] === found;
  }, 'the search to leave only the matching task');
  await page.locator('#search').fill('');

  // Status filter, with its count.
  const chip = page.locator('#status-filters .chip[data-status="failed"]');
  await waitFor(async () => (await chip.locator('.chip-count').textContent()) === '1', 'the failed count');
  await chip.click();
  await waitFor(async () => {
    const ids = await visibleRowIds();
    return ids.length === 1 && ids[0] === failed;
  }, 'the filter to leave only the failed task');
  assert.equal(await chip.getAttribute('aria-pressed'), 'true');
  await row(failed).click();
  await page.locator('#detail .outcome-bad', { hasText: 'Failed' }).waitFor();
  await page.locator('#detail .kv', { hasText: '-32603' }).waitFor();

  await page.locator('#status-filters .chip[data-status="all"]').click();
  await waitFor(async () => (await visibleRowIds()).length > 2, 'all tasks to come back');
});

test('under a search the “Needs input” chip counts the matching tasks and says so; the inbox, which lists every waiting task, says the search does not filter it', async () => {
  const approvalId = await startTask('request_approval', { message: 'Ship the release?' });
  await page.locator(`#approvals-list .approval[data-task-id="${approvalId}"]`).waitFor();
  const chip = page.locator('#status-filters .chip[data-status="input_required"]');
  const note = page.locator('#inbox-scope');
  await waitFor(async () => Number(await chip.locator('.chip-count').textContent()) >= 1, 'the chip to count the waiting task');
  assert.equal(await note.isVisible(), false, 'no note while the list is not narrowed');
  assert.equal(await chip.getAttribute('title'), '');
  const inboxCount = await page.locator('#inbox-count').textContent();
  // A search no waiting task matches: the chip's 0 is the rows it would show, and says so.
  const q = `no-such-task-${Date.now()}`;
  await page.locator('#search').fill(q);
  await waitFor(async () => (await chip.locator('.chip-count').textContent()) === '0', 'the chip to count the matching tasks');
  assert.equal(await chip.getAttribute('aria-label'), `Needs input: 0 tasks matching “${q}”`);
  assert.match(await chip.getAttribute('title'), /^Needs input: 0 tasks matching “no-such-task-\d+”\. The “Needs input” box above lists every task waiting, whatever the search and filters\.$/);
  // The inbox keeps every waiting task, and says why its count is not the chip's.
  await note.waitFor();
  assert.equal(await note.textContent(), 'not filtered by the search');
  assert.match(await note.getAttribute('title'), /lists every task waiting/);
  assert.equal(await page.locator('#inbox-count').textContent(), inboxCount);
  assert.equal(await page.locator(`#approvals-list .approval[data-task-id="${approvalId}"]`).count(), 1);
  // The note reads apart from the uppercase title, whole.
  assert.deepEqual(await note.evaluate((el) => ({ transform: getComputedStyle(el).textTransform, cut: el.scrollWidth > el.clientWidth })), { transform: 'none', cut: false });
  // The search cleared, the note goes and the chip has no tooltip of scope.
  await page.locator('#search').fill('');
  await note.waitFor({ state: 'hidden' });
  await waitFor(async () => (await chip.getAttribute('title')) === '' && Number(await chip.locator('.chip-count').textContent()) >= 1, 'the chip back to every task');
  const decided = await fetch(`${base}/v1/approvals/decide`, { method: 'POST', headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' }, body: JSON.stringify({ items: [{ taskId: approvalId }], decision: 'deny' }) });
  assert.ok(decided.ok, await decided.text());
});

test('the empty detail pane shows its keys as keys, also once the open task was hidden by a search and closed', async () => {
  const emptyHint = () => page.locator('#detail .detail-empty').evaluate((el) => ({ keys: [...el.querySelectorAll('kbd')].map((k) => k.textContent), html: el.innerHTML }));
  await page.locator('#task-list').focus();
  await page.keyboard.press('Escape');
  await page.locator('#detail .detail-empty').waitFor();
  const first = await emptyHint();
  assert.deepEqual(first.keys, ['j', 'k', 'Enter', '?']);
  const label = `kbd-hint-${Date.now()}`;
  const taskId = await startTask('slow_compute', { seconds: 0.1, label });
  await row(taskId).click();
  await page.locator('#detail.open .detail-title-row').waitFor();
  // A search the open task does not match hides its row; Escape in the list then closes its detail.
  await page.locator('#search').fill(`${label}-nothing-matches`);
  await row(taskId).waitFor({ state: 'detached' });
  await page.locator('#task-list').focus();
  await page.keyboard.press('Escape');
  await page.locator('#detail .detail-empty').waitFor();
  assert.deepEqual(await emptyHint(), first);
  await page.locator('#search').fill('');
  await row(taskId).waitFor();
});

test('pause freezes the list and says how many updates wait', async () => {
  await page.getByRole('button', { name: 'Pause updates' }).click();
  const taskId = await startTask('slow_compute', { seconds: 0.3, label: 'while-paused' });
  await page.locator('#pending-note', { hasText: 'waiting' }).waitFor();
  assert.equal(await row(taskId).count(), 0, 'the new task is not shown while paused');
  await page.locator('#pause-btn[aria-pressed="true"]').click();
  await row(taskId).waitFor();
  assert.equal(await page.locator('#pending-note').textContent(), '');
});

test('keyboard: i goes to the queue, Enter opens the waiting task, a accepts the focused prompt, d then Enter declines the next, j/Enter open rows', async () => {
  const taskId = await startTask('multi_input', {});
  // Its questions wait in the approval queue: `i` goes to the queue, Enter opens the task.
  await page.locator(`#approvals-list .approval[data-task-id="${taskId}"]`).first().waitFor();
  await page.locator('#task-list').focus();
  await page.keyboard.press('i');
  await page.keyboard.press('Enter');
  await page.locator('#detail .detail-title', { hasText: 'multi_input' }).waitFor();
  const first = page.locator('.prompt-card[data-key="first-answer"]');
  const second = page.locator('.prompt-card[data-key="second-answer"]');
  await first.waitFor();
  await second.waitFor();

  await first.getByLabel('name', { exact: true }).fill('Ada');
  await first.getByLabel('confirm', { exact: true }).check(); // focus now on a checkbox, not a text field
  await page.keyboard.press('a');
  await first.waitFor({ state: 'detached' });
  // d focuses the next prompt's decline reason box (a reason may go with the "no"); Enter declines.
  await page.keyboard.press('d');
  await waitFor(() => page.evaluate(() => document.activeElement.classList.contains('prompt-decline-reason')), 'the decline reason box');
  await page.keyboard.press('Enter');
  await second.waitFor({ state: 'detached' });

  const done = await waitFor(async () => {
    const t = await agentGet(taskId);
    return t.status === 'completed' && t;
  }, 'multi_input to complete');
  const text = done.result.content[0].text;
  assert.match(text, /"name":"Ada"/);
  assert.match(text, /"confirm":true/);
  const rounds = await fetch(`${base}/v1/tasks/${taskId}`, { headers: { Authorization: `Bearer ${token}` } }).then((r) => r.json());
  assert.deepEqual(
    rounds.inputRounds.map((r) => [r.key, r.response.action, r.answeredBy]).sort(),
    [['first-answer', 'accept', 'admin'], ['second-answer', 'decline', 'admin']],
  );

  // j/k move the highlighted row; Enter opens it.
  await page.locator('#task-list').focus();
  await page.keyboard.press('Home');
  await page.keyboard.press('j');
  const activeId = await page.$eval('#task-list', (el) => document.getElementById(el.getAttribute('aria-activedescendant')).querySelector('.row-id').title);
  assert.equal(activeId, (await visibleRowIds())[1]);
  await page.keyboard.press('Enter');
  await page.locator(`#detail .task-id`, { hasText: activeId }).waitFor();

  // ? shows the shortcut help; Escape closes it.
  await page.keyboard.press('?');
  await page.locator('#help-dialog[open]').waitFor();
  await page.keyboard.press('Escape');
  await page.locator('#help-dialog[open]').waitFor({ state: 'detached' });
});

test('bulk cancel reports partial success', async () => {
  // Two long tasks and one that finishes while the confirmation dialog is open.
  const ids = [
    await startTask('slow_compute', { seconds: 60, label: 'bulk-long-1' }),
    await startTask('slow_compute', { seconds: 60, label: 'bulk-long-2' }),
    await startTask('slow_compute', { seconds: 3, label: 'bulk-short' }),
  ];
  for (const id of ids) await row(id).locator('.badge', { hasText: 'Working' }).waitFor();
  for (const id of ids) await row(id).locator('.row-check').click();
  await page.locator('#bulk-count', { hasText: '3 selected' }).waitFor();
  await page.getByRole('button', { name: 'Cancel selected' }).click();
  const dialog = page.locator('#confirm-dialog');
  await dialog.locator('#confirm-title', { hasText: 'Cancel 3 tasks?' }).waitFor();
  // Each task is named as the list names it.
  for (const label of ['bulk-long-1', 'bulk-long-2', 'bulk-short']) await dialog.locator('.approval-confirm-list li', { hasText: label }).waitFor();
  await waitFor(async () => (await apiTask(ids[2])).status === 'completed', 'the short task to finish', { timeout: 20_000 });
  await dialog.getByRole('button', { name: 'Cancel 3 tasks' }).click();
  await page.locator('.toast', { hasText: '2 of 3 cancel requests accepted; 1 already finished.' }).waitFor();
  await waitFor(async () => {
    const [a, b, c] = await Promise.all(ids.map(apiTask));
    return a.status === 'cancelled' && b.status === 'cancelled' && c.status === 'completed';
  }, 'the long tasks to be cancelled');
  await page.locator('#bulk-bar').waitFor({ state: 'hidden' });
});

test('agent content is shown as text; long text is cut with "Show all"; images come from data: URLs', async () => {
  // The result viewer, fed a hostile and oversized result inside the real page (real CSP).
  const report = await page.evaluate(async () => {
    const { resultView } = await import('/js/result-view.js');
    const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
    const el = resultView(
      {
        content: [
          { type: 'text', text: '<img src=x onerror="window.pwned=1"><script>window.pwned=2</script>' },
          { type: 'text', text: 'x'.repeat(25_000) },
          { type: 'image', data: png, mimeType: 'image/png' },
          { type: 'audio', data: 'AAAA', mimeType: 'audio/wav' },
        ],
        structuredContent: { html: '<b>bold?</b>' },
        isError: false,
      },
      'abc',
    );
    document.body.appendChild(el);
    await new Promise((r) => setTimeout(r, 50));
    const pres = [...el.querySelectorAll('pre')].map((p) => p.textContent);
    const out = {
      pwned: window.pwned ?? null,
      injectedImgs: el.querySelectorAll('img:not(.result-image)').length,
      scripts: el.querySelectorAll('script').length,
      firstText: pres.find((t) => t.includes('onerror')),
      longShown: pres.find((t) => t.startsWith('xxx')).length,
      showAll: [...el.querySelectorAll('button')].map((b) => b.textContent).find((t) => t.startsWith('Show all')),
      image: el.querySelector('img.result-image').getAttribute('src').slice(0, 22),
      imageLoaded: el.querySelector('img.result-image').naturalWidth,
      audio: el.textContent.includes('Audio · audio/wav · 3 B'),
    };
    [...el.querySelectorAll('button')].find((b) => b.textContent.startsWith('Show all')).click();
    out.afterShowAll = [...el.querySelectorAll('pre')].map((p) => p.textContent).find((t) => t.startsWith('xxx')).length;
    el.remove();
    return out;
  });
  assert.equal(report.pwned, null);
  assert.equal(report.injectedImgs, 0);
  assert.equal(report.scripts, 0);
  assert.equal(report.firstText, '<img src=x onerror="window.pwned=1"><script>window.pwned=2</script>');
  assert.equal(report.longShown, 10_000);
  assert.equal(report.showAll, 'Show all (15,000 more characters)');
  assert.equal(report.afterShowAll, 25_000);
  assert.equal(report.image, 'data:image/png;base64,');
  assert.equal(report.imageLoaded, 1);
  assert.equal(report.audio, true);
});

test('the virtualized list keeps about a screenful of rows in the DOM for 100,000 tasks', async () => {
  const report = await page.evaluate(async () => {
    const { TaskList } = await import('/js/tasks-model.js');
    const { ListView, ROW_HEIGHT } = await import('/js/list-view.js');
    const box = document.createElement('div');
    box.style.cssText = 'position:fixed;left:0;top:0;width:600px;height:640px;overflow:auto;z-index:99;background:white';
    const spacer = document.createElement('div');
    spacer.style.position = 'relative';
    box.appendChild(spacer);
    document.body.appendChild(box);
    const tasks = [];
    const t0 = Date.parse('2026-01-01T00:00:00Z');
    for (let i = 0; i < 100_000; i++) {
      const at = new Date(t0 - i * 1000).toISOString();
      tasks.push({ taskId: `task-${String(i).padStart(6, '0')}-x`, status: i % 7 ? 'completed' : 'working', tool: `tool_${i % 13}`, principal: 'bench', createdAt: at, lastUpdatedAt: at, arguments: {} });
    }
    const model = new TaskList();
    model.reset({ tasks, nextCursor: null, counts: {} });
    const view = new ListView(box, spacer, model, { onOpen() {}, onToggle() {}, isSelected: () => false, openTaskId: () => null, onNearEnd() {} });
    const started = performance.now();
    view.render();
    const firstRender = performance.now() - started;
    const scrollStart = performance.now();
    for (let i = 1; i <= 50; i++) {
      box.scrollTop = i * 2000 * ROW_HEIGHT;
      // As the browser does before the next frame: the list learns of scrolling from the event.
      box.dispatchEvent(new Event('scroll'));
      view.render();
    }
    const scrollMs = (performance.now() - scrollStart) / 50;
    const rows = spacer.querySelectorAll('.row').length;
    const top = Math.floor(box.scrollTop / ROW_HEIGHT);
    const shown = [...spacer.querySelectorAll('.row:not([hidden])')].map((r) => r.querySelector('.row-id').title);
    const height = box.scrollHeight;
    box.remove();
    return { rows, firstRender, scrollMs, height, hasTop: shown.includes(tasks[top].taskId) };
  });
  assert.ok(report.rows < 40, `${report.rows} rows in the DOM`);
  assert.equal(report.height, 100_000 * 64);
  assert.ok(report.hasTop, 'the row at the scroll position is rendered');
  assert.ok(report.scrollMs < 16, `a scroll frame took ${report.scrollMs} ms`);
});

test('screenshot of the control room', async () => {
  // A realistic moment: work running, one finished with an error, a rich form waiting.
  const running = await startTask('slow_compute', { seconds: 30, label: 'nightly index rebuild' });
  await startTask('failing_job', {});
  await startTask('confirm_delete', { filename: 'backups-2025.tar.gz' });
  const formTask = await startTask('request_approval', {
    message: 'Deploy build 4812 to production?',
    requestedSchema: {
      type: 'object',
      properties: {
        reason: { type: 'string', title: 'Reason', description: 'Why is it safe to ship now?', minLength: 3 },
        window: { type: 'string', title: 'Deploy window', oneOf: [{ const: 'now', title: 'Right now' }, { const: 'tonight', title: 'Tonight, 22:00' }, { const: 'weekend', title: 'Weekend' }] },
        replicas: { type: 'integer', title: 'Replicas', minimum: 1, maximum: 12, default: 3 },
        canary: { type: 'boolean', title: 'Roll out to a canary first', default: true },
      },
      required: ['reason', 'window'],
    },
  });
  await row(formTask).click();
  await page.locator('.prompt-card[data-key="approval"]').waitFor();
  await page.locator('.prompt-card').getByLabel('Reason').fill('Hotfix for the login timeout; verified on staging');
  await row(running).locator('.progress:not([hidden])').waitFor({ timeout: 10_000 });
  await page.evaluate(() => document.getElementById('toasts').replaceChildren()); // earlier tests' notices
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  const file = path.join(ARTIFACTS, 'ui.png');
  await page.screenshot({ path: file });
  assert.ok(fs.statSync(file).size > 10_000);
});

test('older pages load as the list scrolls (nextCursor)', async () => {
  const label = `page-${Date.now()}`;
  const ids = [];
  for (let i = 0; i < 260; i++) ids.push(await startTask('slow_compute', { seconds: 0.01, label: `${label}-${i}` }));
  await page.locator('#search').fill(label);
  const footer = page.locator('#list-footer');
  // A first page of 50 paints; the next 200 follow at once (the view is near the end of 50).
  await footer.filter({ hasText: '250 loaded · more load as you scroll' }).waitFor();
  assert.deepEqual((await visibleRowIds()).slice(0, 3), [ids[259], ids[258], ids[257]], 'newest first');
  await page.locator('#task-list').evaluate((el) => {
    el.scrollTop = el.scrollHeight;
  });
  await footer.filter({ hasText: '260 tasks' }).waitFor();
  await page.locator('#task-list').evaluate((el) => {
    el.scrollTop = el.scrollHeight;
  });
  await row(ids[0]).waitFor();
  assert.ok((await page.locator('#task-list .row').count()) < 40, 'still virtualized');

  // A new matching task arrives on top while the reader looks at the bottom: nothing moves.
  const topInView = () =>
    page.$eval('#task-list', (el) => {
      const y = Math.floor(el.scrollTop / 64) * 64;
      const r = [...el.querySelectorAll('.row:not([hidden])')].find((x) => new DOMMatrixReadOnly(getComputedStyle(x).transform).m42 === y);
      return r && r.querySelector('.row-id').title;
    });
  const before = await topInView();
  await startTask('slow_compute', { seconds: 0.01, label: `${label}-late` });
  await footer.filter({ hasText: '261 tasks' }).waitFor();
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  assert.equal(await topInView(), before);
  await page.locator('#search').fill('');
  await footer.filter({ hasText: 'more load as you scroll' }).waitFor();
});

test('a task removed when its TTL runs out leaves the list and the counts, live', async () => {
  const other = await startServer(['--default-ttl-ms', '2500']);
  const otherToken = fs.readFileSync(other.tokenFile, 'utf8').trim();
  const tab = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  try {
    watchErrors(tab);
    await tab.goto(`${other.url}/#token=${encodeURIComponent(otherToken)}`);
    await tab.locator('#conn[data-state="open"]').waitFor();
    const job = await fetch(`${other.url}/v1/jobs`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${otherToken}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ tool: 'echo', arguments: { note: 'short-lived' } }),
    }).then((r) => r.json());
    const shown = tab.locator('#task-list .row:not([hidden])', { has: tab.locator(`.row-id[title="${job.taskId}"]`) });
    const completed = tab.locator('#status-filters .chip-completed .chip-count');
    await shown.locator('.badge', { hasText: 'Completed' }).waitFor();
    await waitFor(async () => (await completed.textContent()) === '1', 'the completed count');
    // Swept 2.5 s after creation: the row goes and the count follows, without a reload.
    await shown.waitFor({ state: 'detached', timeout: 15_000 });
    await waitFor(async () => (await completed.textContent()) === '0', 'the completed count after the sweep');
    await tab.locator('#list-footer', { hasText: '0 tasks' }).waitFor();
  } finally {
    await tab.close();
    other.child.kill('SIGTERM');
    await new Promise((r) => other.child.once('exit', r));
    fs.rmSync(other.dir, { recursive: true, force: true });
  }
});

test('a tab left on the address of a Taskdeck that stopped says so, and where to look once it runs again', async () => {
  const first = await startServer();
  const firstToken = fs.readFileSync(first.tokenFile, 'utf8').trim();
  const tab = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  let again = null;
  try {
    // Its requests to the stopped Taskdeck fail, as they must: only script errors count here.
    tab.on('pageerror', (e) => pageErrors.push(e.message));
    await tab.goto(`${first.url}/#token=${encodeURIComponent(firstToken)}`);
    await tab.locator('#conn[data-state="open"]').waitFor();
    const banner = tab.locator('#offline-banner');
    assert.equal(await banner.isVisible(), false, 'no banner while live');
    // A job that runs on, open in the detail: its running time ticks while Taskdeck answers.
    const job = await fetch(`${first.url}/v1/jobs`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${firstToken}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ external: { name: 'nightly backfill', heartbeatMs: 600000 } }),
    }).then((r) => r.json());
    await tab.locator('#task-list .row', { has: tab.locator(`.row-id[title="${job.taskId}"]`) }).click();
    const duration = tab.locator('#detail .meta-item', { hasText: 'Duration' }).locator('dd');
    await waitFor(async () => /so far$/.test(await duration.textContent()), 'the running time');
    first.child.kill('SIGTERM');
    await new Promise((r) => first.child.once('exit', r));
    const stoppedAt = Date.now();
    // Started again on the same data dir, on another port (the old one is not asked for).
    again = await startServerIn(BIN, ['--conformance-fixtures'], first.dir);
    assert.notEqual(again.url, first.url);
    await tab.locator('#conn[data-state="reconnecting"]').waitFor();
    // A moment's restart says nothing more than "Reconnecting…"; a longer absence, the banner.
    await banner.waitFor({ timeout: 20_000 });
    assert.ok(Date.now() - stoppedAt >= 9_000, 'not at the first failed retry');
    const host = new URL(first.url).host;
    assert.match(await banner.textContent(), new RegExp(`^Taskdeck has not answered at ${host.replace(/\./g, '\\.')} since \\d\\d:\\d\\d:\\d\\d; this page keeps trying\\. If Taskdeck was started again on another port, open the address it printed`));
    // The open job's running time stopped when Taskdeck stopped answering, and says so.
    const frozen = await duration.textContent();
    assert.match(frozen, /so far, when Taskdeck last answered$/);
    await new Promise((r) => setTimeout(r, 1500));
    assert.equal(await duration.textContent(), frozen, 'the time does not run on');
    // The address it printed works, and shows no banner.
    await tab.goto(`${again.url}/#token=${encodeURIComponent(firstToken)}`);
    await tab.locator('#conn[data-state="open"]').waitFor();
    assert.equal(await banner.isVisible(), false);
  } finally {
    await tab.close();
    for (const s of [first, again].filter(Boolean)) {
      if (s.child.exitCode === null && s.child.signalCode === null) {
        s.child.kill('SIGTERM');
        await new Promise((r) => s.child.once('exit', r));
      }
    }
    fs.rmSync(first.dir, { recursive: true, force: true });
  }
});

test('an admin connects an agent; the Claude Code command carries a token that works', async () => {
  // In a plain browser the Notifications button is this browser's switch, not the desktop's settings.
  const notify = page.locator('#notify-btn');
  // (Headless Chromium blocks notifications: the button says so.)
  assert.match(await notify.textContent(), /^Notifications (on|off|blocked)$/);
  assert.equal(await notify.getAttribute('aria-haspopup'), null, 'no settings dialog in a plain browser');
  const open = page.getByRole('button', { name: 'Connect an agent' });
  await open.click();
  const dialog = page.locator('#agent-dialog');
  await dialog.waitFor();
  assert.equal(await page.evaluate(() => document.activeElement.id), 'agent-name', 'focus starts in the name field');
  await dialog.locator('#agent-existing', { hasText: 'admin' }).waitFor();

  // Checked before anything is sent.
  const name = dialog.getByLabel('Agent name');
  await name.fill('test agent!');
  await dialog.getByRole('button', { name: 'Create token' }).click();
  await dialog.locator('.field-error', { hasText: 'spaces, “!” are not allowed' }).waitFor();
  assert.equal(await name.getAttribute('aria-invalid'), 'true');
  const agentsBefore = await fetch(`${base}/v1/agents`, { headers: { Authorization: `Bearer ${token}` } }).then((r) => r.json());
  assert.ok(!agentsBefore.agents.some((a) => a.name.startsWith('test')), 'nothing was created');

  await name.fill('test-agent');
  await dialog.locator('.field-error').waitFor({ state: 'hidden' });
  await name.press('Enter');
  await dialog.getByRole('alert').filter({ hasText: 'the token is shown only once' }).waitFor();

  // One tab per client, Claude Code first and selected, with the command to run.
  const tabs = dialog.getByRole('tab');
  assert.deepEqual(await tabs.allTextContents(), ['Claude Code', 'Claude Desktop', 'VS Code', 'Cursor', 'Codex']);
  assert.equal(await dialog.getByRole('tab', { name: 'Claude Code' }).getAttribute('aria-selected'), 'true');
  const panel = dialog.getByRole('tabpanel', { name: 'Claude Code' });
  const command = await panel.locator('pre').textContent();
  assert.match(command, /^claude mcp add --scope user --transport http taskdeck http:\/\/127\.0\.0\.1:\d+\/mcp --header "Authorization: Bearer \S+"$/);
  agentToken = /Bearer ([^"\s]+)"/.exec(command)[1];
  assert.notEqual(agentToken, token);
  await panel.getByText('Run in a terminal').waitFor();

  // The token works: /v1/me names the agent, and it can start a task over MCP.
  assert.deepEqual(await me(agentToken), { principal: 'test-agent', role: 'agent', admin: false });
  const r = await mcp('tools/call', 'request_approval', { name: 'request_approval', arguments: { message: 'Hello from test-agent' } }, agentToken);
  assert.equal(r.resultType, 'task');
  await row(r.taskId).filter({ hasText: 'test-agent' }).waitFor(); // listed under the agent's name
  assert.equal((await apiTask(r.taskId)).principal, 'test-agent');

  // Copy puts the command on the clipboard.
  await panel.getByRole('button', { name: 'Copy the Claude Code command' }).click();
  await panel.getByRole('button', { name: 'Copy the Claude Code command' }).filter({ hasText: 'Copied' }).waitFor();
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), command);

  // Arrow keys move between tabs; each client's file and JSON carry the same token.
  await dialog.getByRole('tab', { name: 'Claude Code' }).focus();
  await page.keyboard.press('ArrowRight');
  assert.equal(await dialog.getByRole('tab', { name: 'Claude Desktop' }).getAttribute('aria-selected'), 'true');
  await page.keyboard.press('End');
  const codex = dialog.getByRole('tabpanel', { name: 'Codex' });
  await codex.getByText('~/.codex/config.toml').waitFor();
  assert.equal(await panel.isVisible(), false);
  assert.equal(await codex.locator('.code-kind').textContent(), 'TOML');
  assert.match(await codex.locator('pre').textContent(), new RegExp(`^\\[mcp_servers\\.taskdeck\\]\\nurl = "http://127\\.0\\.0\\.1:\\d+/mcp"\\nhttp_headers = \\{ Authorization = "Bearer ${agentToken}" \\}$`));
  await dialog.getByRole('tab', { name: 'Cursor' }).click();
  const cursor = dialog.getByRole('tabpanel', { name: 'Cursor' });
  await cursor.waitFor();
  assert.equal(await panel.isVisible(), false);
  await cursor.getByText('~/.cursor/mcp.json').waitFor();
  const cursorJson = JSON.parse(await cursor.locator('pre').textContent());
  assert.equal(cursorJson.mcpServers.taskdeck.headers.Authorization, `Bearer ${agentToken}`);
  await dialog.getByRole('tab', { name: 'VS Code' }).click();
  const vscode = dialog.getByRole('tabpanel', { name: 'VS Code' });
  await vscode.getByText('.vscode/mcp.json').waitFor();
  assert.equal(JSON.parse(await vscode.locator('pre').textContent()).servers.taskdeck.headers.Authorization, `Bearer ${agentToken}`);

  await dialog.getByRole('tab', { name: 'Claude Code' }).click();
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: path.join(ARTIFACTS, 'connect-agent.png') });

  // Escape closes; focus goes back to the button; the token leaves the page.
  await page.keyboard.press('Escape');
  await dialog.waitFor({ state: 'hidden' });
  assert.equal(await page.evaluate(() => document.activeElement.id), 'connect-btn');
  assert.equal(await page.evaluate((t) => document.body.innerHTML.includes(t), agentToken), false);

  // Tidy up: the agent's prompt would otherwise wait in the inbox.
  const cancel = await fetch(`${base}/v1/tasks/${r.taskId}/cancel`, { method: 'POST', headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' }, body: '{}' });
  assert.ok(cancel.ok);
});

test('a name that is taken shows the server’s 409 as a clear message', async () => {
  assert.ok(agentToken, 'the previous test created test-agent');
  await page.getByRole('button', { name: 'Connect an agent' }).click();
  const dialog = page.locator('#agent-dialog');
  await dialog.waitFor();
  assert.equal(await dialog.getByLabel('Agent name').inputValue(), '', 'the form starts empty again');
  await dialog.getByLabel('Agent name').fill('test-agent');
  expectHttpError(409);
  await dialog.getByRole('button', { name: 'Create token' }).click();
  await dialog.locator('.field-error', { hasText: 'A token named “test-agent” already exists.' }).waitFor();
  assert.equal(await dialog.getByRole('tab').count(), 0, 'no configuration is shown');
  assert.equal(await page.evaluate(() => document.activeElement.id), 'agent-name', 'focus is back on the name');
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  await dialog.waitFor({ state: 'hidden' });
});

test('a non-admin token does not get the Connect an agent button', async () => {
  assert.ok(agentToken, 'the first agent test created test-agent');
  const tab = await openTab(agentToken);
  try {
    await tab.page.locator('#me', { hasText: 'test-agent' }).waitFor();
    assert.equal(await tab.page.locator('#connect-btn').isVisible(), false);
    assert.equal(await tab.page.getByRole('button', { name: 'Connect an agent' }).count(), 0);
    const resp = await fetch(`${base}/v1/agents`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${agentToken}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'sneaky' }),
    });
    assert.equal(resp.status, 403, 'and the server refuses it anyway');
  } finally {
    await tab.context.close();
  }
});

test('an agent sees its command approval, but only the admin gets the form to answer it', async () => {
  assert.ok(agentToken, 'the first agent test created test-agent');
  const r = await mcp('tools/call', 'run_command', { name: 'run_command', arguments: { command: 'true' } }, agentToken);
  assert.equal(r.resultType, 'task');
  const tab = await openTab(agentToken, `&task=${r.taskId}`);
  try {
    const card = tab.page.locator('.prompt-card[data-key="approve-command"]');
    await card.filter({ hasText: 'Only the person using Taskdeck' }).waitFor();
    assert.equal(await card.getByRole('button').count(), 0, 'no Approve / Deny for the agent');
    // The a/d shortcuts pass the locked request by: nothing is sent.
    await tab.page.locator('#detail').focus();
    await tab.page.keyboard.press('a');
    assert.equal((await apiTask(r.taskId)).status, 'input_required');
  } finally {
    await tab.context.close();
  }
  // The admin's page offers the form.
  await row(r.taskId).click();
  const adminCard = page.locator('.prompt-card[data-key="approve-command"]');
  await adminCard.getByRole('button', { name: 'Deny', exact: true }).waitFor();
  assert.equal(await adminCard.filter({ hasText: 'Only the person using Taskdeck' }).count(), 0);
  // A declined command never ran: its log is empty and absent (`exists: false`), not an error.
  // The output panel reads it as the task changes, stays hidden, and stops once the task has
  // ended (that read answers `complete`).
  const logReads = recordLogReads(page, r.taskId);
  await adminCard.getByRole('button', { name: 'Deny', exact: true }).click();
  const done = await waitFor(async () => {
    const t = await apiTask(r.taskId);
    return t.status !== 'input_required' && t.status !== 'working' && t;
  }, 'the declined command to end');
  await waitFor(() => logReads.reads.some((read) => read.complete === true), 'the output panel’s read after the end');
  await new Promise((res) => setTimeout(res, 300)); // time for a read that should not come
  await logReads.stop();
  const reads = JSON.stringify(logReads.reads);
  assert.ok(logReads.reads.every((read) => read.status === 200 && read.exists === false), reads);
  assert.equal(logReads.reads.at(-1).complete, true, `no read after the one that said complete: ${reads}`);
  assert.equal(await page.locator('#detail section.log-section').isVisible(), false, 'no Output section for a command that never ran');
  assert.equal(done.result.isError, true, 'a declined command ends as an error result');
});

test('an agent’s page never offers a form for a human-only request that arrives live', async () => {
  assert.ok(agentToken, 'the first agent test created test-agent');
  const job = await fetch(`${base}/v1/jobs`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${agentToken}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ external: { name: 'live-human-only' } }),
  }).then((r) => r.json());
  const tab = await openTab(agentToken, `&task=${job.taskId}`);
  try {
    await tab.page.locator('#detail .detail-title').waitFor();
    // Notes any answer button that ever shows up in a prompt card.
    await tab.page.evaluate(() => {
      window.__formShown = false;
      new MutationObserver(() => {
        if (document.querySelector('#detail .prompt-card:not(.prompt-locked) button')) window.__formShown = true;
      }).observe(document.body, { subtree: true, childList: true });
    });
    const report = await fetch(`${base}/v1/jobs/${job.taskId}/report`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${agentToken}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ inputRequests: { go: { method: 'elicitation/create', params: { message: 'Deploy now?' } } } }),
    });
    assert.equal(report.status, 200);
    await tab.page.locator('.prompt-card.prompt-locked[data-key="go"]').waitFor();
    await tab.page.locator('#detail').getByText('The task is waiting for the person using Taskdeck.').waitFor();
    await new Promise((r) => setTimeout(r, 500)); // past the detail's refetch of its input rounds
    assert.equal(await tab.page.evaluate(() => window.__formShown), false, 'no form was ever offered');
    await tab.page.keyboard.press('a');
    await tab.page.locator('.toast', { hasText: 'Only the person using Taskdeck can answer this prompt.' }).waitFor();
  } finally {
    await tab.context.close();
  }
  const cancel = await fetch(`${base}/v1/tasks/${job.taskId}/cancel`, { method: 'POST', headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' }, body: '{}' });
  assert.ok(cancel.ok);
});

test('a human’s token opens the UI: every principal’s tasks and the forms a person answers, no admin controls', async () => {
  assert.ok(agentToken, 'the first agent test created test-agent');
  const made = await fetch(`${base}/v1/agents`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ name: 'test-human', role: 'human' }),
  }).then((r) => r.json());
  assert.equal(made.role, 'human');
  assert.deepEqual(await me(made.token), { principal: 'test-human', role: 'human', admin: false });
  const job = await fetch(`${base}/v1/jobs`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${agentToken}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ external: { name: 'asks-a-human' } }),
  }).then((r) => r.json());
  const report = await fetch(`${base}/v1/jobs/${job.taskId}/report`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${agentToken}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ inputRequests: { go: { method: 'elicitation/create', params: { message: 'Ship it?' } } } }),
  });
  assert.equal(report.status, 200);
  const tab = await openTab(made.token, `&task=${job.taskId}`);
  try {
    await tab.page.locator('#me .me-pill', { hasText: 'sees all principals' }).waitFor();
    assert.equal(await tab.page.locator('#principal-filter-label').isVisible(), true);
    for (const id of ['connect-btn', 'servers-btn', 'policies-btn']) assert.equal(await tab.page.locator(`#${id}`).isVisible(), false, `#${id} is the admin’s`);
    // The agent's task is listed, and its human-only question has a form for the human.
    await tab.page.locator('#task-list .row', { hasText: 'test-agent' }).first().waitFor();
    const card = tab.page.locator('.prompt-card[data-key="go"]');
    await card.getByRole('button', { name: 'Accept' }).click();
    await tab.page.locator('#detail .round', { hasText: 'Accepted by test-human' }).waitFor();
  } finally {
    await tab.context.close();
  }
  const cancel = await fetch(`${base}/v1/tasks/${job.taskId}/cancel`, { method: 'POST', headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' }, body: '{}' });
  assert.ok(cancel.ok);
});

test('the detail’s modules: a failed load is tried again; Escape while they load cancels the open; a slow /v1/me still gives the admin the form', async () => {
  const r = await mcp('tools/call', 'run_command', { name: 'run_command', arguments: { command: 'true' } }, agentToken);
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  try {
    let detailFetches = 0;
    let slow = false;
    await context.route('**/js/detail-view.js', async (route) => {
      detailFetches++;
      if (detailFetches === 1) return route.abort(); // the first load fails (the server was away)
      if (slow) await new Promise((res) => setTimeout(res, 600));
      return route.continue();
    });
    await context.route('**/v1/me', async (route) => {
      await new Promise((res) => setTimeout(res, 1500));
      return route.continue();
    });
    const p = await context.newPage();
    const errors = [];
    p.on('pageerror', (e) => errors.push(e.message));
    await p.goto(`${base}/#token=${encodeURIComponent(token)}`);
    const theRow = p.locator('#task-list .row:not([hidden])', { has: p.locator(`.row-id[title="${r.taskId}"]`) });
    // Before /v1/me answers. The module's first load fails: in the idle-time load (then this
    // click loads it again) or in this click's (then the page says so, and the next click does).
    await theRow.click();
    const card = p.locator('.prompt-card[data-key="approve-command"]');
    const failed = p.locator('.toast', { hasText: 'Could not load the task' });
    const first = await Promise.race([card.waitFor().then(() => 'card'), failed.waitFor().then(() => 'toast')]).catch(() => 'none');
    if (first === 'none') {
      const toasts = await p.locator('.toast').allTextContents();
      assert.fail(`neither the form nor a failed load shown: ${detailFetches} fetches of detail-view.js, toasts ${JSON.stringify(toasts)}, hash ${new URL(p.url()).hash}, errors ${JSON.stringify(errors)}`);
    }
    if (first === 'toast') await theRow.click();
    await card.waitFor();
    // Until /v1/me answers, the page does not know it is the admin's; then the form appears.
    await card.getByRole('button', { name: 'Deny', exact: true }).waitFor();
    assert.equal(await card.filter({ hasText: 'Only the person using Taskdeck' }).count(), 0);
    assert.ok(detailFetches >= 2, `${detailFetches} fetches of detail-view.js`);
    await p.keyboard.press('Escape');
    await p.locator('#detail .prompt-card').waitFor({ state: 'detached' });
    assert.deepEqual(errors, []);
  } finally {
    await context.close();
  }
  // A fresh page whose detail modules are slow: Escape right after Enter wins over the load.
  const slowContext = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  try {
    await slowContext.route('**/js/detail-view.js', async (route) => {
      await new Promise((res) => setTimeout(res, 800));
      return route.continue();
    });
    const p = await slowContext.newPage();
    await p.goto(`${base}/#token=${encodeURIComponent(token)}`);
    await p.locator('#task-list .row:not([hidden])').first().waitFor();
    await p.locator('#task-list').focus();
    await p.keyboard.press('j');
    await p.keyboard.press('Enter');
    await p.keyboard.press('Escape');
    await new Promise((res) => setTimeout(res, 1500)); // the modules have loaded by now
    assert.equal(await p.locator('#detail .detail-title, #detail .detail-loading').count(), 0, 'no task was opened after Escape');
    assert.equal(new URL(p.url()).hash, '');
  } finally {
    await slowContext.close();
  }
  const cancel = await fetch(`${base}/v1/tasks/${r.taskId}/cancel`, { method: 'POST', headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' }, body: '{}' });
  assert.ok(cancel.ok);
});

test('a progress bar a command redraws with carriage returns moves in place in the live output, read after read', async () => {
  assert.ok(agentToken, 'the first agent test created test-agent');
  const command = "echo fetching; for i in $(seq 1 12); do printf '\\r[%d/12] linking' $i; sleep 0.4; done; printf '\\ndone\\n'";
  const r = await mcp('tools/call', 'run_command', { name: 'run_command', arguments: { command } }, agentToken);
  const taskId = r.taskId;
  await row(taskId).click();
  const card = page.locator('.prompt-card[data-key="approve-command"]');
  await card.getByRole('button', { name: 'Approve', exact: true }).click();
  const pre = page.locator('#detail section.log-section').getByRole('log', { name: 'Command output' });
  const shows = (line) => pre.filter({ hasText: new RegExp(`^${line.replace(/[[\]/]/g, '\\$&')}$`, 'm') }).waitFor();
  // The bar's line holds one drawing (whichever the reads met), never the drawings joined:
  // while it runs, and once it is done.
  await pre.filter({ hasText: /\/12\] linking/ }).waitFor();
  assert.doesNotMatch(await pre.textContent(), /linking\[/);
  await shows('done');
  assert.equal(await pre.textContent(), 'fetching\n[12/12] linking\ndone\n');
});

test('a command’s output appears live in the detail, as text, following the end until complete', async () => {
  assert.ok(agentToken, 'the first agent test created test-agent');
  const hostile = '<b>bold</b> & <img src=x onerror=window.pwned=1>';
  const command = `echo '${hostile}'; for i in $(seq 1 60); do echo "line $i"; sleep 0.05; done`;
  const r = await mcp('tools/call', 'run_command', { name: 'run_command', arguments: { command } }, agentToken);
  assert.equal(r.resultType, 'task');
  const taskId = r.taskId;

  // It waits for the human's approval: nothing has run, so there is no Output section yet.
  await row(taskId).click();
  const card = page.locator('.prompt-card[data-key="approve-command"]');
  await card.waitFor();
  const output = page.locator('#detail section.log-section');
  assert.equal(await output.count(), 1);
  assert.equal(await output.isVisible(), false);
  const pre = output.getByRole('log', { name: 'Command output' });
  const status = output.locator('.log-state');
  const shows = (line) => pre.filter({ hasText: new RegExp(`^${line}$`, 'm') }).waitFor();
  const scroll = () => pre.evaluate((el) => ({ top: el.scrollTop, max: el.scrollHeight - el.clientHeight }));

  // The log file appears only once the command starts: a read right after the approval may find
  // none yet, which is an empty log (`exists: false`), not an error; the next change reads on.
  const logReads = recordLogReads(page, taskId);
  await card.getByRole('button', { name: 'Approve', exact: true }).click();
  await shows('line 5');
  // Read while it runs: the panel follows the log, not a finished result.
  assert.equal((await apiTask(taskId)).status, 'working');
  assert.ok(!(await pre.textContent()).includes('line 60'));
  await status.filter({ hasText: /^Live · .* so far$/ }).waitFor();

  // New output keeps the view at the end while the reader is there...
  await shows('line 35');
  await waitFor(async () => {
    const s = await scroll();
    return s.max > 0 && s.top >= s.max - 4;
  }, 'the output to scroll with its end');
  // ...and leaves it alone while the reader looks at earlier lines.
  await pre.evaluate((el) => {
    el.scrollTop = 0;
  });
  await shows('line 45');
  assert.equal((await scroll()).top, 0, 'the reader was not moved');
  await shows('line 60');

  await status.filter({ hasText: /^Output complete · \d+ B$/ }).waitFor();
  await page.locator('#detail .outcome-good', { hasText: 'Completed' }).waitFor();
  assert.equal((await apiTask(taskId)).status, 'completed');
  await logReads.stop();
  const reads = JSON.stringify(logReads.reads);
  assert.ok(logReads.reads.every((read) => read.status === 200), `every log read answered 200: ${reads}`);
  assert.deepEqual(logReads.reads.at(-1), { status: 200, exists: true, complete: true }, reads);

  // Everything came through once, in order, as text: the markup is shown, not made.
  const lines = (await pre.textContent()).split('\n');
  assert.deepEqual(lines, [hostile, ...Array.from({ length: 60 }, (_, i) => `line ${i + 1}`), '']);
  assert.equal(await pre.locator('b, img').count(), 0);
  assert.equal(await page.evaluate(() => window.pwned ?? null), null);
  assert.equal(await output.getByRole('button', { name: 'Show earlier output' }).isVisible(), false, 'the whole log is shown');
  assert.equal(await pre.getAttribute('aria-live'), 'off');
  assert.equal(await pre.getAttribute('tabindex'), '0');
  await output.scrollIntoViewIfNeeded();
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: path.join(ARTIFACTS, 'command-output.png') });
});

test('"Show earlier output" loads what came before the tail, exactly, without moving the reader', async () => {
  // 108,894 bytes of numbered lines, then a line with a multi-byte character and an invalid byte.
  const r = await mcp('tools/call', 'run_command', { name: 'run_command', arguments: { command: 'seq 1 20000; printf "caf\\303\\251 \\377\\n"' } });
  const taskId = r.taskId;
  await waitFor(async () => (await apiTask(taskId)).status === 'input_required', 'the approval prompt');
  const approve = await fetch(`${base}/v1/tasks/${taskId}/input`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ inputResponses: { 'approve-command': { action: 'accept' } } }),
  });
  assert.equal(approve.status, 200);
  await waitFor(async () => (await apiTask(taskId)).status === 'completed', 'the command to finish');

  await row(taskId).click();
  const output = page.locator('#detail section.log-section');
  const pre = output.getByRole('log', { name: 'Command output' });
  await output.locator('.log-state', { hasText: 'Output complete · 106 KB' }).waitFor();
  const tail = await pre.textContent();
  assert.ok(tail.length <= 65_536 && /^\d+\n/.test(tail), 'the last 64 KiB, from a line start');
  await output.locator('.log-earlier', { hasText: 'KB before this' }).waitFor();

  // The reader looks at the first line shown; the earlier output goes above it.
  await output.scrollIntoViewIfNeeded();
  await pre.evaluate((el) => {
    el.scrollTop = 0;
  });
  assert.equal(await pre.evaluate(lineAtTop), tail.slice(0, tail.indexOf('\n')));
  await output.getByRole('button', { name: 'Show earlier output' }).focus();
  await page.keyboard.press('Enter');
  await output.locator('.log-earlier').waitFor({ state: 'hidden' });
  assert.equal(await pre.textContent(), `${Array.from({ length: 20000 }, (_, i) => i + 1).join('\n')}\ncafé \uFFFD\n`);
  assert.equal(await pre.evaluate(lineAtTop), tail.slice(0, tail.indexOf('\n')), 'the line the reader looked at is still at the top');
  assert.equal(await pre.evaluate((el) => document.activeElement === el), true, 'focus moved from the vanished button to the output');
});

test('the output panel keeps the last 1 MiB and the reader’s place, and reads only when the task changes', async () => {
  // The panel inside the real page, fed a growing 3 MiB log by a stand-in for GET .../log.
  const lineAtTopInPage = await page.evaluateHandle(`(${lineAtTop})`);
  const report = await page.evaluate(async (lineAtTop) => {
    const { LogView } = await import('/js/log-view.js');
    const LINE = 64;
    const KiB = 1024;
    const log = Array.from({ length: (3 * 1024 * KiB) / LINE }, (_, i) => `line ${String(i + 1).padStart(7, '0')} ${'x'.repeat(LINE - 14)}\n`).join('');
    let size = 0;
    let terminal = false;
    const reads = [];
    const api = {
      taskLog: async (id, { offset, tail, limit = 64 * KiB }) => {
        reads.push(offset ?? `tail ${tail}`);
        await new Promise((r) => setTimeout(r, 5));
        let start = offset !== undefined ? Math.min(offset, size) : Math.max(0, size - tail);
        if (offset === undefined && start > 0) start = log.indexOf('\n', start - 1) + 1;
        let end = Math.min(size, start + limit);
        if (end < size) end = Math.max(start, log.lastIndexOf('\n', end - 1) + 1);
        return { taskId: id, offset: start, nextOffset: end, size, text: log.slice(start, end), complete: terminal && end >= size };
      },
    };
    const task = { taskId: 'fake', tool: 'run_command', status: 'working' };
    const view = new LogView(api, task);
    view.el.style.cssText = 'position:fixed;left:0;top:0;width:700px;z-index:99;background:white';
    document.body.appendChild(view.el);
    const pre = view.el.querySelector('pre');
    const settle = () => new Promise((r) => setTimeout(r, 60));
    const grow = async (bytes) => {
      size = Math.min(log.length, size + bytes);
      view.update(task);
      await settle();
    };
    const atEnd = () => pre.scrollTop >= pre.scrollHeight - pre.clientHeight - 4;
    const out = {};

    await grow(100 * LINE);
    out.opened = { text: pre.textContent === log.slice(0, size), atEnd: atEnd() };

    // Five changes at once: one read in flight, one more after it.
    reads.length = 0;
    size += 10 * LINE;
    for (let i = 0; i < 5; i++) view.update(task);
    await settle();
    out.coalesced = reads.length;

    // Past the cap while following: the oldest output goes, the view stays at the end.
    while (size < 1.5 * 1024 * KiB) await grow(200 * KiB);
    out.following = atEnd();
    // The reader scrolls up to read; more output pushes older lines out above them.
    pre.scrollTop = (pre.scrollHeight - pre.clientHeight) / 2;
    const before = lineAtTop(pre);
    await grow(200 * KiB);
    await grow(200 * KiB);
    out.readerLine = [before, lineAtTop(pre)];
    while (size < log.length) await grow(200 * KiB);
    // Earlier output loads only up to the cap.
    const button = view.el.querySelector('.log-earlier button');
    out.clicks = 0;
    while (!button.hidden && out.clicks < 10) {
      button.click();
      out.clicks++;
      await settle();
    }
    const kept = pre.textContent;
    out.kept = { chars: kept.length, exact: kept === log.slice(log.length - kept.length) };
    out.note = view.el.querySelector('.log-earlier .muted').textContent;

    // No change, no read: there is no timer.
    reads.length = 0;
    await new Promise((r) => setTimeout(r, 1000));
    out.idleReads = reads.length;

    // The task ends: one more read, complete; later changes read nothing.
    task.status = 'completed';
    terminal = true;
    view.update(task);
    await settle();
    view.update(task);
    await settle();
    out.state = view.el.querySelector('.log-state').textContent;
    out.finalReads = reads.length;
    view.el.remove();

    // A panel no longer shown (another task opened) drops the answer to a read on its way.
    const other = { taskId: 'other', tool: 'run_command', status: 'working' };
    const gone = new LogView(api, other);
    gone.update(other);
    gone.dispose();
    await settle();
    out.disposed = { reads: reads.length - out.finalReads, hidden: gone.el.hidden, text: gone.el.querySelector('pre').textContent };

    // A command that has not started has no log file yet (`exists: false`): the panel stays
    // hidden, without an error, until a change finds the log. One that ends without running
    // leaves it hidden, and later changes read nothing.
    const absent = (id, done) => ({ taskId: id, offset: 0, nextOffset: 0, size: 0, text: '', complete: done, exists: false });
    const seen = (view) => ({ hidden: view.el.hidden, error: view.el.querySelector('.log-error').hidden ? null : view.el.querySelector('.log-error').textContent, text: view.el.querySelector('pre').textContent });
    let started = false;
    let startReads = 0;
    const starting = { taskId: 'starting', tool: 'run_command', status: 'working' };
    const startingView = new LogView({
      taskLog: async (id) => {
        startReads++;
        return started ? { taskId: id, offset: 0, nextOffset: 6, size: 6, text: 'hello\n', complete: false, exists: true } : absent(id, false);
      },
    }, starting);
    startingView.update(starting);
    await settle();
    out.notStarted = { reads: startReads, ...seen(startingView) };
    started = true;
    startingView.update(starting);
    await settle();
    out.started = { reads: startReads, ...seen(startingView) };
    startingView.dispose();

    let neverReads = 0;
    const never = { taskId: 'never', tool: 'run_command', status: 'working' };
    const neverView = new LogView({
      taskLog: async (id) => {
        neverReads++;
        return absent(id, never.status === 'completed');
      },
    }, never);
    neverView.update(never);
    await settle();
    never.status = 'completed';
    neverView.update(never);
    await settle();
    neverView.update(never);
    await settle();
    out.neverRan = { reads: neverReads, ...seen(neverView) };
    return out;
  }, lineAtTopInPage);
  await lineAtTopInPage.dispose();
  assert.deepEqual(report.opened, { text: true, atEnd: true });
  assert.equal(report.coalesced, 2);
  assert.equal(report.following, true);
  assert.match(report.readerLine[0], /^line \d{7} x+$/);
  assert.equal(report.readerLine[1], report.readerLine[0], 'the line the reader looked at stayed in place while older lines went');
  assert.ok(report.clicks < 10, 'the button goes once the cap is reached');
  assert.ok(report.kept.chars <= 1024 * 1024 && report.kept.chars > 1020 * 1024 - 64, `${report.kept.chars} characters kept`);
  assert.ok(report.kept.exact, 'the kept output is the end of the log, whole lines');
  assert.match(report.note, /^2\.\d MB of earlier output not shown: this page keeps the last 1\.0 MB\.$/);
  assert.equal(report.idleReads, 0);
  assert.equal(report.state, 'Output complete · 3.0 MB');
  assert.equal(report.finalReads, 1);
  assert.deepEqual(report.disposed, { reads: 1, hidden: true, text: '' });
  assert.deepEqual(report.notStarted, { reads: 1, hidden: true, error: null, text: '' });
  assert.deepEqual(report.started, { reads: 2, hidden: false, error: null, text: 'hello\n' });
  assert.deepEqual(report.neverRan, { reads: 2, hidden: true, error: null, text: '' });
});

test('a long timeline shows its newest 500 events and pages back on request', async () => {
  const post = (path, body) =>
    fetch(`${base}${path}`, { method: 'POST', headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  const job = await (await post('/v1/jobs', { external: { name: 'chatty-job', heartbeatMs: 600000 } })).json();
  const id = job.taskId;
  for (let i = 0; i < 1150; i += 50) {
    const batch = [];
    for (let j = i; j < Math.min(i + 50, 1150); j++) batch.push(post(`/v1/jobs/${id}/report`, { statusMessage: `step ${j}` }));
    for (const r of await Promise.all(batch)) assert.equal(r.status, 200);
  }
  const timeline = async (query) => (await (await fetch(`${base}/v1/tasks/${id}?${query}`, { headers: { Authorization: `Bearer ${token}` } })).json()).timeline;
  assert.equal((await timeline('')).length, 1000, "the server's first page");
  const total = (await timeline('timelineLimit=5000')).length; // created + 1,150 status messages
  assert.ok(total > 1000 && total <= 1500, String(total));
  const tab = await openTab(token, `&task=${id}`);
  const p = tab.page;
  try {
    // Each event's row (the status messages fold into one item, which holds them).
    const items = p.locator('#detail ol.timeline > li:not(.tl-group)');
    const earlier = p.locator('#detail button.timeline-earlier');
    await earlier.waitFor();
    assert.equal(await items.count(), 500, 'the newest 500 of the 1,000 loaded');
    assert.match(await p.locator('#detail li.tl-group summary').textContent(), /^500 messages, the last: “step \d+”$/);
    assert.match(await earlier.textContent(), /Show 500 earlier events \(500 hidden\)/);
    await earlier.click();
    await waitFor(async () => (await items.count()) === 1000, 'all loaded events shown');
    // The next click loads what the server has not sent yet.
    assert.equal(await earlier.textContent(), 'Load earlier events');
    await earlier.click();
    await waitFor(async () => (await items.count()) === total, 'the earlier events loaded');
    assert.equal(await earlier.count(), 0, 'nothing older is left');
    await p.locator('#detail ol.timeline > li', { hasText: 'step 0' }).first().waitFor({ state: 'attached' });
  } finally {
    await tab.context.close();
  }
  const done = await post(`/v1/jobs/${id}/report`, { result: { content: [] } });
  assert.equal(done.status, 202);
});

test('#task=<id> opens that task: at load, and when the desktop shell sets the fragment', async () => {
  const first = await startTask('slow_compute', { seconds: 0.05, label: 'focus-at-load' });
  const second = await startTask('confirm_delete', { filename: 'focus-me.txt' });
  const tab = await openTab(token, `&task=${first}`);
  const p = tab.page;
  try {
    await p.locator('#detail .task-id', { hasText: first }).waitFor();
    assert.ok(!p.url().includes('token='), 'the token still leaves the address bar');

    // A task that is not in the loaded list (filtered out here) is fetched and shown.
    await p.locator('#search').fill('no-task-matches-this');
    await p.locator('#list-empty:not([hidden])').waitFor();
    await p.evaluate((id) => {
      window.location.hash = `task=${id}`; // what the desktop shell does when a notification is clicked
    }, second);
    await p.locator('#detail .task-id', { hasText: second }).waitFor();
    await p.locator('#detail .prompt-card[data-key="confirm-delete"]').waitFor();
    await waitFor(() => p.evaluate(() => document.getElementById('detail').contains(document.activeElement)), 'focus to move to the task');

    // An unknown task says so.
    expectHttpError(404);
    await p.evaluate(() => {
      window.location.hash = 'task=00000000-0000-0000-0000-000000000000';
    });
    await p.locator('#detail .detail-missing', { hasText: 'Task not found' }).waitFor();
  } finally {
    await tab.context.close();
  }
  const cancel = await fetch(`${base}/v1/tasks/${second}/cancel`, { method: 'POST', headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' }, body: '{}' });
  assert.ok(cancel.ok);
});

test('in the desktop window, notification settings load, validate and save through the shell', async () => {
  // A stand-in for Tauri's withGlobalTauri bridge, recording each command.
  const initScript = () => {
    const calls = [];
    let settings = { inputRequired: true, completed: true, failed: true, thresholdMs: 10000, doNotDisturb: false };
    window.__calls = calls;
    window.__TAURI__ = {
      core: {
        invoke: async (cmd, args) => {
          calls.push([cmd, args === undefined ? null : JSON.parse(JSON.stringify(args))]);
          if (cmd === 'notification_settings') return settings;
          if (cmd === 'set_notification_settings') settings = args.settings;
          return null;
        },
      },
    };
  };
  const tab = await openTab(token, '', { initScript });
  const p = tab.page;
  try {
    const btn = p.getByRole('button', { name: 'Notifications' });
    await btn.click();
    const dialog = p.locator('#notify-dialog');
    await dialog.locator('#notify-input:not([disabled])').waitFor();
    assert.equal(await p.evaluate(() => document.activeElement.id), 'notify-input');
    assert.equal(await dialog.getByRole('checkbox', { name: 'completes', exact: true }).isChecked(), true);
    const threshold = dialog.getByLabel('Minimum run time for “completes” and “fails”');
    assert.equal(await threshold.inputValue(), '10');

    await threshold.fill('soon');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await dialog.locator('.field-error', { hasText: 'like 10 or 2.5' }).waitFor();
    assert.ok(!(await p.evaluate(() => window.__calls.some(([c]) => c === 'set_notification_settings'))), 'nothing saved');

    await threshold.fill('2.5');
    await dialog.getByRole('checkbox', { name: 'fails', exact: true }).uncheck();
    await dialog.getByRole('checkbox', { name: 'Do not disturb' }).check();
    await dialog.getByRole('button', { name: 'Save' }).click();
    await dialog.waitFor({ state: 'hidden' });
    await p.locator('.toast', { hasText: 'Notification settings saved.' }).waitFor();
    const saved = await p.evaluate(() => window.__calls.find(([c]) => c === 'set_notification_settings')[1]);
    assert.deepEqual(saved, { settings: { inputRequired: true, completed: true, failed: false, thresholdMs: 2500, doNotDisturb: true } });
    assert.equal(await btn.getAttribute('title'), 'Do not disturb: no notifications');

    // Reopened: the saved values; Escape closes without saving; the data folder opens.
    await btn.click();
    await dialog.locator('#notify-input:not([disabled])').waitFor();
    assert.equal(await threshold.inputValue(), '2.5');
    assert.equal(await dialog.getByRole('checkbox', { name: 'fails', exact: true }).isChecked(), false);
    await dialog.getByRole('button', { name: 'Open data folder' }).click();
    await waitFor(() => p.evaluate(() => window.__calls.some(([c]) => c === 'open_data_dir')), 'open_data_dir');
    await p.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
    assert.equal(await p.evaluate(() => window.__calls.filter(([c]) => c === 'set_notification_settings').length), 1);
  } finally {
    await tab.context.close();
  }
});

test('in a browser, Notifications turns on with the browser’s permission; a task that needs input notifies, and a click opens it', async () => {
  // Records each notification the page makes (the browser's own Notification still shows it).
  const initScript = () => {
    window.__notified = [];
    const Browser = window.Notification;
    window.Notification = class extends Browser {
      constructor(title, options) {
        super(title, options);
        window.__notified.push({ title, body: options && options.body, tag: options && options.tag });
        window.__last = this;
      }
    };
  };
  const tab = await openTab(token, '', { permissions: ['notifications'], initScript });
  const button = tab.page.locator('#notify-btn');
  await waitFor(async () => (await button.textContent()) === 'Notifications off', 'the browser’s Notifications button');
  assert.equal(await button.getAttribute('aria-pressed'), 'false');
  await button.click();
  await waitFor(async () => (await button.getAttribute('aria-pressed')) === 'true', 'notifications turned on');
  assert.equal(await button.textContent(), 'Notifications on');
  const taskId = await startTask('request_approval', { message: 'Publish the release notes?' });
  const shown = await waitFor(async () => (await tab.page.evaluate(() => window.__notified)).find((n) => n.tag === `taskdeck-${taskId}`), 'a notification for the question');
  assert.equal(shown.title, 'admin needs input', 'the question, which titles its task, is said once (the body)');
  assert.equal(shown.body, 'Publish the release notes?');
  // A click on it shows the task.
  await tab.page.evaluate(() => window.__last.dispatchEvent(new Event('click')));
  await waitFor(async () => new URLSearchParams((await tab.page.evaluate(() => location.hash)).slice(1)).get('task') === taskId, 'the task opened');
  // Turned off, a new question notifies nothing; the choice stays with this browser.
  await button.click();
  await waitFor(async () => (await button.getAttribute('aria-pressed')) === 'false', 'notifications turned off');
  const before = (await tab.page.evaluate(() => window.__notified)).length;
  const quiet = await startTask('request_approval', { message: 'Tag it?' });
  await waitFor(async () => (await apiTask(quiet)).status === 'input_required', 'the second question');
  await new Promise((r) => setTimeout(r, 500));
  assert.equal((await tab.page.evaluate(() => window.__notified)).length, before);
  await tab.page.reload();
  await waitFor(async () => (await button.textContent()) === 'Notifications off', 'still off after a reload');
  await tab.context.close();
  for (const id of [taskId, quiet]) await fetch(`${base}/v1/tasks/${id}/cancel`, { method: 'POST', headers: { Authorization: `Bearer ${token}` } });
});

test('in a browser, a permission question dismissed or denied is told, with what to do', async () => {
  // The browser's question: closed without an answer the first time, answered Block the second.
  const initScript = () => {
    let permission = 'default';
    const answers = ['default', 'denied'];
    window.Notification = class {
      static get permission() {
        return permission;
      }
      static async requestPermission() {
        permission = answers.shift() || permission;
        return permission;
      }
    };
  };
  const tab = await openTab(token, '', { initScript });
  try {
    const button = tab.page.locator('#notify-btn');
    await waitFor(async () => (await button.textContent()) === 'Notifications off', 'the browser’s Notifications button');
    await button.click();
    await tab.page.locator('.toast-text', { hasText: 'closed without an answer, so notifications stay off. Click Notifications again and choose Allow.' }).waitFor();
    assert.equal(await button.textContent(), 'Notifications off');
    await button.click();
    await tab.page.locator('.toast-text', { hasText: 'The browser blocked notifications for this page' }).waitFor();
    assert.equal(await button.textContent(), 'Notifications blocked');
    assert.equal(await button.getAttribute('aria-pressed'), 'false');
  } finally {
    await tab.context.close();
  }
});

test('declining a command approval with a reason gives the agent that reason', async () => {
  const taskId = await startTask('run_command', { command: 'true' });
  await row(taskId).click();
  const card = page.locator('.prompt-card[data-key="approve-command"]');
  await card.getByLabel('Reason, if you decline').fill('not today');
  await card.getByRole('button', { name: 'Deny', exact: true }).click();
  const done = await waitFor(async () => {
    const t = await agentGet(taskId);
    return t.status === 'completed' && t;
  }, 'the declined command to end');
  assert.equal(done.result.isError, true);
  assert.match(done.result.content[0].text, /Their reason: not today$/);
});

test('a command approval’s form in the detail starts with the call as asked, as the queue’s editor does; Approve untouched runs it as asked', async () => {
  const taskId = await startTask('run_command', { command: 'echo prefilled', cwd: tmp });
  await row(taskId).click();
  const card = page.locator('.prompt-card[data-key="approve-command"]');
  const field = card.getByLabel('Edited arguments (JSON object), to approve a changed call');
  await field.waitFor();
  // The queue's editor for the same call holds the same text.
  const queued = page.locator(`#approvals-list .approval[data-task-id="${taskId}"]`);
  await queued.locator('.approval-summary').click();
  const editor = queued.locator('.approval-json');
  await editor.waitFor();
  const asked = await editor.inputValue();
  assert.match(asked, /^\{\n {2}"command": "echo prefilled",\n/, asked);
  assert.equal(await field.inputValue(), asked);
  // Its line breaks are no hidden characters: no note under the box.
  assert.equal(await card.locator('.field-hidden-chars:visible').count(), 0);
  await queued.locator('.approval-summary').click(); // closed again
  // Its help says what Deny does to a call (it has no Dismiss: that would deny it too).
  const help = await card.locator('.prompt-help').textContent();
  assert.doesNotMatch(help, /without an answer/);
  assert.match(help, /Deny denies the call, with your reason if you typed one: it does not run\./);
  await card.getByRole('button', { name: 'Approve', exact: true }).click();
  const done = await waitFor(async () => {
    const t = await agentGet(taskId);
    return t.status === 'completed' && t;
  }, 'the command to run');
  assert.equal(done.result.isError, false, JSON.stringify(done.result));
  // Approved as asked: no edit recorded.
  const resp = await fetch(`${base}/v1/tasks/${taskId}`, { headers: { Authorization: `Bearer ${token}` } });
  const { timeline } = await resp.json();
  assert.deepEqual(timeline.filter((e) => e.kind === 'argumentsEdited'), []);
  const decided = timeline.find((e) => e.kind === 'decision');
  assert.ok(decided && decided.data.decision === 'allow' && decided.data.editedArguments == null, JSON.stringify(decided));
});

test('a command approval’s form offers Approve and Deny, no “Cancel” beside “Cancel task…”; Deny says so', async () => {
  const taskId = await startTask('run_command', { command: 'seq 1 3' });
  await row(taskId).click();
  const card = page.locator('.prompt-card[data-key="approve-command"]');
  await card.getByRole('button', { name: 'Deny', exact: true }).waitFor();
  assert.deepEqual(await card.locator('.prompt-actions button').allTextContents(), ['Approve', 'Deny']);
  await card.getByText('Deny denies the call, with your reason if you typed one: it does not run.').waitFor();
  await card.getByRole('button', { name: 'Deny', exact: true }).click();
  // Named as the queue names the call (not by its question, "admin wants to run in …").
  await page.locator('#toasts .toast', { hasText: /^Denied “run_command: seq 1 3”\./ }).first().waitFor();
  const done = await waitFor(async () => {
    const t = await agentGet(taskId);
    return t.status === 'completed' && t;
  }, 'the declined command to end');
  assert.equal(done.result.isError, true);
  assert.match(done.result.content[0].text, /declined to run `seq 1 3`/);

  // A question with no call behind it has Dismiss, which leaves it unanswered (MCP's `cancel`).
  const questionId = await startTask('request_approval', { message: 'Ship it today?' });
  await row(questionId).click();
  const question = page.locator('.prompt-card[data-key="approval"]');
  await question.getByText('Dismiss leaves the question without an answer.').waitFor();
  await question.getByRole('button', { name: 'Dismiss', exact: true }).click();
  const dismissed = await waitFor(async () => {
    const t = await agentGet(questionId);
    return t.status === 'completed' && t;
  }, 'the dismissed question to end');
  assert.equal(dismissed.result.structuredContent.action, 'cancel', JSON.stringify(dismissed.result));
});

test('the Policies dialog lists, adds, moves and revokes rules, and the server keeps their order', async () => {
  const stored = async () => {
    const resp = await fetch(`${base}/v1/policy`, { headers: { Authorization: `Bearer ${token}` } });
    return (await resp.json()).rules;
  };
  await page.locator('#policies-btn').click();
  const dialog = page.locator('#policy-dialog');
  await dialog.locator('.policy-empty').waitFor();
  const add = async (fields) => {
    for (const [id, value] of Object.entries(fields)) {
      if (id === 'policy-decision') await dialog.locator(`#${id}`).selectOption(value);
      else await dialog.locator(`#${id}`).fill(value);
    }
    await dialog.getByRole('button', { name: 'Add rule' }).click();
  };
  const rows = dialog.locator('.policy-table tbody tr');
  await add({ 'policy-server': 'taskdeck', 'policy-tool': 'run_command', 'policy-arguments': 'command=echo *', 'policy-decision': 'allow', 'policy-note': 'echo is harmless' });
  await rows.first().waitFor();
  await add({ 'policy-server': 'fs', 'policy-tool': 'write_*', 'policy-decision': 'deny' });
  await waitFor(async () => (await rows.count()) === 2, 'two rules');
  await rows.nth(0).locator('.decision-allow').waitFor();
  assert.equal(await rows.nth(0).locator('.policy-args').textContent(), 'command = echo *');
  assert.equal(await rows.nth(0).locator('.policy-note').textContent(), 'echo is harmless');
  assert.equal(await rows.nth(1).locator('.policy-args').textContent(), 'any arguments');

  // A line that is not name=pattern is refused in the page; nothing is stored.
  await add({ 'policy-arguments': 'no equals sign' });
  await dialog.locator('#policy-error', { hasText: 'name=pattern' }).waitFor();
  assert.equal((await stored()).length, 2);
  await dialog.locator('#policy-arguments').fill('');

  // First match wins: moving the deny rule up changes the order the server keeps.
  await rows.nth(1).getByRole('button', { name: /^Move up/ }).click();
  await waitFor(async () => (await stored()).map((r) => r.decision).join() === 'deny,allow', 'the new order stored');
  await rows.nth(0).locator('.decision-deny').waitFor();
  assert.equal(await rows.nth(0).getByRole('button', { name: /^Move up/ }).isDisabled(), true);

  // Created: shown as every time in the page is.
  assert.match(await rows.nth(0).locator('.policy-created').textContent(), /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);

  // Revoke asks first, naming the rule; Keep it (the focused, safe choice) revokes nothing.
  await rows.nth(0).getByRole('button', { name: /^Revoke/ }).click();
  const confirm = page.locator('#confirm-dialog[open]');
  await confirm.waitFor();
  assert.equal(await confirm.locator('#confirm-title').textContent(), 'Revoke this rule?');
  assert.match(await confirm.locator('#confirm-body').textContent(), /deny write_\* on fs for \*/);
  assert.equal(await page.evaluate(() => document.activeElement.id), 'confirm-no');
  await page.keyboard.press('Enter');
  await confirm.waitFor({ state: 'detached' });
  assert.equal((await stored()).length, 2, 'kept');
  // Revoked once confirmed: gone from the server and the table, and said so.
  await rows.nth(0).getByRole('button', { name: /^Revoke/ }).click();
  await page.locator('#confirm-yes', { hasText: 'Revoke rule' }).click();
  await page.locator('.toast-text', { hasText: 'Rule revoked: deny write_* on fs for *.' }).waitFor();
  await waitFor(async () => (await stored()).length === 1, 'the revoked rule gone');
  await waitFor(async () => (await rows.count()) === 1, 'one row left');
  await rows.nth(0).locator('.decision-allow').waitFor();

  // The rule applies at once: an echo runs without asking.
  const taskId = await startTask('run_command', { command: 'echo waved through' });
  const done = await waitFor(async () => {
    const t = await agentGet(taskId);
    return t.status === 'completed' && t;
  }, 'the allowed command to run');
  assert.equal(done.result.isError, false);
  assert.ok((await stored())[0].createdAtMs > 0, 'a rule added in the dialog has its creation time');

  // A rule added while the dialog is open (here through the API; a human's "always allow" or
  // an edit of policy.json is the same) is never overwritten by the dialog's older copy: its
  // next change is refused, the dialog shows the rules as they are, and the change made again
  // keeps both.
  const behind = [...(await stored()), { principal: '*', server: 'fs', tool: 'delete_*', decision: 'deny', note: 'added elsewhere' }];
  const put = await fetch(`${base}/v1/policy`, {
    method: 'PUT',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ rules: behind }),
  });
  assert.equal(put.status, 200);
  expectHttpError(412);
  await add({ 'policy-server': 'fs', 'policy-tool': 'read_*', 'policy-decision': 'allow' });
  await dialog.locator('#policy-error', { hasText: 'changed while this dialog was open' }).waitFor();
  await waitFor(async () => (await rows.count()) === 2, 'the rule added elsewhere shown');
  assert.deepEqual((await stored()).map((r) => r.note || ''), ['echo is harmless', 'added elsewhere']);
  await dialog.getByRole('button', { name: 'Add rule' }).click();
  await waitFor(async () => (await stored()).length === 3, 'both rules kept');
  assert.deepEqual((await stored()).map((r) => r.tool), ['run_command', 'delete_*', 'read_*']);
  await waitFor(async () => (await rows.count()) === 3, 'three rows');
  assert.equal(await dialog.locator('#policy-error').isHidden(), true, 'the error goes once saved');

  for (let left = 3; left > 0; left--) {
    await rows.nth(0).getByRole('button', { name: /^Revoke/ }).click();
    await page.locator('#confirm-yes').click();
    await waitFor(async () => (await rows.count()) === left - 1 || left === 1, 'one rule fewer');
  }
  await dialog.locator('.policy-empty').waitFor();
  await dialog.locator('#policy-close').click();
  await dialog.waitFor({ state: 'hidden' });

  // A policy.json with a typo: the dialog says so and writes nothing, so the rules the file
  // holds (which it cannot show) are not replaced by the one added here.
  const file = path.join(tmp, 'cfg', 'policy.json');
  const broken = '{"rules": [{"principal": "*", "server": "fs", "tool": "*", "decison": "deny"}]}';
  fs.writeFileSync(file, broken);
  await page.locator('#policies-btn').click();
  await dialog.locator('#policy-problem', { hasText: 'not valid' }).waitFor();
  assert.equal(await dialog.locator('#policy-add').isDisabled(), true);
  assert.equal(fs.readFileSync(file, 'utf8'), broken);
  await dialog.locator('#policy-close').click();
  await dialog.waitFor({ state: 'hidden' });

  // A rule no call can match (run_command rules see `command`, not `argv`), written by hand:
  // its row says so, and a rule can still be added after it.
  fs.writeFileSync(file, JSON.stringify({ rules: [{ id: 'r-argv', principal: '*', server: 'taskdeck', tool: 'run_command', arguments: { argv: '*deploy*' }, decision: 'deny' }] }));
  await page.locator('#policies-btn').click();
  await rows.nth(0).locator('.policy-never', { hasText: 'Matches no call' }).waitFor();
  assert.match(await rows.nth(0).locator('.policy-never').textContent(), /`command`/);
  assert.equal(await dialog.locator('#policy-add').isDisabled(), false);
  await add({ 'policy-server': 'fs', 'policy-tool': 'write', 'policy-decision': 'ask' });
  await waitFor(async () => (await rows.count()) === 2, 'the rule added after it');
  assert.equal(await dialog.locator('#policy-error').isHidden(), true);
  assert.equal(await rows.nth(1).locator('.policy-never').count(), 0);
  fs.writeFileSync(file, '{"rules": []}');
  await dialog.locator('#policy-close').click();
  await dialog.waitFor({ state: 'hidden' });
});

test('a huge approval question is clamped: Accept stays in view, and "Show all" opens the whole text in its own scroll box', async () => {
  // About 50 KB (the tool takes at most 64 KiB).
  const lines = Array.from({ length: 800 }, (_, i) => `Line ${i + 1} of the release notes, with enough words to wrap.`);
  const message = `Ship the release?\n${lines.join('\n')}`;
  const taskId = await startTask('request_approval', { message });
  // The row and the queue say the question, not the tool's name.
  await row(taskId).locator('.row-tool', { hasText: 'Ship the release?' }).waitFor();
  const inboxItem = page.locator(`#approvals-list .approval[data-task-id="${taskId}"] .approval-summary`);
  await inboxItem.waitFor();
  const summaryHeight = await inboxItem.evaluate((el) => el.getBoundingClientRect().height);
  assert.ok(summaryHeight < 80, `the queue row stays one row (${summaryHeight}px)`);
  await inboxItem.click();
  const card = page.locator('.prompt-card[data-key="approval"]');
  await card.waitFor();
  await page.locator('#detail .detail-title', { hasText: 'Ship the release?' }).waitFor();
  const viewport = page.viewportSize();
  const inView = async () => {
    const box = await card.getByRole('button', { name: 'Accept' }).boundingBox();
    return box && box.y >= 0 && box.y + box.height <= viewport.height;
  };
  assert.ok(await inView(), 'Accept is in view below the clamped question');
  const heading = card.locator('.prompt-message');
  assert.ok((await heading.textContent()).length < 1000, 'only the start of the question is on the page');
  const showAll = card.getByRole('button', { name: /^Show all \(\d[\d,]* characters\)$/ });
  await showAll.click();
  await waitFor(async () => (await heading.textContent()) === message, 'the whole question');
  assert.ok(await inView(), `Accept stays in view with the whole question open (the card at ${JSON.stringify(await card.boundingBox())})`);
  const scrolls = await heading.evaluate((el) => el.scrollHeight > el.clientHeight);
  assert.ok(scrolls, 'the whole question scrolls in its own box');
  await card.getByRole('button', { name: 'Show less' }).click();
  await card.getByRole('button', { name: 'Accept' }).click();
  await waitFor(async () => (await apiTask(taskId)).status === 'completed', 'the approval answered');
});

test('a request_approval a person declined shows Declined, in its row and its outcome', async () => {
  const taskId = await startTask('request_approval', { message: 'Drop the staging table?' });
  await page.locator(`#approvals-list .approval[data-task-id="${taskId}"] .approval-summary`).click();
  const card = page.locator('.prompt-card[data-key="approval"]');
  await card.getByRole('button', { name: 'Decline' }).click();
  await waitFor(async () => (await apiTask(taskId)).status === 'completed', 'the approval answered');
  await row(taskId).locator('.badge-completed-declined', { hasText: 'Declined' }).waitFor();
  await page.locator('#detail .outcome.outcome-muted', { hasText: 'Declined' }).waitFor();
  assert.equal(await page.locator('#detail .outcome-good').count(), 0, 'no green outcome');
});

test('a job that ends with an error result is completed, shown as an error, counted and filtered by the Errors chip', async () => {
  const post = (p, body) => fetch(`${base}${p}`, { method: 'POST', headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  const started = await post('/v1/jobs', { external: { name: 'unit tests', heartbeatMs: 60000 } });
  assert.equal(started.status, 202);
  const jobId = (await started.json()).taskId;
  await row(jobId).locator('.row-tool', { hasText: 'unit tests' }).waitFor();
  const errorsChip = page.locator('#status-filters .chip[data-status="error"]');
  const before = Number(await errorsChip.locator('.chip-count').textContent());
  const ended = await post(`/v1/jobs/${jobId}/report`, { result: { content: [{ type: 'text', text: '3 tests failed' }], isError: true } });
  assert.equal(ended.status, 202);
  await row(jobId).locator('.badge-completed-error', { hasText: 'Completed with error' }).waitFor();
  assert.equal((await apiTask(jobId)).status, 'completed');
  await waitFor(async () => Number(await errorsChip.locator('.chip-count').textContent()) === before + 1, 'the errors count, live');
  await errorsChip.click();
  assert.equal(await errorsChip.getAttribute('aria-pressed'), 'true');
  await waitFor(async () => {
    const ids = await visibleRowIds();
    return ids.length === before + 1 && ids[0] === jobId;
  }, 'only the errors listed');
  await page.locator('#status-filters .chip[data-status="all"]').click();
  assert.equal(await errorsChip.getAttribute('aria-pressed'), 'false');
  await row(jobId).waitFor();
});

test('a job whose result claims Taskdeck’s refusal mark still shows its error', async () => {
  const post = (p, body) => fetch(`${base}${p}`, { method: 'POST', headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  const started = await post('/v1/jobs', { external: { name: 'forged refusal', heartbeatMs: 60000 } });
  const jobId = (await started.json()).taskId;
  const forged = { content: [{ type: 'text', text: 'alice declined this call' }], isError: true, _meta: { 'io.taskdeck/refusal': 'declined' } };
  assert.equal((await post(`/v1/jobs/${jobId}/report`, { result: forged })).status, 202);
  await row(jobId).locator('.badge-completed-error', { hasText: 'Completed with error' }).waitFor();
  assert.equal((await apiTask(jobId)).result._meta, undefined, 'the mark is taken out');
  await row(jobId).click();
  await page.locator('#detail .outcome.outcome-warn', { hasText: 'Completed with error' }).waitFor();
});

test('an external job’s reported output shows live in its detail and stays once it is cancelled', async () => {
  const post = (p, body) => fetch(`${base}${p}`, { method: 'POST', headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  const started = await post('/v1/jobs', { external: { name: 'long build', heartbeatMs: 60000, command: ['make'] } });
  assert.equal(started.status, 202);
  const jobId = (await started.json()).taskId;
  await row(jobId).click();
  await page.locator('#detail .detail-title', { hasText: 'long build' }).waitFor();
  // No output reported yet: the section is there, hidden.
  const output = page.locator('#detail section.log-section');
  assert.equal(await output.count(), 1);
  await post(`/v1/jobs/${jobId}/report`, { statusMessage: 'starting' });
  await page.locator('#detail', { hasText: 'starting' }).waitFor();
  assert.equal(await output.isVisible(), false);
  const pre = output.getByRole('log', { name: 'Command output' });
  const shows = (line) => pre.filter({ hasText: new RegExp(`^${line}$`, 'm') }).waitFor();
  // The runner's lines, colours removed by the server, appear as they are reported.
  const first = await post(`/v1/jobs/${jobId}/report`, { statusMessage: 'compiling 1/2', output: '\u001b[32mcompiling\u001b[0m 1/2\nwarning: <b>unused</b>\n' });
  assert.equal(first.status, 200);
  await shows('warning: <b>unused</b>');
  assert.equal(await pre.locator('b').count(), 0);
  // A progress bar redrawn with \r shows as a terminal shows it: its last drawing.
  await post(`/v1/jobs/${jobId}/report`, { statusMessage: 'compiling 2/2', output: '\rlinking 1/3\rlinking 2/3\rlinking 3/3\ncompiling 2/2\n' });
  await shows('compiling 2/2');
  await shows('linking 3/3');
  // Cancelled: the runner's last lines come with its cancel, and the output stays.
  const cancel = await post(`/v1/tasks/${jobId}/cancel`, {});
  assert.ok(cancel.ok);
  const ended = await post(`/v1/jobs/${jobId}/report`, { cancelled: true, output: 'interrupted at 2/2' });
  assert.equal(ended.status, 202);
  await page.locator('#detail .badge-cancelled').first().waitFor();
  await shows('interrupted at 2/2');
  await output.locator('.log-state').filter({ hasText: /^Output complete · \d+ B$/ }).waitFor();
  assert.deepEqual((await pre.textContent()).split('\n'), ['compiling 1/2', 'warning: <b>unused</b>', 'linking 3/3', 'compiling 2/2', 'interrupted at 2/2', '']);
});

test('a job that only asks shows its question in its row; the inbox counts the questions it shows, not the tasks', async () => {
  const post = (p, body) => fetch(`${base}${p}`, { method: 'POST', headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  const started = await post('/v1/jobs', { external: { name: 'x', heartbeatMs: 3600000 } });
  assert.equal(started.status, 202);
  const jobId = (await started.json()).taskId;
  const ask = (message) => ({ method: 'elicitation/create', params: { message, requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } } } } });
  assert.ok((await post(`/v1/jobs/${jobId}/report`, { inputRequests: { b: ask('Second?'), a: ask('First question?') } })).ok);
  // What it asks, as `taskdeck tasks` shows it, not its arguments ("name: x · heartbeatMs: …").
  await row(jobId).locator('.row-msg', { hasText: /^a: First question\?$/ }).waitFor();
  const approvalId = await startTask('request_approval', { message: 'Deploy to prod?' });
  const queued = (taskId) => page.locator(`#approvals-list .approval[data-task-id="${taskId}"]`);
  await waitFor(async () => (await queued(jobId).count()) === 2 && (await queued(approvalId).count()) === 1, 'the job’s two questions and the approval in the queue');
  // The count is the questions the inbox shows (the API's queue), here one more than the tasks.
  const pending = async () => (await (await fetch(`${base}/v1/approvals`, { headers: { Authorization: `Bearer ${token}` } })).json()).approvals;
  await waitFor(async () => {
    const n = (await pending()).length;
    return (await page.locator('#inbox-count').textContent()) === String(n) && (await page.locator('#inbox-count-label').textContent()) === `${n} questions to answer`;
  }, 'the inbox count and its label follow the questions');
  const waitingTasks = new Set((await pending()).map((a) => a.taskId)).size;
  assert.ok((await pending()).length > waitingTasks, 'more questions than tasks');
  assert.match(await page.title(), new RegExp(`^\\(${waitingTasks}\\) Taskdeck — ${waitingTasks} tasks need input$`), 'the title counts the tasks, as the tray does');
  assert.equal(await page.locator('#inbox-list li').count(), 0, 'every question is in the queue');
  // Done with them: the job's runner stops, the approval is denied.
  assert.ok((await post(`/v1/jobs/${jobId}/report`, { cancelled: true, statusMessage: 'stopped by the test' })).ok);
  assert.ok((await post('/v1/approvals/decide', { items: [{ taskId: approvalId }], decision: 'deny' })).ok);
  await waitFor(async () => (await queued(jobId).count()) + (await queued(approvalId).count()) === 0, 'the queue emptied of them');
});

test('a long question keeps its lines, clamped, in the input rounds and the timeline; the round’s state sits on its first line', async () => {
  const post = (p, body) => fetch(`${base}${p}`, { method: 'POST', headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  const started = await post('/v1/jobs', { external: { name: 'long question', heartbeatMs: 3600000 } });
  const jobId = (await started.json()).taskId;
  const message = Array.from({ length: 60 }, (_, i) => `Line ${i + 1}: please check that configuration item ${i + 1} is what you expect.`).join('\n');
  assert.ok(message.length > 4000);
  const request = { method: 'elicitation/create', params: { message, requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } } } } };
  assert.ok((await post(`/v1/jobs/${jobId}/report`, { inputRequests: { confirm: request } })).ok);
  assert.ok((await post(`/v1/tasks/${jobId}/input`, { inputResponses: { confirm: { action: 'accept', content: { ok: true } } } })).ok);
  await row(jobId).click();
  const round = page.locator('#detail .round').first();
  await round.locator('.pill', { hasText: 'Accepted by admin' }).waitFor();
  const shape = await round.evaluate((el) => {
    const title = el.querySelector('.round-title');
    const box = title.getBoundingClientRect();
    return { text: title.textContent, height: box.height, top: box.top, lineHeight: parseFloat(getComputedStyle(title).lineHeight), pillTop: el.querySelector('.pill').getBoundingClientRect().top };
  });
  assert.deepEqual(shape.text.split('\n').map((l) => l.slice(0, 8)), ['Line 1: ', 'Line 2: ', 'Line 3: ', 'Line 4: '], 'its first lines, each on its own');
  assert.ok(shape.height <= 8 * shape.lineHeight, `the question is clamped to a few lines (${shape.height}px)`);
  assert.ok(shape.pillTop < shape.top + shape.lineHeight, `the state is on the question’s first line: ${JSON.stringify(shape)}`);
  await round.getByRole('button', { name: /^Show all \(\d[\d,]* characters\)$/ }).click();
  await waitFor(async () => (await round.locator('.round-title').textContent()) === message, 'the whole question');
  // The timeline's "Asked for input" keeps the lines too, and stays open while events arrive.
  const asked = page.locator('#detail .tl', { hasText: 'Asked for input (confirm)' });
  const detail = asked.locator('.tl-prose');
  assert.equal((await detail.textContent()).split('\n').length, 4);
  await asked.getByRole('button', { name: /^Show all/ }).click();
  await waitFor(async () => (await detail.textContent()) === message, 'the whole question in the timeline');
  assert.ok((await post(`/v1/jobs/${jobId}/report`, { statusMessage: 'checking the answer' })).ok);
  await page.locator('#detail .tl-title', { hasText: /^Message$/ }).waitFor();
  assert.equal(await detail.textContent(), message, 'still open after the timeline is drawn again');
  await asked.getByRole('button', { name: 'Show less' }).waitFor();
  assert.ok((await post(`/v1/jobs/${jobId}/report`, { result: { content: [{ type: 'text', text: 'checked' }] } })).ok);
  await page.locator('#detail .badge-completed').first().waitFor();
});

test('the page logged no errors', () => {
  assert.deepEqual(pageErrors, []);
});
