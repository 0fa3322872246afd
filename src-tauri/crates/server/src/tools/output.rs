//! Output of a running command: progress parsed from its lines, the latest line as a status
//! message, and a bounded log (the last lines in memory, the output in a file up to a size cap).
//! Shared by the `run_command` tool and `taskdeck run`.

use std::{collections::VecDeque, io::Write, path::Path};

use super::process::{MAX_LINE_BYTES, Output, line_split};

/// Longest status message taken from an output line, in characters.
pub const MAX_STATUS_CHARS: usize = 200;

/// Progress found in `line`: the last `NN%` (0..=100) as `(NN, 100)`, else the last `a/b` with
/// `0 <= a <= b` as `(a, b)`. `None` when neither appears.
pub fn parse_progress(line: &str) -> Option<(f64, f64)> {
    let bytes = line.as_bytes();
    // Percentages: digits (with an optional fraction) right before '%'.
    let mut found = None;
    for (i, b) in bytes.iter().enumerate() {
        if *b == b'%' {
            let start = bytes[..i]
                .iter()
                .rposition(|c| !(c.is_ascii_digit() || *c == b'.'))
                .map_or(0, |p| p + 1);
            if let Ok(v) = line[start..i].parse::<f64>()
                && (0.0..=100.0).contains(&v)
            {
                found = Some((v, 100.0));
            }
        }
    }
    if found.is_some() {
        return found;
    }
    for (i, b) in bytes.iter().enumerate() {
        if *b == b'/' {
            let start = bytes[..i]
                .iter()
                .rposition(|c| !c.is_ascii_digit())
                .map_or(0, |p| p + 1);
            let end = bytes[i + 1..]
                .iter()
                .position(|c| !c.is_ascii_digit())
                .map_or(bytes.len(), |p| i + 1 + p);
            let (a, b) = (&line[start..i], &line[i + 1..end]);
            // Not part of a path or a date: digits on both sides, nothing glued around them.
            let glued = (start > 0 && bytes[start - 1] == b'/')
                || (end < bytes.len() && bytes[end] == b'/');
            if let (Ok(a), Ok(b)) = (a.parse::<u64>(), b.parse::<u64>())
                && !glued
                && b > 0
                && a <= b
            {
                found = Some((a as f64, b as f64));
            }
        }
    }
    found
}

/// `line` trimmed of whitespace and control characters (ANSI escapes removed) and cut to
/// [`MAX_STATUS_CHARS`]; `None` if nothing is left.
pub fn status_line(line: &str) -> Option<String> {
    // A carriage return starts the line over (a progress bar redrawn in place).
    let last = line.rsplit('\r').next().unwrap_or(line);
    let out: String = without_ansi(last)
        .chars()
        .filter(|c| !c.is_control() || *c == '\t')
        .collect();
    let trimmed = out.trim();
    if trimmed.is_empty() {
        return None;
    }
    let mut s: String = trimmed.chars().take(MAX_STATUS_CHARS).collect();
    if trimmed.chars().count() > MAX_STATUS_CHARS {
        s.push('…');
    }
    Some(s)
}

/// `text` without its ANSI escape sequences (colours, cursor moves, OSC hyperlinks and titles)
/// and the other control characters they come with (BEL, backspace), as `anstream` parses them
/// (a VT500 parser); whitespace is kept: tabs, and carriage returns, so a log still shows a
/// progress bar's redraws. Text without an ESC (or C1 CSI) comes back as it is.
pub fn without_ansi(text: &str) -> String {
    if !text.contains('\u{1b}') && !text.contains('\u{9b}') {
        return text.to_string();
    }
    anstream::adapter::strip_str(text).to_string()
}

/// Takes ANSI escape sequences out of output as it is read, in pieces (`anstream`'s incremental
/// parser): an escape cut between two reads, or longer than a line may be (an inline image's
/// OSC, 100 KB of base64), goes whole, so no part of it shows as text. Whitespace (tabs, `\r`,
/// `\n`) and UTF-8 pass through; other control characters next to escapes go too. A newline
/// ends any escape still open (an OSC or DCS a program never ended), so one stray escape does
/// not hide the rest of the output.
#[derive(Default)]
pub struct EscapeStripper {
    parser: anstream::adapter::StripBytes,
    clean: Vec<u8>,
}

impl EscapeStripper {
    /// The next `bytes` of the output without their escapes: `bytes` themselves when they hold
    /// no ESC and none is open (the common case, nothing copied), else a buffer kept between
    /// calls.
    pub fn strip<'a>(&'a mut self, bytes: &'a [u8]) -> &'a [u8] {
        if !bytes.contains(&0x1b) && self.parser == anstream::adapter::StripBytes::default() {
            return bytes;
        }
        self.clean.clear();
        for line in bytes.split_inclusive(|&b| b == b'\n') {
            let before = self.clean.len();
            for chunk in line.utf8_chunks() {
                for printable in self.parser.strip_next(chunk.valid().as_bytes()) {
                    self.clean.extend_from_slice(printable);
                }
                // Bytes that are no UTF-8 (Latin-1 text, a character cut between two reads)
                // pass as they are, to be read as U+FFFD as in output without escapes; the
                // parser would take them for controls and drop them. In an open escape they
                // are its text, and go with it.
                if self.parser == anstream::adapter::StripBytes::default() {
                    self.clean.extend_from_slice(chunk.invalid());
                }
            }
            if line.ends_with(b"\n") && self.parser != anstream::adapter::StripBytes::default() {
                self.parser = anstream::adapter::StripBytes::default();
                // Inside a string escape the parser took the newline as the escape's text.
                if !self.clean[before..].ends_with(b"\n") {
                    self.clean.push(b'\n');
                }
            }
        }
        &self.clean
    }
}

/// The directory of the command tasks' output logs: `<data dir>/logs`.
pub fn log_dir(data_dir: &Path) -> std::path::PathBuf {
    data_dir.join("logs")
}

/// Where the output log of task `task_id` lives under `log_dir` (`<data dir>/logs`):
/// `<log_dir>/<taskId>.log`. Read by `GET /v1/tasks/{taskId}/log`.
pub fn log_path(log_dir: &Path, task_id: &str) -> std::path::PathBuf {
    log_dir.join(format!("{task_id}.log"))
}

/// The latest status line of a command's output and the progress it showed, kept until they
/// are reported (`run_command` and `taskdeck run` report at most every 250 ms).
#[derive(Debug, Default)]
pub struct LatestStatus {
    pending: Option<StatusUpdate>,
}

/// What a command's output said since it was last reported.
#[derive(Debug, Clone, PartialEq)]
pub struct StatusUpdate {
    /// The latest line, cleaned by [`status_line`].
    pub message: String,
    /// The latest `(current, total)` a line showed ([`parse_progress`]), if any did.
    pub progress: Option<(f64, f64)>,
}

impl LatestStatus {
    /// Takes in one output line (or `\r` redraw): its text becomes the status message, and its
    /// progress, if it shows one, the progress. Blank lines change nothing.
    pub fn note(&mut self, line: &str) {
        if let Some(message) = status_line(line) {
            let progress =
                parse_progress(&message).or_else(|| self.pending.as_ref().and_then(|p| p.progress));
            self.pending = Some(StatusUpdate { message, progress });
        }
    }

    /// What came since the last call, or `None` when nothing did.
    pub fn take(&mut self) -> Option<StatusUpdate> {
        self.pending.take()
    }
}

/// The bounded log of one command: the last `max_lines` lines in memory, and the output in a
/// file, of which the latest `max_file_bytes` are kept: past them, the oldest half is dropped
/// by punching a hole at the file's start (`fallocate(2)` `FALLOC_FL_PUNCH_HOLE`), so a
/// command that runs for days keeps its latest output, byte offsets stay what they were, and
/// the disk holds at most `max_file_bytes` of it; [`kept_from`] tells a reader where the kept
/// output starts. When the file cannot be written (its disk is full, or its file system cannot
/// punch holes and the cap is reached) the file ends with a note saying why it was cut, and
/// the command goes on ([`Self::cut`]).
pub struct OutputLog {
    tail: VecDeque<String>,
    max_lines: usize,
    file: Option<std::fs::File>,
    /// The directory holding the file, whose free space is checked as it grows.
    dir: Option<std::path::PathBuf>,
    /// The file's length (bytes), holes included.
    file_bytes: u64,
    /// Where the kept output starts in the file (bytes before it were dropped).
    start: u64,
    max_file_bytes: u64,
    /// The file's size from which the free space is checked again.
    next_space_check: u64,
    cut: Option<LogCut>,
    /// The last drawing of the line a `\r` redraws, until the line ends.
    redrawn: Option<String>,
    /// Per stream of the command (see [`OutputLog::take`]), its current line's (or drawing's)
    /// text already in the file, written when a read ended inside it.
    open: Vec<(usize, String)>,
    /// The stream whose line the file ends inside (after its unfinished text, or its last
    /// drawing's `\r`): another stream's line starts on a line of its own.
    dangling: Option<usize>,
    /// The streams whose unfinished line another stream's output broke off in the file: the
    /// rest of it goes on a line of its own, and its end alone writes nothing.
    broken: Vec<usize>,
}

/// The free space (bytes) an output log leaves to the task store on its file system: a log
/// stops ("disk full") before taking it, so a chatty command cannot leave the store without
/// room to record how the command ended.
pub const SPACE_LEFT_TO_THE_STORE: u64 = 16 << 20;

/// How much a log may grow between two checks of the free space (bytes).
const SPACE_CHECK_EVERY: u64 = 256 << 10;

/// Why a command's log file stopped before its output did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogCut {
    /// The file reached its size cap.
    SizeLimit,
    /// The file system holding it is full (`ENOSPC`).
    DiskFull,
    /// Another write error.
    WriteError,
}

impl LogCut {
    /// The words a result and the file's last line use: "size limit", "disk full", "write error".
    pub fn as_str(self) -> &'static str {
        match self {
            LogCut::SizeLimit => "size limit",
            LogCut::DiskFull => "disk full",
            LogCut::WriteError => "write error",
        }
    }

    /// The file's last line, e.g. `[taskdeck: output log truncated: disk full; later output is
    /// not kept in this file]`.
    fn note(self) -> String {
        format!(
            "[taskdeck: output log truncated: {}; later output is not kept in this file]\n",
            self.as_str()
        )
    }
}

impl OutputLog {
    /// A log keeping `max_lines` in memory and writing to `path` (if given) up to `max_file_bytes`.
    pub fn new(path: Option<&Path>, max_lines: usize, max_file_bytes: u64) -> OutputLog {
        // Output can hold secrets: the log directory is 0700 and each log 0600.
        let file = path.and_then(|p| {
            use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
            if let Some(dir) = p.parent() {
                let _ = std::fs::DirBuilder::new()
                    .recursive(true)
                    .mode(0o700)
                    .create(dir);
            }
            // Read too: on a full disk the end is read back to cut the file at a whole line.
            std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(true)
                .mode(0o600)
                .open(p)
                .ok()
        });
        OutputLog {
            tail: VecDeque::with_capacity(max_lines),
            max_lines,
            file,
            dir: path.and_then(Path::parent).map(Path::to_path_buf),
            file_bytes: 0,
            start: 0,
            max_file_bytes,
            next_space_check: 0,
            cut: None,
            redrawn: None,
            open: Vec::new(),
            dangling: None,
            broken: Vec::new(),
        }
    }

    /// A log that only writes `path` (no tail), after what the file holds already (an external
    /// job's output comes in pieces, one report at a time), keeping its latest
    /// `max_file_bytes`: a file that ends with the note of a cut takes nothing more. `None`
    /// when the file cannot be opened.
    pub fn append(path: &Path, max_file_bytes: u64) -> Option<OutputLog> {
        use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
        if let Some(dir) = path.parent() {
            let _ = std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir);
        }
        // Read too: on a full disk the end is read back to cut the file at a whole line.
        let file = std::fs::OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .mode(0o600)
            .open(path)
            .ok()?;
        let file_bytes = file.metadata().ok()?.len();
        // A file that ends with the note of its cut (written before a restart) was cut.
        let full = ends_cut(&file, file_bytes);
        let start = first_data(&file, file_bytes);
        Some(OutputLog {
            tail: VecDeque::new(),
            max_lines: 0,
            file: (!full).then_some(file),
            dir: path.parent().map(Path::to_path_buf),
            file_bytes,
            start,
            max_file_bytes,
            next_space_check: 0,
            cut: full.then_some(LogCut::SizeLimit),
            redrawn: None,
            open: Vec::new(),
            dangling: None,
            broken: Vec::new(),
        })
    }

    /// Records `text`, whole lines (its last line may lack its newline), as [`Self::push`]
    /// does each, in one write; a line longer than [`MAX_LINE_BYTES`] is split into lines of
    /// at most that many bytes (never inside a character), as a command's output is.
    pub fn push_lines(&mut self, text: &[u8]) {
        if self.file.is_none() {
            return;
        }
        let mut out = Vec::with_capacity(text.len() + 64);
        for raw in text.split_inclusive(|&b| b == b'\n') {
            let line = without_ansi(String::from_utf8_lossy(raw).trim_end_matches(['\n', '\r']));
            let mut rest = line.as_bytes();
            while rest.len() > MAX_LINE_BYTES {
                let at = line_split(rest, MAX_LINE_BYTES);
                out.extend_from_slice(&rest[..at]);
                out.push(b'\n');
                rest = &rest[at..];
            }
            out.extend_from_slice(rest);
            out.push(b'\n');
        }
        self.write(&out);
    }

    /// Appends `bytes` to the file, first dropping the oldest output if they would take the
    /// kept output past `max_file_bytes`; on a failure the file stops ([`Self::stop_file`]).
    fn write(&mut self, bytes: &[u8]) {
        let adding = bytes.len() as u64;
        if !self.room_for(adding) || !self.within_cap(adding) {
            return;
        }
        let Some(f) = self.file.as_mut() else {
            return;
        };
        match f.write_all(bytes) {
            Ok(()) => self.file_bytes += adding,
            Err(e) if e.kind() == std::io::ErrorKind::StorageFull => {
                self.stop_file(LogCut::DiskFull)
            }
            Err(_) => self.stop_file(LogCut::WriteError),
        }
    }

    /// Makes room for `adding` bytes within `max_file_bytes` of kept output: when they would
    /// not fit, the oldest output up to a block boundary is dropped, so that about half the
    /// cap is kept before them. False when the file stopped instead (its file system cannot
    /// punch holes: the output from then on is not kept, "size limit").
    fn within_cap(&mut self, adding: u64) -> bool {
        if self.file_bytes + adding - self.start <= self.max_file_bytes {
            return true;
        }
        let Some(f) = self.file.as_ref() else {
            return false;
        };
        let keep_from = (self.file_bytes + adding).saturating_sub(self.max_file_bytes / 2);
        let new_start = (keep_from / HOLE_ALIGN * HOLE_ALIGN).max(self.start);
        match punch_hole(f, new_start) {
            Ok(()) => {
                self.start = new_start;
                true
            }
            Err(e) => {
                tracing::debug!("cannot drop the start of an output log: {e}");
                self.stop_file(LogCut::SizeLimit);
                false
            }
        }
    }

    /// Whether `adding` more bytes leave the store its [`SPACE_LEFT_TO_THE_STORE`] (checked
    /// each [`SPACE_CHECK_EVERY`] of growth); if not, the file stops, "disk full". A file
    /// system that does not say its free space is not checked.
    fn room_for(&mut self, adding: u64) -> bool {
        if self.file_bytes + adding < self.next_space_check {
            return true;
        }
        self.next_space_check = self.file_bytes + adding + SPACE_CHECK_EVERY;
        let free = self
            .dir
            .as_deref()
            .and_then(taskdeck_engine::store::disk_space::free_bytes);
        if free.is_some_and(|free| free < adding + SPACE_CHECK_EVERY + SPACE_LEFT_TO_THE_STORE) {
            self.stop_file(LogCut::DiskFull);
            return false;
        }
        true
    }

    /// Why the log file stopped before the output did, if it did.
    pub fn cut(&self) -> Option<LogCut> {
        self.cut
    }

    /// Stops writing the file for `why` and ends it with the note saying so. On a full disk
    /// the note may not fit: the file is then shortened to its last whole line that leaves
    /// room for the note in blocks it already holds, and the note written there.
    fn stop_file(&mut self, why: LogCut) {
        let Some(mut f) = self.file.take() else {
            return;
        };
        self.cut = Some(why);
        let note = why.note();
        if f.write_all(note.as_bytes()).is_ok() {
            return;
        }
        let _ = make_room(&mut f, note.len() as u64).and_then(|_| f.write_all(note.as_bytes()));
    }

    /// Records one line of what the command wrote, as text: invalid UTF-8 is replaced and ANSI
    /// escape sequences are removed ([`without_ansi`]), in the file and in the tail alike, so
    /// the Output panel, `/v1/tasks/{id}/logs` and the result an agent reads carry no colour
    /// codes whether or not the command thought it wrote to a terminal.
    ///
    /// After [`OutputLog::push_redraw`]s, `raw` is the line's last drawing: the file gets the
    /// line as it was written, and the tail the drawing a terminal would show last (`raw`, or
    /// the last redraw when `raw` is blank).
    pub fn push(&mut self, raw: &[u8]) {
        self.push_from(0, raw);
    }

    /// [`OutputLog::push`] for stream `from` ([`OutputLog::take`]).
    fn push_from(&mut self, from: usize, raw: &[u8]) {
        let line = without_ansi(String::from_utf8_lossy(raw).trim_end_matches(['\n', '\r']));
        self.write_ended(from, &line, "\n");
        let redrawn = self.redrawn.take();
        let line = match redrawn {
            Some(drawn) if line.trim().is_empty() => drawn,
            _ => line,
        };
        if self.tail.len() == self.max_lines {
            self.tail.pop_front();
        }
        let mut line = line;
        if line.len() > 4096 {
            let mut cut = 4096;
            while !line.is_char_boundary(cut) {
                cut -= 1;
            }
            line.truncate(cut);
            line.push('…');
        }
        self.tail.push_back(line);
    }

    /// Records one drawing of a line a `\r` redraws (a progress bar): the file gets it with
    /// its `\r` at once, so a reader sees the bar move; the tail gets only the line's last
    /// drawing, when the line ends ([`OutputLog::push`]).
    pub fn push_redraw(&mut self, raw: &[u8]) {
        self.push_redraw_from(0, raw);
    }

    /// [`OutputLog::push_redraw`] for stream `from` ([`OutputLog::take`]).
    fn push_redraw_from(&mut self, from: usize, raw: &[u8]) {
        let drawn = without_ansi(&String::from_utf8_lossy(raw));
        self.write_ended(from, &drawn, "\r");
        if !drawn.trim().is_empty() {
            self.redrawn = Some(drawn);
        }
    }

    /// Records what stream `from` of a command said (each stream a number of the caller's
    /// choosing, e.g. 0 for stdout and 1 for stderr), as [`read_lines`] tells it: a line as
    /// [`OutputLog::push`], a redraw as [`OutputLog::push_redraw`], and what a read left
    /// unfinished at once in the file (not the tail), so a reader of the log sees a prompt or a
    /// progress bar's latest frame while the command runs, not only once the next one comes.
    /// When the line ends, the file gets only the rest of it. Another stream's line meanwhile
    /// starts on a line of its own.
    ///
    /// [`read_lines`]: super::process::read_lines
    pub fn take(&mut self, from: usize, out: Output<'_>) {
        match out {
            Output::Line(raw) => self.push_from(from, raw),
            Output::Redraw(raw) => self.push_redraw_from(from, raw),
            Output::Partial(raw) => self.write_unfinished(from, raw),
        }
    }

    /// Writes what the file lacks of stream `from`'s unfinished line `raw` (its text up to its
    /// last whole character, so that the whole line's text starts with it).
    fn write_unfinished(&mut self, from: usize, raw: &[u8]) {
        if self.file.is_none() {
            return;
        }
        let text = without_ansi(&String::from_utf8_lossy(whole_characters(raw)));
        let open = self.take_open(from);
        match text.strip_prefix(open.as_str()) {
            Some(rest) if !rest.is_empty() => {
                self.write_piece(from, rest, "");
                self.open.push((from, text));
            }
            _ => self.open.push((from, open)),
        }
    }

    /// Writes stream `from`'s line (or drawing) `text`, ended by `end` (`"\n"` or `"\r"`):
    /// only the part the file does not hold already.
    fn write_ended(&mut self, from: usize, text: &str, end: &str) {
        if self.file.is_none() {
            return;
        }
        let open = self.take_open(from);
        match text.strip_prefix(open.as_str()) {
            Some(rest) => self.write_piece(from, rest, end),
            // The text written before does not start this one: both stay, each on its line.
            None => {
                self.dangling = Some(usize::MAX);
                self.write_piece(from, text, end)
            }
        }
    }

    /// Appends `piece` of stream `from`'s output and `end`, on a line of its own when the file
    /// ends inside another stream's line. The end of a line the file has whole, which another
    /// stream's output followed, is not written: that output started a new line already.
    fn write_piece(&mut self, from: usize, piece: &str, end: &str) {
        let apart = self.dangling.is_some_and(|s| s != from);
        let broken = self.broken.contains(&from);
        if piece.is_empty() && (apart || broken) {
            if !end.is_empty() {
                self.broken.retain(|&s| s != from);
            }
            return;
        }
        self.broken.retain(|&s| s != from);
        // (`usize::MAX`: a line written apart after a mismatch, no stream's.)
        if let Some(cut) = self.dangling.filter(|&s| apart && s != usize::MAX) {
            self.broken.push(cut);
        }
        let mut out = String::with_capacity(piece.len() + end.len() + 1);
        if apart {
            out.push('\n');
        }
        out.push_str(piece);
        out.push_str(end);
        self.dangling = (end != "\n").then_some(from);
        self.write(out.as_bytes());
    }

    /// What of stream `from`'s current line the file holds already, no longer kept.
    fn take_open(&mut self, from: usize) -> String {
        match self.open.iter().position(|(s, _)| *s == from) {
            Some(i) => self.open.swap_remove(i).1,
            None => String::new(),
        }
    }

    /// The last lines, joined with newlines.
    pub fn tail(&self) -> String {
        self.tail.iter().cloned().collect::<Vec<_>>().join("\n")
    }
}

/// `raw` without a last character cut short by the end of a read (its text then starts the
/// text of `raw` and what follows it, invalid bytes included, as `from_utf8_lossy` reads them).
fn whole_characters(raw: &[u8]) -> &[u8] {
    let Some(last) = raw.utf8_chunks().last() else {
        return raw;
    };
    let cut = last.invalid();
    // An invalid tail that is the start of a character (`error_len` None) may be completed.
    match std::str::from_utf8(cut) {
        Err(e) if e.error_len().is_none() => &raw[..raw.len() - cut.len()],
        _ => raw,
    }
}

/// The alignment of the holes punched at a log's start (bytes): a block of the file systems
/// in use, so that the whole hole is freed and the kept output starts on a block.
const HOLE_ALIGN: u64 = 4096;

/// Frees the blocks of `f` before `end` (a hole reads as zeros; the length stays).
fn punch_hole(f: &std::fs::File, end: u64) -> nix::Result<()> {
    use nix::fcntl::{FallocateFlags, fallocate};
    if end == 0 {
        return Ok(());
    }
    fallocate(
        f,
        FallocateFlags::FALLOC_FL_PUNCH_HOLE | FallocateFlags::FALLOC_FL_KEEP_SIZE,
        0,
        end as i64,
    )
}

/// Where the first data of `f` (`len` bytes long) is: 0 for a log that never dropped
/// anything, the end of the hole at its start for one that did (`lseek(2)` `SEEK_DATA`),
/// `len` when it holds no data.
pub fn first_data(f: &std::fs::File, len: u64) -> u64 {
    use nix::unistd::{Whence, lseek};
    match lseek(f, 0, Whence::SeekData) {
        Ok(at) => (at.max(0) as u64).min(len),
        // ENXIO: nothing but a hole (or nothing) before the end.
        Err(nix::errno::Errno::ENXIO) => len,
        Err(_) => 0,
    }
}

/// Where a reader of the log in `f` (`len` bytes long) finds its kept output: 0 when nothing
/// was dropped, else the start of the first whole line after the hole its oldest output left
/// ([`OutputLog`]). Bytes before it read as zeros or as the rest of a line whose start is gone.
pub fn kept_from(f: &std::fs::File, len: u64) -> std::io::Result<u64> {
    use std::os::unix::fs::FileExt;
    let data = first_data(f, len);
    if data == 0 || data >= len {
        return Ok(data);
    }
    let mut at = data;
    let mut buf = vec![0u8; 64 * 1024];
    while at < len {
        let n = f.read_at(&mut buf, at)?;
        if n == 0 {
            break;
        }
        if let Some(i) = buf[..n].iter().position(|b| *b == b'\n') {
            return Ok(at + i as u64 + 1);
        }
        at += n as u64;
    }
    Ok(len)
}

/// Whether `f`, `len` bytes long, ends with the note [`LogCut::note`] writes.
fn ends_cut(f: &std::fs::File, len: u64) -> bool {
    use std::os::unix::fs::FileExt;
    let end = LogCut::SizeLimit.note();
    let end = end.split_once(';').map_or(end.as_str(), |(_, rest)| rest);
    let mut last = vec![0u8; end.len()];
    len >= end.len() as u64
        && f.read_exact_at(&mut last, len - end.len() as u64).is_ok()
        && last == end.as_bytes()
}

/// Shortens `f` (whose cursor is at its end) to the end of its last whole line that leaves
/// `room` bytes before the old end, and puts the cursor there: the bytes written there then go
/// to blocks the file already holds.
fn make_room(f: &mut std::fs::File, room: u64) -> std::io::Result<()> {
    use std::io::{Read, Seek, SeekFrom};
    let end = f.metadata()?.len();
    let limit = end.saturating_sub(room);
    // The last newline at or before `limit` (looked for in the 4 KiB before it).
    let from = limit.saturating_sub(4096);
    let mut before = vec![0u8; (limit - from) as usize];
    let mut reader = f.try_clone()?;
    reader.seek(SeekFrom::Start(from))?;
    reader.read_exact(&mut before)?;
    let keep = match before.iter().rposition(|b| *b == b'\n') {
        Some(i) => from + i as u64 + 1,
        None => from,
    };
    f.set_len(keep)?;
    f.seek(SeekFrom::Start(keep))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_redrawn_line_is_in_the_file_as_written_and_in_the_tail_as_last_drawn() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.log");
        let mut log = OutputLog::new(Some(&path), 10, 1 << 20);
        log.push(b"fetching");
        log.push_redraw(b"");
        log.push_redraw(b"[1/2]");
        log.push_redraw(b"[2/2]");
        log.push(b"");
        log.push_redraw(b"ERROR: 3 failed");
        log.push(b"OK");
        assert_eq!(log.tail(), "fetching\n[2/2]\nOK");
        let file = std::fs::read_to_string(&path).unwrap();
        assert_eq!(file, "fetching\n\r[1/2]\r[2/2]\r\nERROR: 3 failed\rOK\n");
    }

    /// What a read left unfinished is in the file at once, and not twice; another stream's
    /// line meanwhile gets a line of its own; a character cut by a read waits for its end.
    #[test]
    fn unfinished_output_is_in_the_file_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.log");
        let mut log = OutputLog::new(Some(&path), 10, 1 << 20);
        let file = || std::fs::read_to_string(&path).unwrap();
        let (out, err) = (1, 2);
        log.take(err, Output::Redraw(b""));
        log.take(err, Output::Partial(b"[1/2] a"));
        assert_eq!(file(), "\r[1/2] a");
        log.take(err, Output::Redraw(b"[1/2] a"));
        log.take(err, Output::Partial(b"[2/2] b"));
        assert_eq!(file(), "\r[1/2] a\r[2/2] b");
        log.take(out, Output::Partial(b"caf\xc3"));
        assert_eq!(file(), "\r[1/2] a\r[2/2] b\ncaf");
        log.take(err, Output::Line(b"[2/2] b"));
        log.take(out, Output::Partial(b"caf\xc3\xa9 ok"));
        log.take(out, Output::Line(b"caf\xc3\xa9 ok!"));
        assert_eq!(file(), "\r[1/2] a\r[2/2] b\ncaf\u{e9} ok!\n");
        // A prompt another stream's line broke off: its end adds no empty line, and what
        // follows it goes on a line of its own.
        log.take(out, Output::Partial(b"Continue? "));
        log.take(err, Output::Line(b"ERR 1"));
        log.take(out, Output::Line(b"Continue? "));
        log.take(out, Output::Partial(b"next"));
        log.take(err, Output::Line(b"ERR 2"));
        log.take(out, Output::Line(b"next, then more"));
        log.take(out, Output::Line(b"last"));
        assert_eq!(
            file(),
            "\r[1/2] a\r[2/2] b\ncaf\u{e9} ok!\nContinue? \nERR 1\nnext\nERR 2\n, then more\nlast\n"
        );
        // The tail has each line whole, as it ended.
        assert_eq!(
            log.tail(),
            "[2/2] b\ncaf\u{e9} ok!\nERR 1\nContinue? \nERR 2\nnext, then more\nlast"
        );
    }

    #[test]
    fn a_reported_line_over_the_line_cap_is_split_between_characters() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("job.log");
        let mut log = OutputLog::append(&path, 16 << 20).unwrap();
        let long = "w".repeat(200_000);
        let wide = "é".repeat(70_000);
        log.push_lines(format!("{long}\n{wide}\nshort").as_bytes());
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert!(
            lines.iter().all(|l| l.len() <= MAX_LINE_BYTES),
            "a line over the cap"
        );
        assert_eq!(lines.concat(), format!("{long}{wide}short"));
        assert_eq!(lines.last(), Some(&"short"));
        assert_eq!(lines.len(), 4 + 3 + 1);
    }

    #[test]
    fn the_latest_status_keeps_the_last_line_and_the_last_progress_until_taken() {
        let mut latest = LatestStatus::default();
        assert_eq!(latest.take(), None);
        latest.note("building 2/4");
        latest.note("  ");
        latest.note("\u{1b}[1mlinking\u{1b}[0m");
        assert_eq!(
            latest.take(),
            Some(StatusUpdate {
                message: "linking".into(),
                progress: Some((2.0, 4.0))
            })
        );
        assert_eq!(latest.take(), None, "reported once");
        latest.note("done");
        assert_eq!(
            latest.take(),
            Some(StatusUpdate {
                message: "done".into(),
                progress: None
            }),
            "a progress already reported is not reported again"
        );
    }

    #[test]
    fn progress_forms() {
        assert_eq!(parse_progress("Downloading 42% done"), Some((42.0, 100.0)));
        assert_eq!(
            parse_progress("[12/50] Compiling serde"),
            Some((12.0, 50.0))
        );
        assert_eq!(parse_progress("step 3/4, 75.5%"), Some((75.5, 100.0)));
        assert_eq!(parse_progress("see /usr/lib/x86_64"), None);
        assert_eq!(parse_progress("date 2026/11/29"), None);
        assert_eq!(parse_progress("9/3 is not progress"), None);
        assert_eq!(parse_progress("150% effort"), None);
        assert_eq!(parse_progress("no numbers"), None);
    }

    #[test]
    fn status_lines_are_clean_and_bounded() {
        assert_eq!(
            status_line("  \u{1b}[32mok\u{1b}[0m test a ... \n").as_deref(),
            Some("ok test a ...")
        );
        assert_eq!(status_line("10%\r20%\r30%").as_deref(), Some("30%"));
        assert_eq!(status_line("   "), None);
        let long = "x".repeat(500);
        assert_eq!(
            status_line(&long).unwrap().chars().count(),
            MAX_STATUS_CHARS + 1
        );
    }

    /// The file's blocks on disk, in bytes.
    fn on_disk(path: &Path) -> u64 {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(path).unwrap().blocks() * 512
    }

    /// The kept output of the log at `path`: from [`kept_from`] to its end.
    fn kept(path: &Path) -> (u64, String) {
        let f = std::fs::File::open(path).unwrap();
        let len = f.metadata().unwrap().len();
        let from = kept_from(&f, len).unwrap();
        let bytes = std::fs::read(path).unwrap();
        (
            from,
            String::from_utf8(bytes[from as usize..].to_vec()).unwrap(),
        )
    }

    #[test]
    fn log_is_bounded_in_memory_and_keeps_its_latest_output_on_disk() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.log");
        let mut log = OutputLog::new(Some(&path), 3, 64 << 10);
        let mut written = 0;
        for i in 0..50_000 {
            let line = format!("line {i}\n");
            written += line.len() as u64;
            log.push(line.as_bytes());
        }
        log.push(b"\xff\xfe bytes");
        written += "\u{fffd}\u{fffd} bytes\n".len() as u64;
        assert_eq!(log.tail(), "line 49998\nline 49999\n\u{fffd}\u{fffd} bytes");
        assert_eq!(log.cut(), None, "nothing cut: the oldest output made room");
        // Offsets stay those of the whole output; the disk holds about the cap.
        assert_eq!(std::fs::metadata(&path).unwrap().len(), written);
        assert!(
            on_disk(&path) <= (64 + 8) << 10,
            "{} bytes on disk",
            on_disk(&path)
        );
        let (from, text) = kept(&path);
        assert!(
            from > 0 && written - from <= 64 << 10,
            "kept from {from} of {written}"
        );
        // The kept output starts at a whole line and runs, line after line, to the end.
        let lines: Vec<&str> = text.lines().collect();
        let first: u32 = lines[0].strip_prefix("line ").unwrap().parse().unwrap();
        assert!(first > 40_000, "{first}");
        for (i, line) in lines[..lines.len() - 1].iter().enumerate() {
            assert_eq!(*line, format!("line {}", first + i as u32));
        }
        assert_eq!(lines.last(), Some(&"\u{fffd}\u{fffd} bytes"));
        // A log that never reached its cap reads from 0.
        let small = dir.path().join("small.log");
        OutputLog::new(Some(&small), 3, 64 << 10).push(b"one\n");
        assert_eq!(kept(&small), (0, "one\n".into()));
    }

    #[test]
    fn an_appended_log_goes_on_after_the_file_and_keeps_its_latest_output() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("job.log");
        let mut log = OutputLog::append(&path, 64 << 10).unwrap();
        log.push_lines(b"\x1b[32mone\x1b[0m\r\ntwo\n");
        drop(log);
        // The next report's lines go after the first's; a last line without its newline
        // ends there.
        let mut log = OutputLog::append(&path, 64 << 10).unwrap();
        log.push_lines(b"three\nfour");
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "one\ntwo\nthree\nfour\n"
        );
        // Reports past the cap, across a restart (the log opened again): the latest are kept.
        for report in 0..300 {
            if report == 150 {
                log = OutputLog::append(&path, 64 << 10).unwrap();
            }
            let lines: String = (0..100)
                .map(|i| format!("report {report} line {i}\n"))
                .collect();
            log.push_lines(lines.as_bytes());
        }
        assert_eq!(log.cut(), None);
        assert!(
            on_disk(&path) <= (64 + 8) << 10,
            "{} bytes on disk",
            on_disk(&path)
        );
        let (from, text) = kept(&path);
        assert!(from > 0);
        assert!(
            text.ends_with("report 299 line 99\n"),
            "{}",
            &text[text.len() - 40..]
        );
        assert!(text.starts_with("report "), "{}", &text[..40]);
        // A file that ends with the note of a cut (a disk that was full) takes nothing more.
        let path = dir.path().join("cut.log");
        std::fs::write(&path, format!("one\n{}", LogCut::DiskFull.note())).unwrap();
        let cut = std::fs::read_to_string(&path).unwrap();
        let mut log = OutputLog::append(&path, 64 << 10).unwrap();
        log.push_lines(b"more\n");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), cut);
        assert_eq!(log.tail(), "");
    }

    #[test]
    fn colour_codes_are_not_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.log");
        let mut log = OutputLog::new(Some(&path), 10, 1 << 20);
        log.push(b"\x1b[1;31merror\x1b[0m: \x1b[38;5;208mdisk\x1b[m full\n");
        log.push(b"\x1b]8;;https://example.com\x1b\\link\x1b]8;;\x1b\\ 10%\r\x1b[2K20%\n");
        assert_eq!(log.tail(), "error: disk full\nlink 10%\r20%");
        let file = std::fs::read_to_string(&path).unwrap();
        assert_eq!(file, "error: disk full\nlink 10%\r20%\n");
        assert_eq!(
            status_line("\x1b[32m 3/7 done\x1b[0m\r\x1b[32m4/7 done\x1b[0m").as_deref(),
            Some("4/7 done")
        );
        assert_eq!(without_ansi("plain [31m text"), "plain [31m text");
        // An escape never ended ends with its line; one cut between reads goes whole.
        let mut stripper = EscapeStripper::default();
        let mut seen = Vec::new();
        for read in [
            &b"start \x1b]0;title\nnext \x1b]8;;http://x/"[..],
            b"aaaa\x07link\x1b]8;;\x07 \x1b[3",
            b"1mred\n",
        ] {
            seen.extend_from_slice(stripper.strip(read));
        }
        assert_eq!(String::from_utf8(seen).unwrap(), "start \nnext link red\n");
        // Bytes that are no UTF-8 are kept for U+FFFD beside colour codes, as without them; a
        // character cut between two reads comes out whole.
        let mut stripper = EscapeStripper::default();
        let mut seen = Vec::new();
        for read in [
            &b"caf\xe9 \xff\xfe ok \x80\xc1\xf5\n\x1b[31m\xc2\xa3 5 \xe2\x82"[..],
            b"\xac\x1b[0m \xb0C\n",
        ] {
            seen.extend_from_slice(stripper.strip(read));
        }
        assert_eq!(
            String::from_utf8_lossy(&seen),
            "caf\u{fffd} \u{fffd}\u{fffd} ok \u{fffd}\u{fffd}\u{fffd}\n£ 5 € \u{fffd}C\n"
        );
        // `grep --color=always -n` and colour-coded columns keep their tabs.
        assert_eq!(
            without_ansi(
                "\t\x1b[32mok\x1b[0m\tdone\x07\r\x1b[35m2\x1b[m\x1b[36m:\x1b[m\treturn 0;"
            ),
            "\tok\tdone\r2:\treturn 0;"
        );
    }
}
