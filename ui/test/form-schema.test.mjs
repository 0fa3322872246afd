import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  describeForm,
  initialValues,
  validateForm,
  validateField,
  toContent,
  declineContent,
  hasOwnReason,
  answerHelp,
  answerVerb,
  REASON_MAX_CHARS,
  localInputToIso,
  isoToLocalInput,
  isAbsoluteUri,
} from '../js/form-schema.js';

const schema = {
  type: 'object',
  properties: {
    reason: { type: 'string', title: 'Reason', description: 'Why?', minLength: 3, maxLength: 10 },
    email: { type: 'string', format: 'email' },
    site: { type: 'string', format: 'uri' },
    day: { type: 'string', format: 'date', default: '2026-01-31' },
    when: { type: 'string', format: 'date-time' },
    count: { type: 'integer', minimum: 1, maximum: 5, default: 2 },
    ratio: { type: 'number', exclusiveMinimum: 0, maximum: 1 },
    ok: { type: 'boolean', title: 'Proceed?', default: true },
    color: { type: 'string', enum: ['red', 'green'], enumNames: ['Red', 'Green'] },
    size: { type: 'string', oneOf: [{ const: 's', title: 'Small' }, { const: 'l', title: 'Large' }], default: 'l' },
    tags: { type: 'array', items: { enum: ['a', 'b', 'c'] }, minItems: 1, maxItems: 2, default: ['b'] },
    envs: { type: 'array', items: { anyOf: [{ const: 'dev', title: 'Development' }, { const: 'prod', title: 'Production' }] } },
  },
  required: ['reason', 'count', 'color', 'tags'],
};

test('every field kind is described with its label, constraints, options and default', () => {
  const { fields } = describeForm(schema);
  const by = Object.fromEntries(fields.map((f) => [f.name, f]));
  assert.deepEqual(
    fields.map((f) => f.name),
    ['reason', 'email', 'site', 'day', 'when', 'count', 'ratio', 'ok', 'color', 'size', 'tags', 'envs'],
    'the schema order, required fields included',
  );
  assert.deepEqual(
    fields.map((f) => f.kind),
    ['text', 'email', 'uri', 'date', 'date-time', 'integer', 'number', 'boolean', 'select', 'select', 'multiselect', 'multiselect'],
  );
  assert.equal(by.reason.label, 'Reason');
  assert.equal(by.reason.description, 'Why?');
  assert.equal(by.reason.required, true);
  assert.equal(by.reason.minLength, 3);
  assert.equal(by.reason.maxLength, 10);
  assert.equal(by.email.label, 'email', 'falls back to the property name');
  assert.equal(by.email.required, false);
  assert.equal(by.day.defaultValue, '2026-01-31');
  assert.equal(by.count.minimum, 1);
  assert.equal(by.count.maximum, 5);
  assert.equal(by.count.defaultValue, '2');
  assert.equal(by.ratio.exclusiveMinimum, 0);
  assert.equal(by.ok.defaultValue, true);
  assert.equal(by.ok.label, 'Proceed?');
  assert.deepEqual(by.color.options, [{ value: 'red', label: 'Red' }, { value: 'green', label: 'Green' }]);
  assert.equal(by.color.defaultValue, null);
  assert.deepEqual(by.size.options, [{ value: 's', label: 'Small' }, { value: 'l', label: 'Large' }]);
  assert.equal(by.size.defaultValue, 'l');
  assert.deepEqual(by.tags.options.map((o) => o.value), ['a', 'b', 'c']);
  assert.deepEqual(by.tags.defaultValue, ['b']);
  assert.equal(by.tags.minItems, 1);
  assert.equal(by.tags.maxItems, 2);
  assert.deepEqual(by.envs.options, [{ value: 'dev', label: 'Development' }, { value: 'prod', label: 'Production' }]);
});

test('an empty or missing schema is a form with no fields; unknown shapes become JSON fields', () => {
  assert.deepEqual(describeForm({ type: 'object', properties: {} }).fields, []);
  assert.deepEqual(describeForm(undefined).fields, []);
  const { fields } = describeForm({ type: 'object', properties: { cfg: { type: 'object', default: { a: 1 } } } });
  assert.equal(fields[0].kind, 'json');
  assert.equal(validateField(fields[0], '{"a": 2}'), null);
  assert.equal(validateField(fields[0], '{nope'), 'Enter valid JSON.');
  assert.deepEqual(toContent(fields, { cfg: '{"a": 2}' }), { cfg: { a: 2 } });
});

test('initial values are the defaults; a fresh form reports the required fields', () => {
  const { fields } = describeForm(schema);
  const values = initialValues(fields);
  assert.equal(values.reason, '');
  assert.equal(values.ok, true);
  assert.deepEqual(values.tags, ['b']);
  const errors = validateForm(fields, values);
  assert.deepEqual(errors, { reason: 'This field is required.', color: 'Choose an option.' });
});

test('string length, email, uri, date and date-time messages', () => {
  const { fields } = describeForm(schema);
  const f = Object.fromEntries(fields.map((x) => [x.name, x]));
  assert.equal(validateField(f.reason, 'no'), 'Enter at least 3 characters (now 2).');
  assert.equal(validateField(f.reason, 'way too long!'), 'Enter at most 10 characters (now 13).');
  assert.equal(validateField(f.reason, '🎉🎉🎉'), null, 'length counts characters, not UTF-16 units');
  assert.equal(validateField(f.reason, '   '), 'This field is required.', 'blank counts as empty');
  assert.equal(validateField(f.email, 'bob'), 'Enter an email address, like name@example.com.');
  assert.equal(validateField(f.email, 'bob@example.com'), null);
  assert.equal(validateField(f.email, ''), null, 'optional and empty is fine');
  assert.equal(validateField(f.site, 'example.com'), 'Enter a full address, like https://example.com/page.');
  assert.equal(validateField(f.site, 'https://example.com/x?y=1'), null);
  assert.equal(validateField(f.day, '2026-02-30'), 'Enter a date as YYYY-MM-DD.');
  assert.equal(validateField(f.day, '2026-02-28'), null);
  assert.equal(validateField(f.when, '2026-02-28T25:00'), 'Enter a date and time.');
  assert.equal(validateField(f.when, '2026-02-28T13:45'), null);
});

test('number and integer messages', () => {
  const { fields } = describeForm(schema);
  const f = Object.fromEntries(fields.map((x) => [x.name, x]));
  assert.equal(validateField(f.count, 'abc'), 'Enter a whole number.');
  assert.equal(validateField(f.count, '2.5'), 'Enter a whole number.');
  assert.equal(validateField(f.count, '0'), 'Must be at least 1.');
  assert.equal(validateField(f.count, '6'), 'Must be at most 5.');
  assert.equal(validateField(f.count, '5'), null);
  assert.equal(validateField(f.ratio, '1e400'), 'Enter a number.');
  assert.equal(validateField(f.ratio, '0'), 'Must be more than 0.');
  assert.equal(validateField(f.ratio, '.5'), null);
  assert.equal(validateField(f.ratio, '1.5'), 'Must be at most 1.');
});

test('select and multi-select messages', () => {
  const { fields } = describeForm(schema);
  const f = Object.fromEntries(fields.map((x) => [x.name, x]));
  assert.equal(validateField(f.color, 'blue'), 'Choose one of the listed options.');
  assert.equal(validateField(f.color, 'red'), null);
  assert.equal(validateField(f.size, null), null, 'optional select may stay empty');
  assert.equal(validateField(f.tags, []), 'Choose at least one option.');
  assert.equal(validateField(f.tags, ['a', 'b', 'c']), 'Choose at most 2.');
  assert.equal(validateField(f.tags, ['z']), 'Choose only listed options.');
  assert.equal(validateField(f.envs, []), null);
  const min2 = describeForm({ type: 'object', properties: { t: { type: 'array', items: { enum: ['x', 'y', 'z'] }, minItems: 2 } } }).fields[0];
  assert.equal(validateField(min2, ['x']), 'Choose at least 2.');
});

test('toContent types the values and leaves empty optional fields out', () => {
  const { fields } = describeForm(schema);
  const values = {
    ...initialValues(fields),
    reason: 'because',
    email: '',
    site: 'https://example.com',
    count: ' 3 ',
    ratio: '0.25',
    ok: false,
    color: 'green',
    tags: ['c', 'a'],
    when: '',
  };
  assert.deepEqual(validateForm(fields, values), {});
  assert.deepEqual(toContent(fields, values), {
    reason: 'because',
    site: 'https://example.com',
    day: '2026-01-31',
    count: 3,
    ratio: 0.25,
    ok: false,
    color: 'green',
    size: 'l',
    tags: ['a', 'c'],
  });
});

test('date-time goes out as RFC 3339 and defaults come back as local input values', () => {
  const iso = localInputToIso('2026-03-04T05:06');
  assert.match(iso, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  assert.equal(isoToLocalInput(iso), '2026-03-04T05:06');
  const { fields } = describeForm({ type: 'object', properties: { at: { type: 'string', format: 'date-time', default: iso } } });
  assert.equal(fields[0].defaultValue, '2026-03-04T05:06');
  assert.deepEqual(toContent(fields, { at: '2026-03-04T05:06' }), { at: iso });
});

test('pattern is checked; an invalid pattern from the agent is ignored', () => {
  const [f] = describeForm({ type: 'object', properties: { code: { type: 'string', pattern: '^[A-Z]{3}$' } } }).fields;
  assert.equal(validateField(f, 'abc'), 'Must match the pattern ^[A-Z]{3}$.');
  assert.equal(validateField(f, 'ABC'), null);
  const [g] = describeForm({ type: 'object', properties: { code: { type: 'string', pattern: '([' } } }).fields;
  assert.equal(validateField(g, 'anything'), null);
});

test('a required boolean accepts false; uri needs a scheme', () => {
  const [b] = describeForm({ type: 'object', properties: { confirm: { type: 'boolean' } }, required: ['confirm'] }).fields;
  assert.equal(validateField(b, false), null);
  assert.deepEqual(toContent([b], { confirm: false }), { confirm: false });
  assert.equal(isAbsoluteUri('mailto:a@b.c'), true);
  assert.equal(isAbsoluteUri('/relative'), false);
  assert.equal(isAbsoluteUri('http://'), false);
});

test('a decline carries the reason an approval form asks for, and nothing else', () => {
  const { fields: approval } = describeForm({
    type: 'object',
    properties: {
      alwaysAllow: { type: 'boolean', title: 'Always allow', default: false },
      reason: { type: 'string', title: 'Reason, if you decline' },
    },
  });
  assert.deepEqual(declineContent(approval, { alwaysAllow: true, reason: '  not on prod ' }), { reason: 'not on prod' });
  assert.equal(declineContent(approval, { alwaysAllow: false, reason: '   ' }), undefined);
  const { fields: other } = describeForm({ type: 'object', properties: { note: { type: 'string' } } });
  assert.equal(declineContent(other, { note: 'x' }), undefined);
});

test('a form without a reason field of its own declines with the reason typed in the page’s box; one with its own keeps it', () => {
  const { fields: none } = describeForm({ type: 'object', properties: {} });
  assert.equal(hasOwnReason(none), false);
  assert.deepEqual(declineContent(none, {}, '  wrong branch '), { reason: 'wrong branch' });
  assert.equal(declineContent(none, {}, '   '), undefined, 'nothing typed: a bare decline');
  assert.equal(declineContent(none, {}), undefined);
  const { fields: note } = describeForm({ type: 'object', properties: { note: { type: 'string' } } });
  assert.deepEqual(declineContent(note, { note: 'x' }, 'not now'), { reason: 'not now' }, 'other fields are not sent with a decline');
  // The form's own reason field is the reason: the box is not shown, and what it would hold is ignored.
  const { fields: own } = describeForm({ type: 'object', properties: { reason: { type: 'string', title: 'Reason, if you decline' } } });
  assert.equal(hasOwnReason(own), true);
  assert.deepEqual(declineContent(own, { reason: 'mine' }, 'box'), { reason: 'mine' });
  assert.equal(declineContent(own, { reason: '' }, 'box'), undefined);
  const { fields: choice } = describeForm({ type: 'object', properties: { reason: { type: 'string', enum: ['a', 'b'] } } });
  assert.equal(hasOwnReason(choice), true);
  assert.equal(declineContent(choice, { reason: 'a' }, 'box'), undefined, 'a reason that is a choice is no text to pass on');
  assert.equal(REASON_MAX_CHARS, 2000, 'what the server keeps of a reason');
});

test('two choices with the same label are told apart by their values', () => {
  const { fields } = describeForm({
    type: 'object',
    properties: { target: { type: 'string', enum: ['staging', 'prod', 'dev'], enumNames: ['Staging', 'Staging', 'Dev'] } },
  });
  assert.deepEqual(
    fields[0].options.map((o) => o.label),
    ['Staging (staging)', 'Staging (prod)', 'Dev'],
  );
});

test('an approval’s form says that Deny denies the call; another question’s Dismiss leaves it unanswered', () => {
  const { fields: approval } = describeForm({
    type: 'object',
    properties: {
      reason: { type: 'string', title: 'Reason, if you decline' },
      arguments: { type: 'string', title: 'Edited arguments (JSON object), to approve a changed call' },
    },
  });
  const meta = { server: 'taskdeck', tool: 'run_command', arguments: { argv: ['seq', '1', '300000'] }, editable: true };
  const help = answerHelp(approval, meta);
  assert.equal(help, 'Deny denies the call, with your reason if you typed one: it does not run.');
  assert.doesNotMatch(help, /without an answer/);
  assert.equal(answerVerb('cancel', meta), 'denied');
  assert.equal(answerVerb('decline', meta), 'denied');
  assert.equal(answerVerb('accept', meta), 'approved');
  // A request_approval question (no call behind it): Dismiss leaves it unanswered.
  const { fields: question } = describeForm({ type: 'object', properties: {} });
  assert.equal(answerHelp(question, undefined), 'Decline answers “no”, with your reason if you typed one. Dismiss leaves the question without an answer.');
  assert.equal(answerVerb('cancel', undefined), 'dismissed');
  assert.equal(answerVerb('decline', undefined), 'declined');
  assert.equal(answerVerb('accept', undefined), 'accepted');
});


test('a field whose name says it holds a credential is a secret, by the server’s rule', async () => {
  const { isSecretName } = await import('../js/form-schema.js');
  for (const name of ['api_password', 'password', 'token', 'GITHUB_TOKEN', 'client_secret', 'passphrase', 'db-credential', 'Authorization', 'auth', 'session_id', 'cookie', 'private_key', 'bearer', 'api_key', 'API_KEYS', 'ssh-key', 'db_pwd', 'user_pw', 'card_pin', 'pin', 'pw', 'aws_access_key_id', 'jwt', 'sentry_dsn']) {
    assert.equal(isSecretName(name), true, name);
  }
  for (const name of ['user', 'author', 'authority', 'reason', 'token_type', 'auth_mode', 'password_file', 'token_ttl', 'auth_url', 'pwd', 'OLDPWD', 'keyboard', 'monkey_count', 'GIT_ASKPASS', 'ssh_newkey', 'spinner']) {
    assert.equal(isSecretName(name), false, name);
  }
});

test('a secret text field is marked secret; other kinds and names are not', async () => {
  const { describeForm } = await import('../js/form-schema.js');
  const { fields } = describeForm({
    type: 'object',
    properties: {
      api_password: { type: 'string' },
      user: { type: 'string' },
      token_email: { type: 'string', format: 'email' },
      session: { type: 'string', enum: ['a', 'b'] },
      use_auth: { type: 'boolean' },
    },
  });
  assert.deepEqual(fields.map((f) => [f.name, f.kind, Boolean(f.secret)]), [
    ['api_password', 'text', true],
    ['user', 'text', false],
    ['token_email', 'email', false],
    ['session', 'select', false],
    ['use_auth', 'boolean', false],
  ]);
});

test('an answer shown once sent hides its secrets, keeps the rest', async () => {
  const { hideSecrets, HIDDEN_SECRET } = await import('../js/form-schema.js');
  assert.deepEqual(hideSecrets({ user: 'bob', api_password: 'hunter2', pin: 1234, use_auth: true, token: '', note: 'x' }), { user: 'bob', api_password: HIDDEN_SECRET, pin: HIDDEN_SECRET, use_auth: true, token: '', note: 'x' });
  assert.equal(HIDDEN_SECRET, '[redacted]');
  assert.equal(hideSecrets(undefined), undefined);
  assert.deepEqual(hideSecrets(['a']), ['a']);
});

test('an answer’s secret values are found by their field names and written out nowhere', async () => {
  const { answeredSecrets, withoutSecrets } = await import('../js/form-schema.js');
  const result = {
    content: [{ type: 'text', text: 'Accepted: {"env":"prod","api_token":"[redacted]"}\nSecret fields, as typed: {"api_token":"s3\\"cr3t"}' }],
    structuredContent: { action: 'accept', content: { env: 'prod', api_token: 's3"cr3t', pin: '12', note: 'token of thanks' } },
  };
  // The PIN is too short to hide without hiding every "12"; a field not named as a secret is no secret.
  assert.deepEqual(answeredSecrets(result), ['s3"cr3t']);
  const shown = withoutSecrets(result, answeredSecrets(result));
  assert.equal(shown.structuredContent.content.api_token, '[redacted]');
  assert.equal(shown.structuredContent.content.note, 'token of thanks');
  assert.doesNotMatch(JSON.stringify(shown), /cr3t/);
  // Not an answer (a tool's own structured content): nothing is taken for a secret.
  assert.deepEqual(answeredSecrets({ structuredContent: { content: { api_token: 'x'.repeat(9) } } }), []);
});
