// Elicitation forms: turns a `requestedSchema` (the flat JSON Schema subset MCP allows for
// elicitation/create in form mode) into field descriptors the page renders, validates what the
// human typed, and converts it to the `content` object sent back. No DOM.
//
// Raw values (what the inputs hold) by kind:
//   text/email/uri/date/date-time/number/integer/json: string as typed
//   boolean: true/false;  select: the chosen option's value or null;  multiselect: array of values

import { shownText } from './format.js';
import { ExactInteger, integerValue, parseJson, stringifyJson } from './exact-json.js';

/**
 * @typedef {object} Field
 * @property {string} name property name (the key in `content`)
 * @property {'text'|'email'|'uri'|'date'|'date-time'|'number'|'integer'|'boolean'|'select'|'multiselect'|'json'} kind
 * @property {string} label
 * @property {string} [description]
 * @property {boolean} required
 * @property {any} defaultValue raw default (see above)
 * @property {number} [minLength] @property {number} [maxLength] @property {string} [pattern]
 * @property {number} [minimum] @property {number} [maximum]
 * @property {number} [exclusiveMinimum] @property {number} [exclusiveMaximum]
 * @property {number} [minItems] @property {number} [maxItems]
 * @property {{value: any, label: string}[]} [options]
 * @property {boolean} [secret] a text field whose name says it holds a credential (isSecretName):
 *   shown masked, never written out elsewhere in the page
 */

/**
 * True when a field named `name` asks for a credential, by the rule the server uses to hide
 * secret-named arguments (tools/secrets.rs is_secret_name): its name contains (case-insensitive)
 * `token`, `secret`, `pass` (`password`, `passphrase`), `credential`, `auth` (not in `author`,
 * `authority`), `session`, `jwt`, `dsn`, `cookie`, `private`, `bearer`, `signature`, `hmac` or
 * `_key_`, or ends in `key`, `keys`, `pwd`, `_pw` or `_pin`, or is `pw` or `pin`; `-` counts as
 * `_`. Not a credential's settings (`token_type`, `password_file`, `auth_url`, ...), nor the
 * working directory's `pwd`. The form shows such a text field masked (prompt-form.js).
 */
export function isSecretName(name) {
  const n = String(name).toLowerCase().replace(/-/g, '_');
  const about = ['type', 'mode', 'file', 'path', 'dir', 'ttl', 'expiry', 'expires', 'count', 'length', 'url', 'endpoint', 'newkey', 'askpass'];
  if (n === 'pwd' || n === 'oldpwd' || about.some((end) => n.endsWith(end))) return false;
  const auth = n.includes('auth') && (n.includes('authoriz') || !n.includes('author'));
  return (
    auth ||
    n === 'pin' ||
    n === 'pw' ||
    ['token', 'secret', 'pass', 'credential', 'session', 'jwt', 'dsn', 'cookie', 'private', 'bearer', 'signature', 'hmac', '_key_'].some((w) => n.includes(w)) ||
    ['key', 'keys', 'pwd', '_pw', '_pin'].some((end) => n.endsWith(end))
  );
}

/** What the page shows in place of a secret answered in a form (as the server does for secret arguments). */
export const HIDDEN_SECRET = '[redacted]';

/**
 * Answer `content` as the page shows it once sent (a task's input rounds): the value of each
 * member whose name says it is a credential (isSecretName) and that holds a string or a number
 * replaced by HIDDEN_SECRET. The agent got the value; the page does not write it out again.
 * Other values (a flag such as `use_auth: true`) are kept.
 */
export function hideSecrets(content) {
  if (!content || typeof content !== 'object' || Array.isArray(content)) return content;
  return Object.fromEntries(Object.entries(content).map(([k, v]) => [k, isSecretName(k) && ((typeof v === 'string' && v !== '') || typeof v === 'number' || v instanceof ExactInteger) ? HIDDEN_SECRET : v]));
}

/**
 * The secret values a task's `result` carries when it is an answer to a form (`structuredContent`
 * `{action, content}`, as request_approval's): the values of `content` that hideSecrets hides, as
 * text, those of 3 characters or more (a shorter one would hide every match of it). The page
 * writes none of them out (withoutSecrets).
 */
export function answeredSecrets(result) {
  const s = result && result.structuredContent;
  const content = s && typeof s.action === 'string' && s.content;
  if (!content || typeof content !== 'object' || Array.isArray(content)) return [];
  const hidden = hideSecrets(content);
  return Object.keys(content)
    .filter((k) => hidden[k] === HIDDEN_SECRET && content[k] !== HIDDEN_SECRET)
    .map((k) => String(content[k]))
    .filter((v) => v.length >= 3);
}

/** `value` (text, or JSON at any depth) with each of `secrets`, as written and as JSON escapes
 *  it, replaced by HIDDEN_SECRET in its strings. */
export function withoutSecrets(value, secrets) {
  if (!secrets.length) return value;
  if (typeof value === 'string') {
    let out = value;
    for (const secret of secrets) {
      for (const form of new Set([secret, JSON.stringify(secret).slice(1, -1)])) out = out.split(form).join(HIDDEN_SECRET);
    }
    return out;
  }
  if (Array.isArray(value)) return value.map((v) => withoutSecrets(v, secrets));
  if (value && typeof value === 'object' && !(value instanceof ExactInteger)) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withoutSecrets(v, secrets)]));
  }
  return value;
}

const STRING_FORMATS = { email: 'email', uri: 'uri', url: 'uri', date: 'date', 'date-time': 'date-time' };

function num(v) {
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

/** Options of a single-select string: `enum` (+ legacy `enumNames`) or `oneOf: [{const, title}]`. */
function singleOptions(prop) {
  if (Array.isArray(prop.enum)) {
    const names = Array.isArray(prop.enumNames) ? prop.enumNames : [];
    return distinct(prop.enum.map((v, i) => ({ value: v, label: shownText(typeof names[i] === 'string' ? names[i] : String(v)) })));
  }
  const alts = Array.isArray(prop.oneOf) ? prop.oneOf : Array.isArray(prop.anyOf) ? prop.anyOf : null;
  if (alts && alts.length && alts.every((a) => a && typeof a === 'object' && 'const' in a)) {
    return distinct(alts.map((a) => ({ value: a.const, label: shownText(typeof a.title === 'string' ? a.title : String(a.const)) })));
  }
  return null;
}

/** `options` with each label that two options share followed by its value (`Staging
 *  (prod)`): a person must be able to tell apart what they choose between. */
function distinct(options) {
  const seen = new Map();
  for (const o of options) seen.set(o.label, (seen.get(o.label) || 0) + 1);
  return options.map((o) => (seen.get(o.label) > 1 ? { ...o, label: `${o.label} (${shownText(String(o.value))})` } : o));
}

/** Options of a multi-select: `items.enum` or `items.anyOf/oneOf: [{const, title}]`. */
function multiOptions(prop) {
  const items = prop.items;
  if (!items || typeof items !== 'object') return null;
  return singleOptions(items);
}

/**
 * Describes the form for `schema`, its fields in the schema's property order (the server
 * keeps the agent's key order, and the agent chose it: related fields stay together).
 * Required fields are marked, not moved.
 * @param {object} schema an elicitation requestedSchema
 * @returns {{fields: Field[]}}
 */
export function describeForm(schema) {
  const props = schema && typeof schema === 'object' && schema.properties && typeof schema.properties === 'object'
    ? schema.properties
    : {};
  const required = new Set(Array.isArray(schema && schema.required) ? schema.required : []);
  const fields = [];
  for (const [name, raw] of Object.entries(props)) {
    const prop = raw && typeof raw === 'object' ? raw : {};
    const base = {
      name,
      // What a person reads of an agent's form: nothing in it reorders or hides its text.
      label: shownText(typeof prop.title === 'string' && prop.title.trim() ? prop.title : name),
      description: typeof prop.description === 'string' ? shownText(prop.description) : undefined,
      required: required.has(name),
    };
    const type = Array.isArray(prop.type) ? prop.type.find((t) => t !== 'null') : prop.type;
    let field;
    if (type === 'array') {
      const options = multiOptions(prop);
      if (options) {
        const defaults = Array.isArray(prop.default) ? prop.default : [];
        field = {
          ...base,
          kind: 'multiselect',
          options,
          minItems: num(prop.minItems),
          maxItems: num(prop.maxItems),
          defaultValue: options.filter((o) => defaults.some((d) => d === o.value)).map((o) => o.value),
        };
      }
    } else if (type === 'boolean') {
      // `hasDefault`: an optional checkbox without a default that is left alone is not answered
      // (left out), so "no answer" stays apart from "no".
      field = { ...base, kind: 'boolean', defaultValue: typeof prop.default === 'boolean' ? prop.default : false, hasDefault: typeof prop.default === 'boolean' };
    } else if (type === 'number' || type === 'integer') {
      field = {
        ...base,
        kind: type,
        minimum: num(prop.minimum),
        maximum: num(prop.maximum),
        exclusiveMinimum: num(prop.exclusiveMinimum),
        exclusiveMaximum: num(prop.exclusiveMaximum),
        defaultValue: num(prop.default) !== undefined || prop.default instanceof ExactInteger ? String(prop.default) : '',
      };
    } else if (type === 'string' || type === undefined) {
      const options = singleOptions(prop);
      if (options) {
        const def = options.find((o) => o.value === prop.default);
        field = { ...base, kind: 'select', options, defaultValue: def ? def.value : null };
      } else if (type === 'string') {
        const kind = STRING_FORMATS[prop.format] || 'text';
        let def = typeof prop.default === 'string' ? prop.default : '';
        if (kind === 'date-time' && def) def = isoToLocalInput(def);
        field = {
          ...base,
          kind,
          minLength: num(prop.minLength),
          maxLength: num(prop.maxLength),
          pattern: typeof prop.pattern === 'string' ? prop.pattern : undefined,
          defaultValue: def,
        };
        if (kind === 'text' && isSecretName(name)) field.secret = true;
      }
    }
    if (!field) {
      // Outside the elicitation subset: still answerable, as JSON typed by the human.
      field = {
        ...base,
        kind: 'json',
        defaultValue: prop.default !== undefined ? stringifyJson(prop.default, 2) : '',
      };
    }
    fields.push(field);
  }
  return { fields };
}

/** Raw starting values: each field's default. */
export function initialValues(fields) {
  const values = {};
  for (const f of fields) values[f.name] = Array.isArray(f.defaultValue) ? [...f.defaultValue] : f.defaultValue;
  return values;
}

function codePoints(s) {
  return [...s].length;
}

const EMAIL_RE = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})$/;
const LOCAL_DT_RE = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?$/;

function validDate(y, m, d) {
  const dt = new Date(Date.UTC(y, m - 1, d));
  return dt.getUTCFullYear() === y && dt.getUTCMonth() === m - 1 && dt.getUTCDate() === d;
}

function isEmpty(field, v) {
  if (field.kind === 'boolean') return typeof v !== 'boolean';
  if (field.kind === 'select') return v === null || v === undefined;
  if (field.kind === 'multiselect') return !Array.isArray(v) || v.length === 0;
  return v === undefined || v === null || String(v).trim() === '';
}

function plural(n, word) {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** The problem with one field's raw value, or null. */
export function validateField(field, v) {
  if (isEmpty(field, v)) {
    if (!field.required) return null;
    switch (field.kind) {
      case 'select':
        return 'Choose an option.';
      case 'multiselect':
        return 'Choose at least one option.';
      case 'boolean':
        return 'Answer yes or no.';
      default:
        return 'This field is required.';
    }
  }
  switch (field.kind) {
    case 'text':
    case 'email':
    case 'uri':
    case 'date':
    case 'date-time': {
      const s = String(v);
      const n = codePoints(s);
      if (field.minLength !== undefined && n < field.minLength) {
        return `Enter at least ${plural(field.minLength, 'character')} (now ${n}).`;
      }
      if (field.maxLength !== undefined && n > field.maxLength) {
        return `Enter at most ${plural(field.maxLength, 'character')} (now ${n}).`;
      }
      if (field.kind === 'email' && !EMAIL_RE.test(s)) return 'Enter an email address, like name@example.com.';
      if (field.kind === 'uri' && !isAbsoluteUri(s)) return 'Enter a full address, like https://example.com/page.';
      if (field.kind === 'date') {
        const m = DATE_RE.exec(s);
        if (!m || !validDate(+m[1], +m[2], +m[3])) return 'Enter a date as YYYY-MM-DD.';
      }
      if (field.kind === 'date-time') {
        const m = LOCAL_DT_RE.exec(s);
        if (!m || !validDate(+m[1], +m[2], +m[3]) || +m[4] > 23 || +m[5] > 59 || (m[6] !== undefined && +m[6] > 59)) {
          return 'Enter a date and time.';
        }
      }
      if (field.pattern !== undefined) {
        let re = null;
        try {
          re = new RegExp(field.pattern, 'u');
        } catch {
          re = null; // an invalid pattern from the agent is not the human's problem
        }
        if (re && !re.test(s)) return `Must match the pattern ${field.pattern}.`;
      }
      return null;
    }
    case 'number':
    case 'integer': {
      const s = String(v).trim();
      const n = Number(s);
      if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(s) || !Number.isFinite(n)) {
        return field.kind === 'integer' ? 'Enter a whole number.' : 'Enter a number.';
      }
      if (field.kind === 'integer' && !Number.isInteger(n)) return 'Enter a whole number.';
      if (field.minimum !== undefined && n < field.minimum) return `Must be at least ${field.minimum}.`;
      if (field.maximum !== undefined && n > field.maximum) return `Must be at most ${field.maximum}.`;
      if (field.exclusiveMinimum !== undefined && n <= field.exclusiveMinimum) {
        return `Must be more than ${field.exclusiveMinimum}.`;
      }
      if (field.exclusiveMaximum !== undefined && n >= field.exclusiveMaximum) {
        return `Must be less than ${field.exclusiveMaximum}.`;
      }
      return null;
    }
    case 'boolean':
      return null;
    case 'select':
      return field.options.some((o) => o.value === v) ? null : 'Choose one of the listed options.';
    case 'multiselect': {
      if (!v.every((x) => field.options.some((o) => o.value === x))) return 'Choose only listed options.';
      if (field.minItems !== undefined && v.length < field.minItems) return `Choose at least ${field.minItems}.`;
      if (field.maxItems !== undefined && v.length > field.maxItems) return `Choose at most ${field.maxItems}.`;
      return null;
    }
    case 'json': {
      try {
        parseJson(String(v));
        return null;
      } catch {
        return 'Enter valid JSON.';
      }
    }
    default:
      return null;
  }
}

/**
 * Validates every field.
 * @returns {Record<string, string>} field name → message; empty when the form may be sent
 */
export function validateForm(fields, values) {
  const errors = {};
  for (const f of fields) {
    const msg = validateField(f, values[f.name]);
    if (msg) errors[f.name] = msg;
  }
  return errors;
}

/** The most characters of a reason the server keeps (it cuts longer ones): every reason box's maxlength. */
export const REASON_MAX_CHARS = 2000;

/** Whether the form has a field named `reason` of its own (then the page adds no decline reason box). */
export function hasOwnReason(fields) {
  return fields.some((f) => f.name === 'reason');
}

/**
 * What a Decline sends as `content`: `{reason}` when the form has a text field named `reason`
 * (an approval's "Reason, if you decline", passed on to the agent) and the human typed one;
 * a form without a `reason` field of its own sends `declineReason` (what was typed in the
 * decline reason box the page adds: the engine keeps a string `reason` of any decline and the
 * agent reads it); otherwise undefined (a decline carries nothing else).
 */
export function declineContent(fields, values, declineReason = '') {
  const field = fields.find((f) => f.name === 'reason' && f.kind === 'text');
  const typed = field ? values.reason : hasOwnReason(fields) ? '' : declineReason;
  const reason = String(typed ?? '').trim();
  return reason ? { reason } : undefined;
}

/**
 * The line under an answer form's buttons: what Decline and Cancel do. An approval question
 * (`approval`: its `_meta["taskdeck/approval"]`), whose Decline reads "Deny", is ended by
 * either: the call is denied and does not run, so its Cancel is no "without an answer".
 */
export function answerHelp(fields, approval) {
  const asksReason = Boolean(declineContent(fields, { reason: '-' }, '-'));
  if (approval) return `Deny denies the call${asksReason ? ', with your reason if you typed one' : ''}: it does not run.`;
  return `${asksReason ? 'Decline answers “no”, with your reason if you typed one.' : 'Decline answers “no”.'} Dismiss leaves the question without an answer.`;
}

/** What answer `action` ('accept', 'decline', 'cancel') did, in words. An approval (`approval`:
 *  its `_meta["taskdeck/approval"]`) reads as its buttons do: approved, or denied, which a
 *  `cancel` sent by another client does too (the call does not run); another question's
 *  `cancel` (its form's Dismiss) dismissed it. */
export function answerVerb(action, approval) {
  if (approval) return action === 'accept' ? 'approved' : 'denied';
  if (action === 'accept') return 'accepted';
  return action === 'decline' ? 'declined' : 'dismissed';
}

/**
 * The `content` object for an accepted answer: typed values, empty optional fields left out.
 * Call after validateForm() found nothing.
 */
export function toContent(fields, values) {
  const out = {};
  for (const f of fields) {
    const v = values[f.name];
    if (isEmpty(f, v)) continue;
    switch (f.kind) {
      case 'number':
      case 'integer':
        // A whole number past 2^53 keeps its digits (exact-json.js).
        out[f.name] = integerValue(String(v));
        break;
      case 'boolean':
        out[f.name] = v;
        break;
      case 'select':
        out[f.name] = v;
        break;
      case 'multiselect':
        // In the order the options are listed, whatever order they were ticked in.
        out[f.name] = f.options.filter((o) => v.includes(o.value)).map((o) => o.value);
        break;
      case 'date-time':
        out[f.name] = localInputToIso(String(v));
        break;
      case 'json':
        out[f.name] = parseJson(String(v));
        break;
      default:
        out[f.name] = String(v);
    }
  }
  return out;
}

/** True for an absolute URI with a scheme (what format "uri" asks for). */
export function isAbsoluteUri(s) {
  if (!/^[A-Za-z][A-Za-z0-9+.-]*:\S+$/.test(s)) return false;
  try {
    new URL(s);
    return true;
  } catch {
    return false;
  }
}

function pad(n, w = 2) {
  return String(n).padStart(w, '0');
}

/** "2026-01-02T03:04" (local time, what <input type=datetime-local> holds) → RFC 3339 UTC. */
export function localInputToIso(s) {
  const m = LOCAL_DT_RE.exec(s);
  if (!m) return s;
  const d = new Date(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], m[6] ? +m[6] : 0);
  return d.toISOString();
}

/** RFC 3339 → "YYYY-MM-DDTHH:MM[:SS]" in local time, for a datetime-local input. */
export function isoToLocalInput(iso) {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  const base = `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
  return d.getSeconds() ? `${base}:${pad(d.getSeconds())}` : base;
}
