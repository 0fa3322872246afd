//! Settlements (complete, fail, cancel) Taskdeck could not take when they were made: while
//! Taskdeck is down or answers 5xx, a handler's outcome is kept here, in memory, and sent again
//! with backoff (250 ms doubling to [`MAX_BACKOFF`]) until Taskdeck takes it or the task is gone
//! (404), so it is not lost and the task does not stay `working` for ever. The first failure of
//! each is logged as a warning (`tracing`); a settlement kept here is lost only with the process.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex, OnceLock},
    time::Duration,
};

use serde_json::Value;
use tokio::sync::Notify;

use super::api::{Api, SettleError};

/// The longest wait between two rounds of retries.
pub(crate) const MAX_BACKOFF: Duration = Duration::from_secs(5);
/// The first wait.
const FIRST_BACKOFF: Duration = Duration::from_millis(250);

/// The unsent settlements of one store, and the worker that retries them.
#[derive(Default)]
pub(crate) struct Outbox {
    /// Task id → its settle body (`{completed}`, `{failed}` or `{cancelled}`), first one kept.
    unsent: Mutex<HashMap<String, Value>>,
    /// Wakes the worker when a settlement is kept.
    kept: Notify,
    /// Whether the worker runs.
    started: OnceLock<()>,
}

impl Outbox {
    /// True when a settlement of `task_id` waits to be sent (it will decide the task's end).
    pub(crate) fn holds(&self, task_id: &str) -> bool {
        self.unsent.lock().unwrap().contains_key(task_id)
    }

    /// Keeps `settlement` of `task_id` (unless one is kept already) and makes sure the worker
    /// retries it; `error` is why the first attempt failed, logged once.
    pub(crate) fn keep(self: &Arc<Self>, api: &Api, task_id: &str, settlement: Value, error: &str) {
        tracing::warn!(
            task_id = %task_id,
            "Taskdeck did not take the task's outcome ({error}); keeping it and retrying until it does"
        );
        self.unsent
            .lock()
            .unwrap()
            .entry(task_id.to_string())
            .or_insert(settlement);
        let (outbox, api) = (self.clone(), api.clone());
        if self.started.set(()).is_ok() {
            tokio::spawn(async move { outbox.run(api).await });
        }
        self.kept.notify_one();
    }

    /// Retries every kept settlement, round after round, until none is left; then waits.
    async fn run(self: Arc<Self>, api: Api) {
        let mut backoff = FIRST_BACKOFF;
        loop {
            let batch: Vec<(String, Value)> = {
                let unsent = self.unsent.lock().unwrap();
                unsent.iter().map(|(k, v)| (k.clone(), v.clone())).collect()
            };
            if batch.is_empty() {
                backoff = FIRST_BACKOFF;
                self.kept.notified().await;
                continue;
            }
            tokio::time::sleep(backoff).await;
            let mut progress = false;
            for (task_id, settlement) in batch {
                match api.settle(&task_id, settlement).await {
                    Ok(_) => {
                        tracing::info!(task_id = %task_id, "Taskdeck took the task's kept outcome");
                        self.unsent.lock().unwrap().remove(&task_id);
                        progress = true;
                    }
                    Err(SettleError::Retry(_)) => {}
                    Err(SettleError::Refused(e)) => {
                        tracing::warn!(task_id = %task_id, "Taskdeck refused the task's kept outcome: {e}");
                        self.unsent.lock().unwrap().remove(&task_id);
                    }
                }
            }
            backoff = if progress {
                FIRST_BACKOFF
            } else {
                (backoff * 2).min(MAX_BACKOFF)
            };
        }
    }
}
