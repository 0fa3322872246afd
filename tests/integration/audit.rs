//! The audit log through the real binary: `/v1/audit` (pages, JSON Lines, CSV, `since`,
//! admin only), `taskdeck audit export|verify` (against the server and offline on a file), the
//! script docs/audit.md gives verifiers, tampering with the store file while Taskdeck is
//! stopped (an edited field, a deleted middle entry, a deleted newest entry), and an entry that
//! outlives its task's TTL.
//!
//! Decisions are recorded with the engine's own `Engine::record_decision` on the data dir
//! before the server starts (no route records one on demand), the way the approval step does
//! inside the server.

use std::{path::Path, process::Output, time::Duration};

use rusqlite::{Connection, params};
use serde_json::{Value, json};
use taskdeck_engine::{
    AuditEntry, DecisionRecord, Engine, EngineConfig,
    clock::{iso8601, now_ms},
    feed::ChangeFeed,
    store::{Durability, Store},
};
use taskdeck_server::adapters::wire;

use crate::harness::{BIN, Server};

fn decision(task_id: Option<&str>, n: u64) -> DecisionRecord {
    DecisionRecord {
        task_id: task_id.map(str::to_string),
        principal: "claude-code".into(),
        server: "claude-code".into(),
        tool: "Bash".into(),
        digest: format!("sha256:{:064x}", n),
        decision: if n.is_multiple_of(2) { "deny" } else { "allow" }.into(),
        decided_by: "human".into(),
        human: Some("alice".into()),
        rule: None,
        reason: Some(format!("say \"no\", please {n} \u{2713}")),
        arguments: json!({"command": format!("rm -rf build{n}"), "cwd": "/tmp"}),
        edited_arguments: (n == 2).then(|| json!({"command": "rm -rf build2/cache"})),
    }
}

/// Records `records` in the store under `dir/data` (no server running), one write each, with
/// `pause` between them; returns the entries.
async fn record(dir: &Path, records: Vec<DecisionRecord>, pause: Duration) -> Vec<AuditEntry> {
    let store = Store::open(&dir.join("data"), Durability::Process, ChangeFeed::new(8)).unwrap();
    let engine = Engine::new(store, EngineConfig::default(), wire::task_error_object);
    let mut entries = Vec::new();
    for r in records {
        entries.push(engine.record_decision(r).await.unwrap());
        tokio::time::sleep(pause).await;
    }
    entries
}

/// `taskdeck audit ARGS` against the data and config dirs under `dir`.
async fn audit(dir: &Path, args: &[&str]) -> Output {
    tokio::process::Command::new(BIN)
        .arg("audit")
        .args(args)
        .arg("--data-dir")
        .arg(dir.join("data"))
        .arg("--config-dir")
        .arg(dir.join("cfg"))
        .output()
        .await
        .unwrap()
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[tokio::test]
async fn the_log_is_paged_exported_and_verified() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let mut entries = record(
        dir,
        (1..=3).map(|n| decision(None, n)).collect(),
        Duration::ZERO,
    )
    .await;
    tokio::time::sleep(Duration::from_millis(20)).await;
    let since = now_ms();
    entries.extend(
        record(
            dir,
            (4..=5).map(|n| decision(Some("t-gone"), n)).collect(),
            Duration::ZERO,
        )
        .await,
    );
    let s = Server::start_in(dir, &[]).await;
    let as_json = |e: &AuditEntry| serde_json::to_value(e).unwrap();

    // Pages in seq order.
    let (status, page) = s.v1_get(Some(&s.admin), "/v1/audit?limit=2").await;
    assert_eq!(status, 200, "{page}");
    assert_eq!(
        page["entries"],
        json!([as_json(&entries[0]), as_json(&entries[1])])
    );
    assert_eq!(page["nextAfterSeq"], 2);
    let (_, last) = s.v1_get(Some(&s.admin), "/v1/audit?afterSeq=4").await;
    assert_eq!(last["entries"], json!([as_json(&entries[4])]));
    assert_eq!(last["nextAfterSeq"], Value::Null);
    let (_, recent) = s
        .v1_get(Some(&s.admin), &format!("/v1/audit?since={since}"))
        .await;
    assert_eq!(recent["entries"].as_array().unwrap().len(), 2);
    // Admin only; a time that is no time is refused.
    let agent = s.token("agent-a");
    for path in ["/v1/audit", "/v1/audit/verify", "/v1/audit?format=jsonl"] {
        let (status, body) = s.v1_get(Some(&agent), path).await;
        assert_eq!(status, 403, "{path}: {body}");
    }
    let (status, _) = s.v1_get(Some(&s.admin), "/v1/audit?since=yesterday").await;
    assert_eq!(status, 400);
    let (_, verified) = s.v1_get(Some(&s.admin), "/v1/audit/verify").await;
    assert_eq!(verified["ok"], true);
    assert_eq!(verified["entries"], 5);
    assert_eq!(verified["headHash"], entries[4].hash.as_str());

    // JSON Lines to a file, verified offline.
    let file = dir.join("audit.jsonl");
    let out = audit(dir, &["export", "--output", file.to_str().unwrap()]).await;
    assert!(out.status.success(), "{out:?}");
    let text = std::fs::read_to_string(&file).unwrap();
    let lines: Vec<AuditEntry> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines, entries);
    let out = audit(dir, &["verify", "--file", file.to_str().unwrap()]).await;
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        stdout(&out),
        format!("ok: 5 entries, seq 1..5, head {}\n", entries[4].hash)
    );
    let out = audit(dir, &["verify"]).await;
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        stdout(&out),
        format!("ok: 5 entries, seq 1..5, head {}\n", entries[4].hash)
    );
    verify_with_the_documented_script(&file, true);

    // --since as RFC 3339, to stdout; an export that starts mid-chain verifies too.
    let out = audit(dir, &["export", "--since", &iso8601(since)]).await;
    assert!(out.status.success(), "{out:?}");
    let part = stdout(&out);
    assert_eq!(part.lines().count(), 2);
    assert!(part.starts_with("{\"seq\":4,"), "{part}");
    let part_file = dir.join("part.jsonl");
    std::fs::write(&part_file, &part).unwrap();
    let out = audit(dir, &["verify", "--file", part_file.to_str().unwrap()]).await;
    assert_eq!(
        stdout(&out),
        format!("ok: 2 entries, seq 4..5, head {}\n", entries[4].hash)
    );

    // A --since the server would refuse is a usage error, said before anything is asked.
    let out = audit(dir, &["export", "--since", "yesterday"]).await;
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--since") && err.contains("RFC 3339"), "{err}");

    // CSV: a header row, quoted fields, object columns as JSON text.
    let out = audit(dir, &["export", "--format", "csv"]).await;
    assert!(out.status.success(), "{out:?}");
    let csv = stdout(&out);
    let rows: Vec<&str> = csv.split("\r\n").filter(|r| !r.is_empty()).collect();
    assert_eq!(rows.len(), 6, "{csv}");
    assert_eq!(
        rows[0],
        "seq,atMs,taskId,principal,server,tool,digest,decision,decidedBy,human,rule,reason,arguments,editedArguments,prevHash,hash"
    );
    assert_eq!(
        rows[2],
        format!(
            "2,{},,claude-code,claude-code,Bash,{},deny,human,alice,,\"say \"\"no\"\", please 2 \u{2713}\",\"{{\"\"command\"\":\"\"rm -rf build2\"\",\"\"cwd\"\":\"\"/tmp\"\"}}\",\"{{\"\"command\"\":\"\"rm -rf build2/cache\"\"}}\",{},{}",
            entries[1].at_ms, entries[1].digest, entries[1].prev_hash, entries[1].hash
        )
    );

    // An exported line edited afterwards: named at its seq, by the CLI and by the script.
    let edited = text.replacen("rm -rf build3", "ls build3", 1);
    std::fs::write(&file, edited).unwrap();
    let out = audit(dir, &["verify", "--file", file.to_str().unwrap()]).await;
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(
        stdout(&out).starts_with("broken at seq 3: a field was changed"),
        "{}",
        stdout(&out)
    );
    verify_with_the_documented_script(&file, false);

    // A member added to a line, or a `null` one left out, is outside what a check of the
    // known fields would cover: the line is refused, as the script refuses it.
    let first = text.lines().next().unwrap();
    for line in [
        first.replacen("{", "{\"decisionOverride\":\"allow\",", 1),
        first.replacen("\"editedArguments\":null,", "", 1),
        // A member given twice reads as one value and hashes as the other (Python's json, and
        // so the documented script, keeps the last).
        first.replacen("\"human\":", "\"human\":\"mallory\",\"human\":", 1),
    ] {
        assert_ne!(line, first);
        let twice = line.contains("mallory");
        let rest: Vec<&str> = text.lines().skip(1).collect();
        std::fs::write(&file, format!("{line}\n{}\n", rest.join("\n"))).unwrap();
        let out = audit(dir, &["verify", "--file", file.to_str().unwrap()]).await;
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        let said = format!("{}{}", stdout(&out), String::from_utf8_lossy(&out.stderr));
        let why = if twice { "duplicate field" } else { "members" };
        assert!(said.contains("line 1") && said.contains(why), "{said}");
        if !twice {
            verify_with_the_documented_script(&file, false);
        }
    }
}

/// Runs the Python script of docs/audit.md (between its `verify.py` markers) on `file`, when
/// python3 is installed; asserts it accepts the file exactly when `intact`.
fn verify_with_the_documented_script(file: &Path, intact: bool) {
    let doc =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/audit.md")).unwrap();
    let script = doc
        .split("```python verify.py\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("docs/audit.md has a ```python verify.py block");
    let Ok(out) = std::process::Command::new("python3")
        .arg("-c")
        .arg(script)
        .arg(file)
        .output()
    else {
        eprintln!("python3 is not installed: the documented script is not run");
        return;
    };
    assert_eq!(out.status.success(), intact, "{out:?}");
}

#[tokio::test]
async fn tampering_while_stopped_is_found_at_its_seq() {
    let cases = [
        (
            "UPDATE audit SET reason = 'fine' WHERE seq = ?1",
            3,
            "broken at seq 3: a field was changed",
        ),
        (
            "DELETE FROM audit WHERE seq = ?1",
            2,
            "broken at seq 2: entry 2 is missing",
        ),
        (
            "DELETE FROM audit WHERE seq = ?1",
            4,
            "broken at seq 4: the log ends at seq 3",
        ),
    ];
    for (sql, seq, expected) in cases {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        record(
            dir,
            (1..=4).map(|n| decision(None, n)).collect(),
            Duration::ZERO,
        )
        .await;
        let mut s = Server::start_in(dir, &[]).await;
        assert!(audit(dir, &["verify"]).await.status.success());
        s.kill().await;
        let conn = Connection::open(dir.join("data/taskdeck.sqlite3")).unwrap();
        assert_eq!(conn.execute(sql, params![seq]).unwrap(), 1);
        drop(conn);
        let _s = Server::start_in(dir, &[]).await;
        let out = audit(dir, &["verify"]).await;
        assert_eq!(out.status.code(), Some(1), "{sql}: {out:?}");
        assert!(
            stdout(&out).starts_with(expected),
            "{sql}: {}",
            stdout(&out)
        );
    }
}

#[tokio::test]
async fn a_decision_outlives_its_task() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let flags = ["--conformance-fixtures", "--default-ttl-ms", "4000"];
    let mut s = Server::start_in(dir, &flags).await;
    let t = s.admin.clone();
    let task = s
        .call(&t, "slow_compute", json!({"seconds": 0.01, "label": "x"}))
        .await["taskId"]
        .as_str()
        .unwrap()
        .to_string();
    s.wait_status(&t, &task, "completed").await;
    s.kill().await;
    let entry = record(dir, vec![decision(Some(&task), 1)], Duration::ZERO)
        .await
        .remove(0);
    let s = Server::start_in(dir, &flags).await;

    // Kept with the task while it lives: a `decision` event with the entry's fields.
    let (status, shown) = s.v1_get(Some(&t), &format!("/v1/tasks/{task}")).await;
    assert_eq!(status, 200, "{shown}");
    let events: Vec<&Value> = shown["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "decision")
        .collect();
    assert_eq!(events.len(), 1, "{shown}");
    assert_eq!(events[0]["data"], serde_json::to_value(&entry).unwrap());

    // Gone at its TTL; the entry stays, and the chain is intact.
    let deadline = std::time::Instant::now() + Duration::from_secs(15);
    while s.v1_get(Some(&t), &format!("/v1/tasks/{task}")).await.0 != 404 {
        assert!(
            std::time::Instant::now() < deadline,
            "the task did not expire"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let (_, page) = s.v1_get(Some(&t), "/v1/audit").await;
    assert_eq!(page["entries"][0]["taskId"], task.as_str());
    assert_eq!(page["entries"][0]["hash"], entry.hash.as_str());
    assert!(audit(dir, &["verify"]).await.status.success());
}
