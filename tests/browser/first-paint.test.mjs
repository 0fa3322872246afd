// The page's first requests (ui/js/early.js): GET /v1/me and the list's first page go out from
// early.js, once each, and the page draws its first rows (or, for a refused token, the token
// screen) from those very answers. And the part of the page loaded after the first rows
// (ui/js/rest.js): keys pressed and changes made before it has loaded are not lost. The real
// `taskdeck serve` and headless Chromium; the requests and who sent them are read from the
// DevTools protocol (Network.requestWillBeSent).
//
//   TASKDECK_BIN=/path/to/taskdeck node --test tests/browser/first-paint.test.mjs

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chromium } from 'playwright-core';
import { startTestServer, tearDown, CHROMIUM } from './harness.mjs';

let server;
let base;
let token;
let tmp;
let browser;

before(async () => {
  ({ dir: tmp, child: server, url: base, token } = await startTestServer(['--conformance-fixtures']));
  for (let i = 0; i < 3; i++) {
    const resp = await fetch(`${base}/v1/jobs`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ tool: 'echo', arguments: { n: i, note: `first paint ${i}` } }),
    });
    assert.ok(resp.ok, `POST /v1/jobs: ${resp.status}`);
  }
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'] });
});

after(() => tearDown({ browser, server, tmp }));

/**
 * Opens the page with `#token=<bearer>` in a fresh context and records every request it sends:
 * `[{url, method, initiatorUrls}]`, where initiatorUrls are the script URLs on the stack that
 * sent it; `beforeLoad(page)` runs before the page is opened. Resolves with
 * `{page, requests, errors}`.
 */
async function open(bearer, { beforeLoad = async () => {} } = {}) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  const page = await context.newPage();
  await beforeLoad(page);
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  const requests = [];
  const cdp = await context.newCDPSession(page);
  cdp.on('Network.requestWillBeSent', ({ request, initiator }) => {
    const urls = [];
    for (let s = initiator && initiator.stack; s; s = s.parent) for (const f of s.callFrames) urls.push(f.url);
    requests.push({ url: request.url, method: request.method, initiatorUrls: urls });
  });
  await cdp.send('Network.enable');
  await page.goto(`${base}/#token=${encodeURIComponent(bearer)}`);
  return { page, requests, errors };
}

const pathOf = (url) => url.slice(base.length);

test('/v1/me and the first list page are sent once, from early.js, and the first rows come from them', async () => {
  const { page, requests, errors } = await open(token);
  await page.locator('#task-list .row[aria-rowindex="1"]:not([hidden]) .row-id[title]').waitFor();
  // Everything the start sends has gone out once the stream is open.
  await page.locator('#conn[data-state="open"]').waitFor();
  await page.locator('#me', { hasText: 'admin' }).waitFor();
  const rows = await page.locator('#task-list .row:not([hidden]) .row-msg').allTextContents();
  assert.ok(rows.some((t) => t.includes('first paint')), `rows: ${JSON.stringify(rows)}`);

  for (const path of ['/v1/me', '/v1/tasks?limit=50']) {
    const sent = requests.filter((r) => pathOf(r.url) === path);
    assert.equal(sent.length, 1, `${path} sent ${sent.length} times: the page did not take early.js's answer`);
    assert.equal(sent[0].method, 'GET');
    assert.ok(
      sent[0].initiatorUrls.some((u) => u.endsWith('/js/early.js')),
      `${path} was sent by ${JSON.stringify(sent[0].initiatorUrls)}, not early.js`,
    );
  }
  // early.js's requests go out before app.js has run: the stream, which app.js opens, comes later.
  const order = requests.map((r) => pathOf(r.url).split('?')[0]);
  assert.ok(order.indexOf('/v1/tasks') < order.indexOf('/v1/events'), `order: ${JSON.stringify(order)}`);
  // The token was scrubbed from the address bar and is in no request's URL.
  assert.ok(!page.url().includes('token='), page.url());
  for (const r of requests) assert.ok(!r.url.includes(token), `token in ${r.url}`);
  assert.equal(await page.evaluate(() => sessionStorage.getItem('taskdeck.token')), token);
  assert.deepEqual(errors, []);
  await page.context().close();
});

test('a refused token: early.js\'s answers bring up the token screen, and the page asks nothing twice', async () => {
  const { page, requests, errors } = await open('not-a-valid-token');
  await page.locator('#token-screen:not([hidden])').waitFor();
  await page.locator('#token-error', { hasText: 'not accepted' }).waitFor();
  assert.equal(await page.locator('#app').isHidden(), true);
  for (const path of ['/v1/me', '/v1/tasks?limit=50']) {
    assert.equal(requests.filter((r) => pathOf(r.url) === path).length, 1, path);
  }
  assert.equal(requests.filter((r) => pathOf(r.url).startsWith('/v1/events')).length, 0, 'no stream for a refused token');
  assert.equal(await page.evaluate(() => sessionStorage.getItem('taskdeck.token')), null, 'the refused token is forgotten');
  assert.deepEqual(errors, []);
  await page.context().close();
});

/** POSTs an echo job whose note is `note`; resolves with its task id. */
async function createTask(note) {
  const resp = await fetch(`${base}/v1/jobs`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ tool: 'echo', arguments: { note } }),
  });
  assert.ok(resp.ok, `POST /v1/jobs: ${resp.status}`);
  const job = await resp.json();
  return job.taskId || job.task.taskId;
}

/** Opens the page with rest.js held back until the returned `release` is called. */
async function openHoldingRest() {
  let requested;
  const asked = new Promise((r) => {
    requested = r;
  });
  let release;
  const released = new Promise((r) => {
    release = r;
  });
  const opened = await open(token, {
    beforeLoad: (p) =>
      p.route('**/js/rest.js', async (route) => {
        requested();
        await released;
        await route.continue();
      }),
  });
  await opened.page.locator('#task-list .row:not([hidden]) .row-id[title]').first().waitFor();
  await asked;
  return { ...opened, release };
}

test('keys pressed and a task created while rest.js is still loading: each key acts in turn, the stream resumes from the list page', async () => {
  // rest.js (the stream, opening a task...) is held back until the keys have been pressed.
  // The page asks for it once the first rows are drawn, without a key or click asking.
  const { page, requests, errors, release } = await openHoldingRest();
  await page.locator('#task-list .row[aria-rowindex="2"]:not([hidden]) .row-id[title]').waitFor();
  const created = await createTask('made while rest.js loads');

  await page.keyboard.press('j');
  await page.keyboard.press('j');
  await page.keyboard.press('x');
  await page.keyboard.press('Enter');
  const activeId = await page.$eval('#task-list', (el) => document.getElementById(el.getAttribute('aria-activedescendant')).querySelector('.row-id').title);
  const rowIds = await page.locator('#task-list .row:not([hidden]) .row-id').evaluateAll((els) => els.map((e) => e.title));
  assert.equal(activeId, rowIds[1], 'j j highlights the second row at once');
  // x selects at once (the bulk bar is in the first load); Enter waits for rest.js.
  await page.locator('#bulk-bar:not([hidden])', { hasText: '1 selected' }).waitFor();
  assert.equal(await page.locator('#conn').getAttribute('data-state'), 'connecting', 'rest.js had not loaded: no stream yet');
  assert.equal(await page.locator('#detail .task-id').count(), 0, 'rest.js had not loaded: no task open yet');
  assert.ok(!rowIds.includes(created), 'the new task came after the list page');

  release();
  // Enter, pressed before rest.js ran, opens the row highlighted then.
  await page.locator('#detail .task-id', { hasText: activeId }).waitFor();
  // The task created before the stream started comes from the stream's replay, not from
  // loading the list again: the stream resumed from the first page's eventId.
  await page.locator('#conn[data-state="open"]').waitFor();
  await page.locator(`#task-list .row:not([hidden]) .row-id[title="${created}"]`).waitFor();
  assert.equal(requests.filter((r) => pathOf(r.url) === '/v1/tasks?limit=50').length, 1, 'the list was loaded again');
  // Keys after rest.js has loaded: Escape closes the task, ? shows the help.
  await page.keyboard.press('Escape');
  await page.locator('#detail .task-id').waitFor({ state: 'detached' });
  await page.keyboard.press('?');
  await page.locator('#help-dialog[open]').waitFor();
  assert.deepEqual(errors, []);
  await page.context().close();
});

test('i, and Enter then a, pressed while rest.js loads: the approval queue takes focus; the task opens and a answers it', async () => {
  const resp = await fetch(`${base}/v1/jobs`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ tool: 'request_approval', arguments: { message: 'Ship it, early keys?' } }),
  });
  assert.ok(resp.ok, `POST /v1/jobs: ${resp.status}`);
  const job = await resp.json();
  const waiting = job.taskId || job.task.taskId;
  const statusOf = async () => {
    const r = await fetch(`${base}/v1/tasks/${waiting}`, { headers: { Authorization: `Bearer ${token}` } });
    return (await r.json()).task.status;
  };
  for (let i = 0; i < 100 && (await statusOf()) !== 'input_required'; i++) await new Promise((r) => setTimeout(r, 50));

  // i before the queues have loaded: once they have, focus goes to the approval queue, which
  // holds the waiting question.
  let held = await openHoldingRest();
  await held.page.keyboard.press('i');
  held.release();
  await held.page.waitForFunction(() => document.getElementById('approvals-list').contains(document.activeElement) && document.activeElement.id !== 'approvals-list');
  assert.match(await held.page.evaluate(() => document.activeElement.textContent), /Ship it, early keys\?/);
  assert.deepEqual(held.errors, []);
  await held.page.context().close();

  // j Enter a before rest.js has loaded: the newest row (the waiting task) opens and a answers
  // its prompt once it is shown.
  held = await openHoldingRest();
  await held.page.keyboard.press('j');
  await held.page.keyboard.press('Enter');
  await held.page.keyboard.press('a');
  held.release();
  await held.page.locator('#detail .task-id', { hasText: waiting }).waitFor();
  for (let i = 0; i < 100 && (await statusOf()) === 'input_required'; i++) await new Promise((r) => setTimeout(r, 50));
  assert.notEqual(await statusOf(), 'input_required', 'a answered the prompt');
  assert.deepEqual(held.errors, []);
  await held.page.context().close();
});
