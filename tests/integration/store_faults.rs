//! Store faults (issue #17): a damaged store is refused at start with the way out, `taskdeck
//! doctor` passes a sound data dir and names what is wrong with a broken one, `taskdeck
//! backup` copies a store that is being written (every task acknowledged before it began is
//! in the copy) and `taskdeck restore` puts it back, and a full disk refuses writes with
//! `disk_full` while reads go on, then writes resume by themselves once there is space.

use std::{
    io::{Seek, SeekFrom, Write},
    path::{Path, PathBuf},
    process::{Output, Stdio},
    time::{Duration, Instant},
};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};

use crate::harness::{BIN, LegacySession, Server, stop_cleanly};

/// Runs `taskdeck ARGS --data-dir DIR/data --config-dir DIR/cfg`.
fn taskdeck(dir: &Path, args: &[&str]) -> Output {
    // A home of its own: doctor reads the MCP clients' files there.
    std::process::Command::new(BIN)
        .args(args)
        .arg("--data-dir")
        .arg(dir.join("data"))
        .arg("--config-dir")
        .arg(dir.join("cfg"))
        .env("HOME", dir.join("home"))
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("CODEX_HOME")
        .output()
        .unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Creates an external job through `/v1/jobs`; its task id.
async fn job(s: &Server, name: &str) -> String {
    let (status, body) = s
        .v1_post(
            Some(&s.admin),
            "/v1/jobs",
            json!({"external": {"name": name}}),
        )
        .await;
    assert!(status.is_success(), "{status} {body}");
    body["taskId"].as_str().unwrap().to_string()
}

/// The finding of check `name` in a `taskdeck doctor --json` report.
fn finding(report: &Value, name: &str) -> Value {
    report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["check"] == name)
        .unwrap_or_else(|| panic!("no {name} check in {report}"))
        .clone()
}

/// The admin's `/v1/events` stream, open.
async fn events(s: &Server) -> reqwest::Response {
    let resp = s
        .http
        .get(s.url("/v1/events?keepAlive=false"))
        .bearer_auth(&s.admin)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    resp
}

/// `taskdeck backup` of `s`'s store to `dest`; asserts success.
fn backup(dir: &Path, dest: &Path) -> String {
    let out = taskdeck(dir, &["backup", dest.to_str().unwrap()]);
    assert!(out.status.success(), "backup: {}", text(&out.stderr));
    text(&out.stdout)
}

/// The task ids in the SQLite file at `path`.
fn ids_in(path: &Path) -> Vec<String> {
    let conn = rusqlite::Connection::open(path).unwrap();
    let mut stmt = conn.prepare("SELECT task_id FROM tasks").unwrap();
    stmt.query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

#[tokio::test]
async fn a_backup_taken_while_writing_holds_every_acknowledged_task_and_restores() {
    let tmp = tempfile::tempdir().unwrap();
    let mut s = Server::start_in(tmp.path(), &[]).await;
    let mut acked = Vec::new();
    for i in 0..50 {
        acked.push(job(&s, &format!("before-{i}")).await);
    }
    // Writers keep creating tasks while the backup runs.
    let writer = {
        let (url, token) = (s.url("/v1/jobs"), s.admin.clone());
        tokio::spawn(async move {
            let http = reqwest::Client::new();
            for i in 0..400 {
                let r = http
                    .post(&url)
                    .bearer_auth(&token)
                    .json(&json!({"external": {"name": format!("during-{i}")}}))
                    .send()
                    .await
                    .unwrap();
                assert!(r.status().is_success());
            }
        })
    };
    tokio::time::sleep(Duration::from_millis(50)).await;
    let dest = tmp.path().join("copy.sqlite3");
    let dir = tmp.path().to_path_buf();
    let printed = {
        let dest = dest.clone();
        tokio::task::spawn_blocking(move || backup(&dir, &dest))
            .await
            .unwrap()
    };
    writer.await.unwrap();
    assert!(printed.starts_with(dest.to_str().unwrap()), "{printed}");
    assert!(printed.contains(" tasks"), "{printed}");
    let copied = ids_in(&dest);
    for id in &acked {
        assert!(
            copied.contains(id),
            "acknowledged task {id} missing from the backup"
        );
    }
    let tasks: usize = printed
        .split('\t')
        .nth(2)
        .unwrap()
        .trim()
        .trim_end_matches(" tasks")
        .parse()
        .unwrap();
    assert_eq!(tasks, copied.len());

    // An existing file is not overwritten without --force.
    let again = taskdeck(tmp.path(), &["backup", dest.to_str().unwrap()]);
    assert_eq!(again.status.code(), Some(1));
    assert!(
        text(&again.stderr).contains("--force"),
        "{}",
        text(&again.stderr)
    );
    assert!(
        taskdeck(tmp.path(), &["backup", dest.to_str().unwrap(), "--force"])
            .status
            .success()
    );
    let copied = ids_in(&dest);

    // Restore refuses while Taskdeck runs, then puts the copy back once it is stopped.
    let refused = taskdeck(tmp.path(), &["restore", dest.to_str().unwrap()]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(
        text(&refused.stderr).contains("stop it first"),
        "{}",
        text(&refused.stderr)
    );
    let later = job(&s, "after the backup").await;
    s.kill().await;
    // A restore that fails leaves the store in place, and the record that its last run did not
    // stop cleanly (so the next start still checks it whole); one that succeeds clears it.
    let lock_file = tmp.path().join("data/taskdeck.lock");
    let state = || std::fs::read_to_string(&lock_file).unwrap();
    assert!(state().starts_with("running"), "{}", state());
    let not_a_store = tmp.path().join("not-a-store");
    std::fs::write(&not_a_store, "not SQLite").unwrap();
    let failed = taskdeck(tmp.path(), &["restore", not_a_store.to_str().unwrap()]);
    assert_eq!(failed.status.code(), Some(1), "{}", text(&failed.stderr));
    assert!(state().starts_with("running"), "{}", state());
    // The store itself (by any path to it) is no backup: refused, nothing moved aside.
    let itself = tmp.path().join("data/../data/taskdeck.sqlite3");
    let refused = taskdeck(tmp.path(), &["restore", itself.to_str().unwrap()]);
    assert_eq!(refused.status.code(), Some(1), "{}", text(&refused.stderr));
    assert!(
        text(&refused.stderr).contains("is the store itself"),
        "{}",
        text(&refused.stderr)
    );
    let aside = std::fs::read_dir(tmp.path().join("data"))
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .contains("before-restore")
        })
        .count();
    assert_eq!(aside, 0);
    let restored = taskdeck(tmp.path(), &["restore", dest.to_str().unwrap()]);
    assert_eq!(state(), "stopped\n");
    assert!(restored.status.success(), "{}", text(&restored.stderr));
    assert!(
        text(&restored.stderr).contains("moved to")
            && text(&restored.stderr).contains("one revoked since works again"),
        "{}",
        text(&restored.stderr)
    );
    let s = Server::start_in(tmp.path(), &[]).await;
    for id in copied.iter().take(20).chain(acked.iter().take(5)) {
        let (status, _) = s.v1_get(Some(&s.admin), &format!("/v1/tasks/{id}")).await;
        assert_eq!(status, 200, "restored task {id}");
    }
    let (status, _) = s
        .v1_get(Some(&s.admin), &format!("/v1/tasks/{later}"))
        .await;
    assert_eq!(
        status, 404,
        "a task made after the backup is gone after the restore"
    );
    // Two restores in a row (within one second): each store replaced is kept, under its own name.
    let mut s = s;
    s.kill().await;
    let asides = || {
        std::fs::read_dir(tmp.path().join("data"))
            .unwrap()
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter(|n| n.contains(".before-restore-") && !n.ends_with("-wal"))
            .count()
    };
    let before = asides();
    for _ in 0..2 {
        let again = taskdeck(tmp.path(), &["restore", dest.to_str().unwrap()]);
        assert!(again.status.success(), "{}", text(&again.stderr));
    }
    assert_eq!(asides(), before + 2, "each replaced store is kept");
}

/// Overwrites page `page` (1-based, 4096 bytes) of the file at `path` with garbage.
fn damage_page(path: &Path, page: u64) {
    let mut f = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    f.seek(SeekFrom::Start((page - 1) * 4096)).unwrap();
    f.write_all(&[0xA5; 4096]).unwrap();
}

/// A data dir in `tmp` whose store is a sound copy (made with `taskdeck backup`) with 30 tasks.
async fn stopped_store(tmp: &Path) -> PathBuf {
    let source = tmp.join("source");
    let mut s = Server::start_in(&source, &[]).await;
    for i in 0..30 {
        job(&s, &format!("t{i}")).await;
    }
    let copy = tmp.join("copy.sqlite3");
    backup(&source, &copy);
    s.kill().await;
    let dir = tmp.join("damaged");
    std::fs::create_dir_all(dir.join("data")).unwrap();
    std::fs::copy(&copy, dir.join("data/taskdeck.sqlite3")).unwrap();
    dir
}

#[tokio::test]
async fn a_damaged_store_is_refused_with_the_way_out_and_doctor_names_it() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = stopped_store(tmp.path()).await;
    let store = dir.join("data/taskdeck.sqlite3");
    // Sound: doctor passes every check (nothing running, nothing else on the default port is
    // not guaranteed, so look at the store checks).
    let sound = taskdeck(&dir, &["doctor", "--json"]);
    let report: Value = serde_json::from_slice(&sound.stdout).unwrap();
    assert_eq!(finding(&report, "store")["ok"], true, "{report}");
    assert_eq!(finding(&report, "schema")["ok"], true, "{report}");

    let pages = std::fs::metadata(&store).unwrap().len() / 4096;
    assert!(pages > 4, "{pages} pages");
    damage_page(&store, pages - 1);
    let out = std::process::Command::new(BIN)
        .args(["serve", "--port", "0", "--data-dir"])
        .arg(dir.join("data"))
        .arg("--config-dir")
        .arg(dir.join("cfg"))
        .env("RUST_LOG", "warn")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let said = text(&out.stderr);
    for part in [
        "damaged",
        store.to_str().unwrap(),
        "backup",
        "taskdeck doctor",
        "moving the file aside",
    ] {
        assert!(said.contains(part), "missing {part:?} in: {said}");
    }
    assert!(!text(&out.stdout).contains("running"), "it must not start");
    // A refused start is no run: the lock file says what it said before (here: nothing, no
    // Taskdeck ever ran on this data dir), not that one stopped uncleanly.
    assert!(
        !dir.join("data/taskdeck.lock").exists(),
        "{:?}",
        std::fs::read_to_string(dir.join("data/taskdeck.lock"))
    );

    let doctor = taskdeck(&dir, &["doctor"]);
    assert_eq!(doctor.status.code(), Some(1));
    let lines = text(&doctor.stdout);
    assert!(
        lines
            .lines()
            .any(|l| l.starts_with("problem  store:") && l.contains("restore")),
        "{lines}"
    );
    let json: Value =
        serde_json::from_slice(&taskdeck(&dir, &["doctor", "--json"]).stdout).unwrap();
    assert_eq!(json["ok"], false);
    assert_eq!(finding(&json, "store")["ok"], false);

    // A backup of it is refused, and leaves nothing behind: a copy that cannot be restored
    // would be found out only when it is needed.
    let dest = tmp.path().join("of-damaged.sqlite3");
    let out = taskdeck(&dir, &["backup", dest.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    let said = text(&out.stderr);
    assert!(
        said.contains("is damaged") && said.contains("no backup was made"),
        "{said}"
    );
    assert!(!dest.exists());
    assert!(!tmp.path().join(".of-damaged.sqlite3.partial").exists());
}

/// An empty store file where the last run stopped cleanly (so with tables and tasks in the
/// file) is refused, by `serve` and by `taskdeck token`: opening it would start an empty store
/// and say nothing of the tasks that are gone.
#[tokio::test]
async fn an_emptied_store_is_refused_and_moving_it_aside_starts_anew() {
    let tmp = tempfile::tempdir().unwrap();
    let mut s = Server::start_in(tmp.path(), &[]).await;
    job(&s, "gone").await;
    s.kill().await;
    // As a clean stop leaves it (the harness's stop is a kill).
    std::fs::write(tmp.path().join("data/taskdeck.lock"), "stopped\n").unwrap();
    let store = tmp.path().join("data/taskdeck.sqlite3");
    for suffix in ["-wal", "-shm"] {
        let _ = std::fs::remove_file(tmp.path().join(format!("data/taskdeck.sqlite3{suffix}")));
    }
    std::fs::File::create(&store).unwrap();
    let token = taskdeck(tmp.path(), &["token", "create", "someone"]);
    assert_eq!(token.status.code(), Some(1), "{}", text(&token.stdout));
    assert!(
        text(&token.stderr).contains("the file is empty"),
        "{}",
        text(&token.stderr)
    );
    assert_eq!(
        std::fs::metadata(&store).unwrap().len(),
        0,
        "no tables were made in it"
    );
    let out = std::process::Command::new(BIN)
        .args(["serve", "--port", "0", "--data-dir"])
        .arg(tmp.path().join("data"))
        .arg("--config-dir")
        .arg(tmp.path().join("cfg"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    let said = text(&out.stderr);
    for part in [
        "the file is empty",
        "stopped cleanly with a store in it",
        "backup",
        "moving the file aside",
    ] {
        assert!(said.contains(part), "missing {part:?} in: {said}");
    }
    // The way out it gives: moved aside, the next start makes a new store.
    std::fs::rename(&store, tmp.path().join("emptied.sqlite3")).unwrap();
    let s = Server::start_in(tmp.path(), &[]).await;
    let (status, list) = s.v1_get(Some(&s.admin), "/v1/tasks").await;
    assert_eq!(status, 200, "{list}");
    assert_eq!(list["tasks"].as_array().unwrap().len(), 0, "{list}");
}

#[tokio::test]
async fn doctor_passes_a_running_taskdeck_and_finds_a_readable_token_file() {
    let tmp = tempfile::tempdir().unwrap();
    let s = Server::start_in(tmp.path(), &[]).await;
    job(&s, "one").await;
    let out = taskdeck(tmp.path(), &["doctor"]);
    let lines = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{lines}");
    assert_eq!(lines.lines().count(), 10, "{lines}");
    assert!(lines.contains("ok       servers: "), "{lines}");
    assert!(lines.contains("ok       disk: writable, "), "{lines}");
    assert!(lines.contains("ok       policy: "), "{lines}");
    assert!(
        lines.contains("ok       clients: no MCP client's file names Taskdeck"),
        "{lines}"
    );
    assert!(
        lines.contains(&format!("port: {} answers GET /v1/me", s.port)),
        "{lines}"
    );
    assert!(
        lines.contains(&format!("pid {}", s.child.id().unwrap())),
        "{lines}"
    );

    // A servers.json that is not valid serves no upstream: doctor says so.
    let servers = tmp.path().join("cfg/servers.json");
    std::fs::write(&servers, "{\"servers\": {}} junk").unwrap();
    let out = taskdeck(tmp.path(), &["doctor"]);
    let lines = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{lines}");
    assert!(lines.contains("problem  servers: "), "{lines}");
    std::fs::remove_file(&servers).unwrap();

    // A client written for another port fails to connect: doctor names it and the fix.
    let cursor = tmp.path().join("home/.cursor/mcp.json");
    std::fs::create_dir_all(cursor.parent().unwrap()).unwrap();
    let other = if s.port == 4747 { 4748 } else { 4747 };
    let entry = |port: u16| {
        json!({"mcpServers": {"taskdeck": {"url": format!("http://127.0.0.1:{port}/mcp"),
            "headers": {"Authorization": "Bearer td_x"}}, "fs": {"command": "npx"}}})
        .to_string()
    };
    std::fs::write(&cursor, entry(other)).unwrap();
    let out = taskdeck(tmp.path(), &["doctor"]);
    let lines = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{lines}");
    assert!(
        lines.contains(&format!(
            "problem  clients: Taskdeck runs on port {}, but cursor reaches it elsewhere: \
             cursor's {} (entry \"taskdeck\") on port {other} -> in that entry's URL, make it \
             http://…:{}/mcp",
            s.port,
            cursor.display(),
            s.port
        )),
        "{lines}"
    );
    // Another local MCP server's /mcp on its own port is not Taskdeck; a file its client
    // cannot read is said.
    std::fs::write(
        &cursor,
        json!({"mcpServers": {"playwright": {"url": format!("http://localhost:{other}/mcp")}}})
            .to_string(),
    )
    .unwrap();
    let lines = text(&taskdeck(tmp.path(), &["doctor"]).stdout);
    assert!(
        lines.contains("ok       clients: no MCP client's file"),
        "{lines}"
    );
    std::fs::write(&cursor, "{\"mcpServers\": {").unwrap();
    let lines = text(&taskdeck(tmp.path(), &["doctor"]).stdout);
    assert!(
        lines.contains("problem  clients: not valid, so its client cannot read"),
        "{lines}"
    );
    std::fs::write(&cursor, entry(s.port)).unwrap();
    let out = taskdeck(tmp.path(), &["doctor"]);
    let lines = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{lines}");
    assert!(
        lines.contains(&format!(
            "ok       clients: cursor reaches it on port {}",
            s.port
        )),
        "{lines}"
    );

    use std::os::unix::fs::PermissionsExt;
    let token_file = tmp.path().join("cfg/admin-token");
    std::fs::set_permissions(&token_file, std::fs::Permissions::from_mode(0o644)).unwrap();
    let out = taskdeck(tmp.path(), &["doctor", "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    let token = finding(&json, "admin token");
    assert_eq!(token["ok"], false, "{json}");
    assert!(
        token["fix"].as_str().unwrap().contains("chmod 600"),
        "{json}"
    );
}

/// Mounts a tmpfs of `mib` MiB at `at` (the test runs as root, or `sudo -n` works).
fn mount_tmpfs(at: &Path, mib: u32) -> Result<(), String> {
    std::fs::create_dir_all(at).unwrap();
    let uid = unsafe { libc::getuid() };
    let opts = format!("size={mib}m,uid={uid},mode=0700");
    let mut cmd = if uid == 0 {
        std::process::Command::new("mount")
    } else {
        let mut c = std::process::Command::new("sudo");
        c.args(["-n", "mount"]);
        c
    };
    let out = cmd
        .args(["-t", "tmpfs", "-o", &opts, "tmpfs"])
        .arg(at)
        .output()
        .map_err(|e| e.to_string())?;
    match out.status.success() {
        true => Ok(()),
        false => Err(text(&out.stderr)),
    }
}

/// Unmounts `at` when dropped.
struct Mounted(PathBuf);

impl Drop for Mounted {
    fn drop(&mut self) {
        let program = if unsafe { libc::getuid() } == 0 {
            "umount"
        } else {
            "sudo"
        };
        let mut cmd = std::process::Command::new(program);
        if program == "sudo" {
            cmd.args(["-n", "umount"]);
        }
        let _ = cmd.arg("-l").arg(&self.0).status();
    }
}

/// A 24 MiB tmpfs mounted as `dir/data` (unmounted when the guard drops); panics saying what is
/// needed when it cannot be mounted.
fn small_data_dir(dir: &Path) -> (PathBuf, Mounted) {
    let data = dir.join("data");
    if let Err(e) = mount_tmpfs(&data, 24) {
        panic!(
            "this test needs a small file system: mounting a tmpfs needs root or `sudo -n` \
             ({e}); run the tests as root or with passwordless sudo (scripts/setup.sh)"
        );
    }
    (data.clone(), Mounted(data))
}

/// Writes `dir/filler` until the file system is full; returns its path.
fn fill(dir: &Path) -> PathBuf {
    fill_as(dir, "filler")
}

/// Writes `dir/name` until the file system is full; returns its path.
fn fill_as(dir: &Path, name: &str) -> PathBuf {
    let path = dir.join(name);
    let mut f = std::fs::File::create(&path).unwrap();
    let chunk = vec![7u8; 64 * 1024];
    loop {
        if f.write_all(&chunk).is_err() {
            break;
        }
    }
    // Smaller pieces take the last free blocks.
    while f.write_all(&[7u8; 512]).is_ok() {}
    let _ = f.sync_all();
    path
}

/// Runs `taskdeck serve --port 0 EXTRA` on `dir`'s data and config dirs, for a start expected to
/// be refused: its output once it exits (the test fails if it is still running after 30 s).
async fn serve_until_it_exits(dir: &Path, extra: &[&str]) -> Output {
    let started = tokio::process::Command::new(BIN)
        .args(["serve", "--port", "0", "--data-dir"])
        .arg(dir.join("data"))
        .arg("--config-dir")
        .arg(dir.join("cfg"))
        .args(extra)
        .kill_on_drop(true)
        .output();
    tokio::time::timeout(Duration::from_secs(30), started)
        .await
        .expect("a start on a full disk must not hang")
        .unwrap()
}

/// Asserts that `out`, a `taskdeck serve` run, failed saying the disk is full and what to do;
/// returns that last word (the log lines before it may quote the writer's own errors).
fn refused_for_a_full_disk(out: &Output) -> String {
    let err = text(&out.stderr);
    assert!(!out.status.success(), "{err}");
    let last = err
        .lines()
        .rfind(|l| l.starts_with("taskdeck: "))
        .unwrap_or_default();
    assert!(
        last.contains("cannot start: the disk holding the task store is full")
            && last.contains("free some space, then start Taskdeck again"),
        "{err}"
    );
    last.to_string()
}

/// A start on a full disk, with tasks the last run left running (each must be recorded as
/// failed, which needs a write), stops with what to do, not with the running server's "writes
/// resume by themselves".
#[tokio::test]
async fn a_start_on_a_full_disk_says_to_free_space_and_start_again() {
    let tmp = tempfile::tempdir().unwrap();
    let (data, _mounted) = small_data_dir(tmp.path());
    let mut s = Server::start_in(tmp.path(), &["--conformance-fixtures"]).await;
    for _ in 0..20 {
        let rpc = s
            .rpc(
                Some(&s.admin),
                "tools/call",
                json!({"name": "slow_compute", "arguments": {"seconds": 600, "label": "left"}}),
                true,
            )
            .await;
        assert!(rpc.body.get("result").is_some(), "{:?}", rpc.body);
    }
    s.kill().await;
    let index_inode = || {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(data.join("search.sqlite3"))
            .map(|m| m.ino())
            .ok()
    };
    let index_before = index_inode();
    assert!(index_before.is_some());
    let lock_before = std::fs::read_to_string(data.join("taskdeck.lock")).unwrap();
    let filler = fill(&data);
    let out = serve_until_it_exits(tmp.path(), &["--conformance-fixtures"]).await;
    let last = refused_for_a_full_disk(&out);
    assert!(!last.contains("resume by themselves"), "{last}");
    // The search index was not thrown away for it (a new file would not have fitted either).
    assert_eq!(index_inode(), index_before, "{last}");
    // The refused start is no run: the lock file says what the last run left (not a crash of
    // the refused start, which would turn off the check for an emptied store).
    assert_eq!(
        std::fs::read_to_string(data.join("taskdeck.lock")).unwrap(),
        lock_before
    );
    // With space again, the next start records them and serves.
    std::fs::remove_file(filler).unwrap();
    let s = Server::start_in(tmp.path(), &["--conformance-fixtures"]).await;
    let (status, list) = s.v1_get(Some(&s.admin), "/v1/tasks?status=failed").await;
    assert_eq!(status, 200, "{list}");
    assert_eq!(list["tasks"].as_array().unwrap().len(), 20, "{list}");
}

#[tokio::test]
async fn a_full_disk_refuses_writes_with_disk_full_and_they_resume_when_space_returns() {
    let tmp = tempfile::tempdir().unwrap();
    let (data, _mounted) = small_data_dir(tmp.path());
    let mut s = Server::start_in(tmp.path(), &["--conformance-fixtures"]).await;
    let before = job(&s, "before the disk filled").await;
    let mut legacy = LegacySession::open(&s, &s.admin).await;
    let filler = fill(&data);

    // Writes fail with a clear reason: /v1 with 503 problem+json, /mcp with a JSON-RPC error.
    let mut refused = 0;
    let mut acked_while_full = Vec::new();
    for i in 0..20 {
        let resp = s
            .http
            .post(s.url("/v1/jobs"))
            .bearer_auth(&s.admin)
            .json(&json!({"external": {"name": format!("full-{i}")}}))
            .send()
            .await
            .unwrap();
        let status = resp.status();
        let ctype = resp.headers()["content-type"].to_str().unwrap().to_string();
        let body: Value = resp.json().await.unwrap();
        if status.is_success() {
            // The WAL may still have had room for a frame or two.
            acked_while_full.push(body["taskId"].as_str().unwrap().to_string());
            continue;
        }
        assert_eq!(status, 503, "{body}");
        assert_eq!(ctype, "application/problem+json");
        assert_eq!(body["reason"], "disk_full", "{body}");
        assert!(body["detail"].as_str().unwrap().contains("full"), "{body}");
        refused += 1;
    }
    assert!(refused > 0, "no write was refused on a full disk");
    // So is a new agent token (a write like any other; the WAL may still take one or two).
    let mut token_refused = false;
    for i in 0..10 {
        let (status, body) = s
            .v1_post(
                Some(&s.admin),
                "/v1/agents",
                json!({"name": format!("made-while-full-{i}")}),
            )
            .await;
        if status == 201 {
            continue;
        }
        assert_eq!(status, 503, "{body}");
        assert_eq!(body["reason"], "disk_full", "{body}");
        token_refused = true;
        break;
    }
    assert!(token_refused, "no agent token was refused on a full disk");
    // Doctor says so too.
    let doctor = taskdeck(tmp.path(), &["doctor", "--json"]);
    let report: Value = serde_json::from_slice(&doctor.stdout).unwrap();
    let disk = finding(&report, "disk");
    assert_eq!(disk["ok"], false, "{report}");
    assert!(
        disk["detail"].as_str().unwrap().starts_with("full"),
        "{disk}"
    );
    // A watcher that connects now, having written nothing, is told why writes are refused.
    let full = crate::api::read_until(events(&s).await, |f| {
        f.iter().any(|(_, e, _)| e.as_deref() == Some("store"))
    })
    .await;
    let (id, _, said) = full
        .iter()
        .find(|(_, e, _)| e.as_deref() == Some("store"))
        .unwrap();
    assert_eq!(said["diskFull"], true, "{said}");
    assert!(
        said["since"].as_str().is_some_and(|t| t.ends_with('Z')),
        "{said}"
    );
    assert_eq!(id, &None, "a store event has no id: Last-Event-ID stays");
    // A failed commit can hand a few blocks back (the WAL's partial frames): fill them again.
    let filler_2 = fill_as(&data, "filler-2");
    let mut rpc_refused = false;
    for _ in 0..10 {
        let rpc = s
            .rpc(
                Some(&s.admin),
                "tools/call",
                json!({"name": "slow_compute", "arguments": {"seconds": 60, "label": "full"}}),
                true,
            )
            .await;
        if let Some(task) = rpc.body.get("result") {
            acked_while_full.push(task["taskId"].as_str().unwrap().to_string());
            continue;
        }
        assert_eq!(
            rpc.body["error"]["data"]["reason"], "disk_full",
            "{:?}",
            rpc.body
        );
        assert_eq!(rpc.error_code(), -32603);
        rpc_refused = true;
        break;
    }
    assert!(rpc_refused, "no tools/call was refused on a full disk");
    // The 2025-11-25 path: a task-augmented tools/call on a 2025-11-25 session says it too.
    let mut legacy_refused = false;
    for _ in 0..10 {
        let reply = legacy
            .request(
                "tools/call",
                json!({"name": "slow_compute", "arguments": {"seconds": 60, "label": "full"},
                       "task": {"ttl": 60000}}),
            )
            .await;
        if let Some(created) = reply.get("result") {
            acked_while_full.push(created["task"]["taskId"].as_str().unwrap().to_string());
            continue;
        }
        assert_eq!(reply["error"]["data"]["reason"], "disk_full", "{reply}");
        assert_eq!(reply["error"]["code"], -32603, "{reply}");
        legacy_refused = true;
        break;
    }
    assert!(
        legacy_refused,
        "no 2025-11-25 task-augmented tools/call was refused on a full disk"
    );

    // Reads keep working.
    let (status, task) = s
        .v1_get(Some(&s.admin), &format!("/v1/tasks/{before}"))
        .await;
    assert_eq!(status, 200, "{task}");
    let (status, _) = s.v1_get(Some(&s.admin), "/v1/tasks?limit=5").await;
    assert_eq!(status, 200);

    // Space returns: a watcher learns it without anyone writing, and writes succeed again
    // without a restart.
    let watcher = events(&s).await;
    std::fs::remove_file(&filler).unwrap();
    std::fs::remove_file(&filler_2).unwrap();
    let told = crate::api::read_until(watcher, |f| {
        f.iter()
            .any(|(_, e, d)| e.as_deref() == Some("store") && d["diskFull"] == false)
    })
    .await;
    assert!(
        told.iter()
            .any(|(_, e, d)| e.as_deref() == Some("store") && d["diskFull"] == true),
        "the stream said the disk was full as it opened: {told:?}"
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    let after = loop {
        let (status, body) = s
            .v1_post(
                Some(&s.admin),
                "/v1/jobs",
                json!({"external": {"name": "after"}}),
            )
            .await;
        if status.is_success() {
            break body["taskId"].as_str().unwrap().to_string();
        }
        assert!(
            Instant::now() < deadline,
            "writes did not resume: {status} {body}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };

    // Nothing acknowledged is lost, across a restart too.
    s.kill().await;
    let s = Server::start_in(tmp.path(), &[]).await;
    for id in std::iter::once(&before)
        .chain(acked_while_full.iter())
        .chain(std::iter::once(&after))
    {
        let (status, _) = s.v1_get(Some(&s.admin), &format!("/v1/tasks/{id}")).await;
        assert_eq!(status, 200, "acknowledged task {id} lost");
    }
}

/// A run that ends while the disk is full cannot store its outcome; the task must not stay
/// `working` for good: the outcome is stored once there is space, without a restart.
#[tokio::test]
async fn a_run_that_ends_while_the_disk_is_full_settles_once_space_returns() {
    let tmp = tempfile::tempdir().unwrap();
    let (data, _mounted) = small_data_dir(tmp.path());
    let s = Server::start_in(tmp.path(), &["--conformance-fixtures"]).await;
    let rpc = s
        .rpc(
            Some(&s.admin),
            "tools/call",
            json!({"name": "slow_compute", "arguments": {"seconds": 3, "label": "during"}}),
            true,
        )
        .await;
    let id = rpc.body["result"]["taskId"].as_str().unwrap().to_string();
    let fillers = fill_until_refused(&s, &data).await;
    // The run ends meanwhile (3 s after it began); its outcome cannot be stored.
    tokio::time::sleep(Duration::from_secs(4)).await;
    let (status, task) = s.v1_get(Some(&s.admin), &format!("/v1/tasks/{id}")).await;
    assert_eq!(status, 200, "{task}");
    assert_eq!(
        task["task"]["status"], "working",
        "the settle was not refused: {task}"
    );

    let settled = free_and_wait_settled(&s, fillers, &id).await;
    assert_eq!(settled["task"]["status"], "completed", "{settled}");
    // The result the run computed while the disk was full, as a polling agent gets it.
    let get = s
        .rpc(Some(&s.admin), "tasks/get", json!({"taskId": id}), true)
        .await;
    assert_eq!(get.body["result"]["status"], "completed", "{:?}", get.body);
    assert!(
        get.body["result"]
            .to_string()
            .contains("Computed during in 3s"),
        "{:?}",
        get.body
    );
}

/// Fills the data dir `data` until a write is refused, then again (a failed commit can hand a
/// few blocks back); returns the fillers.
async fn fill_until_refused(s: &Server, data: &Path) -> Vec<PathBuf> {
    let mut fillers = vec![fill(data)];
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let resp = s
            .http
            .post(s.url("/v1/jobs"))
            .bearer_auth(&s.admin)
            .json(&json!({"external": {"name": "probe"}}))
            .send()
            .await
            .unwrap();
        if resp.status() == 503 {
            break;
        }
        assert!(Instant::now() < deadline, "the disk never filled");
        fillers.push(fill_as(data, &format!("filler-{}", fillers.len())));
    }
    fillers.push(fill_as(data, "filler-last"));
    fillers
}

/// Removes `fillers`, then waits (15 s at most) until task `id` is no longer `working`; its
/// `/v1/tasks/{id}` body.
async fn free_and_wait_settled(s: &Server, fillers: Vec<PathBuf>, id: &str) -> Value {
    for f in fillers {
        std::fs::remove_file(f).unwrap();
    }
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let (status, task) = s.v1_get(Some(&s.admin), &format!("/v1/tasks/{id}")).await;
        assert_eq!(status, 200, "{task}");
        if task["task"]["status"] != "working" {
            return task;
        }
        assert!(
            Instant::now() < deadline,
            "the task stayed working after space returned: {task}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// A run that ended before its ttlMs did, whose outcome waited for a full disk meanwhile, ends
/// with that outcome, not as expired, when the space returns after the ttlMs.
#[tokio::test]
async fn a_run_that_ended_before_its_ttl_keeps_its_result_through_a_full_disk() {
    let tmp = tempfile::tempdir().unwrap();
    let (data, _mounted) = small_data_dir(tmp.path());
    let s = Server::start_in(tmp.path(), &["--conformance-fixtures"]).await;
    let mut legacy = LegacySession::open(&s, &s.admin).await;
    let created = legacy
        .request(
            "tools/call",
            json!({"name": "slow_compute", "arguments": {"seconds": 3, "label": "ttlfull"},
                   "task": {"ttl": 5000}}),
        )
        .await;
    let id = created["result"]["task"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("{created}"))
        .to_string();
    let fillers = fill_until_refused(&s, &data).await;
    // The run ends at 3 s, the ttlMs at 5 s, both while the disk is full: neither is stored.
    tokio::time::sleep(Duration::from_secs(7)).await;
    let (_, task) = s.v1_get(Some(&s.admin), &format!("/v1/tasks/{id}")).await;
    assert_eq!(task["task"]["status"], "working", "{task}");
    let task = free_and_wait_settled(&s, fillers, &id).await;
    assert_eq!(task["task"]["status"], "completed", "{task}");
    assert_eq!(
        task["task"]["statusMessage"], "Computed ttlfull in 3s",
        "{task}"
    );
}

/// An external job's final report is acknowledged only once it is stored: on a full disk it
/// is refused (503 disk_full) and the job runs on, so the runner reports again.
#[tokio::test]
async fn an_external_jobs_result_is_refused_on_a_full_disk_not_lost() {
    let tmp = tempfile::tempdir().unwrap();
    let (data, _mounted) = small_data_dir(tmp.path());
    let s = Server::start_in(tmp.path(), &[]).await;
    let id = job(&s, "reports its result").await;
    let fillers = fill_until_refused(&s, &data).await;
    // A status message alone is refused too, not lost behind a 200 (the WAL may still take
    // one or two).
    let mut message_refused = false;
    for i in 0..10 {
        let (status, body) = s
            .v1_post(
                Some(&s.admin),
                &format!("/v1/jobs/{id}/report"),
                json!({"statusMessage": format!("phase {i}")}),
            )
            .await;
        if status == 200 {
            assert_eq!(
                body["task"]["statusMessage"],
                format!("phase {i}"),
                "{body}"
            );
            continue;
        }
        assert_eq!(status, 503, "{body}");
        assert_eq!(body["reason"], "disk_full", "{body}");
        message_refused = true;
        break;
    }
    assert!(
        message_refused,
        "no status message was refused on a full disk"
    );
    let report = json!({"result": {"content": [{"type": "text", "text": "important result"}]}});
    let (status, body) = s
        .v1_post(
            Some(&s.admin),
            &format!("/v1/jobs/{id}/report"),
            report.clone(),
        )
        .await;
    assert_eq!(status, 503, "{body}");
    assert_eq!(body["reason"], "disk_full", "{body}");
    let (_, task) = s.v1_get(Some(&s.admin), &format!("/v1/tasks/{id}")).await;
    assert_eq!(task["task"]["status"], "working", "{task}");

    for f in fillers {
        std::fs::remove_file(f).unwrap();
    }
    let (status, body) = s
        .v1_post(Some(&s.admin), &format!("/v1/jobs/{id}/report"), report)
        .await;
    assert!(status.is_success(), "{status} {body}");
    let (_, task) = s.v1_get(Some(&s.admin), &format!("/v1/tasks/{id}")).await;
    assert_eq!(
        task["task"]["status"], "completed",
        "stored when acknowledged: {task}"
    );
    assert_eq!(task["task"]["statusMessage"], "important result", "{task}");
}

/// A start on a full disk says so to watchers at once, before any write is refused; what it
/// could not open or write for want of room (the search index, the port the command-line tools
/// look for) it opens and writes once space returns, without a restart.
#[tokio::test]
async fn a_start_on_a_full_disk_tells_watchers_and_records_its_port_once_space_returns() {
    let tmp = tempfile::tempdir().unwrap();
    let (data, _mounted) = small_data_dir(tmp.path());
    let mut s = Server::start_in(tmp.path(), &[]).await;
    // A clean stop, so that the next start finds no log to empty (which would free space).
    stop_cleanly(&mut s).await;
    std::fs::remove_file(data.join("taskdeck.port")).unwrap();
    // The index's shared-memory file is gone (as after an older Taskdeck's stop, or when it
    // was removed; SQLite makes it again from the log): making it needs room, so the index
    // cannot be opened on the full disk (the store's files are kept by the stop).
    std::fs::remove_file(data.join("search.sqlite3-shm")).unwrap();
    let filler = fill(&data);
    let s = Server::start_in(tmp.path(), &[]).await;
    let recorded = || {
        std::fs::read_to_string(data.join("taskdeck.port"))
            .ok()
            .and_then(|t| t.trim().parse::<u16>().ok())
    };
    assert_eq!(recorded(), None, "the disk was not full");
    // The search index could not be opened (its log needs room): no indexer thread.
    let pid = s.child.id().unwrap();
    assert!(!threads_of(pid).iter().any(|t| t == "taskdeck-index"));
    let full = crate::api::read_until(events(&s).await, |f| {
        f.iter().any(|(_, e, _)| e.as_deref() == Some("store"))
    })
    .await;
    assert!(
        full.iter()
            .any(|(_, e, d)| e.as_deref() == Some("store") && d["diskFull"] == true),
        "{full:?}"
    );
    // Meanwhile the client commands say why they cannot find it, and what to do.
    let cli = |args: &[&str]| {
        std::process::Command::new(BIN)
            .args(args)
            .arg("--data-dir")
            .arg(&data)
            .arg("--config-dir")
            .arg(tmp.path().join("cfg"))
            .env_remove("TASKDECK_PORT")
            .env_remove("TASKDECK_TOKEN")
            .output()
            .unwrap()
    };
    let out = cli(&["tasks", "list"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("no port is recorded"),
        "{}",
        text(&out.stderr)
    );
    let out = cli(&["doctor"]);
    let port_line = text(&out.stdout)
        .lines()
        .find(|l| l.contains("port"))
        .map(String::from)
        .unwrap_or_else(|| text(&out.stdout));
    assert!(port_line.contains("its disk is full"), "{port_line}");
    // A one-shot command that must write says the disk is full, once, without the writer's log.
    let out = cli(&["token", "create", "while-full"]);
    assert_eq!(out.status.code(), Some(1));
    let said = text(&out.stderr);
    assert!(
        said.contains("is full") && said.contains("run this again"),
        "{said}"
    );
    assert!(
        !said.contains("ERROR") && !said.contains("by themselves"),
        "{said}"
    );
    std::fs::remove_file(filler).unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while recorded() != Some(s.port) {
        assert!(
            Instant::now() < deadline,
            "the port was not recorded once space returned: {:?}",
            recorded()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    // The index is opened and indexes again once there is room, without a restart.
    let deadline = Instant::now() + Duration::from_secs(10);
    while !threads_of(pid).iter().any(|t| t == "taskdeck-index") {
        assert!(
            Instant::now() < deadline,
            "the search index was not opened once space returned: {:?}",
            threads_of(pid)
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let made = job(&s, "findable after the disk was full").await;
    let (status, found) = s.v1_get(Some(&s.admin), "/v1/tasks?q=findable").await;
    assert_eq!(status, 200, "{found}");
    assert_eq!(found["tasks"][0]["taskId"], made.as_str(), "{found}");
    let out = std::process::Command::new(BIN)
        .args(["tasks", "list", "--json", "--data-dir"])
        .arg(&data)
        .arg("--config-dir")
        .arg(tmp.path().join("cfg"))
        .env_remove("TASKDECK_PORT")
        .env_remove("TASKDECK_TOKEN")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
}

/// A store whose shared-memory file is missing cannot be opened on a full disk (SQLite needs
/// room to make it and says "disk I/O error"): the start says the disk is full and what to do.
#[tokio::test]
async fn a_start_that_cannot_open_the_store_on_a_full_disk_says_the_disk_is_full() {
    let tmp = tempfile::tempdir().unwrap();
    let (data, _mounted) = small_data_dir(tmp.path());
    let mut s = Server::start_in(tmp.path(), &[]).await;
    stop_cleanly(&mut s).await;
    std::fs::remove_file(data.join("taskdeck.sqlite3-shm")).unwrap();
    let filler = fill(&data);
    let out = serve_until_it_exits(tmp.path(), &[]).await;
    refused_for_a_full_disk(&out);
    std::fs::remove_file(filler).unwrap();
    Server::start_in(tmp.path(), &[]).await;
}

/// `taskdeck run` whose command ends while the disk is full sends its result again until
/// Taskdeck records it (once space returns), also to a Taskdeck restarted meanwhile on another
/// port: the job ends with the command's exit code, not as "runner lost".
#[tokio::test]
async fn taskdeck_run_keeps_its_result_until_a_full_disk_takes_it() {
    let tmp = tempfile::tempdir().unwrap();
    let (data, _mounted) = small_data_dir(tmp.path());
    let s = Server::start_in(tmp.path(), &[]).await;
    let mut run = tokio::process::Command::new(BIN)
        .args(["run", "--name", "ends on a full disk", "--data-dir"])
        .arg(&data)
        .arg("--config-dir")
        .arg(tmp.path().join("cfg"))
        // The command ends once the test says so (the disk full by then).
        .args(["--", "sh", "-c"])
        .arg(format!(
            "while [ ! -e {} ]; do sleep 0.1; done; echo done; exit 3",
            tmp.path().join("end-now").display()
        ))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(run.stderr.take().unwrap()).lines();
    let first = stderr.next_line().await.unwrap().unwrap_or_default();
    let id = first
        .strip_prefix("taskdeck run: tracking as job ")
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("{first}"))
        .to_string();
    let fillers = fill_until_refused(&s, &data).await;
    std::fs::write(tmp.path().join("end-now"), "").unwrap();
    // The command ends now; its result is refused and sent again.
    let said = tokio::time::timeout(Duration::from_secs(15), stderr.next_line())
        .await
        .expect("taskdeck run said nothing of the refused result")
        .unwrap()
        .unwrap_or_default();
    assert!(said.contains("cannot record the job's end yet"), "{said}");
    let (_, task) = s.v1_get(Some(&s.admin), &format!("/v1/tasks/{id}")).await;
    assert_eq!(task["task"]["status"], "working", "{task}");
    // Taskdeck restarts meanwhile, on another port: the runner finds it through the data dir.
    let mut s = s;
    stop_cleanly(&mut s).await;
    for f in fillers {
        std::fs::remove_file(f).unwrap();
    }
    let s = Server::start_in(tmp.path(), &[]).await;
    let status = tokio::time::timeout(Duration::from_secs(20), run.wait())
        .await
        .expect("taskdeck run did not end once space returned")
        .unwrap();
    assert_eq!(status.code(), Some(3));
    let (_, task) = s.v1_get(Some(&s.admin), &format!("/v1/tasks/{id}")).await;
    assert_eq!(task["task"]["status"], "completed", "{task}");
    assert_eq!(
        task["task"]["result"]["structuredContent"]["exitCode"], 3,
        "{task}"
    );
}

/// `taskdeck run` whose job Taskdeck cannot start for a full disk says why, once however many
/// tries it makes, and runs the command untracked with its exit code.
#[tokio::test]
async fn taskdeck_run_says_once_that_a_full_disk_refused_its_job() {
    let tmp = tempfile::tempdir().unwrap();
    let (data, _mounted) = small_data_dir(tmp.path());
    let s = Server::start_in(tmp.path(), &[]).await;
    let mut waiting = Vec::new();
    for i in 0..4 {
        waiting.push(job(&s, &format!("cancelled on a full disk {i}")).await);
    }
    let _fillers = fill_until_refused(&s, &data).await;
    // A one-shot write from the command line says to run it again (Taskdeck's own writes
    // resume by themselves, not this command's).
    // (The log may still take a small write or two: a cancel taken is tried on another job.)
    let mut refused = None;
    for id in &waiting {
        let out = std::process::Command::new(BIN)
            .args(["tasks", "cancel", id, "--data-dir"])
            .arg(&data)
            .arg("--config-dir")
            .arg(tmp.path().join("cfg"))
            .env_remove("TASKDECK_PORT")
            .env_remove("TASKDECK_TOKEN")
            .output()
            .unwrap();
        if !out.status.success() {
            refused = Some(out);
            break;
        }
    }
    let out = refused.expect("the full disk took every cancel");
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("run this again once there is room"),
        "{}",
        text(&out.stderr)
    );
    let out = tokio::process::Command::new(BIN)
        .args(["run", "--data-dir"])
        .arg(&data)
        .arg("--config-dir")
        .arg(tmp.path().join("cfg"))
        .args(["--", "sh", "-c", "echo ran-anyway; exit 5"])
        .env_remove("TASKDECK_PORT")
        .env_remove("TASKDECK_TOKEN")
        .output()
        .await
        .unwrap();
    let said = text(&out.stderr);
    assert_eq!(out.status.code(), Some(5), "{said}");
    assert!(text(&out.stdout).contains("ran-anyway"));
    assert_eq!(said.matches("trying again").count(), 1, "{said}");
    assert_eq!(
        said.lines().filter(|l| l.contains("is full")).count(),
        1,
        "the reason said once: {said}"
    );
    assert!(
        said.contains("disk holding the task store is full"),
        "{said}"
    );
    assert!(said.contains("running the command without it"), "{said}");
}

/// The names of process `pid`'s threads (`/proc/PID/task/*/comm`).
fn threads_of(pid: u32) -> Vec<String> {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .map(|dir| {
            dir.flatten()
                .filter_map(|t| std::fs::read_to_string(t.path().join("comm")).ok())
                .map(|name| name.trim().to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// A runner that reports after its job's heartbeat lapsed while the disk was full learns that
/// the job ended and how; the end is stored once space returns.
#[tokio::test]
async fn a_report_after_a_lapsed_heartbeat_on_a_full_disk_says_the_job_ended() {
    let tmp = tempfile::tempdir().unwrap();
    let (data, _mounted) = small_data_dir(tmp.path());
    let s = Server::start_in(tmp.path(), &[]).await;
    let (status, body) = s
        .v1_post(
            Some(&s.admin),
            "/v1/jobs",
            json!({"external": {"name": "lapses", "heartbeatMs": 6000}}),
        )
        .await;
    assert!(status.is_success(), "{status} {body}");
    let id = body["taskId"].as_str().unwrap().to_string();
    let fillers = fill_until_refused(&s, &data).await;
    // A heartbeat (it writes nothing) starts the lapse with the disk full; the filling took
    // well under the 6 s of heartbeatMs (a 409 here would say it did not).
    let (status, body) = s
        .v1_post(Some(&s.admin), &format!("/v1/jobs/{id}/report"), json!({}))
        .await;
    assert_eq!(
        status, 200,
        "the heartbeat lapsed while the disk filled: {body}"
    );
    tokio::time::sleep(Duration::from_millis(7500)).await;
    // The runner's next report: a 409 whose detail is returned.
    let refused = || async {
        let (status, body) = s
            .v1_post(
                Some(&s.admin),
                &format!("/v1/jobs/{id}/report"),
                json!({"statusMessage": "still here"}),
            )
            .await;
        assert_eq!(status, 409, "{body}");
        body["detail"].as_str().unwrap_or_default().to_string()
    };
    let detail = refused().await;
    assert!(
        detail.contains("already ended") && detail.contains("Runner lost"),
        "{detail}"
    );
    let task = free_and_wait_settled(&s, fillers, &id).await;
    assert_eq!(task["task"]["status"], "failed", "{task}");
    let detail = refused().await;
    assert!(
        detail.starts_with("job is already failed: Runner lost"),
        "{detail}"
    );
}

#[tokio::test]
async fn a_backup_onto_the_live_store_is_refused_even_with_force() {
    let tmp = tempfile::tempdir().unwrap();
    let s = Server::start_in(tmp.path(), &[]).await;
    let kept = job(&s, "kept").await;
    let store = tmp.path().join("data/taskdeck.sqlite3");
    for target in [store.clone(), tmp.path().join("data/taskdeck.sqlite3-wal")] {
        let out = taskdeck(tmp.path(), &["backup", "--force", target.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
        assert!(
            text(&out.stderr).contains("is the store itself"),
            "{}",
            text(&out.stderr)
        );
    }
    // Nor onto any other file of the data dir (its lock, port, search index), new or not.
    for name in [
        "taskdeck.lock",
        "taskdeck.port",
        "search.sqlite3",
        "copy.sqlite3",
        "logs/x",
    ] {
        let target = tmp.path().join("data").join(name);
        let out = taskdeck(tmp.path(), &["backup", "--force", target.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(1), "{name}: {}", text(&out.stderr));
        assert!(
            text(&out.stderr).contains("is inside the data dir"),
            "{name}: {}",
            text(&out.stderr)
        );
    }
    // Nor onto a file of another data dir a Taskdeck runs on (its store above all).
    let other_dir = tmp.path().join("other");
    let other = Server::start_in(&other_dir, &[]).await;
    let theirs = job(&other, "theirs").await;
    for name in [
        "taskdeck.sqlite3",
        "taskdeck.sqlite3-wal",
        "search.sqlite3",
        "new.sqlite3",
        "logs/x.bak",
        "logs/new-dir/x.bak",
    ] {
        let target = other_dir.join("data").join(name);
        let out = taskdeck(tmp.path(), &["backup", "--force", target.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(1), "{name}: {}", text(&out.stderr));
        assert!(
            text(&out.stderr).contains("is in the data dir of a Taskdeck running on"),
            "{name}: {}",
            text(&out.stderr)
        );
    }
    let (status, _) = other
        .v1_get(Some(&other.admin), &format!("/v1/tasks/{theirs}"))
        .await;
    assert_eq!(status, 200, "the other live store is untouched");
    let lock = std::fs::read_to_string(tmp.path().join("data/taskdeck.lock")).unwrap();
    assert!(lock.starts_with("running"), "{lock}");
    let (status, _) = s.v1_get(Some(&s.admin), &format!("/v1/tasks/{kept}")).await;
    assert_eq!(status, 200, "the live store is untouched");
    assert!(job(&s, "still writing").await.len() > 10);
}

#[tokio::test]
async fn a_command_whose_log_fills_the_disk_goes_on_and_its_result_says_the_log_was_cut() {
    let tmp = tempfile::tempdir().unwrap();
    let (data, _mounted) = small_data_dir(tmp.path());
    let s = Server::start_in(tmp.path(), &[]).await;
    let agent = s.token("log-agent");
    // Outside the small file system: the files the test uses to pace the command.
    let (go, done) = (tmp.path().join("go"), tmp.path().join("done"));
    let command = format!(
        "seq 1 300 | sed 's/^/before the disk filled /'; \
         while [ ! -e {go} ]; do sleep 0.05; done; \
         yes 'output written while the disk is full' | head -n 50000; echo written; \
         while [ ! -e {done} ]; do sleep 0.05; done; echo end",
        go = go.display(),
        done = done.display()
    );
    let id = crate::jobs::approved_command(&s, &agent, &command).await;
    let log = data.join(format!("logs/{id}.log"));
    let wait_for_log = |needle: &'static str| {
        let log = log.clone();
        async move {
            let deadline = Instant::now() + Duration::from_secs(20);
            loop {
                let text = std::fs::read_to_string(&log).unwrap_or_default();
                if text.contains(needle) {
                    return text;
                }
                assert!(
                    Instant::now() < deadline,
                    "the log never said {needle:?}: ...{}",
                    &text[text.len().saturating_sub(300)..]
                );
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    };
    wait_for_log("before the disk filled 300\n").await;
    let filler = fill(&data);
    std::fs::write(&go, "").unwrap();
    let cut = wait_for_log("output log truncated: disk full").await;
    assert!(
        cut.starts_with("before the disk filled 1\n"),
        "{}",
        &cut[..100]
    );
    assert!(
        cut.ends_with(
            "[taskdeck: output log truncated: disk full; later output is not kept in this file]\n"
        ),
        "...{}",
        &cut[cut.len().saturating_sub(300)..]
    );
    // The command went on: it is still running, waiting for `done`.
    let (status, task) = s.v1_get(Some(&s.admin), &format!("/v1/tasks/{id}")).await;
    assert_eq!(status, 200);
    assert_eq!(task["task"]["status"], "working", "{task}");

    std::fs::remove_file(&filler).unwrap();
    std::fs::write(&done, "").unwrap();
    let v = s.wait_status(&s.admin, &id, "completed").await;
    let result = &v["result"];
    assert_eq!(result["isError"], false, "{v}");
    assert_eq!(
        result["structuredContent"]["logTruncated"], "disk full",
        "{v}"
    );
    let tail = result["structuredContent"]["tail"].as_str().unwrap();
    assert!(tail.ends_with("written\nend"), "{tail}");
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("output log truncated: disk full"), "{text}");
    // Nothing was written to the file after the cut, even once there was space again.
    assert_eq!(std::fs::read_to_string(&log).unwrap(), cut);
}

#[tokio::test]
async fn a_clean_stop_empties_the_write_ahead_log() {
    let tmp = tempfile::tempdir().unwrap();
    let mut s = Server::start_in(tmp.path(), &[]).await;
    let mut made = Vec::new();
    for i in 0..200 {
        made.push(job(&s, &format!("job {i}")).await);
    }
    let wal = tmp.path().join("data/taskdeck.sqlite3-wal");
    let size = || std::fs::metadata(&wal).map(|m| m.len()).unwrap_or(0);
    assert!(size() > 0, "the writes went through the log");
    assert!(stop_cleanly(&mut s).await.success());
    assert_eq!(size(), 0, "the log was copied into the store and emptied");
    // The log files stay (emptied), the index's too: a start on a full disk needs them there,
    // making them takes room.
    for f in [
        "taskdeck.sqlite3-wal",
        "taskdeck.sqlite3-shm",
        "search.sqlite3-wal",
        "search.sqlite3-shm",
    ] {
        assert!(tmp.path().join("data").join(f).exists(), "{f} was removed");
    }
    // Everything is in the store file itself.
    let stored = ids_in(&tmp.path().join("data/taskdeck.sqlite3"));
    assert!(made.iter().all(|id| stored.contains(id)));
}

/// A chatty job's output log leaves the store its room: on a small disk the log stops ("disk
/// full") while 16 MiB are still free, and the job's end is recorded at once, with its exit
/// code. (Before, the log took the last free blocks and the end waited for room that never
/// came back.)
#[tokio::test]
async fn a_job_s_output_log_leaves_the_store_room_to_record_its_end() {
    let tmp = tempfile::tempdir().unwrap();
    let (data, _mounted) = small_data_dir(tmp.path());
    let s = Server::start_in(tmp.path(), &[]).await;
    // 18 MiB left free: room for about 1.5 MiB of log.
    let free = taskdeck_engine::store::disk_space::free_bytes(&data).unwrap();
    let filler = vec![7u8; (free - (18 << 20)) as usize];
    std::fs::write(data.join("filler"), filler).unwrap();
    // About 12 MB in 10 s, 600 KB at a time: at most 512 KiB of it a second reach the log.
    let status = tokio::process::Command::new(BIN)
        .args(["run", "--name", "chatty", "--data-dir"])
        .arg(&data)
        .arg("--config-dir")
        .arg(tmp.path().join("cfg"))
        .args(["--", "sh", "-c"])
        .arg(
            "for i in $(seq 20); do yes \"$(printf '%099d' $i)\" | head -n 6000; sleep 0.5; done; \
             exit 3",
        )
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .status()
        .await
        .unwrap();
    assert_eq!(status.code(), Some(3));
    let (_, list) = s.v1_get(Some(&s.admin), "/v1/tasks?tool=external").await;
    let id = list["tasks"][0]["taskId"].as_str().unwrap().to_string();
    assert_eq!(list["tasks"][0]["title"], "chatty", "{list}");
    let (_, task) = s.v1_get(Some(&s.admin), &format!("/v1/tasks/{id}")).await;
    assert_eq!(task["task"]["status"], "completed", "{task}");
    assert_eq!(
        task["task"]["result"]["structuredContent"]["exitCode"], 3,
        "{task}"
    );
    let log = std::fs::read_to_string(data.join("logs").join(format!("{id}.log"))).unwrap();
    assert!(
        log.ends_with(
            "[taskdeck: output log truncated: disk full; later output is not kept in this file]\n"
        ),
        "{}",
        &log[log.len().saturating_sub(200)..]
    );
    let free = taskdeck_engine::store::disk_space::free_bytes(&data).unwrap();
    assert!(free >= 15 << 20, "{free} bytes free");
    // doctor says why output logs stop, on a disk that still takes the store's writes.
    let more = vec![7u8; (free - (15 << 20)) as usize];
    std::fs::write(data.join("filler-2"), more).unwrap();
    let report = tokio::process::Command::new(BIN)
        .args(["doctor", "--json", "--data-dir"])
        .arg(&data)
        .arg("--config-dir")
        .arg(tmp.path().join("cfg"))
        .output()
        .await
        .unwrap();
    let report: Value = serde_json::from_slice(&report.stdout).unwrap();
    let disk = finding(&report, "disk");
    assert_eq!(disk["ok"], true, "{disk}");
    assert!(
        disk["detail"]
            .as_str()
            .unwrap()
            .contains("command output logs are not written now"),
        "{disk}"
    );
}
