//! Removing a command task's output log (`<data dir>/logs/<taskId>.log`) once its task is gone:
//! deleted on request, by its TTL or by the store's caps. The engine knows nothing of these
//! files, so the server follows the change feed's `deleted` events; at start, and whenever the
//! feed lagged, it also sweeps the logs whose task is no longer stored (a run that stopped
//! between a deletion and its removal, or logs left by versions that kept them).

use std::path::{Path, PathBuf};

use tokio::sync::broadcast::error::RecvError;
use tokio_util::sync::CancellationToken;

use taskdeck_engine::{Engine, EngineError, Principal};

use super::output::log_path;

/// Follows `engine`'s change feed until `stop` fires, removing the log under `log_dir` of every
/// deleted task; sweeps `log_dir` once at once. Failures to remove are logged, never fatal.
pub fn spawn(engine: &Engine, log_dir: PathBuf, stop: CancellationToken) {
    let mut feed = engine.store().feed().subscribe();
    let engine = engine.clone();
    tokio::spawn(async move {
        sweep_in_background(&engine, &log_dir).await;
        loop {
            let change = tokio::select! {
                _ = stop.cancelled() => return,
                change = feed.recv() => change,
            };
            match change {
                Ok(change) if change.event.kind == "deleted" => {
                    remove(&log_path(&log_dir, &change.event.task_id));
                }
                Ok(_) => {}
                Err(RecvError::Lagged(_)) => sweep_in_background(&engine, &log_dir).await,
                Err(RecvError::Closed) => return,
            }
        }
    });
}

async fn sweep_in_background(engine: &Engine, log_dir: &Path) {
    let (engine, log_dir) = (engine.clone(), log_dir.to_path_buf());
    let swept = tokio::task::spawn_blocking(move || sweep(&engine, &log_dir)).await;
    match swept {
        Ok(Ok(0)) => {}
        Ok(Ok(n)) => tracing::info!(removed = n, "removed the output logs of deleted tasks"),
        Ok(Err(e)) => tracing::warn!("output logs not swept: {e}"),
        Err(e) => tracing::warn!("output logs not swept: {e}"),
    }
}

/// Removes every `<taskId>.log` in `log_dir` whose task is not stored; returns how many.
/// A missing `log_dir` is an empty one. Errors: the store's, when a lookup fails.
pub fn sweep(engine: &Engine, log_dir: &Path) -> Result<usize, EngineError> {
    let Ok(entries) = std::fs::read_dir(log_dir) else {
        return Ok(0);
    };
    let admin = Principal::admin();
    let mut removed = 0;
    for entry in entries.flatten() {
        let path = entry.path();
        let Some(task_id) = path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_suffix(".log"))
        else {
            continue;
        };
        match engine.get(&admin, task_id) {
            Ok(_) => {}
            Err(EngineError::NotFound) => {
                remove(&path);
                removed += 1;
            }
            Err(e) => return Err(e),
        }
    }
    Ok(removed)
}

fn remove(path: &Path) {
    match std::fs::remove_file(path) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => tracing::warn!("could not remove {}: {e}", path.display()),
    }
}
