//! The output of a command run by `taskdeck run`, on its way from the command to ours. One
//! reader thread reads the command's outputs (its pseudo-terminal, and its pipes) as they
//! come and cuts them into lines for the job (the log's tail, the latest line as the status,
//! a line left standing as a prompt); each output has a writer thread that copies its bytes,
//! unchanged, to our stdout or stderr. `taskdeck run`'s own messages ([`say`]) go with the
//! command's stderr, in order, between its lines.
//!
//! Reading and writing are apart so that a consumer of ours that stops reading (`| less` left
//! on a page, a terminal paused with Ctrl-S) holds up only the writers: the command then waits
//! for room as it would without `taskdeck run`, while its status, reports and a cancel from
//! Taskdeck go on. Once the command has ended, what it left unread is read at once, so the
//! job's end carries its last lines while they are still on their way to a slow consumer.

use std::{
    collections::VecDeque,
    io::{Read, Write},
    os::fd::OwnedFd,
    sync::{Arc, Condvar, Mutex},
    time::Duration,
};

use taskdeck_server::tools::output::{
    EscapeStripper, LatestStatus, OutputLog, parse_progress, status_line,
};

/// How much of an output may wait for our consumer while the command runs (bytes, and one
/// read of at most [`READ_BYTES`] more): past it, the reader waits, and so does the command
/// once its pipe is full.
const RELAY_BYTES: usize = 64 * 1024;

/// How much may wait once the command has ended (bytes): what it left in its pipe or
/// terminal is taken without waiting for room; a leftover process that goes on writing past
/// this waits again.
const RELAY_BYTES_ENDED: usize = 8 * 1024 * 1024;

/// How many of the output's last lines the job's tail keeps.
const TAIL_LINES: usize = 40;

/// The most one read takes from an output (bytes).
const READ_BYTES: usize = 64 * 1024;

/// The most output that waits for the next report to go to the job's log in Taskdeck (bytes):
/// what comes beyond it before that report is left out (and said to be). Its JSON, escapes and
/// all, stays under the API's 4 MiB body limit.
const OUTBOX_BYTES: usize = 512 * 1024;

/// The most one write to our stdout or stderr takes (bytes).
const WRITE_BYTES: usize = 16 * 1024;

/// How long the end waits for the reader to take what the command left (a leftover
/// process that keeps the output open without writing is not waited for).
const READ_REST: Duration = Duration::from_millis(500);

/// How long a message waits for the output to end the line it stands in (a prompt waiting
/// for an answer) before it is written on a line of its own.
const HOLD_MAX: Duration = Duration::from_secs(1);

/// Where [`say`] sends `taskdeck run`'s messages while the command's output is copied: the
/// relay that carries the command's stderr. `None` before and after.
static MESSAGES: Mutex<Option<Arc<Relay>>> = Mutex::new(None);

/// One of the command's outputs: the read side of its pipe or pseudo-terminal, whether it is
/// copied to our stderr (else our stdout), and whether the command's stderr is on it.
pub(super) struct Output {
    pub(super) read: OwnedFd,
    pub(super) to_stderr: bool,
    pub(super) has_stderr: bool,
}

/// The command's output on its way: its last 40 lines kept in `log` (the result's tail), its
/// latest line (or `\r` redraw) in `latest`, and the line each output stands in, if any, in
/// `unfinished` (one slot per output: [`Lines`]).
pub(super) struct OutputCapture {
    pub(super) log: Arc<Mutex<OutputLog>>,
    pub(super) latest: Arc<Mutex<LatestStatus>>,
    pub(super) unfinished: Vec<Arc<Mutex<Option<Standing>>>>,
    /// The output on its way to the job's log in Taskdeck (none for a command run untracked).
    pub(super) outbox: Option<Arc<Mutex<Outbox>>>,
    reader: Option<tokio::task::JoinHandle<()>>,
    relays: Vec<Arc<Relay>>,
    writers: Vec<tokio::task::JoinHandle<()>>,
    /// The outputs a leftover process still held open when the run was over (see
    /// [`OutputCapture::delivered`]): the reader leaves them here, open, with whether each
    /// goes to our stderr.
    left_open: Arc<Mutex<Vec<(std::fs::File, bool)>>>,
}

impl OutputCapture {
    /// Starts one reader thread for all of `outputs` and a writer thread for each; [`say`]
    /// writes with the one that has the command's stderr from now on. `tracked`: the output
    /// also goes to the job's log in Taskdeck ([`OutputCapture::outbox`]).
    pub(super) fn start(outputs: Vec<Output>, tracked: bool) -> OutputCapture {
        let log = Arc::new(Mutex::new(OutputLog::new(None, TAIL_LINES, 0)));
        // The latest line (or `\r` redraw) becomes the status; its progress, if any, the progress.
        let latest = Arc::new(Mutex::new(LatestStatus::default()));
        let mut capture = OutputCapture {
            log,
            latest,
            unfinished: Vec::new(),
            outbox: tracked.then(|| Arc::new(Mutex::new(Outbox::default()))),
            reader: None,
            relays: Vec::new(),
            writers: Vec::new(),
            left_open: Arc::default(),
        };
        // The writers wake the reader through this pipe when an output it left has room again
        // (without one, out of descriptors, the reader looks again every 50 ms).
        let (wake_read, wake_write) = match nix::unistd::pipe2(
            nix::fcntl::OFlag::O_CLOEXEC | nix::fcntl::OFlag::O_NONBLOCK,
        ) {
            Ok((r, w)) => (Some(r), Some(Arc::new(w))),
            Err(_) => (None, None),
        };
        let mut reading = Vec::new();
        for output in outputs {
            let relay = Arc::new(Relay::new(wake_write.clone()));
            reading.push(Reading {
                from: std::fs::File::from(output.read),
                relay: relay.clone(),
                lines: Lines::new(&mut capture.unfinished, capture.outbox.clone()),
                hidden: None,
                to_stderr: output.to_stderr,
            });
            let to = relay.clone();
            capture.writers.push(tokio::task::spawn_blocking(move || {
                to.write_out(output.to_stderr)
            }));
            if output.has_stderr {
                *MESSAGES.lock().unwrap() = Some(relay.clone());
            }
            capture.relays.push(relay);
        }
        let (log, latest) = (capture.log.clone(), capture.latest.clone());
        let left_open = capture.left_open.clone();
        capture.reader = Some(tokio::task::spawn_blocking(move || {
            let note = |text: &str| latest.lock().unwrap().note(text);
            read_out(reading, wake_read, &log, &note, &left_open)
        }));
        capture
    }

    /// After the command's end: takes what it left unread, in [`READ_REST`] at most (an
    /// output still held open by a process the command left is not waited for further; what
    /// that process writes later is still copied until [`OutputCapture::delivered`]).
    pub(super) async fn read_rest(&mut self) {
        for relay in &self.relays {
            relay.update(|q| q.ended = true);
        }
        if let Some(reader) = &mut self.reader
            && tokio::time::timeout(READ_REST, reader).await.is_ok()
        {
            self.reader = None;
        }
    }

    /// Waits until everything read has been written to ours (a slow consumer may take long),
    /// or until `give_up` resolves. Nothing more is read after; [`say`] writes directly.
    ///
    /// `hand_over`: an output that a process the command left behind still holds open (a
    /// server started with `&`) is handed, once what was read of it is written, to a `cat`
    /// of its own that copies it on to ours until that process closes it: what it writes
    /// after `taskdeck run` exits reaches our stdout or stderr as it would without `taskdeck
    /// run` (closed with us, the output would kill it with SIGPIPE at its next write). Not
    /// recorded in the job, which has ended.
    pub(super) async fn delivered(mut self, give_up: impl Future<Output = ()>, hand_over: bool) {
        *MESSAGES.lock().unwrap() = None;
        for relay in &self.relays {
            relay.update(|q| q.finished = true);
        }
        // Told the run is over (the update above wakes it), the reader leaves the outputs
        // still open in `left_open` and ends.
        if let Some(reader) = self.reader.take() {
            let _ = tokio::time::timeout(READ_REST, reader).await;
        }
        tokio::pin!(give_up);
        for writer in std::mem::take(&mut self.writers) {
            tokio::select! {
                _ = writer => {}
                _ = &mut give_up => return,
            }
        }
        if hand_over {
            for (output, to_stderr) in self.left_open.lock().unwrap().drain(..) {
                copy_on_after_us(output, to_stderr);
            }
        }
    }
}

/// Starts `cat` to copy `output` to our stdout (or, `to_stderr`, stderr) until its last
/// writer closes it; not waited for (it outlives us). Without `cat`, `output` is closed.
fn copy_on_after_us(output: std::fs::File, to_stderr: bool) {
    use std::os::{fd::AsFd, unix::process::CommandExt};
    use std::process::{Command, Stdio};
    let ours = match to_stderr {
        true => std::io::stderr()
            .as_fd()
            .try_clone_to_owned()
            .map(Stdio::from),
        false => std::io::stdout()
            .as_fd()
            .try_clone_to_owned()
            .map(Stdio::from),
    };
    let Ok(ours) = ours else { return };
    // Its own process group: a Ctrl-C meant for the next command in our terminal does not
    // stop it (the leftover process it copies for is not stopped by one either).
    let started = Command::new("cat")
        .stdin(Stdio::from(output))
        .stdout(ours)
        .stderr(Stdio::null())
        .process_group(0)
        .spawn();
    // Without `cat`, the output closes with us, as it did before it was handed over.
    drop(started);
}

/// Says `line` on stderr, as `taskdeck run: line`. While the command's output is copied, the
/// line goes with the command's stderr, in order, and never waits: a consumer of our stderr
/// that stopped reading must not hold up a report or a cancel. Written, not printed: our
/// stderr may be gone (a terminal that hung up, a pipe closed under `2>&1 | head`), and
/// printing would panic.
pub(super) fn say(line: &str) {
    let text = format!("taskdeck run: {line}\n");
    let relay = MESSAGES.lock().unwrap().clone();
    if relay.is_none_or(|r| !r.push_now(text.as_bytes())) {
        let _ = std::io::stderr().lock().write_all(text.as_bytes());
    }
}

/// One of the command's outputs being read: its file, where its bytes go, its lines, and
/// the line it stood in when the reader left it for want of room (`Some`: left).
struct Reading {
    from: std::fs::File,
    relay: Arc<Relay>,
    lines: Lines,
    hidden: Option<Option<Standing>>,
    /// It is copied to our stderr (else our stdout).
    to_stderr: bool,
}

/// Writes the messages that have waited [`HOLD_MAX`] for the output's line to end (called
/// with each report: a prompt may stand for long).
pub(super) fn release_held_messages() {
    if let Some(relay) = MESSAGES.lock().unwrap().clone() {
        relay.update(|q| {
            if q.held_since
                .is_some_and(|since| since.elapsed() >= HOLD_MAX)
            {
                q.release_held();
            }
        });
    }
}

/// Reads the command's outputs until each ends (Linux answers EIO on a pseudo-terminal once
/// the command and everything it started closed it; a pipe reads 0), its lines going to
/// `log` and the status ([`Lines`]) and its bytes to its relay. One thread reads them all,
/// whichever is ready first, and the one listed first of two ready at once: two outputs'
/// lines go to the tail in the order they came, as near as can be known (two threads
/// woken together would log them in the order the scheduler ran them).
///
/// An output whose relay is full is left unread until its writer makes room (and wakes
/// `wake`, else it is looked at again in 50 ms); its line cut by that wait is not shown as a
/// prompt meanwhile. An output whose relay takes no more because our side closed
/// (`taskdeck run -- cmd | head`) is closed, so the command learns it at its next write
/// (SIGPIPE or EPIPE) as it would alone; one whose relay takes no more because the run is
/// over is left open, in `left_open` (see [`OutputCapture::delivered`]).
fn read_out(
    mut outputs: Vec<Reading>,
    wake: Option<OwnedFd>,
    log: &Mutex<OutputLog>,
    note: &impl Fn(&str),
    left_open: &Mutex<Vec<(std::fs::File, bool)>>,
) {
    use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
    use std::os::fd::AsFd;
    let mut buf = vec![0u8; READ_BYTES];
    while !outputs.is_empty() {
        let mut ended = vec![false; outputs.len()];
        let mut over = vec![false; outputs.len()];
        let mut ready = Vec::new();
        for (i, output) in outputs.iter_mut().enumerate() {
            match output.relay.room() {
                Room::Closed => {
                    ended[i] = true;
                    over[i] = output.relay.run_over();
                }
                Room::Full => {
                    if output.hidden.is_none() {
                        output.hidden = Some(output.lines.unfinished.lock().unwrap().take());
                    }
                }
                Room::Open => {
                    if let Some(standing) = output.hidden.take() {
                        *output.lines.unfinished.lock().unwrap() = standing;
                    }
                    ready.push(i);
                }
            }
        }
        let mut fds: Vec<PollFd<'_>> = wake
            .iter()
            .map(|w| PollFd::new(w.as_fd(), PollFlags::POLLIN))
            .chain(
                ready
                    .iter()
                    .map(|&i| PollFd::new(outputs[i].from.as_fd(), PollFlags::POLLIN)),
            )
            .collect();
        let timeout = match wake.is_none() && ready.len() < outputs.len() {
            true => PollTimeout::from(50u16),
            false => PollTimeout::NONE,
        };
        if !ended.contains(&true) {
            match poll(&mut fds, timeout) {
                Ok(_) | Err(nix::errno::Errno::EINTR) => {}
                // Not to be read any further: each output ends with what it has.
                Err(_) => ended.fill(true),
            }
        }
        let mut woken: Vec<bool> = fds.iter().map(|f| f.any().unwrap_or(false)).collect();
        drop(fds);
        if let Some(wake) = &wake
            && woken.remove(0)
        {
            let mut drain = [0u8; 64];
            while nix::unistd::read(wake, &mut drain).is_ok_and(|n| n > 0) {}
        }
        for (k, &i) in ready.iter().enumerate() {
            if !woken[k] || ended[i] {
                continue;
            }
            let output = &mut outputs[i];
            let n = match output.from.read(&mut buf) {
                Ok(0) => {
                    ended[i] = true;
                    continue;
                }
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(_) => {
                    ended[i] = true;
                    continue;
                }
            };
            output.lines.feed(&buf[..n], &mut log.lock().unwrap(), note);
            if !output.relay.push(&buf[..n]) {
                ended[i] = true;
            }
        }
        // An ended output: its last line, and its file closed. Its writer goes on until the
        // run is over: [`say`]'s messages may still come.
        let mut open = Vec::with_capacity(outputs.len());
        for ((output, ended), over) in outputs.into_iter().zip(ended).zip(over) {
            match ended {
                true => {
                    output.lines.finish(&mut log.lock().unwrap(), note);
                    output.relay.update(Queue::output_ended);
                    if over {
                        left_open
                            .lock()
                            .unwrap()
                            .push((output.from, output.to_stderr));
                    }
                }
                false => open.push(output),
            }
        }
        outputs = open;
    }
}

/// Writes `bytes` to our stdout (flushed) or, `to_stderr`, stderr.
fn pass_on(bytes: &[u8], to_stderr: bool) -> std::io::Result<()> {
    match to_stderr {
        true => std::io::stderr().lock().write_all(bytes),
        false => {
            let mut out = std::io::stdout().lock();
            out.write_all(bytes).and_then(|_| out.flush())
        }
    }
}

/// The bytes one reader has read and its writer has not yet written (about [`RELAY_BYTES`]
/// at most while the command runs, [`RELAY_BYTES_ENDED`] after), and [`say`]'s messages
/// among them.
struct Relay {
    queue: Mutex<Queue>,
    changed: Condvar,
    /// The reader's wake-up pipe, if it has one: written when an output it left for want of
    /// room has room again, or when one it reads takes no more.
    wake: Option<Arc<OwnedFd>>,
}

/// Whether a relay takes more of its output now.
enum Room {
    Open,
    /// Full: the reader leaves the output until the writer makes room.
    Full,
    /// It takes no more: our side is closed, or the run is over.
    Closed,
}

#[derive(Default)]
struct Queue {
    /// What to write, in order, each with where: `true` for our stderr, else the writer's own.
    chunks: VecDeque<(Vec<u8>, bool)>,
    /// Bytes read and not yet written (those being written included).
    bytes: usize,
    /// The command has ended: what it left is taken without waiting for room.
    ended: bool,
    /// No more bytes will come: the writer ends once it has written what it holds.
    finished: bool,
    /// Our side is closed (EPIPE): nothing more is read or written.
    broken: bool,
    /// The reader found no room and waits to be woken.
    reader_waits: bool,
    /// The output queued so far stops inside a line (cut by a read, or a prompt).
    mid_line: bool,
    /// [`say`]'s messages waiting for the output to end its line, so that they are not
    /// written into the middle of one; written after the next newline, or on a line of their
    /// own once the output has ended or they have waited [`HOLD_MAX`] (a prompt).
    held: Vec<u8>,
    /// Since when `held` waits.
    held_since: Option<std::time::Instant>,
    /// The output has ended (the command and all it started closed it).
    output_ended: bool,
}

impl Queue {
    /// Queues the held messages on a line of their own: after a newline, the output having
    /// stopped inside a line.
    fn release_held(&mut self) {
        if self.held.is_empty() {
            return;
        }
        let mut messages = b"\n".to_vec();
        messages.append(&mut self.held);
        self.bytes += messages.len();
        self.chunks.push_back((messages, true));
        self.mid_line = false;
        self.held_since = None;
    }

    /// The output has ended: messages no longer wait for its line to end.
    fn output_ended(&mut self) {
        self.output_ended = true;
        self.release_held();
    }

    /// The room this queue has now.
    fn room(&self) -> Room {
        let limit = if self.ended {
            RELAY_BYTES_ENDED
        } else {
            RELAY_BYTES
        };
        if self.broken || self.finished {
            Room::Closed
        } else if self.bytes < limit {
            Room::Open
        } else {
            Room::Full
        }
    }
}

impl Relay {
    fn new(wake: Option<Arc<OwnedFd>>) -> Relay {
        Relay {
            queue: Mutex::default(),
            changed: Condvar::new(),
            wake,
        }
    }

    /// Changes the queue's state and wakes whoever waits on it: the writer, and the reader
    /// when it waits for room that is there now.
    fn update(&self, change: impl FnOnce(&mut Queue)) {
        let mut q = self.queue.lock().unwrap();
        let was_closed = matches!(q.room(), Room::Closed);
        change(&mut q);
        let room = q.room();
        if (q.reader_waits && !matches!(room, Room::Full))
            || (!was_closed && matches!(room, Room::Closed))
        {
            q.reader_waits = false;
            if let Some(wake) = &self.wake {
                let _ = nix::unistd::write(&**wake, b"w");
            }
        }
        self.changed.notify_all();
    }

    /// The run is over ([`OutputCapture::delivered`]) and our side still takes bytes: what
    /// comes next of the output goes on without us.
    fn run_over(&self) -> bool {
        let q = self.queue.lock().unwrap();
        q.finished && !q.broken
    }

    /// Whether the output's reader may read more of it now; a full relay notes that the reader
    /// waits, and wakes it once there is room.
    fn room(&self) -> Room {
        let mut q = self.queue.lock().unwrap();
        let room = q.room();
        if matches!(room, Room::Full) {
            q.reader_waits = true;
        }
        room
    }

    /// Hands `bytes` of the output to the writer (the reader read them having found room,
    /// [`Relay::room`]). `false` once no more are taken (our side closed, or the run is over).
    fn push(&self, bytes: &[u8]) -> bool {
        let mut q = self.queue.lock().unwrap();
        if q.broken || q.finished {
            return false;
        }
        q.bytes += bytes.len();
        match memchr::memchr(b'\n', bytes) {
            Some(end) if !q.held.is_empty() => {
                let messages = std::mem::take(&mut q.held);
                q.bytes += messages.len();
                q.held_since = None;
                q.chunks.push_back((bytes[..=end].to_vec(), false));
                q.chunks.push_back((messages, true));
                if end + 1 < bytes.len() {
                    q.chunks.push_back((bytes[end + 1..].to_vec(), false));
                }
            }
            _ => q.chunks.push_back((bytes.to_vec(), false)),
        }
        q.mid_line = bytes.last() != Some(&b'\n');
        self.changed.notify_all();
        true
    }

    /// Hands `bytes` for our stderr to the writer, after what it holds (and after the line the
    /// output stops in, once it ends), without waiting for room (a message is short). `false`
    /// when it is not taken (see [`Relay::push`]).
    fn push_now(&self, bytes: &[u8]) -> bool {
        let mut q = self.queue.lock().unwrap();
        if q.broken || q.finished {
            return false;
        }
        if q.mid_line && !q.output_ended {
            q.held_since.get_or_insert_with(std::time::Instant::now);
            q.held.extend_from_slice(bytes);
        } else {
            let mut message = match q.mid_line {
                true => b"\n".to_vec(),
                false => Vec::new(),
            };
            message.extend_from_slice(bytes);
            q.mid_line = false;
            q.bytes += message.len();
            q.chunks.push_back((message, true));
        }
        self.changed.notify_all();
        true
    }

    /// The writer thread: writes what comes, in order, to our stdout or (`to_stderr`) stderr,
    /// until the queue is finished and empty, or our side closes. Other write errors (a
    /// terminal gone) lose that chunk only: the command's status and result still need its
    /// output read.
    fn write_out(&self, to_stderr: bool) {
        loop {
            let (chunk, message) = {
                let mut q = self.queue.lock().unwrap();
                loop {
                    if q.broken {
                        return;
                    }
                    if let Some(chunk) = q.chunks.pop_front() {
                        break chunk;
                    }
                    if q.finished {
                        if q.held.is_empty() {
                            return;
                        }
                        q.release_held();
                        continue;
                    }
                    q = self.changed.wait(q).unwrap();
                }
            };
            // In pieces, each counted off once written: a read's bytes that wait in a slow
            // consumer's pipe are not still counted as waiting here.
            for piece in chunk.chunks(WRITE_BYTES) {
                let written = pass_on(piece, to_stderr || message);
                let mut broken = false;
                self.update(|q| {
                    q.bytes -= piece.len();
                    // A message to a closed stderr does not stop the command's output.
                    if !message
                        && written.is_err_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
                    {
                        q.broken = true;
                        q.chunks.clear();
                        q.held.clear();
                        q.bytes = 0;
                        broken = true;
                    }
                });
                if broken {
                    return;
                }
            }
        }
    }
}

/// The command's output on its way to the job's log in Taskdeck (`output` of the next
/// report): whole lines of each output, in the order they were read, at most [`OUTBOX_BYTES`]
/// between two reports (the newest: a command's last lines, its error, matter most). All of it
/// is sent, however long the command runs: the log keeps its latest output.
#[derive(Default)]
pub(super) struct Outbox {
    /// The newest whole lines; up to twice [`OUTBOX_BYTES`] between two cuts to it, so that
    /// a flood moves each byte about once.
    text: Vec<u8>,
    /// Bytes of the log left out since the last take, before `text`: older lines that did not
    /// fit.
    skipped: u64,
    /// What the last take took (`skipped`, `text`), until given back or taken over.
    in_flight: Option<(u64, Vec<u8>)>,
}

impl Outbox {
    /// Adds the pieces of whole lines (one line, or lines, cut in pieces), the oldest lines
    /// waiting making room for them.
    fn push(&mut self, pieces: &[&[u8]]) {
        for piece in pieces {
            self.text.extend_from_slice(piece);
        }
        if self.text.len() > 2 * OUTBOX_BYTES {
            self.fit();
        }
    }

    /// Adds `text` and a newline (a line the output did not end, or a piece of a long one).
    fn push_line(&mut self, text: &[u8]) {
        self.push(&[text, b"\n"]);
    }

    /// Leaves out the oldest whole lines of `text` past [`OUTBOX_BYTES`].
    fn fit(&mut self) {
        let Some(excess) = self.text.len().checked_sub(OUTBOX_BYTES + 1) else {
            return;
        };
        let cut =
            memchr::memchr(b'\n', &self.text[excess..]).map_or(self.text.len(), |i| excess + i + 1);
        self.skipped += cut as u64;
        self.text.drain(..cut);
    }

    /// What waits, as text (invalid UTF-8 replaced), after a line saying how much was left
    /// out before it, if anything was; `None` when nothing waits.
    pub(super) fn take(&mut self) -> Option<String> {
        self.in_flight = None;
        self.fit();
        if self.text.is_empty() && self.skipped == 0 {
            return None;
        }
        let mut text = String::new();
        if self.skipped > 0 {
            text.push_str(&format!(
                "[taskdeck run: {} bytes of output left out of this log: more than {} KiB came \
                 between two reports]\n",
                self.skipped,
                OUTBOX_BYTES / 1024
            ));
        }
        text.push_str(&String::from_utf8_lossy(&self.text));
        self.in_flight = Some((
            std::mem::take(&mut self.skipped),
            std::mem::take(&mut self.text),
        ));
        Some(text)
    }

    /// Puts back what the last [`Outbox::take`] took (if anything), its report not having got
    /// through, to go first with the next. What came since is kept after it, within
    /// [`OUTBOX_BYTES`] (the oldest lines left out); when lines came since that did not fit,
    /// it is left out too (older than they are).
    pub(super) fn give_back(&mut self) {
        let Some((skipped, mut text)) = self.in_flight.take() else {
            return;
        };
        self.fit();
        if self.skipped > 0 {
            self.skipped += skipped + text.len() as u64;
            return;
        }
        text.append(&mut self.text);
        (self.text, self.skipped) = (text, skipped);
        self.fit();
    }
}

/// What the status and the tail say of an output that turned out to be binary data.
const BINARY: &str = "(binary output)";

/// The line an output stands in: how many of its lines had ended before it, and its text.
pub(super) type Standing = (u64, String);

/// The command's output cut into lines as its bytes come: each line (ending `\n`, or a
/// terminal's `\r\n`) goes to the log and the status, and each `\r` redraw (a progress bar
/// drawing over itself) to the status as it is drawn. A line keeps its first
/// [`MAX_LINE_BYTES`](taskdeck_server::tools::process::MAX_LINE_BYTES). The line the bytes
/// read so far stop in (cut anywhere, or a prompt waiting for an answer) is kept in
/// `unfinished`, this output's slot, which `supervise` shows once it has not changed for a
/// report's interval.
struct Lines {
    line: Vec<u8>,
    /// A NUL byte came: the output is binary data (an archive, an image), not lines of text,
    /// and is no longer read as lines (its random bytes would make a garbled status and tail,
    /// and false progress).
    binary: bool,
    /// How many lines have ended: tells a line asked again from the same line still standing.
    ended: u64,
    unfinished: Arc<Mutex<Option<Standing>>>,
    /// The texts of the lines and redraws ended in the read being taken, one after another
    /// (kept between reads so that a read allocates nothing).
    texts: Vec<u8>,
    /// Where each of them is in `texts`, in the order they ended.
    segments: Vec<Segment>,
    /// Where the output's whole lines go for the job's log, if anywhere.
    outbox: Option<Arc<Mutex<Outbox>>>,
    /// The output's bytes since its last newline: they go to
    /// `outbox` once the line ends, so that two outputs' lines are not mixed (a very long line
    /// goes in pieces: [`Lines::keep_pending`]).
    pending: Vec<u8>,
    /// Takes the escapes out of the output before its lines are cut, measured and split.
    stripper: EscapeStripper,
}

/// A line or redraw ended in one read: its text is `texts[start..end]` of its [`Lines`], and
/// `line` says a newline ended it (a line of the tail), else a `\r` (a redraw).
struct Segment {
    start: usize,
    end: usize,
    line: bool,
}

impl Lines {
    /// A splitter with a slot of its own, added to `slots`, sending whole lines to `outbox`.
    fn new(
        slots: &mut Vec<Arc<Mutex<Option<Standing>>>>,
        outbox: Option<Arc<Mutex<Outbox>>>,
    ) -> Lines {
        let unfinished = Arc::new(Mutex::new(None));
        slots.push(unfinished.clone());
        Lines {
            line: Vec::new(),
            binary: false,
            ended: 0,
            unfinished,
            texts: Vec::new(),
            segments: Vec::new(),
            outbox,
            pending: Vec::new(),
            stripper: EscapeStripper::default(),
        }
    }

    /// Takes the output's next `bytes`, escape sequences taken out ([`EscapeStripper`]: the
    /// tail, the status and the log see the text a terminal shows); from a NUL byte on, it is
    /// binary and only said to be.
    ///
    /// What it leaves is what giving each line and redraw to `note` and each line to `log`, in
    /// turn, would leave, with far less work (a command may write hundreds of MB): of the
    /// lines ended in one read only the last [`TAIL_LINES`] can stay in the tail, and the
    /// status needs only the last of them that shows something and, before it, the last that
    /// shows progress. The lines before those (`earlier`) are cut only when they are needed:
    /// when the later ones show nothing, or for a progress the later ones do not show (only a
    /// line holding a `%` or a `/` can).
    fn feed(&mut self, bytes: &[u8], log: &mut OutputLog, note: &impl Fn(&str)) {
        if self.binary {
            return;
        }
        if let Some(nul) = memchr::memchr(0, bytes) {
            // The whole lines before it that are text (valid UTF-8) were text; what follows
            // them (a file's magic number, `\x89PNG`) is binary already.
            let before = &bytes[..nul];
            // A character the last read cut: its rest starts this one.
            let cut_char = std::str::from_utf8(&self.line).is_err_and(|e| e.error_len().is_none());
            let rest = match cut_char {
                true => before
                    .iter()
                    .take(3)
                    .take_while(|&&b| b & 0xc0 == 0x80)
                    .count(),
                false => 0,
            };
            let valid = rest
                + std::str::from_utf8(&before[rest..]).map_or_else(|e| e.valid_up_to(), str::len);
            let text = memchr::memrchr(b'\n', &before[..valid]).map_or(0, |i| i + 1);
            self.feed(&before[..text], log, note);
            self.binary = true;
            self.line.clear();
            self.pending.clear();
            self.stripper = EscapeStripper::default();
            if let Some(outbox) = &self.outbox {
                outbox.lock().unwrap().push_line(BINARY.as_bytes());
            }
            *self.unfinished.lock().unwrap() = None;
            note(BINARY);
            log.push(BINARY.as_bytes());
            return;
        }
        let mut stripper = std::mem::take(&mut self.stripper);
        self.feed_text(stripper.strip(bytes), log, note);
        self.stripper = stripper;
    }

    /// [`Lines::feed`] of `bytes` without escape sequences (and without NUL).
    fn feed_text(&mut self, bytes: &[u8], log: &mut OutputLog, note: &impl Fn(&str)) {
        self.send_lines(bytes);
        let split = memchr::memrchr_iter(b'\n', bytes)
            .nth(TAIL_LINES)
            .map_or(0, |i| i + 1);
        let (mut earlier, ended_before) = (&bytes[..split], self.ended);
        // The first earlier line continues the line the last read stopped in.
        let mut carried = Vec::new();
        if !earlier.is_empty() {
            carried = std::mem::take(&mut self.line);
            self.ended += memchr::memchr_iter(b'\n', earlier).count() as u64;
        }
        self.cut(&bytes[split..]);
        let shows = |s: &Segment, texts: &[u8]| status_line(&segment_text(s, texts)).is_some();
        let mut shown = self.segments.iter().rposition(|s| shows(s, &self.texts));
        if shown.is_none() && !earlier.is_empty() {
            // Every later line is blank: the status is further back.
            (self.line, self.ended, earlier) = (std::mem::take(&mut carried), ended_before, &[]);
            self.cut(bytes);
            shown = self.segments.iter().rposition(|s| shows(s, &self.texts));
        }
        let lines = self.segments.iter().filter(|s| s.line).count();
        for segment in self
            .segments
            .iter()
            .filter(|s| s.line)
            .skip(lines.saturating_sub(TAIL_LINES))
        {
            log.push(tail_line(&segment_text(segment, &self.texts)).as_bytes());
        }
        if let Some(shown) = shown {
            let later = &self.segments[..=shown];
            let progress = match last_progress(later, &self.texts) {
                Some(i) if i == shown => None,
                Some(i) => Some(segment_text(&later[i], &self.texts).into_owned()),
                None => earlier_progress(earlier, &carried),
            };
            if let Some(progress) = progress {
                note(&progress);
            }
            note(&segment_text(&self.segments[shown], &self.texts));
        }
        *self.unfinished.lock().unwrap() = (!self.line.is_empty())
            .then(|| (self.ended, String::from_utf8_lossy(&self.line).into_owned()));
    }

    /// Sends the lines `bytes` end, with the start of the first that came before, to the
    /// outbox, and keeps the line they stop in for later.
    fn send_lines(&mut self, bytes: &[u8]) {
        let Some(outbox) = self.outbox.clone() else {
            return;
        };
        let Some(last) = memchr::memrchr(b'\n', bytes) else {
            return self.keep_pending(bytes);
        };
        // The first line: what came before, and its end.
        let end = memchr::memchr(b'\n', bytes).unwrap_or(last);
        self.keep_pending(&bytes[..end]);
        outbox
            .lock()
            .unwrap()
            .push(&[&self.pending, &bytes[end..=last]]);
        self.pending.clear();
        self.keep_pending(&bytes[last + 1..]);
    }

    /// Adds `bytes` (no newline) to the line waiting in `pending`. Past `MAX_LINE_BYTES`, a
    /// line redrawn with `\r` (a progress bar) keeps its last drawing, and any other is sent
    /// in lines of at most `MAX_LINE_BYTES` of visible text, split where a command task's log
    /// splits it (`line_split`: not inside a character).
    fn keep_pending(&mut self, bytes: &[u8]) {
        self.pending.extend_from_slice(bytes);
        let max = taskdeck_server::tools::process::MAX_LINE_BYTES;
        if self.pending.len() <= max {
            return;
        }
        let drawn = self.pending.len() - usize::from(self.pending.last() == Some(&b'\r'));
        if let Some(redraw) = memchr::memrchr(b'\r', &self.pending[..drawn]) {
            self.pending.drain(..redraw);
        }
        if let Some(outbox) = &self.outbox {
            let mut outbox = outbox.lock().unwrap();
            while self.pending.len() > max {
                let at = taskdeck_server::tools::process::line_split(&self.pending, max);
                outbox.push_line(&self.pending[..at]);
                self.pending.drain(..at);
            }
        }
    }

    /// Cuts `bytes` (no NUL) into the line they continue, and the lines and redraws they end
    /// (into `texts` and `segments`, emptied first).
    fn cut(&mut self, bytes: &[u8]) {
        self.texts.clear();
        self.segments.clear();
        self.ended += cut(&mut self.line, bytes, &mut self.texts, &mut self.segments);
    }

    /// The output's last line, when it does not end with a newline (a prompt, `printf done`):
    /// a line too, unless nothing of it shows (a colour reset, a bare `\r`).
    fn finish(self, log: &mut OutputLog, note: &impl Fn(&str)) {
        *self.unfinished.lock().unwrap() = None;
        if let Some(outbox) = self.outbox.as_ref().filter(|_| !self.pending.is_empty()) {
            outbox.lock().unwrap().push_line(&self.pending);
        }
        let last = String::from_utf8_lossy(&self.line);
        if let Some(status) = status_line(&last) {
            note(&status);
            log.push(tail_line(&last).as_bytes());
        }
    }
}

/// Cuts `bytes` (no NUL) into `line`, the line they continue, and the lines and redraws
/// they end (appended to `texts` and `segments`); returns how many lines they end. A `\r` is
/// kept at the end of `line` until what follows it replaces what was drawn before it; a line
/// keeps its first `MAX_LINE_BYTES`.
fn cut(line: &mut Vec<u8>, bytes: &[u8], texts: &mut Vec<u8>, segments: &mut Vec<Segment>) -> u64 {
    let mut ended = 0;
    let mut rest = bytes;
    loop {
        let end = memchr::memchr2(b'\n', b'\r', rest);
        let piece = &rest[..end.unwrap_or(rest.len())];
        if !piece.is_empty() {
            if line.last() == Some(&b'\r') {
                line.clear();
            }
            let room = taskdeck_server::tools::process::MAX_LINE_BYTES.saturating_sub(line.len());
            line.extend_from_slice(&piece[..piece.len().min(room)]);
        }
        let Some(end) = end else {
            return ended;
        };
        let newline = rest[end] == b'\n';
        if newline && line.last() == Some(&b'\r') {
            line.pop();
        }
        // A second `\r` in a row redraws nothing.
        if newline || line.last() != Some(&b'\r') {
            let start = texts.len();
            texts.extend_from_slice(line);
            segments.push(Segment {
                start,
                end: texts.len(),
                line: newline,
            });
        }
        match newline {
            true => {
                line.clear();
                ended += 1;
            }
            false if line.last() != Some(&b'\r') => line.push(b'\r'),
            false => {}
        }
        rest = &rest[end + 1..];
    }
}

/// `line` (its escapes already taken out: [`Lines::feed`]) as the result's tail keeps it: its
/// last drawing (after its last `\r`), without control characters but tabs, trailing
/// whitespace trimmed; its indentation is kept (a traceback's, a diff's).
fn tail_line(line: &str) -> String {
    let last = line.rsplit('\r').next().unwrap_or(line);
    let mut text: String = last
        .chars()
        .filter(|c| !c.is_control() || *c == '\t')
        .collect();
    text.truncate(text.trim_end().len());
    text
}

/// The text of `segment`, cut from `texts`.
fn segment_text<'a>(segment: &Segment, texts: &'a [u8]) -> std::borrow::Cow<'a, str> {
    String::from_utf8_lossy(&texts[segment.start..segment.end])
}

/// Whether the status `text` makes shows progress ([`parse_progress`]).
fn shows_progress(text: &str) -> bool {
    status_line(text).is_some_and(|s| parse_progress(&s).is_some())
}

/// The last of `segments` (cut into `texts`) that shows progress; only one holding a `%` or a
/// `/` can, so only those are looked at.
fn last_progress(segments: &[Segment], texts: &[u8]) -> Option<usize> {
    let mut before = segments.last()?.end;
    loop {
        let at = memchr::memrchr2(b'%', b'/', &texts[..before])?;
        let i = segments.partition_point(|s| s.end <= at);
        if shows_progress(&segment_text(&segments[i], texts)) {
            return Some(i);
        }
        before = segments[i].start;
    }
}

/// The text of the last line or redraw in `earlier` (whole lines, its first continuing
/// `carried`) that shows progress, each line holding a `%` or a `/` cut alone from the last.
fn earlier_progress(earlier: &[u8], carried: &[u8]) -> Option<String> {
    let (mut texts, mut segments) = (Vec::new(), Vec::new());
    let mut before = earlier.len();
    loop {
        let at = match memchr::memrchr2(b'%', b'/', &earlier[..before]) {
            Some(at) => at,
            // The first line, whose `%` or `/` came in `carried`.
            None if before > 0 && memchr::memchr2(b'%', b'/', carried).is_some() => 0,
            None => return None,
        };
        let start = memchr::memrchr(b'\n', &earlier[..at]).map_or(0, |i| i + 1);
        let end = memchr::memchr(b'\n', &earlier[at..]).map_or(earlier.len(), |i| at + i + 1);
        let mut line = match start {
            0 => carried.to_vec(),
            _ => Vec::new(),
        };
        texts.clear();
        segments.clear();
        cut(&mut line, &earlier[start..end], &mut texts, &mut segments);
        if let Some(i) = last_progress(&segments, &texts) {
            return Some(segment_text(&segments[i], &texts).into_owned());
        }
        before = start;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use taskdeck_server::tools::output::StatusUpdate;

    /// The plain way [`Lines::feed`] must match: every byte in turn, every line and redraw
    /// given to the status and every line to the log.
    #[derive(Default)]
    struct ByteByByte {
        line: Vec<u8>,
        ended: u64,
    }

    impl ByteByByte {
        fn feed(&mut self, bytes: &[u8], log: &mut OutputLog, latest: &mut LatestStatus) {
            for &b in bytes {
                match b {
                    b'\n' => {
                        if self.line.last() == Some(&b'\r') {
                            self.line.pop();
                        }
                        let text = String::from_utf8_lossy(&self.line).into_owned();
                        latest.note(&text);
                        log.push(tail_line(&text).as_bytes());
                        self.line.clear();
                        self.ended += 1;
                    }
                    b'\r' => {
                        latest.note(&String::from_utf8_lossy(&self.line));
                        if self.line.last() != Some(&b'\r') {
                            self.line.push(b);
                        }
                    }
                    _ => {
                        if self.line.last() == Some(&b'\r') {
                            self.line.clear();
                        }
                        if self.line.len() < taskdeck_server::tools::process::MAX_LINE_BYTES {
                            self.line.push(b);
                        }
                    }
                }
            }
        }

        fn standing(&self) -> Option<Standing> {
            (!self.line.is_empty())
                .then(|| (self.ended, String::from_utf8_lossy(&self.line).into_owned()))
        }
    }

    #[test]
    fn the_outbox_takes_whole_lines_of_each_output_within_its_bounds() {
        let outbox = Arc::new(Mutex::new(Outbox::default()));
        let take = || outbox.lock().unwrap().take().unwrap_or_default();
        let (mut slots, mut log) = (Vec::new(), OutputLog::new(None, TAIL_LINES, 0));
        let mut out = Lines::new(&mut slots, Some(outbox.clone()));
        let mut err = Lines::new(&mut slots, Some(outbox.clone()));
        let note = |_: &str| {};
        // Two outputs' lines do not mix, each going once it ends.
        out.feed(b"one\ntw", &mut log, &note);
        err.feed(b"er", &mut log, &note);
        out.feed(b"o\nthr", &mut log, &note);
        err.feed(b"ror\n", &mut log, &note);
        assert_eq!(take(), "one\ntwo\nerror\n");
        // A line longer than a line keeps, over many reads: all of it, in lines of that size.
        let max = taskdeck_server::tools::process::MAX_LINE_BYTES;
        for _ in 0..40 {
            out.feed(&[b'x'; 4096], &mut log, &note);
        }
        out.feed(b"x end\nnext\n", &mut log, &note);
        let long = format!("thr{}x end", "x".repeat(40 * 4096));
        let pieces: Vec<&str> = long
            .as_bytes()
            .chunks(max)
            .map(|c| std::str::from_utf8(c).unwrap())
            .collect();
        assert_eq!(take(), format!("{}\nnext\n", pieces.join("\n")));
        // Its pieces hold whole characters, and its visible text only (`line_split`).
        // 420 KB written, 90 KB shown: two pieces.
        let coloured = "\x1b[1;31m€\x1b[0m".repeat(30_000);
        for piece in coloured.as_bytes().chunks(4096) {
            err.feed(piece, &mut log, &note);
        }
        err.feed(b"\n", &mut log, &note);
        let sent = take();
        let lines: Vec<&str> = sent.lines().collect();
        assert_eq!(lines.len(), 2);
        assert!(!sent.contains(['\u{fffd}', '\x1b']));
        assert_eq!(lines.concat(), "€".repeat(30_000));
        // A `\r` bar redrawn past that: its latest drawings, up to the one the output ends in.
        for i in 0..4000 {
            out.feed(format!("\r{i:>40}").as_bytes(), &mut log, &note);
        }
        out.feed(b"\r", &mut log, &note);
        out.finish(&mut log, &note);
        let bar = take();
        assert!(
            bar.len() <= max + 1 && bar.starts_with('\r'),
            "{}",
            bar.len()
        );
        assert!(
            bar.ends_with(&format!("{:>40}\r\n", 3999)),
            "{}",
            &bar[bar.len() - 50..]
        );

        // More than a report takes between two: the newest whole lines, after a line saying
        // how much came before them.
        let mut o = Outbox::default();
        let lines: Vec<String> = (0..3000).map(|i| format!("{i:>1023}\n")).collect();
        for line in &lines {
            o.push(&[line.as_bytes()]);
        }
        let sent = o.take().unwrap();
        let (note, newest) = sent.split_once('\n').unwrap();
        let kept = newest.len() / 1024;
        assert_eq!(kept, OUTBOX_BYTES / 1024);
        assert_eq!(newest, lines[3000 - kept..].concat());
        assert_eq!(
            note,
            format!(
                "[taskdeck run: {} bytes of output left out of this log: more than 512 KiB came \
                 between two reports]",
                (3000 - kept) * 1024
            )
        );
        // A report that did not get through goes first with the next...
        o.push(&[b"one\n"]);
        o.take().unwrap();
        o.push(&[b"two\n"]);
        o.give_back();
        assert_eq!(o.take().unwrap(), "one\ntwo\n");
        // ...within the bound, the oldest lines left out...
        let mut o = Outbox::default();
        o.push(&[&[b'a'; 300 * 1024], b"\n"]);
        o.take().unwrap();
        o.push_line(&[b'b'; 300 * 1024]);
        o.give_back();
        let again = o.take().unwrap();
        assert!(again.starts_with("[taskdeck run: 307201 bytes of output left out"));
        assert!(again.ends_with(&format!("\n{}\n", "b".repeat(300 * 1024))));
        // ...and all of it when lines came meanwhile that did not fit (it is older).
        o.push(&[b"old\n"]);
        o.take().unwrap();
        for line in &lines[..600] {
            o.push(&[line.as_bytes()]);
        }
        o.give_back();
        let again = o.take().unwrap();
        let (note, newest) = again.split_once('\n').unwrap();
        assert!(
            note.contains(&format!(" {} bytes", 4 + 88 * 1024)),
            "{note}"
        );
        assert_eq!(newest, lines[88..600].concat());
        // The last take took nothing: nothing to give back (not what an earlier one took).
        assert_eq!(o.take(), None);
        o.give_back();
        assert_eq!(o.take(), None);
        // Past the log's 16 MiB, everything is still sent: Taskdeck keeps the latest.
        let mut o = Outbox::default();
        let line = [&[b'c'; 256 << 10][..], b"\n"];
        let sent: usize = (0..80)
            .map(|_| {
                o.push(&line[..]);
                o.take().map_or(0, |t| t.len())
            })
            .sum();
        assert_eq!(sent, 80 * ((256 << 10) + 1));
    }

    /// What one way of reading left: the tail, the status taken, the standing line.
    type Left = (String, Option<StatusUpdate>, Option<Standing>);

    #[test]
    fn lines_leave_what_reading_every_line_in_turn_leaves() {
        // Pieces of what commands write: words, lines, blank lines, redraws, CRLF, and, less
        // often, progress in both forms, paths and dates (no progress), colours, a multibyte
        // character, and many blank lines at once.
        let common: [&[u8]; 8] = [b"y", b"build", b" ", b"\n", b"\n", b"\r", b"\r\n", b"\n\n"];
        let rare: [&[u8]; 10] = [
            b"42%",
            b"3/10",
            b"/usr/lib",
            b"2026/12/04",
            b"\x1b[31m",
            b"\x1b[0m",
            b"\r\r",
            "é".as_bytes(),
            b"100%",
            &[b'\n'; 45],
        ];
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = move |below: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % below as u64) as usize
        };
        for run in 0..400 {
            let mut output = Vec::new();
            // From one rare piece in two to one in a hundred.
            let rarity = [2, 10, 100][run % 3];
            for _ in 0..next(3000) {
                output.extend_from_slice(match next(rarity) {
                    0 => rare[next(rare.len())],
                    _ => common[next(common.len())],
                });
            }
            if run % 10 == 0 {
                // A line longer than a line keeps, to cut.
                output.extend(std::iter::repeat_n(b'x', 70_000));
                output.extend_from_slice(b" 7/9\n");
            }
            let mut slots = Vec::new();
            let mut lines = Lines::new(&mut slots, None);
            let (mut log, latest) = (
                OutputLog::new(None, TAIL_LINES, 0),
                Mutex::new(LatestStatus::default()),
            );
            let (mut plain, mut plain_stripper) =
                (ByteByByte::default(), EscapeStripper::default());
            let (mut plain_log, mut plain_latest) =
                (OutputLog::new(None, TAIL_LINES, 0), LatestStatus::default());
            let mut rest = &output[..];
            while !rest.is_empty() {
                let (read, after) =
                    rest.split_at(rest.len().min(1 + next([300, 3000, 20_000][run / 3 % 3])));
                rest = after;
                lines.feed(read, &mut log, &|t: &str| latest.lock().unwrap().note(t));
                plain.feed(
                    plain_stripper.strip(read),
                    &mut plain_log,
                    &mut plain_latest,
                );
                let fast: Left = (
                    log.tail(),
                    latest.lock().unwrap().take(),
                    slots[0].lock().unwrap().clone(),
                );
                let slow: Left = (plain_log.tail(), plain_latest.take(), plain.standing());
                assert_eq!(
                    fast,
                    slow,
                    "run {run}, after {} bytes",
                    output.len() - rest.len()
                );
            }
        }
    }
}
