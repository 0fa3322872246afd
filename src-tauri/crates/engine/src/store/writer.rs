//! The store's single writer thread and its group commit.
//!
//! Every write is queued to one thread, which groups all writes waiting in its queue into a
//! single transaction: a caller's write is acknowledged only after the commit that contains it,
//! so "returned" always means "on disk". A write checks before it changes anything, so a
//! failing write leaves nothing behind and never takes its neighbours down.
//!
//! Writes nobody waits for (a running tool's progress) wait on a queue of their own, which the
//! writer takes with the next group: only the first of them wakes the writer, so a chatty
//! task's reports cost one wake-up of the writer thread per group, not one each.

use std::{
    path::Path,
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, Ordering},
        mpsc,
    },
    thread,
    time::{Duration, Instant},
};

use rusqlite::Connection;
use tokio::sync::{oneshot, watch};

use super::{
    checkpoint::Checkpointer,
    disk_space::{self, SPACE_FOR_WRITES, free_bytes},
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

/// What the writer's channel carries.
pub(super) enum Queued {
    /// A write someone waits for (see [`queued`]).
    Write(QueuedWrite),
    /// The unhurried queue ([`Writer::unhurried`]) was empty and now holds a write.
    Unhurried,
}

/// The sending side of the writer: its channel, its queue of unhurried writes, and what it
/// found of the disk.
pub(super) struct Writer {
    tx: mpsc::Sender<Queued>,
    unhurried: Arc<UnhurriedQueue>,
    disk_full: watch::Receiver<Option<i64>>,
}

/// Writes nobody waits for, in the order they were queued, until the writer takes them all.
#[derive(Default)]
struct UnhurriedQueue {
    writes: Mutex<Vec<QueuedWrite>>,
    /// Set when the writer thread ends (returned or panicked), under `writes`' lock: nothing
    /// takes the queue then, so nothing more is put on it.
    stopped: AtomicBool,
    /// How many times a write woke the writer through this queue (its tests count them).
    #[cfg(test)]
    wakes: std::sync::atomic::AtomicUsize,
}

impl UnhurriedQueue {
    /// The queued writes, locked (a panic while they were locked left them intact: a push or a
    /// take is one step).
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<QueuedWrite>> {
        self.writes.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Writer {
    /// Queues a write someone waits for. Errors: [`EngineError::Store`] when the writer stopped.
    pub(super) fn send(&self, write: QueuedWrite) -> Result<(), EngineError> {
        self.tx.send(Queued::Write(write)).map_err(|_| stopped())
    }

    /// Queues a write nobody waits for (see [`queued_unhurried`]); only one that finds the
    /// queue empty tells the writer. Errors: [`EngineError::Store`] when the writer stopped.
    pub(super) fn send_unhurried(&self, write: QueuedWrite) -> Result<(), EngineError> {
        let first = {
            let mut writes = self.unhurried.lock();
            // Checked under the lock the writer's end takes to set it: no write slips in after.
            if self.unhurried.stopped.load(Ordering::Relaxed) {
                return Err(stopped());
            }
            writes.push(write);
            writes.len() == 1
        };
        if first {
            #[cfg(test)]
            self.unhurried.wakes.fetch_add(1, Ordering::Relaxed);
            self.tx.send(Queued::Unhurried).map_err(|_| stopped())?;
        }
        Ok(())
    }

    /// Since when (ms since the Unix epoch) writes are refused because the store's disk is
    /// full, or `None`; see [`DiskWatch`].
    pub(super) fn disk_full(&self) -> watch::Receiver<Option<i64>> {
        self.disk_full.clone()
    }

    /// How many unhurried writes woke the writer so far.
    #[cfg(test)]
    pub(super) fn unhurried_wakes(&self) -> usize {
        self.unhurried.wakes.load(Ordering::Relaxed)
    }
}

/// Whether the store's disk is full, as the writer found it: set (with the time) when a group
/// fails with [`EngineError::DiskFull`] or the store is opened with less than
/// [`SPACE_FOR_WRITES`] free, cleared once the file system has
/// [`SPACE_FOR_WRITES`] free again (checked every [`DISK_RECHECK`] while set, and after each
/// commit). A commit that fits in room the WAL already has does not clear it: the next write
/// that needs a new block would fail. Watchers (the UI's event stream) learn of both at once, so
/// someone who only watches sees why agents' writes are refused, and when they resume.
///
/// A write bigger than the free space fails with the space used up by its partial log frames
/// (a rollback does not shrink the WAL file), so smaller writes that fit in those blocks do not
/// clear it either: it stays set until space comes from elsewhere. On a file system that
/// reports no free space at all ([`free_bytes`] `None`), a commit is the only sign of room, so
/// any commit clears it there.
///
/// A full disk is logged at `ERROR` when a group is refused for it, at most once a
/// [`FULL_LOG_EVERY`] (at `debug` in between): the watch tells watchers, and each refused
/// write's caller gets the error.
struct DiskWatch {
    /// The directory holding the store: the file system whose space is checked.
    dir: std::path::PathBuf,
    state: watch::Sender<Option<i64>>,
    /// When a full disk was last logged at `ERROR` (or found at open, which the opener says).
    logged: std::cell::Cell<Option<Instant>>,
}

/// How often a full disk is logged at `ERROR` at most (see [`DiskWatch`]).
const FULL_LOG_EVERY: Duration = Duration::from_secs(60);

/// How often the writer checks the free space while the disk is full.
const DISK_RECHECK: Duration = Duration::from_secs(2);

impl DiskWatch {
    fn is_full(&self) -> bool {
        self.state.borrow().is_some()
    }

    /// A group failed with `error`: a full disk sets the state (once).
    fn failed(&self, error: &EngineError) {
        if error.is_disk_full() {
            self.state.send_if_modified(|s| {
                let was = s.is_some();
                s.get_or_insert_with(crate::clock::now_ms);
                !was
            });
        }
    }

    /// Whether a group refused for `error` is logged at `ERROR` (then noted as logged): a full
    /// disk at most once a [`FULL_LOG_EVERY`], any other error always.
    fn log_as_error(&self, error: &EngineError) -> bool {
        if !error.is_disk_full() {
            return true;
        }
        let due = self
            .logged
            .get()
            .is_none_or(|at| at.elapsed() >= FULL_LOG_EVERY);
        if due {
            self.logged.set(Some(Instant::now()));
        }
        due
    }

    /// Clears the state when the file system has room again. `committed`: a group just
    /// committed, which is all a file system that reports no blocks ([`free_bytes`] `None`)
    /// can tell of its room.
    fn recheck(&self, committed: bool) {
        if !self.is_full() {
            return;
        }
        let room = match free_bytes(&self.dir) {
            Some(b) => b >= SPACE_FOR_WRITES,
            None => committed,
        };
        if room {
            tracing::info!("store: the disk has room again; writes resume");
            self.state.send_replace(None);
        }
    }
}

/// The error of a write sent to a writer that stopped.
fn stopped() -> EngineError {
    EngineError::Store("store writer stopped".into())
}

/// How long a group of writes nobody waits for ([`queued_unhurried`]) waits for a write that
/// someone does, to be committed with it: progress reports of a lone task are stored (and
/// shown) at most this much later, in one commit per 50 ms however many came.
const UNHURRIED_WAIT: Duration = Duration::from_millis(50);

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

/// Writes someone waits for in one group at most. The unhurried writes queued by then are all
/// taken with them: they are as many as producers queued while the last group ran.
const MAX_GROUP: usize = 512;

/// Wraps `f` as a queued write whose result (or, when the group did not commit, the error that
/// stopped it, e.g. [`EngineError::DiskFull`]) is sent on `reply`.
pub(super) fn queued<R, F>(f: F, reply: oneshot::Sender<Result<R, EngineError>>) -> QueuedWrite
where
    R: Send + 'static,
    F: FnOnce(&mut WriteCtx<'_>) -> Result<R, EngineError> + Send + 'static,
{
    replying(f, reply)
}

/// Wraps `f` as a queued write that nobody waits for, for [`Writer::send_unhurried`]: the
/// writer may hold it back for up to [`UNHURRIED_WAIT`] so that it shares a commit with other
/// writes. A failure (its own or its group's) is logged as a warning.
pub(super) fn queued_unhurried<F>(f: F) -> QueuedWrite
where
    F: FnOnce(&mut WriteCtx<'_>) -> Result<(), EngineError> + Send + 'static,
{
    Box::new(move |w| {
        let outcome = match w {
            Ok(w) => f(w),
            Err(e) => Err(e.clone()),
        };
        let own = outcome.as_ref().err().cloned();
        let deliver = move |failed: Option<&EngineError>| {
            if let Some(e) = own.as_ref().or(failed) {
                tracing::warn!("store: an unacknowledged write was not stored: {e}");
            }
        };
        Ran {
            outcome,
            deliver: Box::new(deliver),
        }
    })
}

/// `f` as a [`QueuedWrite`] that sends its result on `reply` (see [`queued`]).
fn replying<R, F>(f: F, reply: oneshot::Sender<Result<R, EngineError>>) -> QueuedWrite
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
/// [`super::connection::open_writer`]) and its checkpoint thread; returns its sending side.
/// Errors: [`EngineError::Store`] when a thread cannot be started.
pub(super) fn spawn(
    conn: Connection,
    path: &Path,
    feed: ChangeFeed,
    answers: Arc<AnswerCache>,
) -> Result<Writer, EngineError> {
    let checkpoint = Checkpointer::spawn(path)?;
    let dir = path
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| ".".into());
    // A store opened on a disk already full says so at once, not only once a write is refused
    // (the same test as `taskdeck doctor`'s disk check).
    let full_at_start = disk_space::full(&dir).map(|_| crate::clock::now_ms());
    let (disk_state, disk_full) = watch::channel(full_at_start);
    let disk = DiskWatch {
        dir,
        state: disk_state,
        logged: std::cell::Cell::new(full_at_start.map(|_| Instant::now())),
    };
    let (tx, rx) = mpsc::channel::<Queued>();
    let unhurried = Arc::new(UnhurriedQueue::default());
    let queue = WriterQueue {
        rx,
        unhurried: unhurried.clone(),
    };
    // Linux shows a thread's first 15 bytes of name (comm): each of the engine's threads is
    // named within them, so that top, perf and /proc tell them apart.
    thread::Builder::new()
        .name("taskdeck-writer".into())
        .spawn(move || run_writer(conn, queue, feed, answers, checkpoint, disk))
        .map_err(|e| EngineError::Store(e.to_string()))?;
    Ok(Writer {
        tx,
        unhurried,
        disk_full,
    })
}

/// The writer thread's side of its queues. Dropped when the thread ends, however it ends:
/// unhurried writes are refused from then on.
struct WriterQueue {
    rx: mpsc::Receiver<Queued>,
    unhurried: Arc<UnhurriedQueue>,
}

impl Drop for WriterQueue {
    fn drop(&mut self) {
        // Taken under the lock that pushes check `stopped` under; dropped and logged after it.
        let left = {
            let mut writes = self.unhurried.lock();
            self.unhurried.stopped.store(true, Ordering::Relaxed);
            std::mem::take(&mut *writes)
        };
        if !left.is_empty() {
            tracing::warn!(
                "store: the writer stopped; {} unacknowledged writes were not stored",
                left.len()
            );
        }
    }
}

/// The group that starts with `first` (`None`: the channel closed): the unhurried writes
/// queued so far, then `first` and every write queued behind it, up to [`MAX_GROUP`] of
/// those. When `first` is only the news of an unhurried write, it first waits for a write
/// someone waits for, up to [`UNHURRIED_WAIT`]; unhurried writes queued meanwhile do not wake
/// it. The unhurried writes are taken last, so each one queued before a write of the group was
/// sent is in the group, ahead of it (a task's progress before its completion); one queued
/// after may also be, equally ahead, as the two were concurrent. Empty when there is nothing.
fn gather(queue: &WriterQueue, first: Option<Queued>) -> Vec<QueuedWrite> {
    let mut waited_for = Vec::new();
    match first {
        Some(Queued::Write(w)) => waited_for.push(w),
        Some(Queued::Unhurried) => {
            let until = Instant::now() + UNHURRIED_WAIT;
            loop {
                match queue
                    .rx
                    .recv_timeout(until.saturating_duration_since(Instant::now()))
                {
                    Ok(Queued::Write(w)) => {
                        waited_for.push(w);
                        break;
                    }
                    // Sent before the queue was taken by an earlier group and refilled.
                    Ok(Queued::Unhurried) => {}
                    Err(_) => break,
                }
            }
        }
        None => {}
    }
    if !waited_for.is_empty() {
        while waited_for.len() < MAX_GROUP {
            match queue.rx.try_recv() {
                Ok(Queued::Write(w)) => waited_for.push(w),
                Ok(Queued::Unhurried) => {}
                Err(_) => break,
            }
        }
    }
    let mut group = std::mem::take(&mut *queue.unhurried.lock());
    group.append(&mut waited_for);
    group
}

/// The writer thread: takes a group of writes ([`gather`]), runs them in one transaction,
/// commits, then invalidates the cached answers of what the group touched, publishes its
/// changes and answers every write of the group. Ends when the channel closes, after
/// committing what was still queued.
fn run_writer(
    conn: Connection,
    queue: WriterQueue,
    feed: ChangeFeed,
    answers: Arc<AnswerCache>,
    checkpoint: Checkpointer,
    disk: DiskWatch,
) {
    Checkpointer::watch(&conn);
    let mut commits: u64 = 0;
    let mut cache = WorkingTasks::new();
    loop {
        // The channel closes when the store is dropped: what is still queued is committed.
        // While the disk is full, the wait ends now and then to see whether it has room again.
        let first = if disk.is_full() {
            match queue.rx.recv_timeout(DISK_RECHECK) {
                Ok(q) => Some(q),
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    disk.recheck(false);
                    continue;
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => None,
            }
        } else {
            queue.rx.recv().ok()
        };
        let closed = first.is_none();
        let group = gather(&queue, first);
        if group.is_empty() {
            if closed {
                break;
            }
            continue;
        }
        commits += 1;
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
                            // A full disk is said with the group's refusal below.
                            if e.is_disk_full() {
                                tracing::debug!("a store write failed ({e}); group rolled back");
                            } else {
                                tracing::error!("a store write failed ({e}); group rolled back");
                            }
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
        match &failed {
            Some(e) => disk.failed(e),
            None => disk.recheck(true),
        }
        if let Some(e) = &failed {
            if !conn.is_autocommit() {
                let _ = conn.execute_batch("ROLLBACK");
            }
            ctx.cache.clear();
            if !disk.log_as_error(e) {
                tracing::debug!(
                    "store commit failed ({e}); {} writes rejected",
                    deliveries.len()
                );
            } else {
                tracing::error!(
                    "store commit failed ({e}); {} writes rejected",
                    deliveries.len()
                );
            }
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
        if closed {
            break;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file system whose free space cannot be read (here: a directory that does not exist,
    /// as `free_bytes` says of one that reports no blocks) clears the watch on a commit, the
    /// only sign of room it gives, and not on the timed recheck.
    #[test]
    fn a_watch_without_a_free_space_figure_clears_on_a_commit() {
        let (state, rx) = watch::channel(Some(1));
        let disk = DiskWatch {
            dir: "/nonexistent/taskdeck-store-dir".into(),
            state,
            logged: std::cell::Cell::new(None),
        };
        assert_eq!(free_bytes(&disk.dir), None);
        disk.recheck(false);
        assert_eq!(*rx.borrow(), Some(1));
        disk.recheck(true);
        assert_eq!(*rx.borrow(), None);
    }

    /// A full disk is logged at ERROR once, not for each group it refuses; other errors are.
    #[test]
    fn a_full_disk_is_logged_once_a_while() {
        let (state, _rx) = watch::channel(None);
        let disk = DiskWatch {
            dir: ".".into(),
            state,
            logged: std::cell::Cell::new(None),
        };
        let full = EngineError::DiskFull("database or disk is full".into());
        assert!(disk.log_as_error(&full));
        assert!(!disk.log_as_error(&full));
        assert!(disk.log_as_error(&EngineError::Store("disk I/O error".into())));
        assert!(!disk.log_as_error(&full));
        disk.logged
            .set(Instant::now().checked_sub(FULL_LOG_EVERY + Duration::from_secs(1)));
        assert!(disk.log_as_error(&full));
    }
}
