// Selecting tasks in the list (x, Space, a row's checkbox; Shift selects a range) and the bulk
// bar that counts them. What the bulk bar does with them is in cancel.js.

import { $ } from './dom.js';
import { formatCount } from './format.js';
import { state } from './state.js';
import { scheduleListRender } from './list.js';

/**
 * Toggles the row at `index` of `list` (anything with `at(i)` → { id } and `length`) in
 * `selected` (a Set of ids, changed in place). With `shift` and a previous toggle at `last`
 * (still in the list), every row between the two is selected instead. Returns the index to
 * remember as the last toggled, or null when there is no such row (nothing changed).
 */
export function toggleSelection(selected, list, index, last, shift) {
  const entry = list.at(index);
  if (!entry) return null;
  if (shift && last >= 0 && last < list.length) {
    const [a, b] = [Math.min(index, last), Math.max(index, last)];
    for (let i = a; i <= b; i++) selected.add(list.at(i).id);
  } else if (selected.has(entry.id)) selected.delete(entry.id);
  else selected.add(entry.id);
  return index;
}

export function renderBulk() {
  const n = state.selected.size;
  $('bulk-bar').hidden = n === 0;
  $('bulk-count').textContent = `${formatCount(n)} selected`;
  scheduleListRender();
}

export function toggleSelect(index, shift) {
  const last = toggleSelection(state.selected, state.model, index, state.lastToggled, shift);
  if (last === null) return;
  state.lastToggled = last;
  renderBulk();
}

export function clearSelection() {
  state.selected.clear();
  renderBulk();
}
