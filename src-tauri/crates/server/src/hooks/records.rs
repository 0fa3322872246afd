//! The audit records of the decisions the policy takes on hook events, made and written after
//! the hook has its answer: one worker takes them in the order decided, masks each call's
//! credentials on a blocking thread (which reads every string of a call of up to 4 MiB) and
//! writes the record. At most [`LARGE_PENDING`] records of one principal's calls over
//! [`limits::ARGUMENTS_MAX_BYTES`] wait at a time: an agent that sends large calls faster than
//! they can be recorded waits for room before its next answer, so what is pending stays
//! bounded and no decision goes unrecorded, while the other agents' answers never wait for it.
//! A decision whose hook stopped waiting meanwhile is recorded as abandoned. At a stop,
//! [`Records::flush`] writes what is still waiting before the store is closed.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
};

use serde_json::Value;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc, oneshot};

use super::{Agent, decide::HookCall};
use crate::policy::Verdict;
use taskdeck_engine::{Engine, limits};

/// How many records of one principal's calls over [`limits::ARGUMENTS_MAX_BYTES`] (as JSON)
/// may wait to be made before its next such call's answer waits for room.
pub const LARGE_PENDING: usize = 4;

/// One decision to record: the call as the hook gave it and the policy's verdict.
pub struct PendingRecord {
    /// The agent that made the call.
    pub agent: Agent,
    /// The hook's token name.
    pub principal: String,
    /// The agent's tool name.
    pub tool_name: String,
    /// The call's arguments, as the agent sent them (masked when the record is made).
    pub tool_input: Value,
    /// The session's working directory.
    pub cwd: Option<String>,
    /// What the policy decided, and why.
    pub verdict: Verdict,
    /// When the hook stops waiting for its answer (its `taskdeck-hook-answer-by`, Unix ms). A
    /// decision queued after it never reached the agent: it is recorded as `ask` by
    /// `abandoned`, saying what the policy said.
    pub answer_by: Option<i64>,
    /// Set when the record is queued: the decision came after `answer_by`.
    late: bool,
    /// Held while a large call's record waits ([`Records::queue`]).
    room: Option<OwnedSemaphorePermit>,
}

impl PendingRecord {
    /// `call`'s record of `verdict` to make later; `answer_by` as [`PendingRecord::answer_by`].
    pub fn of(call: &HookCall, verdict: Verdict, answer_by: Option<i64>) -> PendingRecord {
        PendingRecord {
            agent: call.agent,
            principal: call.principal.to_string(),
            tool_name: call.tool_name.to_string(),
            tool_input: call.tool_input.clone(),
            cwd: call.cwd.map(str::to_string),
            verdict,
            answer_by,
            late: false,
            room: None,
        }
    }

    /// The audit record (blocking work: masks every string of the call).
    fn make(&self) -> taskdeck_engine::DecisionRecord {
        let call = HookCall {
            agent: self.agent,
            principal: &self.principal,
            tool_name: &self.tool_name,
            tool_input: &self.tool_input,
            cwd: self.cwd.as_deref(),
        };
        let mut record = call.decision_record(&self.verdict);
        if self.late {
            record.reason = Some(format!(
                "the hook had stopped waiting when Taskdeck decided (Taskdeck was slow or \
                 paused): the agent's own flow decided, not this {} ({})",
                record.decision,
                record.reason.as_deref().unwrap_or("")
            ));
            record.decision = "ask".into();
            record.decided_by = "abandoned".into();
        }
        record
    }
}

/// What the worker is given, in order.
enum Job {
    /// Make and write this record.
    Record(Box<PendingRecord>),
    /// Say so once every record queued before this one is written.
    Flush(oneshot::Sender<()>),
}

/// The queue of records to make, with its worker.
pub struct Records {
    /// Records in the order decided.
    queue: mpsc::UnboundedSender<Job>,
    /// Per principal, one permit per large record that may wait ([`LARGE_PENDING`]); a
    /// principal's entry goes once none of its large records waits.
    large: Arc<Mutex<HashMap<String, Arc<Semaphore>>>>,
}

impl Records {
    /// Starts the worker that records what is queued, in order, into `engine`'s audit log; it
    /// ends when the `Records` is dropped. A record that cannot be written is logged (the
    /// decision stands). Call inside a tokio runtime.
    pub fn spawn(engine: Engine) -> Records {
        let (queue, mut pending) = mpsc::unbounded_channel::<Job>();
        tokio::spawn(async move {
            while let Some(job) = pending.recv().await {
                let record = match job {
                    Job::Record(record) => record,
                    Job::Flush(done) => {
                        let _ = done.send(());
                        continue;
                    }
                };
                let written = match tokio::task::spawn_blocking(move || record.make()).await {
                    Ok(made) => engine.record_decision(made).await.map(drop),
                    Err(e) => Err(taskdeck_engine::EngineError::Invalid(e.to_string())),
                };
                if let Err(e) = written {
                    tracing::warn!("cannot record a hook's decision in the audit log: {e}");
                }
            }
        });
        Records {
            queue,
            large: Arc::default(),
        }
    }

    /// Queues `record`; a call over [`limits::ARGUMENTS_MAX_BYTES`] as JSON first waits until
    /// fewer than [`LARGE_PENDING`] such records of its principal are waiting. Whether the
    /// decision came too late for its hook is judged once it is queued.
    pub async fn queue(&self, mut record: PendingRecord) {
        if limits::json_size(&record.tool_input) > limits::ARGUMENTS_MAX_BYTES {
            let room = {
                let mut large = self.large.lock().unwrap();
                // Entries no record holds a permit of are dropped on the way.
                large.retain(|_, s| {
                    Arc::strong_count(s) > 1 || s.available_permits() < LARGE_PENDING
                });
                large
                    .entry(record.principal.clone())
                    .or_insert_with(|| Arc::new(Semaphore::new(LARGE_PENDING)))
                    .clone()
            };
            // The semaphore is never closed.
            record.room = room.acquire_owned().await.ok();
        }
        record.late = record
            .answer_by
            .is_some_and(|by| chrono::Utc::now().timestamp_millis() > by);
        if self.queue.send(Job::Record(Box::new(record))).is_err() {
            tracing::warn!("cannot record a hook's decision: the audit queue is closed");
        }
    }

    /// Returns once every record queued before the call is written (or could not be: see
    /// [`Records::spawn`]). For a stop: call after the last request, before the store closes.
    pub async fn flush(&self) {
        let (done, written) = oneshot::channel();
        if self.queue.send(Job::Flush(done)).is_ok() {
            let _ = written.await;
        }
    }
}
