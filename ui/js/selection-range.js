// Toggling rows of a list in a selection, Shift extending from the last toggled row: the rule
// the task list (selection.js) and the approval inbox (approvals-model.js) share. No DOM.

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
