//! The desktop shell (cargo feature `desktop`): the same engine and endpoints as
//! `taskdeck serve`, plus a Tauri 2 window showing the UI from `/` (so the window and a browser
//! run one UI code path against `/v1`), desktop notifications and a tray icon.
//!
//! - No display (DISPLAY and WAYLAND_DISPLAY unset, or GTK cannot start): falls back to
//!   headless serving and prints the URL that opens the same UI in a browser.
//! - A second launch focuses the running window (single-instance plugin) instead of starting a
//!   second engine on the same port and data dir; from another D-Bus session, where that plugin
//!   cannot reach it, it says where Taskdeck runs and exits ([`running_instance`]).
//! - The window opens fully on screen where the user left it ([`window`], [`placement`]).
//! - Tauri commands exist only for what a browser cannot do: notification settings and opening
//!   the data dir.

mod approval_notifications;
mod commands;
mod notification_bus;
mod notifier;
mod placement;
mod running_instance;
mod settings;
mod tray;
mod window;

use std::{
    panic::AssertUnwindSafe,
    process::ExitCode,
    sync::{Arc, Mutex},
    time::Duration,
};

use notification_bus::NotificationBus;
use running_instance::RunningInstance;
use tauri::{Manager, WebviewUrl};

use taskdeck_server::serve::{self, ServeConfig};

pub use settings::SettingsStore;

/// True when a display server is advertised (GTK may still fail to open it; see [`run`]).
pub fn display_available() -> bool {
    ["DISPLAY", "WAYLAND_DISPLAY"]
        .iter()
        .any(|v| std::env::var_os(v).is_some_and(|s| !s.is_empty()))
}

/// Ends the app (the tray's Quit, SIGTERM, Ctrl-C): prints "taskdeck: stopping"; [`run`] then
/// stops the server and the running tools and returns exit code 0.
pub(crate) fn quit(app: &tauri::AppHandle) {
    eprintln!("taskdeck: stopping");
    app.exit(0);
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
/// window hidden until the tray's Show or a second launch. Returns when the user quits (tray
/// Quit) or on SIGTERM / Ctrl-C (prints "taskdeck: stopping", then stops the server and the
/// running tools): exit code 0. A launch while Taskdeck already runs on the same data dir prints
/// one line saying where it runs and exits 0 (its window comes to the front when it is on this
/// D-Bus session and this launch has a display).
pub fn run(cfg: ServeConfig, hidden: bool) -> ExitCode {
    let context = tauri::generate_context!();
    let display = display_available();
    if let Some(other) = RunningInstance::find(&cfg.data_dir, &context.config().identifier) {
        if !display {
            eprintln!("taskdeck: {}", other.message_without_display());
            return ExitCode::SUCCESS;
        }
        eprintln!("taskdeck: {}", other.message());
        if !other.window_on_this_session {
            let token = taskdeck_server::adapters::auth::read_admin_token(&cfg.config_dir);
            other.open_in_browser(token.as_deref());
            return ExitCode::SUCCESS;
        }
        // The single-instance plugin below hands over to the running one and ends this process.
    }
    if !display {
        eprintln!(
            "taskdeck: no display (DISPLAY and WAYLAND_DISPLAY are unset): running headless instead."
        );
        return serve::run_headless(cfg, true);
    }
    let rt = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("taskdeck: cannot start the async runtime: {e}");
            return ExitCode::from(1);
        }
    };
    tauri::async_runtime::set(rt.handle().clone());
    // Registered now, so that a SIGTERM or Ctrl-C while the window is being set up is not lost.
    let stop_requested = {
        let _in_runtime = rt.enter();
        stop_signal()
    };
    let settings = Arc::new(SettingsStore::load(&cfg.config_dir));
    let setup_cfg = cfg.clone();
    let setup_settings = settings.clone();
    // The server, taken out at the end to stop it cleanly.
    let server: Arc<Mutex<Option<serve::Running>>> = Arc::default();
    let setup_server = server.clone();
    // The notification server's connection, taken out at the end to close what is still open.
    let notifications: Arc<Mutex<Option<Arc<NotificationBus>>>> = Arc::default();
    let setup_notifications = notifications.clone();
    let builder = tauri::Builder::default()
        .plugin(tauri_plugin_single_instance::init(|app, _argv, _cwd| {
            focus(app, None)
        }))
        .plugin(window::state_plugin(&cfg.config_dir))
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
            let window = window::build(
                app,
                WebviewUrl::External(url.parse()?),
                &setup_cfg.config_dir,
                !hidden,
            )?;
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
            if let Some(bus) = connect_notifications() {
                notifier::spawn(
                    app.handle().clone(),
                    running.engine.clone(),
                    setup_settings.clone(),
                    bus.clone(),
                );
                *setup_notifications
                    .lock()
                    .unwrap_or_else(|e| e.into_inner()) = Some(bus);
            }
            app.manage(commands::DesktopState {
                settings: setup_settings.clone(),
                data_dir: setup_cfg.data_dir.clone(),
            });
            let quitting = app.handle().clone();
            tauri::async_runtime::spawn(async move {
                stop_requested.await;
                quit(&quitting);
            });
            *setup_server.lock().unwrap_or_else(|e| e.into_inner()) = Some(running);
            Ok(())
        });
    let built = std::panic::catch_unwind(AssertUnwindSafe(|| builder.build(context)));
    match built {
        Ok(Ok(app)) => {
            let code = app.run_return(|_, _| {});
            // Before the stop: what it ends (the tools it interrupts) is not news to notify.
            let bus = notifications
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .take();
            if let Some(bus) = bus {
                rt.block_on(bus.close_all(Duration::from_secs(2)));
            }
            let running = server.lock().unwrap_or_else(|e| e.into_inner()).take();
            if let Some(running) = running {
                stop(&rt, running);
            }
            ExitCode::from(u8::try_from(code).unwrap_or(1))
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

/// The session's notification server ([`NotificationBus`]), or `None` (logged) without a
/// session bus: Taskdeck then runs without desktop notifications.
fn connect_notifications() -> Option<Arc<NotificationBus>> {
    let connecting =
        async { tokio::time::timeout(Duration::from_secs(3), NotificationBus::connect()).await };
    match tauri::async_runtime::block_on(connecting) {
        Ok(Ok(bus)) => Some(bus),
        Ok(Err(e)) => {
            tracing::warn!(
                "desktop notifications unavailable ({e}); Taskdeck keeps running without them"
            );
            None
        }
        Err(_) => {
            tracing::warn!(
                "desktop notifications unavailable (the session bus did not answer in 3 s); Taskdeck keeps running without them"
            );
            None
        }
    }
}

/// Stops the server (open connections get up to 5 s to finish) and the running tools, as
/// `taskdeck serve` does on SIGTERM.
fn stop(rt: &tokio::runtime::Runtime, running: serve::Running) {
    running.engine.shutdown();
    running.shutdown.cancel();
    rt.block_on(async move {
        let _ = tokio::time::timeout(std::time::Duration::from_secs(5), running.done).await;
    });
}

/// A future that resolves on the first SIGTERM or Ctrl-C (SIGINT) the process gets; both are
/// caught from the moment it is created (inside a Tokio runtime), not from its first poll.
fn stop_signal() -> impl std::future::Future<Output = ()> + Send + 'static {
    use tokio::signal::unix::{SignalKind, signal};
    let term = signal(SignalKind::terminate()).ok();
    let int = signal(SignalKind::interrupt()).ok();
    async move {
        let wait = |s: Option<tokio::signal::unix::Signal>| async move {
            match s {
                Some(mut s) => {
                    s.recv().await;
                }
                None => std::future::pending::<()>().await,
            }
        };
        tokio::select! {
            _ = wait(term) => {}
            _ = wait(int) => {}
        }
    }
}
