//! Hosted tasks: tasks whose work runs in the process that hosts the engine rather than in a
//! registered [`TaskTool`](super::TaskTool). The host (for example a tower-mcp server using
//! `taskdeck-tower`) creates a task, runs its handler itself and reports every change: status
//! messages, input requests and their answers, the result, the error, a cancellation, a new
//! ttlMs. Each report is one store write that checks the state machine and appends a timeline
//! event, like every other change (ARCHITECTURE.md, invariant 1); the change feed publishes it.
//!
//! Differences from tool-run tasks, all because the host, not the engine, decides:
//! - the ttlMs is stored as given (no clamping) and does not become unlimited while the task
//!   waits for input;
//! - `require_hosted_input` replaces the whole outstanding set (SEP-2663 §Task Update Requests:
//!   a key left out is superseded; a spent key is never issued again);
//! - answers are recorded as given: the host validates them;
//! - an expired task (`createdAt + ttlMs` elapsed) is treated as absent by every method here at
//!   once, before the sweeper fails or deletes it;
//! - a task without a ttlMs stays until its host settles or discards it, or a person cancels it.
//!
//! What a host stores has the engine's caps ([`crate::limits`]): arguments and answers as for
//! every task, status messages cut to 4 KiB, and an input request, `_meta` or a failure's error
//! object at most [`limits::HOSTED_VALUE_MAX_BYTES`]; over a cap the call is refused whole
//! ([`EngineError::TooLarge`]). The status follows the outstanding input requests as for every
//! task (ARCHITECTURE.md, invariant 6): `input_required` is reached only through
//! [`Engine::require_hosted_input`].
//!
//! Start an engine for hosted tasks with [`Engine::start_hosting`], not [`Engine::start`]: a
//! restart keeps the tasks as they are, since their handlers are the host's to run again.

use std::{
    collections::{BTreeMap, BTreeSet},
    sync::{Arc, atomic::Ordering},
};

use rusqlite::{OptionalExtension, params};
use serde_json::{Map, Value, json};

use super::{
    super::{clock::now_ms, limits, store, store::WriteCtx},
    Engine, EngineError, TaskRecord, TaskStatus, creation, set_ttl, supersede_outstanding,
    transition,
};

/// How a host ends a hosted task ([`Engine::settle_hosted`]).
#[derive(Debug, Clone)]
pub enum Settlement {
    /// `completed` with this CallToolResult (a JSON object; `isError: true` results included,
    /// SEP-2663 §Task Execution Errors).
    Completed(Value),
    /// `failed` with this JSON-RPC error object (`{code, message, data?}`), stored whole.
    Failed(Value),
    /// `cancelled`; the text becomes the status message.
    Cancelled(String),
}

/// The outcome of [`Engine::answer_hosted`]: keys taken, keys ignored (never issued, already
/// answered or superseded), and the keys still outstanding afterwards.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HostedAnswers {
    /// The keys whose answers were recorded.
    pub accepted: BTreeSet<String>,
    /// The keys not outstanding, whose answers were dropped.
    pub ignored: BTreeSet<String>,
    /// The keys still outstanding after this update.
    pub outstanding: BTreeSet<String>,
}

/// True when `task`'s retention (`createdAt + ttlMs`) has elapsed at `now_ms` (ms since the
/// epoch); a task with no ttlMs never expires.
pub fn retention_elapsed(task: &TaskRecord, now_ms: i64) -> bool {
    task.ttl_ms.is_some_and(|ttl| {
        task.created_at_ms
            .saturating_add(ttl.min(i64::MAX as u64) as i64)
            <= now_ms
    })
}

/// The task `task_id` inside a write, when it exists and its retention has not elapsed.
fn load_live(
    w: &mut WriteCtx<'_>,
    task_id: &str,
    now: i64,
) -> Result<Option<TaskRecord>, EngineError> {
    Ok(w.load(task_id)?.filter(|t| !retention_elapsed(t, now)))
}

/// Which hosted tasks a change applies to ([`Engine::change_hosted`]).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Applies {
    /// Any task whose retention has not elapsed.
    Live,
    /// A live task that is not terminal.
    Unsettled,
}

impl Engine {
    /// Starts the retention sweeper without the recovery of [`Engine::start`]: tasks left
    /// `working` or `input_required` by the previous process stay so, for the host to resume
    /// or settle. Must be called inside a Tokio runtime. Errors: [`EngineError::Store`].
    pub fn start_hosting(&self) -> Result<(), EngineError> {
        self.parts
            .sweeper
            .task_count
            .store(self.parts.store.task_count()?, Ordering::Relaxed);
        self.spawn_sweeper();
        Ok(())
    }

    /// Creates a `working` task owned by `principal` (a name) for `tool` (any name: no tool is
    /// registered or run) with `arguments` and retention `ttl_ms` (ms from creation, stored as
    /// given; `None` = unlimited). Committed before it returns.
    /// Errors: [`EngineError::TooLarge`] for arguments over [`limits::ARGUMENTS_MAX_BYTES`];
    /// [`EngineError::Store`].
    pub async fn create_hosted(
        &self,
        principal: &str,
        tool: &str,
        arguments: Value,
        ttl_ms: Option<u64>,
    ) -> Result<Arc<TaskRecord>, EngineError> {
        self.create_hosted_task(principal, None, tool, arguments, ttl_ms)
            .await
    }

    /// [`Engine::create_hosted`] for a host that serves several owners under one principal
    /// (e.g. a tower-mcp server reaching Taskdeck over HTTP with one token): `owner` (the
    /// host's name for whoever asked, `None` = anonymous) is recorded in the same write as a
    /// `hosted` timeline event `{"owner": name|null}`; [`Engine::hosted_owner`] reads it.
    /// Errors: [`EngineError::TooLarge`] for arguments over [`limits::ARGUMENTS_MAX_BYTES`] or
    /// an owner over [`limits::OWNER_MAX_BYTES`]; [`EngineError::Store`].
    pub async fn create_hosted_owned(
        &self,
        principal: &str,
        owner: Option<String>,
        tool: &str,
        arguments: Value,
        ttl_ms: Option<u64>,
    ) -> Result<Arc<TaskRecord>, EngineError> {
        self.create_hosted_task(principal, Some(owner), tool, arguments, ttl_ms)
            .await
    }

    /// True when `task_id` is a hosted task (made by [`Engine::create_hosted`] or
    /// [`Engine::create_hosted_owned`]: its work runs in its host). Reads the task's first
    /// events only: the `hosted` event is written with its creation, right after `created`, so
    /// a long timeline costs nothing. Errors: [`EngineError::Store`].
    pub fn is_hosted_task(&self, task_id: &str) -> Result<bool, EngineError> {
        self.parts.store.read(|c| {
            Ok(c.prepare_cached(
                "SELECT 1 FROM (SELECT kind FROM events WHERE task_id = ?1 ORDER BY id LIMIT 3) \
                 WHERE kind = 'hosted'",
            )?
            .query_row(params![task_id], |_| Ok(()))
            .optional()?
            .is_some())
        })
    }

    /// The owner [`Engine::create_hosted_owned`] recorded for `task_id`: `Some(None)` for an
    /// anonymous one, `None` when none was recorded (not a hosted task, or one made by
    /// [`Engine::create_hosted`]). Errors: [`EngineError::Store`].
    pub fn hosted_owner(&self, task_id: &str) -> Result<Option<Option<String>>, EngineError> {
        self.parts.store.read(|c| {
            let data: Option<String> = c
                .prepare_cached(
                    "SELECT data FROM events WHERE task_id = ?1 AND kind = 'hosted' ORDER BY id LIMIT 1",
                )?
                .query_row(params![task_id], |r| r.get(0))
                .optional()?;
            Ok(data
                .and_then(|d| serde_json::from_str::<Value>(&d).ok())
                .and_then(|d| {
                    let owner = d.get("owner")?;
                    Some(owner.as_str().map(str::to_string))
                }))
        })
    }

    /// Creates a hosted task with its `hosted` event, which marks it as hosted ([`is_hosted`]):
    /// `{"owner": name|null}` with `owner` (see [`Engine::create_hosted_owned`]), `{}` without.
    async fn create_hosted_task(
        &self,
        principal: &str,
        owner: Option<Option<String>>,
        tool: &str,
        arguments: Value,
        ttl_ms: Option<u64>,
    ) -> Result<Arc<TaskRecord>, EngineError> {
        limits::check_arguments_size(tool, &arguments)?;
        if let Some(Some(name)) = &owner {
            limits::check_value_size(
                "the owner's name",
                &Value::String(name.clone()),
                limits::OWNER_MAX_BYTES,
            )?;
        }
        let now = now_ms();
        let task = TaskRecord::working(
            now,
            tool,
            arguments,
            principal,
            ttl_ms,
            self.parts.config.new_task_poll_interval_ms(),
        );
        let task = self
            .parts
            .store
            .write(move |w| {
                let task = creation::insert_new(w, task, now)?;
                let data = match owner {
                    Some(owner) => json!({"owner": owner}),
                    None => json!({}),
                };
                w.event(&task, now, "hosted", data)?;
                Ok(task)
            })
            .await?;
        self.note_created(&task);
        Ok(task)
    }

    /// The task `task_id` unless its retention elapsed (then `None`, as for an unknown id).
    /// Errors: [`EngineError::Store`].
    pub fn get_hosted(&self, task_id: &str) -> Result<Option<TaskRecord>, EngineError> {
        Ok(self
            .parts
            .store
            .get(task_id)?
            .filter(|t| !retention_elapsed(t, now_ms())))
    }

    /// Runs `change` in one store write on task `task_id` as it stands, with the write's time
    /// (ms since the epoch), when the task exists, its retention has not elapsed and `applies`
    /// holds; `Ok(None)` otherwise. Errors: `change`'s; [`EngineError::Store`].
    async fn change_hosted<R, F>(
        &self,
        task_id: &str,
        applies: Applies,
        change: F,
    ) -> Result<Option<R>, EngineError>
    where
        R: Send + 'static,
        F: FnOnce(&mut WriteCtx<'_>, TaskRecord, i64) -> Result<R, EngineError> + Send + 'static,
    {
        let id = task_id.to_string();
        self.parts
            .store
            .write(move |w| {
                let now = now_ms();
                match load_live(w, &id, now)?
                    .filter(|t| applies == Applies::Live || !t.status.is_terminal())
                {
                    Some(t) => change(w, t, now).map(Some),
                    None => Ok(None),
                }
            })
            .await
    }

    /// Ends a live hosted task as `settlement` says; outstanding input requests are superseded.
    /// A cancellation also sets `cancel_requested`. Returns the task after the write and
    /// whether it changed: `Some((task, false))` for a task already terminal (left as it was),
    /// `None` for an unknown or expired one. A status message (a failure's `message`, a
    /// cancellation's text) is cut to [`limits::STATUS_MESSAGE_MAX_BYTES`].
    /// Errors: [`EngineError::TooLarge`] for a failure's error object over
    /// [`limits::HOSTED_VALUE_MAX_BYTES`]; [`EngineError::Store`].
    pub async fn settle_hosted(
        &self,
        task_id: &str,
        settlement: Settlement,
    ) -> Result<Option<(TaskRecord, bool)>, EngineError> {
        if let Settlement::Failed(error) = &settlement {
            limits::check_value_size("the error", error, limits::HOSTED_VALUE_MAX_BYTES)?;
        }
        self.change_hosted(task_id, Applies::Live, move |w, mut t, now| {
            if t.status.is_terminal() {
                return Ok((t, false));
            }
            let to = match settlement {
                Settlement::Completed(result) => {
                    t.result = Some(result);
                    TaskStatus::Completed
                }
                Settlement::Failed(error) => {
                    t.status_message = error
                        .get("message")
                        .and_then(Value::as_str)
                        .map(status_text)
                        .or(t.status_message);
                    t.error = Some(error);
                    TaskStatus::Failed
                }
                Settlement::Cancelled(message) => {
                    t.cancel_requested = true;
                    t.status_message = Some(status_text(&message));
                    w.event(&t, now, "cancelRequested", json!({"by": t.principal}))?;
                    TaskStatus::Cancelled
                }
            };
            supersede_outstanding(w, &mut t, now)?;
            transition(w, &mut t, to, now)?;
            let t = w.save(t)?;
            Ok((TaskRecord::clone(&t), true))
        })
        .await
    }

    /// Sets a hosted task's retention to `ttl_ms` (ms from creation), terminal or not, with a
    /// `ttl` event; the sweeper is told of the new deadline. Returns false for an unknown or
    /// expired task. Errors: [`EngineError::Store`].
    pub async fn set_hosted_ttl(&self, task_id: &str, ttl_ms: u64) -> Result<bool, EngineError> {
        let task = self
            .change_hosted(task_id, Applies::Live, move |w, mut t, now| {
                t.last_updated_at_ms = now;
                set_ttl(w, &mut t, Some(ttl_ms), "host", now)?;
                w.save(t)
            })
            .await?;
        if let Some(t) = &task {
            self.note_deadline(t);
        }
        Ok(task.is_some())
    }

    /// Sets a live hosted task's status and, when given, its status message (cut to
    /// [`limits::STATUS_MESSAGE_MAX_BYTES`]). The status follows the input requests
    /// (ARCHITECTURE.md, invariant 6): `working` supersedes the outstanding ones (the host no
    /// longer waits for them); `input_required` is accepted only while one is outstanding (ask
    /// with [`Engine::require_hosted_input`]). Returns false for an unknown, expired or
    /// terminal task. Errors: [`EngineError::IllegalTransition`] for a terminal `status`;
    /// [`EngineError::Invalid`] for `input_required` with no input request outstanding;
    /// [`EngineError::Store`].
    pub async fn set_hosted_status(
        &self,
        task_id: &str,
        status: TaskStatus,
        message: Option<String>,
    ) -> Result<bool, EngineError> {
        if status.is_terminal() {
            return Err(EngineError::IllegalTransition {
                from: TaskStatus::Working,
                to: status,
            });
        }
        let changed = self
            .change_hosted(task_id, Applies::Unsettled, move |w, mut t, now| {
                if status == TaskStatus::InputRequired && t.input_requests.is_empty() {
                    return Err(EngineError::Invalid(
                        "a task is input_required only while an input request is outstanding: \
                         ask with input requests instead"
                            .into(),
                    ));
                }
                if let Some(message) = message {
                    let message = status_text(&message);
                    t.status_message = Some(message.clone());
                    w.event(&t, now, "statusMessage", json!({"statusMessage": message}))?;
                }
                t.last_updated_at_ms = now;
                if status == TaskStatus::Working {
                    supersede_outstanding(w, &mut t, now)?;
                }
                if t.status != status {
                    transition(w, &mut t, status, now)?;
                }
                w.save(t)
            })
            .await?;
        Ok(changed.is_some())
    }

    /// Replaces the outstanding input requests of a live hosted task with `requests` (key →
    /// SEP-2663 `InputRequest`, `{method, params}`) and makes it `input_required`; `message`,
    /// when given, becomes its status message. A key outstanding with the same request is
    /// carried forward; an outstanding key left out is superseded. Returns false for an
    /// unknown, expired or terminal task.
    ///
    /// Errors: [`EngineError::KeyReused`] (nothing changed) when a key was answered or
    /// superseded earlier in the task's life, or is outstanding with another request (keys are
    /// unique over a task's life); [`EngineError::TooLarge`] for a request over
    /// [`limits::HOSTED_VALUE_MAX_BYTES`]; [`EngineError::Invalid`] for an empty set;
    /// [`EngineError::Store`].
    pub async fn require_hosted_input(
        &self,
        task_id: &str,
        requests: BTreeMap<String, Value>,
        message: Option<String>,
    ) -> Result<bool, EngineError> {
        if requests.is_empty() {
            return Err(EngineError::Invalid(
                "at least one input request is needed to wait for input".into(),
            ));
        }
        for (key, request) in &requests {
            limits::check_value_size(
                &format!("the input request {key:?}"),
                request,
                limits::HOSTED_VALUE_MAX_BYTES,
            )?;
        }
        let message = message.map(|m| status_text(&m));
        let changed = self
            .change_hosted(task_id, Applies::Unsettled, move |w, mut t, now| {
                let id = t.task_id.clone();
                let mut reused = Vec::new();
                let mut new = Vec::new();
                for (key, request) in &requests {
                    match store::input_key(w.conn, &id, key)? {
                        None => new.push(key.clone()),
                        Some((state, stored, _))
                            if state == "outstanding" && stored == *request => {}
                        Some(_) => reused.push(key.clone()),
                    }
                }
                if !reused.is_empty() {
                    return Err(EngineError::KeyReused(reused.join(", ")));
                }
                let dropped: Vec<String> = t
                    .input_requests
                    .keys()
                    .filter(|k| !requests.contains_key(*k))
                    .cloned()
                    .collect();
                for key in dropped {
                    store::supersede_inputs(w.conn, &id, Some(&key))?;
                    t.input_requests.remove(&key);
                    w.event(&t, now, "inputSuperseded", json!({"key": key}))?;
                }
                for key in new {
                    let request = &requests[&key];
                    store::insert_input(w.conn, &id, &key, request, false, now)?;
                    t.input_requests.insert(key.clone(), request.clone());
                    w.event(
                        &t,
                        now,
                        "inputRequested",
                        json!({"key": key, "request": request, "humanOnly": false}),
                    )?;
                }
                if let Some(message) = message {
                    t.status_message = Some(message);
                }
                t.last_updated_at_ms = now;
                if t.status != TaskStatus::InputRequired {
                    transition(w, &mut t, TaskStatus::InputRequired, now)?;
                }
                w.save(t)
            })
            .await?;
        Ok(changed.is_some())
    }

    /// Records `responses` (key → answer, as given) for the outstanding input requests of a
    /// live hosted task; other keys are ignored. Once none is outstanding the task returns to
    /// `working`. Returns `None` for an unknown, expired or terminal task.
    /// Errors: [`EngineError::TooLarge`] (nothing recorded) for an answer over
    /// [`limits::ANSWER_MAX_BYTES`]; [`EngineError::Store`].
    pub async fn answer_hosted(
        &self,
        task_id: &str,
        responses: Map<String, Value>,
    ) -> Result<Option<HostedAnswers>, EngineError> {
        for (key, response) in &responses {
            limits::check_answer_size(key, response)?;
        }
        self.change_hosted(task_id, Applies::Unsettled, move |w, mut t, now| {
            let mut report = HostedAnswers::default();
            for (key, response) in responses {
                if t.input_requests.remove(&key).is_none() {
                    report.ignored.insert(key);
                    continue;
                }
                store::answer_input(w.conn, &t.task_id, &key, &response, &t.principal, now)?;
                let action = response.get("action").cloned().unwrap_or(Value::Null);
                w.event(
                    &t,
                    now,
                    "inputAnswered",
                    json!({"key": key, "by": t.principal, "action": action, "via": "host"}),
                )?;
                report.accepted.insert(key);
            }
            report.outstanding = t.input_requests.keys().cloned().collect();
            if !report.accepted.is_empty() {
                t.last_updated_at_ms = now;
                if t.input_requests.is_empty() && t.status == TaskStatus::InputRequired {
                    transition(w, &mut t, TaskStatus::Working, now)?;
                }
                w.save(t)?;
            }
            Ok(report)
        })
        .await
    }

    /// Every answer recorded for a hosted task so far (key → answer), across all its input
    /// rounds. Errors: [`EngineError::Store`].
    pub fn hosted_answers(&self, task_id: &str) -> Result<BTreeMap<String, Value>, EngineError> {
        Ok(self
            .parts
            .store
            .input_rounds(task_id)?
            .into_iter()
            .filter(|round| round.state == "answered")
            .filter_map(|round| Some((round.key, round.response?)))
            .collect())
    }

    /// Stores protocol `_meta` (a JSON object) for a live or terminal hosted task as a `meta`
    /// timeline event; [`Engine::hosted_meta`] reads the latest. Returns false for an unknown
    /// or expired task. Errors: [`EngineError::TooLarge`] for `_meta` over
    /// [`limits::HOSTED_VALUE_MAX_BYTES`]; [`EngineError::Store`].
    pub async fn set_hosted_meta(&self, task_id: &str, meta: Value) -> Result<bool, EngineError> {
        limits::check_value_size("_meta", &meta, limits::HOSTED_VALUE_MAX_BYTES)?;
        let changed = self
            .change_hosted(task_id, Applies::Live, move |w, mut t, now| {
                t.last_updated_at_ms = now;
                w.event(&t, now, "meta", json!({"meta": meta}))?;
                w.save(t)
            })
            .await?;
        Ok(changed.is_some())
    }

    /// The latest `_meta` stored by [`Engine::set_hosted_meta`], if any.
    /// Errors: [`EngineError::Store`].
    pub fn hosted_meta(&self, task_id: &str) -> Result<Option<Value>, EngineError> {
        self.parts.store.read(|c| {
            let data: Option<String> = c
                .prepare_cached(
                    "SELECT data FROM events WHERE task_id = ?1 AND kind = 'meta' ORDER BY id DESC LIMIT 1",
                )?
                .query_row(params![task_id], |r| r.get(0))
                .optional()?;
            Ok(data
                .and_then(|d| serde_json::from_str::<Value>(&d).ok())
                .and_then(|mut d| d.get_mut("meta").map(Value::take)))
        })
    }

    /// Deletes a hosted task whatever its state (its events and input rounds go with it; a
    /// `deleted` event is published). Returns false when there was no such task.
    /// Errors: [`EngineError::Store`].
    pub async fn discard_hosted(&self, task_id: &str) -> Result<bool, EngineError> {
        let id = task_id.to_string();
        let deleted = self
            .parts
            .store
            .write(move |w| {
                if w.load(&id)?.is_none() {
                    return Ok(false);
                }
                w.delete(&id)?;
                Ok(true)
            })
            .await?;
        if deleted {
            self.parts
                .sweeper
                .task_count
                .fetch_sub(1, Ordering::Relaxed);
        }
        Ok(deleted)
    }
}

/// A host's status message as stored: cut to [`limits::STATUS_MESSAGE_MAX_BYTES`].
fn status_text(message: &str) -> String {
    limits::truncate(message.to_string(), limits::STATUS_MESSAGE_MAX_BYTES)
}

/// True when `task_id` is a hosted task (it has the `hosted` event its creation writes): its
/// retention ends at its ttlMs with no grace, as the host's store promises; its ttlMs is the
/// host's alone; a restart leaves it to its host.
pub(super) fn is_hosted(conn: &rusqlite::Connection, task_id: &str) -> rusqlite::Result<bool> {
    Ok(conn
        .prepare_cached("SELECT 1 FROM events WHERE task_id = ?1 AND kind = 'hosted' LIMIT 1")?
        .query_row(params![task_id], |_| Ok(()))
        .optional()?
        .is_some())
}
