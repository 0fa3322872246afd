//! WAL checkpoints: a thread of low priority copies the write-ahead log back into the database
//! file on its own connection, so that the writer never stalls on that copying; the writer
//! itself finishes what resets the log, between two groups (see [`Checkpointer::finish`]).
//!
//! SQLite restarts the WAL from its first frame when a write transaction begins with every
//! frame already copied and no reader still using one of them. Under constant writes the
//! checkpoint thread never sees that moment: new frames arrive while it copies. So once the
//! WAL is past [`WAL_RESET_FRAMES`], the thread copies until it is nearly caught up and asks the
//! writer to copy the rest (under [`WRITER_LEFT_FRAMES`], about a millisecond) on its own
//! connection after its next commit: nothing is written meanwhile, the next group then restarts
//! the log. When the thread falls behind anyway (a machine busy with other work leaves a
//! low-priority thread little CPU), the writer, which learns the WAL's size at every commit,
//! copies on its own once the WAL is past twice [`WAL_RESET_FRAMES`]. Readers whose
//! transactions follow each other without a gap keep old frames in use, so no reset can happen
//! without waiting for them: past [`HARD_LIMIT_FRAMES`] the writer does wait (up to 1 s).

use std::{
    cell::Cell,
    path::Path,
    sync::{
        Arc,
        atomic::{AtomicU8, Ordering},
        mpsc,
    },
    thread,
    time::Instant,
};

use rusqlite::{Connection, hooks::Wal};

use super::connection::{open_conn, wait_for_lock};
use crate::EngineError;

/// WAL size (in 4 KiB frames, so about 32 MiB) past which the log is reset. Half the file's
/// size limit ([`super::connection::WAL_SIZE_LIMIT`]): a reset of a file past that limit also
/// truncates it, and on a filesystem mounted with `discard` the writer then waited up to 25 ms
/// in the truncation's synchronous discard; the next commits also paid to allocate the blocks
/// again.
pub(super) const WAL_RESET_FRAMES: i64 = 8_192;

/// Frames the writer's commits add to the WAL between two requests for a round of passes (4
/// MiB). Each pass ends with an fsync of what it copied, so frequent small passes keep each
/// fsync short (passes of ~3,500 frames under a creation flood had fsyncs of 10-15 ms); but
/// a page written by many commits (the end of the timeline, a busy task's row) is copied once
/// per pass, and each pass ends with an fsync. Counting frames, not commits, keeps a fleet's
/// small commits (3-4 frames each) from paying for a pass and its fsync every few dozen.
const PASS_EVERY_FRAMES: i64 = 1_024;

/// Frames the writer may be left to copy (256 KiB): it waits for their fsyncs, which took 1-10
/// ms with 256 frames left, under a creation flood.
const WRITER_LEFT_FRAMES: i64 = 64;

/// PASSIVE passes made in a row at most: each copies what the writer added during the one
/// before, so a few passes get within [`WRITER_LEFT_FRAMES`] unless the writer outruns them.
const MAX_PASSES: usize = 16;

/// Nice level of the checkpoint thread. Its passes copy thousands of frames (10-15 ms of CPU
/// each under a creation flood); at normal priority, on a busy core, they took that time from
/// the writer and the request handlers. At 19 (the indexer's) it could fall behind a saturated
/// core: copying a flood of 25k tasks/s needs about 3% of a core; nice 10 gets about 10%.
const NICE: i32 = 10;

/// What the writer is asked to run after its next commit ([`Checkpointer::finish`]).
const NOTHING: u8 = 0;
/// A PASSIVE checkpoint on the writer's connection: it copies what the thread left, with no
/// new frame arriving meanwhile, so the next write transaction restarts the log unless a
/// reader still uses an old frame.
const PASSIVE: u8 = 1;
/// A RESTART checkpoint: also waits for the readers of old frames, for at most
/// [`RESTART_WAIT_TRIES`] tries. Asked for only when the WAL grew past twice
/// [`WAL_RESET_FRAMES`] (PASSIVE resets kept failing: a reader always held an old frame).
const RESTART: u8 = 2;

/// How long the writer's RESTART waits for readers (retrying every 200 µs) before it gives up
/// until the next round: the reader it waits for (a request's read, the search indexer's) may
/// be off a busy CPU for milliseconds, while every write waits.
const RESTART_WAIT_TRIES: i32 = 25;

/// WAL size (frames, 128 MiB) past which the writer's RESTART waits for the readers of old
/// frames for up to [`HARD_RESTART_WAIT_TRIES`]: readers that follow each other without a gap
/// (full-text searches in a loop, each a read transaction of 0.1-2 s) never leave a moment
/// when the log can be reused, and the WAL grew by 38 MiB/s, to 2.4 GB in a minute, with
/// searches slowing down as it grew. Past this size, writes wait for the current readers
/// instead (new readers do not hold a RESTART up), at most once per
/// [`HARD_RESTART_SPACING`].
const HARD_LIMIT_FRAMES: i64 = 4 * WAL_RESET_FRAMES;

/// Tries (200 µs apart, so 1 s) of a RESTART past [`HARD_LIMIT_FRAMES`]: longer than a slow
/// search (0.1-0.7 s on a WAL that large), shorter than a backup of a large store (which then
/// keeps the WAL until it ends).
const HARD_RESTART_WAIT_TRIES: i32 = 5_000;

/// Time between two RESTARTs past [`HARD_LIMIT_FRAMES`], so that a reader holding old frames
/// for long (a backup) stalls writes for at most 1 s in 2 s.
const HARD_RESTART_SPACING: std::time::Duration = std::time::Duration::from_secs(1);

/// Commits between two of the writer's own checkpoints while the WAL is past twice
/// [`WAL_RESET_FRAMES`] and the thread has not asked: often enough to bound the WAL, rarely
/// enough that a long reader holding old frames (during which nothing can be copied or reset)
/// costs the writer little.
const OWN_CHECKPOINT_EVERY: u64 = 50;

thread_local! {
    /// Frames in the WAL after the last commit of this thread's connection, as SQLite's WAL
    /// hook reports them (set on the writer thread, whose connection [`Checkpointer::watch`]
    /// registered the hook on).
    static WAL_FRAMES: Cell<i64> = const { Cell::new(0) };
}

/// SQLite's WAL hook: runs after each commit with the frames now in the WAL.
fn note_wal_frames(_: &Wal, frames: std::ffi::c_int) -> rusqlite::Result<()> {
    WAL_FRAMES.set(i64::from(frames));
    Ok(())
}

/// The writer's handle on the checkpoint thread.
pub(super) struct Checkpointer {
    /// One `()` asks for one round of passes; a request made while one is pending is dropped.
    requests: mpsc::SyncSender<()>,
    /// What the thread asks the writer to finish: [`NOTHING`], [`PASSIVE`] or [`RESTART`].
    wanted: Arc<AtomicU8>,
    /// When the writer last ran a RESTART past [`HARD_LIMIT_FRAMES`] (the writer's own).
    hard_tried: Cell<Option<Instant>>,
    /// The WAL's size (frames) when the writer last asked for a round of passes.
    requested_at: Cell<i64>,
    /// The WAL's size (frames) after the previous commit: a smaller one now means the log
    /// restarted in between.
    previous: Cell<i64>,
}

impl Checkpointer {
    /// Starts the checkpoint thread on the store at `path`. Each pass is logged at debug level
    /// with its duration (`RUST_LOG=taskdeck_engine::store=debug`). Errors:
    /// [`EngineError::Store`] when the connection or the thread cannot be made.
    pub(super) fn spawn(path: &Path) -> Result<Checkpointer, EngineError> {
        let conn = open_conn(path)?;
        let (requests, rx) = mpsc::sync_channel::<()>(1);
        let wanted = Arc::new(AtomicU8::new(NOTHING));
        let asks = wanted.clone();
        thread::Builder::new()
            .name("taskdeck-ckpt".into())
            .spawn(move || {
                crate::priority::lower_this_thread(NICE, "store checkpoint");
                while rx.recv().is_ok() {
                    // The writer has not taken the last ask yet: a pass now would hold the
                    // checkpoint lock when it does (its checkpoint would then find it busy).
                    if asks.load(Ordering::Acquire) != NOTHING {
                        continue;
                    }
                    match passive_until_caught_up(&conn) {
                        Ok(frames) if frames > 2 * WAL_RESET_FRAMES => {
                            asks.store(RESTART, Ordering::Release)
                        }
                        Ok(frames) if frames > WAL_RESET_FRAMES => {
                            asks.store(PASSIVE, Ordering::Release)
                        }
                        Ok(_) => {}
                        Err(e) => tracing::warn!("checkpoint: {e}"),
                    }
                }
            })
            .map_err(|e| EngineError::Store(e.to_string()))?;
        Ok(Checkpointer {
            requests,
            wanted,
            hard_tried: Cell::new(None),
            requested_at: Cell::new(0),
            previous: Cell::new(0),
        })
    }

    /// Asks for a round of passes once the writer's commits have added [`PASS_EVERY_FRAMES`]
    /// to the WAL since the last ask (counting from 0 again after the log restarted), as the
    /// WAL hook reports its size; never blocks (an ask made while one is pending is dropped).
    fn request_when_due(&self, frames: i64) {
        if frames < self.previous.replace(frames) {
            self.requested_at.set(0);
        }
        if frames - self.requested_at.get() >= PASS_EVERY_FRAMES {
            self.requested_at.set(frames);
            let _ = self.requests.try_send(());
        }
    }

    /// Registers, on the writer's connection `conn` and from the writer's thread, the hook
    /// through which [`Self::finish`] learns the WAL's size (after `wal_autocheckpoint`, which
    /// would replace it).
    pub(super) fn watch(conn: &Connection) {
        conn.wal_hook(Some(note_wal_frames));
    }

    /// Run by the writer between two groups, on its own connection `conn` (no transaction
    /// open), `commits` being its count of commits so far: asks the thread for a round of
    /// passes when one is due (see [`PASS_EVERY_FRAMES`]), then runs the checkpoint the thread
    /// asked for, if any; else, every [`OWN_CHECKPOINT_EVERY`] commits while the WAL is past twice
    /// [`WAL_RESET_FRAMES`] (the thread is behind), a PASSIVE one of its own. Past
    /// [`HARD_LIMIT_FRAMES`] either is a RESTART that waits up to 1 s for readers. Logged at debug
    /// level with its duration; a failure is logged as a warning and leaves the WAL to the next
    /// round.
    pub(super) fn finish(&self, conn: &Connection, commits: u64) {
        let frames = WAL_FRAMES.get();
        self.request_when_due(frames);
        let behind = frames > 2 * WAL_RESET_FRAMES && commits.is_multiple_of(OWN_CHECKPOINT_EVERY);
        let hard = frames > HARD_LIMIT_FRAMES
            && self
                .hard_tried
                .get()
                .is_none_or(|t| t.elapsed() >= HARD_RESTART_SPACING);
        let restart = match self.wanted.load(Ordering::Acquire) {
            PASSIVE => hard,
            RESTART => true,
            _ if behind => hard,
            _ => return,
        };
        let sql = if restart {
            "PRAGMA wal_checkpoint(RESTART)"
        } else {
            "PRAGMA wal_checkpoint(PASSIVE)"
        };
        let started = Instant::now();
        if hard {
            let _ = conn.busy_handler(Some(wait_tries::<HARD_RESTART_WAIT_TRIES>));
        } else if restart {
            let _ = conn.busy_handler(Some(wait_tries::<RESTART_WAIT_TRIES>));
        }
        let run = || {
            conn.query_row(sql, [], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, i64>(1)?,
                    r.get::<_, i64>(2)?,
                ))
            })
        };
        let mut done = run();
        // Past the hard limit, a checkpoint thread in the middle of a pass (-1 frames: this
        // one could not start) is waited for, up to 20 ms, rather than left to win again.
        for _ in 0..20 {
            if !hard || !done.as_ref().is_ok_and(|(_, frames, _)| *frames < 0) {
                break;
            }
            thread::sleep(std::time::Duration::from_millis(1));
            done = run();
        }
        if restart {
            let _ = conn.busy_handler(Some(wait_for_lock));
        }
        // One that found the checkpoint thread in a pass (-1 frames: it did not start) did not
        // wait, and is tried again at the next chance.
        if hard && done.as_ref().is_ok_and(|(_, frames, _)| *frames >= 0) {
            self.hard_tried.set(Some(Instant::now()));
        }
        // Taken: the thread's next round may start.
        self.wanted.store(NOTHING, Ordering::Release);
        match done {
            Ok((busy, frames, copied)) => tracing::debug!(
                "store: writer's {sql} of {frames} frames, {copied} copied, busy {busy}, took {} µs",
                started.elapsed().as_micros()
            ),
            Err(e) => tracing::warn!("checkpoint (writer's {sql}): {e}"),
        }
    }
}

/// The writer's busy handler during its RESTART: retries every 200 µs, `TRIES` times
/// ([`RESTART_WAIT_TRIES`], or [`HARD_RESTART_WAIT_TRIES`] past [`HARD_LIMIT_FRAMES`]).
fn wait_tries<const TRIES: i32>(tries: i32) -> bool {
    if tries >= TRIES {
        return false;
    }
    thread::sleep(std::time::Duration::from_micros(200));
    true
}

/// Runs PASSIVE checkpoints (which block no one) while the WAL is past [`WAL_RESET_FRAMES`]
/// and the last pass still copied [`WRITER_LEFT_FRAMES`] or more frames (what the writer added
/// during the pass before), at most [`MAX_PASSES`]; one pass when the WAL is smaller. Returns
/// the WAL's size in frames at the last pass. Errors: SQLite's.
fn passive_until_caught_up(conn: &Connection) -> rusqlite::Result<i64> {
    // Frames already copied before this pass, once known.
    let mut copied_before: Option<i64> = None;
    let mut pass = 0;
    loop {
        pass += 1;
        let started = Instant::now();
        let (frames, copied) = conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |r| {
            Ok((r.get::<_, i64>(1)?, r.get::<_, i64>(2)?))
        })?;
        // A WAL the writer restarted since the last pass starts again from frame 0.
        let this_pass = match copied_before {
            Some(before) if before <= copied => Some(copied - before),
            _ => None,
        };
        tracing::debug!(
            "store: checkpoint (passive, pass {pass}) of {frames} frames, {copied} copied \
             ({this_pass:?} by this pass), took {} µs",
            started.elapsed().as_micros()
        );
        let caught_up = this_pass.is_some_and(|n| n < WRITER_LEFT_FRAMES);
        if frames <= WAL_RESET_FRAMES || caught_up || pass == MAX_PASSES {
            return Ok(frames);
        }
        copied_before = Some(copied);
    }
}
