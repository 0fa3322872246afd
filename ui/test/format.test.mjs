import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  formatDuration,
  formatAge,
  taskDurationMs,
  ttlCountdown,
  truncate,
  oneLine,
  formatBytes,
  base64ByteLength,
  looksLikeBase64,
  parseJsonObject,
  progressFraction,
  progressText,
  compactNumber,
  formatCount,
  argsSummary,
  middleCut,
  rowDuration,
  shortId,
  shownPlainly,
  shownText,
  prettyJson,
} from '../js/format.js';
import { statusBadge } from '../js/status.js';

const NOW = Date.parse('2026-11-29T12:00:00Z');

test('durations are compact and never negative', () => {
  assert.equal(formatDuration(0), '0.0s');
  assert.equal(formatDuration(-5), '0.0s');
  assert.equal(formatDuration(450), '0.4s');
  assert.equal(formatDuration(9_990), '9.9s');
  assert.equal(formatDuration(42_000), '42s');
  assert.equal(formatDuration(12 * 60_000 + 5_000), '12m 5s');
  assert.equal(formatDuration(3 * 3_600_000 + 12 * 60_000), '3h 12m');
  assert.equal(formatDuration(2 * 86_400_000 + 4 * 3_600_000), '2d 4h');
  assert.equal(formatDuration(NaN), '–');
});

test('ages read naturally', () => {
  assert.equal(formatAge('2026-11-29T11:59:58Z', NOW), 'just now');
  assert.equal(formatAge('2026-11-29T11:59:18Z', NOW), '42s ago');
  assert.equal(formatAge('2026-11-29T11:48:00Z', NOW), '12m ago');
  assert.equal(formatAge('2026-11-29T09:00:00Z', NOW), '3h ago');
  assert.equal(formatAge('2026-11-25T12:00:00Z', NOW), '4d ago');
  assert.equal(formatAge(undefined, NOW), '–');
});

test('task duration runs until now, or until the last update once terminal', () => {
  const t = { createdAt: '2026-11-29T11:59:00Z', lastUpdatedAt: '2026-11-29T11:59:30Z' };
  assert.equal(taskDurationMs({ ...t, status: 'working' }, NOW), 60_000);
  assert.equal(taskDurationMs({ ...t, status: 'completed' }, NOW), 30_000);
});

test('TTL countdown covers unlimited, waiting for input, counting down and expired', () => {
  assert.equal(ttlCountdown({ ttlMs: null, status: 'input_required' }, NOW).text, 'Kept until answered (no expiry while waiting for input)');
  assert.equal(ttlCountdown({ ttlMs: null, status: 'working' }, NOW).text, 'Kept indefinitely');
  const live = { ttlMs: 86_400_000, status: 'working', createdAt: '2026-11-29T11:00:00Z', expiresAt: '2026-11-30T11:00:00Z' };
  assert.deepEqual(ttlCountdown(live, NOW), { text: 'Expires in 23h 0m', urgent: false, ticking: false });
  assert.equal(ttlCountdown({ ...live, status: 'completed' }, NOW).text, 'Deleted in 23h 0m');
  const noExpiresAt = { ttlMs: 120_000, status: 'working', createdAt: '2026-11-29T11:59:00Z' };
  assert.deepEqual(ttlCountdown(noExpiresAt, NOW), { text: 'Expires in 1m 0s', urgent: true, ticking: true });
  assert.deepEqual(ttlCountdown({ ...live, expiresAt: '2026-11-29T11:00:00Z' }, NOW), { text: 'Expired: removed at the next sweep', urgent: true, ticking: false });
});

test('truncation keeps the first 10,000 characters and says how many are hidden', () => {
  const long = 'x'.repeat(10_500);
  assert.deepEqual(truncate('short'), { text: 'short', truncated: false, hidden: 0, total: 5 });
  const t = truncate(long);
  assert.equal(t.text.length, 10_000);
  assert.equal(t.truncated, true);
  assert.equal(t.hidden, 500);
  const emoji = 'a'.repeat(9) + '🎉';
  assert.equal(truncate(emoji, 10).text, 'a'.repeat(9), 'no half surrogate pair');
  assert.equal(oneLine('a\n  b\tc'), 'a b c');
  assert.equal(oneLine('abcdef', 4), 'abc…');
  // A job named with colours, a bell and line breaks reads as plain words.
  // Nothing is dropped: an escape sequence's payload stays in sight, written out.
  assert.equal(oneLine('\u001b[1;31mred\u001b[0m\u0007 and\u0000\nbold \u001b]0;title\u0007end'), '\\u{1b}[1;31mred\\u{1b}[0m\\u{7} and\\u{0} bold \\u{1b}]0;title\\u{7}end');
  assert.equal(oneLine('echo \u001b]0;x; touch /tmp/f; echo \u0007 done'), 'echo \\u{1b}]0;x; touch /tmp/f; echo \\u{7} done');
});

test('sizes, base64 and counts', () => {
  assert.equal(formatBytes(512), '512 B');
  assert.equal(formatBytes(1536), '1.5 KB');
  assert.equal(formatBytes(5 * 1024 * 1024), '5.0 MB');
  assert.equal(formatBytes(300 * 1024 * 1024), '300 MB');
  assert.equal(base64ByteLength('aGVsbG8='), 5);
  assert.equal(base64ByteLength('aGVsbG8h'), 6);
  assert.equal(base64ByteLength(''), 0);
  assert.equal(looksLikeBase64('aGVsbG8='), true);
  assert.equal(looksLikeBase64('hello world'), false);
  assert.equal(formatCount(1234567), '1,234,567');
});

test('JSON detection and progress', () => {
  assert.deepEqual(parseJsonObject(' {"a":1} '), { a: 1 });
  assert.equal(parseJsonObject('"str"'), null);
  assert.equal(parseJsonObject('{broken'), null);
  assert.equal(progressFraction({ current: 3, total: 10 }), 0.3);
  assert.equal(progressFraction({ current: 3 }), null);
  assert.equal(progressFraction({ current: 12, total: 10 }), 1);
  assert.equal(progressText({ current: 3.0, total: 10 }), '3 / 10');
  assert.equal(progressText({ current: 2.5 }), '2.5');
  // The detail's full numbers; a list row's compact ones, short enough for its progress box.
  assert.equal(progressText({ current: 1234567, total: 98765432 }), '1234567 / 98765432');
  assert.equal(progressText({ current: 1234567, total: 98765432 }, { compact: true }), '1.2M / 98.8M');
  assert.equal(progressText({ current: 3, total: 9999 }, { compact: true }), '3 / 9999');
  assert.equal(progressText({ current: 2.5 }, { compact: true }), '2.5');
});

test('compact numbers keep at most one decimal and never read "1000K"', () => {
  const cases = [
    [0, '0'],
    [9999, '9999'],
    [10_000, '10K'],
    [12_345, '12.3K'],
    [123_456, '123.5K'],
    [999_949, '999.9K'],
    [999_950, '1M'],
    [1_234_567, '1.2M'],
    [98_765_432, '98.8M'],
    [4_200_000_000, '4.2B'],
    [7e15, '7000T'],
  ];
  for (const [n, text] of cases) assert.equal(compactNumber(n), text, String(n));
  for (const [, text] of cases) assert.ok(text.length <= 6, text);
});

test('status badges pair a word with a symbol; isError is not "failed"', () => {
  assert.deepEqual(statusBadge({ status: 'input_required' }), { key: 'input_required', label: 'Needs input', symbol: '!' });
  assert.equal(statusBadge({ status: 'completed', result: { isError: true } }).label, 'Completed with error');
  assert.equal(statusBadge({ status: 'completed', result: { isError: false } }).label, 'Completed');
  // A person's no (to a request_approval, a permission prompt, a command) is said by the result's
  // refusal mark, never by a tool's name and its structuredContent, which a hosted task may
  // take and say: without the mark they are what they say of themselves.
  const said = (tool, structuredContent, isError = false) => statusBadge({ status: 'completed', tool, result: { isError, structuredContent } });
  assert.equal(said('request_approval', { action: 'decline' }).label, 'Completed');
  assert.equal(said('permission_request', { behavior: 'deny', message: 'no' }).label, 'Completed');
  assert.equal(said('run_command', { declined: true, command: 'rm x' }, true).label, 'Completed with error');
  assert.equal(said('run_command', { denied: true, policy: 'rule r-1' }, true).label, 'Completed with error');
  const withMark = (tool, mark) => statusBadge({ status: 'completed', tool, result: { structuredContent: { action: 'decline' }, _meta: { 'io.taskdeck/refusal': mark } } });
  assert.deepEqual(withMark('request_approval', 'declined'), { key: 'completed-declined', label: 'Declined', symbol: '⊖' });
  // The refusal mark Taskdeck puts on a call it did not make (the server strips it from others').
  const marked = (mark, status = 'completed') => statusBadge({ status, tool: 'fs__write_file', result: { isError: true, _meta: { 'io.taskdeck/refusal': mark } } });
  assert.equal(marked('declined').label, 'Declined');
  assert.equal(marked('denied').label, 'Denied by policy');
  assert.equal(marked('maybe').label, 'Completed with error', 'an unknown mark is no mark');
  assert.equal(marked('declined', 'failed').label, 'Failed');
  assert.equal(statusBadge({ status: 'failed' }).label, 'Failed');
  assert.equal(statusBadge({ status: 'weird' }).key, 'unknown');
});

test('arguments read as one line', () => {
  assert.equal(argsSummary({ label: 'nightly build', seconds: 600 }), 'label: nightly build · seconds: 600');
  assert.equal(argsSummary({ cfg: { a: [1, 2] }, on: true }), 'cfg: {"a":[1,2]} · on: true');
  assert.equal(argsSummary({}), '');
  assert.equal(argsSummary(null), '');
  assert.equal(argsSummary({ text: 'x'.repeat(100) }).length, 'text: '.length + 60);
});

test('a call reads as what runs: hidden and reordering characters are written out', () => {
  // Shown raw, U+202E makes this read `echo safe # ~ fr- mr ; done`.
  const trick = 'echo safe \u202e; rm -rf ~ #\u202c done';
  assert.equal(argsSummary({ command: trick }), 'command: echo safe \\u{202e}; rm -rf ~ #\\u{202c} done');
  assert.equal(argsSummary({ command: 'echo ok\nrm -rf ~' }), 'command: echo ok\\nrm -rf ~', 'a second line is not a space');
  assert.equal(argsSummary({ argv: ['a\u2066b'] }), 'argv: ["a\\u2066b"]');
  // Two calls that differ at the end of a long value read apart.
  const long = (end) => argsSummary({ argv: ['echo', `prefix-${'z'.repeat(60)}`, end] });
  assert.notEqual(long('end-P'), long('end-Q'));
  assert.ok(long('end-P').endsWith('"end-P"]'), long('end-P'));
  assert.equal(middleCut('x'.repeat(30) + 'END', 20).length, 20);
  assert.ok(middleCut('x'.repeat(30) + 'END', 20).endsWith('END'));
  assert.equal(shownPlainly('a\tb\r\u200bc'), 'a\\tb\\r\\u{200b}c');
  assert.equal(shownPlainly('line 1\n\tline 2\u202e', true), 'line 1\n\tline 2\\u{202e}', 'a script keeps its lines');
  // JSON views escape them as JSON does, so the text parses back to the same call (the edit box).
  const json = prettyJson({ command: trick, sep: '\u2028\u0085\ufeff' });
  assert.ok(!/[\u202e\u202c\u2028\u0085\ufeff]/.test(json), json);
  assert.deepEqual(JSON.parse(json), { command: trick, sep: '\u2028\u0085\ufeff' });
  // A status message or a question keeps its words; only what reorders them is written out.
  assert.equal(oneLine('ok \u202eabc'), 'ok \\u{202e}abc');
  assert.equal(oneLine('family 👨\u200d👩'), 'family 👨\u200d👩');
  // Letters that draw as nothing are written out: tag characters (invisible ASCII), the Hangul
  // filler, the Mongolian vowel separator; an emoji's variation selector stays.
  assert.equal(shownPlainly('echo x\u{E0041}\u{E0042}y\u3164\u180e'), 'echo x\\u{e0041}\\u{e0042}y\\u{3164}\\u{180e}');
  assert.equal(oneLine('ok \u{E0041} ❤️'), 'ok \\u{e0041} ❤️');
  const tagged = prettyJson({ command: 'x\u{E0041}' });
  assert.ok(tagged.includes('x\\udb40\\udc41'), tagged);
  assert.deepEqual(JSON.parse(tagged), { command: 'x\u{E0041}' });
  // Prose keeps its lines; a carriage return or an escape that would hide or join words is
  // written out, a Windows line break is a line break.
  assert.equal(shownText('Approve?\r\nAlso\rOVERWRITTEN \u001b[2Kline\u202e'), 'Approve?\nAlso\\rOVERWRITTEN \\u{1b}[2Kline\\u{202e}');
  assert.equal(shownText('two\nlines\tand a tab'), 'two\nlines\tand a tab');
});

test('short ids show the random part of a Taskdeck id, the start of anything else', () => {
  assert.equal(shortId('019ad3a5c2f1-5b0c1e0f9d8a4c7e8f1a2b3c4d5e6f70'), '5b0c1e0f');
  assert.equal(shortId('00000000-0000-4000-8000-000000000000'), '00000000');
  assert.equal(shortId(undefined), '');
});

test('ageChangesIn: the time until formatAge shows another text', async () => {
  const { ageChangesIn, formatAge } = await import('../js/format.js');
  const t0 = Date.parse('2026-12-01T00:00:00Z');
  const iso = new Date(t0).toISOString();
  for (const age of [0, 1200, 4999, 5000, 7300, 59_999, 60_000, 61_500, 3_599_000, 3_600_000, 5 * 3_600_000 + 7, 48 * 3_600_000, 50 * 3_600_000 + 3]) {
    const now = t0 + age;
    const wait = ageChangesIn(iso, now);
    assert.ok(wait > 0, `age ${age}: ${wait}`);
    assert.equal(formatAge(iso, now + wait - 1), formatAge(iso, now), `age ${age}: unchanged until ${wait} ms`);
    assert.notEqual(formatAge(iso, now + wait), formatAge(iso, now), `age ${age}: changed at ${wait} ms`);
  }
  assert.equal(ageChangesIn('not a time', t0), Infinity);
  assert.equal(ageChangesIn(new Date(t0 + 3000).toISOString(), t0), 5000, 'a time ahead of the clock reads as just now');
});

test('a command that waited for approval says how long it ran', async () => {
  const { ranBeforeEnd } = await import('../js/format.js');
  const done = (durationMs, tookMs) => ({
    status: 'completed',
    createdAt: '2026-12-07T00:00:00.000Z',
    lastUpdatedAt: new Date(Date.parse('2026-12-07T00:00:00.000Z') + tookMs).toISOString(),
    result: { structuredContent: { durationMs } },
  });
  assert.equal(ranBeforeEnd(done(3014, 20_000)), 3014);
  assert.equal(ranBeforeEnd(done(3014, 3_500)), null, 'started at once: nothing to tell apart');
  assert.equal(ranBeforeEnd({ ...done(3014, 20_000), status: 'failed' }), null);
  assert.equal(ranBeforeEnd({ status: 'completed', result: { content: [] } }), null);
});

test('cut text never ends or starts with half an emoji', () => {
  const lone = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
  const text = '😀'.repeat(300);
  for (let max = 2; max < 40; max++) {
    assert.doesNotMatch(oneLine(text, max), lone, `oneLine ${max}`);
    assert.doesNotMatch(middleCut(text, max), lone, `middleCut ${max}`);
    assert.doesNotMatch(truncate(text, max).text, lone, `truncate ${max}`);
    assert.ok(middleCut(text, max).length <= max);
  }
  assert.equal(oneLine('a😀b', 3), 'a…');
});

test('a row says how long a command ran when it waited to start, and how long it took from the call', () => {
  const t0 = Date.parse('2026-12-07T10:00:00Z');
  const iso = (ms) => new Date(ms).toISOString();
  const waited = { status: 'completed', createdAt: iso(t0), lastUpdatedAt: iso(t0 + 202_000), result: { structuredContent: { durationMs: 40_100 } } };
  const row = rowDuration(waited);
  assert.equal(row.text, `ran ${formatDuration(40_100)}`);
  assert.match(row.title, new RegExp(`after waiting to start \\(for approval\\): ${formatDuration(202_000)} from the call`));
  const quick = { ...waited, result: { structuredContent: { durationMs: 201_500 } } };
  assert.deepEqual(rowDuration(quick), { text: `took ${formatDuration(202_000)}`, title: '' });
  assert.deepEqual(rowDuration({ status: 'working', createdAt: iso(t0) }, t0 + 5000), { text: `for ${formatDuration(5000)}`, title: '' });
});
