//! Notification settings, persisted as JSON in `<config dir>/notifications.json`, plus the
//! tray's "Pause notifications" switch (not persisted: a pause ends with the session).

use std::{
    path::{Path, PathBuf},
    sync::{
        RwLock,
        atomic::{AtomicBool, Ordering},
    },
};

use taskdeck_server::adapters::notices::NotificationSettings;

/// Shared, persisted settings.
pub struct SettingsStore {
    path: PathBuf,
    settings: RwLock<NotificationSettings>,
    paused: AtomicBool,
}

impl SettingsStore {
    /// Loads `<config_dir>/notifications.json`, or the defaults.
    pub fn load(config_dir: &Path) -> SettingsStore {
        let path = config_dir.join("notifications.json");
        let settings = std::fs::read_to_string(&path)
            .ok()
            .and_then(|s| serde_json::from_str(&s).ok())
            .unwrap_or_default();
        SettingsStore {
            path,
            settings: RwLock::new(settings),
            paused: AtomicBool::new(false),
        }
    }

    /// The current settings.
    pub fn get(&self) -> NotificationSettings {
        self.settings.read().unwrap().clone()
    }

    /// Replaces and persists the settings. Errors: the file cannot be written.
    pub fn set(&self, settings: NotificationSettings) -> std::io::Result<()> {
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        std::fs::write(&self.path, serde_json::to_vec_pretty(&settings)?)?;
        *self.settings.write().unwrap() = settings;
        Ok(())
    }

    /// Notifications paused from the tray.
    pub fn paused(&self) -> bool {
        self.paused.load(Ordering::Relaxed)
    }

    /// Pauses (`true`) or resumes notifications from the tray; kept in memory only.
    pub fn set_paused(&self, paused: bool) {
        self.paused.store(paused, Ordering::Relaxed);
    }
}
