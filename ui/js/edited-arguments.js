// Edited arguments of an approval: the JSON a human typed, checked in the page for syntax and,
// as far as is practical here, against the tool's inputSchema (the server checks again and
// answers 422 with the same `{path, message}` errors); and, when the schema is a flat object
// of simple fields, the tool's form instead of JSON (form-schema.js, as for elicitation). The
// queue's editor (approval-card.js) and the detail pane's "Edited arguments" field of the same
// question (prompt-form.js) both start from the call as asked and send only a real edit. No DOM.

import { describeForm, toContent, isoToLocalInput } from './form-schema.js';
import { jsonEqual } from './json-diff.js';
import { prettyJson } from './format.js';
import { ExactInteger, LARGEST_EXACT, SMALLEST_EXACT, parseJson, pastExact, stringifyJson } from './exact-json.js';

/** @typedef {{path: string, message: string}} ArgumentError  `path`: JSON Pointer ("" = the whole value). */

/**
 * Parses the editor's text. The arguments of a tool call are a JSON object.
 * @returns {{value: object} | {error: ArgumentError}}
 */
export function parseEdited(text) {
  let value;
  try {
    value = parseJson(text);
  } catch (err) {
    return { error: { path: '', message: `Not valid JSON: ${err && err.message ? err.message : err}` } };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return { error: { path: '', message: 'The arguments must be a JSON object ({…}).' } };
  return { value };
}

const pointer = (base, key) => `${base}/${String(key).replace(/~/g, '~0').replace(/\//g, '~1')}`;

function typeOf(v) {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  if (v instanceof ExactInteger) return 'integer';
  return typeof v;
}

function typeMatches(want, v) {
  const got = typeOf(v);
  return want === got || (want === 'number' && got === 'integer');
}

/**
 * Checks `value` against `schema`: type, required, properties, additionalProperties: false,
 * enum, const, minimum/maximum (and exclusive), minLength/maxLength, pattern, items,
 * minItems/maxItems. `$ref`, `allOf`/`anyOf`/`oneOf` and formats are left to the server.
 * @returns {ArgumentError[]} empty when nothing was found
 */
export function validateArguments(value, schema, path = '') {
  if (!schema || typeof schema !== 'object') return [];
  const errors = [];
  const add = (message) => errors.push({ path, message });
  const types = Array.isArray(schema.type) ? schema.type : typeof schema.type === 'string' ? [schema.type] : null;
  if (types && !types.some((t) => typeMatches(t, value))) {
    add(`Expected ${types.join(' or ')}, found ${typeOf(value)}.`);
    return errors;
  }
  if (Array.isArray(schema.enum) && !schema.enum.some((e) => stringifyJson(e) === stringifyJson(value))) add(`Must be one of ${schema.enum.map((e) => stringifyJson(e)).join(', ')}.`);
  if ('const' in schema && stringifyJson(schema.const) !== stringifyJson(value)) add(`Must be ${stringifyJson(schema.const)}.`);
  // An ExactInteger compares as its nearest number, close enough for a bound the server checks again.
  if (typeof value === 'number' || value instanceof ExactInteger) {
    if (typeof schema.minimum === 'number' && value < schema.minimum) add(`Must be at least ${schema.minimum}.`);
    if (typeof schema.maximum === 'number' && value > schema.maximum) add(`Must be at most ${schema.maximum}.`);
    if (typeof schema.exclusiveMinimum === 'number' && value <= schema.exclusiveMinimum) add(`Must be more than ${schema.exclusiveMinimum}.`);
    if (typeof schema.exclusiveMaximum === 'number' && value >= schema.exclusiveMaximum) add(`Must be less than ${schema.exclusiveMaximum}.`);
  }
  if (typeof value === 'string') {
    const n = [...value].length;
    if (typeof schema.minLength === 'number' && n < schema.minLength) add(`Must be at least ${schema.minLength} characters long.`);
    if (typeof schema.maxLength === 'number' && n > schema.maxLength) add(`Must be at most ${schema.maxLength} characters long.`);
    if (typeof schema.pattern === 'string') {
      let re = null;
      try {
        re = new RegExp(schema.pattern, 'u');
      } catch {
        re = null; // a pattern this browser cannot read is left to the server
      }
      if (re && !re.test(value)) add(`Must match the pattern ${schema.pattern}.`);
    }
  }
  if (Array.isArray(value)) {
    if (typeof schema.minItems === 'number' && value.length < schema.minItems) add(`Must have at least ${schema.minItems} items.`);
    if (typeof schema.maxItems === 'number' && value.length > schema.maxItems) add(`Must have at most ${schema.maxItems} items.`);
    if (schema.items && typeof schema.items === 'object' && !Array.isArray(schema.items)) value.forEach((v, i) => errors.push(...validateArguments(v, schema.items, pointer(path, i))));
  }
  if (typeOf(value) === 'object') {
    const props = schema.properties && typeof schema.properties === 'object' ? schema.properties : {};
    for (const name of Array.isArray(schema.required) ? schema.required : []) {
      if (!Object.hasOwn(value, name)) errors.push({ path: pointer(path, name), message: 'Required.' });
    }
    for (const [name, v] of Object.entries(value)) {
      if (Object.hasOwn(props, name)) errors.push(...validateArguments(v, props[name], pointer(path, name)));
      else if (schema.additionalProperties === false) errors.push({ path: pointer(path, name), message: 'Not an argument of this tool.' });
      else if (schema.additionalProperties && typeof schema.additionalProperties === 'object') errors.push(...validateArguments(v, schema.additionalProperties, pointer(path, name)));
    }
  }
  return errors;
}

/**
 * Checks the editor's text: JSON syntax, then the schema (`null`: none known).
 * @returns {{value?: object, errors: ArgumentError[]}} `value` only when there are no errors
 */
export function checkEdited(text, schema) {
  const parsed = parseEdited(text);
  if (parsed.error) return { errors: [parsed.error] };
  const errors = [...inexact(parsed.value), ...validateArguments(parsed.value, schema)];
  return errors.length ? { errors } : { value: parsed.value, errors };
}

/** An error for each whole number past 64 bits in `value`: the server would keep the nearest
 *  float, not what was typed (exact-json.js). */
function inexact(value, path = '') {
  if (pastExact(value)) return [{ path, message: `${value.digits} is past the whole numbers Taskdeck keeps exactly (${SMALLEST_EXACT} to ${LARGEST_EXACT}): write it as a string, or with an exponent (1e21) for a float.` }];
  if (value === null || typeof value !== 'object' || value instanceof ExactInteger) return [];
  return Object.entries(value).flatMap(([k, v]) => inexact(v, pointer(path, k)));
}

/** "command: Required." — one error for people; the whole value has no path. */
export function errorText(e) {
  const path = e.path ? e.path.replace(/^\//, '').replace(/\//g, '.').replace(/~1/g, '/').replace(/~0/g, '~') : '';
  return path ? `${path}: ${e.message}` : e.message;
}

/**
 * The tool's form for `schema`, when it is a flat object of simple fields (strings, numbers,
 * booleans, choices: the elicitation subset); null otherwise (the JSON editor is used).
 * @returns {import('./form-schema.js').Field[] | null}
 */
export function formFields(schema) {
  if (!schema || typeof schema !== 'object' || schema.type !== 'object' || !schema.properties || typeof schema.properties !== 'object') return null;
  if (!Object.keys(schema.properties).length) return null;
  const { fields } = describeForm(schema);
  return fields.every((f) => f.kind !== 'json') ? fields : null;
}

/** The form's raw values showing `args` (the call as asked), by field kind as form-schema.js holds them. */
export function formValues(fields, args) {
  const values = {};
  for (const f of fields) {
    const v = args ? args[f.name] : undefined;
    if (f.kind === 'boolean') values[f.name] = v === true;
    else if (f.kind === 'select') values[f.name] = v === undefined ? null : v;
    else if (f.kind === 'multiselect') values[f.name] = Array.isArray(v) ? [...v] : [];
    else if (f.kind === 'date-time') values[f.name] = typeof v === 'string' ? isoToLocalInput(v) : '';
    else values[f.name] = v === undefined || v === null ? '' : String(v);
  }
  return values;
}

/**
 * The edited arguments from the form: its typed values, and any argument of `args` it has no
 * field for. An unticked checkbox for an argument the call did not have stays absent.
 */
export function formArguments(fields, values, args) {
  const out = {};
  const given = args || {};
  const named = new Set(fields.map((f) => f.name));
  for (const [k, v] of Object.entries(given)) if (!named.has(k)) out[k] = v;
  const content = toContent(fields, values);
  for (const f of fields) if (f.kind === 'boolean' && content[f.name] === false && !Object.hasOwn(given, f.name)) delete content[f.name];
  return { ...out, ...content };
}

/**
 * Whether the editor's text holds an edit not sent: it is not the call as asked (`asked`, its
 * arguments), being no JSON or another value. Layout alone (spaces, key order) is no edit.
 */
export function isUnsentEdit(text, asked) {
  let value;
  try {
    value = parseJson(text);
  } catch {
    return true;
  }
  return !jsonEqual(value, asked ?? {});
}

/**
 * The editor's text for a call's arguments as asked: pretty-printed JSON, with what hides or
 * reorders text written out (`\u202e`). Both editors of an approval start from it.
 */
export function editorText(args) {
  return prettyJson(args ?? {});
}

/**
 * The starting values of an approval question's form (the detail pane's), `values` as
 * initialValues gives them: its `arguments` field (an editable call's edited arguments, JSON
 * text) holds the call as asked, as the queue's editor does. `approval`: the question's
 * `_meta["taskdeck/approval"]` (absent: not an approval, `values` unchanged).
 */
export function approvalFormValues(approval, fields, values) {
  const field = fields.find((f) => f.name === 'arguments' && f.kind === 'text');
  if (!approval || !approval.editable || !field || (values.arguments ?? '') !== '') return values;
  return { ...values, arguments: editorText(approval.arguments) };
}

/**
 * An approval question's accepted `content` as sent: its `arguments` left out when they are
 * the call as asked (layout aside), so Accept approves the call as asked and not as an edit,
 * which would run what is shown (a credential in it is masked) instead of what was asked.
 */
export function approvalContent(approval, content) {
  if (!approval || typeof content.arguments !== 'string' || isUnsentEdit(content.arguments, approval.arguments)) return content;
  const { arguments: _asked, ...rest } = content;
  return rest;
}

