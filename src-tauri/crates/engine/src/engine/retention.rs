//! Retention: how long tasks stay, and the caps on what the store keeps.
//!
//! Each task is kept `ttlMs` from its creation (SEP-2663 §Task Retention). When that elapses, a
//! task still unsettled fails ([`FailureKind::Expired`]) and stays visible for
//! `expired_grace_ms`; a settled one is deleted. Beyond that, the oldest terminal tasks are
//! deleted while the configured caps (`max_tasks`, `max_bytes`) are exceeded.
//!
//! The sweeper is a background task that sleeps until the next task's `createdAt + ttlMs` or
//! the next idempotency key's expiry (woken early when an earlier deadline appears), expires
//! what is due, and enforces the caps; each pass also drops the `deleted` events older than
//! [`DELETED_EVENTS_KEPT_MS`](super::super::store::DELETED_EVENTS_KEPT_MS) (only passes delete
//! tasks, so only passes add them) and the expired idempotency keys, and prunes the audit log
//! to its own retention (`audit_log`; the oldest entry's due time is one of the deadlines). No
//! polling interval: when nothing has a deadline it sleeps until woken. While tasks not yet
//! settled exceed a cap, the store's changes wake it too (a pass at most every
//! [`OVER_CAP_PASS_MS`]), so that the cap holds once they settle; a finished task stays at
//! least [`CAP_GRACE_MS`] under a cap, for its agent to read its result.

use std::{
    sync::{
        Arc,
        atomic::{AtomicI64, AtomicU64, Ordering},
    },
    time::Duration,
};

use tokio::sync::Notify;

use super::{
    super::{
        clock::now_ms,
        failure::{FailureKind, TaskFailure},
        idempotency, store,
    },
    Engine, EngineError, TaskRecord, TaskStatus, set_ttl, supersede_outstanding, transition,
};

/// The longest the sweeper sleeps in one go: a year, in ms (tokio's timer has an upper bound).
const LONGEST_SLEEP_MS: u64 = 86_400_000 * 365;

/// How long the sweeper waits after a pass that failed (ms) before the next.
const SWEEP_RETRY_MS: u64 = 2_000;

/// While live tasks exceed a cap, the least time (ms) between two passes woken by changes.
const OVER_CAP_PASS_MS: u64 = 500;

/// How long a finished task stays under a cap at least (ms), so that its agent, polling at its
/// `pollIntervalMs` (about a second), reads its result before it goes.
pub const CAP_GRACE_MS: u64 = 5_000;

/// What the sweeper and the writers that wake it share.
pub(super) struct SweeperState {
    wake: Notify,
    /// The deadline (ms since epoch) the sweeper sleeps until; `i64::MAX` when none.
    next_deadline: AtomicI64,
    /// Tasks in the store (kept in step by create and delete), to wake the sweeper on a cap.
    pub(super) task_count: AtomicI64,
    /// Tasks created by this process, to check the byte cap every 100 creations.
    creations: AtomicU64,
}

impl Default for SweeperState {
    fn default() -> Self {
        SweeperState {
            wake: Notify::new(),
            next_deadline: AtomicI64::new(i64::MAX),
            task_count: AtomicI64::new(0),
            creations: AtomicU64::new(0),
        }
    }
}

/// What [`Engine::expire`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expiry {
    /// The task was gone already.
    Gone,
    /// The task was settled: it is deleted.
    Deleted,
    /// The task was unsettled: it failed, and stays visible for `expired_grace_ms`.
    Failed,
}

impl Engine {
    /// Starts the sweeper; it stops at [`Engine::shutdown`].
    pub(super) fn spawn_sweeper(&self) {
        let engine = self.clone();
        tokio::spawn(async move {
            let parts = Arc::clone(&engine.parts);
            loop {
                // Subscribed before the pass: a task that settles during it is not missed.
                let mut changes = parts.store.feed().subscribe_ids();
                let failed = engine.sweep_once().await.inspect_err(|e| {
                    tracing::error!("sweeper: {e}");
                });
                // Over a cap with every task live or just finished: the next task to settle,
                // or to leave its grace, may go.
                let over_cap = matches!(failed, Ok(true));
                let tasks = parts.store.next_expiry().ok().flatten();
                let keys = parts.store.read(idempotency::next_expiry).ok().flatten();
                let audit = engine.next_audit_prune().ok().flatten();
                let next = tasks
                    .into_iter()
                    .chain(keys)
                    .chain(audit)
                    .min()
                    .unwrap_or(i64::MAX);
                parts.sweeper.next_deadline.store(next, Ordering::Relaxed);
                let wait_ms = if next == i64::MAX {
                    LONGEST_SLEEP_MS
                } else {
                    (next - now_ms()).max(0) as u64
                };
                // A pass that failed (a full disk) leaves its work due: try again later, not
                // at once.
                let wait_ms = if failed.is_err() {
                    wait_ms.max(SWEEP_RETRY_MS)
                } else if over_cap {
                    wait_ms.min(CAP_GRACE_MS)
                } else {
                    wait_ms
                };
                tokio::select! {
                    _ = parts.shutdown.cancelled() => return,
                    _ = parts.sweeper.wake.notified() => {}
                    _ = tokio::time::sleep(Duration::from_millis(wait_ms.min(LONGEST_SLEEP_MS))) => {}
                    _ = changes.recv(), if over_cap => {
                        // At most a pass a half second while the caps wait for tasks to settle.
                        tokio::time::sleep(Duration::from_millis(OVER_CAP_PASS_MS)).await;
                    }
                }
            }
        });
    }

    /// One sweeper pass: expires every task due, enforces the caps, prunes old `deleted`
    /// events and expired idempotency keys, and prunes the audit log to its retention.
    /// Returns true when a cap is still exceeded by tasks not settled yet (none can go now).
    /// Errors: [`EngineError::Store`].
    async fn sweep_once(&self) -> Result<bool, EngineError> {
        loop {
            let due = self.parts.store.expired(now_ms(), 500)?;
            if due.is_empty() {
                break;
            }
            for id in &due {
                self.expire(id).await?;
            }
        }
        let over_cap = self.enforce_caps().await?;
        let now = now_ms();
        let before = now - store::DELETED_EVENTS_KEPT_MS;
        self.parts
            .store
            .write(move |w| {
                w.prune_deleted_events(before)?;
                idempotency::prune(w.conn, now)
            })
            .await?;
        self.prune_audit().await?;
        Ok(over_cap)
    }

    /// Expires one task whose TTL elapsed: an unsettled task fails (its tool is told to stop)
    /// and stays visible for `expired_grace_ms`, unless its run has ended and its outcome waits
    /// to be stored (then that outcome is stored); a settled one is deleted.
    async fn expire(&self, task_id: &str) -> Result<(), EngineError> {
        // The run ended before the TTL did, and its outcome waits to be stored (a full disk):
        // that outcome, not the expiry, is what the task ends with.
        // It stays visible as long as an expired task would, then goes at the next expiry.
        if let Some(outcome) = self.parts.running.ended(task_id) {
            let kept = self.parts.config.expired_grace_ms;
            return self
                .finish_applied(task_id, outcome, Some(kept))
                .await
                .map(drop);
        }
        let id = task_id.to_string();
        let grace = self.parts.config.expired_grace_ms;
        let error_object = self.parts.error_object;
        let expiry = self
            .parts
            .store
            .write(move |w| {
                let Some(mut t) = w.load(&id)? else {
                    return Ok(Expiry::Gone);
                };
                let now = now_ms();
                if t.status.is_terminal() {
                    w.delete(&id)?;
                    return Ok(Expiry::Deleted);
                }
                // A hosted task reads as absent once its ttlMs elapses (its host's contract):
                // no grace keeps it visible as failed.
                let grace = if super::hosted::is_hosted(w.conn, &id)? {
                    0
                } else {
                    grace
                };
                supersede_outstanding(w, &mut t, now)?;
                let failure = TaskFailure::new(
                    FailureKind::Expired,
                    "Task expired: its ttlMs elapsed before it finished",
                    None,
                );
                t.error = Some(error_object(&failure));
                t.status_message = Some(failure.message);
                transition(w, &mut t, TaskStatus::Failed, now)?;
                let kept = (now - t.created_at_ms).max(0) as u64 + grace;
                set_ttl(w, &mut t, Some(kept), "expired", now)?;
                w.save(t)?;
                Ok(Expiry::Failed)
            })
            .await?;
        match expiry {
            Expiry::Deleted => {
                self.parts
                    .sweeper
                    .task_count
                    .fetch_sub(1, Ordering::Relaxed);
            }
            Expiry::Failed => {
                self.parts.running.cancel(task_id);
            }
            Expiry::Gone => {}
        }
        Ok(())
    }

    /// Deletes the oldest terminal tasks while a configured cap (count, bytes) is exceeded, but
    /// none that finished less than [`CAP_GRACE_MS`] ago. Returns true when a cap is still
    /// exceeded with no terminal task left to delete (live or just finished tasks exceed it:
    /// the sweeper looks again as they settle, and once their grace has passed).
    async fn enforce_caps(&self) -> Result<bool, EngineError> {
        let (max_tasks, max_bytes) = (self.parts.config.max_tasks, self.parts.config.max_bytes);
        if max_tasks.is_none() && max_bytes.is_none() {
            return Ok(false);
        }
        loop {
            let (count, bytes) = self.parts.store.totals()?;
            let over_count = max_tasks.map_or(0, |m| (count as u64).saturating_sub(m));
            let over_bytes = max_bytes.is_some_and(|m| bytes as u64 > m);
            if over_count == 0 && !over_bytes {
                return Ok(false);
            }
            let batch = (over_count as usize).clamp(if over_bytes { 100 } else { 1 }, 1000);
            let settled_before = now_ms().saturating_sub(CAP_GRACE_MS as i64);
            let victims = self.parts.store.oldest_terminal(batch, settled_before)?;
            if victims.is_empty() {
                return Ok(true);
            }
            self.parts
                .sweeper
                .task_count
                .fetch_sub(victims.len() as i64, Ordering::Relaxed);
            self.parts
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
    pub(super) fn note_deadline(&self, task: &TaskRecord) {
        if let Some(ttl) = task.ttl_ms {
            let ttl = i64::try_from(ttl).unwrap_or(i64::MAX);
            self.note_deadline_at(task.created_at_ms.saturating_add(ttl));
        }
    }

    /// Wakes the sweeper when `deadline` (ms since the epoch: a task's expiry, or an idempotency
    /// key's) is earlier than the one it sleeps until.
    pub(super) fn note_deadline_at(&self, deadline: i64) {
        if deadline < self.parts.sweeper.next_deadline.load(Ordering::Relaxed) {
            self.parts.sweeper.wake.notify_one();
        }
    }

    /// After a task was stored: counts it and wakes the sweeper when its deadline is the
    /// earliest, or when a cap may now be exceeded (the task count at once, the bytes every 100
    /// creations).
    pub(super) fn note_created(&self, task: &TaskRecord) {
        self.note_deadline(task);
        let sweeper = &self.parts.sweeper;
        let count = sweeper.task_count.fetch_add(1, Ordering::Relaxed) + 1;
        let creations = sweeper.creations.fetch_add(1, Ordering::Relaxed) + 1;
        let config = &self.parts.config;
        let over_count = config.max_tasks.is_some_and(|m| count as u64 > m);
        let check_bytes = config.max_bytes.is_some() && creations.is_multiple_of(100);
        if over_count || check_bytes {
            sweeper.wake.notify_one();
        }
    }
}
