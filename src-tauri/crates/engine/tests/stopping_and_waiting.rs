//! Two small engine contracts over a real SQLite store in a temp dir: a stop interrupts each
//! running non-resumable tool once, however many times it is asked for (the signal handler and
//! the server's own stop both ask), and [`Engine::get_when`] answers as soon as the awaited
//! change is committed, or at its deadline with the task as it is then.

use std::{
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
    time::Duration,
};

use futures::future::BoxFuture;
use serde_json::{Value, json};
use taskdeck_engine::{
    Engine, EngineConfig, EngineError, Outcome, Principal, TaskContext, TaskFailure, TaskStatus,
    TaskTool, ToolDescriptor, ToolMode,
    feed::ChangeFeed,
    store::{Durability, Store},
};
use tokio::time::Instant;

/// Runs until cancelled; first asks one question (key `q`) `askAfterMs` milliseconds in, when
/// its arguments give that. Counts the calls of [`TaskTool::interrupted`].
struct Waits {
    descriptor: ToolDescriptor,
    interrupted: AtomicUsize,
}

impl TaskTool for Waits {
    fn descriptor(&self) -> &ToolDescriptor {
        &self.descriptor
    }

    fn interrupted(&self, _task_id: &str) {
        self.interrupted.fetch_add(1, Ordering::SeqCst);
    }

    fn run(&self, ctx: TaskContext, arguments: Value) -> BoxFuture<'static, Outcome> {
        Box::pin(async move {
            if let Some(after) = arguments["askAfterMs"].as_u64() {
                tokio::time::sleep(Duration::from_millis(after)).await;
                let question = json!({"method": "elicitation/create", "params": {
                    "mode": "form", "message": "go on?",
                    "requestedSchema": {"type": "object", "properties": {}}}});
                let _ = ctx.request_input("q", question).await;
            }
            ctx.cancelled().await;
            Outcome::Cancelled
        })
    }
}

fn error_object(failure: &TaskFailure) -> Value {
    json!({"message": failure.message})
}

async fn engine(dir: &std::path::Path) -> (Engine, Arc<Waits>) {
    let store = Store::open(dir, Durability::Process, ChangeFeed::new(64)).expect("store");
    let engine = Engine::new(store, EngineConfig::default(), error_object);
    let tool = Arc::new(Waits {
        descriptor: ToolDescriptor {
            name: "waits".into(),
            title: None,
            description: String::new(),
            input_schema: json!({"type": "object"}),
            mode: ToolMode::Task { required: false },
            resumable: false,
            agent_callable: true,
        },
        interrupted: AtomicUsize::new(0),
    });
    engine.register_tool(tool.clone());
    engine.start().await.expect("engine start");
    (engine, tool)
}

#[tokio::test]
async fn a_stop_asked_twice_interrupts_each_running_tool_once() {
    let dir = tempfile::tempdir().unwrap();
    let (engine, tool) = engine(dir.path()).await;
    let owner = Principal::named("agent");
    for _ in 0..2 {
        engine
            .create_task(&owner, "waits", json!({}))
            .await
            .unwrap();
    }
    engine.shutdown();
    engine.shutdown();
    assert_eq!(tool.interrupted.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn get_when_answers_at_the_change_or_at_the_deadline() {
    let dir = tempfile::tempdir().unwrap();
    let (engine, _) = engine(dir.path()).await;
    let owner = Principal::named("agent");
    let asks = engine
        .create_task(&owner, "waits", json!({"askAfterMs": 300}))
        .await
        .unwrap();
    let asking = |t: &taskdeck_engine::TaskRecord| !t.input_requests.is_empty();

    // Woken by the question, well before the deadline.
    let began = Instant::now();
    let task = engine
        .get_when(
            &owner,
            &asks.task_id,
            began + Duration::from_secs(10),
            asking,
        )
        .await
        .unwrap();
    assert_eq!(task.status, TaskStatus::InputRequired);
    assert!(
        began.elapsed() < Duration::from_secs(5),
        "{:?}",
        began.elapsed()
    );

    // Nothing changes: the task as it is at the deadline.
    let quiet = engine
        .create_task(&owner, "waits", json!({}))
        .await
        .unwrap();
    let began = Instant::now();
    let task = engine
        .get_when(
            &owner,
            &quiet.task_id,
            began + Duration::from_millis(200),
            asking,
        )
        .await
        .unwrap();
    assert_eq!(task.status, TaskStatus::Working);
    assert!(began.elapsed() >= Duration::from_millis(200));

    // Another principal's task is not found, as for `get`.
    let other = engine
        .get_when(
            &Principal::named("other"),
            &quiet.task_id,
            Instant::now(),
            asking,
        )
        .await;
    assert!(matches!(other, Err(EngineError::NotFound)), "{other:?}");
    engine.shutdown();
}
