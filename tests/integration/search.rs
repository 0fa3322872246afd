//! Free-text search (`/v1/tasks?q=`) through the search index: the same answers before the
//! index has seen a change, after it caught up, and after the index file is lost or damaged.

use std::{path::Path, time::Duration};

use serde_json::json;

use crate::harness::Server;

/// Task ids that `/v1/tasks?q=QUERY` returns, newest first.
async fn search(s: &Server, query: &str) -> Vec<String> {
    let q: String = url_encode(query);
    let (status, page) = s
        .v1_get(Some(&s.admin), &format!("/v1/tasks?limit=100&q={q}"))
        .await;
    assert!(status.is_success(), "{status}: {page}");
    let total: i64 = page["counts"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_i64().unwrap())
        .sum();
    let ids: Vec<String> = page["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["taskId"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        total as usize,
        ids.len(),
        "counts agree with the page for {query:?}"
    );
    ids
}

fn url_encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// The last event id the index has seen, and the store's last event id.
fn index_progress(data: &Path) -> (i64, i64) {
    let flags = rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY;
    let main = rusqlite::Connection::open_with_flags(data.join("taskdeck.sqlite3"), flags).unwrap();
    let newest: i64 = main
        .query_row("SELECT ifnull(max(id), 0) FROM events", [], |r| r.get(0))
        .unwrap();
    let seen = rusqlite::Connection::open_with_flags(data.join("search.sqlite3"), flags)
        .ok()
        .and_then(|c| {
            c.query_row("SELECT value FROM meta WHERE key = 'event_id'", [], |r| {
                r.get(0)
            })
            .ok()
        })
        .unwrap_or(0);
    (seen, newest)
}

/// How many tasks the index itself names as candidates for `query`.
fn indexed(data: &Path, query: &str) -> usize {
    let flags = rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY;
    let c = rusqlite::Connection::open_with_flags(data.join("search.sqlite3"), flags).unwrap();
    let m = taskdeck_engine::search::candidate_match(query).unwrap();
    c.query_row(
        "SELECT count(*) FROM task_text WHERE task_text MATCH ?1",
        [m],
        |r| r.get::<_, i64>(0),
    )
    .unwrap() as usize
}

async fn wait_for_index(data: &Path) {
    for _ in 0..200 {
        let (seen, newest) = index_progress(data);
        if seen >= newest {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!(
        "the search index did not catch up in 10 s: {:?}",
        index_progress(data)
    );
}

/// Queries and the labels (`alpha-N`) of the tasks each must find.
fn expectations() -> Vec<(&'static str, Vec<usize>)> {
    vec![
        ("alpha-1", vec![1, 10, 11, 12]),
        ("ALPHA-12", vec![12]),
        ("Computed alpha-5", vec![5]),
        // Two characters: too short for the trigram index, answered by a scan. (Not hex
        // digits: taskIds are hex, so e.g. "a-" also matches ids ending their time in "a".)
        ("ph", (0..13).collect()),
        // LIKE wildcards in a query are literal characters.
        ("alpha_1", vec![]),
        ("100%", vec![]),
        ("zzz-not-there", vec![]),
        // Letters beyond ASCII match in any case, indexed (3+ characters) or scanned.
        // (The task's text has "Grü" and "Über": each query changes the case of a "ü".)
        ("überlingen", vec![13]),
        ("GRÜ", vec![13]),
        ("üb", vec![13]),
        ("über_", vec![]),
        // Letters whose lowercase is longer ("İ" → "i̇"), that the index and Rust fold
        // differently (Cherokee), or that fold by context (a final "Σ").
        ("İst", vec![14]),
        ("ᎠᎡᎢ", vec![14]),
        ("ΔΟΣ", vec![14]),
        ("δοσα", vec![14]),
        // Across case where the index's own folding would not go (Cherokee small letters
        // against capitals), and a final "ς" typed for a capital "Σ".
        ("ꭰꭱꭲ", vec![14]),
        ("ꭰꭱꭲꭳ", vec![14]),
        ("καλος", vec![14]),
    ]
}

async fn check(s: &Server, labels: &[String], when: &str) {
    for (query, want) in expectations() {
        let mut got = search(s, query).await;
        got.sort();
        let mut want: Vec<String> = want.iter().map(|&i| labels[i].clone()).collect();
        want.sort();
        assert_eq!(got, want, "{when}: q={query:?}");
    }
}

#[tokio::test]
async fn search_answers_the_same_before_and_after_indexing_and_after_losing_the_index() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let mut s = Server::start_in(tmp.path(), &["--conformance-fixtures"]).await;
    let t = s.admin.clone();
    // labels[i] = taskId of the task labelled alpha-i.
    let mut labels = Vec::new();
    for i in 0..13 {
        labels.push(s.completed_task(&s.admin, &format!("alpha-{i}")).await);
    }
    labels.push(s.completed_task(&s.admin, "Grüße aus Überlingen").await);
    labels.push(s.completed_task(&s.admin, "İstanbul ᎠᎡᎢᎣ ΔΟΣΑ ΚΑΛΟΣ").await);
    // Right away: what the index has not seen yet is found by the exact test.
    check(&s, &labels, "before indexing").await;
    wait_for_index(&data).await;
    check(&s, &labels, "indexed").await;

    // A change after indexing (a new status message) is found at once, and later by the index.
    let waiting = s
        .call(
            &t,
            "request_approval",
            json!({"message": "approve beta99 please"}),
        )
        .await["taskId"]
        .as_str()
        .unwrap()
        .to_string();
    s.wait_status(&t, &waiting, "input_required").await;
    assert_eq!(search(&s, "beta99").await, vec![waiting.clone()]);
    wait_for_index(&data).await;
    assert_eq!(search(&s, "beta99").await, vec![waiting.clone()]);
    // The index skips a live task (its text still changes); searches take it as a candidate.
    assert_eq!(indexed(&data, "beta99"), 0, "a live task is not indexed");
    let (status, _) = s
        .v1_post(Some(&t), &format!("/v1/tasks/{waiting}/cancel"), json!({}))
        .await;
    assert!(status.is_success());
    s.wait_status(&t, &waiting, "cancelled").await;
    assert_eq!(search(&s, "beta99").await, vec![waiting.clone()]);
    wait_for_index(&data).await;
    assert_eq!(indexed(&data, "beta99"), 1, "settled, it is indexed");
    assert_eq!(search(&s, "beta99").await, vec![waiting.clone()]);

    // A working task's status message, changed by each progress report, is found as it is now.
    let working = s
        .call(
            &t,
            "slow_compute",
            json!({"seconds": 10, "label": "gamma77"}),
        )
        .await["taskId"]
        .as_str()
        .unwrap()
        .to_string();
    let mut message = String::new();
    for _ in 0..100 {
        let (_, task) = s.v1_get(Some(&t), &format!("/v1/tasks/{working}")).await;
        message = task["task"]["statusMessage"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        if message.contains("step 2") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(message.contains("step 2"), "progress: {message:?}");
    wait_for_index(&data).await;
    assert_eq!(search(&s, &message).await, vec![working.clone()]);
    assert_eq!(search(&s, "gamma77").await, vec![working.clone()]);

    // Text past what the index holds (64 KiB per task) is still found, before and after.
    let long_note = format!("{} farneedle", "a".repeat(70_000));
    let (status, job) = s
        .v1_post(
            Some(&t),
            "/v1/jobs",
            json!({"tool": "echo", "arguments": {"note": long_note}}),
        )
        .await;
    assert!(status.is_success(), "{status} {job}");
    let long_id = job["taskId"].as_str().unwrap().to_string();
    s.wait_status(&t, &long_id, "completed").await;
    assert_eq!(search(&s, "farneedle").await, vec![long_id.clone()]);
    wait_for_index(&data).await;
    assert_eq!(search(&s, "farneedle").await, vec![long_id.clone()]);

    // A damaged index file is replaced and rebuilt from the store.
    s.kill().await;
    std::fs::write(data.join("search.sqlite3"), b"not a database").unwrap();
    for suffix in ["-wal", "-shm"] {
        let _ = std::fs::remove_file(data.join(format!("search.sqlite3{suffix}")));
    }
    let mut s = Server::start_in(tmp.path(), &["--conformance-fixtures"]).await;
    check(&s, &labels, "after the index was damaged").await;
    wait_for_index(&data).await;
    check(&s, &labels, "rebuilt").await;
    s.kill().await;

    // An index that belongs to another store (or to a later state of this one, before a
    // backup was restored) is emptied and rebuilt: its entries would hide new tasks.
    let other = tempfile::tempdir().unwrap();
    let mut o = Server::start_in(other.path(), &["--conformance-fixtures"]).await;
    for i in 0..30 {
        o.completed_task(&o.admin, &format!("other-{i}")).await;
    }
    wait_for_index(&other.path().join("data")).await;
    o.kill().await;
    for suffix in ["", "-wal", "-shm"] {
        let name = format!("search.sqlite3{suffix}");
        let _ = std::fs::remove_file(data.join(&name));
        let _ = std::fs::copy(other.path().join("data").join(&name), data.join(&name));
    }
    let s = Server::start_in(tmp.path(), &["--conformance-fixtures"]).await;
    let mut restored = Vec::new();
    for i in 0..5 {
        restored.push(s.completed_task(&s.admin, &format!("restored-{i}")).await);
    }
    wait_for_index(&data).await;
    let mut found = search(&s, "restored").await;
    found.sort();
    restored.sort();
    assert_eq!(
        found, restored,
        "new tasks are found through the rebuilt index"
    );
    assert_eq!(search(&s, "other-1").await, Vec::<String>::new());
    check(&s, &labels, "after another store's index").await;
}

/// Overwrites every page of the index file at `path` that holds FTS5's own data (its `_data`
/// and `_idx` tables' pages: every page but the first and the small tables' roots) with
/// garbage, after copying its WAL into it: the file opens and its small tables read, and any
/// search through it finds the damage, as a disk's bad sectors would leave it.
fn damage_index_pages(path: &Path) -> usize {
    let c = rusqlite::Connection::open(path).unwrap();
    c.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
        .unwrap();
    let kept: Vec<i64> = c
        .prepare(
            "SELECT rootpage FROM sqlite_schema
             WHERE rootpage > 0 AND name NOT IN ('task_text_data', 'task_text_idx')",
        )
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    drop(c);
    let pages = std::fs::metadata(path).unwrap().len() / 4096;
    let mut f = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    let mut damaged = 0;
    for page in 2..=pages as i64 {
        if !kept.contains(&page) {
            use std::io::{Seek, SeekFrom, Write};
            f.seek(SeekFrom::Start((page as u64 - 1) * 4096)).unwrap();
            f.write_all(&[0xA5; 4096]).unwrap();
            damaged += 1;
        }
    }
    damaged
}

/// An index whose file opens but has damaged pages (a search through it fails): searches are
/// answered without it, exactly, and the next start rebuilds it.
#[tokio::test]
async fn a_damaged_index_is_searched_around_and_rebuilt_at_the_next_start() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let mut s = Server::start_in(tmp.path(), &["--conformance-fixtures"]).await;
    let mut labels = Vec::new();
    for i in 0..13 {
        labels.push(s.completed_task(&s.admin, &format!("alpha-{i}")).await);
    }
    labels.push(s.completed_task(&s.admin, "Grüße aus Überlingen").await);
    labels.push(s.completed_task(&s.admin, "İstanbul ᎠᎡᎢᎣ ΔΟΣΑ ΚΑΛΟΣ").await);
    wait_for_index(&data).await;
    s.kill().await;
    let index = data.join("search.sqlite3");
    assert!(damage_index_pages(&index) > 0, "nothing to damage");
    let marker = data.join("search.sqlite3.damaged");

    let mut s = Server::start_in(tmp.path(), &["--conformance-fixtures"]).await;
    check(&s, &labels, "with a damaged index").await;
    assert!(marker.exists(), "the damage is recorded for the next start");
    // New tasks are found too (the indexer no longer writes the damaged file).
    let new = s.completed_task(&s.admin, "omega-new").await;
    assert_eq!(search(&s, "omega-new").await, vec![new.clone()]);
    s.kill().await;

    let s = Server::start_in(tmp.path(), &["--conformance-fixtures"]).await;
    assert!(!marker.exists(), "the next start rebuilt the index");
    wait_for_index(&data).await;
    check(&s, &labels, "rebuilt").await;
    assert_eq!(search(&s, "omega-new").await, vec![new]);
    // The index's rows are candidates (tasks holding all the query's trigrams, anywhere in
    // their text): "alpha-1" would also be one for "alpha-3" whose taskId holds "a-1". No
    // taskId holds "rli".
    assert_eq!(indexed(&data, "Überlingen"), 1, "the rebuilt index answers");
}
