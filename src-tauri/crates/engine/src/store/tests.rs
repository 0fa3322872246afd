//! Tests of the store as a whole: group commit and rollback, the writer's copies, counts,
//! errors among the completed, the answer cache, WAL size, migrations (input requests' `human_only`, tokens' `role`).

use std::{collections::BTreeMap, sync::Arc, time::Duration};

use rusqlite::{Connection, params};
use serde_json::Value;

use super::{
    Durability, ListFilter, Store, WriteCtx,
    checkpoint::WAL_RESET_FRAMES,
    connection::{ReaderPool, WAL_SIZE_LIMIT, open_conn},
    input_requests::{answer_input, input_human_only, insert_input},
    tasks::insert_task,
};
use crate::{
    EngineError, Role, TaskRecord, TaskStatus,
    feed::ChangeFeed,
    model::{ERROR_COUNT_KEY, IS_ERROR_SQL},
};

fn task(id: &str) -> TaskRecord {
    TaskRecord {
        task_id: id.to_string(),
        seq: 0,
        tool: "echo".into(),
        arguments: serde_json::json!({}),
        principal: "admin".into(),
        status: TaskStatus::Working,
        status_message: None,
        created_at_ms: 1,
        last_updated_at_ms: 1,
        ttl_ms: Some(1000),
        poll_interval_ms: 1000,
        progress: None,
        result: None,
        error: None,
        input_requests: BTreeMap::new(),
        cancel_requested: false,
    }
}

/// The two tests that write hundreds of MiB run one at a time (each is the load it measures).
static WAL_TESTS: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// The WAL file's largest size (bytes, sampled every 50 writes) while `tasks` task rows of 32
/// KiB each (bytes written: about `tasks * 32 KiB`) are written one commit at a time and
/// `readers` threads read without pause, each read transaction held open for `hold` (the
/// threads started `hold / readers` apart, so with a `hold` their transactions overlap and
/// there is never a moment without a reader); and whether the file ever got smaller (a reset
/// past the size limit truncates it).
async fn largest_wal(readers: usize, hold: Duration, tasks: usize) -> (u64, bool) {
    use std::sync::atomic::{AtomicBool, Ordering};
    let _one_at_a_time = WAL_TESTS.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let store =
        Arc::new(Store::open(dir.path(), Durability::Process, ChangeFeed::new(64)).unwrap());
    let stop = Arc::new(AtomicBool::new(false));
    let threads: Vec<_> = (0..readers)
        .map(|n| {
            let (store, stop) = (store.clone(), stop.clone());
            std::thread::spawn(move || {
                std::thread::sleep(hold * n as u32 / readers as u32);
                while !stop.load(Ordering::Relaxed) {
                    store
                        .read_snapshot(|c| {
                            // One read transaction: its snapshot holds until it returns.
                            c.query_row("SELECT count(*) FROM tasks", [], |r| r.get::<_, i64>(0))?;
                            std::thread::sleep(hold);
                            Ok(())
                        })
                        .unwrap();
                }
            })
        })
        .collect();
    let wal = dir.path().join("taskdeck.sqlite3-wal");
    let note = "x".repeat(32 * 1024);
    let (mut largest, mut last, mut shrank) = (0, 0, false);
    for i in 0..tasks {
        let mut t = task(&format!("t{i:05}"));
        t.arguments = serde_json::json!({ "note": note });
        store
            .write(move |w| insert_task(w.conn, &mut t))
            .await
            .unwrap();
        if i % 50 == 0 {
            let size = std::fs::metadata(&wal).map_or(0, |m| m.len());
            shrank |= size < last;
            (largest, last) = (largest.max(size), size);
        }
    }
    stop.store(true, Ordering::Relaxed);
    for t in threads {
        t.join().unwrap();
    }
    (largest, shrank)
}

/// Past WAL_RESET_FRAMES the WAL is reset even while writes and reads never stop (PASSIVE alone
/// cannot: the file grew to 3.5 GB while a store was seeded). It overshoots the reset point by
/// what is written while the low-priority checkpoint thread catches up and, on a busy machine,
/// while this test's reader, off the CPU inside its read transaction, holds old frames: up to
/// 148 MB was seen in a full test run on 2 cores (40-50 MiB on a quiet machine). Without resets
/// it would hold all ~280 MiB written.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_wal_stays_bounded_under_constant_writes_and_reads() {
    let (largest, _) = largest_wal(1, Duration::ZERO, 9_000).await;
    let written = 9_000 * 32 * 1024;
    assert!(
        largest < written * 3 / 4,
        "the WAL reached {largest} bytes of the {written} written (reset past {})",
        WAL_RESET_FRAMES * 4096
    );
}

/// Readers whose transactions overlap (full-text searches in a loop) never leave a moment when
/// the WAL can be reused; past its hard limit the writer waits for the current ones, and the
/// reset truncates the file back to WAL_SIZE_LIMIT. Without that the file only grew, to more
/// than all that was written (494 MB of ~375 MiB: a frame per page of each commit); with it,
/// 200-220 MB at most on a quiet machine, and up to 318 MB in full test runs on 2 cores (the
/// engine's other tests beside it slow the readers' turnover the writer waits for).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_wal_stays_bounded_while_reads_overlap() {
    let (largest, shrank) = largest_wal(2, Duration::from_millis(20), 12_000).await;
    let written = 12_000 * 32 * 1024;
    assert!(shrank, "the WAL was never reset (largest {largest} bytes)");
    assert!(
        largest < written,
        "the WAL reached {largest} bytes of the {written} written (limit {WAL_SIZE_LIMIT})"
    );
}

/// One write of a test group.
type TestWrite = Box<dyn FnOnce(&mut WriteCtx<'_>) -> Result<(), EngineError> + Send>;

/// Runs `writes` as one group: a first write holds the writer until all of them are queued.
async fn one_group(store: &Store, writes: Vec<TestWrite>) -> Vec<Result<(), EngineError>> {
    let hold = store.write(|_| {
        std::thread::sleep(Duration::from_millis(300));
        Ok(())
    });
    let queued = async {
        tokio::time::sleep(Duration::from_millis(50)).await;
        futures::future::join_all(writes.into_iter().map(|f| store.write(f))).await
    };
    let (held, results) = tokio::join!(hold, queued);
    held.unwrap();
    results
}

/// A write that breaks the rule (it fails after a change): its whole group is rolled back.
fn failing_halfway() -> TestWrite {
    Box::new(|w| {
        insert_task(w.conn, &mut task("b"))?;
        Err(EngineError::Invalid("failed halfway".into()))
    })
}

#[tokio::test]
async fn a_write_failing_before_any_change_leaves_its_group_alone() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path(), Durability::Process, ChangeFeed::new(64)).unwrap();
    let results = one_group(
        &store,
        vec![
            Box::new(|w| insert_task(w.conn, &mut task("a"))),
            Box::new(|_| Err(EngineError::NotFound)),
            Box::new(|w| insert_task(w.conn, &mut task("c"))),
        ],
    )
    .await;
    assert!(results[0].is_ok() && results[2].is_ok(), "{results:?}");
    assert!(matches!(results[1], Err(EngineError::NotFound)));
    assert!(store.get("a").unwrap().is_some() && store.get("c").unwrap().is_some());
}

/// `counts` (from `task_counts`) against a count of the rows themselves, for each filter, and
/// `task_count` against `COUNT(*)`.
fn assert_counts_match_rows(store: &Store) {
    assert_eq!(store.task_count().unwrap(), store.totals().unwrap().0);
    let filters = [
        (None, None),
        (Some("alice"), None),
        (Some("bob"), None),
        (None, Some("echo")),
        (None, Some("run")),
        (Some("bob"), Some("echo")),
        (Some("carol"), None),
    ];
    for (principal, tool) in filters {
        let filter = ListFilter {
            principal: principal.map(String::from),
            tool: tool.map(String::from),
            limit: 10,
            ..ListFilter::default()
        };
        let rows: BTreeMap<String, i64> = store
            .read(|c| {
                let mut stmt = c.prepare(&format!(
                    "SELECT status, COUNT(*) FROM tasks WHERE (?1 IS NULL OR principal = ?1)
                     AND (?2 IS NULL OR tool = ?2) GROUP BY status
                     UNION ALL SELECT '{ERROR_COUNT_KEY}', COUNT(*) FROM tasks
                     WHERE (?1 IS NULL OR principal = ?1) AND (?2 IS NULL OR tool = ?2)
                     AND {IS_ERROR_SQL} HAVING COUNT(*) > 0"
                ))?;
                let rows =
                    stmt.query_map(params![principal, tool], |r| Ok((r.get(0)?, r.get(1)?)))?;
                Ok(rows.collect::<Result<_, _>>()?)
            })
            .unwrap();
        assert_eq!(
            store.counts(&filter).unwrap(),
            rows,
            "{principal:?} {tool:?}"
        );
        // The free-text path counts the rows themselves: the same answer.
        let searched = ListFilter {
            query: Some(String::new()),
            ..filter
        };
        assert_eq!(
            store.counts(&searched).unwrap(),
            rows,
            "{principal:?} {tool:?} q"
        );
    }
}

#[tokio::test]
async fn counts_per_status_follow_inserts_transitions_deletes_and_failed_writes() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path(), Durability::Process, ChangeFeed::new(64)).unwrap();
    fn make(id: &str, principal: &str, tool: &str) -> TaskRecord {
        let mut t = task(id);
        t.principal = principal.into();
        t.tool = tool.into();
        t
    }
    for (id, principal, tool) in [
        ("a1", "alice", "echo"),
        ("a2", "alice", "run"),
        ("b1", "bob", "echo"),
        ("b2", "bob", "echo"),
        ("b3", "bob", "run"),
    ] {
        let t = make(id, principal, tool);
        store.write(move |w| w.insert(t).map(drop)).await.unwrap();
    }
    let set_status = |id: &'static str, to: TaskStatus| {
        store.write(move |w| {
            let mut t = w.load(id)?.unwrap();
            let from = t.status;
            t.status = to;
            w.status_changed(&t, from);
            w.save(t).map(drop)
        })
    };
    set_status("a1", TaskStatus::Completed).await.unwrap();
    set_status("b1", TaskStatus::InputRequired).await.unwrap();
    set_status("b2", TaskStatus::Failed).await.unwrap();
    set_status("b1", TaskStatus::Working).await.unwrap();
    // Completed with an error result: counted under `completed` and `error`; b3's error
    // count goes when it is deleted below.
    let complete = |id: &'static str, is_error: bool| {
        store.write(move |w| {
            let mut t = w.load(id)?.unwrap();
            let from = t.status;
            t.status = TaskStatus::Completed;
            t.result = Some(serde_json::json!({"content": [], "isError": is_error}));
            w.status_changed(&t, from);
            w.save(t).map(drop)
        })
    };
    complete("b3", true).await.unwrap();
    store
        .write(|w| {
            let mut t = make("a3", "alice", "run");
            t.status = TaskStatus::Completed;
            t.result = Some(serde_json::json!({"content": [], "isError": true}));
            w.insert(t).map(drop)
        })
        .await
        .unwrap();
    let errors = store.counts(&ListFilter::default()).unwrap();
    assert_eq!(errors.get(ERROR_COUNT_KEY), Some(&2), "{errors:?}");
    let listed = store
        .page(&ListFilter {
            errors_only: true,
            limit: 10,
            ..ListFilter::default()
        })
        .unwrap();
    let ids: Vec<&str> = listed.tasks.iter().map(|t| t.task_id.as_str()).collect();
    assert_eq!(ids, ["a3", "b3"]);
    assert_counts_match_rows(&store);

    // A write that fails after queuing a status change (no row changed): its change is
    // forgotten, the others in its group count.
    let results = one_group(
        &store,
        vec![
            Box::new(|w| {
                let t = w.load("a2")?.unwrap();
                w.status_changed(
                    &TaskRecord {
                        status: TaskStatus::Cancelled,
                        ..t
                    },
                    TaskStatus::Working,
                );
                Err(EngineError::Invalid("changed its mind".into()))
            }),
            Box::new(|w| w.insert(make("c1", "carol", "echo")).map(drop)),
        ],
    )
    .await;
    assert!(results[0].is_err() && results[1].is_ok(), "{results:?}");
    assert_counts_match_rows(&store);
    // A write that fails after changing rows rolls its whole group back, counts included.
    let results = one_group(
        &store,
        vec![
            Box::new(|w| w.insert(make("c2", "carol", "run")).map(drop)),
            Box::new(|w| {
                w.insert(make("c3", "carol", "echo"))?;
                Err(EngineError::Invalid("half done".into()))
            }),
        ],
    )
    .await;
    assert!(results.iter().all(Result::is_err), "{results:?}");
    assert_counts_match_rows(&store);

    store.write(|w| w.delete("b3")).await.unwrap();
    store.write(|w| w.delete("no-such-task")).await.unwrap();
    assert_counts_match_rows(&store);
    let all = store.counts(&ListFilter::default()).unwrap();
    assert_eq!(all.get(ERROR_COUNT_KEY), Some(&1), "{all:?}");
    let statuses: i64 = all
        .iter()
        .filter(|(k, _)| *k != ERROR_COUNT_KEY)
        .map(|(_, n)| n)
        .sum();
    assert_eq!(statuses, 6, "{all:?}");

    // A store whose counts were never taken (or were lost) gets them from its rows.
    store
        .read(|c| {
            c.execute_batch(
                "DELETE FROM meta WHERE key IN ('task_counts', 'task_counts_errors');
                 UPDATE task_counts SET n = 99;",
            )?;
            Ok(())
        })
        .unwrap();
    drop(store);
    let store = Store::open(dir.path(), Durability::Process, ChangeFeed::new(64)).unwrap();
    assert_counts_match_rows(&store);
}

#[test]
fn a_store_from_before_human_only_gets_the_column() {
    let dir = tempfile::tempdir().unwrap();
    {
        let old = Connection::open(dir.path().join("taskdeck.sqlite3")).unwrap();
        old.execute_batch(
            "CREATE TABLE input_requests(task_id TEXT NOT NULL, key TEXT NOT NULL,
               request TEXT NOT NULL, state TEXT NOT NULL, response TEXT, answered_by TEXT,
               answered_at INTEGER, created_at INTEGER NOT NULL, PRIMARY KEY(task_id, key))
               WITHOUT ROWID;
             INSERT INTO input_requests(task_id, key, request, state, created_at)
               VALUES ('old', 'k', '{}', 'outstanding', 1);",
        )
        .unwrap();
    }
    let store = Store::open(dir.path(), Durability::Process, ChangeFeed::new(8)).unwrap();
    store
        .read(|c| {
            assert!(
                !input_human_only(c, "old", "k")?,
                "old rows default to false"
            );
            Ok(())
        })
        .unwrap();
    let c = open_conn(store.path()).unwrap();
    insert_input(&c, "new", "k", &serde_json::json!({}), true, 2).unwrap();
    assert!(input_human_only(&c, "new", "k").unwrap());
}

#[tokio::test]
async fn a_store_from_before_token_roles_keeps_its_tokens_as_agents() {
    let dir = tempfile::tempdir().unwrap();
    {
        let old = Connection::open(dir.path().join("taskdeck.sqlite3")).unwrap();
        old.execute_batch(
            "CREATE TABLE tokens(name TEXT PRIMARY KEY, hash TEXT NOT NULL UNIQUE,
               created_at INTEGER NOT NULL, revoked_at INTEGER);
             INSERT INTO tokens(name, hash, created_at) VALUES ('bot', 'h-bot', 1);",
        )
        .unwrap();
    }
    let store = Store::open(dir.path(), Durability::Process, ChangeFeed::new(8)).unwrap();
    assert_eq!(
        store.live_token("h-bot").unwrap(),
        Some(("bot".to_string(), Role::Agent))
    );
    assert!(
        store
            .add_token("alice", "h-alice", Role::Human)
            .await
            .unwrap()
    );
    let roles: Vec<(String, Role)> = store
        .tokens()
        .unwrap()
        .into_iter()
        .map(|t| (t.name, t.role))
        .collect();
    assert_eq!(
        roles,
        [("alice".into(), Role::Human), ("bot".into(), Role::Agent)]
    );
}

#[tokio::test]
async fn a_write_failing_after_a_change_rolls_back_its_whole_group() {
    let dir = tempfile::tempdir().unwrap();
    let feed = ChangeFeed::new(64);
    let mut changes = feed.subscribe();
    let store = Store::open(dir.path(), Durability::Process, feed).unwrap();
    let results = one_group(
        &store,
        vec![
            Box::new(|w| {
                let t = task("a");
                insert_task(w.conn, &mut t.clone())?;
                w.event(&t, 1, "created", serde_json::json!({}))?;
                Ok(())
            }),
            failing_halfway(),
        ],
    )
    .await;
    assert!(
        matches!(&results[0], Err(EngineError::Store(_))),
        "{results:?}"
    );
    assert!(matches!(&results[1], Err(EngineError::Invalid(_))));
    assert!(store.get("a").unwrap().is_none() && store.get("b").unwrap().is_none());
    assert!(changes.try_recv().is_err(), "nothing is published");
    // The writer goes on with the next group.
    store
        .write(|w| insert_task(w.conn, &mut task("d")))
        .await
        .unwrap();
    assert!(store.get("d").unwrap().is_some());
}

#[tokio::test]
async fn the_writers_copies_follow_rollbacks_and_changes_carry_the_saved_state() {
    let dir = tempfile::tempdir().unwrap();
    let feed = ChangeFeed::new(64);
    let mut changes = feed.subscribe();
    let store = Store::open(dir.path(), Durability::Process, feed).unwrap();
    let mut a = task("a");
    a.status = TaskStatus::Working;
    store.write(move |w| w.insert(a).map(drop)).await.unwrap();
    // A save in a group that is rolled back must not survive in the writer's copy.
    let results = one_group(
        &store,
        vec![
            Box::new(|w| {
                let mut t = w.load("a")?.unwrap();
                t.status_message = Some("rolled back".into());
                w.save(t).map(drop)
            }),
            failing_halfway(),
        ],
    )
    .await;
    assert!(results.iter().all(Result::is_err), "{results:?}");
    let seen = store
        .write(|w| Ok(w.load("a")?.unwrap().status_message))
        .await
        .unwrap();
    assert_eq!(seen, None, "the writer reads the committed row again");
    // An event queued before the save carries the task as the write leaves it.
    store
        .write(|w| {
            let mut t = w.load("a")?.unwrap();
            w.event(&t, 2, "statusMessage", serde_json::json!({}))?;
            t.status_message = Some("final".into());
            w.save(t).map(drop)
        })
        .await
        .unwrap();
    let change = changes.try_recv().unwrap();
    assert_eq!(change.event.kind, "statusMessage");
    assert_eq!(change.task.status_message.as_deref(), Some("final"));
    assert_eq!(
        store.get("a").unwrap().unwrap().status_message.as_deref(),
        Some("final")
    );
}

#[tokio::test]
async fn cached_get_answers_follow_every_committed_write_and_no_rolled_back_one() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path(), Durability::Process, ChangeFeed::new(64)).unwrap();
    let status = |store: &Store| {
        let answer = store.get_answer("a").unwrap()?;
        let v: Value = serde_json::from_str(&answer.json).unwrap();
        Some(v["status"].as_str().unwrap().to_string())
    };
    store
        .write(|w| w.insert(task("a")).map(drop))
        .await
        .unwrap();
    assert_eq!(status(&store).as_deref(), Some("working"));
    assert_eq!(store.state.answers.len(), 1, "the answer is cached");
    // A rolled-back save changes nothing, in the store or the cache.
    let results = one_group(
        &store,
        vec![
            Box::new(|w| {
                let mut t = w.load("a")?.unwrap();
                t.status = TaskStatus::Completed;
                w.save(t).map(drop)
            }),
            failing_halfway(),
        ],
    )
    .await;
    assert!(results.iter().all(Result::is_err), "{results:?}");
    assert_eq!(status(&store).as_deref(), Some("working"));
    // An input request (written with SQL of its own, then logged) shows at once.
    store
        .write(|w| {
            let mut t = w.load("a")?.unwrap();
            insert_input(
                w.conn,
                "a",
                "k",
                &serde_json::json!({"method": "elicitation/create"}),
                false,
                2,
            )?;
            t.status = TaskStatus::InputRequired;
            w.event(&t, 2, "inputRequested", serde_json::json!({"key": "k"}))?;
            w.save(t).map(drop)
        })
        .await
        .unwrap();
    assert_eq!(status(&store).as_deref(), Some("input_required"));
    let answer = store.get_answer("a").unwrap().unwrap();
    assert!(
        answer.json.contains("\"inputRequests\":{\"k\""),
        "{}",
        answer.json
    );
    store
        .write(|w| {
            let mut t = w.load("a")?.unwrap();
            answer_input(
                w.conn,
                "a",
                "k",
                &serde_json::json!({"action": "accept"}),
                "admin",
                3,
            )?;
            t.status = TaskStatus::Completed;
            t.input_requests.clear();
            t.result = Some(serde_json::json!({"content": []}));
            w.event(&t, 3, "status", serde_json::json!({}))?;
            w.save(t).map(drop)
        })
        .await
        .unwrap();
    assert_eq!(status(&store).as_deref(), Some("completed"));
    store.write(|w| w.delete("a")).await.unwrap();
    assert_eq!(status(&store), None, "a deleted task is not found");
}

/// A full store (SQLite's `max_page_count` here: the same SQLITE_FULL a full file system gives,
/// which `tests/integration/store_faults.rs` makes with a real tmpfs) refuses writes with
/// `DiskFull`, keeps what was committed readable, and takes writes again once there is room:
/// the writer thread survives the failed writes.
#[tokio::test]
async fn a_full_store_refuses_writes_with_disk_full_and_then_takes_them_again() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path(), Durability::Process, ChangeFeed::new(64)).unwrap();
    store
        .write(|w| insert_task(w.conn, &mut task("kept")))
        .await
        .unwrap();
    let cap = |pages: i64| {
        move |w: &mut WriteCtx<'_>| -> Result<(), EngineError> {
            let pages = match pages {
                0 => w
                    .conn
                    .query_row("PRAGMA page_count", [], |r| r.get::<_, i64>(0))?,
                n => n,
            };
            w.conn
                .query_row(&format!("PRAGMA max_page_count = {pages}"), [], |_| Ok(()))?;
            Ok(())
        }
    };
    store.write(cap(0)).await.unwrap();
    let note = "x".repeat(64 * 1024);
    let mut refused = None;
    for i in 0..20 {
        let mut t = task(&format!("big{i}"));
        t.arguments = serde_json::json!({ "note": note });
        if let Err(e) = store.write(move |w| insert_task(w.conn, &mut t)).await {
            refused = Some(e);
            break;
        }
    }
    assert!(
        matches!(refused, Some(EngineError::DiskFull(_))),
        "{refused:?}"
    );
    assert!(store.get("kept").unwrap().is_some(), "reads go on");
    store.write(cap(1_073_741_823)).await.unwrap();
    store
        .write(|w| insert_task(w.conn, &mut task("after")))
        .await
        .unwrap();
    assert!(store.get("after").unwrap().is_some());
}

/// A write of a `statusMessage` event on task `id` setting its message to `text`.
fn message_write(
    id: &'static str,
    text: impl Into<String>,
) -> impl FnOnce(&mut WriteCtx<'_>) -> Result<(), EngineError> + Send + 'static {
    let text: String = text.into();
    move |w| {
        let mut t = w.load(id)?.unwrap();
        w.event(&t, 2, "statusMessage", serde_json::json!({}))?;
        t.status_message = Some(text);
        w.save(t).map(drop)
    }
}

/// A fresh store holding working task "a", with a subscription to its feed that has seen
/// nothing yet (the directory must outlive the store).
async fn store_with_task_a() -> (
    tempfile::TempDir,
    Store,
    tokio::sync::broadcast::Receiver<Arc<crate::feed::Change>>,
) {
    let dir = tempfile::tempdir().unwrap();
    let feed = ChangeFeed::new(64);
    let mut changes = feed.subscribe();
    let store = Store::open(dir.path(), Durability::Process, feed).unwrap();
    store
        .write(|w| w.insert(task("a")).map(drop))
        .await
        .unwrap();
    while changes.try_recv().is_ok() {}
    (dir, store, changes)
}

#[tokio::test]
async fn an_unhurried_write_waits_for_one_someone_waits_for_and_shares_its_commit() {
    let (_dir, store, mut changes) = store_with_task_a().await;
    // Queued, not yet committed: the writer holds it back for company. (A machine that
    // pauses this test past the writer's 50 ms wait gets another try.)
    for _ in 0..10 {
        let queued = std::time::Instant::now();
        store
            .write_unhurried(message_write("a", "progress"))
            .unwrap();
        tokio::time::sleep(Duration::from_millis(20)).await;
        let early = changes.try_recv();
        if queued.elapsed() >= Duration::from_millis(40) {
            if early.is_err() {
                changes.recv().await.unwrap();
            }
            continue;
        }
        assert!(
            early.is_err(),
            "an unhurried write was committed alone at once"
        );
        // A write someone waits for joins it: both come out of one commit, in order.
        store.write(message_write("a", "settled")).await.unwrap();
        let first = changes.try_recv().unwrap();
        let second = changes.try_recv().unwrap();
        assert_eq!(first.task.status_message.as_deref(), Some("progress"));
        assert_eq!(second.task.status_message.as_deref(), Some("settled"));
        assert_eq!(
            store.get("a").unwrap().unwrap().status_message.as_deref(),
            Some("settled")
        );
        return;
    }
    panic!("the machine never let this test queue two writes within 40 ms");
}

#[tokio::test]
async fn an_unhurried_write_alone_is_committed_within_its_wait() {
    let (_dir, store, mut changes) = store_with_task_a().await;
    let queued = std::time::Instant::now();
    for n in ["1", "2", "3"] {
        store.write_unhurried(message_write("a", n)).unwrap();
    }
    // Committed 50 ms after the first was queued (2 s allows for a loaded machine), in order.
    let first = tokio::time::timeout(Duration::from_secs(2), changes.recv())
        .await
        .expect("an unhurried write was never committed")
        .unwrap();
    assert!(
        queued.elapsed() >= Duration::from_millis(40),
        "{:?}",
        queued.elapsed()
    );
    assert_eq!(first.task.status_message.as_deref(), Some("1"));
    assert_eq!(
        changes.recv().await.unwrap().task.status_message.as_deref(),
        Some("2")
    );
    assert_eq!(
        changes.recv().await.unwrap().task.status_message.as_deref(),
        Some("3")
    );
    assert_eq!(
        store.get("a").unwrap().unwrap().status_message.as_deref(),
        Some("3")
    );
}

#[tokio::test]
async fn unhurried_writes_queued_together_wake_the_writer_once() {
    let (_dir, store, mut changes) = store_with_task_a().await;
    // 50 reports (the test feed keeps 64) within the writer's 50 ms wait: the first tells the writer, the others join
    // its queue without a wake-up. (A machine that pauses this test past the wait gets
    // another try.)
    for _ in 0..10 {
        let before = store.unhurried_wakes();
        let queued = std::time::Instant::now();
        for n in 0..50 {
            store
                .write_unhurried(message_write("a", n.to_string()))
                .unwrap();
        }
        let took = queued.elapsed();
        for n in 0..50 {
            let change = tokio::time::timeout(Duration::from_secs(2), changes.recv())
                .await
                .expect("an unhurried write was never committed")
                .unwrap();
            assert_eq!(
                change.task.status_message.as_deref(),
                Some(n.to_string().as_str())
            );
        }
        if took >= Duration::from_millis(40) {
            continue;
        }
        assert_eq!(store.unhurried_wakes() - before, 1);
        return;
    }
    panic!("the machine never let this test queue 50 writes within 40 ms");
}

/// A read connection busy while the search index is opened late (after a full disk at start)
/// is not kept without it: the next read, a search's, has the index attached.
#[test]
fn a_reader_busy_as_the_index_opens_late_is_not_kept_without_it() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open_for_tokens(dir.path()).unwrap();
    let index = crate::search::open(dir.path()).unwrap();
    let health = Arc::new(crate::search::IndexHealth::new(index.clone()));
    let pool = ReaderPool::new(store.path().to_path_buf(), None);
    let has_index = |c: &Connection| {
        c.query_row(
            "SELECT count(*) FROM pragma_database_list WHERE name = 'search'",
            [],
            |r| r.get::<_, i64>(0),
        )
        .map_err(EngineError::from)
    };
    let during = pool
        .with(|c| {
            pool.index_ready((index.clone(), health.clone()));
            has_index(c)
        })
        .unwrap();
    assert_eq!(during, 0);
    assert!(pool.has_search());
    assert_eq!(pool.with(has_index).unwrap(), 1);
}

/// A read sees one commit: a task read while a writer moves it between `input_required` (its
/// request outstanding) and `working` (the request answered) is never `input_required` without
/// its request, though the task's row and its requests are read by separate statements.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_racing_an_answer_never_sees_input_required_without_its_request() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path(), Durability::Process, ChangeFeed::new(64)).unwrap();
    store
        .write(|w| w.insert(task("a")).map(drop))
        .await
        .unwrap();
    let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let reader = {
        let (store, done) = (store.clone(), done.clone());
        std::thread::spawn(move || {
            let mut torn = Vec::new();
            let mut reads = 0u64;
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                let t = store.get("a").unwrap().unwrap();
                if t.status == TaskStatus::InputRequired && t.input_requests.is_empty() {
                    torn.push(format!("get: {:?}", t.status));
                }
                let answer = store.get_answer("a").unwrap().unwrap();
                if answer.json.contains("\"input_required\"")
                    && !answer.json.contains("\"inputRequests\":{\"k")
                {
                    torn.push(format!("tasks/get: {}", answer.json));
                }
                let listed = store
                    .page(&ListFilter {
                        limit: 10,
                        ..Default::default()
                    })
                    .unwrap();
                for t in listed.tasks {
                    if t.status == TaskStatus::InputRequired && t.input_requests.is_empty() {
                        torn.push(format!("list: {:?}", t.status));
                    }
                }
                reads += 1;
            }
            (torn, reads)
        })
    };
    for round in 0..400i64 {
        let key = format!("k{round}");
        let k = key.clone();
        store
            .write(move |w| {
                let mut t = w.load("a")?.unwrap();
                insert_input(
                    w.conn,
                    "a",
                    &k,
                    &serde_json::json!({"method": "elicitation/create"}),
                    false,
                    round,
                )?;
                t.status = TaskStatus::InputRequired;
                t.input_requests.insert(k.clone(), serde_json::json!({}));
                w.event(&t, round, "inputRequested", serde_json::json!({"key": k}))?;
                w.save(t).map(drop)
            })
            .await
            .unwrap();
        store
            .write(move |w| {
                let mut t = w.load("a")?.unwrap();
                answer_input(
                    w.conn,
                    "a",
                    &key,
                    &serde_json::json!({"action": "accept"}),
                    "admin",
                    round,
                )?;
                t.status = TaskStatus::Working;
                t.input_requests.clear();
                w.event(&t, round, "inputAnswered", serde_json::json!({"key": key}))?;
                w.save(t).map(drop)
            })
            .await
            .unwrap();
    }
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    let (torn, reads) = reader.join().unwrap();
    assert!(reads > 0);
    assert!(
        torn.is_empty(),
        "{} of {reads} reads were torn: {:?}",
        torn.len(),
        &torn[..torn.len().min(5)]
    );
}
