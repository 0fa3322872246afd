//! The main window: built fully on screen where the user left it, and remembered for next time.
//!
//! Saving is done by the official `tauri-plugin-window-state` (size, position and maximised
//! state, written to `<config dir>/window-state.json` when Taskdeck quits). Restoring is done
//! here, before the window exists, from that same file: the plugin would restore a saved size
//! larger than today's monitor as it is, and a saved position only when it still touches a
//! monitor, so the geometry is decided by [`placement::place`] instead and the window is built
//! with it (no resize after the first paint).

use std::path::{Path, PathBuf};

use tauri::{App, Monitor, WebviewUrl, WebviewWindow, WebviewWindowBuilder};
use tauri_plugin_window_state::StateFlags;

use super::placement::{self, Rect, Sizes};

/// The window's label (Tauri's name for it), also its key in the saved state file.
pub const LABEL: &str = "main";

/// Inner size wanted on a large monitor, in logical pixels.
const PREFERRED: (f64, f64) = (1280.0, 820.0);

/// Smallest inner size, in logical pixels, at which the UI still works: chosen by looking at the
/// UI in Chromium at 800x600, 640x480 and 560x400 with two waiting approvals. At 640x480 the
/// header, the "Needs input" inbox with its Answer buttons, search, the status chips and the
/// first list rows fit in one view, and a task's detail scrolls; at 560x400 the header alone
/// takes a quarter of the height and the list is barely visible.
pub const MIN_SIZE: (f64, f64) = (640.0, 480.0);

/// Room kept for a window manager's frame and title bar, in logical pixels (width, height).
const FRAME: (f64, f64) = (16.0, 48.0);

/// What the window-state plugin saves and Taskdeck restores: not visibility (a window closed to
/// the tray must come back visible) nor decorations (always on).
pub fn state_flags() -> StateFlags {
    StateFlags::SIZE | StateFlags::POSITION | StateFlags::MAXIMIZED
}

/// The plugin's state file: in Taskdeck's config dir, next to its other settings (an absolute
/// file name replaces the plugin's default directory, the app config dir).
pub fn state_file(config_dir: &Path) -> PathBuf {
    config_dir.join("window-state.json")
}

/// The window-state plugin, saving [`state_flags`] to [`state_file`]. It does not restore the
/// main window itself; [`build`] does.
pub fn state_plugin(config_dir: &Path) -> tauri::plugin::TauriPlugin<tauri::Wry> {
    tauri_plugin_window_state::Builder::new()
        .with_filename(state_file(config_dir).to_string_lossy())
        .with_state_flags(state_flags())
        .skip_initial_state(LABEL)
        .build()
}

/// One window's entry in the plugin's state file (`{"main": {...}}`): outer position and inner
/// size in physical pixels; the plugin writes more fields, which are not needed here.
#[derive(serde::Deserialize)]
struct SavedWindow {
    width: u32,
    height: u32,
    x: i32,
    y: i32,
    #[serde(default)]
    prev_x: i32,
    #[serde(default)]
    prev_y: i32,
    #[serde(default)]
    maximized: bool,
}

/// The main window's saved geometry and whether it was maximised; `None` when nothing usable is
/// saved (no file, another format, a zero size).
fn saved(config_dir: &Path) -> Option<(Rect, bool)> {
    let text = std::fs::read_to_string(state_file(config_dir)).ok()?;
    let mut all: std::collections::HashMap<String, SavedWindow> =
        serde_json::from_str(&text).ok()?;
    let s = all.remove(LABEL)?;
    if s.width == 0 || s.height == 0 {
        return None;
    }
    // A maximised window's x/y are the monitor's corner; its own position is in prev_x/prev_y.
    let (x, y) = if s.maximized {
        (s.prev_x, s.prev_y)
    } else {
        (s.x, s.y)
    };
    Some((
        Rect {
            x,
            y,
            w: s.width,
            h: s.height,
        },
        s.maximized,
    ))
}

fn work_area(m: &Monitor) -> Rect {
    let a = m.work_area();
    Rect {
        x: a.position.x,
        y: a.position.y,
        w: a.size.width,
        h: a.size.height,
    }
}

/// The monitor the user is on: the one under the mouse pointer, else the primary one, else any.
fn current_monitor(app: &App) -> Option<Monitor> {
    let under_pointer = app
        .cursor_position()
        .ok()
        .and_then(|p| app.monitor_from_point(p.x, p.y).ok().flatten());
    under_pointer
        .or_else(|| app.primary_monitor().ok().flatten())
        .or_else(|| app.available_monitors().ok()?.into_iter().next())
}

/// Builds the main window on `url`, titled "Taskdeck", placed by [`placement::place`] from the
/// saved state in `config_dir` and the monitors present now, with [`MIN_SIZE`] as its minimum
/// (or the whole work area, on a monitor smaller than that);
/// shown at once unless `visible` is false (`taskdeck --hidden`: the tray shows it later).
/// Errors: Tauri could not create the window.
pub fn build(
    app: &App,
    url: WebviewUrl,
    config_dir: &Path,
    visible: bool,
) -> tauri::Result<WebviewWindow> {
    let mut builder = WebviewWindowBuilder::new(app, LABEL, url)
        .title("Taskdeck")
        .visible(visible);
    let saved = saved(config_dir);
    match current_monitor(app) {
        Some(current) => {
            let scale = current.scale_factor();
            let px = |v: f64| (v * scale).round() as u32;
            let monitors: Vec<Rect> = app
                .available_monitors()
                .unwrap_or_default()
                .iter()
                .map(work_area)
                .collect();
            let sizes = Sizes {
                preferred: (px(PREFERRED.0), px(PREFERRED.1)),
                max_share: 0.9,
                min: (px(MIN_SIZE.0), px(MIN_SIZE.1)),
                frame: (px(FRAME.0), px(FRAME.1)),
            };
            let rect =
                placement::place(saved.map(|(r, _)| r), &monitors, work_area(&current), sizes);
            let (w, h) = (f64::from(rect.w) / scale, f64::from(rect.h) / scale);
            // On a monitor smaller than MIN_SIZE the minimum gives way, so that the window
            // still fits on it.
            builder = builder
                .inner_size(w, h)
                .min_inner_size(MIN_SIZE.0.min(w), MIN_SIZE.1.min(h))
                .position(f64::from(rect.x) / scale, f64::from(rect.y) / scale);
        }
        // No monitor reported: let the window system place a window of the preferred size.
        None => {
            builder = builder
                .inner_size(PREFERRED.0, PREFERRED.1)
                .min_inner_size(MIN_SIZE.0, MIN_SIZE.1)
                .center()
        }
    }
    if saved.is_some_and(|(_, maximized)| maximized) {
        builder = builder.maximized(true);
    }
    builder.build()
}
