//! Who may answer a human-only input request (`TaskContext::elicit_human`, e.g. an approval):
//! a person, the admin or a human principal (`Principal::human`), whose name is recorded as
//! the answer's `by`; an agent's answer, the task owner's included, is ignored and the request
//! keeps waiting. A human also sees and may cancel every principal's tasks, like the admin.

use std::{sync::Arc, time::Duration};

use futures::future::BoxFuture;
use serde_json::{Map, Value, json};
use taskdeck_engine::{
    Engine, EngineConfig, EngineError, Outcome, Principal, TaskContext, TaskFailure, TaskStatus,
    TaskTool, ToolDescriptor, ToolMode,
    feed::ChangeFeed,
    store::{Durability, ListFilter, Store},
};

/// Asks the human one yes/no question under key `approve` and completes with the answer.
struct AsksHuman(ToolDescriptor);

impl TaskTool for AsksHuman {
    fn descriptor(&self) -> &ToolDescriptor {
        &self.0
    }
    fn run(&self, ctx: TaskContext, _arguments: Value) -> BoxFuture<'static, Outcome> {
        Box::pin(async move {
            let schema = json!({"type": "object", "properties": {"ok": {"type": "boolean"}}});
            match ctx.elicit_human("approve", "Deploy?", schema).await {
                Ok(answer) => Outcome::text(answer.to_string()),
                Err(e) => e.into(),
            }
        })
    }
}

async fn engine(dir: &std::path::Path) -> Engine {
    let store = Store::open(dir, Durability::Process, ChangeFeed::new(64)).unwrap();
    let engine = Engine::new(
        store,
        EngineConfig::default(),
        |f: &TaskFailure| json!({"message": f.message}),
    );
    engine.register_tool(Arc::new(AsksHuman(ToolDescriptor {
        name: "asks_human".into(),
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

async fn wait_for(engine: &Engine, id: &str, status: TaskStatus) {
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        let t = engine.get(&Principal::admin(), id).unwrap();
        if t.status == status {
            return;
        }
        assert!(std::time::Instant::now() < deadline, "still {:?}", t.status);
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

fn yes() -> Map<String, Value> {
    let answer = json!({"approve": {"action": "accept", "content": {"ok": true}}});
    answer.as_object().unwrap().clone()
}

#[tokio::test]
async fn a_human_answers_what_an_agent_may_not() {
    let dir = tempfile::tempdir().unwrap();
    let engine = engine(dir.path()).await;
    let (bot, other, alice) = (
        Principal::named("bot"),
        Principal::named("other-bot"),
        Principal::human("alice"),
    );
    let task = engine
        .create_task(&bot, "asks_human", json!({}))
        .await
        .unwrap();
    let id = task.task_id.clone();
    wait_for(&engine, &id, TaskStatus::InputRequired).await;

    // The owner, an agent, is ignored; another agent does not even see the task.
    let report = engine.answer(&bot, &id, yes()).await.unwrap();
    assert_eq!(
        (report.accepted.len(), report.ignored),
        (0, vec!["approve".to_string()])
    );
    assert!(matches!(
        engine.answer(&other, &id, yes()).await,
        Err(EngineError::NotFound)
    ));
    assert_eq!(
        engine.get(&bot, &id).unwrap().status,
        TaskStatus::InputRequired
    );

    // The human sees every principal's tasks and its answer counts, recorded under its name.
    let filter = ListFilter {
        limit: 10,
        ..ListFilter::default()
    };
    let listed = engine.page(&alice, filter.clone()).unwrap().tasks;
    assert_eq!(listed.len(), 1);
    assert!(engine.page(&other, filter).unwrap().tasks.is_empty());
    let report = engine.answer(&alice, &id, yes()).await.unwrap();
    assert_eq!(report.accepted, ["approve"]);
    wait_for(&engine, &id, TaskStatus::Completed).await;
    let (timeline, _, rounds) = engine.history(&alice, &id, None, 100).unwrap();
    assert_eq!(rounds[0].answered_by.as_deref(), Some("alice"));
    let answered = timeline.iter().find(|e| e.kind == "inputAnswered").unwrap();
    assert_eq!(answered.data["by"], "alice");
}

#[tokio::test]
async fn a_human_cancels_another_principals_task() {
    let dir = tempfile::tempdir().unwrap();
    let engine = engine(dir.path()).await;
    let task = engine
        .create_task(&Principal::named("bot"), "asks_human", json!({}))
        .await
        .unwrap();
    wait_for(&engine, &task.task_id, TaskStatus::InputRequired).await;
    engine
        .cancel(&Principal::human("alice"), &task.task_id)
        .await
        .unwrap();
    wait_for(&engine, &task.task_id, TaskStatus::Cancelled).await;
}
