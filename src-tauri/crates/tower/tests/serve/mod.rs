//! A real `taskdeck serve` for the remote store's tests: the workspace's own binary, started
//! on a free loopback port in a temp dir, with a fresh principal (token) on demand.
//!
//! The binary is the root package's, so it is not known to this crate's tests by
//! `CARGO_BIN_EXE_*`: it is found next to this test's own executable (`target/debug/taskdeck`),
//! where `cargo test --workspace` builds it. A missing or stale one stops the test with the
//! command that builds it.

use std::{
    path::{Path, PathBuf},
    process::Stdio,
    sync::atomic::{AtomicUsize, Ordering},
    time::{Duration, SystemTime},
};

use tokio::{
    io::{AsyncBufReadExt, BufReader},
    process::{Child, Command},
};

/// A running `taskdeck serve` and the temp dir holding its data and config.
pub struct Taskdeck {
    _child: Child,
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    /// The admin's token (what the window uses).
    #[allow(dead_code)] // Not every test acts as the window.
    pub admin: String,
    dir: tempfile::TempDir,
    made: AtomicUsize,
}

/// The newest modification time of the files under `dir`.
fn newest(dir: &Path) -> SystemTime {
    let mut latest = SystemTime::UNIX_EPOCH;
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        let time = if path.is_dir() {
            newest(&path)
        } else {
            entry
                .metadata()
                .and_then(|m| m.modified())
                .unwrap_or(SystemTime::UNIX_EPOCH)
        };
        latest = latest.max(time);
    }
    latest
}

/// The workspace's `taskdeck` binary, checked to be newer than the sources it is built from.
fn binary() -> PathBuf {
    let exe = std::env::current_exe().expect("the test's path");
    // target/debug/deps/remote_contract-HASH -> target/debug/taskdeck
    let bin = exe
        .parent()
        .and_then(Path::parent)
        .expect("the test runs from target/PROFILE/deps")
        .join(format!("taskdeck{}", std::env::consts::EXE_SUFFIX));
    let built = std::fs::metadata(&bin).and_then(|m| m.modified()).ok();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let sources = ["src", "crates/server/src", "crates/engine/src"]
        .iter()
        .map(|d| newest(&src.join(d)))
        .max()
        .unwrap();
    match built {
        Some(built) if built >= sources => bin,
        _ => panic!(
            "{} is missing or older than its sources: build it first with \
             `cargo build -p taskdeck` (`cargo test --workspace` does)",
            bin.display()
        ),
    }
}

impl Taskdeck {
    /// Starts `taskdeck serve` in a new temp dir and waits until it listens.
    pub async fn start() -> Taskdeck {
        let dir = tempfile::tempdir().unwrap();
        let (child, url, admin) = Self::serve(dir.path(), 0).await;
        Taskdeck {
            _child: child,
            url,
            admin,
            dir,
            made: AtomicUsize::new(0),
        }
    }

    /// Kills the server (no clean shutdown) and starts it again on the same directory and
    /// port, as a restarted Taskdeck on its usual port.
    #[allow(dead_code)] // Not every test restarts Taskdeck.
    pub async fn restart(&mut self) {
        self.stop().await;
        self.start_again().await;
    }

    /// Kills the server (no clean shutdown) and waits until it is gone: Taskdeck is down.
    #[allow(dead_code)] // Not every test stops Taskdeck.
    pub async fn stop(&mut self) {
        self._child.kill().await.unwrap();
    }

    /// Starts the server again on the same directory and port, after [`Taskdeck::stop`].
    #[allow(dead_code)] // Not every test stops Taskdeck.
    pub async fn start_again(&mut self) {
        let port: u16 = self.url.rsplit(':').next().unwrap().parse().unwrap();
        let (child, url, admin) = Self::serve(self.dir.path(), port).await;
        (self._child, self.url, self.admin) = (child, url, admin);
    }

    /// Starts `taskdeck serve` on `dir` and `port` (0: any free one): the child, its URL and
    /// the admin's token.
    async fn serve(dir: &Path, port: u16) -> (Child, String, String) {
        let mut child = Command::new(binary())
            .arg("serve")
            .args(["--port", &port.to_string(), "--data-dir"])
            .arg(dir.join("data"))
            .arg("--config-dir")
            .arg(dir.join("cfg"))
            .env("RUST_LOG", "warn")
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .expect("spawn taskdeck serve");
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let url = tokio::time::timeout(Duration::from_secs(20), async {
            while let Some(line) = lines.next_line().await.unwrap() {
                if let Some(port) =
                    line.strip_prefix("Taskdeck is running headless on http://127.0.0.1:")
                {
                    return format!("http://127.0.0.1:{}", port.trim());
                }
            }
            panic!("taskdeck serve exited before listening");
        })
        .await
        .expect("taskdeck serve did not listen within 20 s");
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        let admin = std::fs::read_to_string(dir.join("cfg/admin-token"))
            .unwrap()
            .trim()
            .to_string();
        (child, url, admin)
    }

    /// The token of a new principal `host-N`, made with `taskdeck token create` on the
    /// server's data dir.
    pub fn fresh_token(&self) -> String {
        let name = format!("host-{}", self.made.fetch_add(1, Ordering::Relaxed));
        let out = std::process::Command::new(binary())
            .args(["token", "create", &name, "--data-dir"])
            .arg(self.dir.path().join("data"))
            .output()
            .expect("run taskdeck token create");
        assert!(
            out.status.success(),
            "token create failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    }
}
