// The Servers view in headless Chromium against the real `taskdeck serve`: opened from the
// header, a stdio server added with a secret env value (a password input, never shown again:
// not in the page, not in /v1/servers), removed after the confirmation; and how a failed server
// reads (state chip, last error, collapsible stderr tail), from a /v1/servers answer the test
// gives the page (on this build no upstream connects by itself).
//
//   cd tests/browser && npm ci && node --test servers.test.mjs
//   TASKDECK_BIN=/path/to/taskdeck  CHROMIUM=/path/to/chromium

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { openUi, startServer, tearDown, BIN, CHROMIUM } from './harness.mjs';

const SECRET = 'browser-s3cret-value';

let server;
let base;
let token;
let tmp;
let browser;
let page;
const pageErrors = [];

before(async () => {
  assert.ok(fs.existsSync(BIN), `taskdeck binary not found at ${BIN}`);
  const started = await startServer(BIN);
  tmp = started.dir;
  server = started.child;
  base = started.url;
  token = fs.readFileSync(started.tokenFile, 'utf8').trim();
  ({ browser, page } = await openUi({ chromium, executablePath: CHROMIUM, base, token, pageErrors }));
});

after(() => tearDown({ browser, server, tmp }));

test('add a stdio server with a secret, see it listed without the secret, remove it', async () => {
  await page.locator('#servers-btn').click();
  const dialog = page.locator('#servers-dialog');
  await dialog.waitFor();
  await dialog.locator('#servers-empty').waitFor();

  await dialog.locator('#server-name').fill('fs');
  await dialog.locator('#server-command').fill('npx -y @modelcontextprotocol/server-filesystem "/my dir"');
  await dialog.locator('#server-add-row').click();
  await dialog.locator('.server-key').fill('API_KEY');
  const value = dialog.locator('.server-value');
  assert.equal(await value.getAttribute('type'), 'password');
  await value.fill(SECRET);
  await dialog.locator('#server-add').click();

  const row = dialog.locator('.server-row[data-name="fs"]');
  await row.waitFor();
  assert.equal(await row.locator('.server-target').textContent(), "npx -y @modelcontextprotocol/server-filesystem '/my dir'");
  assert.match(await row.textContent(), /env API_KEY/);
  assert.match(await row.locator('.server-state').textContent(), /starting|connected|failed/);
  // The form was reset: the secret is nowhere in the page any more.
  assert.equal(await dialog.locator('.server-value').count(), 0);
  assert.ok(!(await page.content()).includes(SECRET), 'the page shows the secret');
  const listed = await (await fetch(`${base}/v1/servers`, { headers: { Authorization: `Bearer ${token}` } })).text();
  assert.ok(!listed.includes(SECRET), listed);
  const file = fs.readFileSync(path.join(tmp, 'cfg', 'servers.json'), 'utf8');
  assert.ok(file.includes(SECRET), 'the file keeps the value');

  // A bad name is refused in the form, before any request.
  await dialog.locator('#server-name').fill('Bad Name');
  await dialog.locator('#server-command').fill('x');
  await dialog.locator('#server-add').click();
  assert.match(await dialog.locator('#server-form-error').textContent(), /lowercase/);

  await row.getByRole('button', { name: 'Remove fs' }).click();
  await page.locator('#confirm-yes').click();
  await row.waitFor({ state: 'detached' });
  await dialog.locator('#servers-empty').waitFor();
  await dialog.locator('#servers-x').click();
});

test('a failed server shows its chip, last error and a collapsible stderr tail', async () => {
  await page.route('**/v1/servers', (route) =>
    route.fulfill({
      contentType: 'application/json',
      body: JSON.stringify({
        servers: [
          { name: 'broken', transport: 'stdio', target: 'broken-server', cwd: null, envKeys: [], headerNames: [], disabled: false, state: 'failed', lastError: 'exited with status 1', stderrTail: ['starting', 'fatal: no config'], toolCount: 0, protocolVersion: null, restarts: 3, sinceMs: 0 },
          { name: 'docs', transport: 'http', target: 'https://x.example/mcp', cwd: null, envKeys: [], headerNames: ['Authorization'], disabled: false, state: 'connected', lastError: null, stderrTail: [], toolCount: 14, protocolVersion: '2025-11-25', restarts: 0, sinceMs: 0 },
        ],
      }),
    }),
  );
  await page.locator('#servers-btn').click();
  const broken = page.locator('.server-row[data-name="broken"]');
  await broken.waitFor();
  assert.equal(await broken.locator('.server-state').textContent(), 'failed');
  assert.match(await broken.locator('.server-state').getAttribute('class'), /tone-bad/);
  assert.equal(await broken.locator('.server-error').textContent(), 'Last error: exited with status 1');
  const tail = broken.locator('details.server-tail');
  assert.equal(await tail.getAttribute('open'), null, 'the tail starts collapsed');
  await tail.locator('summary').click();
  assert.equal(await tail.locator('pre').textContent(), 'starting\nfatal: no config');
  const docs = page.locator('.server-row[data-name="docs"]');
  assert.equal(await docs.locator('.server-tools').textContent(), '14 tools');
  // The open view re-fetches every few seconds; an opened tail stays open.
  await page.waitForTimeout(3500);
  assert.notEqual(await page.locator('.server-row[data-name="broken"] details').getAttribute('open'), null);
  await page.unroute('**/v1/servers');
  await page.locator('#servers-x').click();
  assert.deepEqual(pageErrors, []);
});
