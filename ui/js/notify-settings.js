// Desktop notification settings: the desktop shell's commands, and the conversion between
// its settings object and the dialog's form values, with validation. No DOM.
//
// In the desktop window (Tauri, withGlobalTauri) `window.__TAURI__.core.invoke` reaches the
// shell's commands: notification_settings, set_notification_settings, open_data_dir,
// autostart_enabled, set_autostart. In a
// plain browser there is no __TAURI__ and none of this is shown.

/** The shell's defaults (used for missing fields). */
export const DEFAULT_SETTINGS = Object.freeze({
  inputRequired: true,
  completed: true,
  failed: true,
  thresholdMs: 10_000,
  doNotDisturb: false,
});

/** Longest threshold the form takes: one day. */
export const MAX_THRESHOLD_SECONDS = 86_400;

/**
 * The desktop commands, or null outside the desktop window.
 * @param {unknown} tauri `window.__TAURI__`
 * @returns {{getSettings: () => Promise<object>, saveSettings: (s: object) => Promise<void>, openDataDir: () => Promise<void>,
 *           getAutostart: () => Promise<boolean>, setAutostart: (on: boolean) => Promise<void>}|null}
 */
export function desktopBridge(tauri) {
  const invoke = tauri && typeof tauri === 'object' && tauri.core && typeof tauri.core.invoke === 'function' ? tauri.core.invoke.bind(tauri.core) : null;
  if (!invoke) return null;
  return {
    getSettings: async () => normalizeSettings(await invoke('notification_settings')),
    saveSettings: async (settings) => {
      await invoke('set_notification_settings', { settings });
    },
    openDataDir: async () => {
      await invoke('open_data_dir');
    },
    getAutostart: async () => (await invoke('autostart_enabled')) === true,
    setAutostart: async (enabled) => {
      await invoke('set_autostart', { enabled: !!enabled });
    },
  };
}

/** Settings with every field present and of the right type (defaults fill the gaps). */
export function normalizeSettings(raw) {
  const s = raw && typeof raw === 'object' ? raw : {};
  const bool = (k) => (typeof s[k] === 'boolean' ? s[k] : DEFAULT_SETTINGS[k]);
  const ms = Number.isFinite(s.thresholdMs) && s.thresholdMs >= 0 ? Math.round(s.thresholdMs) : DEFAULT_SETTINGS.thresholdMs;
  return {
    ...s, // fields this page does not know about are kept as they are
    inputRequired: bool('inputRequired'),
    completed: bool('completed'),
    failed: bool('failed'),
    thresholdMs: ms,
    doNotDisturb: bool('doNotDisturb'),
  };
}

/** 10000 → "10", 2500 → "2.5", 1 → "0.001". */
export function formatSeconds(ms) {
  if (!Number.isFinite(ms)) return '';
  return String(Math.round(ms) / 1000);
}

/**
 * Parses the threshold field (seconds; a decimal point or comma).
 * @returns {{ms: number}|{error: string}}
 */
export function parseThresholdSeconds(text) {
  const s = String(text ?? '').trim().replace(',', '.');
  if (!s) return { error: 'Enter a number of seconds (0 notifies for every finished task).' };
  if (!/^\d+(\.\d*)?$|^\.\d+$/.test(s)) return { error: 'Enter a number of seconds, like 10 or 2.5.' };
  const seconds = Number(s);
  if (!Number.isFinite(seconds)) return { error: 'Enter a number of seconds, like 10 or 2.5.' };
  if (seconds > MAX_THRESHOLD_SECONDS) return { error: `Use at most ${MAX_THRESHOLD_SECONDS.toLocaleString('en-US')} seconds (one day).` };
  return { ms: Math.round(seconds * 1000) };
}

/**
 * The dialog's values for `settings`.
 * @returns {{inputRequired: boolean, completed: boolean, failed: boolean, thresholdSeconds: string, doNotDisturb: boolean}}
 */
export function settingsToForm(settings) {
  const s = normalizeSettings(settings);
  return {
    inputRequired: s.inputRequired,
    completed: s.completed,
    failed: s.failed,
    thresholdSeconds: formatSeconds(s.thresholdMs),
    doNotDisturb: s.doNotDisturb,
  };
}

/**
 * The settings to save from the dialog's values, on top of `base` (the loaded settings, so
 * unknown fields survive). The threshold only matters for completed/failed notices: while
 * both are off, a bad threshold is not an error and the old value is kept.
 * @returns {{settings: object|null, errors: {thresholdSeconds?: string}}}
 */
export function formToSettings(form, base = DEFAULT_SETTINGS) {
  const b = normalizeSettings(base);
  const f = form || {};
  const errors = {};
  let thresholdMs = b.thresholdMs;
  const thresholdUsed = !!f.completed || !!f.failed;
  const parsed = parseThresholdSeconds(f.thresholdSeconds);
  if ('ms' in parsed) thresholdMs = parsed.ms;
  else if (thresholdUsed) errors.thresholdSeconds = parsed.error;
  if (Object.keys(errors).length) return { settings: null, errors };
  return {
    settings: {
      ...b,
      inputRequired: !!f.inputRequired,
      completed: !!f.completed,
      failed: !!f.failed,
      thresholdMs,
      doNotDisturb: !!f.doNotDisturb,
    },
    errors,
  };
}

/** A short summary, e.g. for the header button's tooltip. */
export function settingsSummary(settings) {
  const s = normalizeSettings(settings);
  if (s.doNotDisturb) return 'Do not disturb: no notifications';
  const kinds = [s.inputRequired && 'input needed', s.completed && 'completed', s.failed && 'failed'].filter(Boolean);
  if (!kinds.length) return 'Notifications off';
  return `Notifications: ${kinds.join(', ')}`;
}
