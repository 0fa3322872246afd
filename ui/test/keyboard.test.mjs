import { test } from 'node:test';
import assert from 'node:assert/strict';
import { shortcutFor, pageStep, continuesCutTyping, TYPING_GAP_MS } from '../js/keyboard.js';

const key = (k, mods = {}) => ({ key: k, ctrlKey: false, metaKey: false, altKey: false, shiftKey: false, defaultPrevented: false, ...mods });
const onList = { dialogOpen: false, typing: false, inSearch: false, listFocused: true };
const elsewhere = { ...onList, listFocused: false };

test('each shortcut key asks for its command when the list has focus', () => {
  const want = {
    '/': 'search',
    '?': 'help',
    j: 'down',
    k: 'up',
    ArrowDown: 'down',
    ArrowUp: 'up',
    Home: 'first',
    End: 'last',
    PageDown: 'page-down',
    PageUp: 'page-up',
    Enter: 'open',
    ' ': 'toggle',
    x: 'select',
    a: 'accept',
    d: 'decline',
    c: 'cancel',
    p: 'pause',
    i: 'inbox',
    Escape: 'close',
  };
  for (const [k, command] of Object.entries(want)) assert.equal(shortcutFor(key(k), onList), command, JSON.stringify(k));
  for (const k of ['q', 'J', 'Tab', 'ArrowLeft', 'Delete']) assert.equal(shortcutFor(key(k), onList), null, k);
});

test('arrows, Home/End, Page keys, Enter and Space act only on the focused list; letters act from anywhere', () => {
  for (const k of ['ArrowDown', 'ArrowUp', 'Home', 'End', 'PageDown', 'PageUp', 'Enter', ' ']) {
    assert.equal(shortcutFor(key(k), elsewhere), null, JSON.stringify(k));
  }
  for (const k of ['j', 'k', 'x', 'a', 'd', 'c', 'p', 'i', '/', '?', 'Escape']) {
    assert.notEqual(shortcutFor(key(k), elsewhere), null, k);
  }
});

test('Ctrl, Cmd and Alt combinations, handled keys and open dialogs are left alone', () => {
  for (const mods of [{ ctrlKey: true }, { metaKey: true }, { altKey: true }, { defaultPrevented: true }]) {
    assert.equal(shortcutFor(key('j', mods), onList), null, JSON.stringify(mods));
  }
  assert.equal(shortcutFor(key('x', { shiftKey: true }), onList), 'select', 'Shift extends a selection');
  assert.equal(shortcutFor(key('j'), { ...onList, dialogOpen: true }), null);
  assert.equal(shortcutFor(key('Escape'), { ...onList, dialogOpen: true }), null, 'the dialog closes itself');
});

test('while typing, keys are text; Escape leaves the search box only', () => {
  const typing = { ...elsewhere, typing: true };
  for (const k of ['j', '/', '?', 'a', ' ', 'Enter', 'ArrowDown']) assert.equal(shortcutFor(key(k), typing), null, JSON.stringify(k));
  assert.equal(shortcutFor(key('Escape'), typing), null, 'Escape in another field');
  assert.equal(shortcutFor(key('Escape'), { ...typing, inSearch: true }), 'leave-search');
  // In an opened call's reason or editor: back to its row (the text stays), not closing it.
  assert.equal(shortcutFor(key('Escape'), { ...typing, inApprovals: true }), 'approval-leave-field');
  assert.equal(shortcutFor(key('a'), { ...typing, inApprovals: true }), null);
  // In a task's answer form: back to the form, so the keys after it are shortcuts again.
  assert.equal(shortcutFor(key('Escape'), { ...typing, inPrompt: true }), 'leave-prompt-field');
  assert.equal(shortcutFor(key('j'), { ...typing, inPrompt: true }), null);
});

test('a Page key moves a screenful of 64 px rows less one, at least one', () => {
  assert.equal(pageStep(640), 9);
  assert.equal(pageStep(700), 9);
  assert.equal(pageStep(128), 1);
  assert.equal(pageStep(64), 1);
  assert.equal(pageStep(0), 1);
});

test('on a row of the approval queue, the queue’s keys win; typing and dialogs still pause them', () => {
  const inQueue = { ...elsewhere, inApprovals: true, onApprovalRow: true };
  const want = { j: 'approval-down', k: 'approval-up', ArrowDown: 'approval-down', ArrowUp: 'approval-up', Enter: 'approval-open', a: 'approval-approve', d: 'approval-deny', e: 'approval-edit', x: 'approval-select', X: 'approval-select', A: 'approval-approve-selected', D: 'approval-deny-selected', Escape: 'approval-leave' };
  for (const [k, command] of Object.entries(want)) assert.equal(shortcutFor(key(k), inQueue), command, k);
  assert.equal(shortcutFor(key('?'), inQueue), 'help', 'other keys keep their meaning');
  assert.equal(shortcutFor(key('Enter'), { ...inQueue, onApprovalRow: false }), null, 'a focused button keeps its Enter');
  assert.equal(shortcutFor(key('a'), { ...inQueue, typing: true }), null, 'typing a reason');
  assert.equal(shortcutFor(key('a'), { ...inQueue, dialogOpen: true }), null);
  assert.equal(shortcutFor(key('A'), elsewhere), null, 'A means nothing outside the queue');
  assert.equal(shortcutFor(key('e'), elsewhere), null);
});

test('a character right after one typed into a field that lost the focus is not a shortcut', () => {
  const typed = { atMs: 1000, typing: true, character: true };
  assert.equal(continuesCutTyping(typed, 1200, false), true, 'typing went on after its field left');
  assert.equal(continuesCutTyping(typed, 1000 + TYPING_GAP_MS, false), false, 'after a pause, from a field still there, keys are shortcuts again');
  assert.equal(continuesCutTyping(typed, 1000 + 60_000, false, true), true, 'from a field that left the page: cut however long the pause');
  assert.equal(continuesCutTyping(typed, 1200, true), false, 'still in a text field: plain typing');
  assert.equal(continuesCutTyping({ atMs: 1000, typing: true, character: false }, 1200, false), false, 'Enter sent the field: the next key is a shortcut');
  assert.equal(continuesCutTyping({ atMs: 1000, typing: false, character: true }, 1200, false), false, 'shortcuts in a row stay shortcuts');
  assert.equal(continuesCutTyping(null, 1200, false), false);
});

test('in the selection bar’s reason box, Enter asks to deny the selection and Escape goes back to the queue', () => {
  const inBox = { ...elsewhere, typing: true, inSelectionReason: true };
  assert.equal(shortcutFor(key('Enter'), inBox), 'approval-deny-selected-send');
  assert.equal(shortcutFor(key('Escape'), inBox), 'approval-leave-field');
  for (const k of ['j', 'a', 'd', 'D', ' ']) assert.equal(shortcutFor(key(k), inBox), null, `${k} is text`);
  assert.equal(shortcutFor(key('Enter', { isComposing: true }), inBox), null, 'Enter that ends an IME composition');
  assert.equal(shortcutFor(key('Enter', { shiftKey: true }), inBox), null);
  assert.equal(shortcutFor(key('Enter'), { ...inBox, dialogOpen: true }), null, 'the confirm dialog is open');
  assert.equal(shortcutFor(key('Enter'), { ...elsewhere, typing: true }), null, 'Enter in another field');
});
