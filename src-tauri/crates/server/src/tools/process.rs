//! Child processes in their own process group, so a cancel or timeout stops the command and
//! everything it started: SIGTERM to the group, SIGKILL after a grace period; [`wait_or_stop`]
//! waits for a command's end and says how it ended. Also the line
//! reader both `run_command` and `taskdeck run` use for bounded, non-UTF-8-safe output, the
//! quoting that shows an argv as one shell line, and what an environment variable's name may be.

use std::time::Duration;

use nix::{
    sys::signal::{Signal, killpg},
    unistd::Pid,
};
use tokio::io::{AsyncRead, AsyncReadExt};

/// True when a process's environment can hold a variable named `name`: `execve` takes
/// `NAME=value` strings, so a name is not empty and holds no `=` and no NUL byte.
pub fn is_env_name(name: &str) -> bool {
    !name.is_empty() && !name.contains(['=', '\0'])
}

/// `argv` as a POSIX shell would read it back: words of plain characters as they are, others
/// in single quotes (`sh -c 'echo hi'`), and words holding a control or an invisible formatting
/// character (a newline, U+202E) in bash's `$'...'` with those escaped (`$'a\nb'`), so that
/// what a human is shown is all of the command, on one line, in the order it runs. For showing
/// a command to a human and naming it.
pub fn shell_line<S: AsRef<str>>(argv: &[S]) -> String {
    argv.iter()
        .map(|a| shell_word(a.as_ref()))
        .collect::<Vec<_>>()
        .join(" ")
}

/// `argv` as a POSIX shell line that every `sh` (dash as bash) reads back as exactly `argv`:
/// each word plain or in single quotes (a `'` in it written `'\''`), line breaks and other
/// hidden characters kept as they are. What the policy matches for an argument list: the
/// same text as a `command` call is the same call. [`shell_line`] is what people read.
pub fn posix_shell_line<S: AsRef<str>>(argv: &[S]) -> String {
    argv.iter()
        .map(|a| {
            let a = a.as_ref();
            if !a.is_empty()
                && a.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c))
            {
                a.to_string()
            } else {
                format!("'{}'", a.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// One word of [`shell_line`].
pub fn shell_word(a: &str) -> String {
    if !a.is_empty()
        && a.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c))
    {
        return a.to_string();
    }
    if !a.chars().any(hidden) {
        return format!("'{}'", a.replace('\'', r"'\''"));
    }
    let mut out = String::from("$'");
    for c in a.chars() {
        match c {
            '\n' => out.push_str(r"\n"),
            '\t' => out.push_str(r"\t"),
            '\r' => out.push_str(r"\r"),
            '\\' => out.push_str(r"\\"),
            '\'' => out.push_str(r"\'"),
            c if hidden(c) && (c as u32) < 0x100 => out.push_str(&format!("\\x{:02x}", c as u32)),
            c if hidden(c) && (c as u32) > 0xFFFF => out.push_str(&format!("\\U{:08x}", c as u32)),
            c if hidden(c) => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

/// A shell script (`run_command`'s `command`) as a human is shown it: its lines and tabs as
/// they are, every other hidden character (see [`shell_word`]) escaped as `\u{...}`.
pub fn shown_script(script: &str) -> String {
    script
        .chars()
        .map(|c| match c {
            '\n' | '\t' => c.to_string(),
            c if hidden(c) => format!("\\u{{{:x}}}", c as u32),
            c => c.to_string(),
        })
        .collect()
}

/// Characters a human cannot see for what they are: controls (newlines, escapes), line and
/// paragraph separators (shown as a line break or as nothing), the invisible formatting
/// characters that reorder or hide text (bidi overrides and isolates, zero-width characters),
/// the blank letters that draw as nothing (the Hangul fillers, the Mongolian vowel separator),
/// the interlinear annotation marks, and the tag characters (U+E0000 to U+E007F: invisible
/// ASCII look-alikes that can smuggle text past a reader). Variation selectors stay: they pick
/// an emoji's look.
pub fn hidden(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{00AD}' | '\u{061C}' | '\u{115F}' | '\u{1160}' | '\u{180E}'
            | '\u{200B}'..='\u{200F}' | '\u{2028}'..='\u{202E}' | '\u{2060}'..='\u{2069}'
            | '\u{3164}' | '\u{FEFF}' | '\u{FFA0}' | '\u{FFF9}'..='\u{FFFB}'
            | '\u{E0000}'..='\u{E007F}')
}

/// Longest line handed on, in bytes; longer runs are split ([`line_split`]).
pub const MAX_LINE_BYTES: usize = 64 * 1024;

/// Where to split `line`, longer than `max` bytes, so that its first piece (`line[..at]`) is at
/// most `max` bytes and the second does not start inside a UTF-8 character: `max`, moved back
/// to the start of the character it falls in (`max` itself when `line` is not UTF-8 there).
/// The lines split are free of escape sequences ([`EscapeStripper`]).
///
/// [`EscapeStripper`]: crate::tools::output::EscapeStripper
pub fn line_split(line: &[u8], max: usize) -> usize {
    let at = max.min(line.len());
    // A UTF-8 character is at most 4 bytes: its first byte is at most 3 back.
    let back = line[..at]
        .iter()
        .rev()
        .take(3)
        .take_while(|&&b| b & 0xc0 == 0x80)
        .count();
    let lead = at - back;
    match at < line.len() && line[at] & 0xc0 == 0x80 && lead > 0 && line[lead - 1] >= 0xc0 {
        true => lead - 1,
        false => at,
    }
}

/// Stops the process group `pgid` (the child's pid, see `Command::process_group(0)`) and every
/// process tagged `TASKDECK_TASK_ID=<tag>` (a descendant that left the group with `setsid`
/// keeps the tag in its environment): SIGTERM, then SIGKILL to what is left once `child` has
/// exited or after `grace`, and again 200 ms later. Returns the child's exit status when known.
pub async fn stop_group(
    child: &mut tokio::process::Child,
    tag: &str,
    grace: Duration,
) -> Option<std::process::ExitStatus> {
    let pgid = child.id().map(|p| Pid::from_raw(p as i32));
    if let Some(pgid) = pgid {
        let _ = killpg(pgid, Signal::SIGTERM);
    }
    signal_tagged(tag, Signal::SIGTERM);
    let status = match tokio::time::timeout(grace, child.wait()).await {
        Ok(s) => s.ok(),
        Err(_) => None,
    };
    // Whatever is left (children that ignored SIGTERM, or the child itself) dies now; a second
    // pass catches what a SIGTERM handler started while the first one ran.
    if let Some(pgid) = pgid {
        let _ = killpg(pgid, Signal::SIGKILL);
    }
    signal_tagged(tag, Signal::SIGKILL);
    tokio::time::sleep(Duration::from_millis(200)).await;
    signal_tagged(tag, Signal::SIGKILL);
    match status {
        Some(s) => Some(s),
        None => child.wait().await.ok(),
    }
}

/// How a command in its own process group ended ([`wait_or_stop`]).
#[derive(Debug)]
pub enum Ended {
    /// It exited on its own: its exit status (`None` when it could not be read).
    Exited(Option<std::process::ExitStatus>),
    /// The cancel took effect while it ran: it was stopped; its status after the stop.
    Cancelled(Option<std::process::ExitStatus>),
    /// The timeout passed while it ran: it was stopped; its status after the stop.
    TimedOut(Option<std::process::ExitStatus>),
}

impl Ended {
    /// The command's exit status, however it ended (`None` when unknown).
    pub fn status(&self) -> Option<std::process::ExitStatus> {
        match self {
            Ended::Exited(s) | Ended::Cancelled(s) | Ended::TimedOut(s) => *s,
        }
    }
}

/// Waits for `child` (started with `process_group(0)`, its processes tagged `tag`) to exit,
/// calling `tick` every `every` meanwhile (the first call at once), and while it is being
/// stopped too (a command may write on through its grace). When `cancelled` resolves
/// or `timeout` passes first, stops its group and its tagged processes ([`stop_group`], SIGKILL
/// after `grace`): `Cancelled` or `TimedOut`. A child that had already exited by then (its
/// status is there to be read, even if its exit had not been noticed yet) is left alone and
/// ended on its own: `Exited`, with its status.
pub async fn wait_or_stop<T>(
    child: &mut tokio::process::Child,
    tag: &str,
    cancelled: impl Future<Output = ()>,
    timeout: Option<Duration>,
    grace: Duration,
    every: Duration,
    mut tick: impl FnMut() -> T,
) -> Ended
where
    T: Future<Output = ()>,
{
    let deadline = async {
        match timeout {
            Some(t) => tokio::time::sleep(t).await,
            None => std::future::pending().await,
        }
    };
    tokio::pin!(deadline, cancelled);
    let mut ticks = tokio::time::interval(every);
    let end: fn(_) -> Ended = loop {
        tokio::select! {
            biased;
            status = child.wait() => return Ended::Exited(status.ok()),
            _ = &mut cancelled => break Ended::Cancelled,
            _ = &mut deadline => break Ended::TimedOut,
            _ = ticks.tick() => tick().await,
        }
    };
    // The exit may have happened before the cancel or timeout without being noticed yet (the
    // runtime learns of it from a signal or a pidfd event that can come after the cancel's
    // wake-up): a non-blocking wait tells, and only a child still running now is stopped.
    if let Ok(Some(status)) = child.try_wait() {
        return Ended::Exited(Some(status));
    }
    // The command may also be exiting already, past the point a signal can end it (the kernel
    // delivers none to a process inside exit): it then ends with its own exit code although
    // SIGTERM was sent. When SIGTERM would have killed it (not caught, not ignored), an exit
    // with a code (not by a signal) says it ended on its own; a command that catches SIGTERM
    // and exits with a code was stopped by the cancel.
    let term_is_fatal = child.id().is_some_and(term_is_fatal);
    let stopping = stop_group(child, tag, grace);
    tokio::pin!(stopping);
    let stopped = loop {
        tokio::select! {
            biased;
            status = &mut stopping => break status,
            _ = ticks.tick() => tick().await,
        }
    };
    match stopped {
        Some(status) if term_is_fatal && status.code().is_some() => Ended::Exited(Some(status)),
        status => end(status),
    }
}

/// True when SIGTERM ends process `pid` (neither caught nor ignored, as `/proc/<pid>/status`
/// lists them in `SigCgt` and `SigIgn`); false when it does not or cannot be read.
fn term_is_fatal(pid: u32) -> bool {
    let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
        return false;
    };
    let mask = |field: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(field))
            .and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
    };
    let term = 1u64 << (Signal::SIGTERM as i32 - 1);
    match (mask("SigCgt:"), mask("SigIgn:")) {
        (Some(caught), Some(ignored)) => (caught | ignored) & term == 0,
        _ => false,
    }
}

/// The environment variable that tags every process a task starts with its taskId; processes
/// inherit it, so whatever a command leaves behind can be found after a crash.
pub const TASK_ID_ENV: &str = "TASKDECK_TASK_ID";

/// SIGKILLs every process of this user whose environment carries `TASKDECK_TASK_ID=<task_id>`
/// (read from `/proc/<pid>/environ`): what a task's command left running when Taskdeck died.
/// Returns how many processes were signalled.
pub fn kill_tagged(task_id: &str) -> usize {
    signal_tagged(task_id, Signal::SIGKILL)
}

/// Sends `signal` to every process of this user tagged `TASKDECK_TASK_ID=<tag>`, except this
/// one. Returns how many were signalled.
pub fn signal_tagged(tag: &str, signal: Signal) -> usize {
    let tag = format!("{TASK_ID_ENV}={tag}");
    let me = std::process::id() as i32;
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return 0;
    };
    let mut signalled = 0;
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<i32>().ok())
        else {
            continue;
        };
        if pid == me {
            continue;
        }
        let Ok(environ) = std::fs::read(entry.path().join("environ")) else {
            continue;
        };
        if environ.split(|&b| b == 0).any(|kv| kv == tag.as_bytes())
            && nix::sys::signal::kill(Pid::from_raw(pid), signal).is_ok()
        {
            signalled += 1;
        }
    }
    signalled
}

/// Like [`stop_group`] for a child that stays in our process group (so that it can read the
/// terminal): SIGTERM to every process tagged `tag`, then SIGKILL to what is left after `grace`.
pub async fn stop_tagged(
    child: &mut tokio::process::Child,
    tag: &str,
    grace: Duration,
) -> Option<std::process::ExitStatus> {
    signal_tagged(tag, Signal::SIGTERM);
    let status = tokio::time::timeout(grace, child.wait())
        .await
        .ok()
        .and_then(Result::ok);
    signal_tagged(tag, Signal::SIGKILL);
    match status {
        Some(s) => Some(s),
        None => child.wait().await.ok(),
    }
}

/// What [`read_lines`] reports of a command's output, escape sequences taken out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output<'a> {
    /// A line ended by `\n` (or `\r\n`): its text since its start or its last redraw.
    Line(&'a [u8]),
    /// A drawing ended by a lone `\r`: a progress bar redrawn in place starts over after it.
    Redraw(&'a [u8]),
    /// What the current line (or drawing) holds so far, after a read that ended inside it or
    /// right after its `\r`: a prompt, or a progress bar's latest frame. Reported again, whole
    /// (this as its start), as a `Line` or `Redraw` once the next byte says how it ended.
    Partial(&'a [u8]),
}

/// Reads `reader` and calls `on_output` for each line and each `\r` redraw of a line, without
/// its escape sequences ([`EscapeStripper`]) and its `\n`, `\r\n` or `\r`, and for what a read
/// left unfinished ([`Output`]). A line longer than [`MAX_LINE_BYTES`] is split ([`line_split`]).
/// Until end of file or an error.
///
/// [`EscapeStripper`]: crate::tools::output::EscapeStripper
pub async fn read_lines<R: AsyncRead + Unpin>(
    mut reader: R,
    mut on_output: impl FnMut(Output<'_>),
) {
    let mut buf = vec![0u8; 16 * 1024];
    let mut line: Vec<u8> = Vec::new();
    let mut stripper = crate::tools::output::EscapeStripper::default();
    // A `\r` seen last: a redraw, unless a `\n` follows.
    let mut after_cr = false;
    loop {
        let n = match reader.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        for &b in stripper.strip(&buf[..n]) {
            if std::mem::take(&mut after_cr) && b != b'\n' {
                on_output(Output::Redraw(&line));
                line.clear();
            }
            match b {
                b'\n' => {
                    on_output(Output::Line(&line));
                    line.clear();
                }
                b'\r' => after_cr = true,
                b => {
                    line.push(b);
                    if line.len() > MAX_LINE_BYTES {
                        let at = line_split(&line, MAX_LINE_BYTES);
                        on_output(Output::Line(&line[..at]));
                        line.drain(..at);
                    }
                }
            }
        }
        // A drawing whose `\r` came last is whole, but is a redraw only if no `\n` follows.
        if !line.is_empty() {
            on_output(Output::Partial(&line));
        }
    }
    if after_cr {
        on_output(Output::Redraw(&line));
    } else if !line.is_empty() {
        on_output(Output::Line(&line));
    }
}

/// The name of the signal that killed a process whose exit status is `status` (`"SIGTERM"`;
/// the number, as text, for a signal without a name); `None` when it exited with a code or its
/// status is unknown. A result's `signal` field.
pub fn killing_signal(status: Option<std::process::ExitStatus>) -> Option<String> {
    use std::os::unix::process::ExitStatusExt;
    let sig = status?.signal()?;
    Some(
        nix::sys::signal::Signal::try_from(sig)
            .map_or_else(|_| sig.to_string(), |n| n.as_str().to_string()),
    )
}

/// Describes how a process ended, as the end of a sentence that starts with the command:
/// `exited with code N`, `was killed by signal 15 (SIGTERM)`. Returns the exit code too.
pub fn describe_exit(status: Option<std::process::ExitStatus>) -> (Option<i32>, String) {
    use std::os::unix::process::ExitStatusExt;
    match status {
        Some(s) => match (s.code(), s.signal()) {
            (Some(c), _) => (Some(c), format!("exited with code {c}")),
            (None, Some(sig)) => {
                let name = nix::sys::signal::Signal::try_from(sig)
                    .map(|n| format!(" ({n})"))
                    .unwrap_or_default();
                (None, format!("was killed by signal {sig}{name}"))
            }
            _ => (None, "ended".into()),
        },
        None => (None, "ended (exit status unknown)".into()),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::{Ended, wait_or_stop};

    /// `/bin/sh -c SCRIPT` in its own process group, as `run_command` starts commands.
    fn spawn(script: &str) -> tokio::process::Child {
        tokio::process::Command::new("/bin/sh")
            .args(["-c", script])
            .process_group(0)
            .spawn()
            .unwrap()
    }

    /// Waits until process `pid` has exited and is not reaped yet (a zombie: state `Z`). It
    /// blocks the (current-thread) runtime meanwhile, so the runtime has not noticed the exit
    /// (neither its SIGCHLD nor its pidfd event) when the caller looks next.
    fn exited_unreaped(pid: u32) {
        let zombie = || {
            std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
                s.rsplit_once(')')
                    .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'))
            })
        };
        while !zombie() {
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// [`wait_or_stop`] with a cancel that is there from the start, and no timeout.
    async fn cancelled_at_once(child: &mut tokio::process::Child) -> Ended {
        let tag = format!("test-cancelled-at-once-{}", child.id().unwrap_or(0));
        let (grace, every) = (Duration::from_secs(5), Duration::from_millis(250));
        wait_or_stop(
            child,
            &tag,
            std::future::ready(()),
            None,
            grace,
            every,
            || async {},
        )
        .await
    }

    /// A cancel that takes effect once the command has exited finds it exited: it ended on its
    /// own, with its exit code. Each round sets up exactly the race: the command has exited,
    /// the runtime has not noticed yet, and the cancel is ready when `wait_or_stop` first looks.
    #[tokio::test]
    async fn a_command_that_exited_before_the_cancel_took_effect_ended_on_its_own() {
        for round in 0..20 {
            let code = if round % 2 == 0 { 0 } else { 3 };
            let mut child = spawn(&format!("exit {code}"));
            exited_unreaped(child.id().unwrap());
            let ended = cancelled_at_once(&mut child).await;
            assert!(
                matches!(ended, Ended::Exited(Some(s)) if s.code() == Some(code)),
                "round {round} (exit {code}): {ended:?}"
            );
        }
    }

    /// A command that is past the point SIGTERM can end it (here: it holds SIGTERM blocked, as
    /// a process inside exit does) and then exits with its own code ended on its own: `Exited`.
    /// One that catches SIGTERM and exits with a code was stopped by the cancel: `Cancelled`.
    #[tokio::test]
    async fn a_command_the_cancel_could_not_end_ended_on_its_own() {
        let mut blocked = tokio::process::Command::new("python3")
            .args([
                "-c",
                "import signal, sys, time\n\
                 signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGTERM])\n\
                 print('ready', flush=True)\n\
                 time.sleep(0.3)\n\
                 sys.exit(3)",
            ])
            .stdout(std::process::Stdio::piped())
            .process_group(0)
            .spawn()
            .unwrap();
        let mut out = tokio::io::BufReader::new(blocked.stdout.take().unwrap());
        let mut line = String::new();
        tokio::io::AsyncBufReadExt::read_line(&mut out, &mut line)
            .await
            .unwrap();
        let ended = cancelled_at_once(&mut blocked).await;
        assert!(
            matches!(ended, Ended::Exited(Some(s)) if s.code() == Some(3)),
            "{ended:?}"
        );
        let mut trapping = spawn("trap 'exit 5' TERM; echo ready; while :; do sleep 0.05; done");
        tokio::time::sleep(Duration::from_millis(200)).await;
        let ended = cancelled_at_once(&mut trapping).await;
        assert!(
            matches!(ended, Ended::Cancelled(Some(s)) if s.code() == Some(5)),
            "{ended:?}"
        );
    }

    /// A command still running when the cancel takes effect is stopped: `Cancelled`.
    #[tokio::test]
    async fn a_command_running_when_the_cancel_takes_effect_is_stopped() {
        use std::os::unix::process::ExitStatusExt;
        let mut child = spawn("sleep 30");
        let ended = cancelled_at_once(&mut child).await;
        assert!(
            matches!(ended, Ended::Cancelled(Some(s)) if s.signal() == Some(15)),
            "{ended:?}"
        );
    }

    #[test]
    fn a_long_line_is_not_split_inside_a_character() {
        use super::line_split;
        // Each character of 1 to 4 bytes, wherever it falls around the limit.
        for c in ["é", "€", "😀"] {
            for pad in 0..4 {
                let line = format!("{}{}", "x".repeat(pad), c.repeat(40));
                let at = line_split(line.as_bytes(), 20);
                assert!(
                    line.is_char_boundary(at) && at <= 20 && at > 16,
                    "{c} {pad}: {at}"
                );
            }
        }
        // Not UTF-8 there: where the limit falls.
        assert_eq!(line_split(&[0x80; 30], 20), 20);
    }

    /// What [`super::read_lines`] tells of `reader`: "line …", "redraw …" or "partial …" each.
    fn told(reader: impl tokio::io::AsyncRead + Unpin) -> Vec<String> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let mut seen = Vec::new();
        rt.block_on(super::read_lines(reader, |out| {
            seen.push(match out {
                super::Output::Line(l) => format!("line {}", String::from_utf8_lossy(l)),
                super::Output::Redraw(l) => format!("redraw {}", String::from_utf8_lossy(l)),
                super::Output::Partial(l) => format!("partial {}", String::from_utf8_lossy(l)),
            })
        }));
        seen
    }

    #[test]
    fn lines_redraws_and_unfinished_lines_are_told_apart() {
        let input = "a\r\nb\r 1/3\r\x1b[2K 2/3\r 3/3\n\r\rdone";
        assert_eq!(
            told(input.as_bytes()),
            [
                "line a",
                "redraw b",
                "redraw  1/3",
                "redraw  2/3",
                "line  3/3",
                "redraw ",
                "redraw ",
                "partial done",
                "line done"
            ]
        );
    }

    /// A drawing is told at the end of the read that brought it, whether its `\r` came before
    /// it or after it: the status and the log show the bar's latest frame, not the one before.
    #[test]
    fn a_drawing_is_told_when_its_read_ends() {
        use tokio::io::AsyncReadExt;
        let reads = "\r[1/3] a"
            .as_bytes()
            .chain("\r[2/3] b\r".as_bytes())
            .chain("\n".as_bytes());
        assert_eq!(
            told(reads),
            [
                "redraw ",
                "partial [1/3] a",
                "redraw [1/3] a",
                "partial [2/3] b",
                "line [2/3] b"
            ]
        );
    }

    #[test]
    fn read_lines_gives_visible_text_split_between_whole_characters() {
        use rand::seq::IndexedRandom;
        let max = super::MAX_LINE_BYTES;
        // (as written, as seen)
        let parts = [
            ("a", "a"),
            ("é", "é"),
            ("€", "€"),
            ("😀", "😀"),
            ("\x1b[31m", ""),
            ("\x1b[0m", ""),
            ("\x1b]8;;https://x.org\x07", ""),
            (" ", " "),
        ];
        let mut rng = rand::rng();
        let (mut line, mut seen) = (String::new(), String::new());
        for _ in 0..60_000 {
            let (written, shown) = parts.choose(&mut rng).unwrap();
            line.push_str(written);
            seen.push_str(shown);
        }
        // An escape longer than a line may be, cut by every read: an inline image (OSC 1337).
        let image = format!(
            "img:\x1b]1337;File=inline=1:{}\x07 after",
            "QUJD".repeat(40_000)
        );
        let input = format!("{line}\n{image}\n{}\nend", "y".repeat(max));
        let mut lines = Vec::new();
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        rt.block_on(super::read_lines(input.as_bytes(), |out| {
            if let super::Output::Line(l) = out {
                lines.push(l.to_vec())
            }
        }));
        let (last, rest) = lines.split_last().unwrap();
        let (exact, rest) = rest.split_last().unwrap();
        let (image, pieces) = rest.split_last().unwrap();
        assert_eq!((&last[..], exact.len()), (&b"end"[..], max));
        assert_eq!(std::str::from_utf8(image).unwrap(), "img: after");
        assert_eq!(pieces.concat(), seen.as_bytes());
        assert!(pieces.len() > 1);
        for (i, piece) in pieces.iter().enumerate() {
            std::str::from_utf8(piece).expect("whole characters");
            assert!(piece.len() <= max && (piece.len() > max - 4 || i == pieces.len() - 1));
        }
    }

    #[test]
    fn shell_line_shows_hidden_characters_escaped_on_one_line() {
        assert_eq!(
            super::shell_line(&["ls", "x'\n\nin /home/me/safe\n"]),
            r"ls $'x\'\n\nin /home/me/safe\n'"
        );
        assert_eq!(super::shell_word("a\u{202E}b\u{1b}"), r"$'a\u202eb\x1b'");
        // Past the BMP (a tag character), bash's `\U` with 8 digits.
        assert_eq!(super::shell_word("a\u{E0041}"), r"$'a\U000e0041'");
    }

    #[test]
    fn shell_line_quotes_what_a_shell_would_split_or_expand() {
        assert_eq!(
            super::shell_line(&["sh", "-c", "echo hi; echo 3/4"]),
            "sh -c 'echo hi; echo 3/4'"
        );
        assert_eq!(
            super::shell_line(&["printf", "it's", "", "a=b"]),
            r"printf 'it'\''s' '' a=b"
        );
    }
}
