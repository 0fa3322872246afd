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
    time::Instant,
};

use rusqlite::Connection;
use tokio::sync::oneshot;

use super::{
    checkpoint::Checkpointer,
    write_context::{WorkingTasks, WriteCtx},
};
use crate::{
    EngineError,
    answer_cache::AnswerCache,
    feed::{Change, ChangeFeed},
};

/// A queued write: runs inside the group transaction (`Err` when no transaction could be
/// opened, or the group's transaction was lost to an earlier write's failure: it must not touch
/// the database and fails with that error) and says whether it succeeded, with the closure that
/// delivers its result once the commit is known.
pub(super) type QueuedWrite =
    Box<dyn FnOnce(Result<&mut WriteCtx<'_>, &EngineError>) -> Ran + Send>;

/// What a [`QueuedWrite`] returns to the writer.
pub(super) struct Ran {
    /// The write's own outcome: `Ok` keeps its changes in the group.
    outcome: Result<(), EngineError>,
    /// Sends the write's result to its caller, given the group's fate: `None` = committed,
    /// `Some(e)` = rolled back because of `e`.
    deliver: Deliver,
}

/// Sends a write's result to its caller, given the group's fate (see [`Ran::deliver`]).
type Deliver = Box<dyn FnOnce(Option<&EngineError>) + Send>;

/// Writes in one group at most.
const MAX_GROUP: usize = 512;

/// Wraps `f` as a queued write whose result (or, when the group did not commit, the error that
/// stopped it, e.g. [`EngineError::DiskFull`]) is sent on `reply`.
pub(super) fn queued<R, F>(f: F, reply: oneshot::Sender<Result<R, EngineError>>) -> QueuedWrite
where
    R: Send + 'static,
    F: FnOnce(&mut WriteCtx<'_>) -> Result<R, EngineError> + Send + 'static,
{
    Box::new(move |w| {
        let r = match w {
            Ok(w) => f(w),
            Err(e) => Err(e.clone()),
        };
        let outcome = r.as_ref().map(|_| ()).map_err(EngineError::clone);
        let deliver = move |failed: Option<&EngineError>| {
            let _ = reply.send(match failed {
                Some(e) if r.is_ok() => Err(e.clone()),
                _ => r,
            });
        };
        Ran {
            outcome,
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
    let checkpoint = Checkpointer::spawn(path)?;
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
    checkpoint: Checkpointer,
) {
    Checkpointer::watch(&conn);
    let mut commits: u64 = 0;
    let mut cache = WorkingTasks::new();
    while let Ok(first) = rx.recv() {
        commits += 1;
        let mut group = vec![first];
        while group.len() < MAX_GROUP {
            match rx.try_recv() {
                Ok(w) => group.push(w),
                Err(_) => break,
            }
        }
        let started = Instant::now();
        let writes = group.len();
        let mut ctx = WriteCtx::new(&conn, &mut cache);
        let mut deliveries = Vec::with_capacity(group.len());
        // Why the group cannot commit, once that is known; the writes after it are not run.
        let mut failed: Option<EngineError> = conn
            .execute_batch("BEGIN IMMEDIATE")
            .map_err(|e| {
                tracing::error!("store: cannot begin a write transaction: {e}");
                EngineError::from(e)
            })
            .err();
        // A write that fails must fail before its first change (see `Store::write`), so no
        // savepoint is needed per write. One that breaks this rule poisons the group: it is all
        // rolled back and every write in it is answered with an error, never half-applied.
        for write in group {
            let before = conn.total_changes();
            let Ran { outcome, deliver } = match &failed {
                None => write(Ok(&mut ctx)),
                Some(e) => write(Err(e)),
            };
            if failed.is_none() {
                match outcome {
                    Ok(()) => ctx.finish_write(),
                    Err(e) => {
                        ctx.abandon_write();
                        // SQLite may roll the whole transaction back by itself after some
                        // errors (SQLITE_FULL, SQLITE_IOERR, SQLITE_NOMEM): the writes after it
                        // would then run outside any transaction, each committing alone.
                        let lost = conn.is_autocommit();
                        if lost || conn.total_changes() != before {
                            tracing::error!("a store write failed ({e}); group rolled back");
                            failed = Some(if e.is_disk_full() {
                                e
                            } else {
                                EngineError::Store(format!("a write of its group failed: {e}"))
                            });
                        }
                    }
                }
            }
            deliveries.push(deliver);
        }
        if failed.is_none()
            && let Err(e) = ctx.apply_count_deltas()
        {
            tracing::error!("store: cannot update the task counts: {e}");
            failed = Some(e);
        }
        let committing = Instant::now();
        if failed.is_none()
            && let Err(e) = conn.execute_batch("COMMIT")
        {
            failed = Some(e.into());
        }
        // Lined up with a client's gaps, tells a slow group or commit from a stall elsewhere.
        tracing::debug!(
            "store: group of {writes} writes took {} µs, its commit {} µs",
            started.elapsed().as_micros(),
            committing.elapsed().as_micros()
        );
        if let Some(e) = &failed {
            if !conn.is_autocommit() {
                let _ = conn.execute_batch("ROLLBACK");
            }
            ctx.cache.clear();
            tracing::error!(
                "store commit failed ({e}); {} writes rejected",
                deliveries.len()
            );
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
            deliver(failed.as_ref());
        }
        // After the answers: the writes of this group do not wait for it.
        checkpoint.finish(&conn, commits);
    }
}
