//! Tauri commands: only what a browser page cannot do itself.

use std::{path::PathBuf, sync::Arc};

use tauri::State;

use super::SettingsStore;
use taskdeck_server::adapters::notices::NotificationSettings;

/// State the commands use.
pub struct DesktopState {
    pub settings: Arc<SettingsStore>,
    pub data_dir: PathBuf,
}

/// The notification settings.
#[tauri::command]
pub fn notification_settings(state: State<'_, DesktopState>) -> NotificationSettings {
    state.settings.get()
}

/// Saves the notification settings. Errors: the settings file cannot be written.
#[tauri::command]
pub fn set_notification_settings(
    state: State<'_, DesktopState>,
    settings: NotificationSettings,
) -> Result<(), String> {
    state.settings.set(settings).map_err(|e| e.to_string())
}

/// Opens the data directory in the file manager (`xdg-open`).
#[tauri::command]
pub fn open_data_dir(state: State<'_, DesktopState>) -> Result<(), String> {
    std::process::Command::new("xdg-open")
        .arg(&state.data_dir)
        .spawn()
        .map(|_| ())
        .map_err(|e| format!("cannot open {}: {e}", state.data_dir.display()))
}

/// Whether Taskdeck starts at login (the XDG autostart entry of `cli::autostart` exists).
#[tauri::command]
pub fn autostart_enabled() -> bool {
    crate::cli::autostart::enabled()
}

/// Writes (`enabled`) or removes the autostart entry; a written entry starts this program
/// hidden in the tray. Errors: the entry cannot be written or removed.
#[tauri::command]
pub fn set_autostart(enabled: bool) -> Result<(), String> {
    if enabled {
        crate::cli::autostart::enable(&[]).map(|_| ())
    } else {
        crate::cli::autostart::disable().map(|_| ())
    }
    .map_err(|e| format!("autostart: {e}"))
}
