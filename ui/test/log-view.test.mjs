import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createApi, logQuery, ApiError } from '../js/api.js';
import {
  hasOutputLog,
  asDrawn,
  pieceOf,
  fromLineStart,
  readEarlier,
  keptBytes,
  appendSpan,
  trimSpans,
  earlierRange,
  earlierNote,
  statusLine,
  atBottom,
  TAIL_BYTES,
} from '../js/log-view.js';

const utf8 = new TextEncoder();
const decoder = new TextDecoder(); // replaces invalid bytes with U+FFFD, as the server does

/**
 * GET /v1/tasks/{id}/log over `bytes`, as src-tauri/crates/server/src/adapters/logs_api.rs reads it: `tail`
 * moves to the next line start, a chunk cut by `limit` ends after its last newline.
 */
function fakeLog(bytes, { terminal = true } = {}) {
  const reads = [];
  const read = async ({ offset, tail, limit = 65536 }) => {
    reads.push({ offset, tail, limit });
    const size = bytes.length;
    limit = Math.min(Math.max(limit, 1), 1024 * 1024);
    let start = offset !== undefined ? Math.min(offset, size) : tail !== undefined ? Math.max(0, size - tail) : 0;
    if (offset === undefined && tail !== undefined && start > 0) {
      const probe = bytes.subarray(start - 1, start - 1 + Math.min(size - start + 1, limit));
      const i = probe.indexOf(10);
      if (i >= 0) start = start - 1 + i + 1;
    }
    let chunk = bytes.subarray(start, Math.min(size, start + limit));
    if (start + chunk.length < size) {
      const end = chunk.lastIndexOf(10);
      if (end >= 0) chunk = chunk.subarray(0, end + 1);
    }
    const next = start + chunk.length;
    return { taskId: 't', offset: start, nextOffset: next, size, text: decoder.decode(chunk), complete: terminal && next >= size };
  };
  return { read, reads };
}

/** Loads a whole log the way the panel does: the tail, then "Show earlier output" until the start. */
async function loadBackwards(bytes, chunk) {
  const { read } = fakeLog(bytes);
  const tail = pieceOf(await read({ tail: chunk }));
  const pieces = [tail];
  let first = tail.offset;
  while (first > 0) {
    const range = earlierRange(first, 0, { chunk, cap: Infinity });
    const piece = await readEarlier(read, first, range);
    assert.equal(piece.end, first, 'each earlier piece ends where the output shown starts');
    assert.ok(piece.offset < first, 'and adds something');
    pieces.unshift(piece);
    first = piece.offset;
  }
  return pieces;
}

test('the log API client asks for byte ranges and reports a missing log as a 404 ApiError', async () => {
  assert.equal(logQuery({ tail: TAIL_BYTES }), 'tail=65536');
  assert.equal(logQuery({ offset: 0, limit: 10 }), 'offset=0&limit=10');
  assert.equal(logQuery({ limit: 5, offset: 7, tail: undefined }), 'offset=7&limit=5');
  assert.equal(logQuery(), '');
  const seen = [];
  const api = createApi(() => 'tok', {
    fetchImpl: async (url, init) => {
      seen.push([url, init.method, init.headers.Authorization]);
      if (url.startsWith('/v1/tasks/gone/')) return new Response(JSON.stringify({ status: 404, detail: 'This task has no output log' }), { status: 404 });
      return new Response(JSON.stringify({ taskId: 'a/b', offset: 0, nextOffset: 3, size: 3, text: 'hi\n', complete: true }), { status: 200 });
    },
  });
  const r = await api.taskLog('a/b', { offset: 0, limit: 1024 });
  assert.deepEqual(seen[0], ['/v1/tasks/a%2Fb/log?offset=0&limit=1024', 'GET', 'Bearer tok']);
  assert.deepEqual(pieceOf(r), { offset: 0, end: 3, text: 'hi\n' });
  await assert.rejects(api.taskLog('gone', { tail: 10 }), (e) => e instanceof ApiError && e.status === 404 && e.message === 'This task has no output log');
});

test('only command tasks, external jobs and gateway calls are expected to have an output log', () => {
  assert.equal(hasOutputLog({ tool: 'run_command' }), true);
  assert.equal(hasOutputLog({ tool: 'external' }), true);
  assert.equal(hasOutputLog({ tool: 'fs__write_file' }), true);
  assert.equal(hasOutputLog({ tool: 'slow_compute' }), false);
  assert.equal(hasOutputLog(null), false);
});

test('a line redrawn with \\r shows its last drawing', () => {
  assert.equal(asDrawn('plain\nlines\n'), 'plain\nlines\n');
  assert.equal(asDrawn('\rstep 1/3\rstep 2/3\rstep 3/3\nafter\n'), 'step 3/3\nafter\n');
  assert.equal(asDrawn('50%\r100%\r\nend\n'), '100%\nend\n');
  assert.equal(asDrawn('dos line\r\n\r\n'), 'dos line\n\n');
  // A short drawing over a long line leaves its end in sight, as a terminal does.
  assert.equal(asDrawn('ERROR: 3 tests FAILED\rOK\n'), 'OKROR: 3 tests FAILED\n');
});

test('a piece read from inside a line starts at its next line, counted in UTF-8 bytes', () => {
  // "é" is 2 bytes, "€" 3: the partial line "é€x\n" is 7 bytes, not 4 characters.
  assert.deepEqual(fromLineStart({ offset: 100, end: 112, text: 'é€x\nnext\n' }), { offset: 107, end: 112, text: 'next\n' });
  assert.deepEqual(fromLineStart({ offset: 5, end: 9, text: '\nab\n' }), { offset: 6, end: 9, text: 'ab\n' }, 'an empty partial line is just its newline');
  // Started inside "€" (its last 2 bytes became one U+FFFD): counted back from the end instead.
  assert.deepEqual(fromLineStart({ offset: 10, end: 19, text: '\uFFFDx\nnext\n' }), { offset: 14, end: 19, text: 'next\n' });
  const kept = [
    { offset: 0, end: 8, text: 'top\nnext' }, // the log's start is a line start
    { offset: 3, end: 9, text: 'abcdef' }, // inside one long line: nothing would be left
    { offset: 3, end: 7, text: 'abc\n' }, // the only line end ends the piece
    { offset: 3, end: 12, text: 'a\uFFFD\nb\uFFFD\n' }, // replaced bytes on both sides: no exact count
  ];
  for (const piece of kept) assert.equal(fromLineStart(piece), piece, piece.text);
});

test('loading earlier output backwards rebuilds the log exactly, lines and characters whole', async () => {
  const lines = [];
  const chars = [...'é€😀<b>x</b>']; // 2-, 3- and 4-byte characters
  for (let i = 1; i <= 60; i++) lines.push(i % 7 === 0 ? '' : `${i}: ${chars.slice(0, i % 11).join('')} end`);
  const text = `${lines.join('\n')}\n`;
  const bytes = utf8.encode(text);
  for (const chunk of [48, 64, 97, 500, 100_000]) {
    const pieces = await loadBackwards(bytes, chunk);
    assert.equal(pieces.map((p) => p.text).join(''), text, `chunk ${chunk}`);
    for (const p of pieces) assert.ok(p.offset === 0 || bytes[p.offset - 1] === 10, `chunk ${chunk}: piece at ${p.offset} starts a line`);
  }
});

test('offsets stay exact with invalid bytes and lines longer than a read', async () => {
  // 0xff is replaced by U+FFFD (3 bytes as UTF-8): counting the text would drift.
  const parts = [utf8.encode('ok 1\n'), Uint8Array.of(0x61, 0xff, 0x62, 10), utf8.encode(`${'long '.repeat(40)}\nok 2\n`), Uint8Array.of(0xff, 0xfe, 10), utf8.encode('ok 3\n')];
  const bytes = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  parts.reduce((at, p) => (bytes.set(p, at), at + p.length), 0);
  for (const chunk of [6, 9, 16, 33]) {
    const pieces = await loadBackwards(bytes, chunk);
    assert.equal(pieces[0].offset, 0);
    assert.equal(pieces[pieces.length - 1].end, bytes.length);
    for (let i = 0; i < pieces.length; i++) {
      if (i) assert.equal(pieces[i].offset, pieces[i - 1].end, `chunk ${chunk}: no gap, no overlap`);
      assert.equal(pieces[i].text, decoder.decode(bytes.subarray(pieces[i].offset, pieces[i].end)), `chunk ${chunk}: the text is that of its bytes`);
    }
  }
});

test('an earlier read that the server cuts short reads the rest of the line', async () => {
  // The output shown starts inside "partial-line" (at byte 10): the range before it is cut after "a\n".
  const bytes = utf8.encode('a\npartial-line\n');
  const { read, reads } = fakeLog(bytes);
  const piece = await readEarlier(read, 10, { offset: 0, limit: 10 });
  assert.deepEqual(piece, { offset: 0, end: 10, text: 'a\npartial-' });
  assert.deepEqual(reads.map((r) => [r.offset, r.limit]), [[0, 10], [2, 8]]);
  const short = async () => ({ offset: 0, nextOffset: 2, size: 16, text: 'a\n' }); // never more
  await assert.rejects(readEarlier(short, 10, { offset: 0, limit: 10 }), /did not answer/);
});

test('live reads merge into the last span until it is big enough; a gap is an error', () => {
  let spans = appendSpan([], { offset: 0, end: 40, text: 'x' }, 100);
  assert.deepEqual(spans, [{ offset: 0, end: 40 }]);
  const same = appendSpan(spans, { offset: 40, end: 40, text: '' }, 100);
  assert.equal(same, spans, 'an empty read changes nothing');
  spans = appendSpan(spans, { offset: 40, end: 100, text: 'y' }, 100);
  assert.deepEqual(spans, [{ offset: 0, end: 100 }], 'merged: exactly 100 bytes');
  spans = appendSpan(spans, { offset: 100, end: 101, text: 'z' }, 100);
  assert.deepEqual(spans, [{ offset: 0, end: 100 }, { offset: 100, end: 101 }], 'a new span past 100 bytes');
  assert.throws(() => appendSpan(spans, { offset: 150, end: 160, text: 'w' }), RangeError);
  assert.equal(keptBytes(spans), 101);
  assert.equal(keptBytes([]), 0);
});

test('the oldest spans go once the output passes the cap; the newest always stays', () => {
  const spans = [
    { offset: 0, end: 400 },
    { offset: 400, end: 700 },
    { offset: 700, end: 1000 },
  ];
  assert.deepEqual(trimSpans(spans, 1000), { spans, dropped: 0 }, 'exactly at the cap');
  assert.deepEqual(trimSpans(spans, 999), { spans: spans.slice(1), dropped: 1 });
  assert.deepEqual(trimSpans(spans, 600), { spans: spans.slice(1), dropped: 1 });
  assert.deepEqual(trimSpans(spans, 599), { spans: spans.slice(2), dropped: 2 });
  assert.deepEqual(trimSpans(spans, 10), { spans: spans.slice(2), dropped: 2 }, 'one span bigger than the cap stays');
  assert.deepEqual(trimSpans([], 10), { spans: [], dropped: 0 });
});

test('"Show earlier output" reads up to a chunk before the output shown, within the cap', () => {
  assert.deepEqual(earlierRange(200_000, 65_536), { offset: 200_000 - 65_536, limit: 65_536 });
  assert.deepEqual(earlierRange(1000, 65_536), { offset: 0, limit: 1000 }, 'no further back than the start');
  assert.deepEqual(earlierRange(900_000, 1024 * 1024 - 5000), { offset: 895_000, limit: 5000 }, 'no more than fits');
  assert.equal(earlierRange(900_000, 1024 * 1024 - 100), null, 'not a sliver of a line');
  assert.deepEqual(earlierRange(80, 1024 * 1024 - 100), { offset: 0, limit: 80 }, 'but the rest of the log when it fits');
  assert.equal(earlierRange(0, 100), null);
  assert.equal(earlierRange(900_000, 1024 * 1024), null);

  assert.equal(earlierNote(0, 5000), null);
  assert.deepEqual(earlierNote(9_523, 5000), { canLoad: true, text: '9.3 KB before this' });
  assert.deepEqual(earlierNote(3 * 1024 * 1024, 1024 * 1024), { canLoad: false, text: '3.0 MB of earlier output not shown: this page keeps the last 1.0 MB.' });
  assert.equal(earlierNote(3 * 1024 * 1024, 1024 * 1024 - 10).canLoad, false);
  // The log dropped its oldest output: nothing is read, or offered, from before what it keeps.
  const start = 40 * 1024 * 1024;
  assert.deepEqual(earlierRange(start + 1000, 5000, { start }), { offset: start, limit: 1000 });
  assert.equal(earlierRange(start, 5000, { start }), null);
  assert.deepEqual(earlierNote(start + 9_523, 5000, 1024 * 1024, start), { canLoad: true, text: '9.3 KB before this' });
  assert.deepEqual(earlierNote(start, 5000, 1024 * 1024, start), { canLoad: false, text: '40 MB of earlier output no longer kept: the log keeps the latest 16 MB.' });
});

test('the status line says live, finishing or complete, with the size', () => {
  assert.deepEqual(statusLine({ complete: false, terminal: false, size: 0 }), { state: 'live', text: 'Live · no output yet' });
  assert.deepEqual(statusLine({ complete: false, terminal: false, size: 2048 }), { state: 'live', text: 'Live · 2.0 KB so far' });
  assert.deepEqual(statusLine({ complete: false, terminal: true, size: 2048 }), { state: 'ending', text: 'Reading the rest of the output…' });
  assert.deepEqual(statusLine({ complete: true, terminal: true, size: 12_595 }), { state: 'complete', text: 'Output complete · 12 KB' });
  assert.deepEqual(statusLine({ complete: true, terminal: true, size: 0 }), { state: 'complete', text: 'Output complete · no output' });
});

test('the reader is at the bottom within a few pixels, or when nothing scrolls', () => {
  assert.equal(atBottom({ scrollTop: 600, scrollHeight: 1000, clientHeight: 400 }), true);
  assert.equal(atBottom({ scrollTop: 597, scrollHeight: 1000, clientHeight: 400 }), true);
  assert.equal(atBottom({ scrollTop: 590, scrollHeight: 1000, clientHeight: 400 }), false);
  assert.equal(atBottom({ scrollTop: 0, scrollHeight: 300, clientHeight: 400 }), true);
  assert.equal(atBottom({ scrollTop: 0, scrollHeight: 0, clientHeight: 0 }), true, 'hidden');
});
