//! [`Engine`]: the one seam adapters use. It creates tasks, runs their tools, and applies every
//! change (status, progress, input rounds, cancellation, expiry) as one durable store write that
//! checks the state machine and appends to the task's timeline.

use std::{
    collections::{BTreeMap, HashMap},
    panic::AssertUnwindSafe,
    sync::{
        Arc, Mutex, RwLock,
        atomic::{AtomicI64, AtomicU64, Ordering},
    },
    time::Duration,
};

use futures::{FutureExt, future::BoxFuture};
use serde_json::{Map, Value, json};
use tokio::sync::{Notify, oneshot};
use tokio_util::sync::CancellationToken;

use super::{
    EngineError, Principal, TaskRecord, TaskStatus, TimelineEvent,
    answer_cache::CachedAnswer,
    clock::now_ms,
    context::{Cancelled, InputError, Outcome, TaskContext},
    idempotency::{self, Creation},
    limits,
    model::{InputRound, Progress},
    state::check_transition,
    store::{self, ListFilter, Store, WriteCtx},
    sweeper,
};

/// How a tool answers `tools/call`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolMode {
    /// Always runs as a task. `required: true` means a client that cannot take a task handle
    /// gets `-32021` instead of a handle in an ordinary result.
    Task { required: bool },
}

/// `"invalid arguments for TOOL: ..."` listing what `arguments` breaks in `validator` (each
/// with its JSON pointer, e.g. `at /count: -1 is less than the minimum of 0`), or `None`.
pub fn argument_errors(
    tool: &str,
    validator: &jsonschema::Validator,
    arguments: &Value,
) -> Option<String> {
    let errors: Vec<String> = validator
        .iter_errors(arguments)
        .map(|e| {
            let at = e.instance_path().to_string();
            if at.is_empty() {
                e.to_string()
            } else {
                format!("at {at}: {e}")
            }
        })
        .collect();
    (!errors.is_empty()).then(|| format!("invalid arguments for {tool}: {}", errors.join("; ")))
}

/// What the engine and the adapters need to know about a task tool.
#[derive(Debug, Clone)]
pub struct ToolDescriptor {
    /// Tool name as agents call it, e.g. `request_approval`.
    pub name: String,
    pub title: Option<String>,
    pub description: String,
    /// JSON Schema (draft 2020-12) of the arguments object.
    pub input_schema: Value,
    pub mode: ToolMode,
    /// A resumable tool can be run again from the top after a restart (its input rounds are
    /// replayed from the store); others are failed as interrupted.
    pub resumable: bool,
    /// Offered to agents as an MCP tool (false for work other programs report on, such as
    /// external jobs).
    pub agent_callable: bool,
}

/// A tool whose calls run as tasks.
pub trait TaskTool: Send + Sync + 'static {
    /// Name, schema and behaviour.
    fn descriptor(&self) -> &ToolDescriptor;
    /// Checks arguments beyond their JSON Schema before a task is created.
    /// Errors: a message for the caller (adapters answer `-32602`).
    fn check_arguments(&self, _arguments: &Value) -> Result<(), String> {
        Ok(())
    }
    /// The arguments as the store keeps them and every view shows them, when they hold secrets
    /// (credential values replaced, e.g. by `[redacted]`); `None` when there is nothing to hide.
    /// The run gets the arguments as given. Only for tools that are not resumable: a resumed
    /// run reads its arguments from the store.
    fn redact_arguments(&self, _arguments: &Value) -> Option<Value> {
        None
    }
    /// Runs one call. The future should watch [`TaskContext::cancelled`] and return
    /// [`Outcome::Cancelled`] promptly; one that ignores cancellation is dropped after the
    /// engine's cancel grace period.
    fn run(&self, ctx: TaskContext, arguments: Value) -> BoxFuture<'static, Outcome>;
    /// Called at start for a call of this (non-resumable) tool that was running when the last
    /// process ended, just before the task is failed as interrupted: the place to stop what the
    /// run left behind, e.g. processes it started.
    fn interrupted(&self, _task_id: &str) {}
}

/// Engine settings.
#[derive(Debug, Clone)]
pub struct EngineConfig {
    /// ttlMs given to new tasks (retention from creation); `None` = unlimited.
    pub default_ttl_ms: Option<u64>,
    /// pollIntervalMs suggested to clients.
    pub poll_interval_ms: u64,
    /// How long a tool may ignore a cancel request before its run is dropped.
    pub cancel_grace: Duration,
    /// Keep at most this many tasks; the oldest terminal ones are deleted first.
    pub max_tasks: Option<u64>,
    /// Keep at most about this many bytes of task data; the oldest terminal tasks go first.
    pub max_bytes: Option<u64>,
    /// How long a task that failed by expiry stays visible before it is deleted, in ms.
    pub expired_grace_ms: u64,
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            default_ttl_ms: Some(24 * 3600 * 1000),
            poll_interval_ms: 1000,
            cancel_grace: Duration::from_secs(10),
            max_tasks: None,
            max_bytes: None,
            expired_grace_ms: 60_000,
        }
    }
}

/// The outcome of [`Engine::answer`]: which keys were taken and which ignored (never issued,
/// already answered, or superseded: SEP-2663 §Task Update Requests).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AnswerReport {
    pub accepted: Vec<String>,
    pub ignored: Vec<String>,
}

struct Live {
    cancel: CancellationToken,
    /// Input key → (waiter id, where its answer goes).
    waiters: HashMap<String, (u64, oneshot::Sender<Value>)>,
    /// The tool running it (told at shutdown that its run is interrupted).
    tool: Arc<dyn TaskTool>,
}

pub(crate) struct Inner {
    pub(crate) store: Store,
    pub(crate) config: EngineConfig,
    tools: RwLock<HashMap<String, Arc<dyn TaskTool>>>,
    validators: RwLock<HashMap<String, Arc<jsonschema::Validator>>>,
    live: Mutex<HashMap<String, Live>>,
    pub(crate) sweeper_wake: Notify,
    /// The deadline (ms since epoch) the sweeper sleeps until; `i64::MAX` when none.
    pub(crate) next_deadline: AtomicI64,
    /// Tasks in the store (kept in step by create and delete), to wake the sweeper on a cap.
    pub(crate) task_count: AtomicI64,
    pub(crate) creations: AtomicU64,
    pub(crate) shutdown: CancellationToken,
}

/// Handle to the engine; cheap to clone.
#[derive(Clone)]
pub struct Engine {
    pub(crate) inner: Arc<Inner>,
}

impl Engine {
    /// The shortest retention a requestor may ask for, in ms (see [`Engine::create_task_with_ttl`]).
    pub const MIN_REQUESTED_TTL_MS: u64 = 1_000;
    /// The longest retention a requestor may ask for when the default is unlimited: 100 years
    /// in ms, the bound `--default-ttl-ms` has.
    pub const MAX_REQUESTED_TTL_MS: u64 = 100 * 365 * 24 * 3600 * 1000;

    /// An engine over `store`. Register tools, then call [`Engine::start`].
    pub fn new(store: Store, config: EngineConfig) -> Engine {
        Engine {
            inner: Arc::new(Inner {
                store,
                config,
                tools: RwLock::new(HashMap::new()),
                validators: RwLock::new(HashMap::new()),
                live: Mutex::new(HashMap::new()),
                sweeper_wake: Notify::new(),
                next_deadline: AtomicI64::new(i64::MAX),
                task_count: AtomicI64::new(0),
                creations: AtomicU64::new(0),
                shutdown: CancellationToken::new(),
            }),
        }
    }

    /// The store (for reads adapters make directly: lists, timelines, events).
    pub fn store(&self) -> &Store {
        &self.inner.store
    }

    /// Settings.
    pub fn config(&self) -> &EngineConfig {
        &self.inner.config
    }

    /// Makes `tool` callable (and resumable after restarts).
    ///
    /// Panics if the tool's input schema is not a valid JSON Schema (a programming error).
    pub fn register_tool(&self, tool: Arc<dyn TaskTool>) {
        let name = tool.descriptor().name.clone();
        let validator =
            jsonschema::validator_for(&tool.descriptor().input_schema).expect("tool input schema");
        self.inner
            .validators
            .write()
            .unwrap()
            .insert(name.clone(), Arc::new(validator));
        self.inner.tools.write().unwrap().insert(name, tool);
    }

    /// Checks `arguments` for `tool`: its JSON Schema, then the tool's own checks.
    /// Errors: [`EngineError::Invalid`] naming every violation (or the unknown tool).
    pub fn check_arguments(&self, tool: &str, arguments: &Value) -> Result<(), EngineError> {
        let Some(t) = self.tool(tool) else {
            return Err(EngineError::Invalid(format!("unknown tool: {tool}")));
        };
        let validator = self.inner.validators.read().unwrap().get(tool).cloned();
        if let Some(v) = validator
            && let Some(problem) = argument_errors(tool, &v, arguments)
        {
            return Err(EngineError::Invalid(problem));
        }
        t.check_arguments(arguments).map_err(EngineError::Invalid)
    }

    /// The registered tool named `name`.
    pub fn tool(&self, name: &str) -> Option<Arc<dyn TaskTool>> {
        self.inner.tools.read().unwrap().get(name).cloned()
    }

    /// Descriptors of all registered tools, sorted by name.
    pub fn tools(&self) -> Vec<ToolDescriptor> {
        let mut v: Vec<_> = self
            .inner
            .tools
            .read()
            .unwrap()
            .values()
            .map(|t| t.descriptor().clone())
            .collect();
        v.sort_by(|a, b| a.name.cmp(&b.name));
        v
    }

    /// Gives every task left unsettled by a previous process an explicit fate, then starts the
    /// TTL sweeper. Resumable tools run again; other tasks fail with a JSON-RPC error
    /// (`-32603`, `data.reason = "restart"`); tasks with a pending cancel are cancelled.
    /// Returns how many tasks were resumed and how many failed.
    pub async fn start(&self) -> Result<(usize, usize), EngineError> {
        let mut resumed = 0;
        let mut failed = 0;
        self.inner
            .task_count
            .store(self.inner.store.totals()?.0, Ordering::Relaxed);
        for task in self.inner.store.unsettled()? {
            if task.cancel_requested {
                // Its tool was still stopping it when the process ended: finish that first (e.g.
                // run_command's processes), so that "cancelled" never hides a live command.
                if let Some(tool) = self.tool(&task.tool) {
                    tool.interrupted(&task.task_id);
                }
                self.finish(&task.task_id, Outcome::Cancelled).await?;
                continue;
            }
            match self.tool(&task.tool).filter(|t| t.descriptor().resumable) {
                Some(tool) => {
                    let id = task.task_id.clone();
                    self.inner
                        .store
                        .write(move |w| {
                            let mut t = load(w, &id)?;
                            t.last_updated_at_ms = now_ms();
                            w.event(
                                &t,
                                t.last_updated_at_ms,
                                "resumed",
                                json!({"reason": "restart"}),
                            )?;
                            w.save(t)?;
                            Ok(())
                        })
                        .await?;
                    self.spawn_executor(Arc::new(task), tool, true, None);
                    resumed += 1;
                }
                None => {
                    if let Some(tool) = self.tool(&task.tool) {
                        tool.interrupted(&task.task_id);
                    }
                    let data =
                        json!({"reason": "restart", "lastStatusMessage": task.status_message});
                    self.finish(
                        &task.task_id,
                        Outcome::Failed {
                            code: -32603,
                            message: if task.status == TaskStatus::InputRequired {
                                "Task interrupted: Taskdeck restarted while it waited for input"
                            } else {
                                "Task interrupted: Taskdeck restarted while it was running"
                            }
                            .into(),
                            data: Some(data),
                        },
                    )
                    .await?;
                    failed += 1;
                }
            }
        }
        sweeper::spawn(self.clone());
        Ok((resumed, failed))
    }

    /// Stops the sweeper and asks every running tool to stop (their tasks stay as they are in
    /// the store and get their fate at the next start).
    ///
    /// What a non-resumable run leaves behind (e.g. a command's processes) is stopped now
    /// ([`TaskTool::interrupted`]): nothing of it outlives Taskdeck.
    pub fn shutdown(&self) {
        self.inner.shutdown.cancel();
        let live: Vec<(String, Arc<dyn TaskTool>)> = self
            .inner
            .live
            .lock()
            .unwrap()
            .iter()
            .map(|(id, l)| (id.clone(), l.tool.clone()))
            .collect();
        for (id, tool) in live {
            if !tool.descriptor().resumable {
                tool.interrupted(&id);
            }
        }
    }

    /// Creates a task owned by `principal` for `tool` with `arguments`, commits it, and only then
    /// starts the tool. The returned record is what `tasks/get` would return right now
    /// (SEP-2663 §Task Creation: durable before the CreateTaskResult).
    ///
    /// Errors: [`EngineError::Invalid`] for an unknown tool or arguments over
    /// [`limits::ARGUMENTS_MAX_BYTES`] as JSON; [`EngineError::Store`].
    pub async fn create_task(
        &self,
        principal: &Principal,
        tool: &str,
        arguments: Value,
    ) -> Result<Arc<TaskRecord>, EngineError> {
        self.create_task_with_ttl(principal, tool, arguments, None)
            .await
    }

    /// [`Engine::create_task`] with the retention the requestor asked for (ms from creation;
    /// 2025-11-25 `params.task.ttl`). The server's bounds hold: at least
    /// [`Engine::MIN_REQUESTED_TTL_MS`], at most the configured default ttlMs (a client may
    /// shorten its task's retention, never extend it past the default). `None`: the default.
    ///
    /// Errors: those of [`Engine::create_task`].
    pub async fn create_task_with_ttl(
        &self,
        principal: &Principal,
        tool: &str,
        arguments: Value,
        requested_ttl_ms: Option<u64>,
    ) -> Result<Arc<TaskRecord>, EngineError> {
        match self
            .create(principal, tool, arguments, None, requested_ttl_ms)
            .await?
        {
            Creation::Created(task) => Ok(task),
            // Only a creation that names a key can find one.
            Creation::Replayed { .. } | Creation::Conflict { .. } => Err(EngineError::Store(
                "a creation without an idempotency key found one".into(),
            )),
        }
    }

    /// [`Engine::create_task`] at most once per `principal` and idempotency `key` (kept
    /// [`idempotency::KEY_KEPT_MS`]): the first call creates the task and stores the key with it
    /// in one write; a later one with the same tool and arguments (members in any order) gets
    /// that task back ([`Creation::Replayed`]), one with another request gets
    /// [`Creation::Conflict`]. Racing calls with one key create one task. The key is not
    /// checked here (the adapter speaks its wire rules).
    ///
    /// Errors: those of [`Engine::create_task`].
    pub async fn create_task_once(
        &self,
        principal: &Principal,
        tool: &str,
        arguments: Value,
        key: &str,
    ) -> Result<Creation, EngineError> {
        let fingerprint = idempotency::fingerprint(tool, &arguments);
        self.create(
            principal,
            tool,
            arguments,
            Some((key.to_string(), fingerprint)),
            None,
        )
        .await
    }

    /// Creates a task (see [`Engine::create_task_with_ttl`]); with `key` = (idempotency key,
    /// fingerprint), first looks the key up in the same write (see [`Engine::create_task_once`]).
    async fn create(
        &self,
        principal: &Principal,
        tool: &str,
        arguments: Value,
        key: Option<(String, String)>,
        requested_ttl_ms: Option<u64>,
    ) -> Result<Creation, EngineError> {
        let Some(tool_impl) = self.tool(tool) else {
            return Err(EngineError::Invalid(format!("unknown tool: {tool}")));
        };
        limits::check_arguments_size(tool, &arguments)?;
        // Secrets never reach the store (or any view of it): the run gets them in memory only.
        let (stored, run_arguments) = match tool_impl.redact_arguments(&arguments) {
            Some(shown) if !tool_impl.descriptor().resumable => (shown, Some(arguments)),
            _ => (arguments, None),
        };
        let arguments = stored;
        let now = now_ms();
        let task = TaskRecord {
            task_id: super::model::new_task_id(now),
            seq: 0,
            tool: tool.to_string(),
            arguments,
            principal: principal.name.clone(),
            status: TaskStatus::Working,
            status_message: None,
            created_at_ms: now,
            last_updated_at_ms: now,
            ttl_ms: match (requested_ttl_ms, self.inner.config.default_ttl_ms) {
                (Some(asked), Some(max)) => Some(asked.clamp(Self::MIN_REQUESTED_TTL_MS, max)),
                (Some(asked), None) => {
                    Some(asked.clamp(Self::MIN_REQUESTED_TTL_MS, Self::MAX_REQUESTED_TTL_MS))
                }
                (None, default) => default,
            },
            poll_interval_ms: self.inner.config.poll_interval_ms,
            progress: None,
            result: None,
            error: None,
            input_requests: BTreeMap::new(),
            cancel_requested: false,
        };
        let keyed = key.is_some();
        // Stored and started on a task of its own: if the caller goes away while the write is
        // queued (the client closed its connection), the write still commits, and a task that
        // is stored must also be started, or it would stay `working` for ever.
        let engine = self.clone();
        let created = tokio::spawn(async move {
            let creation = engine
                .inner
                .store
                .write(move |w| {
                    // The key is looked up and stored by the writer, in the creating write:
                    // racing creations with one key are serialized here.
                    if let Some((key, fingerprint)) = &key
                        && let Some((stored, task_id)) =
                            idempotency::lookup(w.conn, &task.principal, key, now)?
                    {
                        if stored != *fingerprint {
                            return Ok(Creation::Conflict { task_id });
                        }
                        let task = w.load(&task_id)?.map(Arc::new);
                        return Ok(Creation::Replayed { task_id, task });
                    }
                    w.event(
                        &task,
                        now,
                        "created",
                        json!({"status": "working", "tool": task.tool, "ttlMs": task.ttl_ms}),
                    )?;
                    let task = w.insert(task)?;
                    if let Some((key, fingerprint)) = &key {
                        idempotency::remember(
                            w.conn,
                            &task.principal,
                            key,
                            fingerprint,
                            &task.task_id,
                            now,
                        )?;
                    }
                    Ok(Creation::Created(task))
                })
                .await?;
            if let Creation::Created(task) = &creation {
                engine.started(task, tool_impl, run_arguments);
                if keyed {
                    engine.note_deadline_at(now + idempotency::KEY_KEPT_MS);
                }
            }
            Ok(creation)
        });
        created
            .await
            .map_err(|e| EngineError::Store(format!("task creation stopped: {e}")))?
    }

    /// After a task was stored: its deadline, the counts the sweeper's caps use, and its tool.
    /// `arguments`: what the run gets when it is not the stored arguments (secrets redacted).
    fn started(&self, task: &Arc<TaskRecord>, tool: Arc<dyn TaskTool>, arguments: Option<Value>) {
        self.note_deadline(task);
        let count = self.inner.task_count.fetch_add(1, Ordering::Relaxed) + 1;
        let creations = self.inner.creations.fetch_add(1, Ordering::Relaxed) + 1;
        let over_count = self
            .inner
            .config
            .max_tasks
            .is_some_and(|m| count as u64 > m);
        let check_bytes = self.inner.config.max_bytes.is_some() && creations.is_multiple_of(100);
        if over_count || check_bytes {
            self.inner.sweeper_wake.notify_one();
        }
        self.spawn_executor(task.clone(), tool, false, arguments);
    }

    /// The task as `principal` may see it. Errors: [`EngineError::NotFound`] when it does not
    /// exist or belongs to another principal (indistinguishable on purpose).
    pub fn get(&self, principal: &Principal, task_id: &str) -> Result<TaskRecord, EngineError> {
        match self.inner.store.get(task_id)? {
            Some(t) if principal.can_see(&t.principal) => Ok(t),
            _ => Err(EngineError::NotFound),
        }
    }

    /// The keys of `task`'s outstanding input requests that only the human (the admin) may
    /// answer, e.g. `run_command`'s approval. Errors: [`EngineError::Store`].
    pub fn human_only_inputs(&self, task: &TaskRecord) -> Result<Vec<String>, EngineError> {
        self.inner.store.read(|c| {
            let mut keys = Vec::new();
            for key in task.input_requests.keys() {
                if store::input_human_only(c, &task.task_id, key)? {
                    keys.push(key.clone());
                }
            }
            Ok(keys)
        })
    }

    /// [`Engine::get`] for the hot `tasks/get` path: the `GetTaskResult` object as JSON text
    /// (SEP-2663 §Task Polling), built from the stored columns without decoding the result and
    /// kept in the store's answer cache until the task next changes. Same errors as `get`.
    pub fn get_result_json(
        &self,
        principal: &Principal,
        task_id: &str,
    ) -> Result<Arc<CachedAnswer>, EngineError> {
        match self.inner.store.get_answer(task_id)? {
            Some(answer) if principal.can_see(&answer.owner) => Ok(answer),
            _ => Err(EngineError::NotFound),
        }
    }

    /// One page of the tasks visible to `principal`, newest first (see [`ListFilter`]), with
    /// the per-status counts and the newest event id, read in one snapshot ([`Store::page`]).
    /// Errors: [`EngineError::Store`].
    pub fn page(
        &self,
        principal: &Principal,
        mut filter: ListFilter,
    ) -> Result<store::Page, EngineError> {
        if !principal.admin {
            filter.principal = Some(principal.name.clone());
        }
        self.inner.store.page(&filter)
    }

    /// A task visible to `principal`: the newest `limit` events of its timeline with an id
    /// below `before` (oldest first; see [`Store::timeline`]), whether older events exist, and
    /// every input round. Errors: [`EngineError::NotFound`].
    pub fn history(
        &self,
        principal: &Principal,
        task_id: &str,
        before: Option<i64>,
        limit: usize,
    ) -> Result<(Vec<TimelineEvent>, bool, Vec<InputRound>), EngineError> {
        self.get(principal, task_id)?;
        let (events, more) = self.inner.store.timeline(task_id, before, limit)?;
        Ok((events, more, self.inner.store.input_rounds(task_id)?))
    }

    /// The input rounds of a task visible to `principal` (who asked what, who answered, when),
    /// without its timeline, which grows with every report. Errors: [`EngineError::NotFound`].
    pub fn input_rounds(
        &self,
        principal: &Principal,
        task_id: &str,
    ) -> Result<Vec<InputRound>, EngineError> {
        self.get(principal, task_id)?;
        self.inner.store.input_rounds(task_id)
    }

    /// Answers outstanding input requests of a task visible to `principal` (SEP-2663
    /// §Task Update Requests). Partial answers are taken; keys not outstanding are ignored; the
    /// task returns to `working` once no request is outstanding. Each answer is recorded with
    /// who gave it and when. An `elicitation/create` answer with `action: "accept"` must
    /// validate against the request's `requestedSchema` (formats included); `decline` and
    /// `cancel` answers are recorded without content. A non-admin's answer to a human-only
    /// request (e.g. `run_command`'s approval) is ignored: the request waits for the human.
    ///
    /// Errors: [`EngineError::NotFound`]; [`EngineError::Invalid`] when an answer is malformed
    /// or fails its schema (then nothing of this update is recorded).
    pub async fn answer(
        &self,
        principal: &Principal,
        task_id: &str,
        responses: Map<String, Value>,
    ) -> Result<AnswerReport, EngineError> {
        let who = principal.clone();
        let id = task_id.to_string();
        let ttl = self.inner.config.default_ttl_ms;
        let (report, delivered) = self
            .inner
            .store
            .write(move |w| {
                let mut t = load(w, &id)?;
                if !who.can_see(&t.principal) {
                    return Err(EngineError::NotFound);
                }
                let mut report = AnswerReport::default();
                let mut delivered = Vec::new();
                if t.status.is_terminal() {
                    report.ignored = responses.keys().cloned().collect();
                    return Ok((report, delivered));
                }
                let now = now_ms();
                // Every answer is checked before anything is written (Store::write's contract):
                // one bad answer records none of this update.
                let mut checked = Vec::new();
                for (key, response) in responses {
                    let Some(request) = t.input_requests.get(&key) else {
                        report.ignored.push(key);
                        continue;
                    };
                    // A decision reserved for the human is never taken by an agent: its answer
                    // is ignored like any key the caller may not answer (SEP-2663 §Task
                    // Update Requests), and the request stays outstanding for the human.
                    if !who.admin && store::input_human_only(w.conn, &id, &key)? {
                        report.ignored.push(key);
                        continue;
                    }
                    let response = validate_response(&key, request, response)?;
                    limits::check_answer_size(&key, &response)?;
                    checked.push((key, response));
                }
                for (key, response) in checked {
                    store::answer_input(w.conn, &id, &key, &response, &who.name, now)?;
                    let action = response.get("action").cloned().unwrap_or(Value::Null);
                    t.input_requests.remove(&key);
                    w.event(
                        &t,
                        now,
                        "inputAnswered",
                        json!({"key": key, "by": who.name, "action": action}),
                    )?;
                    delivered.push((key.clone(), response));
                    report.accepted.push(key);
                }
                if !report.accepted.is_empty() {
                    t.last_updated_at_ms = now;
                    if t.input_requests.is_empty() && t.status == TaskStatus::InputRequired {
                        transition(w, &mut t, TaskStatus::Working, now)?;
                        let base = store::created_ttl(w.conn, &id)?.unwrap_or(ttl);
                        t.ttl_ms = base.map(|ttl| (now - t.created_at_ms).max(0) as u64 + ttl);
                        w.event(
                            &t,
                            now,
                            "ttl",
                            json!({"ttlMs": t.ttl_ms, "reason": "input answered"}),
                        )?;
                    }
                    w.save(t)?;
                }
                Ok((report, delivered))
            })
            .await?;
        if !delivered.is_empty() {
            let mut live = self.inner.live.lock().unwrap();
            if let Some(l) = live.get_mut(task_id) {
                for (key, response) in delivered {
                    if let Some((_, tx)) = l.waiters.remove(&key) {
                        let _ = tx.send(response);
                    }
                }
            }
        }
        if let Ok(t) = self.inner.store.get(task_id)
            && let Some(t) = t
        {
            self.note_deadline(&t);
        }
        Ok(report)
    }

    /// Requests cancellation of a task visible to `principal`. Cooperative: the tool is told
    /// and decides the final state (SEP-2663 §Task Cancellation). Idempotent: a terminal task is
    /// returned unchanged. Returns the task as it stands after the request.
    ///
    /// Errors: [`EngineError::NotFound`].
    pub async fn cancel(
        &self,
        principal: &Principal,
        task_id: &str,
    ) -> Result<TaskRecord, EngineError> {
        let who = principal.clone();
        let id = task_id.to_string();
        let task = self
            .inner
            .store
            .write(move |w| {
                let mut t = load(w, &id)?;
                if !who.can_see(&t.principal) {
                    return Err(EngineError::NotFound);
                }
                if t.status.is_terminal() || t.cancel_requested {
                    return Ok(t);
                }
                let now = now_ms();
                t.cancel_requested = true;
                t.last_updated_at_ms = now;
                w.event(&t, now, "cancelRequested", json!({"by": who.name}))?;
                let t = w.save(t)?;
                Ok(TaskRecord::clone(&t))
            })
            .await?;
        if !task.status.is_terminal() {
            let token = self
                .inner
                .live
                .lock()
                .unwrap()
                .get(task_id)
                .map(|l| l.cancel.clone());
            match token {
                Some(token) => token.cancel(),
                None => self.finish(task_id, Outcome::Cancelled).await?,
            }
        }
        Ok(task)
    }

    /// Sets a live task's statusMessage, cut to [`limits::STATUS_MESSAGE_MAX_BYTES`] (a
    /// terminal task is left alone). Errors: [`EngineError::NotFound`]; [`EngineError::Store`].
    pub(crate) async fn set_status_message(
        &self,
        task_id: &str,
        message: String,
    ) -> Result<(), EngineError> {
        let message = limits::truncate(message, limits::STATUS_MESSAGE_MAX_BYTES);
        let id = task_id.to_string();
        self.inner
            .store
            .write(move |w| {
                let mut t = load(w, &id)?;
                if t.status.is_terminal() {
                    return Ok(());
                }
                let now = now_ms();
                t.status_message = Some(message.clone());
                t.last_updated_at_ms = now;
                w.event(&t, now, "statusMessage", json!({"statusMessage": message}))?;
                w.save(t)?;
                Ok(())
            })
            .await
    }

    /// Sets a live task's progress; its message (cut to [`limits::STATUS_MESSAGE_MAX_BYTES`])
    /// becomes the statusMessage too. Errors: [`EngineError::NotFound`]; [`EngineError::Store`].
    pub(crate) async fn set_progress(
        &self,
        task_id: &str,
        current: f64,
        total: Option<f64>,
        message: Option<String>,
    ) -> Result<(), EngineError> {
        let message = message.map(|m| limits::truncate(m, limits::STATUS_MESSAGE_MAX_BYTES));
        let id = task_id.to_string();
        self.inner
            .store
            .write(move |w| {
                let mut t = load(w, &id)?;
                if t.status.is_terminal() {
                    return Ok(());
                }
                let now = now_ms();
                let progress = Progress {
                    current,
                    total,
                    message,
                };
                t.progress = Some(progress.clone());
                if let Some(m) = &progress.message {
                    t.status_message = Some(m.clone());
                }
                t.last_updated_at_ms = now;
                w.event(&t, now, "progress", serde_json::to_value(&progress)?)?;
                w.save(t)?;
                Ok(())
            })
            .await
    }

    pub(crate) async fn request_input(
        &self,
        ctx: &TaskContext,
        key: &str,
        request: Value,
        human_only: bool,
    ) -> Result<Value, InputError> {
        match self.issue_input(ctx, key, request, human_only).await {
            Ok(waiter) => waiter
                .answer(ctx)
                .await
                .map_err(|Cancelled| InputError::Cancelled),
            // The task ended (or was cancelled) before the request was stored.
            Err(EngineError::Terminal(_) | EngineError::NotFound) => Err(InputError::Cancelled),
            Err(e) => {
                tracing::warn!(task_id = %ctx.task_id, key, "input request not issued: {e}");
                Err(InputError::NotIssued(e))
            }
        }
    }

    /// Stores input request `key` (the task goes `input_required`) and returns a waiter for its
    /// answer. Issuing the same request again under a key still outstanding waits for it again;
    /// a key already answered yields its stored answer.
    ///
    /// Errors: [`EngineError::KeyReused`] when `key` was used for another request (keys are
    /// unique for the task's life); [`EngineError::Terminal`]; [`EngineError::Store`].
    pub(crate) async fn issue_input(
        &self,
        ctx: &TaskContext,
        key: &str,
        request: Value,
        human_only: bool,
    ) -> Result<InputWaiter, EngineError> {
        enum Issued {
            Pending,
            Answered(Value),
        }
        let (tx, rx) = oneshot::channel();
        static WAITER_IDS: AtomicU64 = AtomicU64::new(1);
        let waiter_id = WAITER_IDS.fetch_add(1, Ordering::Relaxed);
        {
            let mut live = self.inner.live.lock().unwrap();
            let Some(l) = live.get_mut(&ctx.task_id) else {
                return Err(EngineError::NotFound);
            };
            l.waiters.insert(key.to_string(), (waiter_id, tx));
        }
        let id = ctx.task_id.clone();
        let k = key.to_string();
        let issued = self
            .inner
            .store
            .write(move |w| {
                let mut t = load(w, &id)?;
                if t.status.is_terminal() {
                    return Err(EngineError::Terminal(t.status));
                }
                match store::input_key(w.conn, &id, &k)? {
                    Some((state, stored, _)) if state == "outstanding" && stored == request => {
                        return Ok(Issued::Pending);
                    }
                    Some((state, _, Some(response))) if state == "answered" => {
                        return Ok(Issued::Answered(response));
                    }
                    Some(_) => return Err(EngineError::KeyReused(k)),
                    None => {}
                }
                let now = now_ms();
                store::insert_input(w.conn, &id, &k, &request, human_only, now)?;
                t.input_requests.insert(k.clone(), request.clone());
                t.last_updated_at_ms = now;
                w.event(
                    &t,
                    now,
                    "inputRequested",
                    json!({"key": k, "request": request, "humanOnly": human_only}),
                )?;
                if t.status == TaskStatus::Working {
                    transition(w, &mut t, TaskStatus::InputRequired, now)?;
                    // A task waiting on a human must not expire under them: retention becomes
                    // unlimited (ttlMs: null) until the input is answered.
                    if t.ttl_ms.is_some() {
                        t.ttl_ms = None;
                        w.event(
                            &t,
                            now,
                            "ttl",
                            json!({"ttlMs": null, "reason": "waiting for input"}),
                        )?;
                    }
                }
                w.save(t)?;
                Ok(Issued::Pending)
            })
            .await;
        let waiter = InputWaiter {
            engine: self.clone(),
            task_id: ctx.task_id.clone(),
            key: key.to_string(),
            id: waiter_id,
            state: match &issued {
                Ok(Issued::Answered(v)) => WaiterState::Answered(v.clone()),
                _ => WaiterState::Pending(rx),
            },
        };
        match issued {
            Ok(_) => Ok(waiter),
            Err(e) => Err(e),
        }
    }

    /// Settles a task with `outcome`, unless it is already terminal (then nothing happens).
    /// Outstanding input requests become superseded.
    pub(crate) async fn finish(&self, task_id: &str, outcome: Outcome) -> Result<(), EngineError> {
        let id = task_id.to_string();
        let default_ttl = self.inner.config.default_ttl_ms;
        self.inner
            .store
            .write(move |w| {
                let mut t = load(w, &id)?;
                if t.status.is_terminal() {
                    return Ok(());
                }
                let now = now_ms();
                // A task cancelled or settled while waiting for input gets its retention back.
                if t.ttl_ms.is_none()
                    && let Some(ttl) = store::created_ttl(w.conn, &id)?.unwrap_or(default_ttl)
                {
                    t.ttl_ms = Some((now - t.created_at_ms).max(0) as u64 + ttl);
                }
                let to = match outcome {
                    Outcome::Completed(result) => {
                        // The statusMessage now says how it ended: the result's first line.
                        if let Some(first) = result
                            .pointer("/content/0/text")
                            .and_then(Value::as_str)
                            .and_then(|t| t.lines().find(|l| !l.trim().is_empty()))
                        {
                            t.status_message = Some(first.trim().chars().take(200).collect());
                        }
                        t.result = Some(result);
                        TaskStatus::Completed
                    }
                    Outcome::Failed {
                        code,
                        message,
                        data,
                    } => {
                        let mut err = json!({"code": code, "message": message});
                        if let Some(d) = data {
                            err["data"] = d;
                        }
                        t.status_message =
                            Some(limits::truncate(message, limits::STATUS_MESSAGE_MAX_BYTES));
                        t.error = Some(err);
                        TaskStatus::Failed
                    }
                    Outcome::Cancelled => {
                        // The last progress line (e.g. "Waiting for a human in Taskdeck: ...") no longer holds.
                        t.status_message = Some(
                            if t.cancel_requested {
                                "Cancelled on request"
                            } else {
                                "Cancelled"
                            }
                            .into(),
                        );
                        TaskStatus::Cancelled
                    }
                };
                let outstanding = if t.status == TaskStatus::InputRequired {
                    store::supersede_inputs(w.conn, &id, None)?
                } else {
                    Vec::new()
                };
                for key in outstanding {
                    t.input_requests.remove(&key);
                    w.event(&t, now, "inputSuperseded", json!({"key": key}))?;
                }
                transition(w, &mut t, to, now)?;
                if let Some(p) = t.progress.as_mut().filter(|_| to == TaskStatus::Completed)
                    && let Some(total) = p.total
                {
                    p.current = total;
                }
                w.save(t)?;
                Ok(())
            })
            .await
    }

    /// Expires one task whose TTL elapsed: an unsettled task fails (its tool is told to stop)
    /// and stays visible for `expired_grace_ms`; a settled one is deleted.
    pub(crate) async fn expire(&self, task_id: &str) -> Result<(), EngineError> {
        let id = task_id.to_string();
        let grace = self.inner.config.expired_grace_ms;
        let failed_now = self
            .inner
            .store
            .write(move |w| {
                // None: gone already; Some(false): deleted now; Some(true): failed now.
                let Some(mut t) = w.load(&id)? else {
                    return Ok(None);
                };
                let now = now_ms();
                if t.status.is_terminal() {
                    w.delete(&id)?;
                    return Ok(Some(false));
                }
                let outstanding = if t.status == TaskStatus::InputRequired {
                    store::supersede_inputs(w.conn, &id, None)?
                } else {
                    Vec::new()
                };
                for key in outstanding {
                    t.input_requests.remove(&key);
                    w.event(&t, now, "inputSuperseded", json!({"key": key}))?;
                }
                let message = "Task expired: its ttlMs elapsed before it finished".to_string();
                t.error = Some(
                    json!({"code": -32603, "message": message, "data": {"reason": "expired"}}),
                );
                t.status_message = Some(message);
                transition(w, &mut t, TaskStatus::Failed, now)?;
                t.ttl_ms = Some((now - t.created_at_ms).max(0) as u64 + grace);
                w.event(
                    &t,
                    now,
                    "ttl",
                    json!({"ttlMs": t.ttl_ms, "reason": "expired"}),
                )?;
                w.save(t)?;
                Ok(Some(true))
            })
            .await?;
        if failed_now == Some(false) {
            self.inner.task_count.fetch_sub(1, Ordering::Relaxed);
        }
        if failed_now == Some(true)
            && let Some(l) = self.inner.live.lock().unwrap().get(task_id)
        {
            l.cancel.cancel();
        }
        Ok(())
    }

    /// Deletes the oldest terminal tasks while a configured cap (count, bytes) is exceeded.
    pub(crate) async fn enforce_caps(&self) -> Result<usize, EngineError> {
        let (max_tasks, max_bytes) = (self.inner.config.max_tasks, self.inner.config.max_bytes);
        if max_tasks.is_none() && max_bytes.is_none() {
            return Ok(0);
        }
        let mut deleted = 0;
        loop {
            let (count, bytes) = self.inner.store.totals()?;
            let over_count = max_tasks.map_or(0, |m| (count as u64).saturating_sub(m));
            let over_bytes = max_bytes.is_some_and(|m| bytes as u64 > m);
            if over_count == 0 && !over_bytes {
                return Ok(deleted);
            }
            let batch = (over_count as usize).clamp(if over_bytes { 100 } else { 1 }, 1000);
            let victims = self.inner.store.oldest_terminal(batch)?;
            if victims.is_empty() {
                return Ok(deleted);
            }
            deleted += victims.len();
            self.inner
                .task_count
                .fetch_sub(victims.len() as i64, Ordering::Relaxed);
            self.inner
                .store
                .write(move |w| {
                    for id in &victims {
                        w.delete(id)?;
                    }
                    Ok(())
                })
                .await?;
        }
    }

    /// Tells the sweeper about `task`'s deadline if it is earlier than the one it sleeps until.
    fn note_deadline(&self, task: &TaskRecord) {
        if let Some(ttl) = task.ttl_ms {
            self.note_deadline_at(task.created_at_ms + ttl as i64);
        }
    }

    /// Wakes the sweeper when `deadline` (ms since the epoch: a task's expiry, or an idempotency
    /// key's) is earlier than the one it sleeps until.
    fn note_deadline_at(&self, deadline: i64) {
        if deadline < self.inner.next_deadline.load(Ordering::Relaxed) {
            self.inner.sweeper_wake.notify_one();
        }
    }

    fn spawn_executor(
        &self,
        task: Arc<TaskRecord>,
        tool: Arc<dyn TaskTool>,
        resumed: bool,
        arguments: Option<Value>,
    ) {
        let cancel = self.inner.shutdown.child_token();
        if task.cancel_requested {
            cancel.cancel();
        }
        self.inner.live.lock().unwrap().insert(
            task.task_id.clone(),
            Live {
                cancel: cancel.clone(),
                waiters: HashMap::new(),
                tool: tool.clone(),
            },
        );
        let ctx = TaskContext {
            engine: self.clone(),
            task_id: task.task_id.clone(),
            principal: task.principal.clone(),
            cancel: cancel.clone(),
            resumed,
        };
        let engine = self.clone();
        let grace = self.inner.config.cancel_grace;
        let shutdown = self.inner.shutdown.clone();
        // The tool's run is created here, before this returns (so a tool can register the task
        // at once, e.g. external jobs awaiting reports); it is polled on its own tokio task.
        let arguments = arguments.unwrap_or_else(|| task.arguments.clone());
        let run = AssertUnwindSafe(tool.run(ctx, arguments)).catch_unwind();
        tokio::spawn(async move {
            let ignored_cancel = async {
                cancel.cancelled().await;
                tokio::time::sleep(grace).await;
            };
            let outcome = tokio::select! {
                o = run => o.unwrap_or_else(|_| Outcome::Failed {
                    code: -32603,
                    message: format!("tool {} panicked", task.tool),
                    data: None,
                }),
                _ = ignored_cancel => Outcome::Cancelled,
            };
            // On shutdown the task keeps its stored state; the next start decides its fate.
            if !shutdown.is_cancelled()
                && let Err(e) = engine.finish(&task.task_id, outcome).await
            {
                tracing::error!(task_id = %task.task_id, "cannot settle task: {e}");
            }
            engine.inner.live.lock().unwrap().remove(&task.task_id);
        });
    }
}

/// The answer to come for one issued input request ([`Engine::issue_input`]). Dropping it stops
/// waiting (the request stays outstanding in the store).
pub(crate) struct InputWaiter {
    engine: Engine,
    task_id: String,
    key: String,
    id: u64,
    state: WaiterState,
}

enum WaiterState {
    Answered(Value),
    Pending(oneshot::Receiver<Value>),
    Done,
}

impl InputWaiter {
    /// Waits for the answer. Errors: `Cancelled` when the task is cancelled first.
    pub(crate) async fn answer(mut self, ctx: &TaskContext) -> Result<Value, Cancelled> {
        match std::mem::replace(&mut self.state, WaiterState::Done) {
            WaiterState::Answered(v) => Ok(v),
            WaiterState::Pending(rx) => tokio::select! {
                v = rx => v.map_err(|_| Cancelled),
                _ = ctx.cancel.cancelled() => Err(Cancelled),
            },
            WaiterState::Done => Err(Cancelled),
        }
    }
}

impl Drop for InputWaiter {
    fn drop(&mut self) {
        // Answered (the engine took the sender) or given up: no one waits on this key now.
        if let Some(l) = self
            .engine
            .inner
            .live
            .lock()
            .unwrap()
            .get_mut(&self.task_id)
            && l.waiters
                .get(&self.key)
                .is_some_and(|(id, _)| *id == self.id)
        {
            l.waiters.remove(&self.key);
        }
    }
}

fn load(w: &mut WriteCtx<'_>, task_id: &str) -> Result<TaskRecord, EngineError> {
    w.load(task_id)?.ok_or(EngineError::NotFound)
}

/// Moves `t` to `to` (checked against the state machine) and records a `status` event.
fn transition(
    w: &mut WriteCtx<'_>,
    t: &mut TaskRecord,
    to: TaskStatus,
    now: i64,
) -> Result<(), EngineError> {
    check_transition(t.status, to)?;
    let from = t.status;
    t.status = to;
    t.last_updated_at_ms = now;
    w.status_changed(t, from);
    w.event(
        t,
        now,
        "status",
        json!({"from": from.as_str(), "to": to.as_str(), "statusMessage": t.status_message}),
    )?;
    Ok(())
}

/// Checks one answer against its request: an elicitation answer needs `action` in
/// accept/decline/cancel, and an accepted one must match the request's `requestedSchema`.
/// Checks one answer against its request and returns it as it is recorded. An
/// `elicitation/create` answer needs an `action`; `accept` content must match the form's
/// `requestedSchema` (types, required fields, no others, and the `format` of email, uri, date
/// and date-time strings, as the UI checks them); content sent with `decline` or `cancel` is
/// dropped, so it reaches neither the result nor the timeline. Errors: [`EngineError::Invalid`].
fn validate_response(key: &str, request: &Value, response: Value) -> Result<Value, EngineError> {
    if request.get("method").and_then(Value::as_str) != Some("elicitation/create") {
        return Ok(response);
    }
    let action = response.get("action").and_then(Value::as_str);
    match action {
        Some(a @ ("decline" | "cancel")) => Ok(json!({"action": a})),
        Some("accept") => {
            let Some(schema) = request.pointer("/params/requestedSchema") else {
                return Ok(response);
            };
            let content = response
                .get("content")
                .cloned()
                .unwrap_or_else(|| json!({}));
            // A form is a flat object of the listed fields: nothing else is accepted.
            let mut schema = schema.clone();
            if let Some(obj) = schema.as_object_mut() {
                obj.entry("additionalProperties")
                    .or_insert(Value::Bool(false));
            }
            let validator = jsonschema::options()
                .should_validate_formats(true)
                .build(&schema)
                .map_err(|e| {
                    EngineError::Invalid(format!(
                        "input request {key:?} has an invalid schema: {e}"
                    ))
                })?;
            let errors: Vec<String> = validator
                .iter_errors(&content)
                .map(|e| format!("{}: {e}", e.instance_path()))
                .collect();
            if errors.is_empty() {
                Ok(response)
            } else {
                Err(EngineError::Invalid(format!(
                    "answer to {key:?} does not match its schema: {}",
                    errors.join("; ")
                )))
            }
        }
        _ => Err(EngineError::Invalid(format!(
            "answer to {key:?} needs \"action\": \"accept\", \"decline\" or \"cancel\""
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{feed::ChangeFeed, store::Durability};

    /// Asks under key `k` twice with different requests: the second cannot be issued.
    struct ReusesKey(ToolDescriptor);

    impl TaskTool for ReusesKey {
        fn descriptor(&self) -> &ToolDescriptor {
            &self.0
        }
        fn run(&self, ctx: TaskContext, _arguments: Value) -> BoxFuture<'static, Outcome> {
            Box::pin(async move {
                let first = ctx.request_input("k", json!({"method": "roots/list"}));
                // Not waited for: storing it is enough to use the key.
                let _ = tokio::time::timeout(Duration::from_millis(50), first).await;
                match ctx
                    .request_input("k", json!({"method": "elicitation/create"}))
                    .await
                {
                    Ok(_) => Outcome::text("answered"),
                    Err(e) => e.into(),
                }
            })
        }
    }

    #[tokio::test]
    async fn an_input_request_that_cannot_be_stored_fails_the_task_instead_of_cancelling_it() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path(), Durability::Process, ChangeFeed::new(64)).unwrap();
        let engine = Engine::new(store, EngineConfig::default());
        engine.register_tool(Arc::new(ReusesKey(ToolDescriptor {
            name: "reuses_key".into(),
            title: None,
            description: String::new(),
            input_schema: json!({"type": "object"}),
            mode: ToolMode::Task { required: false },
            resumable: false,
            agent_callable: true,
        })));
        engine.start().await.unwrap();
        let admin = Principal::admin();
        let task = engine
            .create_task(&admin, "reuses_key", json!({}))
            .await
            .unwrap();
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        let done = loop {
            let t = engine.get(&admin, &task.task_id).unwrap();
            if t.status.is_terminal() {
                break t;
            }
            assert!(std::time::Instant::now() < deadline, "still {:?}", t.status);
            tokio::time::sleep(Duration::from_millis(10)).await;
        };
        assert_eq!(done.status, TaskStatus::Failed);
        let error = done.error.unwrap();
        assert_eq!(error["code"], -32603);
        let message = error["message"].as_str().unwrap();
        assert!(
            message.starts_with("the input request could not be stored")
                && message.contains("\"k\" was already used"),
            "{message}"
        );
    }
}
