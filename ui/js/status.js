// How a task's state is named on screen. Every status has a word and a symbol, so color is
// never the only signal. "Completed with error" (a tool result with isError) is kept apart
// from "Failed" (a JSON-RPC error: the call itself did not produce a result). No DOM.

export const STATUSES = ['working', 'input_required', 'completed', 'failed', 'cancelled'];

export const STATUS_LABELS = {
  working: 'Working',
  input_required: 'Needs input',
  completed: 'Completed',
  failed: 'Failed',
  cancelled: 'Cancelled',
};

/** Symbols shown beside the word (decorative; the word carries the meaning). */
const SYMBOLS = {
  working: '◐',
  input_required: '!',
  completed: '✓',
  'completed-error': '⚠',
  'completed-declined': '⊖',
  'completed-denied': '⊖',
  failed: '✕',
  cancelled: '⊘',
};

/** Taskdeck's tools whose result is a person's decision: when the decision was no. */
const SAID_NO = {
  request_approval: (decision) => decision.action === 'decline',
  permission_request: (decision) => decision.behavior === 'deny',
};

/** Taskdeck's tools that ask before they act: their result says `declined` (a person said no)
 * or `denied` (the policy did), and then nothing ran (a tool error for the agent, not one of the
 * tool's own). Tasks stored before results carried the refusal mark are read this way. */
const ASKS_FIRST = new Set(['run_command', 'wait_for_http_job']);

/** The `_meta` member Taskdeck puts on the result of a call it did not make, `"declined"` or
 * `"denied"`: a gateway call, a command, a request. The server takes it out of every result
 * that comes from elsewhere (an upstream, a runner, a host), so it can be trusted. */
export const REFUSAL_KEY = 'io.taskdeck/refusal';

/** `"declined"`, `"denied"` or null: the refusal mark of a completed task's result. */
function refusalMark(result) {
  const meta = result && typeof result === 'object' ? result._meta : null;
  const mark = meta && typeof meta === 'object' ? meta[REFUSAL_KEY] : null;
  return mark === 'declined' || mark === 'denied' ? mark : null;
}

/**
 * The badge for a task.
 * @returns {{key: string, label: string, symbol: string}} key is a CSS modifier:
 *   working | input_required | completed | completed-error | completed-declined |
 *   completed-denied | failed | cancelled ("Declined": a request_approval or permission_request
 *   a person answered no, or a call a person refused (a gateway call, a command); "Denied by
 *   policy": one the policy refused)
 */
export function statusBadge(task) {
  const status = task && task.status;
  const decision = status === 'completed' && task.result && task.result.structuredContent;
  const asked = decision && typeof decision === 'object' && ASKS_FIRST.has(task.tool);
  const mark = status === 'completed' ? refusalMark(task.result) : null;
  if (mark === 'declined' || (decision && Object.hasOwn(SAID_NO, task.tool) && SAID_NO[task.tool](decision)) || (asked && decision.declined === true)) {
    return { key: 'completed-declined', label: 'Declined', symbol: SYMBOLS['completed-declined'] };
  }
  if (mark === 'denied' || (asked && decision.denied === true)) {
    return { key: 'completed-denied', label: 'Denied by policy', symbol: SYMBOLS['completed-denied'] };
  }
  if (status === 'completed' && task.result && task.result.isError === true) {
    return { key: 'completed-error', label: 'Completed with error', symbol: SYMBOLS['completed-error'] };
  }
  const label = STATUS_LABELS[status] || String(status || 'unknown');
  return { key: STATUS_LABELS[status] ? status : 'unknown', label, symbol: SYMBOLS[status] || '?' };
}

/** Label for a status key alone (filters). */
export function statusLabel(status) {
  return STATUS_LABELS[status] || status;
}
