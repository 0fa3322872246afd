// Timeline events and input rounds in plain words. No DOM.

import { formatDuration, oneLine, progressText, prettyJson, shownText, parseJsonObject } from './format.js';
import { statusLabel } from './status.js';
import { jsonDiff } from './json-diff.js';
import { answerVerb, hideSecrets } from './form-schema.js';

/**
 * @typedef {{title: string, detail?: string, prose?: boolean, tone: 'info'|'good'|'bad'|'warn'|'input'|'muted',
 *   diff?: import('./json-diff.js').DiffEntry[]}} EventText  `prose`: `detail` is a person's text
 *   (the question asked), shown with its line breaks; `diff`: how a human edited a call they approved
 */

const DECISION_WORDS = { allow: ['Approved', 'Allowed'], deny: ['Denied', 'Denied'], ask: ['Handed back to the agent’s prompt', 'Handed back to the agent’s prompt'] };

/**
 * A `decision` event (Engine::record_decision): who or what decided the call, how, and why;
 * with the diff when a human approved it with edited arguments.
 * @returns {EventText}
 */
function describeDecision(d) {
  const [human, other] = DECISION_WORDS[d.decision] || [`Decided (${d.decision ?? 'unknown'})`, `Decided (${d.decision ?? 'unknown'})`];
  const call = d.tool ? ` ${d.server ? `${d.server} ` : ''}${d.tool}` : '';
  let title;
  switch (d.decidedBy) {
    case 'human':
      title = `${human}${call} by ${d.human || 'a human'}`;
      break;
    case 'rule':
      title = `${other}${call} by rule${d.rule ? ` ${d.rule}` : ''}`;
      break;
    case 'default':
      title = `${other}${call} by default`;
      break;
    case 'expiry':
      title = `Nobody answered in time:${call} ${other.toLowerCase()}`;
      break;
    case 'abandoned':
      title = `Approval abandoned:${call} ${other.toLowerCase()}`;
      break;
    default:
      title = `${other}${call}`;
  }
  const edited = d.editedArguments !== undefined && d.editedArguments !== null;
  if (edited) title += ' with edited arguments';
  const detail = typeof d.reason === 'string' && d.reason ? `Reason: ${oneLine(d.reason, 500)}` : undefined;
  const tone = d.decision === 'allow' ? 'good' : d.decision === 'deny' ? 'bad' : 'warn';
  return { title, detail, tone, diff: edited ? jsonDiff(d.arguments ?? {}, d.editedArguments) : undefined };
}

function ttlWords(data) {
  const reason = data && typeof data.reason === 'string' ? ` (${data.reason})` : '';
  if (!data || data.ttlMs === null || data.ttlMs === undefined) return `Retention: unlimited${reason}`;
  return `Retention: ${formatDuration(Number(data.ttlMs))} from creation${reason}`;
}

/**
 * Describes one timeline event.
 * @param {{kind: string, data?: any}} ev
 * @param {{approvalKeys?: Set<string>}} [context] `approvalKeys`: the task's questions that are
 *   approvals of a call (their Cancel denies the call, so it reads "declined", not "dismissed")
 * @returns {EventText}
 */
export function describeEvent(ev, context = {}) {
  const d = (ev && ev.data) || {};
  switch (ev && ev.kind) {
    case 'created':
      return { title: `Created: ${d.tool ? `tool ${d.tool}` : 'task'}`, tone: 'info' };
    case 'status': {
      const to = statusLabel(d.to);
      const title = d.from ? `Status: ${statusLabel(d.from)} → ${to}` : `Status: ${to}`;
      const tone = d.to === 'completed' ? 'good' : d.to === 'failed' ? 'bad' : d.to === 'input_required' ? 'input' : d.to === 'cancelled' ? 'muted' : 'info';
      return { title, detail: d.statusMessage ? oneLine(d.statusMessage, 500) : undefined, tone };
    }
    case 'progress': {
      const p = progressText(d);
      return { title: `Progress ${p}`.trim(), detail: d.message ? oneLine(d.message, 500) : undefined, tone: 'muted' };
    }
    case 'statusMessage':
      return { title: 'Message', detail: oneLine(d.statusMessage ?? '', 500), tone: 'info' };
    case 'inputRequested': {
      const msg = d.request && d.request.params && d.request.params.message;
      return {
        title: `Asked for input${d.key ? ` (${d.key})` : ''}`,
        detail: typeof msg === 'string' ? shownText(msg) : undefined,
        prose: true,
        tone: 'input',
      };
    }
    case 'inputAnswered': {
      const known = ['accept', 'decline', 'cancel'].includes(d.action);
      const approval = Boolean(context.approvalKeys && context.approvalKeys.has(d.key));
      const verb = known ? answerVerb(d.action, approval) : `answered (${d.action ?? 'no action'})`;
      // An approval's key names its question (`approve`, `approve-command#2`), not what was
      // approved: the call.
      const what = approval && known ? ` the call (${d.key})` : d.key ? ` ${d.key}` : '';
      return { title: `${d.by || 'Someone'} ${verb}${what}`, tone: d.action === 'accept' ? 'good' : 'warn' };
    }
    case 'hiddenValuesShown':
      return { title: `${d.by || 'Someone'} read the call whole`, detail: 'The values its approval hides (credentials) were shown to them, as the agent sent them.', tone: 'muted' };
    case 'inputSuperseded':
      return { title: `Input request withdrawn${d.key ? ` (${d.key})` : ''}`, detail: 'The task no longer needs this answer.', tone: 'muted' };
    case 'cancelRequested':
      return { title: `Cancel requested${d.by ? ` by ${d.by}` : ''}`, detail: typeof d.reason === 'string' && d.reason ? oneLine(d.reason, 500) : 'The task is asked to stop; it ends as cancelled when it does.', tone: 'warn' };
    case 'ttl':
      return { title: ttlWords(d), tone: 'muted' };
    case 'deleted':
      return { title: 'Removed from Taskdeck', detail: 'Its time to live ran out, or a retention cap removed it. What is shown here is its last state.', tone: 'muted' };
    case 'decision':
      return describeDecision(d);
    case 'argumentsEdited':
      // The call shown from here on is the one the approver edited. What changed is the
      // approval's decision's diff, next to it: not shown twice.
      return {
        title: 'Call edited by the approver',
        detail: 'The task now shows and runs the edited call; the approval shows what changed.',
        tone: 'warn',
      };
    case 'hosted': {
      // A task another program runs and keeps here (a tower-mcp server's remote store).
      const owner = typeof d.owner === 'string' ? ` for ${d.owner === '' ? '(empty name)' : d.owner}` : '';
      return { title: `Run by its own program${owner}`, detail: 'Taskdeck keeps it; its program reports each change, and your answers and cancel reach the program.', tone: 'info' };
    }
    case 'meta':
      return { title: 'Metadata', detail: oneLine(prettyJson(d.meta ?? {}), 300), tone: 'muted' };
    case 'resumed':
      return { title: 'Resumed', detail: d.reason === 'restart' ? 'Taskdeck restarted and picked the task up again.' : d.reason, tone: 'info' };
    default:
      return { title: `Event: ${ev && ev.kind ? ev.kind : 'unknown'}`, detail: oneLine(prettyJson(d), 300), tone: 'muted' };
  }
}

/** The events a running task reports as it goes (its progress, its status messages: a
 *  command's output lines), which a timeline folds when they come in runs. */
const REPORTS = new Set(['progress', 'statusMessage']);

/**
 * Folds runs of consecutive reports (progress and status messages) into one item, so a task
 * reporting every second (a build printing its lines) does not bury its other events. Other
 * events stay as they are, in order.
 * @returns {({type: 'event', event: object} | {type: 'progress', events: object[]})[]}
 */
export function groupTimeline(events, minRun = 3) {
  const out = [];
  let run = [];
  const flush = () => {
    if (run.length >= minRun) out.push({ type: 'progress', events: run });
    else for (const e of run) out.push({ type: 'event', event: e });
    run = [];
  };
  for (const e of events) {
    if (REPORTS.has(e.kind)) run.push(e);
    else {
      flush();
      out.push({ type: 'event', event: e });
    }
  }
  flush();
  return out;
}

/**
 * Summary line for a folded run of reports: "Progress 1 / 10 → 10 / 10 (10 updates)"; with
 * status messages, how many and the last one: "48 messages, the last: “line 48 of build
 * output”", "Progress 1 / 10 → 4 / 10 and 3 messages (7 updates), the last: “linking”".
 */
export function describeProgressRun(events) {
  const progress = events.filter((e) => e.kind === 'progress');
  const messages = events.filter((e) => e.kind === 'statusMessage');
  // The newest word of the run: a status message, or a progress report's own message.
  const words = events.map((e) => (e.kind === 'statusMessage' ? e.data?.statusMessage : e.data?.message)).filter((m) => typeof m === 'string' && m);
  const said = messages.length && words.length ? `, the last: “${oneLine(words[words.length - 1], 120)}”` : '';
  const count = (n) => `${n} message${n === 1 ? '' : 's'}`;
  if (!progress.length) return `${count(messages.length)}${said}`;
  const first = progressText(progress[0].data || {});
  const last = progressText(progress[progress.length - 1].data || {});
  const also = messages.length ? ` and ${count(messages.length)}` : '';
  return `Progress ${first} → ${last}${also} (${events.length} updates)${said}`;
}

/**
 * An approval's answer `content` as the round shows it: its edited call (`arguments`, sent as
 * JSON text) as the JSON it holds, so that it reads as a call, not as text quoted inside JSON,
 * and without `alwaysAllow: false`, which every plain answer carries. Values the server masked
 * stay as it sent them. Text that is no JSON object is kept as it is.
 */
function approvalAnswer(content) {
  const { alwaysAllow, ...rest } = content;
  const shown = alwaysAllow === false ? rest : content;
  if (typeof shown.arguments !== 'string') return shown;
  const call = parseJsonObject(shown.arguments);
  return call && !Array.isArray(call) ? { ...shown, arguments: call } : shown;
}

/**
 * Describes an input round for the detail pane.
 * @param {{key: string, request: any, state: string, response: any, answeredBy?: string}} round
 * @returns {{title: string, state: string, answer?: string}}
 */
export function describeRound(round) {
  const params = (round.request && round.request.params) || {};
  const title = typeof params.message === 'string' && params.message ? shownText(params.message) : round.key;
  let state;
  let answer;
  switch (round.state) {
    case 'outstanding':
      state = 'Waiting for an answer';
      break;
    case 'superseded':
      state = 'Withdrawn by the task';
      break;
    case 'answered': {
      const action = round.response && round.response.action;
      const approval = Boolean(params._meta && params._meta['taskdeck/approval']);
      const verb = ['accept', 'decline', 'cancel'].includes(action) ? answerVerb(action, approval) : 'answered';
      state = `${verb[0].toUpperCase()}${verb.slice(1)}${round.answeredBy ? ` by ${round.answeredBy}` : ''}`;
      const content = round.response && round.response.content;
      // A secret typed in the form (a field named `api_password`, `token`...) is not written out.
      const shown = content && typeof content === 'object' && approval ? approvalAnswer(content) : content;
      if (shown && typeof shown === 'object' && Object.keys(shown).length) answer = prettyJson(hideSecrets(shown));
      break;
    }
    default:
      state = String(round.state);
  }
  return { title, state, answer };
}
