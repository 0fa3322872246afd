import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SseParser, createSseDecoder } from '../js/sse.js';

function collect() {
  const events = [];
  const parser = new SseParser((e) => events.push(e));
  return { events, parser };
}

test('parses a change event with id, event and data', () => {
  const { events, parser } = collect();
  parser.push('id: 7\nevent: change\ndata: {"a":1}\n\n');
  assert.deepEqual(events, [{ type: 'change', data: '{"a":1}', id: '7' }]);
});

test('an event split at every possible chunk boundary parses the same', () => {
  const stream = 'id: 41\nevent: change\ndata: {"x":"héllo"}\n\n: keep-alive\n\nid: 42\r\nevent: change\r\ndata: two\r\n\r\n';
  for (let cut = 0; cut <= stream.length; cut++) {
    for (let cut2 = cut; cut2 <= stream.length; cut2 += 7) {
      const { events, parser } = collect();
      parser.push(stream.slice(0, cut));
      parser.push(stream.slice(cut, cut2));
      parser.push(stream.slice(cut2));
      assert.deepEqual(
        events,
        [
          { type: 'change', data: '{"x":"héllo"}', id: '41' },
          { type: 'change', data: 'two', id: '42' },
        ],
        `cut at ${cut}/${cut2}`,
      );
    }
  }
});

test('CR at the end of a chunk followed by LF in the next is one line end', () => {
  const { events, parser } = collect();
  parser.push('data: a\r');
  parser.push('\ndata: b\r');
  parser.push('\n\r');
  parser.push('\n');
  assert.deepEqual(events, [{ type: 'message', data: 'a\nb', id: '' }]);
});

test('bare CR line endings work', () => {
  const { events, parser } = collect();
  parser.push('event: resync\rdata: {}\r\r');
  assert.deepEqual(events, [{ type: 'resync', data: '{}', id: '' }]);
});

test('multi-line data is joined with newlines; only one leading space is stripped', () => {
  const { events, parser } = collect();
  parser.push('data:  one\ndata:two\ndata\n\n');
  assert.equal(events[0].data, ' one\ntwo\n');
});

test('comments, unknown fields and data-less events dispatch nothing; event type resets', () => {
  const { events, parser } = collect();
  parser.push(': ping\n\nfoo: bar\n\nevent: change\n\ndata: x\n\n');
  assert.deepEqual(events, [{ type: 'message', data: 'x', id: '' }]);
});

test('the last event id persists across events and ids with NUL are ignored', () => {
  const { events, parser } = collect();
  parser.push('id: 5\ndata: a\n\ndata: b\n\nid: 6\0x\ndata: c\n\n');
  assert.deepEqual(events.map((e) => e.id), ['5', '5', '5']);
  assert.equal(parser.lastEventId, '5');
});

test('retry field reports a reconnect delay; a BOM at the start is dropped', () => {
  const retries = [];
  const events = [];
  const parser = new SseParser((e) => events.push(e), { onRetry: (ms) => retries.push(ms) });
  parser.push('\uFEFFretry: 2500\nretry: soon\ndata: z\n\n');
  assert.deepEqual(retries, [2500]);
  assert.equal(events[0].data, 'z');
});

test('an unterminated event at the end of the stream is dropped', () => {
  const { events, parser } = collect();
  parser.push('id: 9\ndata: partial');
  parser.end();
  assert.equal(events.length, 0);
  assert.equal(parser.lastEventId, '9');
});

test('the byte decoder joins UTF-8 characters split across chunks', () => {
  const events = [];
  const dec = createSseDecoder((e) => events.push(e));
  const bytes = new TextEncoder().encode('data: 日本 ✓ 🎉\n\n');
  for (const b of bytes) dec.push(new Uint8Array([b]));
  dec.end();
  assert.deepEqual(events, [{ type: 'message', data: '日本 ✓ 🎉', id: '' }]);
});
