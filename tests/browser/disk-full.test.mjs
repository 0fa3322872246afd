// A full disk in headless Chromium against the real `taskdeck serve`, whose data dir is a small
// tmpfs: an agent's write (through the API) is refused with 503 `disk_full`, and the page, which
// only watches, says why in a banner under the top bar ("The disk holding Taskdeck’s store is
// full: free some space; writes resume by themselves"); a write the page makes (cancelling a
// task) is refused too; once space is freed the banner goes by itself, and the next write
// succeeds.
//
// Mounting the tmpfs needs root (or passwordless `sudo -n`); without either the test is
// skipped and says so (CI runs as root).
//
//   cd tests/browser && npm ci && node --test disk-full.test.mjs
//   TASKDECK_BIN=/path/to/taskdeck  CHROMIUM=/path/to/chromium

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { openUi, startServer, tearDown, waitFor, BIN, CHROMIUM } from './harness.mjs';

/** `mount`/`umount` as root, else through `sudo -n`. */
function privileged(args) {
  const root = process.getuid() === 0;
  execFileSync(root ? args[0] : 'sudo', root ? args.slice(1) : ['-n', ...args], { stdio: 'pipe' });
}

/** Why no tmpfs can be mounted here, or null when one can. */
function cannotMount() {
  if (process.getuid() === 0) return null;
  try {
    execFileSync('sudo', ['-n', 'true'], { stdio: 'pipe' });
    return null;
  } catch {
    return 'mounting a tmpfs for the data dir needs root or passwordless `sudo -n`';
  }
}

/** Writes `file` until its file system is full. */
function fill(file) {
  const fd = fs.openSync(file, 'w');
  const write = (chunk) => {
    try {
      fs.writeSync(fd, chunk);
      return true;
    } catch (e) {
      if (e.code !== 'ENOSPC') throw e;
      return false;
    }
  };
  while (write(Buffer.alloc(64 * 1024, 7)));
  // Smaller pieces take the last free blocks.
  while (write(Buffer.alloc(512, 7)));
  fs.closeSync(fd);
}

const skip = cannotMount();
let dir;
let data;
let mounted = false;
let server;
let base;
let token;
let browser;
let page;
const pageErrors = [];

async function createJob(name) {
  return fetch(`${base}/v1/jobs`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ external: { name } }),
  });
}

const row = (taskId) => page.locator('#task-list .row:not([hidden])', { has: page.locator(`.row-id[title="${taskId}"]`) });

before(async () => {
  if (skip) return;
  assert.ok(fs.existsSync(BIN), `taskdeck binary not found at ${BIN}`);
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'taskdeck-ui-full-'));
  data = path.join(dir, 'data');
  fs.mkdirSync(data);
  privileged(['mount', '-t', 'tmpfs', '-o', `size=24m,uid=${process.getuid()},mode=0700`, 'tmpfs', data]);
  mounted = true;
  const started = await startServer(BIN, [], dir);
  server = started.child;
  base = started.url;
  token = fs.readFileSync(started.tokenFile, 'utf8').trim();
  ({ browser, page } = await openUi({ chromium, executablePath: CHROMIUM, base, token, pageErrors }));
});

after(async () => {
  if (skip) return;
  await tearDown({ browser, server });
  if (mounted) privileged(['umount', '-l', data]);
  fs.rmSync(dir, { recursive: true, force: true });
});

test('a full disk shows why, to a page that only watches too, until there is room', { skip: skip ?? false }, async () => {
  const resp = await createJob('waits while the disk fills');
  assert.equal(resp.status, 202);
  const { taskId } = await resp.json();
  await row(taskId).click();
  await page.locator('#detail .badge', { hasText: 'Working' }).waitFor();
  const banner = page.locator('#store-banner');
  assert.equal(await banner.isVisible(), false);

  fill(path.join(data, 'filler'));
  // The WAL may still take a frame or two: write until the store refuses, then fill what the
  // failed commit handed back.
  await waitFor(async () => (await createJob('probe')).status === 503, 'a write refused on the full disk');
  fill(path.join(data, 'filler-2'));
  // The page has written nothing: the server's event stream tells it.
  await banner.waitFor();
  assert.equal(await banner.textContent(), 'The disk holding Taskdeck’s store is full: free some space; writes resume by themselves.');

  const dialog = page.locator('#confirm-dialog');
  await page.getByRole('button', { name: 'Cancel task…' }).click();
  await dialog.getByRole('button', { name: 'Cancel task' }).click();
  await banner.waitFor();
  assert.equal(await banner.textContent(), 'The disk holding Taskdeck’s store is full: free some space; writes resume by themselves.');
  await page.locator('.toast-bad', { hasText: 'Could not cancel' }).first().waitFor();

  fs.rmSync(path.join(data, 'filler'));
  fs.rmSync(path.join(data, 'filler-2'));
  // Room again: the server says so (it checks every 2 s while full) before anyone writes.
  await banner.waitFor({ state: 'hidden', timeout: 10000 });
  await page.getByRole('button', { name: 'Cancel task…' }).click();
  await dialog.getByRole('button', { name: 'Cancel task' }).click();
  await page.getByRole('button', { name: 'Cancel requested' }).waitFor();
  assert.deepEqual(pageErrors, []);
});
