//! [`Engine`]: the one seam adapters use. It creates tasks, runs their tools, and applies every
//! change (status, progress, input rounds, cancellation, expiry) as one durable store write that
//! checks the state machine and appends to the task's timeline.
//!
//! This file holds the handle, its settings and the parts its clones share; each concept has a
//! file of its own:
//! - `tools`: the seam a tool implements ([`TaskTool`], [`ToolDescriptor`], [`ToolMode`]);
//! - `registry`: the registered tools and their compiled input schemas;
//! - `creation`: creating tasks (with a requested ttl, or once per idempotency key);
//! - `executor`: running tools, settling their tasks, and the fate of tasks left unsettled by
//!   the previous process;
//! - `input_rounds`: input requests and their answers (SEP-2663 §Task Update Requests);
//! - `hosted`: tasks whose work runs in the host process, which reports every change;
//! - `updates`: cancellation requests, status messages and progress;
//! - `reads`: what a principal may read of its tasks;
//! - `retention`: TTL expiry, the store caps, and the sweeper that enforces both;
//! - `audit_log`: recording approval decisions in the audit log, reading, verifying and
//!   pruning it.

mod audit_log;
mod creation;
mod deletion;
mod executor;
mod hidden_values;
mod hosted;
mod input_expiry;
mod input_rounds;
mod reads;
mod registry;
mod retention;
mod tools;
mod updates;

use std::{sync::Arc, time::Duration};

use serde_json::json;
use tokio_util::sync::CancellationToken;

pub use deletion::Deletion;
pub use executor::Recovery;
pub use hidden_values::HiddenHeld;
pub use hosted::{HostedAnswers, Settlement, retention_elapsed};
pub use input_expiry::{EXPIRED_BY, expired_response, is_expired_response};
pub use input_rounds::AnswerReport;
pub use registry::{argument_errors, schema_error_message};
pub use tools::{TaskTool, ToolDescriptor, ToolMode};

use super::{
    EngineError, TaskRecord, TaskStatus,
    failure::FailureToErrorObject,
    state::check_transition,
    store::{self, Store, WriteCtx},
};

/// Engine settings.
#[derive(Debug, Clone)]
pub struct EngineConfig {
    /// ttlMs given to new tasks (retention from creation); `None` = unlimited.
    pub default_ttl_ms: Option<u64>,
    /// pollIntervalMs suggested to clients, in ms: what tasks are given on average, each within
    /// a twentieth of it (see [`EngineConfig::new_task_poll_interval_ms`]).
    pub poll_interval_ms: u64,
    /// How long a tool may ignore a cancel request before its run is dropped.
    pub cancel_grace: Duration,
    /// Keep at most this many tasks; the oldest terminal ones are deleted first.
    pub max_tasks: Option<u64>,
    /// Keep at most about this many bytes of task data; the oldest terminal tasks go first.
    pub max_bytes: Option<u64>,
    /// How long a task that failed by expiry stays visible before it is deleted, in ms.
    pub expired_grace_ms: u64,
    /// How long an audit log entry is kept, in ms from when it was recorded (independent of
    /// its task's ttlMs); `None` = forever. Default 365 days.
    pub audit_retention_ms: Option<u64>,
}

impl EngineConfig {
    /// The pollIntervalMs (ms) of a task created now: drawn at random, uniformly, within a
    /// twentieth of [`EngineConfig::poll_interval_ms`] either side (950-1050 ms for the default
    /// 1000, so clients poll as often on average), and kept for the task's life (SEP-2663
    /// §Task Polling: a suggestion that MAY change).
    ///
    /// Why not the configured value itself: clients poll a task in a loop, asking again one
    /// interval after each answer. A moment in which the server answers nobody (a busy core, a
    /// long commit) releases every poll that came due meanwhile at once, and with one interval
    /// for all, those clients then poll in step for the rest of their tasks' lives; each such
    /// moment adds more, and the server meets its load in ever larger bursts (a 4-minute soak
    /// of 500 agents: the writer's groups grew from 2.4 to 3.7 writes and the tasks/get p99 from
    /// 1.5 to 2.7 ms at a constant request rate; BENCHMARKS.md, "Soak"). Intervals that differ
    /// by up to a tenth pull such a group apart within a few polls.
    ///
    /// At most `i64::MAX`: the store keeps it as a signed 64-bit integer.
    pub fn new_task_poll_interval_ms(&self) -> u64 {
        spread_poll_interval(self.poll_interval_ms, rand::random()).min(i64::MAX as u64)
    }
}

/// `base` ms moved by `draw` within a twentieth of `base` (rounded down) either side: every
/// value from `base - base / 20` to `base + base / 20`, equally likely for a uniform `draw`
/// (past `u64::MAX`, which only a base near it reaches, the draws pile up at `u64::MAX`).
fn spread_poll_interval(base: u64, draw: u64) -> u64 {
    let side = base / 20;
    (base - side).saturating_add(draw % (2 * side + 1))
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
            audit_retention_ms: Some(Engine::DEFAULT_AUDIT_RETENTION_MS),
        }
    }
}

/// What every clone of an [`Engine`] shares.
pub(crate) struct EngineParts {
    pub(crate) store: Store,
    pub(crate) config: EngineConfig,
    /// Makes the stored `error` object of a failed task (installed by the server).
    error_object: FailureToErrorObject,
    registry: registry::ToolRegistry,
    running: executor::RunningTasks,
    sweeper: retention::SweeperState,
    /// Cancelled at shutdown: stops the sweeper and every run.
    shutdown: CancellationToken,
}

/// Handle to the engine; cheap to clone.
#[derive(Clone)]
pub struct Engine {
    parts: Arc<EngineParts>,
}

impl Engine {
    /// The shortest retention a requestor may ask for, in ms (see [`Engine::create_task_with_ttl`]).
    pub const MIN_REQUESTED_TTL_MS: u64 = 1_000;
    /// The longest retention a requestor may ask for when the default is unlimited: 100 years
    /// in ms, the bound `--default-ttl-ms` has.
    pub const MAX_REQUESTED_TTL_MS: u64 = 100 * 365 * 24 * 3600 * 1000;
    /// How long audit log entries are kept unless configured otherwise: 365 days in ms.
    pub const DEFAULT_AUDIT_RETENTION_MS: u64 = 365 * 24 * 3600 * 1000;

    /// An engine over `store`. `error_object` makes the JSON-RPC error object a failed task
    /// stores and clients see, from the engine's [`TaskFailure`](super::TaskFailure) (the
    /// server's wire mapping: the engine chooses no code). Register tools, then call
    /// [`Engine::start`].
    pub fn new(store: Store, config: EngineConfig, error_object: FailureToErrorObject) -> Engine {
        Engine {
            parts: Arc::new(EngineParts {
                store,
                config,
                error_object,
                registry: registry::ToolRegistry::default(),
                running: executor::RunningTasks::default(),
                sweeper: retention::SweeperState::default(),
                shutdown: CancellationToken::new(),
            }),
        }
    }

    /// The store (for reads adapters make directly: lists, timelines, events).
    pub fn store(&self) -> &Store {
        &self.parts.store
    }

    /// Settings.
    pub fn config(&self) -> &EngineConfig {
        &self.parts.config
    }
}

/// The task `task_id` inside a write. Errors: [`EngineError::NotFound`] when it does not exist.
fn load(w: &mut WriteCtx<'_>, task_id: &str) -> Result<TaskRecord, EngineError> {
    w.load(task_id)?.ok_or(EngineError::NotFound)
}

/// Supersedes the outstanding input requests of `t` (when it is `input_required`), each with an
/// `inputSuperseded` event: the task is settling and their answers can no longer be used.
/// Errors: [`EngineError::Store`].
fn supersede_outstanding(
    w: &mut WriteCtx<'_>,
    t: &mut TaskRecord,
    now: i64,
) -> Result<(), EngineError> {
    if t.status != TaskStatus::InputRequired {
        return Ok(());
    }
    for key in store::supersede_inputs(w.conn, &t.task_id, None)? {
        t.input_requests.remove(&key);
        w.event(t, now, "inputSuperseded", json!({"key": key}))?;
    }
    Ok(())
}

/// Moves `t` to `to` (checked against the state machine) and records a `status` event.
/// Errors: [`EngineError::IllegalTransition`]; [`EngineError::Store`].
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

/// Sets `t`'s retention to `ttl_ms` (ms from its creation; `None`: unlimited) and records a
/// `ttl` event `{ttlMs, reason}` in its timeline (SEP-2663 lets ttlMs change over a task's
/// life). Errors: [`EngineError::Store`].
fn set_ttl(
    w: &mut WriteCtx<'_>,
    t: &mut TaskRecord,
    ttl_ms: Option<u64>,
    reason: &str,
    now: i64,
) -> Result<(), EngineError> {
    t.ttl_ms = ttl_ms;
    w.event(t, now, "ttl", json!({"ttlMs": ttl_ms, "reason": reason}))
}

#[cfg(test)]
mod tests {
    use super::{EngineConfig, spread_poll_interval};

    #[test]
    fn a_spread_poll_interval_covers_a_twentieth_either_side_of_the_configured_one() {
        // The draws 0..=100 reach each value of 950..=1050 once.
        let mut seen: Vec<u64> = (0..=100).map(|d| spread_poll_interval(1000, d)).collect();
        seen.sort_unstable();
        assert_eq!(seen, (950..=1050).collect::<Vec<_>>());
        assert_eq!(spread_poll_interval(1000, u64::MAX), 950 + u64::MAX % 101);
        // Below 20 ms there is no twentieth to move by: the configured value as it is.
        assert_eq!(spread_poll_interval(19, 12345), 19);
        assert_eq!(spread_poll_interval(0, 7), 0);
        // The top of the spread of the largest value saturates instead of overflowing.
        assert_eq!(
            spread_poll_interval(u64::MAX, 2 * (u64::MAX / 20)),
            u64::MAX
        );
    }

    #[test]
    fn new_tasks_get_different_poll_intervals_around_the_configured_one() {
        let config = EngineConfig {
            poll_interval_ms: 2000,
            ..EngineConfig::default()
        };
        let drawn: std::collections::BTreeSet<u64> = (0..200)
            .map(|_| config.new_task_poll_interval_ms())
            .collect();
        assert!(
            drawn.iter().all(|ms| (1900..=2100).contains(ms)),
            "{drawn:?}"
        );
        // 200 draws among 201 values: fewer than 50 distinct ones would mean no real spread.
        assert!(drawn.len() > 50, "{drawn:?}");
        // Past what the store keeps (a signed 64-bit integer), the largest it can keep.
        let huge = EngineConfig {
            poll_interval_ms: u64::MAX,
            ..EngineConfig::default()
        };
        assert_eq!(huge.new_task_poll_interval_ms(), i64::MAX as u64);
    }
}
