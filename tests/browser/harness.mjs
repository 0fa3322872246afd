// What every browser test needs: the binary and Chromium under test, and from the real
// server: start `taskdeck serve` in a fresh temp
// dir on an ephemeral port (read from its banner, with the admin token file it prints), and
// poll for a condition with a deadline.

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository's root directory. */
export const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
/** The taskdeck binary under test: `TASKDECK_BIN`, else the debug build. */
export const BIN = process.env.TASKDECK_BIN || path.join(repo, 'target', 'debug', 'taskdeck');
/** The Chromium the tests drive: `CHROMIUM`, else Debian's. */
export const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';

/**
 * Starts `bin serve` in `dir` (default: a new temp dir; its data dir is `dir/data`) with `extra`
 * flags; resolves with `{child, url, tokenFile, dir}` once the banner names the URL and the
 * admin token file (30 s at most).
 */
export function startServer(bin, extra = [], dir = fs.mkdtempSync(path.join(os.tmpdir(), 'taskdeck-ui-'))) {
  const child = spawn(bin, ['serve', '--port', '0', '--data-dir', path.join(dir, 'data'), '--config-dir', path.join(dir, 'cfg'), ...extra], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start in time; output:\n${out}`)), 30_000);
    const onData = (chunk) => {
      out += chunk.toString();
      const url = /running headless on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      const tokenFile = /Admin token:\s*(\S+)/.exec(out);
      if (url && tokenFile) {
        clearTimeout(timer);
        resolve({ child, url: url[1], tokenFile: tokenFile[1], dir });
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited early (${code}); output:\n${out}`));
    });
  });
}

/**
 * Checks that the binary and Chromium under test exist (failing with what to set otherwise), then
 * starts `BIN serve` with `extra` flags (startServer); resolves with `{child, url, token, dir}`,
 * `token` being the admin token read from its file.
 */
export async function startTestServer(extra = []) {
  if (!fs.existsSync(BIN)) throw new Error(`taskdeck binary not found at ${BIN} (cargo build, or set TASKDECK_BIN)`);
  if (!fs.existsSync(CHROMIUM)) throw new Error(`Chromium not found at ${CHROMIUM} (set CHROMIUM)`);
  const started = await startServer(BIN, extra);
  return { ...started, token: fs.readFileSync(started.tokenFile, 'utf8').trim() };
}

/**
 * Polls `fn` until it returns a truthy value (which it resolves with); fails naming `what`
 * after `timeout` ms (default 15 s), checking every `interval` ms (default 100).
 */
export async function waitFor(fn, what, { timeout = 15_000, interval = 100 } = {}) {
  const deadline = Date.now() + timeout;
  let last;
  for (;;) {
    try {
      last = await fn();
      if (last) return last;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what} (last: ${last instanceof Error ? last.message : JSON.stringify(last)})`);
    await new Promise((r) => setTimeout(r, interval));
  }
}

/**
 * Launches headless Chromium (`executablePath`) on a 1280x900 page of the UI at `base`, signed
 * in with `token`, once its event stream is open; page errors go to `pageErrors`, and `onPage`
 * may watch the page before it loads (awaited: an init script it adds, `page.addInitScript`,
 * is registered before the page is opened). Resolves with `{browser, page}`.
 */
export async function openUi({ chromium, executablePath, base, token, pageErrors, onPage = () => {} }) {
  const browser = await chromium.launch({ executablePath, args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'] });
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
  page.on('pageerror', (e) => pageErrors.push(e.message));
  await onPage(page);
  await page.goto(`${base}/#token=${encodeURIComponent(token)}`);
  await page.locator('#conn[data-state="open"]').waitFor();
  return { browser, page };
}

/** Closes `browser`, stops `server` (SIGTERM, SIGKILL after 5 s) and removes the temp dir `tmp`. */
export async function tearDown({ browser, server, tmp }) {
  if (browser) await browser.close();
  if (server && server.exitCode === null) {
    const exited = new Promise((r) => server.once('exit', r));
    server.kill('SIGTERM');
    const timer = setTimeout(() => server.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
  }
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
}
