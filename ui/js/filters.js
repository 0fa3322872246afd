// The list's filters: the status chips (with their counts), the search box, and the tool and
// principal selects, whose options grow as tools and principals are seen. A change of filter
// reloads the list (list.js). A chip counts the rows it would show: under a search (or a tool
// or principal filter), the matching tasks only; its tooltip says so, and the "Needs input"
// inbox above, which lists every task waiting whatever the list shows, says that the search
// does not filter it (renderScope), so its count and the chip's are not read as one number.

import { searchDelayMs } from './tasks-model.js';
import { h, clear, $, setText, setAttr } from './dom.js';
import { STATUSES, statusLabel } from './status.js';
import { formatCount, oneLine } from './format.js';
import { state } from './state.js';
import { rights } from './auth.js';
import { reloadList } from './list.js';

/** The "Errors" chip's key in the chips' set: completed tasks whose result is an error. */
export const ERRORS_CHIP = 'error';

/** The filters the controls show, as the list model takes them. */
export function currentFilters() {
  return {
    statuses: [...state.statusFilter].filter((s) => s !== ERRORS_CHIP),
    errors: state.statusFilter.has(ERRORS_CHIP),
    tool: $('tool-filter').value,
    principal: rights(state.me).seesAll ? $('principal-filter').value : '',
    q: $('search').value,
  };
}

/** True when `filters` narrow the list (an empty list then says so, and offers to clear them). */
export function isFiltered(f) {
  return Boolean(f.statuses.length || f.errors || f.tool || f.principal || (f.q && f.q.trim()));
}

/**
 * A click on the status chip `key` ('all', a status or ERRORS_CHIP, which narrows the chosen
 * statuses to the completed ones with an error result) changes `selected` (a Set, changed in
 * place): a plain click shows that status alone, or all again when it was alone; with
 * `combine` (Shift/Ctrl/Cmd) it adds or removes the status.
 */
export function clickChip(selected, key, combine) {
  if (key === 'all') selected.clear();
  else if (combine) {
    if (selected.has(key)) selected.delete(key);
    else selected.add(key);
  } else if (selected.size === 1 && selected.has(key)) selected.clear();
  else {
    selected.clear();
    selected.add(key);
  }
  return selected;
}

export function chipSymbol(key) {
  return { working: '◐', input_required: '!', completed: '✓', failed: '✕', cancelled: '⊘', [ERRORS_CHIP]: '⚠' }[key] || '';
}

/** The chip's text: "All", a status's label, or "Errors". */
export function chipText(key) {
  return key === 'all' ? 'All' : key === ERRORS_CHIP ? 'Errors' : statusLabel(key);
}

/**
 * The words for what the list's search and tool and principal filters (`f`, as the list model
 * keeps them) narrow it to, after "3 tasks": 'matching “deploy” · tool run_command · of alice';
 * '' when they narrow nothing.
 */
export function scopeText(f) {
  const q = f && f.q ? f.q.trim() : '';
  return [q ? `matching “${oneLine(q, 60)}”` : '', f && f.tool ? `tool ${f.tool}` : '', f && f.principal ? `of ${f.principal}` : ''].filter(Boolean).join(' · ');
}

/** The chip's accessible name, e.g. "Needs input: 3 tasks", "Errors: 1 task"; under a search
 *  (`scope`: scopeText) "Needs input: 0 tasks matching “deploy”". */
export function chipLabel(key, count, scope = '') {
  const name = key === 'all' ? 'All statuses' : key === ERRORS_CHIP ? 'Errors (completed with an error result)' : statusLabel(key);
  return `${name}: ${formatCount(count)} task${count === 1 ? '' : 's'}${scope ? ` ${scope}` : ''}`;
}

/** The chip's tooltip: under a search or filter, what it counts (chipLabel), and for "Needs
 *  input" that the inbox above lists every task waiting; '' otherwise. */
export function chipTitle(key, count, scope) {
  if (!scope) return '';
  const label = chipLabel(key, count, scope);
  return key === 'input_required' ? `${label}. The “Needs input” box above lists every task waiting, whatever the search and filters.` : label;
}

/**
 * The note in the "Needs input" inbox's title while the list is searched or filtered by tool or
 * principal (`f`: the list model's filters): the inbox is not, so it may list tasks the list and
 * the chips leave out. `text` '' when the list is not narrowed.
 */
export function inboxScopeNote(f) {
  const q = Boolean(f && f.q && f.q.trim());
  const other = Boolean(f && (f.tool || f.principal));
  if (!q && !other) return { text: '', title: '' };
  const what = q && other ? 'the search or filters' : q ? 'the search' : 'the tool or principal filter';
  const narrows = `${what[0].toUpperCase()}${what.slice(1)} narrow${q && other ? '' : 's'}`;
  return {
    text: `not filtered by ${what}`,
    title: `This box lists every task waiting for an answer. ${narrows} only the list below and its chips: there “Needs input” counts the waiting tasks ${scopeText(f)}.`,
  };
}

/** Draws the inbox title's note (inboxScopeNote) for the list's filters now; writes only what changed. */
function renderScope() {
  const el = $('inbox-scope');
  const { text, title } = inboxScopeNote(state.model.filters);
  setText(el, text);
  setAttr(el, 'title', title);
  el.hidden = !text;
}

export function renderChips() {
  const wrap = $('status-filters');
  const counts = state.model.counts;
  const all = state.model.total();
  const make = (key, label, count, pressed) => {
    const btn = h(
      'button',
      { type: 'button', class: `chip chip-${key}`, 'aria-pressed': String(pressed), dataset: { status: key } },
      key !== 'all' ? h('span', { class: 'chip-symbol', 'aria-hidden': 'true' }, chipSymbol(key)) : null,
      h('span', { class: 'chip-label' }, label),
      h('span', { class: 'chip-count' }, formatCount(count)),
    );
    return btn;
  };
  const existing = wrap.querySelectorAll('button.chip');
  const wantKeys = ['all', ...STATUSES, ERRORS_CHIP];
  if (existing.length !== wantKeys.length) {
    clear(wrap);
    for (const key of wantKeys) wrap.appendChild(make(key, chipText(key), 0, false));
  }
  // Runs on every list frame: write only what changed. The counts are those of the filters the
  // list was loaded with (the model's), not of what is being typed.
  const scope = scopeText(state.model.filters);
  for (const btn of wrap.querySelectorAll('button.chip')) {
    const key = btn.dataset.status;
    const count = key === 'all' ? all : counts[key] || 0;
    const pressed = key === 'all' ? state.statusFilter.size === 0 : state.statusFilter.has(key);
    setAttr(btn, 'aria-pressed', String(pressed));
    setText(btn.querySelector('.chip-count'), formatCount(count));
    setAttr(btn, 'aria-label', chipLabel(key, count, scope));
    setAttr(btn, 'title', chipTitle(key, count, scope));
  }
  renderScope();
}

export function clearFilters() {
  state.statusFilter.clear();
  $('search').value = '';
  $('tool-filter').value = '';
  $('principal-filter').value = '';
  reloadList();
}

// ---------------------------------------------------------------- tool and principal options

export function renderToolOptions() {
  fillSelect($('tool-filter'), 'All tools', 'Tool', [...state.tools].sort());
}

function renderPrincipalOptions() {
  fillSelect($('principal-filter'), 'All principals', 'Principal', [...state.principals].sort());
}

/** The option values a select should have: '' (all), then `values`, then the `current`
 *  choice if it is not among them (it stays chosen). */
export function selectValues(current, values) {
  const want = ['', ...values];
  if (current && !want.includes(current)) want.push(current);
  return want;
}

/** Options "All tools", "Tool: a", "Tool: b"... so the closed select names its own filter. */
function fillSelect(select, allLabel, prefix, values) {
  const current = select.value;
  const have = [...select.options].map((o) => o.value);
  const want = selectValues(current, values);
  if (have.length === want.length && have.every((v, i) => v === want[i])) return;
  clear(select);
  for (const v of want) select.appendChild(h('option', { value: v }, v ? `${prefix}: ${v}` : allLabel));
  select.value = current;
}

let optionTimer = null;
export function noteTool(tool) {
  if (!tool || state.tools.has(tool)) return;
  state.tools.add(tool);
  queueOptions();
}
export function notePrincipal(p) {
  if (!p || state.principals.has(p)) return;
  state.principals.add(p);
  queueOptions();
}
function queueOptions() {
  if (optionTimer) return;
  optionTimer = setTimeout(() => {
    optionTimer = null;
    renderToolOptions();
    renderPrincipalOptions();
  }, 200);
}

// ---------------------------------------------------------------- wiring

/** Draws the chips and wires the filter controls (once, at start-up). */
export function initFilters() {
  renderChips();
  $('status-filters').addEventListener('click', (e) => {
    const btn = e.target instanceof Element ? e.target.closest('button.chip') : null;
    if (!btn) return;
    // Shift/Ctrl-click combines statuses.
    clickChip(state.statusFilter, btn.dataset.status, e.shiftKey || e.ctrlKey || e.metaKey);
    renderChips();
    reloadList();
  });
  let searchTimer = null;
  $('search').addEventListener('input', () => {
    clearTimeout(searchTimer);
    // Typing is coalesced (briefly when the server answers from its index); clearing the box
    // is one deliberate act and applies at once.
    const delay = searchDelayMs($('search').value);
    if (!delay) reloadList();
    else searchTimer = setTimeout(reloadList, delay);
  });
  $('filters').addEventListener('submit', (e) => {
    e.preventDefault();
    clearTimeout(searchTimer);
    reloadList();
  });
  $('tool-filter').addEventListener('change', reloadList);
  $('principal-filter').addEventListener('change', reloadList);
}
