//! Property tests of the task state machine and the input-request rules (SEP-2663 §Task Status,
//! §Task Update Requests, §Task Cancellation) against a small model.
//!
//! proptest generates sequences of operations (create, status messages, input requests by key,
//! answers from the owner, the admin and a stranger, reuse of a key, cancel, complete, fail,
//! expiry by ttlMs, restart on the same store) and runs them on a real [`Engine`] over a SQLite
//! store in a temporary directory, through the crate's public API only. After every step the
//! engine must agree with the model: each task's status, statusMessage, outstanding and
//! human-only input keys, retention, input rounds and its whole timeline (so the timeline grew
//! by exactly the predicted events); a terminal task never changes again; another principal gets
//! `NotFound` for every task. The seed and the number of cases are fixed: every run replays the
//! same cases, in a few seconds.

use std::{
    collections::{BTreeMap, HashMap},
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use futures::future::BoxFuture;
use proptest::{
    prelude::*,
    test_runner::{Config, RngSeed},
};
use serde_json::{Map, Value, json};
use taskdeck_engine::{
    Engine, EngineConfig, EngineError, Outcome, Principal, TaskContext, TaskFailure, TaskRecord,
    TaskStatus, TaskTool, ToolDescriptor, ToolMode,
    feed::ChangeFeed,
    store::{Durability, Store},
};
use tokio::sync::oneshot;

/// The input keys operations pick from: few, so that keys are often asked, answered and
/// asked again.
const KEYS: [&str; 3] = ["a", "b", "c"];
const OWNER: &str = "alice";
const STRANGER: &str = "mallory";
/// The shortest ttlMs a requestor may ask for ([`Engine::MIN_REQUESTED_TTL_MS`]): the task
/// that is left to expire.
const SHORT_TTL_MS: u64 = Engine::MIN_REQUESTED_TTL_MS;
/// How long a step may take to show its effect (the executor settles tasks on its own task).
const SETTLE_TIMEOUT: Duration = Duration::from_secs(5);

// ---- the operations ----------------------------------------------------------------------------

/// Who makes a call: the task's owner, the admin (the human at Taskdeck) or another principal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Who {
    Owner,
    Admin,
    Stranger,
}

impl Who {
    fn principal(self) -> Principal {
        match self {
            Who::Owner => Principal::named(OWNER),
            Who::Admin => Principal::admin(),
            Who::Stranger => Principal::named(STRANGER),
        }
    }
}

/// Which task a step acts on: the `n`-th (modulo how many there are) of the tasks that are not
/// settled when `live` and there is one, else of all tasks.
#[derive(Debug, Clone, Copy)]
struct TaskPick {
    n: usize,
    live: bool,
}

fn task_pick() -> impl Strategy<Value = TaskPick> + Clone {
    (0..8usize, prop::bool::weighted(0.8)).prop_map(|(n, live)| TaskPick { n, live })
}

/// Which key an answer is for: one the task is waiting on (the `n`-th outstanding one, modulo
/// how many there are), so that answers are often taken, or any of [`KEYS`].
#[derive(Debug, Clone, Copy)]
enum AnswerKey {
    Outstanding(usize),
    Any(usize),
}

/// One step. `task` picks a created task (the step is skipped when there is none), `key` one of
/// [`KEYS`].
#[derive(Debug, Clone)]
enum Op {
    /// A task of the resumable tool (run again after a restart) or of the other one (failed as
    /// interrupted by a restart).
    Create {
        resumable: bool,
    },
    /// A task created with ttlMs [`SHORT_TTL_MS`], then left until the sweeper expires it (at
    /// most once per case: it takes a second).
    CreateAndExpire,
    /// The tool sets its statusMessage.
    StatusMessage {
        task: TaskPick,
        text: u8,
    },
    /// The tool asks for input under `key`: the human only (stored without waiting), or anyone
    /// who may see the task (an `elicit` that waits for the answer).
    Ask {
        task: TaskPick,
        key: usize,
        human_only: bool,
    },
    /// The tool asks again under a key it used, with another request.
    AskAgainOtherRequest {
        task: TaskPick,
        key: usize,
    },
    /// `who` answers the keys, each with a valid or an invalid (schema-failing) answer.
    Answer {
        task: TaskPick,
        who: Who,
        answers: Vec<(AnswerKey, bool)>,
    },
    Cancel {
        task: TaskPick,
        who: Who,
    },
    Complete {
        task: TaskPick,
    },
    Fail {
        task: TaskPick,
    },
    /// Shut the engine down and open the same store again.
    Restart,
}

fn op() -> impl Strategy<Value = Op> {
    let who = prop_oneof![
        2 => Just(Who::Owner),
        2 => Just(Who::Admin),
        1 => Just(Who::Stranger)
    ];
    let answer_key = prop_oneof![
        3 => (0..KEYS.len()).prop_map(AnswerKey::Outstanding),
        1 => (0..KEYS.len()).prop_map(AnswerKey::Any),
    ];
    prop_oneof![
        4 => prop::bool::weighted(0.7).prop_map(|resumable| Op::Create { resumable }),
        1 => Just(Op::CreateAndExpire),
        1 => (task_pick(), 0..4u8).prop_map(|(task, text)| Op::StatusMessage { task, text }),
        8 => (task_pick(), 0..KEYS.len(), any::<bool>())
            .prop_map(|(task, key, human_only)| Op::Ask { task, key, human_only }),
        2 => (task_pick(), 0..KEYS.len())
            .prop_map(|(task, key)| Op::AskAgainOtherRequest { task, key }),
        8 => (
            task_pick(),
            who.clone(),
            prop::collection::vec((answer_key, prop::bool::weighted(0.9)), 1..4)
        )
            .prop_map(|(task, who, answers)| Op::Answer { task, who, answers }),
        1 => (task_pick(), who).prop_map(|(task, who)| Op::Cancel { task, who }),
        1 => (task_pick()).prop_map(|task| Op::Complete { task }),
        1 => (task_pick()).prop_map(|task| Op::Fail { task }),
        1 => Just(Op::Restart),
    ]
}

// ---- the model -----------------------------------------------------------------------------------

/// One timeline event as the model predicts it: its kind and the detail that tells it apart
/// (`from->to` of a status change, the input key, the ttl change's reason, the message...).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Event {
    kind: String,
    detail: String,
}

fn event(kind: &str, detail: impl Into<String>) -> Event {
    Event {
        kind: kind.into(),
        detail: detail.into(),
    }
}

/// What the engine recorded, reduced to what the model predicts.
fn observed(e: &taskdeck_engine::TimelineEvent) -> Event {
    let text = |field: &str| e.data[field].as_str().unwrap_or_default().to_string();
    let detail = match e.kind.as_str() {
        "status" => format!("{}->{}", text("from"), text("to")),
        "inputRequested" | "inputAnswered" | "inputSuperseded" => text("key"),
        "ttl" => text("reason"),
        "statusMessage" => text("statusMessage"),
        "cancelRequested" => text("by"),
        _ => String::new(),
    };
    event(&e.kind, detail)
}

/// The life of one input key in a task: it is issued once and never again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Round {
    Outstanding { human_only: bool },
    Answered,
    Superseded,
}

impl Round {
    fn wire(self) -> &'static str {
        match self {
            Round::Outstanding { .. } => "outstanding",
            Round::Answered => "answered",
            Round::Superseded => "superseded",
        }
    }
}

/// One task as the model sees it.
#[derive(Debug, Clone)]
struct ModelTask {
    id: String,
    resumable: bool,
    status: TaskStatus,
    status_message: Option<String>,
    /// Every key ever issued, with where it stands.
    rounds: BTreeMap<String, Round>,
    /// ttlMs is set (it is `null` while the task waits for input).
    has_ttl: bool,
    events: Vec<Event>,
}

impl ModelTask {
    fn new(id: String, resumable: bool) -> ModelTask {
        ModelTask {
            id,
            resumable,
            status: TaskStatus::Working,
            status_message: None,
            rounds: BTreeMap::new(),
            has_ttl: true,
            events: vec![event("created", "")],
        }
    }

    fn outstanding(&self) -> Vec<String> {
        self.rounds
            .iter()
            .filter(|(_, r)| matches!(r, Round::Outstanding { .. }))
            .map(|(k, _)| k.clone())
            .collect()
    }

    fn status_change(&mut self, to: TaskStatus) {
        self.events.push(event(
            "status",
            format!("{}->{}", self.status.as_str(), to.as_str()),
        ));
        self.status = to;
    }

    /// A new input request under `key` (the engine's `issue_input`).
    fn ask(&mut self, key: &str, human_only: bool) {
        self.rounds
            .insert(key.into(), Round::Outstanding { human_only });
        self.events.push(event("inputRequested", key));
        if self.status == TaskStatus::Working {
            self.status_change(TaskStatus::InputRequired);
            if self.has_ttl {
                self.has_ttl = false;
                self.events.push(event("ttl", "waiting for input"));
            }
        }
    }

    /// The task settles: outstanding requests are superseded (in key order), then the status
    /// changes; retention comes back if it was suspended.
    fn settle(&mut self, to: TaskStatus, message: &str) {
        for key in self.outstanding() {
            self.rounds.insert(key.clone(), Round::Superseded);
            self.events.push(event("inputSuperseded", key));
        }
        self.status_message = Some(message.into());
        self.status_change(to);
        self.has_ttl = true;
    }
}

// ---- the tool ------------------------------------------------------------------------------------

/// The running tools' handles, by task id: the context (to report and ask as the tool) and the
/// channel that ends the run with an outcome.
#[derive(Default)]
struct Runs(Mutex<HashMap<String, Run>>);

struct Run {
    ctx: TaskContext,
    finish: Option<oneshot::Sender<Outcome>>,
}

/// A tool that does what the test tells it: it ends with the outcome sent to it, or
/// `Cancelled` as soon as it is cancelled.
struct Scripted {
    descriptor: ToolDescriptor,
    runs: Arc<Runs>,
}

impl Scripted {
    fn new(name: &str, resumable: bool, runs: Arc<Runs>) -> Scripted {
        Scripted {
            descriptor: ToolDescriptor {
                name: name.into(),
                title: None,
                description: String::new(),
                input_schema: json!({"type": "object"}),
                mode: ToolMode::Task { required: false },
                resumable,
                agent_callable: true,
            },
            runs,
        }
    }
}

impl TaskTool for Scripted {
    fn descriptor(&self) -> &ToolDescriptor {
        &self.descriptor
    }

    fn run(&self, ctx: TaskContext, _arguments: Value) -> BoxFuture<'static, Outcome> {
        let (finish, told) = oneshot::channel();
        self.runs.0.lock().unwrap().insert(
            ctx.task_id().to_string(),
            Run {
                ctx: ctx.clone(),
                finish: Some(finish),
            },
        );
        Box::pin(async move {
            tokio::select! {
                Ok(outcome) = told => outcome,
                () = ctx.cancelled() => Outcome::Cancelled,
            }
        })
    }
}

fn tool_name(resumable: bool) -> &'static str {
    if resumable { "resumable" } else { "one_shot" }
}

/// The form every elicitation of this test asks: `{ok: boolean}`, required.
fn form(key: &str) -> Value {
    json!({"method": "elicitation/create", "params": {"mode": "form", "message": format!("question {key}"),
        "requestedSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}}})
}

fn answer(valid: bool) -> Value {
    if valid {
        json!({"action": "accept", "content": {"ok": true}})
    } else {
        json!({"action": "accept", "content": {"ok": "yes"}})
    }
}

// ---- the harness ---------------------------------------------------------------------------------

/// The engine under test, the model, and what the checks remember between steps.
struct Harness {
    dir: tempfile::TempDir,
    engine: Engine,
    runs: Arc<Runs>,
    tasks: Vec<ModelTask>,
    /// The first terminal status seen for each task: it must never change.
    settled: HashMap<String, TaskStatus>,
    expired_once: bool,
}

type Checked = Result<(), String>;

fn ensure(ok: bool, what: impl FnOnce() -> String) -> Checked {
    if ok { Ok(()) } else { Err(what()) }
}

/// The stored error of a failed task in these tests: the failure's kind and message (the
/// server's real mapping to JSON-RPC codes is tested in the server crate).
fn error_object(failure: &TaskFailure) -> Value {
    json!({"kind": format!("{:?}", failure.kind), "message": failure.message})
}

async fn open_engine(dir: &std::path::Path, runs: &Arc<Runs>) -> (Engine, (usize, usize)) {
    let store = Store::open(dir, Durability::Process, ChangeFeed::new(1024)).expect("store");
    let engine = Engine::new(store, EngineConfig::default(), error_object);
    for resumable in [true, false] {
        engine.register_tool(Arc::new(Scripted::new(
            tool_name(resumable),
            resumable,
            runs.clone(),
        )));
    }
    let started = engine.start().await.expect("engine start");
    (engine, (started.resumed, started.failed))
}

impl Harness {
    async fn new() -> Harness {
        let dir = tempfile::tempdir().expect("temp dir");
        let runs = Arc::new(Runs::default());
        let (engine, _) = open_engine(dir.path(), &runs).await;
        Harness {
            dir,
            engine,
            runs,
            tasks: Vec::new(),
            settled: HashMap::new(),
            expired_once: false,
        }
    }

    fn ctx(&self, id: &str) -> Option<TaskContext> {
        self.runs.0.lock().unwrap().get(id).map(|r| r.ctx.clone())
    }

    /// Waits until `done` holds for task `id` as the admin sees it.
    async fn wait_for(&self, id: &str, what: &str, done: impl Fn(&TaskRecord) -> bool) -> Checked {
        let deadline = Instant::now() + SETTLE_TIMEOUT;
        loop {
            let t = self
                .engine
                .get(&Principal::admin(), id)
                .map_err(|e| format!("get {id}: {e}"))?;
            if done(&t) {
                return Ok(());
            }
            ensure(Instant::now() < deadline, || {
                format!(
                    "{id}: still {:?} after {SETTLE_TIMEOUT:?}, {what}",
                    t.status
                )
            })?;
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    async fn create(&mut self, resumable: bool, ttl: Option<u64>) -> Result<usize, String> {
        let task = self
            .engine
            .create_task_with_ttl(
                &Principal::named(OWNER),
                tool_name(resumable),
                json!({}),
                ttl,
            )
            .await
            .map_err(|e| format!("create: {e}"))?;
        self.tasks
            .push(ModelTask::new(task.task_id.clone(), resumable));
        Ok(self.tasks.len() - 1)
    }

    async fn apply(&mut self, op: &Op) -> Checked {
        let pick = |task: TaskPick| {
            let live: Vec<usize> = (0..self.tasks.len())
                .filter(|&i| !self.tasks[i].status.is_terminal())
                .collect();
            if task.live && !live.is_empty() {
                live[task.n % live.len()]
            } else {
                task.n % self.tasks.len()
            }
        };
        if self.tasks.is_empty() && !matches!(op, Op::Create { .. } | Op::CreateAndExpire) {
            return Ok(());
        }
        match *op {
            Op::Create { resumable } => {
                self.create(resumable, None).await?;
            }
            Op::CreateAndExpire => {
                if self.expired_once {
                    return Ok(());
                }
                self.expired_once = true;
                let i = self.create(false, Some(SHORT_TTL_MS)).await?;
                let id = self.tasks[i].id.clone();
                self.wait_for(&id, "waiting for it to expire", |t| t.status.is_terminal())
                    .await?;
                let m = &mut self.tasks[i];
                m.status_message =
                    Some("Task expired: its ttlMs elapsed before it finished".into());
                m.status_change(TaskStatus::Failed);
                m.events.push(event("ttl", "expired"));
            }
            Op::StatusMessage { task, text } => {
                let i = pick(task);
                let Some(ctx) = self.ctx(&self.tasks[i].id) else {
                    return Ok(());
                };
                let text = format!("step {text}");
                ctx.status_message(text.clone()).await;
                let m = &mut self.tasks[i];
                if !m.status.is_terminal() {
                    m.status_message = Some(text.clone());
                    m.events.push(event("statusMessage", text));
                }
            }
            Op::Ask {
                task,
                key,
                human_only,
            } => self.ask(pick(task), KEYS[key], human_only).await?,
            Op::AskAgainOtherRequest { task, key } => {
                let i = pick(task);
                let key = KEYS[key];
                let m = &self.tasks[i];
                let Some(round) = m.rounds.get(key).copied() else {
                    return Ok(());
                };
                let Some(ctx) = self.ctx(&m.id) else {
                    return Ok(());
                };
                let got = ctx
                    .issue_input_for_human(key, json!({"method": "roots/list"}))
                    .await;
                // A key, answered or not, is refused for another request: an answer to one
                // question never passes for the answer to another.
                let fine = match (m.status.is_terminal(), round, &got) {
                    (true, _, Err(_)) => true,
                    (false, _, Err(EngineError::KeyReused(k))) => k == key,
                    _ => false,
                };
                ensure(fine, || {
                    format!("{}: asking {key} again ({round:?}) gave {got:?}", m.id)
                })?;
            }
            Op::Answer {
                task,
                who,
                ref answers,
            } => self.answer(pick(task), who, answers).await?,
            Op::Cancel { task, who } => self.cancel(pick(task), who).await?,
            Op::Complete { task } | Op::Fail { task } => {
                let i = pick(task);
                let id = self.tasks[i].id.clone();
                let sender = self
                    .runs
                    .0
                    .lock()
                    .unwrap()
                    .get_mut(&id)
                    .and_then(|r| r.finish.take());
                let Some(sender) = sender else {
                    return Ok(());
                };
                if self.tasks[i].status.is_terminal() {
                    return Ok(());
                }
                let (outcome, to, message) = match op {
                    Op::Complete { .. } => (
                        Outcome::text(format!("finished {i}\ndetails")),
                        TaskStatus::Completed,
                        format!("finished {i}"),
                    ),
                    _ => (
                        Outcome::Failed(TaskFailure::tool(format!("broke {i}"), None)),
                        TaskStatus::Failed,
                        format!("broke {i}"),
                    ),
                };
                ensure(sender.send(outcome).is_ok(), || {
                    format!("{id}: the run is gone")
                })?;
                self.wait_for(&id, "after the tool ended", |t| t.status.is_terminal())
                    .await?;
                self.tasks[i].settle(to, &message);
            }
            Op::Restart => self.restart().await?,
        }
        Ok(())
    }

    async fn ask(&mut self, i: usize, key: &str, human_only: bool) -> Checked {
        let m = &self.tasks[i];
        let Some(ctx) = self.ctx(&m.id) else {
            return Ok(());
        };
        let fresh = !m.status.is_terminal() && !m.rounds.contains_key(key);
        if human_only {
            let got = ctx.issue_input_for_human(key, form(key)).await;
            ensure(got.is_ok() != m.status.is_terminal(), || {
                format!("{}: issuing {key} for the human gave {got:?}", m.id)
            })?;
        } else if fresh {
            // The tool waits for the answer on a task of its own, as a tool would.
            let asker = ctx.clone();
            let k = key.to_string();
            tokio::spawn(async move {
                asker
                    .elicit(
                        &k,
                        &format!("question {k}"),
                        form(&k)["params"]["requestedSchema"].clone(),
                    )
                    .await
            });
            let id = m.id.clone();
            self.wait_for(&id, "waiting for the request to be stored", |t| {
                t.input_requests.contains_key(key)
            })
            .await?;
        } else {
            // A used key: its answer at once, or a wait on the same outstanding request; a
            // settled task: an error at once. Nothing changes either way.
            let question = format!("question {key}");
            let asked = ctx.elicit(
                key,
                &question,
                form(key)["params"]["requestedSchema"].clone(),
            );
            // Only the outstanding key waits: for it, a short wait that ends is the answer.
            let waits = matches!(m.rounds.get(key), Some(Round::Outstanding { .. }));
            let patience = if waits && !m.status.is_terminal() {
                Duration::from_millis(100)
            } else {
                SETTLE_TIMEOUT
            };
            let got = tokio::time::timeout(patience, asked).await;
            let fine = match (m.status.is_terminal(), m.rounds.get(key), &got) {
                (true, _, Ok(Err(_))) => true,
                (false, Some(Round::Answered), Ok(Ok(v))) => *v == answer(true),
                (false, Some(Round::Outstanding { .. }), Err(_)) => true,
                _ => false,
            };
            ensure(fine, || {
                format!("{}: asking {key} again gave {got:?}", m.id)
            })?;
        }
        if fresh {
            self.tasks[i].ask(key, human_only);
        }
        Ok(())
    }

    async fn answer(&mut self, i: usize, who: Who, answers: &[(AnswerKey, bool)]) -> Checked {
        let m = &self.tasks[i];
        let outstanding = m.outstanding();
        let mut responses = Map::new();
        for &(key, valid) in answers {
            let key = match key {
                AnswerKey::Outstanding(n) if !outstanding.is_empty() => {
                    outstanding[n % outstanding.len()].clone()
                }
                AnswerKey::Outstanding(n) | AnswerKey::Any(n) => KEYS[n].to_string(),
            };
            responses.insert(key, answer(valid));
        }
        let got = self
            .engine
            .answer(&who.principal(), &m.id, responses.clone())
            .await;
        if who == Who::Stranger {
            return ensure(matches!(got, Err(EngineError::NotFound)), || {
                format!("{}: a stranger's answer gave {got:?}", m.id)
            });
        }
        // The model's verdict: taken, ignored (not outstanding, or the human's to give), or the
        // whole update refused for one invalid answer.
        let (mut accepted, mut ignored, mut invalid) = (Vec::new(), Vec::new(), false);
        for (key, response) in &responses {
            let may = match m.rounds.get(key) {
                _ if m.status.is_terminal() => false,
                Some(Round::Outstanding { human_only }) => !human_only || who == Who::Admin,
                _ => false,
            };
            if !may {
                ignored.push(key.clone());
            } else if *response != answer(true) {
                invalid = true;
            } else {
                accepted.push(key.clone());
            }
        }
        if invalid {
            return ensure(matches!(got, Err(EngineError::Invalid(_))), || {
                format!("{}: an invalid answer gave {got:?}", m.id)
            });
        }
        let report = got.map_err(|e| format!("{}: answer: {e}", m.id))?;
        ensure(
            report.accepted == accepted && report.ignored == ignored,
            || {
                format!(
                    "{}: answer took {:?} and ignored {:?}; the model: {accepted:?}, {ignored:?}",
                    m.id, report.accepted, report.ignored
                )
            },
        )?;
        let m = &mut self.tasks[i];
        for key in &accepted {
            m.rounds.insert(key.clone(), Round::Answered);
            m.events.push(event("inputAnswered", key.clone()));
        }
        if !accepted.is_empty() && m.outstanding().is_empty() {
            // Back at work, it says who answered (every answer here accepts).
            m.status_message = Some(format!("Answered by {}", who.principal().name));
            m.status_change(TaskStatus::Working);
            m.has_ttl = true;
            m.events.push(event("ttl", "input answered"));
        }
        Ok(())
    }

    async fn cancel(&mut self, i: usize, who: Who) -> Checked {
        let id = self.tasks[i].id.clone();
        let got = self.engine.cancel(&who.principal(), &id).await;
        if who == Who::Stranger {
            return ensure(matches!(got, Err(EngineError::NotFound)), || {
                format!("{id}: a stranger's cancel gave {got:?}")
            });
        }
        got.map_err(|e| format!("{id}: cancel: {e}"))?;
        if self.tasks[i].status.is_terminal() {
            return Ok(());
        }
        self.wait_for(&id, "after the cancel", |t| t.status.is_terminal())
            .await?;
        let m = &mut self.tasks[i];
        let by = who.principal().name;
        m.events.push(event("cancelRequested", by.clone()));
        m.settle(TaskStatus::Cancelled, &format!("Cancelled by {by}"));
        Ok(())
    }

    async fn restart(&mut self) -> Checked {
        self.engine.shutdown();
        self.runs.0.lock().unwrap().clear();
        // Let the stopped runs and the sweeper let go of the old engine and its store.
        tokio::time::sleep(Duration::from_millis(20)).await;
        let (engine, started) = open_engine(self.dir.path(), &self.runs).await;
        self.engine = engine;
        let (mut resumed, mut failed) = (0, 0);
        for m in self.tasks.iter_mut().filter(|m| !m.status.is_terminal()) {
            if m.resumable {
                resumed += 1;
                m.events.push(event("resumed", ""));
            } else {
                failed += 1;
                let message = if m.status == TaskStatus::InputRequired {
                    "Task interrupted: Taskdeck restarted while it waited for input"
                } else {
                    "Task interrupted: Taskdeck restarted while it was running"
                };
                m.settle(TaskStatus::Failed, message);
            }
        }
        ensure(started == (resumed, failed), || {
            format!(
                "start resumed and failed {started:?}; the model: {:?}",
                (resumed, failed)
            )
        })
    }

    /// Every task as the engine has it against the model.
    fn check(&mut self) -> Checked {
        let admin = Principal::admin();
        for m in &self.tasks {
            let t = self
                .engine
                .get(&Principal::named(OWNER), &m.id)
                .map_err(|e| format!("{}: the owner cannot get it: {e}", m.id))?;
            ensure(t.status == m.status, || {
                format!("{}: status {:?}, the model {:?}", m.id, t.status, m.status)
            })?;
            if let Some(first) = self.settled.get(&m.id) {
                ensure(t.status == *first, || {
                    format!("{}: was {first:?}, now {:?}", m.id, t.status)
                })?;
            } else if t.status.is_terminal() {
                self.settled.insert(m.id.clone(), t.status);
            }
            ensure(t.status_message == m.status_message, || {
                format!(
                    "{}: statusMessage {:?}, the model {:?}",
                    m.id, t.status_message, m.status_message
                )
            })?;
            let keys: Vec<String> = t.input_requests.keys().cloned().collect();
            ensure(keys == m.outstanding(), || {
                format!(
                    "{}: outstanding {keys:?}, the model {:?}",
                    m.id,
                    m.outstanding()
                )
            })?;
            let human: Vec<String> = m
                .rounds
                .iter()
                .filter(|(_, r)| matches!(r, Round::Outstanding { human_only: true }))
                .map(|(k, _)| k.clone())
                .collect();
            let engine_human = self
                .engine
                .human_only_inputs(&t)
                .map_err(|e| e.to_string())?;
            ensure(engine_human == human, || {
                format!("{}: human-only {engine_human:?}, the model {human:?}", m.id)
            })?;
            ensure(t.ttl_ms.is_some() == m.has_ttl, || {
                format!(
                    "{}: ttlMs {:?}, the model has one: {}",
                    m.id, t.ttl_ms, m.has_ttl
                )
            })?;
            let (events, more, rounds) = self
                .engine
                .history(&admin, &m.id, None, 10_000)
                .map_err(|e| format!("{}: history: {e}", m.id))?;
            let events: Vec<Event> = events.iter().map(observed).collect();
            ensure(!more && events == m.events, || {
                format!(
                    "{}: timeline\n  engine {events:?}\n  model  {:?}",
                    m.id, m.events
                )
            })?;
            let rounds: BTreeMap<String, String> =
                rounds.into_iter().map(|r| (r.key, r.state)).collect();
            let model: BTreeMap<String, String> = m
                .rounds
                .iter()
                .map(|(k, r)| (k.clone(), r.wire().to_string()))
                .collect();
            ensure(rounds == model, || {
                format!("{}: input rounds {rounds:?}, the model {model:?}", m.id)
            })?;
            let stranger = Principal::named(STRANGER);
            ensure(
                matches!(
                    self.engine.get(&stranger, &m.id),
                    Err(EngineError::NotFound)
                ) && matches!(
                    self.engine.history(&stranger, &m.id, None, 10),
                    Err(EngineError::NotFound)
                ),
                || format!("{}: another principal can see it", m.id),
            )?;
        }
        Ok(())
    }
}

async fn run_case(ops: Vec<Op>) -> Checked {
    let mut h = Harness::new().await;
    for (n, op) in ops.iter().enumerate() {
        h.apply(op)
            .await
            .and_then(|()| h.check())
            .map_err(|e| format!("step {n} {op:?}: {e}"))?;
    }
    h.engine.shutdown();
    Ok(())
}

proptest! {
    #![proptest_config(Config {
        cases: 32,
        rng_seed: RngSeed::Fixed(0x7a5c_dec4),
        failure_persistence: None,
        max_shrink_iters: 512,
        ..Config::default()
    })]

    #[test]
    fn the_engine_agrees_with_the_model(ops in prop::collection::vec(op(), 1..32)) {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("runtime");
        let result = runtime.block_on(run_case(ops));
        runtime.shutdown_timeout(Duration::from_secs(1));
        result.map_err(TestCaseError::fail)?;
    }
}
