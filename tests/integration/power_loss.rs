//! Power loss (issue #17): with `--durability power` every acknowledged task survives a power
//! cut; with the default `--durability process` the last acknowledged ones may not.
//!
//! A power cut is simulated on the store's write-ahead log. `taskdeck serve` runs under
//! `tests/fixtures/wal_sync_log.c` (an `LD_PRELOAD` library, compiled here with `cc`), which logs
//! every write to `taskdeck.sqlite3-wal` and every fsync of it that returned. Clients flood the
//! server with task creations, the server is SIGKILLed mid-flood, and every WAL write that no
//! completed fsync covered is overwritten with zeros: what the disk holds after a power cut at
//! that instant when none of the unsynced writes reached it (the worst case; a frame that did
//! reach it changes nothing, SQLite's recovery stops at the first frame whose checksum or salt
//! does not match, and unsynced frames are all at the end of the log). The `-shm` index is
//! removed (it is memory, gone with the power), and Taskdeck is started again on the result.
//!
//! Only the WAL needs this. SQLite syncs the WAL before a checkpoint copies frames into the
//! database file, and syncs the database before the WAL is reused (sqlite.org/pragma.html
//! #pragma_synchronous, sqlite.org/wal.html §Checkpointing), so the database file only ever
//! receives frames that are durable in the WAL already: unsynced database pages are rebuilt
//! from the WAL at recovery.

use std::{
    collections::HashMap,
    io::{Seek, SeekFrom, Write},
    path::{Path, PathBuf},
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use serde_json::{Value, json};

use crate::harness::{BIN, Server};

/// The WAL's path suffix the preload library watches (not the search index's own WAL).
const WATCHED: &str = "/taskdeck.sqlite3-wal";

/// Compiles `tests/fixtures/wal_sync_log.c` into `dir`; the shared library's path.
fn build_shim(dir: &Path) -> PathBuf {
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/wal_sync_log.c");
    let lib = dir.join("wal_sync_log.so");
    let out = std::process::Command::new("cc")
        .args(["-shared", "-fPIC", "-O2", "-o"])
        .arg(&lib)
        .arg(&source)
        .arg("-ldl")
        .arg("-lpthread")
        .output()
        .expect("this test needs a C compiler (`cc`) to build its LD_PRELOAD library");
    assert!(
        out.status.success(),
        "cc failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    lib
}

/// What one flood left: the tasks acknowledged (taskId → status answered) and the log.
struct Flood {
    acked: HashMap<String, String>,
    log: PathBuf,
}

/// Starts `taskdeck serve --durability DURABILITY` in `dir` under the preload library, floods it
/// with external-job creations from `clients` concurrent clients, SIGKILLs it once `kill_after`
/// creations were acknowledged, and returns what was acknowledged.
async fn flood_and_kill(dir: &Path, shim: &Path, durability: &str, kill_after: usize) -> Flood {
    let log = dir.join("wal-sync.log");
    let (shim_s, log_s) = (shim.to_str().unwrap(), log.to_str().unwrap());
    let mut s = Server::start_with_env(
        dir,
        &["--durability", durability],
        &[
            ("LD_PRELOAD", shim_s),
            ("WAL_SYNC_LOG", log_s),
            ("WAL_SYNC_WATCH", WATCHED),
        ],
    )
    .await;
    let acked = Arc::new(Mutex::new(HashMap::new()));
    let clients = 16;
    let mut floods = Vec::new();
    for c in 0..clients {
        let (url, token, acked) = (s.url("/v1/jobs"), s.admin.clone(), acked.clone());
        floods.push(tokio::spawn(async move {
            let http = reqwest::Client::new();
            for i in 0.. {
                let sent = http
                    .post(&url)
                    .bearer_auth(&token)
                    .json(&json!({"external": {"name": format!("flood-{c}-{i}")}}))
                    .send()
                    .await;
                // The kill ends the flood: a request without an answer was not acknowledged.
                let Ok(resp) = sent else { break };
                if !resp.status().is_success() {
                    break;
                }
                let Ok(task) = resp.json::<Value>().await else {
                    break;
                };
                acked.lock().unwrap().insert(
                    task["taskId"].as_str().unwrap().to_string(),
                    task["status"].as_str().unwrap().to_string(),
                );
            }
        }));
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    while acked.lock().unwrap().len() < kill_after {
        assert!(Instant::now() < deadline, "the flood is too slow");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    s.kill().await;
    for f in floods {
        f.await.unwrap();
    }
    let acked = acked.lock().unwrap().clone();
    Flood { acked, log }
}

/// What the log says of the WAL: the writes no completed fsync covered, as (offset, length),
/// and how many writes there were in all.
fn unsynced_writes(log: &Path) -> (Vec<(u64, u64)>, usize) {
    let text = std::fs::read_to_string(log).expect("the preload library wrote no log");
    let mut writes = Vec::new();
    let mut covered = 0u64;
    for line in text.lines() {
        let f: Vec<u64> = line[2..].split(' ').map(|n| n.parse().unwrap()).collect();
        match &line[..1] {
            "W" => writes.push((f[0], f[1], f[2])),
            "S" => covered = covered.max(f[0]),
            other => panic!("unknown record {other:?} in {}", log.display()),
        }
    }
    let all = writes.len();
    let lost = writes
        .into_iter()
        .filter(|(seq, ..)| *seq >= covered)
        .map(|(_, offset, len)| (offset, len))
        .collect();
    (lost, all)
}

/// Cuts the power on the stopped store in `dir/data`: zeroes the WAL's unsynced writes and
/// removes the `-shm` index. The number of bytes zeroed.
fn cut_power(dir: &Path, log: &Path) -> u64 {
    let (lost, all) = unsynced_writes(log);
    assert!(all > 0, "the preload library saw no WAL write");
    let wal = dir.join("data/taskdeck.sqlite3-wal");
    let mut f = std::fs::OpenOptions::new().write(true).open(&wal).unwrap();
    let size = f.metadata().unwrap().len();
    let mut zeroed = 0;
    for (offset, len) in lost {
        let len = len.min(size.saturating_sub(offset));
        if len == 0 {
            continue;
        }
        f.seek(SeekFrom::Start(offset)).unwrap();
        f.write_all(&vec![0u8; len as usize]).unwrap();
        zeroed += len;
    }
    f.sync_all().unwrap();
    let _ = std::fs::remove_file(dir.join("data/taskdeck.sqlite3-shm"));
    zeroed
}

/// The acknowledged tasks missing (or with another status) after a restart on `dir`, and
/// whether `taskdeck doctor` found the store sound.
async fn missing_after_restart(dir: &Path, acked: &HashMap<String, String>) -> (Vec<String>, bool) {
    let mut s = Server::start_in(dir, &[]).await;
    let mut missing = Vec::new();
    for (id, status) in acked {
        let (code, task) = s.v1_get(Some(&s.admin), &format!("/v1/tasks/{id}")).await;
        if code != 200 {
            missing.push(id.clone());
        } else {
            assert_eq!(task["task"]["status"], status.as_str(), "{task}");
        }
    }
    let doctor = std::process::Command::new(BIN)
        .args(["doctor", "--json", "--data-dir"])
        .arg(dir.join("data"))
        .arg("--config-dir")
        .arg(dir.join("cfg"))
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&doctor.stdout).unwrap();
    let store_ok = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .any(|c| c["check"] == "store" && c["ok"] == true);
    s.kill().await;
    (missing, store_ok)
}

#[tokio::test]
async fn with_durability_power_a_power_cut_loses_no_acknowledged_task() {
    let tmp = tempfile::tempdir().unwrap();
    let shim = build_shim(tmp.path());
    let flood = flood_and_kill(tmp.path(), &shim, "power", 400).await;
    let zeroed = cut_power(tmp.path(), &flood.log);
    let (missing, store_ok) = missing_after_restart(tmp.path(), &flood.acked).await;
    eprintln!(
        "power: {} acknowledged, {zeroed} unsynced WAL bytes zeroed, {} lost",
        flood.acked.len(),
        missing.len()
    );
    assert!(
        missing.is_empty(),
        "{} of {} acknowledged tasks lost to the power cut: {:?}",
        missing.len(),
        flood.acked.len(),
        &missing[..missing.len().min(5)]
    );
    assert!(store_ok, "the store is not sound after the power cut");
}

#[tokio::test]
async fn with_durability_process_a_power_cut_can_lose_acknowledged_tasks() {
    // `process` fsyncs the WAL only at checkpoints (every 200 commits), so a cut loses the
    // commits since the last one; the kill may land right after a checkpoint, so up to three
    // floods are tried.
    let tmp = tempfile::tempdir().unwrap();
    let shim = build_shim(tmp.path());
    let mut tried = Vec::new();
    for round in 0..3 {
        let dir = tmp.path().join(format!("round-{round}"));
        let flood = flood_and_kill(&dir, &shim, "process", 1500).await;
        let zeroed = cut_power(&dir, &flood.log);
        let (missing, store_ok) = missing_after_restart(&dir, &flood.acked).await;
        assert!(store_ok, "the store is not sound after the power cut");
        eprintln!(
            "process: {} acknowledged, {zeroed} unsynced WAL bytes zeroed, {} lost",
            flood.acked.len(),
            missing.len()
        );
        tried.push((flood.acked.len(), missing.len()));
        if !missing.is_empty() {
            return;
        }
    }
    panic!("no acknowledged task was lost in three power cuts (acknowledged, lost): {tried:?}");
}

/// `TASKDECK_DURABILITY` sets the durability as `--durability` does (the window takes no
/// options, only the environment): with `power` each commit syncs the WAL, with the default
/// only checkpoints do.
#[tokio::test]
async fn taskdeck_durability_in_the_environment_sets_the_durability() {
    let tmp = tempfile::tempdir().unwrap();
    let shim = build_shim(tmp.path());
    let mut syncs = Vec::new();
    for durability in ["power", ""] {
        let dir = tmp.path().join(format!("run-{durability}"));
        let log = dir.join("wal-sync.log");
        let (shim_s, log_s) = (shim.to_str().unwrap(), log.to_str().unwrap());
        let mut env = vec![
            ("LD_PRELOAD", shim_s),
            ("WAL_SYNC_LOG", log_s),
            ("WAL_SYNC_WATCH", WATCHED),
        ];
        if !durability.is_empty() {
            env.push(("TASKDECK_DURABILITY", durability));
        }
        let mut s = Server::start_with_env(&dir, &[], &env).await;
        // One at a time: each creation is a commit of its own.
        for i in 0..20 {
            let (status, body) = s
                .v1_post(
                    Some(&s.admin),
                    "/v1/jobs",
                    json!({"external": {"name": format!("one-{i}")}}),
                )
                .await;
            assert!(status.is_success(), "{status} {body}");
        }
        s.kill().await;
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        syncs.push(text.lines().filter(|l| l.starts_with('S')).count());
    }
    assert!(
        syncs[0] >= 20,
        "power: {} WAL syncs for 20 commits",
        syncs[0]
    );
    assert!(
        syncs[1] < 5,
        "process: {} WAL syncs for 20 commits",
        syncs[1]
    );
}
