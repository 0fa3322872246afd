// The desktop notification settings dialog (only in the desktop window, where the shell's
// commands exist): a checkbox per kind, the minimum run time, do-not-disturb, "Start at login"
// (the autostart entry, saved only when changed), Save, and "Open data folder". Conversion and validation live in notify-settings.js (unit-tested).

import { $, inflate } from './dom.js';
import { settingsToForm, formToSettings, settingsSummary } from './notify-settings.js';

let deps = null;
let opener = null;
let loaded = null; // the settings as loaded: the base for saving (unknown fields survive)
let autostartLoaded = false; // whether the autostart entry existed when the dialog opened
let busy = false;

/**
 * @param {{bridge: ReturnType<typeof import('./notify-settings.js').desktopBridge>,
 *          toast: (text: string, tone?: string) => void}} d
 */
export function initNotifyDialog(d) {
  deps = d;
  // index.html keeps the dialog's content in a template until this module has loaded.
  const dialog = inflate($('notify-dialog'));
  $('notify-form').addEventListener('submit', (e) => {
    e.preventDefault();
    save();
  });
  $('notify-cancel').addEventListener('click', () => dialog.close());
  $('notify-x').addEventListener('click', () => dialog.close());
  for (const id of ['notify-completed', 'notify-failed', 'notify-dnd']) $(id).addEventListener('change', syncEnabled);
  $('notify-threshold').addEventListener('input', () => setThresholdError(null));
  $('notify-open-data').addEventListener('click', openDataDir);
  dialog.addEventListener('close', () => {
    if (opener && opener.isConnected) opener.focus();
    opener = null;
  });
  // The header button's tooltip says what is on.
  deps.bridge
    .getSettings()
    .then((s) => {
      $('notify-btn').title = settingsSummary(s);
    })
    .catch(() => {});
}

export async function openNotifyDialog() {
  const dialog = $('notify-dialog');
  if (dialog.open) return;
  opener = document.activeElement instanceof HTMLElement ? document.activeElement : null;
  showError(null);
  setThresholdError(null);
  setBusy(true, 'Loading…');
  dialog.showModal();
  try {
    [loaded, autostartLoaded] = await Promise.all([deps.bridge.getSettings(), deps.bridge.getAutostart()]);
  } catch (err) {
    loaded = null;
    setBusy(false);
    showError(`Could not read the settings: ${errorText(err)}`);
    $('notify-save').disabled = true;
    $('notify-cancel').focus();
    return;
  }
  if (!dialog.open) return;
  fill(settingsToForm(loaded));
  setBusy(false);
  $('notify-input').focus();
}

function fill(form) {
  $('notify-input').checked = form.inputRequired;
  $('notify-completed').checked = form.completed;
  $('notify-failed').checked = form.failed;
  $('notify-threshold').value = form.thresholdSeconds;
  $('notify-dnd').checked = form.doNotDisturb;
  $('notify-autostart').checked = autostartLoaded;
  syncEnabled();
}

function read() {
  return {
    inputRequired: $('notify-input').checked,
    completed: $('notify-completed').checked,
    failed: $('notify-failed').checked,
    thresholdSeconds: $('notify-threshold').value,
    doNotDisturb: $('notify-dnd').checked,
  };
}

/** The threshold only applies to "completes" and "fails"; do-not-disturb mutes everything. */
function syncEnabled() {
  const thresholdUsed = $('notify-completed').checked || $('notify-failed').checked;
  $('notify-threshold').disabled = busy || !thresholdUsed;
  if (!thresholdUsed) setThresholdError(null);
  $('notify-form').classList.toggle('dnd-on', $('notify-dnd').checked);
}

function setBusy(on, label) {
  busy = on;
  for (const el of $('notify-form').querySelectorAll('input, button')) {
    if (el.id === 'notify-cancel' || el.id === 'notify-x') continue;
    el.disabled = on;
  }
  $('notify-save').textContent = on && label ? label : 'Save';
  $('notify-form').setAttribute('aria-busy', String(on));
  if (!on) syncEnabled();
}

function setThresholdError(message) {
  const err = $('notify-threshold-error');
  err.textContent = message || '';
  err.hidden = !message;
  $('notify-threshold-field').classList.toggle('invalid', !!message);
  if (message) $('notify-threshold').setAttribute('aria-invalid', 'true');
  else $('notify-threshold').removeAttribute('aria-invalid');
}

function showError(message) {
  $('notify-error').textContent = message || '';
  $('notify-error').hidden = !message;
}

function errorText(err) {
  if (err && typeof err === 'object' && typeof err.message === 'string') return err.message;
  return String(err); // Tauri commands reject with the command's error string
}

async function save() {
  if (busy || !loaded) return;
  showError(null);
  const { settings, errors } = formToSettings(read(), loaded);
  setThresholdError(errors.thresholdSeconds || null);
  if (!settings) {
    $('notify-threshold').focus();
    return;
  }
  setBusy(true, 'Saving…');
  try {
    await deps.bridge.saveSettings(settings);
    const autostart = $('notify-autostart').checked;
    if (autostart !== autostartLoaded) {
      await deps.bridge.setAutostart(autostart);
      autostartLoaded = autostart;
    }
  } catch (err) {
    setBusy(false);
    showError(`Could not save the settings: ${errorText(err)}`);
    return;
  }
  setBusy(false);
  loaded = settings;
  $('notify-btn').title = settingsSummary(settings);
  $('notify-dialog').close();
  deps.toast('Notification settings saved.', 'good');
}

async function openDataDir() {
  try {
    await deps.bridge.openDataDir();
  } catch (err) {
    showError(`Could not open the data folder: ${errorText(err)}`);
  }
}
