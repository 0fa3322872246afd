//! The change feed: every committed timeline event, with the task as it stands after it,
//! published in commit order. Adapters (the MCP `notifications/tasks` stream, `/v1/events`,
//! notifications) subscribe here instead of polling the store.

use std::sync::Arc;

use tokio::sync::broadcast;

use super::{TaskRecord, TimelineEvent};

/// One committed change: the event and the task's state right after it.
#[derive(Debug, Clone)]
pub struct Change {
    pub event: TimelineEvent,
    pub task: Arc<TaskRecord>,
}

/// A broadcast of [`Change`]s. Slow subscribers that fall more than `capacity` changes behind
/// get `RecvError::Lagged` and must resynchronise from the store (events carry ids for that).
#[derive(Clone)]
pub struct ChangeFeed {
    tx: broadcast::Sender<Arc<Change>>,
}

impl ChangeFeed {
    /// A feed keeping up to `capacity` changes for slow subscribers.
    pub fn new(capacity: usize) -> ChangeFeed {
        let (tx, _) = broadcast::channel(capacity);
        ChangeFeed { tx }
    }

    /// Subscribes to all changes from now on. Filter by `change.task.task_id` to follow one task.
    pub fn subscribe(&self) -> broadcast::Receiver<Arc<Change>> {
        self.tx.subscribe()
    }

    pub(crate) fn publish(&self, change: Arc<Change>) {
        let _ = self.tx.send(change);
    }
}
