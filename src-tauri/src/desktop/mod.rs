//! The desktop shell (cargo feature `desktop`): the same engine and endpoints as
//! `taskdeck serve`, plus a Tauri 2 window showing the UI from `/` (so the window and a browser
//! run one UI code path against `/v1`), desktop notifications and a tray icon.
//!
//! - No display (DISPLAY and WAYLAND_DISPLAY unset, or GTK cannot start): falls back to
//!   headless serving and prints the URL that opens the same UI in a browser.
//! - A second launch focuses the running window (single-instance plugin) instead of starting a
//!   second engine on the same port and data dir.
//! - Tauri commands exist only for what a browser cannot do: notification settings and opening
//!   the data dir.

mod approval_notifications;
mod commands;
mod notifier;
mod settings;
mod tray;

use std::{panic::AssertUnwindSafe, process::ExitCode, sync::Arc};

use tauri::{Manager, WebviewUrl, WebviewWindowBuilder};

use taskdeck_server::serve::{self, ServeConfig};

pub use settings::SettingsStore;

/// True when a display server is advertised (GTK may still fail to open it; see [`run`]).
pub fn display_available() -> bool {
    ["DISPLAY", "WAYLAND_DISPLAY"]
        .iter()
        .any(|v| std::env::var_os(v).is_some_and(|s| !s.is_empty()))
}

/// Shows and focuses the main window, optionally opening `task_id` in it.
pub(crate) fn focus(app: &tauri::AppHandle, task_id: Option<&str>) {
    if let Some(w) = app.get_webview_window("main") {
        let _ = w.unminimize();
        let _ = w.show();
        let _ = w.set_focus();
        if let Some(id) = task_id {
            let id: String = id
                .chars()
                .filter(|c| c.is_ascii_alphanumeric() || *c == '-')
                .collect();
            let _ = w.eval(format!("window.location.hash = 'task={id}'"));
        }
    }
}

/// Runs Taskdeck with its window; `hidden` (`taskdeck --hidden`, the autostart entry) keeps the
/// window hidden until the tray's Show or a second launch. Returns when the user quits.
pub fn run(cfg: ServeConfig, hidden: bool) -> ExitCode {
    if !display_available() {
        eprintln!(
            "taskdeck: no display (DISPLAY and WAYLAND_DISPLAY are unset): running headless instead."
        );
        return serve::run_headless(cfg, true);
    }
    if serve::data_dir_in_use(&cfg.data_dir) {
        // The single-instance plugin below hands over to the running one and ends this process.
        eprintln!("taskdeck: Taskdeck is already running; bringing its window to the front.");
    }
    let rt = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("taskdeck: cannot start the async runtime: {e}");
            return ExitCode::from(1);
        }
    };
    tauri::async_runtime::set(rt.handle().clone());
    let settings = Arc::new(SettingsStore::load(&cfg.config_dir));
    let setup_cfg = cfg.clone();
    let setup_settings = settings.clone();
    let builder = tauri::Builder::default()
        .plugin(tauri_plugin_single_instance::init(|app, _argv, _cwd| {
            focus(app, None)
        }))
        .invoke_handler(tauri::generate_handler![
            commands::notification_settings,
            commands::set_notification_settings,
            commands::open_data_dir,
            commands::autostart_enabled,
            commands::set_autostart
        ])
        .setup(move |app| {
            let running = match tauri::async_runtime::block_on(serve::start(setup_cfg.clone())) {
                Ok(r) => r,
                Err(e) => {
                    eprintln!("taskdeck: {e}");
                    std::process::exit(1);
                }
            };
            let token = std::fs::read_to_string(&running.admin_token_file)?
                .trim()
                .to_string();
            let url = format!("http://{}/#token={token}", running.addr);
            let window = WebviewWindowBuilder::new(app, "main", WebviewUrl::External(url.parse()?))
                .title("Taskdeck")
                .inner_size(1280.0, 820.0)
                .min_inner_size(420.0, 320.0)
                .visible(!hidden)
                .build()?;
            // Fit small screens: at most 90% of the monitor's work area.
            if let Ok(Some(monitor)) = window.current_monitor() {
                let scale = monitor.scale_factor();
                let area = monitor.size().to_logical::<f64>(scale);
                let (w, h) = (
                    (area.width * 0.9).min(1280.0),
                    (area.height * 0.9).min(820.0),
                );
                let _ = window.set_size(tauri::LogicalSize::new(w, h));
                let _ = window.center();
            }
            // Closing the window keeps Taskdeck (and notifications) running; the tray or a second
            // launch brings it back, the tray's Quit ends it.
            let hide = window.clone();
            window.on_window_event(move |e| {
                if let tauri::WindowEvent::CloseRequested { api, .. } = e {
                    api.prevent_close();
                    let _ = hide.hide();
                }
            });
            serve::print_banner(&running, &setup_cfg, false);
            println!(
                "  Window:        {} (closing it keeps Taskdeck running; quit from the tray)",
                if hidden { "hidden in the tray" } else { "open" }
            );
            tray::install(app.handle(), running.engine.clone(), setup_settings.clone())?;
            notifier::spawn(
                app.handle().clone(),
                running.engine.clone(),
                setup_settings.clone(),
            );
            app.manage(commands::DesktopState {
                settings: setup_settings.clone(),
                data_dir: setup_cfg.data_dir.clone(),
            });
            app.manage(running);
            Ok(())
        });
    let built = std::panic::catch_unwind(AssertUnwindSafe(|| {
        builder.build(tauri::generate_context!())
    }));
    match built {
        Ok(Ok(app)) => {
            app.run(|_, _| {});
            ExitCode::SUCCESS
        }
        Ok(Err(e)) => {
            eprintln!("taskdeck: {e}");
            ExitCode::from(1)
        }
        Err(_) => {
            eprintln!(
                "taskdeck: the window cannot start (GTK could not open the display): running headless instead."
            );
            drop(rt);
            serve::run_headless(cfg, true)
        }
    }
}
