// DOM building. Everything on screen that came from an agent is untrusted, so elements are
// made with createElement and text goes in through textContent; this module never parses
// HTML (no innerHTML, no insertAdjacentHTML). Also two questions about the page: whether focus
// is in a text field (isTypingTarget) and whether one pane shows at a time (narrow).

/**
 * Creates an element.
 *   h('button', {class: 'btn', type: 'button', onclick: fn, 'aria-label': 'Close'}, 'Close')
 * Props: `class`, `text` (textContent), `dataset`, `on<event>` handlers, DOM properties for
 * non-string values (checked, disabled, value...), attributes otherwise. Children: nodes,
 * strings (as text), arrays, null/false (skipped).
 */
export function h(tag, props, ...children) {
  const el = document.createElement(tag);
  if (props) {
    for (const [k, v] of Object.entries(props)) {
      if (v === undefined || v === null || v === false) continue;
      if (k === 'class') el.className = v;
      else if (k === 'text') el.textContent = String(v);
      else if (k === 'dataset') Object.assign(el.dataset, v);
      else if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
      else if (typeof v !== 'string' && typeof v !== 'number' && k in el) el[k] = v;
      else if (k === 'value' && 'value' in el) el.value = String(v);
      else el.setAttribute(k, v === true ? '' : String(v));
    }
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else if (c instanceof Node) el.appendChild(c);
    else el.appendChild(document.createTextNode(String(c)));
  }
}

/** The element with this id. */
export const $ = (id) => document.getElementById(id);

/**
 * Puts the markup index.html keeps in `el`'s `<template>` child in its place (once; later calls
 * find no template and do nothing), so the ids inside can be looked up. index.html keeps there
 * what the first screen does not show (the token screen, the dialogs loaded later): a template's
 * content is parsed but not part of the document, so the first style and layout and Chromium's
 * form scan at DOMContentLoaded skip it. Returns `el`.
 * @param {HTMLElement} el
 * @returns {HTMLElement}
 */
export function inflate(el) {
  const template = el.querySelector(':scope > template');
  if (template) template.replaceWith(template.content);
  return el;
}

/** Sets an element's text only when it differs (views redrawn every frame write only what changed). */
export function setText(el, text) {
  if (el.textContent !== text) el.textContent = text;
}

/** Sets an attribute only when it differs. */
export function setAttr(el, name, value) {
  if (el.getAttribute(name) !== value) el.setAttribute(name, value);
}

/** A titled section of the detail pane: `<section>` labelled by its `<h3>`. */
export function section(title, ...children) {
  const id = `sec-${title.toLowerCase().replace(/[^a-z]+/g, '-')}`;
  return h('section', { class: 'detail-section', 'aria-labelledby': id }, h('h3', { id, class: 'section-title' }, title), ...children);
}

/** Removes every child. */
export function clear(el) {
  while (el.firstChild) el.removeChild(el.firstChild);
  return el;
}

/** Replaces the children of `el`. */
export function replaceChildren(el, ...children) {
  clear(el);
  append(el, children);
  return el;
}

let idCounter = 0;
/** A page-unique element id. */
export function uid(prefix = 'id') {
  idCounter += 1;
  return `${prefix}-${idCounter}`;
}

/** Copies text to the clipboard; falls back to a hidden textarea. Resolves true on success. */
export async function copyText(text) {
  try {
    if (navigator.clipboard && window.isSecureContext) {
      await navigator.clipboard.writeText(text);
      return true;
    }
  } catch {
    // fall through to the fallback
  }
  const ta = h('textarea', { class: 'offscreen', 'aria-hidden': 'true', readonly: true });
  ta.value = text;
  document.body.appendChild(ta);
  ta.select();
  let ok = false;
  try {
    ok = document.execCommand('copy');
  } catch {
    ok = false;
  }
  ta.remove();
  return ok;
}

/** A "Copy" button for `getText()`; it says "Copied" for a moment. */
export function copyButton(getText, label = 'Copy', accessibleLabel = undefined) {
  const btn = h('button', { type: 'button', class: 'btn btn-small', 'aria-label': accessibleLabel }, label);
  btn.addEventListener('click', async () => {
    const ok = await copyText(getText());
    btn.textContent = ok ? 'Copied' : 'Copy failed';
    setTimeout(() => {
      btn.textContent = label;
    }, 1500);
  });
  return btn;
}

/** Decodes base64 to bytes; null when it is not valid base64. */
export function base64ToBytes(b64) {
  try {
    const bin = atob(String(b64).replace(/\s+/g, ''));
    const out = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
    return out;
  } catch {
    return null;
  }
}

/** Saves bytes or text as a file through a temporary object URL. */
export function downloadBlob(data, mimeType, filename) {
  const blob = new Blob([data], { type: mimeType || 'application/octet-stream' });
  const url = URL.createObjectURL(blob);
  const a = h('a', { href: url, download: filename, class: 'offscreen' });
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** True when focus is in something that takes typed text (shortcuts must not fire there). */
export function isTypingTarget(el) {
  if (!el || !(el instanceof Element)) return false;
  if (el.isContentEditable) return true;
  const tag = el.tagName;
  if (tag === 'TEXTAREA') return true;
  if (tag === 'SELECT') return true;
  if (tag === 'INPUT') {
    const type = (el.getAttribute('type') || 'text').toLowerCase();
    return !['checkbox', 'radio', 'button', 'submit', 'reset', 'range', 'color', 'file'].includes(type);
  }
  return false;
}

/** True when the layout shows one pane at a time (narrow window or high zoom). */
export function narrow() {
  return window.matchMedia('(max-width: 60rem)').matches;
}
