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

/** The `_meta` member Taskdeck puts on the result of a call it did not make (a gateway call, a
 * command, a request) or of a question a person answered no to, `"declined"` or `"denied"`.
 * The server takes it out of every result that comes from elsewhere (an upstream, a runner, a
 * hosted task's host), so it can be trusted, where a tool's name and its structuredContent
 * cannot (a hosted task may take any name and say anything). */
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
 *   policy": one the policy refused, by a rule or once nobody answered in time), as the result's
 *   refusal mark says")
 */
export function statusBadge(task) {
  const status = task && task.status;
  const mark = status === 'completed' ? refusalMark(task.result) : null;
  if (mark === 'declined') {
    return { key: 'completed-declined', label: 'Declined', symbol: SYMBOLS['completed-declined'] };
  }
  if (mark === 'denied') {
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
