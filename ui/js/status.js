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
  failed: '✕',
  cancelled: '⊘',
};

/** Taskdeck's tools whose result is a person's decision: when the decision was no. */
const SAID_NO = {
  request_approval: (decision) => decision.action === 'decline',
  permission_request: (decision) => decision.behavior === 'deny',
};

/**
 * The badge for a task.
 * @returns {{key: string, label: string, symbol: string}} key is a CSS modifier:
 *   working | input_required | completed | completed-error | completed-declined | failed |
 *   cancelled ("Declined": a request_approval or permission_request a person answered no)
 */
export function statusBadge(task) {
  const status = task && task.status;
  if (status === 'completed' && task.result && task.result.isError === true) {
    return { key: 'completed-error', label: 'Completed with error', symbol: SYMBOLS['completed-error'] };
  }
  const decision = status === 'completed' && task.result && task.result.structuredContent;
  if (decision && Object.hasOwn(SAID_NO, task.tool) && SAID_NO[task.tool](decision)) {
    return { key: 'completed-declined', label: 'Declined', symbol: SYMBOLS['completed-declined'] };
  }
  const label = STATUS_LABELS[status] || String(status || 'unknown');
  return { key: STATUS_LABELS[status] ? status : 'unknown', label, symbol: SYMBOLS[status] || '?' };
}

/** Label for a status key alone (filters). */
export function statusLabel(status) {
  return STATUS_LABELS[status] || status;
}
