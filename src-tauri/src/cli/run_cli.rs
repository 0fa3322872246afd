//! `taskdeck run [--name NAME] [--wait] -- CMD ARGS...`: wraps any long command as an external
//! job. The command's output streams to the terminal as usual; its latest line and parsed
//! progress go to Taskdeck; a cancel pressed in the window stops the command's whole process
//! group; the exit code is the command's. When Taskdeck is not running, the command runs anyway
//! (or, with `--wait`, `taskdeck run` waits for Taskdeck first). The job's start carries a random
//! `Idempotency-Key`; a start that fails on the way (the connection dropped or was reset, a 5xx)
//! is sent again with the same key a few times, so a retried start never makes a second job.
//!
//! Where our stdout or stderr is a terminal, the command's stream writes to a pseudo-terminal of the
//! same size, so it behaves as it would without `taskdeck run` (colours, progress bars redrawn
//! with `\r`, line buffering); the bytes are passed through untouched, and Taskdeck gets the
//! latest line, including each `\r` redraw, so a progress bar's `12/50` shows live. Its other
//! streams are pipes (one shared pipe when ours are one file), copied byte for byte and read
//! into lines the same way. A resize of our terminal resizes the command's.
//!
//! Ctrl-Z (SIGTSTP) suspends the command and `taskdeck run` as it would the command alone;
//! first the job is told ("Suspended", and a heartbeat of a day, so it is not counted lost
//! while stopped), and told again when `fg` or `bg` resumes it.

use std::{
    io::IsTerminal,
    os::{
        fd::{AsFd, OwnedFd},
        unix::process::ExitStatusExt,
    },
    path::Path,
    process::{ExitCode, Stdio},
    time::{Duration, Instant},
};

use nix::sys::signal::Signal;
use serde_json::{Map, Value, json};
use tokio::signal::unix::{Signal as SignalStream, SignalKind, signal};

use super::run_job::{
    FINAL_REPORT_PATIENCE, FINAL_REPORT_PATIENCE_STOPPING, HEARTBEAT_MS, JobLink,
    SUSPENDED_HEARTBEAT_MS,
};
use super::run_output::{Output, OutputCapture, Standing, release_held_messages, say};
use taskdeck_server::adapters::task_title::one_line;
use taskdeck_server::tools::{
    output::{LatestStatus, MAX_STATUS_CHARS, StatusUpdate},
    process::{
        TASK_ID_ENV, describe_exit, killing_signal, shell_line, signal_tagged, stop_group,
        stop_tagged,
    },
};

/// How long the output still on its way to a slow consumer may take once `taskdeck run` was
/// told to stop (SIGTERM, SIGHUP, Ctrl-C): it should go soon.
const DELIVERY_WHEN_STOPPING: Duration = Duration::from_secs(1);

/// What `taskdeck run` needs.
pub struct RunArgs {
    /// `--name`: the job's name (credentials masked); `None`: the command line.
    pub name: Option<String>,
    /// `--wait`: when Taskdeck is not running, wait for it instead of running untracked.
    pub wait: bool,
    /// `--port` / `TASKDECK_PORT`; without it, the port of the Taskdeck running on `data_dir`
    /// (looked up again while `--wait` waits), else the default port.
    pub port: Option<u16>,
    /// The data dir, given or default: where the running Taskdeck's port is looked up.
    pub data_dir: std::path::PathBuf,
    /// `--token` / `TASKDECK_TOKEN`; `None`: the admin token file.
    pub token: Option<String>,
    /// The command and its arguments, at least the command.
    pub command: Vec<String>,
}

/// Runs the command; returns its exit code (128 + signal when killed; 1 when it cannot start).
pub fn run(args: RunArgs, config_dir: &Path) -> ExitCode {
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("taskdeck run: {e}");
            return ExitCode::from(1);
        }
    };
    let code = rt.block_on(run_async(args, config_dir));
    // An output's reader may still be blocked on a terminal or pipe that a background child of
    // the command keeps open, and its writer on a consumer we stopped waiting for: do not
    // wait for them (without `taskdeck run` the shell would not).
    rt.shutdown_background();
    code
}

/// The run in steps: start the job, start the command, copy its output, supervise it until it
/// ends, stop what it left behind, report the end, and return its exit code.
async fn run_async(args: RunArgs, config_dir: &Path) -> ExitCode {
    // The job's name is stored and shown, and is in its result: its credentials are masked,
    // each argument's on its own (quoted for a shell line, `$'…\n…'` or `'\''`, they would
    // hide from a mask of the whole line).
    let name = match &args.name {
        Some(name) => taskdeck_server::tools::secrets::mask_string(name).unwrap_or(name.clone()),
        None => shell_line(&super::run_job::masked(&args.command)),
    };
    let link = JobLink::start(&args, config_dir, &name).await;
    if let Some(id) = &link.job {
        eprintln!(
            "taskdeck run: tracking as job {id} (watch it at {}/#task={id})",
            link.endpoint().base
        );
    }
    // Listening before the command starts: a Ctrl-C, SIGTERM or hang-up from then on is seen.
    let mut stops = StopSignals::listen();
    let mut launched = match Launched::spawn(&args.command, link.job.as_deref()) {
        Ok(launched) => launched,
        Err(e) => return link.could_not_start(&args.command[0], e).await,
    };
    let mut output =
        OutputCapture::start(std::mem::take(&mut launched.outputs), link.job.is_some());
    let mut ending = supervise(&mut launched, &link, &output, &mut stops).await;
    ending
        .sweep_leftovers(&launched.tag, launched.interactive)
        .await;
    output.read_rest().await;
    let duration_ms = (ending.ended_at - launched.started).as_millis() as u64;
    let tail = output.log.lock().unwrap().tail();
    // What the output said after the last report (its last line, often): the end's report
    // carries it, so the job's last status message is the output's last line.
    let last_status = output.latest.lock().unwrap().take();
    let last_output = output
        .outbox
        .as_ref()
        .and_then(|o| o.lock().unwrap().take());
    report_end(
        &link,
        &ending,
        (&name, args.name.is_none()),
        duration_ms,
        tail,
        (last_status, last_output),
        &mut stops,
    )
    .await;
    // The job has its end; what is still on its way to a slow consumer of ours (`| less`)
    // is written before we exit, unless a signal says to stop. Told to stop already (during
    // the run, or while sending the end), it gets a moment only.
    if ending.received.is_some() || stops.heard {
        output
            .delivered(tokio::time::sleep(DELIVERY_WHEN_STOPPING), false)
            .await;
    } else {
        output.delivered(stops.any(), !ending.cancelled).await;
    }
    ending.exit_code()
}

/// The job's final report: a cancel, or the result (`exitCode`, `durationMs` and the output's
/// `tail`, `signal` for a command killed by one; `isError` unless the exit code is 0), whose
/// text names the job `(name, is_command)`: a command line in backticks, a `--name` as given;
/// with `last` status and output (see
/// [`status_report`]).
/// Sent until Taskdeck records it or a signal in `stops` gives up ([`JobLink::report_final`]);
/// not sent when Taskdeck already recorded the job's end ([`Ending::settled`]).
async fn report_end(
    link: &JobLink,
    ending: &Ending,
    (name, is_command): (&str, bool),
    duration_ms: u64,
    tail: String,
    last: (Option<StatusUpdate>, Option<String>),
    stops: &mut StopSignals,
) {
    let mut report = status_report(last.0, last.1);
    // A signal already received has done its part (it ended the command); a new one gives up.
    // Told to stop (SIGTERM, SIGHUP): the end is tried for a short while only.
    stops.drain();
    let patience = match ending.received {
        Some(_) => FINAL_REPORT_PATIENCE_STOPPING,
        None => FINAL_REPORT_PATIENCE,
    };
    if ending.settled {
        return;
    }
    if ending.cancelled {
        report.insert("cancelled".into(), json!(true));
        // Stopped from here, not by a cancel in Taskdeck: the job's last word says how.
        if let Some(why) = ending.received.and_then(stopped_by) {
            report.insert("statusMessage".into(), json!(why));
        }
        link.report_final(Value::Object(report), patience, stops.any())
            .await;
        return;
    }
    let (code, how) = describe_exit(ending.status);
    // The first line is the job's status message: the name on one line, so a name with line
    // breaks or escape sequences (a default name from a multi-line command) does not cut it.
    let after = format!(" {how} after {:.1} s.", duration_ms as f64 / 1000.0);
    let name = fitting_name(name, &after);
    let text = match is_command {
        true => format!("`{name}`{after}\n{tail}"),
        false => format!("{name}{after}\n{tail}"),
    };
    let mut result = json!({
        "content": [{"type": "text", "text": text}],
        "structuredContent": {"exitCode": code, "durationMs": duration_ms, "tail": tail},
        "isError": code != Some(0)
    });
    if let Some(signal) = killing_signal(ending.status) {
        result["structuredContent"]["signal"] = json!(signal);
    }
    report.insert("result".into(), result);
    link.report_final(Value::Object(report), patience, stops.any())
        .await;
}

/// Why a run that `signal` (received by `taskdeck run`) stopped ended, for the job's status
/// message; `None` for another signal.
fn stopped_by(signal: i32) -> Option<&'static str> {
    Some(match signal {
        nix::libc::SIGINT => "Interrupted: `taskdeck run` got SIGINT (Ctrl-C)",
        nix::libc::SIGTERM => "Stopped: `taskdeck run` was terminated (SIGTERM)",
        nix::libc::SIGHUP => "Stopped: the terminal of `taskdeck run` closed (SIGHUP)",
        _ => return None,
    })
}

/// `name` on one line, cut with "…" so that "`name`" and `after` fit in a status message
/// ([`MAX_STATUS_CHARS`] characters): the end of a long command line must not cut off how the
/// command ended.
fn fitting_name(name: &str, after: &str) -> String {
    let name = one_line(name);
    let room = MAX_STATUS_CHARS.saturating_sub(after.chars().count() + 2);
    match name.chars().count() > room {
        true => name
            .chars()
            .take(room.saturating_sub(1))
            .chain(['…'])
            .collect(),
        false => name,
    }
}

/// The report fields (`POST /v1/jobs/{id}/report`) for what the command's output said since
/// the last report: `statusMessage` (its latest line), and `progress` `{current, total}` when a
/// line showed some (none when nothing came: `update` is `None`); and `output`, its lines for
/// the job's log ([`Outbox::take`](super::run_output::Outbox::take)).
fn status_report(update: Option<StatusUpdate>, output: Option<String>) -> Map<String, Value> {
    let mut report = Map::new();
    if let Some(text) = output {
        report.insert("output".into(), json!(text));
    }
    if let Some(u) = update {
        report.insert("statusMessage".into(), json!(u.message));
        if let Some((current, total)) = u.progress {
            report.insert(
                "progress".into(),
                json!({"current": current, "total": total}),
            );
        }
    }
    report
}

/// The running command and how it was started.
struct Launched {
    child: tokio::process::Child,
    /// The `TASK_ID_ENV` value everything the command starts carries: the job's id, else
    /// `local-` and a random id.
    tag: String,
    /// Standard input is a terminal: the command shares our process group.
    interactive: bool,
    /// The read sides of the command's pseudo-terminal and pipes, until the output capture
    /// takes them.
    outputs: Vec<Output>,
    /// The command's pseudo-terminal (a copy of its master side) and whether it stands for
    /// our stderr (else our stdout), to give it our terminal's size when that changes.
    terminal: Option<(OwnedFd, bool)>,
    started: Instant,
}

impl Launched {
    /// Starts `command` (program and arguments) with our stdin; each of its stdout and stderr
    /// on a pseudo-terminal of our terminal's size where ours is a terminal, else on a pipe
    /// (one for both when ours are one file); in a process group of its own unless stdin is a
    /// terminal. Errors: the spawn's.
    fn spawn(command: &[String], job: Option<&str>) -> std::io::Result<Launched> {
        let mut cmd = tokio::process::Command::new(&command[0]);
        // Everything the command starts carries this tag, so all of it can be stopped.
        let tag = job
            .map(String::from)
            .unwrap_or_else(|| format!("local-{}", uuid::Uuid::new_v4().simple()));
        cmd.args(&command[1..])
            .stdin(Stdio::inherit())
            .env(TASK_ID_ENV, &tag);
        // With a terminal on stdin the command stays in our (foreground) process group, so it can
        // read the terminal and gets Ctrl-C as it would without `taskdeck run`; it is stopped
        // through its tag. Otherwise it gets a process group of its own, stopped as a whole.
        let interactive = std::io::stdin().is_terminal();
        if !interactive {
            cmd.process_group(0);
        }
        // The command is stopped when its runner dies, `kill -9` included (a signal we catch
        // stops it ourselves): nothing else would, and Taskdeck reports the job lost while it
        // runs on untracked. The runtime runs on this thread, which lives as long as we do.
        #[cfg(target_os = "linux")]
        {
            let runner = nix::unistd::getpid();
            // SAFETY: prctl, getppid and raise are async-signal-safe and allocate nothing.
            unsafe {
                cmd.pre_exec(move || {
                    if nix::libc::prctl(nix::libc::PR_SET_PDEATHSIG, nix::libc::SIGTERM) != 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    // The runner died before the line above took effect.
                    if nix::libc::getppid() != runner.as_raw() {
                        nix::libc::raise(nix::libc::SIGTERM);
                    }
                    Ok(())
                });
            }
        }
        // A terminal of our own size where ours is one (stdout's; stderr's when only it is
        // one, our stdout being redirected); pipes otherwise.
        let (out_tty, err_tty) = (
            std::io::stdout().is_terminal(),
            std::io::stderr().is_terminal(),
        );
        let terminal_is_stderr = !out_tty && err_tty;
        let (stdout, stderr) = (std::io::stdout(), std::io::stderr());
        let ours = match terminal_is_stderr {
            true => stderr.as_fd(),
            false => stdout.as_fd(),
        };
        let pty = if out_tty || err_tty {
            match nix::pty::openpty(&terminal_size(ours), None).and_then(|p| {
                close_on_exec(&p.master)?;
                close_on_exec(&p.slave)?;
                newlines_once(&p.slave, ours)?;
                Ok(p)
            }) {
                Ok(p) => Some(p),
                Err(e) => {
                    eprintln!(
                        "taskdeck run: no pseudo-terminal ({e}); the command's output goes through pipes"
                    );
                    None
                }
            }
        } else {
            None
        };
        // Each of the command's streams on the terminal where ours is on one; the others on
        // pipes.
        let (out_on_pty, err_on_pty) = match &pty {
            Some(p) => {
                if out_tty {
                    cmd.stdout(Stdio::from(p.slave.try_clone()?));
                }
                if err_tty {
                    cmd.stderr(Stdio::from(p.slave.try_clone()?));
                }
                (out_tty, err_tty)
            }
            None => (false, false),
        };
        let mut pipes = Vec::new();
        let mut pipe = |to_stderr: bool, has_stderr: bool| -> std::io::Result<OwnedFd> {
            let (read, write) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)?;
            pipes.push(Output {
                read,
                to_stderr,
                has_stderr,
            });
            Ok(write)
        };
        if !out_on_pty && !err_on_pty && same_output() {
            // Our stdout and stderr are one file (`2>&1`): the command's share one pipe too, so
            // their lines keep the order it wrote them in (two pipes read apart would not).
            let write = pipe(false, true)?;
            cmd.stdout(Stdio::from(write.try_clone()?))
                .stderr(Stdio::from(write));
        } else {
            if !out_on_pty {
                cmd.stdout(Stdio::from(pipe(false, false)?));
            }
            if !err_on_pty {
                cmd.stderr(Stdio::from(pipe(true, true)?));
            }
        }
        let started = Instant::now();
        let spawned = cmd.spawn();
        // Reading the master ends (EIO), and a pipe reads 0, only once every copy of its write
        // side is closed. The command holds its own copies now; ours (those `cmd` keeps for the
        // command's stdout and stderr, and the pty's slave, dropped below) are closed here.
        // Left open, they would make the reader wait out its time and lose the output's last
        // partial line.
        drop(cmd);
        // The terminal's output first: its line left standing (a prompt) is the one shown
        // when two outputs have one.
        let terminal = match &pty {
            Some(p) => Some((p.master.try_clone()?, terminal_is_stderr)),
            None => None,
        };
        let mut outputs: Vec<Output> = pty
            .map(|p| Output {
                read: p.master,
                to_stderr: terminal_is_stderr,
                has_stderr: err_on_pty,
            })
            .into_iter()
            .collect();
        outputs.extend(pipes);
        Ok(Launched {
            child: spawned?,
            tag,
            interactive,
            outputs,
            terminal,
            started,
        })
    }

    /// Gives the command's terminal the size ours has now, and tells the command (SIGWINCH):
    /// a command in our process group got the signal from our terminal already, perhaps
    /// before its terminal had the new size.
    fn resized(&self) {
        let Some((master, is_stderr)) = &self.terminal else {
            return;
        };
        use std::os::fd::AsRawFd;
        let size = match is_stderr {
            true => terminal_size(std::io::stderr().as_fd()),
            false => terminal_size(std::io::stdout().as_fd()),
        };
        // SAFETY: TIOCSWINSZ reads one `winsize` from the struct we pass.
        let set = unsafe { nix::libc::ioctl(master.as_raw_fd(), nix::libc::TIOCSWINSZ, &size) };
        if set == 0 {
            signal_tagged(&self.tag, Signal::SIGWINCH);
        }
    }

    /// Ctrl-Z (SIGTSTP to `taskdeck run`): the job is told it is suspended (with a heartbeat
    /// of a day), then the command (in its own process group; in ours, our terminal stopped
    /// it already) and `taskdeck run` stop, as the command alone would; once resumed (SIGCONT:
    /// `fg`, `bg`), the command goes on and the job is told, with its heartbeat back.
    async fn suspend(&self, link: &JobLink) {
        const TOLD_WITHIN: Duration = Duration::from_secs(2);
        let suspended = json!({
            "statusMessage": "Suspended (Ctrl-Z): stopped until it is resumed (fg)",
            "heartbeatMs": SUSPENDED_HEARTBEAT_MS,
        });
        let _ = tokio::time::timeout(TOLD_WITHIN, link.report(suspended)).await;
        let group = self
            .child
            .id()
            .filter(|_| !self.interactive)
            .map(|pid| nix::unistd::Pid::from_raw(pid as i32));
        if let Some(group) = group {
            let _ = nix::sys::signal::killpg(group, Signal::SIGTSTP);
        }
        let _ = nix::sys::signal::raise(Signal::SIGSTOP);
        if let Some(group) = group {
            let _ = nix::sys::signal::killpg(group, Signal::SIGCONT);
        }
        let resumed = json!({"statusMessage": "Resumed", "heartbeatMs": HEARTBEAT_MS});
        let _ = tokio::time::timeout(TOLD_WITHIN, link.report(resumed)).await;
    }

    /// Stops the command and everything it started (see [`stop_command`]).
    async fn stop(&mut self) -> Option<std::process::ExitStatus> {
        stop_command(&mut self.child, self.interactive, &self.tag).await
    }
}

/// How the command's run ended.
struct Ending {
    /// Its exit status; `None` when it could not be read.
    status: Option<std::process::ExitStatus>,
    /// The run counts as cancelled (from Taskdeck, by a signal to `taskdeck run`, or a hang-up).
    cancelled: bool,
    /// We stopped the command ourselves, which also swept what it started.
    stopped: bool,
    /// Taskdeck already recorded the job's end (a cancel it took while this runner was not
    /// heard from, an expiry): there is nothing left to report.
    settled: bool,
    /// The signal that stopped `taskdeck run` itself (or, interactive, the Ctrl-C or hang-up
    /// the terminal sent the command too): its exit status is then 128 + it, as a shell
    /// expects of a process ended by that signal.
    received: Option<i32>,
    /// When the command ended (or was found to have ended).
    ended_at: Instant,
}

impl Ending {
    /// A command ended by Ctrl-C, a closed terminal or a stop of ours: what it started (even in
    /// a session of its own) goes with it, and a hang-up or Ctrl-C counts as a cancel (as a
    /// stop of `taskdeck run` by that signal). Only an `interactive` command gets those from
    /// the terminal; one in a process group of its own that dies of SIGINT or SIGHUP sent
    /// them itself, and ends as killed by that signal.
    async fn sweep_leftovers(&mut self, tag: &str, interactive: bool) {
        let signal = self.status.and_then(|s| s.signal());
        if interactive
            && let Some(by) = signal.filter(|s| [nix::libc::SIGHUP, nix::libc::SIGINT].contains(s))
        {
            self.cancelled = true;
            self.received.get_or_insert(by);
        }
        // `stop_command` already swept them when it stopped the command (`stopped`).
        if !self.stopped && self.cancelled {
            signal_tagged(tag, Signal::SIGTERM);
            tokio::time::sleep(Duration::from_millis(200)).await;
            signal_tagged(tag, Signal::SIGKILL);
        }
    }

    /// `taskdeck run`'s exit code: 128 + the signal it received; else the command's exit code
    /// (128 + its signal when killed); 1 when its status is unknown.
    fn exit_code(&self) -> ExitCode {
        let exit = match (self.received, self.status) {
            (Some(signal), _) => 128 + signal,
            (None, Some(s)) => s.code().unwrap_or_else(|| 128 + s.signal().unwrap_or(0)),
            (None, None) => 1,
        };
        ExitCode::from(exit.clamp(0, 255) as u8)
    }
}

/// The signals that stop `taskdeck run`, each listened to for the whole run: a stream made once
/// keeps a signal that arrives while the supervisor is busy (a fresh `ctrl_c()` per loop turn
/// would miss one that came during a report's round trip). `None` where a listener could not
/// be installed.
struct StopSignals {
    interrupt: Option<SignalStream>,
    terminate: Option<SignalStream>,
    hangup: Option<SignalStream>,
    /// [`Self::any`] has resolved: `taskdeck run` was told to stop since the run.
    heard: bool,
}

impl StopSignals {
    /// Installs the three listeners (each `None` when it cannot be installed).
    fn listen() -> StopSignals {
        StopSignals {
            interrupt: signal(SignalKind::interrupt()).ok(),
            terminate: signal(SignalKind::terminate()).ok(),
            hangup: signal(SignalKind::hangup()).ok(),
            heard: false,
        }
    }

    /// Forgets the signals already received (the Ctrl-C that ended an interactive command), so
    /// that [`Self::any`] waits for a new one.
    fn drain(&mut self) {
        let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
        for stream in [&mut self.interrupt, &mut self.terminate, &mut self.hangup]
            .into_iter()
            .flatten()
        {
            while let std::task::Poll::Ready(Some(())) = stream.poll_recv(&mut cx) {}
        }
    }

    /// Resolves at the next of the three signals (never, when none could be installed), and
    /// notes it in [`Self::heard`].
    async fn any(&mut self) {
        tokio::select! {
            Some(()) = async { self.interrupt.as_mut()?.recv().await } => {}
            Some(()) = async { self.terminate.as_mut()?.recv().await } => {}
            Some(()) = async { self.hangup.as_mut()?.recv().await } => {}
            else => std::future::pending::<()>().await,
        }
        self.heard = true;
    }
}

/// Waits for the command to end while, every second, reporting its latest line and progress to
/// the job; stops it on a cancel from Taskdeck, on SIGTERM or SIGHUP to `taskdeck run`, and on
/// SIGINT when it is not interactive. Interactive (stdin a terminal), Ctrl-C reaches the
/// command from the terminal as it would without `taskdeck run`: the command decides (a REPL
/// goes on; one that dies of it is counted cancelled by [`Ending::sweep_leftovers`]).
async fn supervise(
    launched: &mut Launched,
    link: &JobLink,
    output: &OutputCapture,
    stops: &mut StopSignals,
) -> Ending {
    let (latest, unfinished) = (&output.latest, &output.unfinished);
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    // Ticks missed while a report was in flight are not made up in a burst: one report follows
    // as soon as the slow one is answered, then one a second.
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut ending = Ending {
        status: None,
        cancelled: false,
        stopped: false,
        settled: false,
        received: None,
        ended_at: Instant::now(),
    };
    // The report on its way, if one is: it does not hold up the rest, so the command's end is
    // seen (and timed) at once however long Taskdeck takes to answer.
    let mut in_flight: Option<std::pin::Pin<Box<dyn Future<Output = Option<Value>> + '_>>> = None;
    // For each output: the line it stood in at the last tick, and the one shown as the
    // status since that line began.
    let mut seen: Vec<Option<Standing>> = vec![None; unfinished.len()];
    let mut shown: Vec<Option<Standing>> = vec![None; unfinished.len()];
    // Ctrl-Z is ours to pass on only for a tracked job (the job must hear of it); untracked,
    // `taskdeck run` stops by the default action. A resize matters only with a terminal.
    let mut suspends = link
        .job
        .is_some()
        .then(|| signal(SignalKind::from_raw(nix::libc::SIGTSTP)).ok())
        .flatten();
    let mut resizes = launched
        .terminal
        .is_some()
        .then(|| signal(SignalKind::window_change()).ok())
        .flatten();
    ending.status = loop {
        tokio::select! {
            // An exit that is ready wins over a report tick that would find a cancel.
            biased;
            s = launched.child.wait() => break s.ok(),
            Some(()) = async { suspends.as_mut()?.recv().await } => launched.suspend(link).await,
            Some(()) = async { resizes.as_mut()?.recv().await } => launched.resized(),
            // Stopped itself (kill, a closed terminal): stop the command and all it started too.
            Some(()) = async { stops.terminate.as_mut()?.recv().await } => {
                say("terminated; stopping the command");
                ending.cancelled = true;
                ending.stopped = true;
                ending.received = Some(nix::libc::SIGTERM);
                break launched.stop().await;
            }
            Some(()) = async { stops.hangup.as_mut()?.recv().await } => {
                say("hung up; stopping the command");
                ending.cancelled = true;
                ending.stopped = true;
                ending.received = Some(nix::libc::SIGHUP);
                break launched.stop().await;
            }
            Some(()) = async { stops.interrupt.as_mut()?.recv().await } => {
                // The terminal sent SIGINT to the command too: it handles it as it would alone.
                if launched.interactive {
                    continue;
                }
                say("interrupted; stopping the command");
                ending.cancelled = true;
                ending.received = Some(nix::libc::SIGINT);
                ending.stopped = true;
                break launched.stop().await;
            }
            _ = tick.tick(), if link.job.is_some() && in_flight.is_none() && !ending.settled => {
                release_held_messages();
                let mut update = latest.lock().unwrap().take();
                // A line an output has stood in for a whole tick (a prompt waiting for an
                // answer, a progress bar that stalled) is the status as it stands, once.
                for (i, slot) in unfinished.iter().enumerate() {
                    let now = slot.lock().unwrap().clone();
                    if now != seen[i] {
                        shown[i] = None;
                    } else if update.is_none()
                        && let Some((_, line)) = &now
                        && shown[i] != now
                    {
                        let mut standing = LatestStatus::default();
                        standing.note(line);
                        update = standing.take();
                        shown[i] = now.clone();
                    }
                    seen[i] = now;
                }
                let text = output.outbox.as_ref().and_then(|o| o.lock().unwrap().take());
                let report = status_report(update, text);
                in_flight = Some(Box::pin(link.report(Value::Object(report))));
            }
            answer = async { in_flight.as_mut().expect("a report in flight").await }, if in_flight.is_some() => {
                in_flight = None;
                if let (None, Some(outbox)) = (&answer, &output.outbox) {
                    outbox.lock().unwrap().give_back();
                }
                // Taskdeck recorded the job's end without us (a `working` job answered so is
                // only waiting: Taskdeck is stopping, or the end is being recorded).
                if let Some(answer) = &answer
                    && let Some(ended) = answer["ended"].as_str()
                    && matches!(answer["status"].as_str(), Some("cancelled" | "completed" | "failed"))
                {
                    ending.settled = true;
                    if answer["status"] == "cancelled" {
                        // A cancel taken after its grace, not having heard from us: it still
                        // means the command is to stop.
                        ending.cancelled = true;
                        ending.stopped = true;
                        let status = launched.stop().await;
                        say("Taskdeck cancelled this job; stopped the command");
                        break status;
                    }
                    say(&format!("Taskdeck ended this job ({ended}); the command keeps running, no longer tracked"));
                }
                if let Some(answer) = answer
                    && answer["cancelRequested"] == true
                {
                    // A command that exited before the cancel took effect ended on its own: its
                    // exit code and output are the job's result, not a cancel.
                    if let Ok(Some(exited)) = launched.child.try_wait() {
                        break Some(exited);
                    }
                    ending.cancelled = true;
                    ending.stopped = true;
                    say("cancelled from Taskdeck; stopping the command");
                    break launched.stop().await;
                }
            }
        }
    };
    ending.ended_at = Instant::now();
    // The report on its way when the command ended carries output: it is answered before the
    // end is sent (which would otherwise overtake it), or its output goes with the end. Told
    // to stop, it gets a moment only.
    if let Some(report) = in_flight.take() {
        let patience = match ending.received {
            Some(_) => Duration::from_secs(1),
            None => Duration::from_secs(10),
        };
        let answer = tokio::time::timeout(patience, report).await.ok().flatten();
        if let (None, Some(outbox)) = (answer, &output.outbox) {
            outbox.lock().unwrap().give_back();
        }
    }
    ending
}

/// Whether our stdout and stderr are the same file (`2>&1`: the same device and inode) that
/// keeps their order: a regular file or a pipe, not a device such as /dev/null (nothing reads
/// it in order, and the command's two streams are then read apart, their lines unmixed).
fn same_output() -> bool {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let of = |fd: std::os::fd::BorrowedFd<'_>| {
        fd.try_clone_to_owned()
            .ok()
            .map(std::fs::File::from)
            .and_then(|f| f.metadata().ok())
            .filter(|m| !m.file_type().is_char_device())
            .map(|m| (m.dev(), m.ino()))
    };
    let (out, err) = (of(std::io::stdout().as_fd()), of(std::io::stderr().as_fd()));
    out.is_some() && out == err
}

/// Marks `fd` close-on-exec: openpty(3) leaves both sides of a pseudo-terminal inheritable,
/// and the command must get only the copies made for its stdout and stderr (a command holding
/// the master side could read its own output, and one that outlives `taskdeck run` would keep
/// the terminal open).
fn close_on_exec(fd: &OwnedFd) -> nix::Result<()> {
    use nix::fcntl::{FcntlArg, FdFlag, fcntl};
    fcntl(fd, FcntlArg::F_SETFD(FdFlag::FD_CLOEXEC)).map(drop)
}

/// Turns off the command's terminal's newline translation (`ONLCR`: "\n" written as "\r\n")
/// when our own terminal does it: the bytes copied to ours are translated there, and translated
/// twice every line would end "\r\r\n" in a terminal's log.
fn newlines_once(slave: &OwnedFd, ours: std::os::fd::BorrowedFd<'_>) -> nix::Result<()> {
    use nix::sys::termios::{OutputFlags, SetArg, tcgetattr, tcsetattr};
    let ours = tcgetattr(ours)?;
    if !ours
        .output_flags
        .contains(OutputFlags::OPOST | OutputFlags::ONLCR)
    {
        return Ok(());
    }
    let mut theirs = tcgetattr(slave)?;
    theirs.output_flags.remove(OutputFlags::ONLCR);
    tcsetattr(slave, SetArg::TCSANOW, &theirs)
}

/// The size of the terminal `ours` (80 columns, 24 rows when it cannot be read or says 0).
pub(super) fn terminal_size(ours: std::os::fd::BorrowedFd<'_>) -> nix::pty::Winsize {
    use std::os::fd::AsRawFd;
    let mut ws = nix::pty::Winsize {
        ws_row: 24,
        ws_col: 80,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: TIOCGWINSZ writes one `winsize` into the struct we pass; on failure it writes nothing.
    let ok = unsafe { nix::libc::ioctl(ours.as_raw_fd(), nix::libc::TIOCGWINSZ, &mut ws) } == 0;
    // Each unknown (0, as `script` gives rows) is the usual default on its own.
    if !ok || ws.ws_col == 0 {
        ws.ws_col = 80;
    }
    if !ok || ws.ws_row == 0 {
        ws.ws_row = 24;
    }
    ws
}

/// Stops the command and everything it started: by its tag when it shares our process group
/// (`interactive`), else its whole process group and its tag. SIGTERM, then SIGKILL after 5 s.
async fn stop_command(
    child: &mut tokio::process::Child,
    interactive: bool,
    tag: &str,
) -> Option<std::process::ExitStatus> {
    if interactive {
        stop_tagged(child, tag, Duration::from_secs(5)).await
    } else {
        stop_group(child, tag, Duration::from_secs(5)).await
    }
}
