// Notifications from the UI opened in a browser (`taskdeck serve`, or a second person's tab):
// the desktop window notifies through the desktop (src-tauri/src/desktop/notifier.rs), a
// browser tab through the Web Notifications API, once the person turned them on in that
// browser (the browser's permission, and a switch kept in its localStorage). The rules are the
// window's (docs/ui.md#notifications): a task that starts waiting for input, always; one that
// completes or fails, when it ran at least 10 s or the page is not focused. A click brings the
// tab forward on the task. Several open tabs notify of a task under one tag (`taskdeck-<taskId>`),
// so the browser shows it once, the newer replacing the older.

import { shownText } from './format.js';
import { statusBadge } from './status.js';

/** localStorage key of the switch: "on" while notifications are wanted in this browser. */
export const SWITCH_KEY = 'taskdeck.browserNotifications';

/** A completion or failure notifies when the task ran at least this long (ms), or unseen. */
export const THRESHOLD_MS = 10_000;

/** A task this page decided that ends within this long after (ms) is not notified: the person
 *  who denied a call, or answered a question, knows (a job approved here that runs on is). */
export const OWN_DECISION_MS = 5_000;

/** When this page last decided each task (ms since the epoch), by taskId. */
const decidedHere = new Map();

/** Notes that this page just decided (approved, denied, answered) the tasks `taskIds`. */
export function noteDecided(taskIds, now = Date.now()) {
  for (const id of taskIds) decidedHere.set(id, now);
  for (const [id, at] of decidedHere) if (now - at > OWN_DECISION_MS) decidedHere.delete(id);
}

/** True when `task`'s end follows this page's own decision on it (see OWN_DECISION_MS). */
export function endedByOwnDecision(task, now = Date.now()) {
  const at = decidedHere.get(task.taskId);
  return at !== undefined && now - at <= OWN_DECISION_MS && ['completed', 'failed', 'cancelled'].includes(task.status);
}

/** Longest notification body (characters), as the window's. */
const MAX_BODY_CHARS = 200;

/** `text` on one line of at most `max` characters, ending with "…" when cut. */
function clip(text, max) {
  const line = shownText(String(text || '')).replace(/\s+/g, ' ').trim();
  return line.length <= max ? line : `${line.slice(0, max - 1)}…`;
}

/** A notification's body: as `clip`, but its lines kept (a command's second line is not a space). */
function clipLines(text, max) {
  const s = shownText(String(text || '')).replace(/[^\S\n]+/g, ' ').replace(/ *\n[\s]*/g, '\n').trim();
  return s.length <= max ? s : `${s.slice(0, max - 1)}…`;
}

/**
 * The notification live change `change` (`{event, task}` of /v1/events) deserves for a page
 * that is `focused` or not: `{taskId, tag, title, body}`, or null. Pure.
 */
export function browserNotice(change, { focused }) {
  const event = change && change.event;
  const task = change && change.task;
  if (!event || !task || event.kind !== 'status') return null;
  const title = task.title || task.tool || 'A task';
  const ran = Date.parse(task.lastUpdatedAt) - Date.parse(task.createdAt);
  const longOrUnseen = !focused || (Number.isFinite(ran) && ran >= THRESHOLD_MS);
  const notice = (heading, body) => ({ taskId: task.taskId, tag: `taskdeck-${task.taskId}`, title: clip(heading, 120), body: clipLines(body, MAX_BODY_CHARS) });
  switch (task.status) {
    case 'input_required': {
      const asked = Object.values(task.inputRequests || {}).map((r) => r && r.params && r.params.message).find((m) => typeof m === 'string');
      // A question titles its own task (request_approval): said once, in the body.
      const same = asked && clip(asked, 120) === clip(title, 120);
      return notice(same ? `${task.principal} needs input` : `${task.principal} needs input: ${title}`, asked || 'A task needs your answer');
    }
    case 'completed': {
      if (!longOrUnseen) return null;
      const result = task.result || {};
      const text = Array.isArray(result.content) ? (result.content.find((c) => c && c.type === 'text') || {}).text : '';
      // In the badge's words: "completed with error", "declined", "denied by policy".
      return notice(`${title} ${statusBadge(task).label.toLowerCase()}`, text || '');
    }
    case 'failed':
      if (!longOrUnseen) return null;
      return notice(`${title} failed`, (task.error && task.error.message) || task.statusMessage || 'failed');
    default:
      return null;
  }
}

/**
 * Where this browser stands: "unsupported" (no Notifications API, or not a secure context:
 * a page on another host than localhost over http), "blocked" (the person denied the
 * permission), "on", or "off".
 */
export function notifyState(env = globalThis) {
  const api = env.Notification;
  if (!api || env.isSecureContext === false) return 'unsupported';
  if (api.permission === 'denied') return 'blocked';
  let wanted = false;
  try {
    wanted = env.localStorage.getItem(SWITCH_KEY) === 'on';
  } catch {
    // storage off (a private window's settings): never on
  }
  return api.permission === 'granted' && wanted ? 'on' : 'off';
}

/**
 * What the page says once the browser answered its permission question with `permission`
 * ("granted", "denied", "default" for a question closed without an answer, or an error's
 * message when asking failed): the notice's words and tone, so the person always learns what
 * happened and what to do next.
 * @returns {{text: string, tone: 'good'|'warn'|'info'}}
 */
export function permissionOutcome(permission) {
  if (permission === 'granted') return { text: 'This browser will notify you when a task needs input or a long one ends.', tone: 'good' };
  if (permission === 'denied') return { text: 'The browser blocked notifications for this page. To have them, allow notifications in the browser’s site settings (the icon left of the address), then click Notifications again.', tone: 'warn' };
  if (permission === 'default') return { text: 'The browser’s question was closed without an answer, so notifications stay off. Click Notifications again and choose Allow.', tone: 'info' };
  return { text: `The browser did not ask for permission (${permission}), so notifications stay off.`, tone: 'warn' };
}

/** The button's words for where this browser stands (notifyState). */
export function notifyButtonText(s) {
  return s === 'on' ? 'Notifications on' : s === 'blocked' ? 'Notifications blocked' : 'Notifications off';
}

/**
 * Wires `button` (the top bar's Notifications button, hidden in the desktop window) to turn
 * this browser's notifications on (asking the browser's permission) and off, and returns the
 * function live.js calls with each change. `openTask(taskId)` shows a task.
 */
export function initBrowserNotifications(button, { openTask, toast }) {
  const render = () => {
    const s = notifyState();
    button.hidden = s === 'unsupported';
    button.setAttribute('aria-pressed', String(s === 'on'));
    button.textContent = notifyButtonText(s);
    button.title = {
      on: 'This browser notifies you when a task needs input, and when one that ran 10 s or more (or while this page was not in front) ends. Click to turn off.',
      off: 'Click to be notified in this browser when a task needs input or a long one ends',
      blocked: 'Notifications are blocked for this page: allow them in the browser’s site settings',
    }[s] || '';
  };
  button.removeAttribute('aria-haspopup');
  button.addEventListener('click', async () => {
    const s = notifyState();
    if (s === 'blocked') {
      toast('Notifications are blocked for this page: allow them in the browser’s site settings, then click again.', 'warn');
      return;
    }
    if (s === 'on') {
      localStorage.setItem(SWITCH_KEY, 'off');
    } else {
      let permission;
      try {
        permission = Notification.permission === 'granted' ? 'granted' : await Notification.requestPermission();
      } catch (err) {
        permission = err && err.message ? err.message : String(err);
      }
      // Dismissed, the question answers "default" (or, in some browsers, nothing).
      if (permission === undefined || permission === null) permission = Notification.permission;
      if (permission === 'granted') localStorage.setItem(SWITCH_KEY, 'on');
      const said = permissionOutcome(permission);
      toast(said.text, said.tone);
    }
    render();
  });
  render();
  return (change) => {
    if (notifyState() !== 'on' || endedByOwnDecision(change.task || {})) return;
    const n = browserNotice(change, { focused: document.hasFocus() });
    if (!n) return;
    const shown = new Notification(n.title, { body: n.body, tag: n.tag });
    shown.addEventListener('click', () => {
      window.focus();
      openTask(n.taskId);
      shown.close();
    });
  };
}
