//! The audit log through the engine over a real SQLite store in a temp dir: a decision lands
//! in the log and on its task's timeline in one write, outlives the task's TTL, is pruned from
//! the oldest end at its own retention (verification then starts from the anchor), and rows
//! edited or deleted behind the engine's back are found by `verify_audit`.

use std::{sync::Arc, time::Duration};

use futures::future::BoxFuture;
use rusqlite::{Connection, params};
use serde_json::{Value, json};

use crate::{
    DecisionRecord, Engine, EngineConfig, EngineError, Outcome, Principal, TaskContext, TaskTool,
    ToolDescriptor, ToolMode,
    failure::TaskFailure,
    feed::ChangeFeed,
    store::{Durability, Store},
};

fn error_object(failure: &TaskFailure) -> Value {
    json!({"message": failure.message})
}

/// Completes at once.
struct Done(ToolDescriptor);

impl TaskTool for Done {
    fn descriptor(&self) -> &ToolDescriptor {
        &self.0
    }
    fn run(&self, _ctx: TaskContext, _arguments: Value) -> BoxFuture<'static, Outcome> {
        Box::pin(async { Outcome::text("done") })
    }
}

async fn engine(dir: &std::path::Path, config: EngineConfig) -> Engine {
    let store = Store::open(dir, Durability::Process, ChangeFeed::new(64)).unwrap();
    let engine = Engine::new(store, config, error_object);
    engine.register_tool(Arc::new(Done(ToolDescriptor {
        name: "done".into(),
        title: None,
        description: String::new(),
        input_schema: json!({"type": "object"}),
        mode: ToolMode::Task { required: false },
        resumable: false,
        agent_callable: true,
    })));
    engine.start().await.unwrap();
    engine
}

fn decision(task_id: Option<&str>, n: u64) -> DecisionRecord {
    DecisionRecord {
        task_id: task_id.map(str::to_string),
        principal: "agent".into(),
        server: "fs".into(),
        tool: "write".into(),
        digest: format!("sha256:{}", "0f".repeat(32)),
        decision: "deny".into(),
        decided_by: "human".into(),
        human: Some("alice".into()),
        rule: None,
        reason: Some(format!("not now {n}")),
        arguments: json!({"path": format!("/tmp/{n}")}),
        edited_arguments: None,
    }
}

async fn eventually(what: &str, mut ok: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !ok() {
        assert!(std::time::Instant::now() < deadline, "timed out: {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn a_decision_is_chained_shown_on_its_task_and_outlives_the_task() {
    let dir = tempfile::tempdir().unwrap();
    let engine = engine(dir.path(), EngineConfig::default()).await;
    let agent = Principal::named("agent");
    let task = engine
        .create_task_with_ttl(&agent, "done", json!({}), Some(1_000))
        .await
        .unwrap();
    let first = engine
        .record_decision(decision(Some(&task.task_id), 1))
        .await
        .unwrap();
    assert_eq!(
        (first.seq, first.prev_hash.as_str()),
        (1, crate::audit::GENESIS_HASH)
    );
    let second = engine.record_decision(decision(None, 2)).await.unwrap();
    assert_eq!((second.seq, &second.prev_hash), (2, &first.hash));
    // A task id that names no task: the entry is kept all the same.
    let third = engine
        .record_decision(decision(Some("no-such-task"), 3))
        .await
        .unwrap();
    assert_eq!(third.seq, 3);

    let (events, _, _) = engine.history(&agent, &task.task_id, None, 100).unwrap();
    let shown: Vec<&Value> = events
        .iter()
        .filter(|e| e.kind == "decision")
        .map(|e| &e.data)
        .collect();
    assert_eq!(shown, [&serde_json::to_value(&first).unwrap()]);

    // The task goes at its TTL; its entry stays.
    eventually("the task expires", || {
        matches!(
            engine.get(&agent, &task.task_id),
            Err(EngineError::NotFound)
        )
    })
    .await;
    let entries = engine.audit_entries(None, None, 10).unwrap();
    assert_eq!(entries, [first.clone(), second.clone(), third.clone()]);
    assert_eq!(
        engine.audit_entries(None, Some(1), 1).unwrap(),
        std::slice::from_ref(&second)
    );
    assert_eq!(
        engine
            .audit_entries(Some(third.at_ms), None, 10)
            .unwrap()
            .last(),
        Some(&third)
    );
    let report = engine.verify_audit().unwrap();
    assert!(report.ok, "{report:?}");
    assert_eq!((report.entries, report.last_seq), (3, Some(3)));
    assert_eq!(report.head_hash.as_deref(), Some(third.hash.as_str()));

    // Values outside the documented sets are refused, and nothing is written.
    let mut bad = decision(None, 4);
    bad.decided_by = "someone".into();
    assert!(matches!(
        engine.record_decision(bad).await,
        Err(EngineError::Invalid(_))
    ));
    assert_eq!(engine.verify_audit().unwrap().entries, 3);
}

#[tokio::test]
async fn retention_prunes_the_oldest_entries_and_what_remains_verifies() {
    let dir = tempfile::tempdir().unwrap();
    let config = EngineConfig {
        audit_retention_ms: Some(1_000),
        ..EngineConfig::default()
    };
    let engine = engine(dir.path(), config).await;
    for n in 1..=3 {
        engine.record_decision(decision(None, n)).await.unwrap();
    }
    tokio::time::sleep(Duration::from_millis(600)).await;
    for n in 4..=5 {
        engine.record_decision(decision(None, n)).await.unwrap();
    }
    // The sweeper wakes when the oldest entry is due, without being asked.
    eventually("entries 1..=3 are pruned", || {
        engine.audit_entries(None, None, 10).unwrap().len() == 2
    })
    .await;
    let report = engine.verify_audit().unwrap();
    assert!(report.ok, "{report:?}");
    assert_eq!((report.first_seq, report.last_seq), (Some(4), Some(5)));
    // The next entry continues the chain.
    let sixth = engine.record_decision(decision(None, 6)).await.unwrap();
    assert_eq!(sixth.seq, 6);
    eventually("everything is pruned", || {
        engine.audit_entries(None, None, 10).unwrap().is_empty()
    })
    .await;
    // An empty, pruned log verifies: the head is the last pruned entry.
    let report = engine.verify_audit().unwrap();
    assert!(report.ok && report.entries == 0, "{report:?}");
}

/// Runs `sql` on the store file from a connection of its own, as someone with the file would.
fn tamper(dir: &std::path::Path, sql: &str, seq: i64) {
    let conn = Connection::open(dir.join("taskdeck.sqlite3")).unwrap();
    assert_eq!(conn.execute(sql, params![seq]).unwrap(), 1, "{sql}");
}

#[tokio::test]
async fn edited_and_deleted_rows_are_found_at_their_seq() {
    let cases: &[(&str, i64, u64, &str)] = &[
        (
            "UPDATE audit SET reason = 'fine by me' WHERE seq = ?1",
            3,
            3,
            "a field was changed",
        ),
        (
            "UPDATE audit SET decision = 'allow' WHERE seq = ?1",
            5,
            5,
            "a field was changed",
        ),
        (
            "UPDATE audit SET hash = 'beef' || substr(hash, 5) WHERE seq = ?1",
            2,
            2,
            "the hash was changed",
        ),
        ("DELETE FROM audit WHERE seq = ?1", 3, 3, "missing"),
        ("DELETE FROM audit WHERE seq = ?1", 1, 1, "missing"),
        (
            "DELETE FROM audit WHERE seq = ?1",
            5,
            5,
            "newest entries were deleted",
        ),
    ];
    for (sql, seq, at, what) in cases {
        let dir = tempfile::tempdir().unwrap();
        let engine = engine(dir.path(), EngineConfig::default()).await;
        for n in 1..=5 {
            engine.record_decision(decision(None, n)).await.unwrap();
        }
        assert!(engine.verify_audit().unwrap().ok);
        tamper(dir.path(), sql, *seq);
        let report = engine.verify_audit().unwrap();
        let problem = report.problem.expect(sql);
        assert!(!report.ok);
        assert_eq!(problem.seq, *at, "{sql}: {}", problem.what);
        assert!(problem.what.contains(what), "{sql}: {}", problem.what);
        engine.shutdown();
    }
}
