import { test } from 'node:test';
import assert from 'node:assert/strict';
import { moveRule, parseArgumentLines, ruleFromForm, describeArguments, describeTerms, createdText, ruleSummary } from '../js/policies.js';

const rules = [{ id: 'r-a' }, { id: 'r-b' }, { id: 'r-c' }];

test('moving a rule changes its place and nothing else', () => {
  assert.deepEqual(moveRule(rules, 'r-c', -1).map((r) => r.id), ['r-a', 'r-c', 'r-b']);
  assert.deepEqual(moveRule(rules, 'r-a', 1).map((r) => r.id), ['r-b', 'r-a', 'r-c']);
  assert.equal(moveRule(rules, 'r-a', -1), rules, 'the first cannot go up');
  assert.equal(moveRule(rules, 'r-c', 1), rules, 'the last cannot go down');
  assert.equal(moveRule(rules, 'r-x', 1), rules);
  assert.deepEqual(rules.map((r) => r.id), ['r-a', 'r-b', 'r-c'], 'the input is not changed');
});

test('argument lines are name=pattern, the pattern kept as typed', () => {
  assert.deepEqual(parseArgumentLines('path=/home/me/*\n\n url = http://a=b/* '), {
    arguments: { path: '/home/me/*', url: ' http://a=b/* ' },
    error: null,
  });
  assert.match(parseArgumentLines('path').error, /Line 1: write name=pattern/);
  assert.match(parseArgumentLines('=x').error, /Line 1/);
  assert.match(parseArgumentLines('a=1\na=2').error, /Line 2: a is given twice/);
});

test('the add form makes a rule, empty names meaning any', () => {
  assert.deepEqual(ruleFromForm({ principal: ' claude-code ', server: '', tool: 'write_*', argumentLines: 'path=/tmp/*', decision: 'allow', note: ' ok ' }), {
    rule: { principal: 'claude-code', server: '*', tool: 'write_*', decision: 'allow', arguments: { path: '/tmp/*' }, note: 'ok' },
    error: null,
  });
  assert.deepEqual(ruleFromForm({ decision: 'deny' }).rule, { principal: '*', server: '*', tool: '*', decision: 'deny' });
  assert.match(ruleFromForm({ decision: 'maybe' }).error, /ask, allow or deny/);
  assert.match(ruleFromForm({ decision: 'ask', argumentLines: 'nope' }).error, /name=pattern/);
});

test('what a rule shows', () => {
  assert.equal(describeArguments({ path: '/a/*', mode: '5' }), 'path = /a/*, mode = 5');
  assert.equal(describeArguments(undefined), 'any arguments');
  assert.equal(
    describeArguments({ url: 'https://ci.example/*' }, { publicOnly: true }),
    'url = https://ci.example/* (public addresses only)',
  );
  assert.equal(describeArguments({ a: 'x' }, { onlyTheseArguments: true }), 'a = x, and no other');
  assert.equal(createdText(undefined), '');
  // As every time the page shows (formatTimestamp): local "YYYY-MM-DD HH:MM:SS".
  const at = new Date(2026, 11, 6, 1, 30, 33).getTime();
  assert.equal(createdText(at), '2026-12-06 01:30:33');
  assert.equal(ruleSummary({ decision: 'allow', tool: 'run_command', server: 'taskdeck', principal: '*' }), 'allow run_command on taskdeck for *');
});

test('an ask rule\'s own terms are said, so one that allows on expiry does not look like a plain ask', () => {
  assert.equal(describeTerms({ humans: 2, expiresAfterMs: 120000, onExpiry: 'allow' }), '2 humans · expires after 2 min, then allow');
  assert.equal(describeTerms({ onExpiry: 'allow' }), 'on expiry: allow');
  assert.equal(describeTerms({ expiresAfterMs: 0 }), 'never expires');
  assert.equal(describeTerms({ expiresAfterMs: 90000 }), 'expires after 90 s');
  assert.equal(describeTerms({ expiresAfterMs: 5400000, humans: 1 }), '1 human · expires after 90 min');
  assert.equal(describeTerms({}), '');
  assert.equal(describeTerms(undefined), '');
});
