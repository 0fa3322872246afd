//! Build script: the Tauri context (tauri.conf.json, capabilities, icons) is generated only for
//! the `desktop` feature; the headless build needs nothing.
fn main() {
    #[cfg(feature = "desktop")]
    tauri_build::build();
}
