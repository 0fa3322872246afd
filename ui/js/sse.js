// Incremental parser for `text/event-stream` (the WHATWG "server-sent events" format).
//
// The page reads /v1/events with fetch() because EventSource cannot send an Authorization
// header, so it has to parse the stream itself. Chunks arrive at arbitrary byte boundaries:
// in the middle of a line, between a CR and its LF, or inside a multi-byte UTF-8 character.
// This module has no DOM and no network access; the event-stream client feeds it.

/**
 * @typedef {{type: string, data: string, id: string}} SseEvent
 * `type` is the `event:` field ("message" when absent), `data` the joined `data:` lines,
 * `id` the last event id seen so far on the stream (it persists across events, as in browsers).
 */

export class SseParser {
  /**
   * @param {(ev: SseEvent) => void} onEvent called once per dispatched event
   * @param {{onRetry?: (ms: number) => void}} [options]
   */
  constructor(onEvent, options = {}) {
    this.onEvent = onEvent;
    this.onRetry = options.onRetry || null;
    this.buffer = '';
    this.skipLF = false; // the previous chunk ended with CR: a leading LF belongs to it
    this.started = false; // a leading BOM is dropped once
    this.dataLines = [];
    this.hasData = false;
    this.type = '';
    this.lastEventId = '';
  }

  /** Feeds decoded text. Complete lines are processed at once; a partial line waits. */
  push(text) {
    if (!text) return;
    if (!this.started) {
      this.started = true;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    if (this.skipLF) {
      this.skipLF = false;
      if (text[0] === '\n') text = text.slice(1);
    }
    let buf = this.buffer + text;
    let start = 0;
    for (let i = 0; i < buf.length; i++) {
      const c = buf[i];
      if (c !== '\n' && c !== '\r') continue;
      this.line(buf.slice(start, i));
      if (c === '\r') {
        if (i + 1 < buf.length) {
          if (buf[i + 1] === '\n') i++;
        } else {
          this.skipLF = true;
        }
      }
      start = i + 1;
    }
    this.buffer = buf.slice(start);
  }

  /**
   * The stream ended. An event without its closing blank line is dropped, as the format
   * requires; the last event id is kept for the reconnect.
   */
  end() {
    this.buffer = '';
    this.skipLF = false;
    this.dataLines = [];
    this.hasData = false;
    this.type = '';
  }

  line(line) {
    if (line === '') {
      this.dispatch();
      return;
    }
    if (line[0] === ':') return; // comment (the server's keep-alive)
    const colon = line.indexOf(':');
    let field;
    let value;
    if (colon === -1) {
      field = line;
      value = '';
    } else {
      field = line.slice(0, colon);
      value = line.slice(colon + 1);
      if (value[0] === ' ') value = value.slice(1);
    }
    switch (field) {
      case 'data':
        this.dataLines.push(value);
        this.hasData = true;
        break;
      case 'event':
        this.type = value;
        break;
      case 'id':
        if (!value.includes('\0')) this.lastEventId = value;
        break;
      case 'retry':
        if (/^\d+$/.test(value) && this.onRetry) this.onRetry(Number(value));
        break;
      default:
        break; // unknown fields are ignored
    }
  }

  dispatch() {
    if (!this.hasData) {
      this.type = '';
      return;
    }
    const ev = {
      type: this.type || 'message',
      data: this.dataLines.join('\n'),
      id: this.lastEventId,
    };
    this.dataLines = [];
    this.hasData = false;
    this.type = '';
    this.onEvent(ev);
  }
}

/**
 * A parser that takes raw bytes (Uint8Array chunks from a ReadableStream) and decodes UTF-8
 * across chunk boundaries before parsing.
 * @param {(ev: SseEvent) => void} onEvent
 * @param {{onRetry?: (ms: number) => void}} [options]
 */
export function createSseDecoder(onEvent, options) {
  const parser = new SseParser(onEvent, options);
  const decoder = new TextDecoder('utf-8');
  return {
    parser,
    /** @param {Uint8Array} bytes */
    push(bytes) {
      parser.push(decoder.decode(bytes, { stream: true }));
    },
    end() {
      parser.push(decoder.decode());
      parser.end();
    },
  };
}
