//! Input rounds (SEP-2663 §Task Update Requests): a running tool issues input requests under
//! keys unique for the task's life (the task is `input_required` while any is outstanding), a
//! principal answers them, and each answer is checked, recorded with who gave it, and handed
//! to the run waiting for it. A resumed run replays the answers already given.

use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{Map, Value, json};
use tokio::sync::oneshot;

use super::{
    super::{
        clock::now_ms,
        context::{Cancelled, InputError, TaskContext},
        limits, store,
    },
    Engine, EngineError, TaskStatus,
    executor::AwaitedAnswer,
    load, set_ttl, transition,
};
use crate::Principal;

/// The outcome of [`Engine::answer`]: which keys were taken and which ignored (never issued,
/// already answered, or superseded: SEP-2663 §Task Update Requests).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AnswerReport {
    /// The keys whose answers were recorded, in the order given.
    pub accepted: Vec<String>,
    /// The keys whose answers were dropped, in the order given: not outstanding, every key
    /// of a terminal task, or human-only ones answered by an agent.
    pub ignored: Vec<String>,
}

impl Engine {
    /// Answers outstanding input requests of a task visible to `principal` (SEP-2663
    /// §Task Update Requests). Partial answers are taken; keys not outstanding are ignored; the
    /// task returns to `working` once no request is outstanding. Each answer is recorded with
    /// who gave it and when. An `elicitation/create` answer with `action: "accept"` must
    /// validate against the request's `requestedSchema` (formats included); `decline` and
    /// `cancel` answers are recorded without content. An agent's answer to a human-only request
    /// (e.g. `run_command`'s approval) is ignored: the request waits for a person, the admin or
    /// a human principal ([`Principal::is_human`]), whose name is recorded as `by`. A person's
    /// `accept` of a human-only request while the run holds hidden values they have not read
    /// ([`Engine::reveal_hidden`]) is refused.
    ///
    /// Errors: [`EngineError::NotFound`]; [`EngineError::Invalid`] when an answer is malformed
    /// or fails its schema, [`EngineError::HiddenUnread`] when it accepts a call with hidden
    /// values unread (then nothing of this update is recorded).
    pub async fn answer(
        &self,
        principal: &Principal,
        task_id: &str,
        responses: Map<String, Value>,
    ) -> Result<AnswerReport, EngineError> {
        let who = principal.clone();
        let id = task_id.to_string();
        let ttl = self.parts.config.default_ttl_ms;
        let engine = self.clone();
        let (report, delivered) = self
            .parts
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
                    if !who.is_human() && store::input_human_only(w.conn, &id, &key)? {
                        report.ignored.push(key);
                        continue;
                    }
                    let response = validate_response(&key, request, response)?;
                    limits::check_answer_size(&key, &response)?;
                    // A call shown masked is approved only by someone who read it whole: a
                    // masked value can be the command itself (hidden_values.rs).
                    if response.get("action").and_then(Value::as_str) == Some("accept")
                        && engine.hidden_unread_by(&id, &who.name)
                        && store::input_human_only(w.conn, &id, &key)?
                    {
                        return Err(EngineError::HiddenUnread {
                            key,
                            task_id: id.clone(),
                            by: who.name.clone(),
                        });
                    }
                    checked.push((key, response));
                }
                // The last answer's action, which says how the task resumes.
                let mut last_action = Value::Null;
                for (key, response) in checked {
                    store::answer_input(w.conn, &id, &key, &response, &who.name, now)?;
                    let action = response.get("action").cloned().unwrap_or(Value::Null);
                    last_action = action.clone();
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
                    // What the task says once back at work: how the last answer went.
                    let resumed = match last_action.as_str() {
                        Some("decline") => format!("Declined by {}", who.name),
                        Some("cancel") => format!("Dismissed by {}", who.name),
                        _ => format!("Answered by {}", who.name),
                    };
                    t.last_updated_at_ms = now;
                    back_to_work(w, &mut t, now, ttl, ("input answered", resumed))?;
                    w.save(t)?;
                }
                Ok((report, delivered))
            })
            .await?;
        if !delivered.is_empty() {
            self.parts.running.deliver(task_id, delivered);
        }
        if let Ok(t) = self.parts.store.get(task_id)
            && let Some(t) = t
        {
            self.note_deadline(&t);
        }
        Ok(report)
    }

    /// Issues input request `key` for the run `ctx` (see [`Engine::issue_input`]) and waits for
    /// its answer. `human_only`: only a person (the admin or a human principal) may answer it.
    ///
    /// Errors: [`InputError::Cancelled`] when the task ends or is cancelled first;
    /// [`InputError::NotIssued`] when the request cannot be stored.
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
    /// the same request under a key already answered yields its stored answer.
    ///
    /// Errors: [`EngineError::KeyReused`] when `key` was used for another request, answered or
    /// not (keys are unique for the task's life); [`EngineError::Terminal`];
    /// [`EngineError::Store`].
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
        let awaited = AwaitedAnswer {
            waiter_id,
            deliver: tx,
        };
        if !self.parts.running.await_answer(&ctx.task_id, key, awaited) {
            return Err(EngineError::NotFound);
        }
        let id = ctx.task_id.clone();
        let k = key.to_string();
        let issued = self
            .parts
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
                    // Only the same request: the answer to another question under this key
                    // must not pass for the answer to this one.
                    Some((state, stored, Some(response)))
                        if state == "answered" && stored == request =>
                    {
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
                        set_ttl(w, &mut t, None, "waiting for input", now)?;
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
        self.engine
            .parts
            .running
            .forget_waiter(&self.task_id, &self.key, self.id);
    }
}

/// Once no input request is outstanding, an `input_required` task goes back to `working` and
/// its retention runs again from creation (`ttl` when it was created without one), with a
/// `ttl` event saying `reason`; a hosted task's ttlMs is its host's and stays as it is.
///
/// Its statusMessage becomes `resumed` (e.g. "Answered by admin"): the one it had said what it
/// was waiting for ("Waiting for a human in Taskdeck: …"), which no longer holds, and the
/// `status` event of this transition carries the new one. A hosted task's messages are its
/// program's: its own stays.
pub(super) fn back_to_work(
    w: &mut store::WriteCtx<'_>,
    t: &mut super::TaskRecord,
    now: i64,
    ttl: Option<u64>,
    (reason, resumed): (&str, String),
) -> Result<(), EngineError> {
    if !t.input_requests.is_empty() || t.status != TaskStatus::InputRequired {
        return Ok(());
    }
    let hosted = super::hosted::is_hosted(w.conn, &t.task_id)?;
    if !hosted {
        t.status_message = Some(resumed);
    }
    transition(w, t, TaskStatus::Working, now)?;
    if hosted {
        return Ok(());
    }
    let base = store::created_ttl(w.conn, &t.task_id)?.unwrap_or(ttl);
    let ttl_ms = base.map(|ttl| (now - t.created_at_ms).max(0) as u64 + ttl);
    set_ttl(w, t, ttl_ms, reason, now)
}

/// Longest decline reason kept, in characters.
pub const DECLINE_REASON_MAX_CHARS: usize = 2000;

/// Checks one answer against its request and returns it as it is recorded. An
/// `elicitation/create` answer needs an `action`; `accept` content must match the form's
/// `requestedSchema` (types, required fields, no others, and the `format` of email, uri, date
/// and date-time strings, as the UI checks them); of content sent with `decline` only a string
/// `reason` is kept (at most [`DECLINE_REASON_MAX_CHARS`] characters, a longer one cut to end
/// with "…": why a human refused, for the agent to read), the rest, and all content sent with `cancel`, is dropped, so it reaches
/// neither the result nor the timeline. Errors: [`EngineError::Invalid`].
fn validate_response(key: &str, request: &Value, response: Value) -> Result<Value, EngineError> {
    if request.get("method").and_then(Value::as_str) != Some("elicitation/create") {
        return Ok(response);
    }
    let action = response.get("action").and_then(Value::as_str);
    match action {
        Some("decline") => {
            let reason = response
                .pointer("/content/reason")
                .and_then(Value::as_str)
                .map(str::trim)
                .filter(|r| !r.is_empty());
            Ok(match reason {
                Some(r) => {
                    // A reason cut short ends with "…": the agent reads that there was more.
                    let r: String = match r.char_indices().nth(DECLINE_REASON_MAX_CHARS) {
                        Some(_) => r
                            .chars()
                            .take(DECLINE_REASON_MAX_CHARS - 1)
                            .chain(['…'])
                            .collect(),
                        None => r.to_string(),
                    };
                    json!({"action": "decline", "content": {"reason": r}})
                }
                None => json!({"action": "decline"}),
            })
        }
        Some("cancel") => Ok(json!({"action": "cancel"})),
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
                .map(|e| match e.instance_path().to_string() {
                    // The content itself (a required field missing): no path to name.
                    path if path.is_empty() => super::schema_error_message(&e),
                    path => format!("{path}: {}", super::schema_error_message(&e)),
                })
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
    #[test]
    fn a_long_decline_reason_is_cut_saying_so() {
        let request =
            serde_json::json!({"method": "elicitation/create", "params": {"message": "?"}});
        let long = "x".repeat(super::DECLINE_REASON_MAX_CHARS + 500);
        let kept = super::validate_response(
            "k",
            &request,
            serde_json::json!({"action": "decline", "content": {"reason": long}}),
        )
        .unwrap();
        let reason = kept["content"]["reason"].as_str().unwrap();
        assert_eq!(reason.chars().count(), super::DECLINE_REASON_MAX_CHARS);
        assert!(reason.ends_with("x…"), "{reason}");
        let exact = "y".repeat(super::DECLINE_REASON_MAX_CHARS);
        let kept = super::validate_response(
            "k",
            &request,
            serde_json::json!({"action": "decline", "content": {"reason": exact}}),
        )
        .unwrap();
        assert_eq!(kept["content"]["reason"].as_str().unwrap(), exact);
    }

    use std::{sync::Arc, time::Duration};

    use futures::future::BoxFuture;

    use super::*;
    use crate::{
        EngineConfig, Outcome, TaskTool, ToolDescriptor, ToolMode,
        failure::TaskFailure,
        feed::ChangeFeed,
        store::{Durability, Store},
    };

    /// The failure's kind and message, as the stored error (the engine's tests have no wire).
    fn kind_and_message(failure: &TaskFailure) -> Value {
        json!({"kind": format!("{:?}", failure.kind), "message": failure.message})
    }

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
        let engine = Engine::new(store, EngineConfig::default(), kind_and_message);
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
        assert_eq!(error["kind"], "Internal");
        let message = error["message"].as_str().unwrap();
        assert!(
            message.starts_with("the input request could not be stored")
                && message.contains("\"k\" was already used"),
            "{message}"
        );
    }
}
