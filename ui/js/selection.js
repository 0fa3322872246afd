// Selecting tasks in the list (x, Space, a row's checkbox; Shift selects a range) and the bulk
// bar that counts them. What the bulk bar does with them is in cancel.js.

import { $ } from './dom.js';
import { formatCount } from './format.js';
import { state } from './state.js';
import { scheduleListRender } from './list.js';
import { toggleSelection } from './selection-range.js';

export { toggleSelection };

export function renderBulk() {
  const n = state.selected.size;
  $('bulk-bar').hidden = n === 0;
  $('task-list').classList.toggle('with-bulk-bar', n > 0);
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
