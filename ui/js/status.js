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
  failed: '✕',
  cancelled: '⊘',
};

/**
 * The badge for a task.
 * @returns {{key: string, label: string, symbol: string}} key is a CSS modifier:
 *   working | input_required | completed | completed-error | failed | cancelled
 */
export function statusBadge(task) {
  const status = task && task.status;
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
