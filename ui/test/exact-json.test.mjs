import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ExactInteger, parseJson, stringifyJson, integerValue } from '../js/exact-json.js';
import { prettyJson, argsSummary, parseJsonObject } from '../js/format.js';
import { jsonEqual, jsonDiff, diffLine } from '../js/json-diff.js';
import { checkEdited, isUnsentEdit, editorText, formFields, formValues, formArguments } from '../js/edited-arguments.js';
import { hideSecrets, describeForm, initialValues, toContent } from '../js/form-schema.js';
import { createApi } from '../js/api.js';

// A Discord channel id: past 2^53, JSON.parse reads it as 1234567890123456800.
const ID = '1234567890123456789';
const CALL = `{"channel_id": ${ID}, "content": "deploy 12345678901234567 done", "n": [9007199254740991, -987654321098765432, 2.5]}`;

test('an integer past 2^53 is read with its digits and written back as them; the rest as JSON.parse has it', () => {
  assert.notEqual(String(JSON.parse(CALL).channel_id), ID, 'JSON.parse rounds it');
  const v = parseJson(CALL);
  assert.ok(v.channel_id instanceof ExactInteger);
  assert.equal(v.channel_id.digits, ID);
  assert.equal(v.content, 'deploy 12345678901234567 done', 'digits in a string stay text');
  assert.equal(v.n[0], 9007199254740991, 'the largest safe integer is a number');
  assert.equal(v.n[1].digits, '-987654321098765432');
  assert.equal(v.n[2], 2.5);
  assert.equal(stringifyJson(v), `{"channel_id":${ID},"content":"deploy 12345678901234567 done","n":[9007199254740991,-987654321098765432,2.5]}`);
  assert.equal(stringifyJson(parseJson(stringifyJson(v, 2))), stringifyJson(v), 'pretty and back');
  // Arithmetic and a plain JSON.stringify see the nearest number, as before.
  assert.equal(v.channel_id + 1, Number(ID) + 1);
  assert.ok(v.channel_id > 1e18);
  assert.equal(JSON.stringify({ id: v.channel_id }), JSON.stringify({ id: Number(ID) }));
  // Text without a long run of digits takes JSON.parse's path; the same value.
  assert.deepEqual(parseJson('{"a": [1, "b", null, true]}'), { a: [1, 'b', null, true] });
  assert.equal(stringifyJson(undefined), undefined);
  assert.equal(stringifyJson(new ExactInteger(ID)), ID);
});

test('a syntax error is JSON.parse’s, positions included, even where an integer was marked', () => {
  const bad = `{"id": ${ID},}`;
  let expected;
  try {
    JSON.parse(bad);
  } catch (e) {
    expected = e.message;
  }
  assert.throws(() => parseJson(bad), (e) => e instanceof SyntaxError && e.message === expected);
  // A string that looks like the marker stays a string.
  const tricky = `{"s": "exact-integer-abc:${ID}", "id": ${ID}}`;
  assert.equal(parseJson(tricky).s, `exact-integer-abc:${ID}`);
});

test('a number past 2^53 that is no exact integer reads as a float; past 64 bits an edit is refused', () => {
  // The server keeps a float, or an integer past 64 bits, as the nearest double, and sends it so.
  const v = parseJson('{"ratio": 1.2345678901234567e19, "huge": 1e21}');
  assert.equal(stringifyJson(v), '{"ratio":1.2345678901234567e+19,"huge":1e+21}', 'no exact-looking digits nobody sent');
  assert.equal(isUnsentEdit(editorText(v), v), false, 'approved unchanged: no edit');
  const past = checkEdited('{"id": 123456789012345678901234, "ok": 18446744073709551615, "min": -9223372036854775808}', null);
  assert.deepEqual(past.errors.map((e) => e.path), ['/id']);
  assert.match(past.errors[0].message, /^123456789012345678901234 is past the whole numbers Taskdeck keeps exactly/);
  assert.deepEqual(checkEdited('{"low": [-9223372036854775809]}', null).errors.map((e) => e.path), ['/low/0']);
});

test('typed integer text keeps its digits past 2^53', () => {
  assert.equal(integerValue(` ${ID} `).digits, ID);
  assert.equal(integerValue(`+00${ID}`).digits, ID);
  assert.equal(integerValue('-9007199254740993').digits, '-9007199254740993');
  assert.equal(integerValue('42'), 42);
  assert.equal(integerValue('2.5'), 2.5);
});

test('what the page shows of a call holds the digits the agent sent', () => {
  const call = parseJson(CALL);
  assert.match(prettyJson(call), new RegExp(`"channel_id": ${ID},`));
  assert.match(argsSummary(call), new RegExp(`channel_id: ${ID}`));
  assert.equal(parseJsonObject(CALL).channel_id.digits, ID);
  assert.equal(editorText(call), prettyJson(call));
  // A secret-named integer is hidden as any other.
  assert.deepEqual(hideSecrets({ pin_token: new ExactInteger(ID) }), { pin_token: '[redacted]' });
});

test('an edit of the last digit of a large id is an edit; layout alone is none', () => {
  const asked = parseJson(CALL);
  assert.equal(isUnsentEdit(editorText(asked), asked), false);
  assert.equal(isUnsentEdit(CALL, asked), false, 'other layout');
  const changed = CALL.replace(ID, '1234567890123456788');
  assert.equal(Number('1234567890123456788'), Number(ID), 'the two ids are one JavaScript number');
  assert.equal(isUnsentEdit(changed, asked), true);
  assert.equal(jsonEqual(parseJson(changed), asked), false);
  const diff = jsonDiff(asked, parseJson(changed));
  assert.deepEqual(diff.map((e) => e.path), ['channel_id']);
  assert.equal(diffLine(diff[0]), `~ channel_id: ${ID} → 1234567890123456788`);
  // Checked against the schema as an integer; sent as its digits.
  const schema = { type: 'object', properties: { channel_id: { type: 'integer', minimum: 0 }, content: { type: 'string' } } };
  const checked = checkEdited(changed, schema);
  assert.deepEqual(checked.errors, []);
  assert.match(stringifyJson(checked.value), /"channel_id":1234567890123456788,/);
  assert.deepEqual(checkEdited(`{"channel_id": -${ID}}`, schema).errors, [{ path: '/channel_id', message: 'Must be at least 0.' }]);
  assert.match(checkEdited(`{"channel_id": "${ID}"}`, schema).errors[0].message, /Expected integer, found string/);
});

test('a form’s large default is filled in whole', () => {
  const schema = parseJson(`{"type": "object", "properties": {"id": {"type": "integer", "default": ${ID}}, "n": {"type": "number", "default": -9223372036854775807}}}`);
  const { fields } = describeForm(schema);
  assert.deepEqual(initialValues(fields), { id: ID, n: '-9223372036854775807' });
  assert.equal(stringifyJson(toContent(fields, initialValues(fields))), `{"id":${ID},"n":-9223372036854775807}`);
});

test('the tool’s form shows a large id whole and sends it as typed', () => {
  const schema = { type: 'object', properties: { channel_id: { type: 'integer' }, content: { type: 'string' } } };
  const fields = formFields(schema);
  const asked = parseJson(`{"channel_id": ${ID}, "content": "hi"}`);
  const values = formValues(fields, asked);
  assert.equal(values.channel_id, ID);
  const sent = formArguments(fields, { ...values, content: 'hello' }, asked);
  assert.equal(stringifyJson(sent), `{"channel_id":${ID},"content":"hello"}`);
  assert.equal(jsonEqual(formArguments(fields, values, asked), asked), true, 'unchanged: the call as asked');
});

test('the API client reads answers and writes bodies without rounding', async () => {
  let sentBody;
  const fetchImpl = async (_path, init) => {
    sentBody = init.body;
    return { ok: true, status: 200, statusText: 'OK', text: async () => `{"task": {"arguments": {"channel_id": ${ID}}}}` };
  };
  const api = createApi(() => 'td_x', { fetchImpl });
  const detail = await api.getTask('t1');
  assert.equal(detail.task.arguments.channel_id.digits, ID);
  await api.decide({ items: [{ taskId: 't1', key: 'k' }], decision: 'approve', arguments: detail.task.arguments });
  assert.equal(sentBody, `{"items":[{"taskId":"t1","key":"k"}],"decision":"approve","arguments":{"channel_id":${ID}}}`);
});
