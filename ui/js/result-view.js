// Viewers for what agents produce: long text (cut at 10,000 characters with "Show all"), JSON,
// tool results (MCP CallToolResult content blocks: text, image, audio, resource,
// resource_link), and JSON-RPC errors. Everything goes in as text; images only as data: URLs
// built from a checked MIME type and base64 payload.

import { h, copyButton, base64ToBytes, downloadBlob } from './dom.js';
import { answeredSecrets, withoutSecrets } from './form-schema.js';
import { truncate, formatCount, formatBytes, base64ByteLength, looksLikeBase64, prettyJson, parseJsonObject, shownText } from './format.js';

export const TRUNCATE_AT = 10_000;
const IMAGE_AUTO_SHOW_BYTES = 2 * 1024 * 1024;
const SAFE_IMAGE_TYPES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp', 'image/bmp', 'image/avif', 'image/svg+xml', 'image/x-icon']);

/**
 * A <pre> of text, cut at 10,000 characters with a "Show all" button.
 * @param {string} text
 * @param {{className?: string, label?: string}} [o]
 */
export function textBlock(text, o = {}) {
  const pre = h('pre', { class: `text-block ${o.className || ''}`.trim(), tabindex: 0, 'aria-label': o.label });
  const wrap = h('div', { class: 'text-wrap' }, pre);
  // A tool's output is shown as it reads: nothing in it reorders or hides its text.
  const shown = shownText(text);
  const t = truncate(shown, TRUNCATE_AT);
  pre.textContent = t.text;
  if (t.truncated) {
    const more = h('button', { type: 'button', class: 'btn btn-small show-all' }, `Show all (${formatCount(t.hidden)} more characters)`);
    const note = h('div', { class: 'truncated-note' }, h('span', { class: 'muted' }, `Showing ${formatCount(TRUNCATE_AT)} of ${formatCount(t.total)} characters.`), more);
    more.addEventListener('click', () => {
      pre.textContent = shown;
      note.remove();
    });
    wrap.appendChild(note);
  }
  return wrap;
}

/**
 * Pretty JSON with a copy button.
 * @param {any} value
 * @param {{title?: string, copyLabel?: string}} [o]
 */
export function jsonBlock(value, o = {}) {
  const text = prettyJson(value);
  const head = h('div', { class: o.title ? 'block-head' : 'block-head block-head-end' }, o.title ? h('span', { class: 'block-title' }, o.title) : null, copyButton(() => text, 'Copy', `Copy ${o.copyLabel || o.title || 'JSON'}`));
  return h('div', { class: 'json-block' }, head, textBlock(text, { className: 'json', label: o.title }));
}

function fileExtension(mime) {
  const sub = String(mime || '').split('/')[1] || 'bin';
  return sub.replace(/\+.*$/, '').replace(/[^a-z0-9]/gi, '').slice(0, 8) || 'bin';
}

/** Size, and buttons to download (and for images, show) a base64 payload. */
function blobBlock({ data, mimeType, name, kind, taskId }) {
  const size = base64ByteLength(data);
  const valid = looksLikeBase64(data);
  const mime = typeof mimeType === 'string' ? mimeType.toLowerCase().trim() : '';
  const label = h('span', { class: 'blob-meta' }, `${kind}${mime ? ` · ${mime}` : ''} · ${formatBytes(size)}${valid ? '' : ' · not valid base64'}`);
  const actions = h('div', { class: 'blob-actions' });
  const box = h('div', { class: 'blob' }, h('div', { class: 'blob-head' }, label, actions));
  if (!valid) return box;
  const filename = name || `task-${String(taskId || 'result').slice(0, 8)}.${fileExtension(mime)}`;
  const dl = h('button', { type: 'button', class: 'btn btn-small' }, 'Download');
  dl.addEventListener('click', () => {
    const bytes = base64ToBytes(data);
    if (bytes) downloadBlob(bytes, mime || 'application/octet-stream', filename);
  });
  actions.appendChild(dl);
  if (SAFE_IMAGE_TYPES.has(mime)) {
    const showImage = () => {
      const img = h('img', { class: 'result-image', alt: `Image from the tool result (${mime}, ${formatBytes(size)})` });
      img.src = `data:${mime};base64,${String(data).replace(/\s+/g, '')}`;
      box.appendChild(img);
    };
    if (size <= IMAGE_AUTO_SHOW_BYTES) showImage();
    else {
      const show = h('button', { type: 'button', class: 'btn btn-small' }, 'Show image');
      show.addEventListener('click', () => {
        show.remove();
        showImage();
      });
      actions.appendChild(show);
    }
  }
  return box;
}

/** A text content block: JSON-looking text is shown formatted, with a raw toggle; "Copy"
 *  copies it whole, as the tool gave it (the block shows a long one's start until "Show all"). */
function textContent(text) {
  const parsed = parseJsonObject(text);
  const copy = copyButton(() => text, 'Copy', 'Copy the text result');
  if (!parsed) return h('div', { class: 'json-block' }, h('div', { class: 'block-head block-head-end' }, copy), textBlock(text, { label: 'Text result' }));
  const formatted = textBlock(prettyJson(parsed), { className: 'json', label: 'Text result (formatted JSON)' });
  const raw = textBlock(text, { label: 'Text result (raw)' });
  raw.hidden = true;
  const toggle = h('button', { type: 'button', class: 'btn btn-small', 'aria-pressed': 'false' }, 'Show raw');
  toggle.addEventListener('click', () => {
    const showRaw = raw.hidden;
    raw.hidden = !showRaw;
    formatted.hidden = showRaw;
    toggle.textContent = showRaw ? 'Show formatted' : 'Show raw';
    toggle.setAttribute('aria-pressed', String(showRaw));
  });
  return h('div', {}, h('div', { class: 'block-head' }, h('span', { class: 'muted' }, 'Text (JSON, formatted)'), toggle, copy), formatted, raw);
}

/** One content block of a CallToolResult. */
export function contentBlock(block, taskId) {
  if (!block || typeof block !== 'object') return jsonBlock(block, { title: 'Content' });
  switch (block.type) {
    case 'text':
      return h('div', { class: 'content-item' }, textContent(typeof block.text === 'string' ? block.text : prettyJson(block.text)));
    case 'image':
    case 'audio':
      return h('div', { class: 'content-item' }, blobBlock({ data: block.data, mimeType: block.mimeType, kind: block.type === 'image' ? 'Image' : 'Audio', taskId }));
    case 'resource': {
      const r = block.resource || {};
      const head = h('div', { class: 'resource-head' }, h('span', { class: 'tag' }, 'Resource'), h('code', { class: 'uri' }, String(r.uri ?? '')), r.mimeType ? h('span', { class: 'muted' }, String(r.mimeType)) : null);
      let body = null;
      if (typeof r.text === 'string') body = textBlock(r.text, { label: 'Resource text' });
      else if (typeof r.blob === 'string') body = blobBlock({ data: r.blob, mimeType: r.mimeType, kind: 'Binary', taskId });
      return h('div', { class: 'content-item' }, head, body);
    }
    case 'resource_link':
      return h(
        'div',
        { class: 'content-item' },
        h('div', { class: 'resource-head' }, h('span', { class: 'tag' }, 'Link'), h('strong', {}, String(block.name ?? block.title ?? '')), h('code', { class: 'uri' }, String(block.uri ?? '')), copyButton(() => String(block.uri ?? ''), 'Copy', 'Copy link address')),
        block.description ? h('p', { class: 'muted' }, String(block.description)) : null,
      );
    default:
      return h('div', { class: 'content-item' }, jsonBlock(block, { title: `Content (${String(block.type ?? 'unknown type')})` }));
  }
}

/**
 * The result of a completed task. isError results are "completed with error", not "failed";
 * `declined`: a person answered no to the task's request (status.js's "Declined"); `denied`:
 * the policy refused the call ("Denied by policy").
 * @param {object} result MCP CallToolResult
 */
export function resultView(result, taskId, { declined = false, denied = false } = {}) {
  // A secret a person typed in a form's masked box reaches the agent, not the page again.
  const secrets = answeredSecrets(result);
  const r = result && typeof result === 'object' ? withoutSecrets(result, secrets) : { content: [] };
  const content = Array.isArray(r.content) ? r.content : [];
  const isError = r.isError === true;
  const returned = `The tool returned ${content.length} content item${content.length === 1 ? '' : 's'}${r.structuredContent !== undefined ? ' and structured content' : ''}.`;
  const [kind, symbol, title, note] = declined
    ? ['outcome-muted', '⊖', 'Declined', `A person answered no${isError ? ': nothing ran' : ''}. ${returned}`]
    : denied
      ? ['outcome-muted', '⊖', 'Denied by policy', `A policy rule refused it: nothing ran. ${returned}`]
      : isError
        ? ['outcome-warn', '⚠', 'Completed with error', 'The tool ran and reported an error in its result (isError). The call itself succeeded.']
        : ['outcome-good', '✓', 'Completed', returned];
  const wrap = h('div', { class: 'result' });
  wrap.appendChild(
    h(
      'div',
      { class: `outcome ${kind}` },
      h('span', { class: 'outcome-symbol', 'aria-hidden': 'true' }, symbol),
      h('div', {}, h('strong', {}, title), h('div', { class: 'outcome-note' }, note)),
    ),
  );
  if (r.structuredContent !== undefined) wrap.appendChild(jsonBlock(r.structuredContent, { title: 'Structured content' }));
  if (content.length) {
    const list = h('div', { class: 'content-list' });
    for (const block of content) list.appendChild(contentBlock(block, taskId));
    wrap.appendChild(h('div', { class: 'block-head' }, h('span', { class: 'block-title' }, 'Content')));
    wrap.appendChild(list);
  }
  const extra = Object.fromEntries(Object.entries(r).filter(([k]) => !['content', 'structuredContent', 'isError'].includes(k)));
  if (Object.keys(extra).length) wrap.appendChild(h('details', { class: 'more' }, h('summary', {}, 'Other result fields'), jsonBlock(extra, { title: 'Other fields' })));
  return wrap;
}

/** The JSON-RPC error of a failed task. */
export function errorView(error) {
  const e = error && typeof error === 'object' ? error : {};
  return h(
    'div',
    { class: 'result' },
    h(
      'div',
      { class: 'outcome outcome-bad' },
      h('span', { class: 'outcome-symbol', 'aria-hidden': 'true' }, '✕'),
      h('div', {}, h('strong', {}, 'Failed'), h('div', { class: 'outcome-note' }, 'The call ended with a JSON-RPC error instead of a result.')),
    ),
    h('dl', { class: 'kv' }, h('dt', {}, 'Code'), h('dd', {}, h('code', {}, String(e.code ?? '–'))), h('dt', {}, 'Message'), h('dd', {}, textBlock(String(e.message ?? ''), { label: 'Error message' }))),
    e.data !== undefined ? jsonBlock(e.data, { title: 'Error data' }) : null,
  );
}
