//! `GET /v1/tasks/{taskId}/log`: reads the output log a command task writes
//! (`<data dir>/logs/<taskId>.log`, see `tools::output::OutputLog`), in byte ranges, so the UI
//! can tail it live: it reads from `nextOffset` again whenever the task changes (every new
//! output line changes its statusMessage, which the event stream pushes). Same visibility as the
//! task: another principal's task is a 404 like an unknown one.
//!
//! A command task's log file appears when its command starts. Before that (while it waits for
//! its approval, or in the moment between the approval and the start) and when the command never
//! ran (declined, cancelled first, could not start) the log is empty, not missing: the answer is
//! an empty range with `exists: false`, so a reader woken by every change of the task never meets
//! an error in the normal course of a command. An external job's log holds the output its
//! runner reports (`taskdeck run` does), and a gateway call's the log messages of its upstream
//! (`gateway::call_log`); each is empty, `exists: false`, until the first. Only tasks of other
//! tools, which write no log, are a 404.

use std::{
    io::{Read, Seek, SeekFrom},
    path::PathBuf,
};

use axum::{Extension, Json, Router, extract::State};
use serde::Deserialize;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::{
    api_error::{ApiError, ApiPath, ApiQuery, ProblemDocument},
    api_types::LogChunk,
};
use crate::gateway::catalog::SEPARATOR;
use crate::tools::{
    external::EXTERNAL,
    output::{first_data, kept_from, log_path},
    run_command,
};
use taskdeck_engine::{Engine, Principal};

/// Largest chunk one request returns, in bytes.
pub const MAX_CHUNK_BYTES: u64 = 1024 * 1024;
/// Chunk size when the request names none, in bytes.
const DEFAULT_CHUNK_BYTES: u64 = 64 * 1024;

/// State of the log routes: the engine (for visibility) and the directory the logs live in.
#[derive(Clone)]
pub struct LogsState {
    /// The engine, for the task and its visibility to the caller.
    pub engine: Engine,
    /// The directory holding the logs, `<data dir>/logs`.
    pub log_dir: PathBuf,
}

/// The log route with its OpenAPI operation.
pub fn routes() -> OpenApiRouter<LogsState> {
    OpenApiRouter::new().routes(routes!(read_log))
}

/// The log router.
pub fn router(state: LogsState) -> Router {
    routes().split_for_parts().0.with_state(state)
}

/// The query of `GET /v1/tasks/{taskId}/log`: where to start and how much to read.
#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct LogQuery {
    /// Byte offset to read from (a previous answer's `nextOffset`); one inside a UTF-8
    /// character reads from the next character (the answer's `offset` says where). Default 0.
    offset: Option<u64>,
    /// Instead of `offset`: start this many bytes before the end (at the next line start, or
    /// the next redraw of a line a `\r` redraws).
    tail: Option<u64>,
    /// Most bytes to return (default 65536); 0 reads 1 and more than 1048576 reads 1048576.
    /// A chunk it cuts ends after its last newline when it has one, else after its last whole
    /// UTF-8 character (past the limit when the chunk's first character is longer than it).
    limit: Option<u64>,
}

/// True for the tools whose tasks have an output log: `run_command`, external jobs (their
/// runner's output) and the gateway's calls (`server__tool`: the upstream's log messages).
fn writes_log(tool: &str) -> bool {
    tool == run_command::NAME || tool == EXTERNAL || tool.contains(SEPARATOR)
}

/// A byte range of a command task's output log.
#[utoipa::path(get, path = "/v1/tasks/{taskId}/log", params(("taskId" = String, Path, description = "the task's id"), LogQuery), tag = "tasks",
    responses((status = 200, description = "bytes `offset..nextOffset` of the log (invalid UTF-8 replaced); `exists: false` with an empty range while the command has not started (an external job: until its runner reports output), and for good when it never ran", body = LogChunk),
              (status = 400, description = "a malformed query (e.g. a negative offset)", body = ProblemDocument, content_type = "application/problem+json"),
              (status = 404, description = "unknown task, another principal's, or a task of a tool that writes no output log (only run_command, external jobs and gateway calls do)", body = ProblemDocument, content_type = "application/problem+json")))]
pub async fn read_log(
    State(s): State<LogsState>,
    Extension(p): Extension<Principal>,
    ApiPath(task_id): ApiPath<String>,
    ApiQuery(q): ApiQuery<LogQuery>,
) -> Result<Json<LogChunk>, ApiError> {
    let task = s.engine.get(&p, &task_id)?;
    if !writes_log(&task.tool) {
        return Err(ApiError::not_found("This task has no output log"));
    }
    let path = log_path(&s.log_dir, &task.task_id);
    let limit = q
        .limit
        .unwrap_or(DEFAULT_CHUNK_BYTES)
        .clamp(1, MAX_CHUNK_BYTES);
    let read = tokio::task::spawn_blocking(move || read_range(&path, q.offset, q.tail, limit))
        .await?
        .map_err(|e| ApiError::internal(format!("cannot read the log: {e}")))?;
    let terminal = task.status.is_terminal();
    // No file: the command has not started (yet); its log is empty so far, or for good once
    // the task has ended without running it.
    let (
        Range {
            offset,
            bytes,
            size,
            kept,
        },
        exists,
    ) = match read {
        Some(range) => (range, true),
        None => (
            Range {
                offset: 0,
                bytes: Vec::new(),
                size: 0,
                kept: 0,
            },
            false,
        ),
    };
    let next_offset = offset + bytes.len() as u64;
    Ok(Json(LogChunk {
        task_id: task.task_id,
        offset,
        next_offset,
        size,
        kept_from: kept,
        text: String::from_utf8_lossy(&bytes).into_owned(),
        complete: terminal && next_offset >= size,
        exists,
    }))
}

/// What [`read_range`] read.
#[derive(Debug, PartialEq)]
struct Range {
    /// Where `bytes` start in the log.
    offset: u64,
    bytes: Vec<u8>,
    /// The log's length.
    size: u64,
    /// Where its kept output starts ([`kept_from`]).
    kept: u64,
}

/// Reads up to `limit` bytes from `offset` (or from `tail` bytes before the end, moved to the
/// next line start or `\r` redraw; from an `offset` inside a UTF-8 character, moved to the next character),
/// at the start of the kept output at the earliest. A chunk cut by `limit` ends after its last
/// newline when it has one, else after its last whole character, so lines and characters are
/// not split. `None` when there is no log file.
///
/// The log's writer may drop its oldest output while this reads (the hole it punches reads as
/// zeros): a range that starts before the hole's end once the read is done is read again from
/// the kept output (the writer drops about 8 MiB at a time, so once is the most a live log
/// needs; the bound of 100 is for a file dropped from in small steps).
fn read_range(
    path: &std::path::Path,
    offset: Option<u64>,
    tail: Option<u64>,
    limit: u64,
) -> std::io::Result<Option<Range>> {
    let mut file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let mut range = read_range_of(&mut file, offset, tail, limit)?;
    for _ in 0..100 {
        if first_data(&file, range.size) <= range.offset {
            break;
        }
        range = read_range_of(&mut file, offset, tail, limit)?;
    }
    Ok(Some(range))
}

/// [`read_range`] of the open log `file`, once.
fn read_range_of(
    file: &mut std::fs::File,
    offset: Option<u64>,
    tail: Option<u64>,
    limit: u64,
) -> std::io::Result<Range> {
    let size = file.metadata()?.len();
    // A long-running command's log keeps its latest output: what comes before is gone.
    let kept = kept_from(file, size)?;
    let mut start = match (offset, tail) {
        (Some(o), _) => o.min(size),
        (None, Some(t)) => size.saturating_sub(t),
        (None, None) => 0,
    };
    if start <= kept {
        start = kept;
    } else if offset.is_none() && tail.is_some() {
        // Skip the partial first line: find the newline before `start`'s line ends, or the
        // `\r` before its next redraw (a progress bar's line: its latest drawings stay in the
        // tail; a `\r\n` is one line end).
        file.seek(SeekFrom::Start(start - 1))?;
        let mut probe = vec![0u8; (size - start + 1).min(limit) as usize];
        let n = file.read(&mut probe)?;
        let probe = &probe[..n];
        if let Some(mut i) = probe.iter().position(|&b| b == b'\n' || b == b'\r') {
            if probe[i] == b'\r' && probe.get(i + 1) == Some(&b'\n') {
                i += 1;
            }
            start = start - 1 + i as u64 + 1;
        }
    }
    file.seek(SeekFrom::Start(start))?;
    // A few bytes more than `limit`: the rest of a character the offset or the limit is in.
    let mut bytes = Vec::with_capacity((size - start).min(limit + 6) as usize);
    file.take(limit + 6).read_to_end(&mut bytes)?;
    // An offset inside a character: the range starts with the next one.
    if start > 0 {
        let inside = bytes
            .iter()
            .take(3)
            .take_while(|&&b| b & 0xc0 == 0x80)
            .count();
        bytes.drain(..inside);
        start += inside as u64;
    }
    let limit = limit as usize;
    if bytes.len() > limit {
        let end = match bytes[..limit].iter().rposition(|&b| b == b'\n') {
            Some(newline) => newline + 1,
            None => char_end(&bytes, limit),
        };
        bytes.truncate(end);
    }
    Ok(Range {
        offset: start,
        bytes,
        size,
        kept,
    })
}

/// Where a range of `bytes` cut at `limit` ends: at `limit`, moved back to the start of the
/// UTF-8 character it falls in, or, when that character starts the range (a limit smaller than
/// it), forward to its end.
fn char_end(bytes: &[u8], limit: usize) -> usize {
    let mut end = limit;
    while end > 0 && end > limit.saturating_sub(3) && bytes[end] & 0xc0 == 0x80 {
        end -= 1;
    }
    if bytes[end] & 0xc0 == 0x80 {
        // Not UTF-8 (a continuation byte with no start): cut where the limit falls.
        return limit;
    }
    if end > 0 {
        return end;
    }
    (bytes[0].leading_ones().max(1) as usize).min(bytes.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader racing the writer's drops of the oldest output never gets the zeros of the
    /// hole: each range starts at or after the kept output, as it is once the read is done.
    #[test]
    fn a_read_racing_a_drop_of_the_oldest_output_gets_no_zeros() {
        use nix::fcntl::{FallocateFlags, fallocate};
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.log");
        let text: String = (0..400_000).map(|n| format!("line {n:08}\n")).collect();
        std::fs::write(&path, &text).unwrap();
        let size = text.len() as u64;
        let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let dropper = {
            let (path, done) = (path.clone(), done.clone());
            std::thread::spawn(move || {
                let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
                let mut end = 0;
                while end + 8192 < size {
                    end += 4096;
                    let flags =
                        FallocateFlags::FALLOC_FL_PUNCH_HOLE | FallocateFlags::FALLOC_FL_KEEP_SIZE;
                    if fallocate(&file, flags, 0, end as i64).is_err() {
                        break; // a file system that cannot punch: nothing to race
                    }
                    // Far more often than a log's writer drops (every ~8 MiB), yet not so
                    // often that a reader is overtaken a hundred times in a row.
                    std::thread::sleep(std::time::Duration::from_micros(20));
                }
                done.store(true, std::sync::atomic::Ordering::SeqCst);
            })
        };
        let mut reads = 0;
        while !done.load(std::sync::atomic::Ordering::SeqCst) {
            let r = read_range(&path, Some(0), None, 4096).unwrap().unwrap();
            assert!(r.offset >= r.kept, "{} before {}", r.offset, r.kept);
            assert!(
                !r.bytes.contains(&0),
                "zeros at {} (kept from {})",
                r.offset,
                r.kept
            );
            reads += 1;
        }
        dropper.join().unwrap();
        assert!(reads > 0);
    }

    #[test]
    fn ranges_follow_offsets_and_cut_at_line_ends() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.log");
        std::fs::write(&path, "one\ntwo\nthree\n").unwrap();
        let Range {
            offset: o,
            bytes: b,
            size,
            ..
        } = read_range(&path, None, None, 1024).unwrap().unwrap();
        assert_eq!((o, b.as_slice(), size), (0, &b"one\ntwo\nthree\n"[..], 14));
        // Cut by the limit: ends after the last whole line.
        let Range {
            offset: o,
            bytes: b,
            ..
        } = read_range(&path, Some(0), None, 10).unwrap().unwrap();
        assert_eq!((o, b.as_slice()), (0, &b"one\ntwo\n"[..]));
        let Range {
            offset: o,
            bytes: b,
            ..
        } = read_range(&path, Some(8), None, 1024).unwrap().unwrap();
        assert_eq!((o, b.as_slice()), (8, &b"three\n"[..]));
        // The tail starts at a line start.
        let Range {
            offset: o,
            bytes: b,
            ..
        } = read_range(&path, None, Some(9), 1024).unwrap().unwrap();
        assert_eq!((o, b.as_slice()), (8, &b"three\n"[..]));
        // A line a progress bar redraws with `\r`: the tail starts at a redraw, so its latest
        // state is in it, however long the whole line is; `\r\n` is one line end.
        std::fs::write(&path, "get\r 10%\r 20%\r 30%\ndone\r\nok\n").unwrap();
        let Range {
            offset: o,
            bytes: b,
            ..
        } = read_range(&path, None, Some(14), 1024).unwrap().unwrap();
        assert_eq!((o, b.as_slice()), (14, &b" 30%\ndone\r\nok\n"[..]));
        let Range { bytes: b, .. } = read_range(&path, None, Some(6), 1024).unwrap().unwrap();
        assert_eq!(b.as_slice(), b"ok\n");
        // Characters are not split: an offset inside one starts at the next, and a limit
        // inside one (a line longer than the limit) ends before it.
        std::fs::write(&path, "aé€😀b").unwrap();
        let Range {
            offset: o,
            bytes: b,
            ..
        } = read_range(&path, Some(2), None, 6).unwrap().unwrap();
        assert_eq!((o, b.as_slice()), (3, "€".as_bytes()));
        let Range {
            offset: o,
            bytes: b,
            ..
        } = read_range(&path, Some(7), None, 1024).unwrap().unwrap();
        assert_eq!((o, b.as_slice()), (10, &b"b"[..]));
        let Range {
            offset: o,
            bytes: b,
            ..
        } = read_range(&path, Some(0), None, 8).unwrap().unwrap();
        assert_eq!((o, b.as_slice()), (0, "aé€".as_bytes()));
        for (offset, limit, from, text) in [(1, 1, 1, "é"), (2, 1, 3, "€"), (6, 2, 6, "😀")] {
            let Range {
                offset: o,
                bytes: b,
                ..
            } = read_range(&path, Some(offset), None, limit)
                .unwrap()
                .unwrap();
            assert_eq!(
                (o, b.as_slice()),
                (from, text.as_bytes()),
                "{offset} {limit}"
            );
        }
        // Following `nextOffset` with any limit gives the text back, character by character.
        let text = "x€😀\né".repeat(50);
        std::fs::write(&path, &text).unwrap();
        for limit in 1..9 {
            let (mut at, mut read) = (0, String::new());
            while at < text.len() as u64 {
                let Range {
                    offset: o,
                    bytes: b,
                    ..
                } = read_range(&path, Some(at), None, limit).unwrap().unwrap();
                assert_eq!(o, at);
                read.push_str(std::str::from_utf8(&b).unwrap());
                at += b.len() as u64;
            }
            assert_eq!(read, text, "{limit}");
        }
        std::fs::write(&path, "one\ntwo\nthree\n").unwrap();
        // Past the end: nothing, at the end.
        let Range {
            offset: o,
            bytes: b,
            ..
        } = read_range(&path, Some(99), None, 1024).unwrap().unwrap();
        assert_eq!((o, b.len()), (14, 0));
        assert!(
            read_range(&dir.path().join("none.log"), None, None, 10)
                .unwrap()
                .is_none()
        );
    }
}
