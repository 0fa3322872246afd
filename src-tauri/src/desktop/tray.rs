//! The tray icon: counts of tasks needing input and running (from `adapters::tray_model`), and
//! the menu Show / Pause notifications / Quit. Updated from the change feed, at most 4 times a
//! second.

use std::{sync::Arc, time::Duration};

use tauri::{
    AppHandle,
    menu::{CheckMenuItem, Menu, MenuItem},
    tray::TrayIconBuilder,
};

use super::SettingsStore;
use taskdeck_engine::{Engine, store::ListFilter};
use taskdeck_server::adapters::tray_model::{self, PAUSE, QUIT, SHOW, tray_model};

/// Installs the tray icon and keeps it current.
pub fn install(app: &AppHandle, engine: Engine, settings: Arc<SettingsStore>) -> tauri::Result<()> {
    let counts = engine
        .store()
        .counts(&ListFilter::default())
        .unwrap_or_default();
    let model = tray_model(&counts, settings.paused());
    let show = MenuItem::with_id(app, SHOW, &model.items[0].1, true, None::<&str>)?;
    let pause = CheckMenuItem::with_id(
        app,
        PAUSE,
        &model.items[1].1,
        true,
        settings.paused(),
        None::<&str>,
    )?;
    let quit = MenuItem::with_id(app, QUIT, &model.items[2].1, true, None::<&str>)?;
    let menu = Menu::with_items(app, &[&show, &pause, &quit])?;
    let menu_settings = settings.clone();
    let mut builder = TrayIconBuilder::with_id("taskdeck")
        .menu(&menu)
        .tooltip(&model.tooltip)
        .on_menu_event(move |app, event| match event.id.as_ref() {
            tray_model::SHOW => super::focus(app, None),
            tray_model::PAUSE => menu_settings.set_paused(!menu_settings.paused()),
            tray_model::QUIT => super::quit(app),
            _ => {}
        });
    if let Some(icon) = app.default_window_icon() {
        builder = builder.icon(icon.clone());
    }
    let tray = builder.build(app)?;
    let mut feed = engine.store().feed().subscribe();
    tauri::async_runtime::spawn(async move {
        loop {
            match feed.recv().await {
                Ok(_) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                Err(_) => return,
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
            while feed.try_recv().is_ok() {}
            let counts = engine
                .store()
                .counts(&ListFilter::default())
                .unwrap_or_default();
            let model = tray_model(&counts, settings.paused());
            let _ = tray.set_tooltip(Some(&model.tooltip));
            let _ = show.set_text(&model.items[0].1);
            let _ = pause.set_checked(settings.paused());
        }
    });
    Ok(())
}
