//! The Taskdeck already running on this data dir, as a second launch finds it.
//!
//! The data dir's lock (`<data dir>/taskdeck.lock`) says whether one runs, its port file where it
//! listens, the kernel's lock table (`/proc/locks`) which process holds the lock, and the session
//! bus whether its window can be reached from here: the single-instance plugin shows the running
//! window only when both launches share a D-Bus session. Without that, a second launch would try
//! to serve the same port and fail with "port already in use"; with it, it says one clear thing.

use std::path::Path;

use taskdeck_server::{data_dir_lock, serve};

/// The running Taskdeck that holds a data dir.
#[derive(Debug)]
pub struct RunningInstance {
    /// The port it recorded in the data dir (`None` when the port file is missing or unreadable).
    pub port: Option<u16>,
    /// The process holding the data dir's lock (`None` when /proc/locks does not say).
    pub pid: Option<u32>,
    /// It was started as `taskdeck serve` (no window anywhere).
    pub headless: bool,
    /// Its window is registered on this process's D-Bus session, so the single-instance plugin
    /// can bring it to the front.
    pub window_on_this_session: bool,
}

impl RunningInstance {
    /// The Taskdeck holding `data_dir`, or `None` when none does. `identifier` is the app's
    /// identifier (tauri.conf.json), from which the single-instance plugin names its D-Bus
    /// service `<identifier>.SingleInstance`.
    pub fn find(data_dir: &Path, identifier: &str) -> Option<RunningInstance> {
        if !serve::data_dir_in_use(data_dir) {
            return None;
        }
        let pid = data_dir_lock::holder(data_dir);
        let headless = pid.is_some_and(started_as_serve);
        Some(RunningInstance {
            port: serve::running_port(data_dir),
            pid,
            headless,
            window_on_this_session: !headless
                && name_has_owner(&format!("{identifier}.SingleInstance")),
        })
    }

    /// The one line a second launch prints (without the `taskdeck: ` prefix), e.g. "Taskdeck is
    /// already running on http://127.0.0.1:4747 (pid 812); its window is on another desktop
    /// session, so it cannot be shown from here: opening http://127.0.0.1:4747/ in your
    /// browser (or quit it there first)." When its window cannot be shown, the launch then
    /// calls [`RunningInstance::open_in_browser`], so that a launch from the application menu,
    /// whose output nobody sees, still shows Taskdeck.
    pub fn message(&self) -> String {
        let (url, running) = self.running_on();
        if self.window_on_this_session {
            format!("{running}; bringing its window to the front.")
        } else if self.headless {
            format!(
                "{running} without a window (taskdeck serve): opening {url}/ in your browser \
                 (stop it first to get the window)."
            )
        } else {
            format!(
                "{running}; its window is on another desktop session, so it cannot be shown \
                 from here: opening {url}/ in your browser (or quit it there first)."
            )
        }
    }

    /// Opens the running Taskdeck's UI in the user's browser with `xdg-open` (which honours
    /// `$BROWSER` on a desktop without a default browser), signed in with `admin_token` when
    /// given: the token goes in the URL's fragment, which a browser never sends to a server,
    /// and the page removes it from the address bar. When no browser can be started (no
    /// `xdg-open`, or it fails within 2 s), says so on stderr and in a desktop notification,
    /// since a launch from the menu has no terminal.
    pub fn open_in_browser(&self, admin_token: Option<&str>) {
        let (url, running) = self.running_on();
        let Some(port) = self.port else {
            return self.cannot_open(&running, "its port file is missing");
        };
        let link = match admin_token {
            Some(token) => format!("http://127.0.0.1:{port}/#token={token}"),
            None => format!("http://127.0.0.1:{port}/"),
        };
        let started = std::process::Command::new("xdg-open")
            .arg(&link)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn();
        let mut child = match started {
            Ok(child) => child,
            Err(e) => return self.cannot_open(&running, &format!("xdg-open: {e}")),
        };
        // xdg-open may stay while the browser it started runs; only an early failure counts.
        let until = std::time::Instant::now() + std::time::Duration::from_secs(2);
        while std::time::Instant::now() < until {
            match child.try_wait() {
                Ok(Some(status)) if !status.success() => {
                    return self.cannot_open(&running, &format!("xdg-open {url}/ {status}"));
                }
                Ok(Some(_)) | Err(_) => return,
                Ok(None) => std::thread::sleep(std::time::Duration::from_millis(50)),
            }
        }
    }

    /// Says that no browser could show the running Taskdeck (`why`), on stderr and in a
    /// desktop notification.
    fn cannot_open(&self, running: &str, why: &str) {
        let text = format!("{running}; no browser could be opened ({why}).");
        eprintln!("taskdeck: {text}");
        let body = taskdeck_server::adapters::notices::escape_body(&text);
        let _ = super::notification_bus::notify_once("Taskdeck is already running", &body);
    }
}

impl RunningInstance {
    /// The one line a second launch without a display (over SSH, say) prints, e.g. "Taskdeck
    /// is already running on http://127.0.0.1:4747 (pid 812); this launch has no display to
    /// show its window on: open http://127.0.0.1:4747/ in a browser."
    pub fn message_without_display(&self) -> String {
        let (url, running) = self.running_on();
        format!(
            "{running}; this launch has no display to show its window on: open {url}/ in a browser."
        )
    }

    /// Its URL (`http://127.0.0.1:PORT`) and "Taskdeck is already running on URL (pid N)".
    fn running_on(&self) -> (String, String) {
        let url = self
            .port
            .map(|p| format!("http://127.0.0.1:{p}"))
            .unwrap_or_else(|| "its port".into());
        let pid = self.pid.map(|p| format!(" (pid {p})")).unwrap_or_default();
        let running = format!("Taskdeck is already running on {url}{pid}");
        (url, running)
    }
}

/// True when process `pid` was started as `taskdeck serve` (`serve` among its arguments).
fn started_as_serve(pid: u32) -> bool {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .is_ok_and(|c| c.split(|b| *b == 0).skip(1).any(|a| a == b"serve"))
}

/// True when `name` has an owner on this process's D-Bus session bus (false without a bus).
fn name_has_owner(name: &str) -> bool {
    let Ok(conn) = zbus::blocking::Connection::session() else {
        return false;
    };
    let Ok(bus) = zbus::blocking::fdo::DBusProxy::new(&conn) else {
        return false;
    };
    zbus::names::BusName::try_from(name)
        .ok()
        .and_then(|n| bus.name_has_owner(n).ok())
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_process_holding_the_lock_and_its_port() {
        let dir = tempfile::tempdir().unwrap();
        assert!(RunningInstance::find(dir.path(), "dev.taskdeck.test").is_none());
        let lock = std::fs::File::create(dir.path().join("taskdeck.lock")).unwrap();
        lock.try_lock().unwrap();
        std::fs::write(dir.path().join("taskdeck.port"), "4811\n").unwrap();
        let found = RunningInstance::find(dir.path(), "dev.taskdeck.test").unwrap();
        assert_eq!(found.port, Some(4811));
        assert_eq!(found.pid, Some(std::process::id()));
        assert!(!found.headless);
        assert!(!found.window_on_this_session);
        let msg = found.message();
        assert!(
            msg.starts_with(&format!(
                "Taskdeck is already running on http://127.0.0.1:4811 (pid {})",
                std::process::id()
            )),
            "{msg}"
        );
        assert!(msg.contains("another desktop session"), "{msg}");
        drop(lock);
        assert!(RunningInstance::find(dir.path(), "dev.taskdeck.test").is_none());
    }
}
