//! Waiting for one task's changes without each waiter reading the whole change feed: one feed
//! subscriber routes every change to the waiters registered for its task. With many calls
//! waiting at once (the gateway answers a quick call only once it ends), a waiter per feed
//! would wake every waiter for every other task's change.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
};

use tokio::sync::{broadcast::error::RecvError, mpsc};

use taskdeck_engine::{Engine, TaskRecord};

/// What a waiter is told: the task after a change, or `Resync` when changes were missed (the
/// feed lagged) and the task must be read from the store.
#[derive(Debug, Clone)]
pub enum TaskChange {
    /// The task after a change.
    Changed(Arc<TaskRecord>),
    /// Changes were missed: read the task from the store.
    Resync,
}

type Waiters = HashMap<String, Vec<(u64, mpsc::UnboundedSender<TaskChange>)>>;

/// The registry of waiters; cheap to share behind an `Arc`.
#[derive(Default)]
pub struct TaskWatch {
    waiters: Mutex<Waiters>,
    next_id: std::sync::atomic::AtomicU64,
}

/// One waiter's changes; deregisters itself when dropped.
pub struct Watching {
    watch: Arc<TaskWatch>,
    task_id: String,
    id: u64,
    /// The changes of the watched task, in order.
    pub changes: mpsc::UnboundedReceiver<TaskChange>,
}

impl TaskWatch {
    /// The registry, with its one subscriber to `engine`'s change feed (it ends with the feed).
    pub fn spawn(engine: &Engine) -> Arc<TaskWatch> {
        let watch = Arc::new(TaskWatch::default());
        let routes = watch.clone();
        let mut feed = engine.store().feed().subscribe();
        tokio::spawn(async move {
            loop {
                match feed.recv().await {
                    Ok(change) => routes.route(&change.task.task_id, || {
                        TaskChange::Changed(change.task.clone())
                    }),
                    Err(RecvError::Lagged(_)) => routes.resync_all(),
                    Err(RecvError::Closed) => return,
                }
            }
        });
        watch
    }

    /// Registers a waiter for `task_id`'s changes from now on.
    pub fn watch(self: &Arc<Self>, task_id: &str) -> Watching {
        let (tx, rx) = mpsc::unbounded_channel();
        let id = self
            .next_id
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.waiters
            .lock()
            .unwrap()
            .entry(task_id.to_string())
            .or_default()
            .push((id, tx));
        Watching {
            watch: self.clone(),
            task_id: task_id.to_string(),
            id,
            changes: rx,
        }
    }

    fn route(&self, task_id: &str, change: impl Fn() -> TaskChange) {
        let waiters = self.waiters.lock().unwrap();
        if let Some(list) = waiters.get(task_id) {
            for (_, tx) in list {
                let _ = tx.send(change());
            }
        }
    }

    fn resync_all(&self) {
        for list in self.waiters.lock().unwrap().values() {
            for (_, tx) in list {
                let _ = tx.send(TaskChange::Resync);
            }
        }
    }
}

impl Drop for Watching {
    fn drop(&mut self) {
        let mut waiters = self.watch.waiters.lock().unwrap();
        if let Some(list) = waiters.get_mut(&self.task_id) {
            list.retain(|(id, _)| *id != self.id);
            if list.is_empty() {
                waiters.remove(&self.task_id);
            }
        }
    }
}
