//! Build script: the Tauri context (tauri.conf.json, capabilities, icons) is generated only for
//! the `desktop` feature; the headless build needs nothing. The app's own commands are declared
//! so the capability can allow them for the window's page (served from 127.0.0.1, a "remote" URL
//! for Tauri's access control).
fn main() {
    #[cfg(feature = "desktop")]
    tauri_build::try_build(tauri_build::Attributes::new().app_manifest(
        tauri_build::AppManifest::new().commands(&[
            "notification_settings",
            "set_notification_settings",
            "open_data_dir",
            "autostart_enabled",
            "set_autostart",
        ]),
    ))
    .expect("tauri build");
}
