// JSON read and written without losing an integer. A JavaScript number holds an integer exactly
// only up to 2^53 (Number.MAX_SAFE_INTEGER), and JSON.parse rounds a larger one; yet a tool call
// can carry a 64-bit id (a Discord or Twitter snowflake, a database key), which a person must
// read, edit and approve as the agent sent it. Such an integer is read as an ExactInteger, which
// keeps its digits, and written back as them; everything else is what JSON.parse and
// JSON.stringify make of it. The page reads every answer and event with parseJson and writes
// every request with stringifyJson. No DOM.

/** An integer past 2^53 in magnitude, as its JSON digits. */
export class ExactInteger {
  /** @param {string} digits the integer as JSON writes it, e.g. "-12345678901234567891" */
  constructor(digits) {
    this.digits = digits;
    Object.freeze(this);
  }

  /** The nearest number: arithmetic and comparisons (`<`, `Math.max`) work on it as they did. */
  valueOf() {
    return Number(this.digits);
  }

  toString() {
    return this.digits;
  }

  /** A plain JSON.stringify writes the nearest number; stringifyJson writes the digits. */
  toJSON() {
    return Number(this.digits);
  }
}

/** True for an integer that a JavaScript number would round: read it as an ExactInteger. */
function needsDigits(token) {
  return /^-?\d+$/.test(token) && !Number.isSafeInteger(Number(token));
}

/** Integer text as a value: a number when one holds it exactly, else an ExactInteger. Text that
 *  is no integer (`"1.5"`, `"abc"`) is `Number(text)`. */
export function integerValue(text) {
  const t = String(text).trim().replace(/^\+/, '');
  return needsDigits(t) ? new ExactInteger(t.replace(/^(-?)0+(?=\d)/, '$1')) : Number(t);
}

// A JSON string (skipped whole: digits in it stay text) or a number.
const TOKENS = /"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/g;

/** A marker no real string holds: where a value stands for an ExactInteger's digits. */
const marker = () => `exact-integer-${Math.random().toString(36).slice(2)}${Math.random().toString(36).slice(2)}:`;

/**
 * JSON.parse(text), with each integer past 2^53 an ExactInteger. Throws the SyntaxError
 * JSON.parse throws for the same text.
 * @param {string} text
 */
export function parseJson(text) {
  // A number that can round has 16 digits or more: most text has no such run and is read as is.
  if (!/\d{16}/.test(text)) return JSON.parse(text);
  const mark = marker();
  let marked = false;
  const rewritten = text.replace(TOKENS, (t) => {
    if (t[0] === '"' || !needsDigits(t)) return t;
    marked = true;
    return `"${mark}${t}"`;
  });
  if (!marked) return JSON.parse(text);
  try {
    return JSON.parse(rewritten, (_key, v) => (typeof v === 'string' && v.startsWith(mark) ? new ExactInteger(v.slice(mark.length)) : v));
  } catch {
    return JSON.parse(text); // throws, with the positions of the text as it was
  }
}

/**
 * JSON.stringify(value, null, indent), writing each ExactInteger as its digits, and a number
 * past 2^53 that is no ExactInteger (one sent as a float, `1.2345678901234567e19`, or past 64
 * bits, which the server keeps as the nearest float) with its exponent: JSON.stringify would
 * write `12345678901234567000`, digits nobody sent that read as exact.
 * @param {unknown} value
 * @param {number} [indent]
 * @returns {string | undefined} undefined for undefined (as JSON.stringify)
 */
export function stringifyJson(value, indent) {
  let mark = null;
  const text = JSON.stringify(
    value,
    function replace(key, v) {
      const raw = this[key];
      let shown = null;
      if (raw instanceof ExactInteger) shown = raw.digits;
      else if (typeof raw === 'number' && Number.isInteger(raw) && !Number.isSafeInteger(raw)) shown = raw.toExponential();
      if (shown === null) return v;
      mark ??= marker();
      return `${mark}${shown}`;
    },
    indent,
  );
  return mark === null ? text : text.replace(new RegExp(`"${mark}(-?[0-9.]+(?:e[-+]\\d+)?)"`, 'g'), '$1');
}

/** The most and least integers the server keeps exactly (64 bits, signed or not). */
export const LARGEST_EXACT = 18446744073709551615n;
export const SMALLEST_EXACT = -9223372036854775808n;

/** Whether an ExactInteger is past what the server keeps exactly (it would keep the nearest
 *  float): −2^63 to 2^64 − 1 are kept. */
export function pastExact(v) {
  if (!(v instanceof ExactInteger)) return false;
  const n = BigInt(v.digits);
  return n > LARGEST_EXACT || n < SMALLEST_EXACT;
}
