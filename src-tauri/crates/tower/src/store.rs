//! [`TaskdeckStore`]: an open Taskdeck store (a directory holding `taskdeck.sqlite3`) with the
//! engine that writes it, ready to serve tower-mcp's [`TaskStore`](tower_mcp::async_task::TaskStore)
//! calls. Opening starts the engine's retention sweeper and the feed reader that raises tokens;
//! dropping the last handle stops both.

use std::{path::Path, sync::Arc};

use serde_json::{Value, json};
use taskdeck_engine::{
    Engine, EngineConfig, EngineError, TaskFailure,
    data_dir_lock::{self, DataDirLock, LockError},
    feed::ChangeFeed,
    store::{Durability, Store},
};

use crate::signals::Signals;

/// How many feed changes a slow reader may fall behind before it rescans the store.
const FEED_CAPACITY: usize = 4096;

/// Settings of a [`TaskdeckStore`].
#[derive(Debug, Clone)]
pub struct StoreOptions {
    /// ttlMs of a task created without one, in ms from creation; `None` = kept until deleted.
    /// Default: 5 minutes, as tower-mcp's `MemoryTaskStore`.
    pub default_ttl_ms: Option<u64>,
    /// pollIntervalMs suggested to clients, in ms, on average: each task gets one within a
    /// twentieth of it ([`EngineConfig::new_task_poll_interval_ms`]). Default: 2000,
    /// `MemoryTaskStore`'s (which gives every task exactly that).
    pub poll_interval_ms: u64,
    /// How hard each commit is pushed to disk. Default: [`Durability::Process`] (every
    /// acknowledged change survives a crash of the process).
    pub durability: Durability,
}

impl Default for StoreOptions {
    fn default() -> Self {
        StoreOptions {
            default_ttl_ms: Some(5 * 60 * 1000),
            poll_interval_ms: 2000,
            durability: Durability::Process,
        }
    }
}

/// A durable tower-mcp task store over Taskdeck's engine. Cheap to clone: clones share one
/// store. Hand it to `McpRouter::task_store` (as `Arc<dyn TaskStore>`).
#[derive(Clone)]
pub struct TaskdeckStore {
    pub(crate) inner: Arc<Inner>,
}

/// What the clones of a [`TaskdeckStore`] share.
pub(crate) struct Inner {
    pub(crate) engine: Engine,
    pub(crate) options: StoreOptions,
    pub(crate) signals: Signals,
    /// The directory's lock (`taskdeck.lock`), held while the store is open.
    _lock: DataDirLock,
}

impl Drop for Inner {
    fn drop(&mut self) {
        // Stops the sweeper; the writer thread and the feed reader end with the last handle.
        self.engine.shutdown();
    }
}

impl TaskdeckStore {
    /// Opens (creating if needed) the store in directory `dir` with [`StoreOptions::default`].
    /// Tasks left by an earlier process are found as they were. Must be called inside a Tokio
    /// runtime.
    ///
    /// One process at a time: the store holds an exclusive lock on `dir/taskdeck.lock` (the
    /// lock file a Taskdeck server holds on its data dir) until its last handle is dropped.
    ///
    /// Errors: [`EngineError::Store`] when the directory or the database cannot be opened, or
    /// when another store or Taskdeck (in this process or another) has the directory open.
    pub fn open(dir: impl AsRef<Path>) -> Result<TaskdeckStore, EngineError> {
        Self::open_with(dir, StoreOptions::default())
    }

    /// [`TaskdeckStore::open`] with `options`. Errors: those of `open`.
    pub fn open_with(
        dir: impl AsRef<Path>,
        options: StoreOptions,
    ) -> Result<TaskdeckStore, EngineError> {
        let lock = lock(dir.as_ref())?;
        let store = Store::open(
            dir.as_ref(),
            options.durability,
            ChangeFeed::new(FEED_CAPACITY),
        )?;
        let config = EngineConfig {
            default_ttl_ms: options.default_ttl_ms,
            poll_interval_ms: options.poll_interval_ms,
            // An expired task reads as absent at once (SEP-2663 §Task Retention), so the
            // sweeper need not keep it visible.
            expired_grace_ms: 0,
            ..EngineConfig::default()
        };
        let engine = Engine::new(store, config, error_object);
        engine.start_hosting()?;
        let feed = engine.store().feed().subscribe();
        let inner = Arc::new_cyclic(|weak| {
            crate::signals::watch(feed, weak.clone());
            Inner {
                engine,
                options,
                signals: Signals::default(),
                _lock: lock,
            }
        });
        Ok(TaskdeckStore { inner })
    }

    /// The engine over the store (to read what Taskdeck's API or window would show).
    pub fn engine(&self) -> &Engine {
        &self.inner.engine
    }
}

/// Takes the lock of `dir` (created if missing), as a Taskdeck server takes its data dir's.
/// Errors: [`EngineError::Store`] naming the directory when it is held elsewhere.
fn lock(dir: &Path) -> Result<DataDirLock, EngineError> {
    std::fs::create_dir_all(dir)
        .map_err(|e| EngineError::Store(format!("{}: {e}", dir.display())))?;
    match data_dir_lock::acquire(dir) {
        Ok(acquired) => Ok(acquired.lock),
        Err(LockError::Busy(_)) => Err(EngineError::Store(format!(
            "the task store {} is already open in another store or process (it holds {}); \
             one process opens a store at a time",
            dir.display(),
            data_dir_lock::lock_path(dir).display()
        ))),
        Err(e) => Err(EngineError::Store(e.to_string())),
    }
}

/// The JSON-RPC error object of a task the engine fails itself (only when its ttlMs elapses
/// while it runs): internal error, `-32603` (JSON-RPC 2.0 §5.1).
fn error_object(failure: &TaskFailure) -> Value {
    let mut error = json!({"code": -32603, "message": failure.message});
    if let Some(data) = &failure.data {
        error["data"] = data.clone();
    }
    error
}
