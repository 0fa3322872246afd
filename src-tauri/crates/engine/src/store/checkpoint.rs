//! The WAL checkpoint thread: copies the write-ahead log back into the database file on its
//! own connection, so that the writer never stalls on the fsyncs a checkpoint makes.

use std::{path::Path, sync::mpsc, thread, time::Instant};

use super::connection::open_conn;
use crate::EngineError;

/// WAL size (in 4 KiB frames, so about 64 MiB) past which a checkpoint resets the WAL.
pub(super) const WAL_RESET_FRAMES: i64 = 16_384;

/// Starts the checkpoint thread on the store at `path`. Each `()` sent on the returned channel
/// asks for one checkpoint; a request made while one is pending is dropped (`try_send`). Each
/// checkpoint is logged at debug level with its duration (`RUST_LOG=taskdeck_engine::store=debug`).
/// Errors: [`EngineError::Store`] when the connection or the thread cannot be made.
pub(super) fn spawn(path: &Path) -> Result<mpsc::SyncSender<()>, EngineError> {
    let checkpointer = open_conn(path)?;
    let (tx, rx) = mpsc::sync_channel::<()>(1);
    thread::Builder::new()
        .name("taskdeck-store-checkpoint".into())
        .spawn(move || {
            while rx.recv().is_ok() {
                // PASSIVE never blocks anyone, but under constant reads and writes it cannot
                // reset the WAL, which then grows without bound; past WAL_RESET_FRAMES a
                // RESTART checkpoint waits for the writer and the readers and resets it, so
                // the next commits write the file from its start again. New writes wait
                // while it runs (~15 ms here, about twice a second under a creation flood).
                // TRUNCATE (also shrinking the file to 0 bytes, so that it grew again) made
                // those waits twice as long (BENCHMARKS.md); `journal_size_limit` caps the
                // file instead.
                let started = Instant::now();
                let passive = checkpointer
                    .query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |r| r.get::<_, i64>(1));
                tracing::debug!(
                    "store: checkpoint (passive) of {:?} frames took {} µs",
                    passive.as_ref().ok(),
                    started.elapsed().as_micros()
                );
                match passive {
                    Ok(frames) if frames > WAL_RESET_FRAMES => {
                        let started = Instant::now();
                        let restart = checkpointer.query_row(
                            "PRAGMA wal_checkpoint(RESTART)",
                            [],
                            |_| Ok(()),
                        );
                        tracing::debug!(
                            "store: checkpoint (restart) took {} µs",
                            started.elapsed().as_micros()
                        );
                        if let Err(e) = restart {
                            tracing::warn!("checkpoint (restart): {e}");
                        }
                    }
                    Ok(_) => {}
                    Err(e) => tracing::warn!("checkpoint: {e}"),
                }
            }
        })
        .map_err(|e| EngineError::Store(e.to_string()))?;
    Ok(tx)
}
