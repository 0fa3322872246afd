// The page's geometry in headless Chromium against the real `taskdeck serve`, measured with
// boundingBox and the elements' sizes: a long task title is cut before its tool and principal,
// and the short id drops out of view first, at 1280, 1000, 640 and 420 px wide; ticking a row shows the selection bar
// without moving the rows, and the list scrolls past it; a label beside the detail's title never
// breaks inside its word; at the minimum window size, 640x480, with two approvals pending, the
// first approval and the first two rows are in view; a row's big progress numbers stay in
// their box, before its message; a long question's row keeps its tool and principal in sight;
// a group of identical calls keeps its count, tool and principal in sight, and a single call
// its principal (its arguments give way); at 420 px a question's text has the row's first line,
// its tool and principal under it; at 1280x800 many
// approvals scroll inside the queue and the task list stays in view; the Policies table breaks
// names only when it must;
// at 1280x820 the header stays one line while paused (saying "Paused", not "Live") and while
// its stream reconnects, "Signed in as admin" whole in both (the note beside Pause gives way);
// paused, at 1280x800, 800x600 and 420x800 no pill of the header is cut ("sees all principals"
// shortens or goes out of sight); a long principal name shows whole in a task row (the title
// gives way); at 420 px wide the queue shows at least three rows and the task list stays
// reachable.
//
//   cd tests/browser && npm ci && node --test layout.test.mjs
//   TASKDECK_BIN=/path/to/taskdeck  CHROMIUM=/path/to/chromium

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { chromium } from 'playwright-core';
import { openUi, startServer, tearDown, waitFor, BIN, CHROMIUM } from './harness.mjs';


let server;
let base;
let token;
let tmp;
let browser;
let page;
const pageErrors = [];

/** Registers an external job named `name` (`POST /v1/jobs`); resolves with its task id. */
async function job(name, extra = {}) {
  const resp = await fetch(`${base}/v1/jobs`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ external: { name, heartbeatMs: 600_000, ...extra } }),
  });
  assert.equal(resp.status, 202, await resp.clone().text());
  return (await resp.json()).taskId;
}

/** Sends job `taskId`'s runner report `body` (`POST /v1/jobs/{id}/report`). */
async function report(taskId, body) {
  const resp = await fetch(`${base}/v1/jobs/${taskId}/report`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  assert.ok(resp.ok, await resp.clone().text());
}

const row = (taskId) => page.locator('#task-list .row:not([hidden])', { has: page.locator(`.row-id[title="${taskId}"]`) });

/**
 * The top bar of page `p`: its height, and the items in view that are not on its first line
 * (their top below the first item's bottom), by id or class.
 */
function topbarLines(p) {
  return p.locator('.topbar').evaluate((bar) => {
    const items = [...bar.children].filter((el) => el.getClientRects().length);
    const first = items[0].getBoundingClientRect();
    const below = items.filter((el) => el.getBoundingClientRect().top >= first.bottom).map((el) => el.id || el.className);
    return { height: bar.getBoundingClientRect().height, below };
  });
}

/**
 * Who is signed in, in page `p`'s top bar: the principal's name, and whether "Signed in as NAME"
 * shows whole: #me's box is as wide as those words set alone, and more (an ellipsis drawn at
 * its end, when what follows them is cut, would cover their last letters); and #me ends before
 * the next item of the bar.
 */
function signedIn(p) {
  return p.locator('#me').evaluate((me) => {
    const name = me.querySelector('strong');
    const width = (...parts) => {
      const probe = document.createElement('span');
      probe.style.cssText = `position: absolute; white-space: nowrap; font: ${getComputedStyle(me).font}`;
      probe.append(...parts);
      document.body.append(probe);
      const w = probe.getBoundingClientRect().width;
      probe.remove();
      return w;
    };
    const bold = document.createElement('span');
    bold.style.font = getComputedStyle(name).font;
    bold.textContent = name.textContent;
    const words = width('Signed in as ', bold);
    const ellipsis = getComputedStyle(me).textOverflow === 'ellipsis' && me.scrollWidth > me.clientWidth ? width('…') : 0;
    const box = me.getBoundingClientRect();
    const next = [...me.parentElement.children].slice([...me.parentElement.children].indexOf(me) + 1).find((el) => el.getClientRects().length);
    const fits = me.clientWidth + 0.5 >= words + ellipsis && (!next || box.right <= next.getBoundingClientRect().left + 0.5);
    return { name: name.textContent, whole: fits && me.textContent.startsWith(`Signed in as ${name.textContent}`) };
  });
}

before(async () => {
  assert.ok(fs.existsSync(BIN), `taskdeck binary not found at ${BIN}`);
  const started = await startServer(BIN);
  server = started.child;
  base = started.url;
  tmp = started.dir;
  token = fs.readFileSync(started.tokenFile, 'utf8').trim();
  ({ browser, page } = await openUi({ chromium, executablePath: CHROMIUM, base, token, pageErrors }));
});

after(() => tearDown({ browser, server, tmp }));

/** Starts a `run_command` job for each of `commands` (each waits for its approval); resolves with their task ids. */
async function askToRun(commands) {
  const asked = [];
  for (const command of commands) {
    // A command line, or a call's whole arguments.
    const args = typeof command === 'string' ? { command } : command;
    const resp = await fetch(`${base}/v1/jobs`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ tool: 'run_command', arguments: args }),
    });
    assert.equal(resp.status, 202, await resp.clone().text());
    asked.push((await resp.json()).taskId);
  }
  return asked;
}

/**
 * The first line of task `taskId`'s row: whether its title shows whole, and each label that is
 * in view (inside the line's box), with whether it shows whole.
 */
async function titleLine(taskId) {
  return row(taskId).evaluate((el) => {
    const title = el.querySelector('.row-tool');
    const line = title.parentElement;
    const labels = [...line.querySelectorAll('.row-keep > :not([hidden]), .row-labels > :not([hidden])')].map((l) => {
      // In view: inside the box that clips it (its group), and that inside the line.
      const clip = l.parentElement.getBoundingClientRect();
      const cell = line.getBoundingClientRect();
      const box = { bottom: Math.min(clip.bottom, cell.bottom), right: Math.min(clip.right, cell.right) };
      const r = l.getBoundingClientRect();
      return { text: l.textContent, inView: r.width > 0 && r.top < box.bottom - 1 && r.left < box.right - 1, whole: r.right <= box.right + 0.5 && l.scrollWidth <= l.clientWidth };
    });
    return { whole: title.scrollWidth <= title.clientWidth, width: title.clientWidth, labels: labels.filter((l) => l.inView) };
  });
}

test('a long title is cut before its tool and principal, and the short id goes first, at 1280, 1000, 640 and 420 px wide', async () => {
  const short = 'Deploy v2.3 to production?';
  const long = 'Nightly export of the billing ledger to the finance database';
  const shortId = await job(short);
  const longId = await job(long);
  // A command line and a question as titles, each longer than the row at 1280 px.
  const [loop] = await askToRun(['for i in $(seq 1 20); do echo step $i/20; sleep 1; done']);
  const asked = await fetch(`${base}/v1/jobs`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ tool: 'request_approval', arguments: { message: `Please confirm the migration of every customer database to the new cluster in eu-west-1 ${'and more '.repeat(6)}` } }),
  });
  assert.equal(asked.status, 202, await asked.clone().text());
  const question = (await asked.json()).taskId;
  const rows = { [shortId]: 'external', [longId]: 'external', [loop]: 'run_command', [question]: 'request_approval' };
  for (const id of Object.keys(rows)) await row(id).waitFor();
  for (const width of [1280, 1000, 640, 420]) {
    await page.setViewportSize({ width, height: 820 });
    await waitFor(async () => (await titleLine(shortId)).whole, `"${short}" whole at ${width} px`);
    for (const [id, tool] of Object.entries(rows)) {
      const line = await titleLine(id);
      // Which tool ran it and whose it is are in view, whole, whatever the title's length.
      assert.deepEqual(line.labels.slice(0, 2).map((l) => [l.text, l.whole]), [[tool, true], ['admin', true]], `${width} px: ${JSON.stringify(line)}`);
      // The short id gives way before the title loses a letter, and is never cut.
      if (!line.whole) assert.equal(line.labels.length, 2, `${width} px: the title is cut while the id shows: ${JSON.stringify(line)}`);
      assert.ok(line.labels.every((l) => l.whole), `${width} px: a label is cut: ${JSON.stringify(line)}`);
      assert.ok(line.width > 0, `${width} px: some of the title shows`);
    }
    // The long rows' titles are what gave way.
    if (width === 1280) {
      assert.equal((await titleLine(loop)).whole, false, 'the loop is longer than its row');
      assert.equal((await titleLine(shortId)).labels.length, 3, 'beside a short title, the id shows too');
    }
  }
  await page.setViewportSize({ width: 1280, height: 900 });
  for (const id of [loop, question]) await fetch(`${base}/v1/tasks/${id}/cancel`, { method: 'POST', headers: { Authorization: `Bearer ${token}` } });
});

test('ticking a row shows the selection bar without moving a row, and the list scrolls past it', async () => {
  await page.setViewportSize({ width: 1280, height: 820 });
  const ids = [];
  for (let i = 0; i < 24; i++) ids.push(await job(`select me ${i}`));
  await row(ids[23]).waitFor(); // the newest: the first row
  const list = page.locator('#task-list');
  const first = page.locator('#task-list .row:not([hidden])[aria-rowindex="1"]');
  const second = page.locator('#task-list .row:not([hidden])[aria-rowindex="2"]');
  const before = await second.boundingBox();
  await first.locator('.row-check').click();
  const bar = page.locator('#bulk-bar');
  await page.locator('#bulk-count', { hasText: '1 selected' }).waitFor();
  assert.deepEqual(await second.boundingBox(), before, 'the rows stay where they were');
  // The next click lands where the pointer is: on the second row's checkbox.
  const check = await second.locator('.row-check').boundingBox();
  await page.mouse.click(check.x + check.width / 2, check.y + check.height / 2);
  await page.locator('#bulk-count', { hasText: '2 selected' }).waitFor();
  await page.locator('#task-list .row:not([hidden])[aria-rowindex="2"][aria-selected="true"]').waitFor();
  // The bar lies over the foot of the list; scrolled to the end, the last row is above it.
  const barBox = await bar.boundingBox();
  const listBox = await list.boundingBox();
  assert.ok(barBox.y + barBox.height <= listBox.y + listBox.height + 0.5, 'the bar is within the list pane');
  await list.evaluate((el) => {
    el.scrollTop = el.scrollHeight;
  });
  const rows = await page.locator('#task-list').getAttribute('aria-rowcount');
  const last = page.locator(`#task-list .row:not([hidden])[aria-rowindex="${rows}"]`);
  await last.waitFor();
  const lastBox = await last.boundingBox();
  assert.ok(lastBox.y + lastBox.height <= barBox.y + 0.5, `the last row (${JSON.stringify(lastBox)}) scrolls above the bar (${JSON.stringify(barBox)})`);
  await page.locator('#bulk-clear').click();
  await bar.waitFor({ state: 'hidden' });
  await list.evaluate((el) => {
    el.scrollTop = 0;
  });
  await page.setViewportSize({ width: 1280, height: 900 });
});

test('the tool label beside a long title in the detail heading never breaks inside its word', async () => {
  // A long word at the end of the title pushes the label to the end of a line at some widths.
  const id = await job('Nightly export of the billing ledger to the finance warehouse_and_archive_storage_bucket_for_2024');
  await row(id).click();
  const tool = page.locator('#detail .detail-title .detail-tool');
  await tool.waitFor();
  assert.equal(await tool.textContent(), 'external');
  // Every width from 600 to 1400 px puts the end of the title's lines somewhere else.
  const broken = [];
  for (let width = 600; width <= 1400; width += 4) {
    await page.setViewportSize({ width, height: 900 });
    const boxes = await tool.evaluate((el) => el.getClientRects().length);
    if (boxes !== 1) broken.push(width);
  }
  assert.deepEqual(broken, [], 'widths where "external" is split over two lines');
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.locator('#task-list').focus();
  await page.keyboard.press('Escape');
  await page.locator('#detail .detail-empty').waitFor();
});

test('at 640x480 with two approvals pending, the inbox shows the first and the first two rows are in view', async () => {
  await askToRun(['echo one', 'echo two']);
  await page.setViewportSize({ width: 640, height: 480 });
  const approvals = page.locator('#approvals-list .approval');
  await waitFor(async () => (await approvals.count()) === 2, 'two approvals in the queue');
  await page.evaluate(() => window.scrollTo(0, 0));
  const view = { width: 640, height: 480 };
  const inView = (b) => b && b.y >= 0 && b.y + b.height <= view.height + 0.5 && b.x >= 0 && b.x + b.width <= view.width + 0.5;
  for (const index of [1, 2]) {
    const box = await page.locator(`#task-list .row:not([hidden])[aria-rowindex="${index}"]`).boundingBox();
    assert.ok(inView(box), `row ${index} is in view: ${JSON.stringify(box)}`);
  }
  // The first call can be decided as it is; the second scrolls inside the inbox.
  const approve = await approvals.first().locator('.approval-approve').boundingBox();
  assert.ok(inView(approve), `the first approval's Approve is in view: ${JSON.stringify(approve)}`);
  // ... and not clipped by the inbox's own scroll box: whole inside it, Deny too.
  const list = await page.locator('#approvals-list').boundingBox();
  for (const button of ['.approval-approve', '.approval-deny']) {
    const b = await approvals.first().locator(button).boundingBox();
    assert.ok(b.y >= list.y - 0.5 && b.y + b.height <= list.y + list.height + 0.5, `${button} is whole inside the inbox (${JSON.stringify(b)} in ${JSON.stringify(list)})`);
  }
  assert.ok(await page.locator('#approvals-list').evaluate((el) => el.scrollHeight > el.clientHeight), 'the other approval scrolls inside the inbox');
  assert.ok(inView(await page.locator('#search').boundingBox()), 'search is in view');
  assert.ok(inView(await page.locator('#status-filters .chip').first().boundingBox()), 'the chips are in view');
  await page.setViewportSize({ width: 1280, height: 900 });
  await fetch(`${base}/v1/approvals/decide`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ items: (await (await fetch(`${base}/v1/approvals`, { headers: { Authorization: `Bearer ${token}` } })).json()).approvals.map((a) => ({ taskId: a.taskId, key: a.key })), decision: 'deny' }),
  });
});

test('at 1280x820, an open call’s head (what is asked, Approve) stays in view while its reason is typed', async () => {
  const asked = await askToRun(['echo first', 'ls -la /tmp', 'make deploy', 'echo last']);
  await page.setViewportSize({ width: 1280, height: 820 });
  const approvals = page.locator('#approvals-list .approval');
  await waitFor(async () => (await approvals.count()) === 4, 'four approvals in the queue');
  await page.locator('#task-list').focus();
  await page.keyboard.press('i');
  await page.keyboard.press('j');
  await page.keyboard.press('d');
  await waitFor(() => page.evaluate(() => document.activeElement.classList.contains('approval-reason')), 'the reason box');
  await page.keyboard.type('not now');
  const list = await page.locator('#approvals-list').boundingBox();
  const second = approvals.nth(1);
  for (const part of ['.approval-summary', '.approval-approve']) {
    const b = await second.locator(part).boundingBox();
    assert.ok(b.y >= list.y - 0.5 && b.y + b.height <= list.y + list.height + 0.5, `${part} is in the queue's view (${JSON.stringify(b)} in ${JSON.stringify(list)})`);
  }
  const reason = await second.locator('.approval-reason').boundingBox();
  assert.ok(reason.y >= list.y && reason.y + reason.height <= list.y + list.height + 0.5, `the reason box too: ${JSON.stringify(reason)}`);
  await page.keyboard.press('Escape');
  await page.setViewportSize({ width: 1280, height: 900 });
  await fetch(`${base}/v1/approvals/decide`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ items: asked.map((taskId) => ({ taskId })), decision: 'deny' }),
  });
  await waitFor(async () => (await approvals.count()) === 0, 'the queue emptied');
});

test('at 640x480 the help opens at its top, the first keys in view', async () => {
  await page.setViewportSize({ width: 640, height: 480 });
  await page.locator('#task-list').focus();
  await page.keyboard.press('?');
  const dialog = page.locator('#help-dialog[open]');
  await dialog.waitFor();
  const first = await dialog.locator('.keys tr').first().boundingBox();
  assert.ok(first && first.y >= 0 && first.y + first.height <= 480, `the first key is in view: ${JSON.stringify(first)}`);
  assert.equal(await page.evaluate(() => document.activeElement.id), 'help-close', 'Close has the focus');
  await page.keyboard.press('Escape');
  await dialog.waitFor({ state: 'detached' });
  await page.setViewportSize({ width: 1280, height: 900 });
});

test('a row’s big progress numbers are shortened to fit beside its message, whole in the tooltip and the detail', async () => {
  const id = await job('big progress');
  await report(id, { statusMessage: '/very/long/path/to/some/deeply/nested/directory/structure/with/many/levels/file.txt', progress: { current: 1234567, total: 98765432 } });
  const text = row(id).locator('.row-progress-text');
  for (const width of [1280, 1000, 640]) {
    await page.setViewportSize({ width, height: 820 });
    await text.filter({ hasText: /^1\.2M \/ 98\.8M$/ }).waitFor();
    const box = await row(id).evaluate((el) => {
      const r = (sel) => el.querySelector(sel).getBoundingClientRect();
      const t = el.querySelector('.row-progress-text');
      return { text: r('.row-progress-text'), wrap: r('.row-progress'), msg: r('.row-msg'), whole: t.scrollWidth <= t.clientWidth, title: el.querySelector('.row-progress').title };
    });
    // The numbers end inside the progress box, and the box before the message.
    assert.ok(box.text.right <= box.wrap.right + 0.5 && box.wrap.right <= box.msg.left + 0.5, `${width} px: the numbers overlap the message: ${JSON.stringify(box)}`);
    assert.ok(box.whole, `${width} px: the numbers are cut: ${JSON.stringify(box)}`);
    assert.equal(box.title, '1234567 / 98765432');
  }
  await page.setViewportSize({ width: 1280, height: 820 });
  await row(id).click();
  await page.locator('#detail .progress-text', { hasText: /^1234567 \/ 98765432 · 1%/ }).waitFor();
  await page.locator('#task-list').focus();
  await page.keyboard.press('Escape');
  await page.locator('#detail .detail-empty').waitFor();
  await page.setViewportSize({ width: 1280, height: 900 });
});

test('a long multi-line question keeps its tool and principal in sight in the queue, at 1280 and 640 px', async () => {
  const message = `Ship the release to every region?\n${'This will restart every service in the fleet. '.repeat(12)}\nReply with care.`;
  const resp = await fetch(`${base}/v1/jobs`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ tool: 'request_approval', arguments: { message } }),
  });
  assert.equal(resp.status, 202, await resp.clone().text());
  const { taskId } = await resp.json();
  const question = page.locator(`#approvals-list .approval[data-task-id="${taskId}"]`);
  for (const width of [1280, 640]) {
    await page.setViewportSize({ width, height: 820 });
    await question.waitFor();
    const shown = await question.locator('.approval-summary').evaluate((summary) => {
      const box = summary.getBoundingClientRect();
      const part = (sel) => {
        const el = summary.querySelector(sel);
        const r = el.getBoundingClientRect();
        return { text: el.textContent, whole: el.scrollWidth <= el.clientWidth && r.width > 0 && r.right <= box.right + 0.5 };
      };
      return { message: part('.approval-tool'), tool: part('.approval-args'), principal: part('.approval-principal') };
    });
    assert.ok(shown.message.text.startsWith('Ship the release to every region?'), JSON.stringify(shown));
    assert.ok(!shown.message.whole, `the question's text is what gives way at ${width} px`);
    assert.deepEqual(shown.tool, { text: 'request_approval', whole: true }, `the tool at ${width} px`);
    assert.equal(shown.principal.whole, true, `the principal at ${width} px: ${JSON.stringify(shown.principal)}`);
    assert.ok(shown.principal.text.length > 0);
  }
  await page.setViewportSize({ width: 1280, height: 900 });
  const cancel = await fetch(`${base}/v1/tasks/${taskId}/cancel`, { method: 'POST', headers: { Authorization: `Bearer ${token}` } });
  assert.ok(cancel.ok, await cancel.text());
  await question.waitFor({ state: 'detached' });
});

test('at 1280x820 the header says Paused instead of Live, and stays one line with the paused note', async () => {
  await page.setViewportSize({ width: 1280, height: 820 });
  const live = await topbarLines(page);
  assert.deepEqual(live.below, [], 'the header is one line to start with');
  await page.locator('#task-list').focus();
  await page.keyboard.press('p');
  await page.locator('#conn[data-state="paused"]', { hasText: 'Paused' }).waitFor();
  assert.match(await page.locator('#conn').getAttribute('title'), /paused/);
  // The note beside it does not say "Paused" twice; who is signed in keeps the room.
  assert.deepEqual(await signedIn(page), { name: 'admin', whole: true }, 'who is signed in shows whole while paused');
  assert.equal(await page.locator('#pending-note').textContent(), 'list frozen');
  // Updates to seven tasks wait, two each: a long note, and "Resume (N)" with two digits.
  const ids = [];
  for (let i = 0; i < 7; i++) ids.push(await job(`paused ${i}`));
  for (const step of [1, 2]) for (const id of ids) await report(id, { statusMessage: `step ${step}`, progress: { current: step, total: 3 } });
  await page.locator('#pending-note', { hasText: /^\d\d updates to 7 tasks waiting$/ }).waitFor();
  const paused = await topbarLines(page);
  assert.deepEqual(paused.below, [], `nothing goes to a second line while paused: ${JSON.stringify(paused)}`);
  assert.equal(paused.height, live.height, 'the header keeps its height (the page does not shift)');
  // "Signed in as admin" keeps its room beside the longest note and "Resume (N)": the note gives way.
  assert.deepEqual(await signedIn(page), { name: 'admin', whole: true }, 'who is signed in shows whole with updates waiting');
  assert.match(await page.locator('#pending-note').getAttribute('title'), /^Paused · \d+ updates to 7 tasks waiting$/);
  await page.keyboard.press('p');
  await page.locator('#conn[data-state="open"]', { hasText: 'Live' }).waitFor();
  await page.setViewportSize({ width: 1280, height: 900 });
});

/**
 * The pills in page `p`'s top bar that are in view (the live indicator, "sees all principals"):
 * for each, its text in view (of its parts that are in view) and whether it shows whole: not
 * cut by its own box, nor by a box around it that clips, nor by the window.
 */
function headerPills(p) {
  return p.locator('.topbar').evaluate((bar) => {
    const inView = (el) => {
      const r = el.getBoundingClientRect();
      return r.width > 2 && r.height > 2;
    };
    return [...bar.querySelectorAll('.conn, .pill')].filter(inView).map((el) => {
      const r = el.getBoundingClientRect();
      let whole = el.scrollWidth <= el.clientWidth + 1 && r.left >= -0.5 && r.right <= document.documentElement.clientWidth + 0.5;
      for (let a = el.parentElement; a && a !== bar.parentElement; a = a.parentElement) {
        if (getComputedStyle(a).overflowX === 'visible') continue;
        const c = a.getBoundingClientRect();
        if (r.left < c.left - 0.5 || r.right > c.right + 0.5) whole = false;
      }
      const parts = [...el.children].filter((c) => c.textContent.trim());
      const text = (parts.length ? parts.filter(inView).map((c) => c.textContent) : [el.textContent]).join('').trim();
      return { text, whole };
    });
  });
}

test('paused, at 1280x800, 800x600 and 420x800, no pill of the header is cut: "sees all principals" shortens, then goes out of sight', async () => {
  await page.setViewportSize({ width: 1280, height: 800 });
  // Live, with room: the pill shows whole.
  assert.deepEqual(await headerPills(page), [{ text: 'Live', whole: true }, { text: 'sees all principals', whole: true }]);
  await page.locator('#task-list').focus();
  await page.keyboard.press('p');
  await page.locator('#conn[data-state="paused"]', { hasText: 'Paused' }).waitFor();
  // Updates to seven tasks wait: the longest note ("14 updates to 7 tasks waiting") and "Resume (14)".
  const ids = [];
  for (let i = 0; i < 7; i++) ids.push(await job(`pill ${i}`));
  for (const step of [1, 2]) for (const id of ids) await report(id, { statusMessage: `step ${step}` });
  await page.locator('#pending-note', { hasText: /^\d\d updates to 7 tasks waiting$/ }).waitFor();
  for (const [width, height] of [[1280, 800], [800, 600], [420, 800]]) {
    await page.setViewportSize({ width, height });
    await page.waitForFunction(() => new Promise((r) => requestAnimationFrame(() => r(true))));
    const pills = await headerPills(page);
    for (const pill of pills) assert.equal(pill.whole, true, `at ${width}x${height} a pill of the header is cut: ${JSON.stringify(pills)}`);
    assert.deepEqual(pills[0], { text: 'Paused', whole: true }, `at ${width}x${height}`);
    for (const pill of pills.slice(1)) assert.match(pill.text, /^sees all( principals)?$/, `at ${width}x${height}: ${JSON.stringify(pills)}`);
    // Where who is signed in shows, it shows whole; the pill's words are still read out.
    if (await page.locator('#me').isVisible()) assert.deepEqual(await signedIn(page), { name: 'admin', whole: true }, `at ${width}x${height}`);
    assert.equal(await page.locator('.me-pill-full').textContent(), 'sees all principals');
  }
  // At 1280 px the note and "Resume (14)" leave the pill no room: out of sight, not cut.
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.waitForFunction(() => new Promise((r) => requestAnimationFrame(() => r(true))));
  assert.equal(await page.locator('.me-pill').getAttribute('data-fit'), 'none');
  // Resumed, the note goes and the pill comes back whole.
  await page.keyboard.press('p');
  await page.locator('#conn[data-state="open"]', { hasText: 'Live' }).waitFor();
  await waitFor(async () => JSON.stringify(await headerPills(page)) === JSON.stringify([{ text: 'Live', whole: true }, { text: 'sees all principals', whole: true }]), 'the pill whole again once resumed');
  await page.setViewportSize({ width: 1280, height: 900 });
});

test('at 1280x820 the header stays one line while the stream reconnects, paused or not', async () => {
  // A page whose stream cannot connect: it keeps saying "Reconnecting…".
  const context = await browser.newContext({ viewport: { width: 1280, height: 820 } });
  const p = await context.newPage();
  p.on('pageerror', (e) => pageErrors.push(e.message));
  await p.route('**/v1/events**', (route) => route.fulfill({ status: 503, body: 'down for the test' }));
  await p.goto(`${base}/#token=${encodeURIComponent(token)}`);
  await p.locator('#conn[data-state="reconnecting"]', { hasText: 'Reconnecting…' }).waitFor();
  await p.locator('#task-list .row').first().waitFor();
  assert.deepEqual((await topbarLines(p)).below, [], 'one line while reconnecting');
  assert.deepEqual(await signedIn(p), { name: 'admin', whole: true }, 'who is signed in shows whole while reconnecting');
  await p.locator('#task-list').focus();
  await p.keyboard.press('p');
  await p.locator('#pending-note', { hasText: 'list frozen' }).waitFor();
  // A stream that is down says so, paused or not.
  assert.equal(await p.locator('#conn').getAttribute('data-state'), 'reconnecting');
  assert.deepEqual((await topbarLines(p)).below, [], 'one line while reconnecting and paused');
  assert.deepEqual(await signedIn(p), { name: 'admin', whole: true }, 'who is signed in shows whole while reconnecting and paused');
  await context.close();
});

/** Denies every pending approval (`POST /v1/approvals/decide`) and waits for the queue to empty. */
async function denyAll() {
  const pending = (await (await fetch(`${base}/v1/approvals`, { headers: { Authorization: `Bearer ${token}` } })).json()).approvals;
  if (pending.length) {
    const resp = await fetch(`${base}/v1/approvals/decide`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ items: pending.map((a) => ({ taskId: a.taskId, key: a.key })), decision: 'deny' }),
    });
    assert.equal(resp.status, 200, await resp.clone().text());
  }
  await waitFor(async () => (await page.locator('#approvals-list > li').count()) === 0, 'the queue emptied');
}

/** The parts of queue row `row`'s summary (by selector): each one's text and whether it shows whole, inside the summary. */
function summaryParts(row, parts) {
  return row.locator('.approval-summary').evaluate((summary, sels) => {
    const box = summary.getBoundingClientRect();
    const out = { width: box.width };
    for (const [name, sel] of Object.entries(sels)) {
      const el = summary.querySelector(sel);
      const r = el.getBoundingClientRect();
      out[name] = { text: el.textContent, width: r.width, top: r.top, whole: el.scrollWidth <= el.clientWidth && r.width > 0 && r.right <= box.right + 0.5 };
    }
    return out;
  }, parts);
}

test('a single call’s row keeps its principal whole and cuts its arguments; at 420 px a question’s text gets the first line', async () => {
  const [callId] = await askToRun([`cp /var/lib/${'a-rather-long-directory-name/'.repeat(4)}data.db /tmp/backup.db`]);
  const resp = await fetch(`${base}/v1/jobs`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ tool: 'request_approval', arguments: { message: 'Ship release 1.2 to production?' } }),
  });
  assert.equal(resp.status, 202, await resp.clone().text());
  const questionId = (await resp.json()).taskId;
  const call = page.locator(`#approvals-list .approval[data-task-id="${callId}"]`);
  const question = page.locator(`#approvals-list .approval[data-task-id="${questionId}"]`);
  for (const width of [1280, 1000, 640, 420]) {
    await page.setViewportSize({ width, height: 800 });
    await call.waitFor();
    const c = await summaryParts(call, { tool: '.approval-tool', args: '.approval-args', principal: '.approval-principal' });
    assert.deepEqual([c.principal.text, c.principal.whole], ['admin', true], `the call's principal at ${width} px: ${JSON.stringify(c)}`);
    assert.ok(c.args.text.startsWith('command: cp /var/lib/'), JSON.stringify(c.args));
    assert.equal(c.args.whole, false, `the arguments are what gives way at ${width} px: ${JSON.stringify(c)}`);
    if (width >= 640) assert.equal(c.tool.whole, true, `the call's tool at ${width} px: ${JSON.stringify(c)}`);
    const q = await summaryParts(question, { text: '.approval-tool', tool: '.approval-args', principal: '.approval-principal' });
    assert.deepEqual([q.text.text, q.text.whole], ['Ship release 1.2 to production?', true], `the question at ${width} px: ${JSON.stringify(q)}`);
    assert.deepEqual([q.tool.text, q.tool.whole], ['request_approval', true], `the question's tool at ${width} px`);
    assert.deepEqual([q.principal.text, q.principal.whole], ['admin', true], `the question's principal at ${width} px`);
    if (width === 420) {
      // The tool and principal under the text; the call's arguments under its tool and principal.
      assert.ok(q.tool.top > q.text.top && q.principal.top > q.text.top, `420 px: ${JSON.stringify(q)}`);
      assert.ok(c.args.top > c.tool.top && c.args.width > c.width * 0.9, `420 px: the arguments get a line of their own: ${JSON.stringify(c)}`);
    }
  }
  // A short narrow window: the first row (three lines) still shows whole, with its Approve and Deny.
  await page.setViewportSize({ width: 420, height: 480 });
  await page.evaluate(() => window.scrollTo(0, 0));
  const list = await page.locator('#approvals-list').boundingBox();
  for (const button of ['.approval-approve', '.approval-deny']) {
    const b = await page.locator('#approvals-list > li').first().locator(button).boundingBox();
    assert.ok(b && b.y >= list.y - 0.5 && b.y + b.height <= list.y + list.height + 0.5, `420x480: ${button} is whole inside the queue (${JSON.stringify(b)} in ${JSON.stringify(list)})`);
  }
  await page.setViewportSize({ width: 1280, height: 900 });
  await denyAll();
});

test('a group of identical calls always shows how many calls it holds, its tool and principal; the arguments give way', async () => {
  const command = `touch /tmp/${'a-rather-long-directory-name/'.repeat(5)}same-file`;
  await askToRun([command, command, command]);
  const group = page.locator('#approvals-list .approval-group');
  for (const width of [1280, 1000, 640, 420]) {
    await page.setViewportSize({ width, height: 800 });
    await group.locator('.approval-group-count', { hasText: '3 identical calls' }).waitFor();
    const shown = await group.locator('.approval-group-toggle').evaluate((toggle) => {
      const box = toggle.getBoundingClientRect();
      const part = (sel) => {
        const el = toggle.querySelector(sel);
        const r = el.getBoundingClientRect();
        return { text: el.textContent, whole: el.scrollWidth <= el.clientWidth && r.width > 0 && r.right <= box.right + 0.5 };
      };
      return { count: part('.approval-group-count'), tool: part('.approval-tool'), args: part('.approval-args'), principal: part('.approval-principal'), title: toggle.title };
    });
    assert.deepEqual(shown.count, { text: '▸ 3 identical calls', whole: true }, `the count at ${width} px: ${JSON.stringify(shown)}`);
    assert.deepEqual(shown.principal, { text: 'admin', whole: true }, `the principal at ${width} px`);
    if (width >= 640) assert.deepEqual(shown.tool, { text: 'taskdeck · run_command', whole: true }, `the tool at ${width} px`);
    assert.ok(shown.args.text.startsWith('command: touch /tmp/'), JSON.stringify(shown.args));
    assert.equal(shown.args.whole, false, `the arguments are what gives way at ${width} px`);
    assert.ok(shown.title.startsWith('3 identical calls (taskdeck · run_command from admin): command: touch'), shown.title);
  }
  await page.setViewportSize({ width: 1280, height: 900 });
  await denyAll();
});

/** How far the page scrolls as a whole, and whether the task list's first row is in view. */
function pageFit() {
  return page.evaluate(() => {
    const first = document.querySelector('#task-list .row:not([hidden])[aria-rowindex="1"]').getBoundingClientRect();
    return {
      overflow: document.scrollingElement.scrollHeight - window.innerHeight,
      firstRow: { top: first.top, bottom: first.bottom },
      inView: first.top >= 0 && first.bottom <= window.innerHeight + 0.5,
    };
  });
}

test('at 1280x800, many approvals (selected, or one opened) scroll inside the queue: the task list stays in view and the page does not scroll', async () => {
  await page.setViewportSize({ width: 1280, height: 800 });
  const ids = [];
  for (let i = 0; i < 40; i++) {
    const resp = await fetch(`${base}/v1/jobs`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ tool: 'request_approval', arguments: { message: `Bulk question number ${i}: proceed?` } }),
    });
    assert.equal(resp.status, 202, await resp.clone().text());
    ids.push((await resp.json()).taskId);
  }
  await askToRun(['echo open me']);
  const approvals = page.locator('#approvals-list > li');
  await waitFor(async () => (await approvals.count()) >= 41, 'the 41 approvals in the queue');
  const plain = await pageFit();
  assert.ok(plain.overflow <= 0 && plain.inView, `41 approvals: ${JSON.stringify(plain)}`);
  assert.ok(await page.locator('#approvals-list').evaluate((el) => el.scrollHeight > el.clientHeight), 'the queue scrolls inside itself');
  // Selected: the selection bar and its reason box take room too.
  for (const i of [0, 1, 2]) await approvals.nth(i).locator('.approval-check').click();
  await page.locator('#approvals-selected', { hasText: '3 selected' }).waitFor();
  const selected = await pageFit();
  assert.ok(selected.overflow <= 0 && selected.inView, `with a selection: ${JSON.stringify(selected)}`);
  await page.locator('#approvals-clear').click();
  // One call opened (its card: the arguments, the editor, the reason box).
  const call = page.locator('#approvals-list .approval[data-kind="call"]');
  await call.locator('.approval-summary').click();
  await call.locator('.approval-reason').waitFor();
  const open = await pageFit();
  assert.ok(open.overflow <= 0 && open.inView, `with a call open: ${JSON.stringify(open)}`);
  const head = await call.locator('.approval-approve').boundingBox();
  assert.ok(head && head.y >= 0 && head.y + head.height <= 800, `the open call's Approve is in view: ${JSON.stringify(head)}`);
  await page.setViewportSize({ width: 1280, height: 900 });
  await denyAll();
});

test('a long principal name shows whole in its task row at 1280 and 420 px wide; the title gives way', async () => {
  const made = await fetch(`${base}/v1/agents`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ name: 'release-pipeline-bot' }),
  });
  assert.equal(made.status, 201, await made.clone().text());
  const agent = (await made.json()).token;
  const asAgent = async (body) => {
    const resp = await fetch(`${base}/v1/jobs`, { method: 'POST', headers: { Authorization: `Bearer ${agent}`, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
    assert.equal(resp.status, 202, await resp.clone().text());
    return (await resp.json()).taskId;
  };
  // A short title (room to spare), a long one, and a command line with a longer tool name.
  const short = await asAgent({ external: { name: 'short', heartbeatMs: 600_000 } });
  const long = await asAgent({ external: { name: 'Nightly export of the billing ledger to the finance database, every table', heartbeatMs: 600_000 } });
  const command = await asAgent({ tool: 'run_command', arguments: { command: 'for i in $(seq 1 20); do echo step $i/20; sleep 1; done' } });
  const rows = { [short]: 'external', [long]: 'external', [command]: 'run_command' };
  for (const id of Object.keys(rows)) await row(id).waitFor();
  for (const width of [1280, 420]) {
    await page.setViewportSize({ width, height: 820 });
    await waitFor(async () => (await titleLine(short)).whole, `"short" whole at ${width} px`);
    for (const [id, tool] of Object.entries(rows)) {
      const line = await titleLine(id);
      assert.deepEqual(line.labels.slice(0, 2).map((l) => [l.text, l.whole]), [[tool, true], ['release-pipeline-bot', true]], `${width} px: ${JSON.stringify(line)}`);
      assert.ok(line.width > 0, `${width} px: some of the title shows`);
    }
    assert.equal((await titleLine(long)).whole, false, `${width} px: the long title is what gives way`);
  }
  await page.setViewportSize({ width: 1280, height: 900 });
  await fetch(`${base}/v1/tasks/${command}/cancel`, { method: 'POST', headers: { Authorization: `Bearer ${token}` } });
});

test('at 420 px wide the queue shows at least three rows whole, tall window or short, and the task list stays reachable', async () => {
  // The first two hold credentials: their rows carry a "values hidden" badge, a line more.
  await askToRun([
    { command: 'echo one', env: { API_TOKEN: 'hunter2-not-shown' } },
    { command: 'ls -la /var/log', env: { DB_PASSWORD: 'hunter3-not-shown' } },
    'git push origin main', 'make deploy ENV=staging', 'rm -rf build',
  ]);
  const approvals = page.locator('#approvals-list > li');
  await waitFor(async () => (await approvals.count()) >= 5, 'the 5 approvals in the queue');
  await waitFor(async () => (await page.locator('#approvals-list .approval-hidden').count()) >= 2, 'the two "values hidden" rows');
  for (const height of [800, 900, 640, 480]) {
    await page.setViewportSize({ width: 420, height });
    await page.evaluate(() => window.scrollTo(0, 0));
    const fit = await waitFor(async () => {
      const r = await page.evaluate(() => {
        const list = document.getElementById('approvals-list').getBoundingClientRect();
        const whole = [...document.querySelectorAll('#approvals-list > li')].filter((li) => {
          const b = li.getBoundingClientRect();
          return b.height > 0 && b.top >= list.top - 0.5 && b.bottom <= list.bottom + 0.5 && b.bottom <= window.innerHeight + 0.5;
        });
        return { whole: whole.length, list: { top: list.top, height: list.height } };
      });
      return r.whole >= 3 && r;
    }, `three whole queue rows at 420x${height}`, { timeout: 3000 }).catch((e) => assert.fail(`420x${height}: ${e.message}`));
    assert.ok(fit.whole >= 3);
    // The task list, under the queue, can be brought into view whole, with rows in it.
    const list = await page.evaluate(() => {
      const el = document.getElementById('task-list');
      el.scrollIntoView({ block: 'end' });
      const r = el.getBoundingClientRect();
      const rows = [...el.querySelectorAll('.row:not([hidden])')].filter((row) => {
        const b = row.getBoundingClientRect();
        return b.top >= r.top - 0.5 && b.bottom <= r.bottom + 0.5 && b.top >= -0.5 && b.bottom <= window.innerHeight + 0.5;
      });
      return { top: r.top, bottom: r.bottom, height: r.height, rowsInView: rows.length };
    });
    assert.ok(list.top >= -0.5 && list.bottom <= height + 0.5 && list.rowsInView >= 2, `420x${height}: the task list is reachable: ${JSON.stringify(list)}`);
    await page.evaluate(() => {
      window.scrollTo(0, 0);
      document.querySelector('.list-pane').scrollTop = 0;
    });
  }
  await page.setViewportSize({ width: 1280, height: 900 });
  await denyAll();
});

test('the Policies table breaks a principal, server or tool name only when it must, a note sensibly, and at 420 px shows each rule as a card', async () => {
  const file = `${tmp}/cfg/policy.json`;
  const before = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : null;
  fs.writeFileSync(file, JSON.stringify({ rules: [
    { principal: 'agent1', server: 'taskdeck', tool: 'run_command', arguments: { command: 'echo *' }, decision: 'allow', note: 'echo is harmless' },
    { principal: 'agent1', server: 'taskdeck', tool: 'run_command', arguments: { command: 'echo hi; ls', cwd: '/tmp/h49b' }, decision: 'allow', note: 'always allow, from task 01a248598b7d-c8cd09ec451d49bbb9f3978abc7a136e' },
  ] }));
  try {
    for (const width of [1280, 1000]) {
      await page.setViewportSize({ width, height: 800 });
      await page.locator('#policies-btn').click();
      const table = page.locator('.policy-table');
      await waitFor(async () => (await table.locator('tbody tr').count()) === 2, 'the two rules');
      const broken = await table.evaluate((t) => [...t.querySelectorAll('tbody td > code')].filter((c) => c.getClientRects().length !== 1).map((c) => c.textContent));
      assert.deepEqual(broken, [], `${width} px: names split over lines`);
      // The note's long task id breaks at its hyphens, not letter by letter down the column.
      const noteLines = await table.locator('tbody tr').nth(1).locator('.policy-note').evaluate((td) => {
        const r = document.createRange();
        r.selectNodeContents(td);
        return new Set([...r.getClientRects()].map((b) => Math.round(b.top))).size;
      });
      assert.ok(noteLines <= 4, `${width} px: the note takes ${noteLines} lines`);
      await page.keyboard.press('Escape');
      await table.waitFor({ state: 'hidden' });
    }
    // At 420 px each rule is a card: every column shows, labelled, and its buttons are in view.
    await page.setViewportSize({ width: 420, height: 800 });
    await page.locator('#policies-btn').click();
    const table = page.locator('.policy-table');
    await waitFor(async () => (await table.locator('tbody tr').count()) === 2, 'the two rules at 420 px');
    const fit = await page.locator('#policy-dialog').evaluate((dialog) => {
      const box = dialog.getBoundingClientRect();
      const rules = dialog.querySelector('#policy-rules');
      const cut = [...dialog.querySelectorAll('.policy-table tbody td')].filter((td) => {
        const r = td.getBoundingClientRect();
        return r.width < 40 || r.right > box.right + 1;
      });
      return { scrolls: rules.scrollWidth > rules.clientWidth + 1, cut: cut.map((td) => td.dataset.label) };
    });
    assert.deepEqual(fit, { scrolls: false, cut: [] }, '420 px: nothing cut or squeezed');
    const revoke = await table.locator('tbody tr').nth(1).getByRole('button', { name: /^Revoke/ }).boundingBox();
    assert.ok(revoke && revoke.x >= 0 && revoke.x + revoke.width <= 420, `420 px: Revoke in view: ${JSON.stringify(revoke)}`);
    assert.equal(await table.locator('tbody tr').nth(0).locator('td.policy-note').evaluate((td) => getComputedStyle(td, '::before').content), '"Note"');
    await page.keyboard.press('Escape');
    await table.waitFor({ state: 'hidden' });
  } finally {
    if (before === null) fs.rmSync(file, { force: true });
    else fs.writeFileSync(file, before);
    await page.setViewportSize({ width: 1280, height: 900 });
  }
});

test('at 420 px the Connect an agent dialog shows every client tab whole', async () => {
  await page.setViewportSize({ width: 420, height: 800 });
  await page.locator('#connect-btn').click();
  const dialog = page.locator('#agent-dialog');
  await dialog.getByLabel('Agent name').fill('layout-agent');
  await dialog.getByLabel('Agent name').press('Enter');
  await dialog.getByRole('tab', { name: 'Codex' }).waitFor();
  const fit = await dialog.locator('[role="tablist"]').evaluate((list) => {
    const box = list.getBoundingClientRect();
    const cut = [...list.querySelectorAll('[role="tab"]')].filter((t) => {
      const r = t.getBoundingClientRect();
      return r.left < box.left - 1 || r.right > box.right + 1 || t.scrollWidth > t.clientWidth + 1;
    });
    return { scrolls: list.scrollWidth > list.clientWidth + 1, cut: cut.map((t) => t.textContent) };
  });
  assert.deepEqual(fit, { scrolls: false, cut: [] }, '420 px: every tab in view');
  await page.keyboard.press('Escape');
  await dialog.waitFor({ state: 'hidden' });
  await page.setViewportSize({ width: 1280, height: 820 });
});

test('at 420 px the top bar takes two lines, every button whole and named', async () => {
  await page.setViewportSize({ width: 420, height: 800 });
  try {
    const bar = await page.locator('header.topbar').evaluate((bar) => {
      const shown = [...bar.querySelectorAll('button')].filter((b) => !b.hidden && b.offsetParent !== null);
      const tops = new Set(shown.map((b) => Math.round(b.getBoundingClientRect().top)));
      const cut = shown.filter((b) => b.getBoundingClientRect().right > window.innerWidth || b.scrollWidth > b.clientWidth + 1);
      return { lines: tops.size, buttons: shown.length, cut: cut.map((b) => b.id) };
    });
    assert.ok(bar.buttons >= 5, `the admin's buttons show: ${bar.buttons}`);
    assert.deepEqual({ lines: bar.lines, cut: bar.cut }, { lines: 2, cut: [] }, JSON.stringify(bar));
    // Shortened to "+ Connect" on screen, its name is whole.
    await page.getByRole('button', { name: 'Connect an agent' }).waitFor();
  } finally {
    await page.setViewportSize({ width: 1280, height: 820 });
  }
});

test('the page logged no errors', () => {
  assert.deepEqual(pageErrors, []);
});
