import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  DEFAULT_SETTINGS,
  desktopBridge,
  normalizeSettings,
  formatSeconds,
  parseThresholdSeconds,
  settingsToForm,
  formToSettings,
  settingsSummary,
} from '../js/notify-settings.js';

test('no __TAURI__ (a plain browser): no desktop bridge', () => {
  assert.equal(desktopBridge(undefined), null);
  assert.equal(desktopBridge({}), null);
  assert.equal(desktopBridge({ core: {} }), null);
  assert.equal(desktopBridge({ invoke() {} }), null, 'only the Tauri 2 core.invoke');
});

test('the bridge calls the shell commands with the expected arguments', async () => {
  const calls = [];
  const tauri = {
    core: {
      invoke: async (cmd, args) => {
        calls.push([cmd, args]);
        if (cmd === 'notification_settings') return { inputRequired: false, completed: true, failed: true, thresholdMs: 2500, doNotDisturb: true };
        return null;
      },
    },
  };
  const bridge = desktopBridge(tauri);
  assert.deepEqual(await bridge.getSettings(), { inputRequired: false, completed: true, failed: true, thresholdMs: 2500, doNotDisturb: true });
  const s = { ...DEFAULT_SETTINGS, failed: false };
  await bridge.saveSettings(s);
  await bridge.openDataDir();
  assert.deepEqual(calls, [
    ['notification_settings', undefined],
    ['set_notification_settings', { settings: s }],
    ['open_data_dir', undefined],
  ]);
});

test('the bridge reads and sets the autostart entry through the shell', async () => {
  const calls = [];
  let on = false;
  const bridge = desktopBridge({
    core: {
      invoke: async (cmd, args) => {
        calls.push([cmd, args]);
        if (cmd === 'autostart_enabled') return on;
        if (cmd === 'set_autostart') on = args.enabled;
        return null;
      },
    },
  });
  assert.equal(await bridge.getAutostart(), false);
  await bridge.setAutostart(1);
  assert.equal(await bridge.getAutostart(), true);
  assert.deepEqual(calls, [
    ['autostart_enabled', undefined],
    ['set_autostart', { enabled: true }],
    ['autostart_enabled', undefined],
  ]);
});

test('a failing command rejects with what the shell said', async () => {
  const bridge = desktopBridge({ core: { invoke: async () => Promise.reject('cannot open /data: no xdg-open') } });
  await assert.rejects(bridge.openDataDir(), (e) => e === 'cannot open /data: no xdg-open');
});

test('settings are normalized: defaults fill gaps, wrong types are ignored, unknown fields kept', () => {
  assert.deepEqual(normalizeSettings(undefined), { ...DEFAULT_SETTINGS });
  assert.deepEqual(normalizeSettings({ completed: 'yes', thresholdMs: -5, doNotDisturb: true, sound: 'ding' }), {
    ...DEFAULT_SETTINGS,
    doNotDisturb: true,
    sound: 'ding',
  });
  assert.equal(normalizeSettings({ thresholdMs: 1500.4 }).thresholdMs, 1500);
});

test('seconds are shown without needless decimals', () => {
  assert.equal(formatSeconds(10_000), '10');
  assert.equal(formatSeconds(2500), '2.5');
  assert.equal(formatSeconds(0), '0');
  assert.equal(formatSeconds(1), '0.001');
  assert.equal(formatSeconds(NaN), '');
});

test('the threshold field takes seconds with a point or a comma', () => {
  assert.deepEqual(parseThresholdSeconds('10'), { ms: 10_000 });
  assert.deepEqual(parseThresholdSeconds(' 2.5 '), { ms: 2500 });
  assert.deepEqual(parseThresholdSeconds('2,5'), { ms: 2500 });
  assert.deepEqual(parseThresholdSeconds('.5'), { ms: 500 });
  assert.deepEqual(parseThresholdSeconds('3.'), { ms: 3000 });
  assert.deepEqual(parseThresholdSeconds('0'), { ms: 0 });
  assert.deepEqual(parseThresholdSeconds('0.0004'), { ms: 0 });
  assert.deepEqual(parseThresholdSeconds('86400'), { ms: 86_400_000 });
  assert.match(parseThresholdSeconds('').error, /Enter a number of seconds/);
  assert.match(parseThresholdSeconds('-1').error, /like 10 or 2.5/);
  assert.match(parseThresholdSeconds('1e3').error, /like 10 or 2.5/);
  assert.match(parseThresholdSeconds('ten').error, /like 10 or 2.5/);
  assert.match(parseThresholdSeconds('86401').error, /at most 86,400 seconds/);
});

test('settings to form values and back round-trip', () => {
  const s = { inputRequired: true, completed: false, failed: true, thresholdMs: 2500, doNotDisturb: false };
  const form = settingsToForm(s);
  assert.deepEqual(form, { inputRequired: true, completed: false, failed: true, thresholdSeconds: '2.5', doNotDisturb: false });
  assert.deepEqual(formToSettings(form, s), { settings: s, errors: {} });
  assert.deepEqual(settingsToForm(undefined), { inputRequired: true, completed: true, failed: true, thresholdSeconds: '10', doNotDisturb: false });
});

test('form values become settings on top of the loaded ones', () => {
  const base = { ...DEFAULT_SETTINGS, sound: 'ding' };
  const { settings, errors } = formToSettings({ inputRequired: false, completed: true, failed: true, thresholdSeconds: '30', doNotDisturb: true }, base);
  assert.deepEqual(errors, {});
  assert.deepEqual(settings, { inputRequired: false, completed: true, failed: true, thresholdMs: 30_000, doNotDisturb: true, sound: 'ding' });
});

test('a bad threshold is an error only while it matters', () => {
  const bad = { inputRequired: true, completed: true, failed: false, thresholdSeconds: 'soon', doNotDisturb: false };
  assert.deepEqual(formToSettings(bad, DEFAULT_SETTINGS), { settings: null, errors: { thresholdSeconds: 'Enter a number of seconds, like 10 or 2.5.' } });
  // Completed and failed both off: the threshold is unused, the old value is kept.
  const { settings, errors } = formToSettings({ ...bad, completed: false }, { ...DEFAULT_SETTINGS, thresholdMs: 4000 });
  assert.deepEqual(errors, {});
  assert.equal(settings.thresholdMs, 4000);
  assert.equal(settings.completed, false);
});

test('the summary says what is on', () => {
  assert.equal(settingsSummary(DEFAULT_SETTINGS), 'Notifications: input needed, completed, failed');
  assert.equal(settingsSummary({ ...DEFAULT_SETTINGS, completed: false }), 'Notifications: input needed, failed');
  assert.equal(settingsSummary({ inputRequired: false, completed: false, failed: false }), 'Notifications off');
  assert.equal(settingsSummary({ ...DEFAULT_SETTINGS, doNotDisturb: true }), 'Do not disturb: no notifications');
});
