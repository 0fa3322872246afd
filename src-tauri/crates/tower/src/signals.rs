//! The process-local side of durable state: the [`CancellationToken`] of each task, raised
//! when the store records its cancellation or its expiry, and the waiters of
//! `wait_for_completion`. Both follow the engine's change feed (every committed change, in
//! commit order) rather than polling; a deadline timer covers the moment a task's ttlMs
//! elapses before the sweeper's write reaches the feed.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex, Weak},
    time::Duration,
};

use taskdeck_engine::{
    Engine, EngineError, TaskRecord, TaskStatus, clock::now_ms, feed::Change, retention_elapsed,
};
use tokio::sync::broadcast::{Receiver, error::RecvError};
use tower_mcp::async_task::CancellationToken;

use crate::store::Inner;

/// The tokens handed out, by task id. A token is kept until its task is deleted, so a cancel
/// or the expiry of a finished task still raises it (tower-mcp's `TaskStore` semantics).
#[derive(Default)]
pub(crate) struct Signals {
    tokens: Mutex<HashMap<String, CancellationToken>>,
}

/// True when `task`'s stored state says its work must stop: cancelled, cancel requested, or
/// its retention elapsed at `now` (ms since the epoch).
pub(crate) fn must_stop(task: &TaskRecord, now: i64) -> bool {
    task.status == TaskStatus::Cancelled || task.cancel_requested || retention_elapsed(task, now)
}

impl Signals {
    /// The token of task `task` (one per task and process: every call returns a clone of it),
    /// raised at once when the stored task already says stop.
    pub(crate) fn token(&self, task: &TaskRecord) -> CancellationToken {
        let token = self
            .tokens
            .lock()
            .unwrap()
            .entry(task.task_id.clone())
            .or_default()
            .clone();
        if must_stop(task, now_ms()) {
            token.cancel();
        }
        token
    }

    /// Raises the token of `task_id`, if one was handed out.
    pub(crate) fn raise(&self, task_id: &str) {
        if let Some(token) = self.tokens.lock().unwrap().get(task_id) {
            token.cancel();
        }
    }

    /// Raises the token of `task_id` and forgets it: the task is gone.
    fn raise_and_forget(&self, task_id: &str) {
        if let Some(token) = self.tokens.lock().unwrap().remove(task_id) {
            token.cancel();
        }
    }

    /// The ids of every token handed out.
    fn ids(&self) -> Vec<String> {
        self.tokens.lock().unwrap().keys().cloned().collect()
    }
}

/// Follows the store's feed on a Tokio task: a change that cancels, expires or deletes a task
/// raises its token. Holds the store only weakly, so it ends when the store's last handle is
/// dropped (or its feed closes).
pub(crate) fn watch(feed: Receiver<Arc<Change>>, store: Weak<Inner>) {
    tokio::spawn(follow(feed, store));
}

/// The feed reader (see [`watch`]).
async fn follow(mut feed: Receiver<Arc<Change>>, store: Weak<Inner>) {
    loop {
        let received = feed.recv().await;
        let Some(store) = store.upgrade() else {
            return;
        };
        let signals = &store.signals;
        match received {
            Ok(change) => {
                if change.event.kind == "deleted" {
                    signals.raise_and_forget(&change.task.task_id);
                } else if must_stop(&change.task, now_ms()) {
                    signals.raise(&change.task.task_id);
                }
            }
            // Changes were missed: the store says which tasks must stop now.
            Err(RecvError::Lagged(_)) => {
                for id in signals.ids() {
                    match store.engine.store().get(&id) {
                        Ok(Some(task)) if !must_stop(&task, now_ms()) => {}
                        Ok(_) => signals.raise(&id),
                        Err(e) => tracing::warn!(task_id = %id, "cannot read task: {e}"),
                    }
                }
            }
            Err(RecvError::Closed) => return,
        }
    }
}

/// Where a task stands for a completion waiter.
pub(crate) enum Standing {
    /// Unknown, deleted or expired.
    Gone,
    /// Terminal: the task as it ended.
    Ended(Box<TaskRecord>),
    /// Live; its retention ends at this deadline (ms since the epoch), if it has one.
    Live(Option<i64>),
}

/// Where `task_id` stands now. Errors: [`EngineError::Store`].
pub(crate) fn standing(engine: &Engine, task_id: &str) -> Result<Standing, EngineError> {
    Ok(match engine.get_hosted(task_id)? {
        None => Standing::Gone,
        Some(task) if task.status.is_terminal() => Standing::Ended(Box::new(task)),
        Some(task) => Standing::Live(task.ttl_ms.map(|ttl| {
            task.created_at_ms
                .saturating_add(ttl.min(i64::MAX as u64) as i64)
        })),
    })
}

/// Waits until `task_id` ends or is gone, re-reading it on each of its feed changes and when
/// its deadline passes. Returns the ended task, or `None` when it is unknown or expires first.
/// Errors: [`EngineError::Store`].
pub(crate) async fn until_ended(
    engine: &Engine,
    task_id: &str,
) -> Result<Option<TaskRecord>, EngineError> {
    // Subscribed before the first read, so no change between the two is missed.
    let mut feed = engine.store().feed().subscribe();
    loop {
        let deadline = match standing(engine, task_id)? {
            Standing::Gone => return Ok(None),
            Standing::Ended(task) => return Ok(Some(*task)),
            Standing::Live(deadline) => deadline,
        };
        let sleep = match deadline {
            Some(at) => Duration::from_millis((at - now_ms()).max(0) as u64),
            None => Duration::from_secs(24 * 3600),
        };
        tokio::select! {
            _ = tokio::time::sleep(sleep) => {}
            _ = next_change_of(&mut feed, task_id) => {}
        }
    }
}

/// Resolves at the next feed change of `task_id`, or when changes were missed or the feed
/// closed (the caller re-reads the store either way).
async fn next_change_of(feed: &mut Receiver<Arc<Change>>, task_id: &str) {
    loop {
        match feed.recv().await {
            Ok(change) if change.task.task_id != task_id => continue,
            Ok(_) | Err(RecvError::Lagged(_)) => return,
            Err(RecvError::Closed) => std::future::pending().await,
        }
    }
}
