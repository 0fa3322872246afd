// The rules of the approval policy as the Policies dialog shows and edits them (GET/PUT
// /v1/policy): their order (first match wins, so moving a rule changes what it decides), the
// add form's checks, and the words shown. No DOM: policy-dialog.js draws it; unit-tested.

import { formatTimestamp } from './format.js';

/** The decisions a rule can make, in the order the form offers them. */
export const DECISIONS = ['ask', 'allow', 'deny'];

/**
 * `rules` with the rule `id` moved `delta` places (-1 up, +1 down); the same array when it
 * cannot move (unknown id, already first or last).
 * @param {Array<{id: string}>} rules
 */
export function moveRule(rules, id, delta) {
  const from = rules.findIndex((r) => r.id === id);
  const to = from + delta;
  if (from < 0 || to < 0 || to >= rules.length) return rules;
  const out = rules.slice();
  const [rule] = out.splice(from, 1);
  out.splice(to, 0, rule);
  return out;
}

/**
 * Parses the add form's argument patterns: one `name=pattern` a line (blank lines skipped;
 * the pattern is everything after the first `=`, kept as typed).
 * @returns {{arguments: Record<string, string>, error: string | null}}
 */
export function parseArgumentLines(text) {
  const args = {};
  const lines = String(text || '').split('\n');
  for (let i = 0; i < lines.length; i += 1) {
    const line = lines[i];
    if (!line.trim()) continue;
    const eq = line.indexOf('=');
    const name = eq < 0 ? '' : line.slice(0, eq).trim();
    if (!name) return { arguments: {}, error: `Line ${i + 1}: write name=pattern (e.g. path=/home/me/notes/*).` };
    if (name in args) return { arguments: {}, error: `Line ${i + 1}: ${name} is given twice.` };
    args[name] = line.slice(eq + 1);
  }
  return { arguments: args, error: null };
}

/**
 * The rule the add form describes, or why it cannot be added. Empty names mean `*` (any).
 * @param {{principal?: string, server?: string, tool?: string, argumentLines?: string,
 *          decision?: string, note?: string}} form
 * @returns {{rule: object | null, error: string | null}}
 */
export function ruleFromForm(form) {
  const name = (v) => String(v || '').trim() || '*';
  const decision = String(form.decision || '');
  if (!DECISIONS.includes(decision)) return { rule: null, error: 'Choose what the rule decides: ask, allow or deny.' };
  const parsed = parseArgumentLines(form.argumentLines);
  if (parsed.error) return { rule: null, error: parsed.error };
  const rule = { principal: name(form.principal), server: name(form.server), tool: name(form.tool), decision };
  if (Object.keys(parsed.arguments).length) rule.arguments = parsed.arguments;
  const note = String(form.note || '').trim();
  if (note) rule.note = note;
  return { rule, error: null };
}

/**
 * A rule's argument patterns as text: `path = /home/*, mode = 5`, or "any arguments"; with
 * what its flags add (`onlyTheseArguments`: "and no other"; `publicOnly`: "public addresses
 * only").
 * @param {Record<string, string> | undefined} args
 * @param {{onlyTheseArguments?: boolean, publicOnly?: boolean}} [flags]
 */
export function describeArguments(args, flags = {}) {
  const entries = Object.entries(args || {});
  let text = entries.length ? entries.map(([k, v]) => `${k} = ${v}`).join(', ') : 'any arguments';
  if (flags.onlyTheseArguments && entries.length) text += ', and no other';
  if (flags.publicOnly) text += ' (public addresses only)';
  return text;
}

/**
 * An `ask` rule's own approval terms as text: `2 humans · expires after 2 min, then allow`;
 * "" when it sets none (the file's or the default terms apply). Only what the rule sets is
 * said: an `onExpiry: "allow"` rule must not look like a plain ask.
 * @param {{humans?: number, expiresAfterMs?: number, onExpiry?: string} | undefined} terms
 */
export function describeTerms(terms) {
  if (!terms || typeof terms !== 'object') return '';
  const parts = [];
  if (typeof terms.humans === 'number' && terms.humans > 1) parts.push(`${terms.humans} humans`);
  else if (terms.humans === 1) parts.push('1 human');
  const after = terms.expiresAfterMs;
  let expiry = '';
  if (after === 0) expiry = 'never expires';
  else if (typeof after === 'number' && after > 0) expiry = `expires after ${duration(after)}`;
  if (terms.onExpiry) expiry = expiry ? `${expiry}, then ${terms.onExpiry}` : `on expiry: ${terms.onExpiry}`;
  if (expiry) parts.push(expiry);
  return parts.join(' · ');
}

/** `ms` as the largest whole unit that fits: `90 s`, `2 min`, `1.5 h`, `3 d`. */
function duration(ms) {
  const s = ms / 1000;
  const [value, unit] = s < 120 ? [s, 's'] : s < 7200 ? [s / 60, 'min'] : s < 172800 ? [s / 3600, 'h'] : [s / 86400, 'd'];
  return `${Number.isInteger(value) ? value : Number(value.toFixed(1))} ${unit}`;
}

/** When a rule was made, local "YYYY-MM-DD HH:MM:SS" as every time the page shows; "" when
 *  unknown. */
export function createdText(ms) {
  if (typeof ms !== 'number' || !Number.isFinite(ms)) return '';
  return formatTimestamp(new Date(ms).toISOString());
}

/** The rule as one sentence, for the accessible names of its buttons. */
export function ruleSummary(rule) {
  return `${rule.decision} ${rule.tool} on ${rule.server} for ${rule.principal}`;
}
