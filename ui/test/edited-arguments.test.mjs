// Edited arguments of an approval: JSON syntax, the inputSchema checks the page makes, and the
// tool's form for a flat schema.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseEdited, validateArguments, checkEdited, errorText, formFields, formValues, formArguments, isUnsentEdit, editorText, approvalFormValues, approvalContent } from '../js/edited-arguments.js';
import { validateForm, describeForm, initialValues, toContent } from '../js/form-schema.js';

const runCommand = {
  type: 'object',
  properties: {
    command: { type: 'string', minLength: 1 },
    cwd: { type: ['string', 'null'] },
    timeoutMs: { type: 'integer', minimum: 1 },
    shell: { type: 'boolean' },
  },
  required: ['command'],
  additionalProperties: false,
};

test('the editor holds a JSON object; anything else says why', () => {
  assert.deepEqual(parseEdited('{"a": 1}'), { value: { a: 1 } });
  const bad = parseEdited('{"a": ');
  assert.equal(bad.error.path, '');
  assert.match(bad.error.message, /^Not valid JSON: /);
  assert.deepEqual(parseEdited('[1]'), { error: { path: '', message: 'The arguments must be a JSON object ({…}).' } });
  assert.deepEqual(parseEdited('null'), { error: { path: '', message: 'The arguments must be a JSON object ({…}).' } });
});

test('the schema checks name each problem by its JSON Pointer', () => {
  assert.deepEqual(validateArguments({ command: 'ls', cwd: null, timeoutMs: 5 }, runCommand), []);
  assert.deepEqual(validateArguments({ cwd: 3, timeoutMs: 1.5, extra: true }, runCommand), [
    { path: '/command', message: 'Required.' },
    { path: '/cwd', message: 'Expected string or null, found integer.' },
    { path: '/timeoutMs', message: 'Expected integer, found number.' },
    { path: '/extra', message: 'Not an argument of this tool.' },
  ]);
  assert.deepEqual(validateArguments({ command: '', timeoutMs: 0 }, runCommand), [
    { path: '/command', message: 'Must be at least 1 characters long.' },
    { path: '/timeoutMs', message: 'Must be at least 1.' },
  ]);
  const nested = { type: 'object', properties: { list: { type: 'array', maxItems: 2, items: { enum: ['a', 'b'] } }, 'a/b': { type: 'string', pattern: '^x' } } };
  assert.deepEqual(validateArguments({ list: ['a', 'c', 'b'], 'a/b': 'y' }, nested), [
    { path: '/list', message: 'Must have at most 2 items.' },
    { path: '/list/1', message: 'Must be one of "a", "b".' },
    { path: '/a~1b', message: 'Must match the pattern ^x.' },
  ]);
  assert.deepEqual(validateArguments({ anything: 1 }, null), [], 'no schema known: the server decides');
  assert.deepEqual(validateArguments(5, { type: 'number', exclusiveMaximum: 5 }), [{ path: '', message: 'Must be less than 5.' }]);
});

test('checkEdited gives the value only when nothing is wrong', () => {
  assert.deepEqual(checkEdited('{"command": "ls -l"}', runCommand), { value: { command: 'ls -l' }, errors: [] });
  assert.deepEqual(checkEdited('{}', runCommand), { errors: [{ path: '/command', message: 'Required.' }] });
  assert.equal(checkEdited('{', runCommand).value, undefined);
  assert.equal(errorText({ path: '/env/a~1b', message: 'Required.' }), 'env.a/b: Required.');
  assert.equal(errorText({ path: '', message: 'Not valid JSON' }), 'Not valid JSON');
});

test('a flat schema of simple fields gets the tool’s form; others keep the JSON editor', () => {
  const flat = { type: 'object', properties: { command: { type: 'string' }, timeoutMs: { type: 'integer' }, shell: { type: 'boolean' }, mode: { enum: ['fast', 'slow'] } }, required: ['command'] };
  const fields = formFields(flat);
  assert.deepEqual(fields.map((f) => [f.name, f.kind]), [['command', 'text'], ['timeoutMs', 'integer'], ['shell', 'boolean'], ['mode', 'select']]);
  assert.equal(formFields({ type: 'object', properties: { env: { type: 'object' } } }), null, 'an object field');
  assert.equal(formFields({ type: 'object', properties: {} }), null);
  assert.equal(formFields(null), null);
  assert.equal(formFields({ type: 'string' }), null);

  const args = { command: 'rm -rf build', timeoutMs: 500, extra: [1] };
  const values = formValues(fields, args);
  assert.deepEqual(values, { command: 'rm -rf build', timeoutMs: '500', shell: false, mode: null });
  values.command = 'rm -rf build/tmp';
  values.timeoutMs = '1000';
  assert.deepEqual(validateForm(fields, values), {});
  assert.deepEqual(formArguments(fields, values, args), { extra: [1], command: 'rm -rf build/tmp', timeoutMs: 1000 });
  values.shell = true;
  assert.equal(formArguments(fields, values, args).shell, true);
});

test('an edit not sent is text that is not the call as asked; layout alone is none', () => {
  const asked = { command: 'echo hi', env: { A: '1' } };
  assert.equal(isUnsentEdit(JSON.stringify(asked, null, 2), asked), false);
  assert.equal(isUnsentEdit('{"env":{"A":"1"},   "command":"echo hi"}\n', asked), false, 'spaces and key order');
  assert.equal(isUnsentEdit('{"command": "echo bye", "env": {"A": "1"}}', asked), true);
  assert.equal(isUnsentEdit('{"command": "echo hi"}', asked), true, 'a key removed');
  assert.equal(isUnsentEdit('{"command": ', asked), true, 'half-typed JSON');
  assert.equal(isUnsentEdit('{}', undefined), false, 'a call without arguments');
});

test('the detail pane’s "Edited arguments" field starts as the queue’s editor does, and an unchanged one approves as asked', () => {
  const { fields } = describeForm({
    type: 'object',
    properties: {
      reason: { type: 'string', title: 'Reason, if you decline' },
      arguments: { type: 'string', title: 'Edited arguments (JSON object), to approve a changed call' },
    },
  });
  const meta = { server: 'taskdeck', tool: 'run_command', arguments: { argv: ['echo', 'safe\u202etxt.sh'], cwd: '/tmp', env: { TOKEN: '[redacted]' } }, editable: true };
  const values = approvalFormValues(meta, fields, initialValues(fields));
  // The same text as the queue's editor: pretty-printed, what reorders text written out.
  assert.equal(values.arguments, editorText(meta.arguments));
  assert.equal(values.arguments, '{\n  "argv": [\n    "echo",\n    "safe\\u202etxt.sh"\n  ],\n  "cwd": "/tmp",\n  "env": {\n    "TOKEN": "[redacted]"\n  }\n}');
  assert.equal(values.reason, initialValues(fields).reason, 'the other fields as they were');
  // Accepted untouched: the call as asked (its masked credential is not sent back as an edit).
  assert.deepEqual(approvalContent(meta, toContent(fields, values)), {});
  assert.deepEqual(approvalContent(meta, toContent(fields, { ...values, arguments: '{"cwd":"/tmp","env":{"TOKEN":"[redacted]"},"argv":["echo","safe\u202etxt.sh"]}' })), {}, 'layout alone is no edit');
  const edit = '{"argv": ["echo", "other"], "cwd": "/tmp"}';
  assert.deepEqual(approvalContent(meta, toContent(fields, { ...values, arguments: edit })), { arguments: edit });
  // A call that may not be edited, or a form that is no approval, starts empty and sends what it holds.
  assert.deepEqual(approvalFormValues({ ...meta, editable: false }, fields, initialValues(fields)), initialValues(fields));
  assert.deepEqual(approvalFormValues(undefined, fields, initialValues(fields)), initialValues(fields));
  assert.deepEqual(approvalContent(undefined, { arguments: editorText(meta.arguments) }), { arguments: editorText(meta.arguments) });
  // What was typed already is kept.
  assert.equal(approvalFormValues(meta, fields, { arguments: '{}' }).arguments, '{}');
});

