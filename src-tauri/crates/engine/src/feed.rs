//! The change feed: every committed timeline event, with the task as it stands after it,
//! published in commit order. Adapters (the MCP `notifications/tasks` stream, `/v1/events`,
//! notifications) subscribe here instead of polling the store.

use std::sync::Arc;

use tokio::sync::broadcast;

use super::{TaskRecord, TimelineEvent};

/// One committed change: the event and the task's state right after it.
#[derive(Debug, Clone)]
pub struct Change {
    /// The committed timeline event.
    pub event: TimelineEvent,
    /// The task right after the event (for a `deleted` event, as it was before the deletion).
    pub task: Arc<TaskRecord>,
}

/// A broadcast of [`Change`]s. Slow subscribers that fall more than `capacity` changes behind
/// get `RecvError::Lagged` and must resynchronise from the store (events carry ids for that).
///
/// A change lives until every subscriber has received it or until `capacity` newer ones push
/// it out, whichever comes first; a subscriber that reads the store itself and only needs to
/// know that something changed takes [`ChangeFeed::subscribe_ids`] instead, so that it does
/// not keep changes (a task's arguments and result) alive and leave the store's writer to free
/// them, long after they left the CPU's caches, when it publishes newer ones.
#[derive(Clone)]
pub struct ChangeFeed {
    tx: broadcast::Sender<Arc<Change>>,
    ids: broadcast::Sender<i64>,
}

impl ChangeFeed {
    /// A feed keeping up to `capacity` changes for slow subscribers.
    pub fn new(capacity: usize) -> ChangeFeed {
        let (tx, _) = broadcast::channel(capacity);
        let (ids, _) = broadcast::channel(1);
        ChangeFeed { tx, ids }
    }

    /// Subscribes to all changes from now on. Filter by `change.task.task_id` to follow one task.
    pub fn subscribe(&self) -> broadcast::Receiver<Arc<Change>> {
        self.tx.subscribe()
    }

    /// Subscribes to the event ids of the changes published from now on (each [`Change`]'s
    /// `event.id`), keeping only the newest one: a receiver that has not read the last id
    /// before the next gets `RecvError::Lagged(n)` (n ids skipped) and then the newest. For
    /// readers of the store that want a wake-up per burst of changes, not the changes.
    pub fn subscribe_ids(&self) -> broadcast::Receiver<i64> {
        self.ids.subscribe()
    }

    pub(crate) fn publish(&self, change: Arc<Change>) {
        let id = change.event.id;
        let _ = self.tx.send(change);
        let _ = self.ids.send(id);
    }
}
