//! The store's single writer thread and its group commit.
//!
//! Every write is queued to one thread, which groups all writes waiting in its queue into a
//! single transaction: a caller's write is acknowledged only after the commit that contains it,
//! so "returned" always means "on disk". A write checks before it changes anything, so a
//! failing write leaves nothing behind and never takes its neighbours down.

use std::{
    path::Path,
    sync::{Arc, mpsc},
    thread,
};

use rusqlite::Connection;
use tokio::sync::oneshot;

use super::{
    checkpoint,
    write_context::{WorkingTasks, WriteCtx},
};
use crate::{
    EngineError,
    answer_cache::AnswerCache,
    feed::{Change, ChangeFeed},
};

/// A queued write: runs inside the group transaction (`None` when no transaction could be
/// opened: it must not touch the database) and says whether it succeeded, with the closure
/// that delivers its result once the commit is known (`true` = committed).
pub(super) type QueuedWrite = Box<dyn FnOnce(Option<&mut WriteCtx<'_>>) -> Ran + Send>;

/// What a [`QueuedWrite`] returns to the writer.
pub(super) struct Ran {
    /// The write succeeded (its changes stay in the group).
    ok: bool,
    /// Sends the write's result to its caller, given whether the group committed.
    deliver: Box<dyn FnOnce(bool) + Send>,
}

/// Writes in one group at most.
const MAX_GROUP: usize = 512;

/// Commits between two checkpoint requests.
const CHECKPOINT_EVERY: u64 = 200;

/// Wraps `f` as a queued write whose result (or [`EngineError::Store`] when the group did not
/// commit) is sent on `reply`.
pub(super) fn queued<R, F>(f: F, reply: oneshot::Sender<Result<R, EngineError>>) -> QueuedWrite
where
    R: Send + 'static,
    F: FnOnce(&mut WriteCtx<'_>) -> Result<R, EngineError> + Send + 'static,
{
    Box::new(move |w| {
        let r = match w {
            Some(w) => f(w),
            None => Err(EngineError::Store("cannot open a write transaction".into())),
        };
        let ok = r.is_ok();
        let deliver = move |committed: bool| {
            let _ = reply.send(if committed || r.is_err() {
                r
            } else {
                Err(EngineError::Store("commit failed".into()))
            });
        };
        Ran {
            ok,
            deliver: Box::new(deliver),
        }
    })
}

/// Starts the writer thread on `conn` (the store at `path`, set up by
/// [`super::connection::open_writer`]) and its checkpoint thread; returns the queue of writes.
/// Errors: [`EngineError::Store`] when a thread cannot be started.
pub(super) fn spawn(
    conn: Connection,
    path: &Path,
    feed: ChangeFeed,
    answers: Arc<AnswerCache>,
) -> Result<mpsc::Sender<QueuedWrite>, EngineError> {
    let checkpoint = checkpoint::spawn(path)?;
    let (tx, rx) = mpsc::channel::<QueuedWrite>();
    thread::Builder::new()
        .name("taskdeck-store-writer".into())
        .spawn(move || run_writer(conn, rx, feed, answers, checkpoint))
        .map_err(|e| EngineError::Store(e.to_string()))?;
    Ok(tx)
}

/// The writer thread: takes the first queued write and every write queued behind it (up to
/// [`MAX_GROUP`]), runs them in one transaction, commits, then invalidates the cached answers
/// of what the group touched, publishes its changes and answers every write of the group.
fn run_writer(
    conn: Connection,
    rx: mpsc::Receiver<QueuedWrite>,
    feed: ChangeFeed,
    answers: Arc<AnswerCache>,
    checkpoint: mpsc::SyncSender<()>,
) {
    let mut commits: u64 = 0;
    let mut cache = WorkingTasks::new();
    while let Ok(first) = rx.recv() {
        commits += 1;
        if commits.is_multiple_of(CHECKPOINT_EVERY) {
            let _ = checkpoint.try_send(());
        }
        let mut group = vec![first];
        while group.len() < MAX_GROUP {
            match rx.try_recv() {
                Ok(w) => group.push(w),
                Err(_) => break,
            }
        }
        let mut ctx = WriteCtx::new(&conn, &mut cache);
        let mut deliveries = Vec::with_capacity(group.len());
        let began = match conn.execute_batch("BEGIN IMMEDIATE") {
            Ok(()) => true,
            Err(e) => {
                tracing::error!("store: cannot begin a write transaction: {e}");
                false
            }
        };
        // A write that fails must fail before its first change (see `Store::write`), so no
        // savepoint is needed per write. One that breaks this rule poisons the group: it is all
        // rolled back and every write in it is answered with an error, never half-applied.
        let mut poisoned = false;
        for write in group {
            let before = conn.total_changes();
            let Ran { ok, deliver } = write(began.then_some(&mut ctx));
            if ok {
                ctx.finish_write();
            } else {
                if conn.total_changes() != before {
                    tracing::error!("a store write failed after changing rows; group rolled back");
                    poisoned = true;
                }
                ctx.abandon_write();
            }
            deliveries.push(deliver);
        }
        if began
            && !poisoned
            && let Err(e) = ctx.apply_count_deltas()
        {
            tracing::error!("store: cannot update the task counts: {e}");
            poisoned = true;
        }
        let committed = began && !poisoned && conn.execute_batch("COMMIT").is_ok();
        if !committed {
            let _ = conn.execute_batch("ROLLBACK");
            ctx.cache.clear();
            tracing::error!("store commit failed; {} writes rejected", deliveries.len());
        } else {
            // Before anyone can learn of the commit (feed, acknowledgements).
            answers.invalidate(ctx.touched.iter().map(String::as_str));
            for p in ctx.changes.drain(..) {
                if let Some(task) = p.task {
                    feed.publish(Arc::new(Change {
                        event: p.event,
                        task,
                    }));
                }
            }
        }
        for deliver in deliveries {
            deliver(committed);
        }
    }
}
