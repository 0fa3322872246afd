//! `taskdeck run [--name NAME] [--wait] -- CMD ARGS...`: wraps any long command as an external
//! job. The command's output streams to the terminal as usual; its latest line and parsed
//! progress go to Taskdeck; a cancel pressed in the window stops the command's whole process
//! group; the exit code is the command's. When Taskdeck is not running, the command runs anyway
//! (or, with `--wait`, `taskdeck run` waits for Taskdeck first). The job's start carries a random
//! `Idempotency-Key`; a start that fails on the way (the connection dropped or was reset, a 5xx)
//! is sent again with the same key a few times, so a retried start never makes a second job.
//!
//! When standard output is a terminal, the command writes to a pseudo-terminal of the same size,
//! so it behaves as it would without `taskdeck run` (colours, progress bars redrawn with `\r`,
//! line buffering); the bytes are passed through untouched, and Taskdeck gets the latest line,
//! including each `\r` redraw, so a progress bar's `12/50` shows live. Otherwise the command's
//! stdout and stderr are pipes, copied line by line.

use std::{
    io::{IsTerminal, Read, Write},
    process::{ExitCode, Stdio},
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use nix::sys::signal::Signal;
use serde_json::{Value, json};

use taskdeck_server::tools::{
    output::{LatestStatus, OutputLog, status_line},
    process::{
        TASK_ID_ENV, describe_exit, read_lines, shell_line, signal_tagged, stop_group, stop_tagged,
    },
};

/// What `taskdeck run` needs.
pub struct RunArgs {
    pub name: Option<String>,
    pub wait: bool,
    /// `--port` / `TASKDECK_PORT`; without it, the port of the Taskdeck running on `data_dir`
    /// (looked up again while `--wait` waits), else the default port.
    pub port: Option<u16>,
    pub data_dir: std::path::PathBuf,
    pub token: Option<String>,
    pub command: Vec<String>,
}

/// Heartbeat timeout given to the job, in ms (reports go every second).
const HEARTBEAT_MS: u64 = 15_000;

/// How many times a start that failed on the way (a dropped connection, a 5xx) is sent again,
/// with the same `Idempotency-Key`, before the command runs without Taskdeck.
const START_RETRIES: u32 = 4;

/// The wait before the first of those retries; each next one waits twice as long.
const FIRST_RETRY_DELAY: Duration = Duration::from_millis(250);

/// Runs the command; returns its exit code (128 + signal when killed; 1 when it cannot start).
pub fn run(args: RunArgs, config_dir: &std::path::Path) -> ExitCode {
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
    // The terminal copier may still be blocked on a terminal that a background child of the
    // command keeps open: do not wait for it (without `taskdeck run` the shell would not).
    rt.shutdown_background();
    code
}

async fn run_async(args: RunArgs, config_dir: &std::path::Path) -> ExitCode {
    // Where Taskdeck is and the token to use; looked up again while waiting for Taskdeck, which
    // may start on another port, or for the first time (then creating the admin-token file).
    let locate = || {
        let port = taskdeck_server::serve::client_port(args.port, &args.data_dir);
        let token = args
            .token
            .clone()
            .or_else(|| taskdeck_server::adapters::auth::read_admin_token(config_dir))
            .unwrap_or_default();
        (format!("http://127.0.0.1:{port}"), token)
    };
    let (mut base, mut token) = locate();
    let http = reqwest::Client::new();
    let name = args
        .name
        .clone()
        .unwrap_or_else(|| shell_line(&args.command));
    let cwd = std::env::current_dir()
        .map(|d| d.display().to_string())
        .unwrap_or_default();
    let body = json!({"external": {"name": name, "command": args.command, "cwd": cwd, "heartbeatMs": HEARTBEAT_MS}});
    // One key for this run's job, sent again with every retry of its start: a start whose
    // answer was lost is not done twice (Taskdeck answers the retry with the job it started).
    let idempotency_key = format!("\"{}\"", uuid::Uuid::new_v4());
    let mut announced = false;
    let mut retries = 0;
    let job: Option<String> = loop {
        let sent = http
            .post(format!("{base}/v1/jobs"))
            .bearer_auth(&token)
            .header("Idempotency-Key", &idempotency_key)
            .json(&body)
            .send()
            .await;
        // Why this attempt failed on the way, when it may be sent again (nothing was started,
        // or what was is found again by its key).
        let why = match sent {
            // 202: started; 200: a retry found the job an earlier attempt started.
            Ok(r) if r.status() == 202 || r.status() == 200 => match r.json::<Value>().await {
                Ok(v) => break v["taskId"].as_str().map(String::from),
                Err(e) => format!("the answer was cut off: {e}"),
            },
            // The admin-token file this run read may be older than the Taskdeck that just
            // started (or not exist yet): keep waiting for a token that works.
            Ok(r) if r.status() == 401 && args.wait && args.token.is_none() => {
                if !announced {
                    eprintln!("taskdeck run: waiting for Taskdeck to accept its admin token ...");
                    announced = true;
                }
                tokio::time::sleep(Duration::from_secs(1)).await;
                (base, token) = locate();
                continue;
            }
            Ok(r) if r.status().is_server_error() && retries < START_RETRIES => {
                format!("HTTP {}", r.status())
            }
            Ok(r) => {
                let status = r.status();
                let detail = r
                    .json::<Value>()
                    .await
                    .ok()
                    .and_then(|v| v["detail"].as_str().map(String::from))
                    .unwrap_or_default();
                eprintln!(
                    "taskdeck run: Taskdeck refused the job (HTTP {status}: {detail}); running the command without it."
                );
                break None;
            }
            // Connected, then lost (reset, closed before the answer, timed out).
            Err(e) if !e.is_connect() => e.to_string(),
            Err(_) if args.wait => {
                if !announced {
                    eprintln!("taskdeck run: waiting for Taskdeck at {base} ...");
                    announced = true;
                }
                tokio::time::sleep(Duration::from_secs(1)).await;
                (base, token) = locate();
                continue;
            }
            Err(_) => {
                eprintln!(
                    "taskdeck run: Taskdeck is not running at {base}; running the command without it (use --wait to wait for it)."
                );
                break None;
            }
        };
        if retries == START_RETRIES {
            if !args.wait {
                eprintln!(
                    "taskdeck run: Taskdeck did not take the job ({why}); running the command without it."
                );
                break None;
            }
            // `--wait`: as long as it takes, at the pace of the wait for Taskdeck.
            tokio::time::sleep(Duration::from_secs(1)).await;
            (base, token) = locate();
            continue;
        }
        eprintln!("taskdeck run: starting the job failed ({why}); trying again");
        tokio::time::sleep(FIRST_RETRY_DELAY * 2u32.pow(retries)).await;
        retries += 1;
    };
    if let Some(id) = &job {
        eprintln!("taskdeck run: tracking as job {id} ({base}/v1/jobs/{id})");
    }

    let mut cmd = tokio::process::Command::new(&args.command[0]);
    // Everything the command starts carries this tag, so all of it can be stopped.
    let tag = job
        .clone()
        .unwrap_or_else(|| format!("local-{}", uuid::Uuid::new_v4().simple()));
    cmd.args(&args.command[1..])
        .stdin(Stdio::inherit())
        .env(TASK_ID_ENV, &tag);
    // With a terminal on stdin the command stays in our (foreground) process group, so it can
    // read the terminal and gets Ctrl-C as it would without `taskdeck run`; it is stopped through
    // its tag. Otherwise it gets a process group of its own, stopped as a whole.
    let interactive = std::io::stdin().is_terminal();
    if !interactive {
        cmd.process_group(0);
    }

    // A terminal of our own size when ours is one; pipes otherwise.
    let pty = if std::io::stdout().is_terminal() {
        match nix::pty::openpty(&terminal_size(), None) {
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
    match &pty {
        Some(p) => {
            let out = p.slave.try_clone();
            let err = p.slave.try_clone();
            if let (Ok(out), Ok(err)) = (out, err) {
                cmd.stdout(Stdio::from(out)).stderr(Stdio::from(err));
            }
        }
        None => {
            cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
        }
    }
    let started = Instant::now();
    let spawned = cmd.spawn();
    // Our copy of the terminal's slave side must go, or reading the master never ends.
    let master = pty.map(|p| p.master);
    let mut child = match spawned {
        Ok(c) => c,
        Err(e) => {
            eprintln!("taskdeck run: cannot start {:?}: {e}", args.command[0]);
            if let Some(id) = &job {
                let result = json!({"content": [{"type": "text", "text": format!("Could not start: {e}")}], "isError": true});
                let _ = http
                    .post(format!("{base}/v1/jobs/{id}/report"))
                    .bearer_auth(&token)
                    .json(&json!({"result": result}))
                    .send()
                    .await;
            }
            // As a shell would: 127 when the command is not found, 126 when it cannot run.
            return ExitCode::from(if e.kind() == std::io::ErrorKind::NotFound {
                127
            } else {
                126
            });
        }
    };
    let log = Arc::new(Mutex::new(OutputLog::new(None, 40, 0)));
    // The latest line (or `\r` redraw) becomes the status; its progress, if any, the progress.
    let latest = Arc::new(Mutex::new(LatestStatus::default()));
    let note = {
        let latest = latest.clone();
        move |text: &str| latest.lock().unwrap().note(text)
    };
    let make_sink = |to_stderr: bool| {
        let (log, note) = (log.clone(), note.clone());
        move |raw: &[u8]| {
            if to_stderr {
                let mut e = std::io::stderr().lock();
                let _ = e.write_all(raw).and_then(|_| e.write_all(b"\n"));
            } else {
                let mut o = std::io::stdout().lock();
                let _ = o
                    .write_all(raw)
                    .and_then(|_| o.write_all(b"\n"))
                    .and_then(|_| o.flush());
            }
            log.lock().unwrap().push(raw);
            note(&String::from_utf8_lossy(raw));
        }
    };
    let readers: Vec<tokio::task::JoinHandle<()>> = match master {
        Some(master) => {
            let (log, note) = (log.clone(), note.clone());
            vec![tokio::task::spawn_blocking(move || {
                copy_terminal(std::fs::File::from(master), log, note)
            })]
        }
        None => [
            child
                .stdout
                .take()
                .map(|o| tokio::spawn(read_lines(o, make_sink(false)))),
            child
                .stderr
                .take()
                .map(|e| tokio::spawn(read_lines(e, make_sink(true)))),
        ]
        .into_iter()
        .flatten()
        .collect(),
    };
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    let report = |body: Value| {
        let (http, token, base, job) = (http.clone(), token.clone(), base.clone(), job.clone());
        async move {
            let id = job?;
            let r = http
                .post(format!("{base}/v1/jobs/{id}/report"))
                .bearer_auth(&token)
                .json(&body)
                .send()
                .await
                .ok()?;
            let conflict = r.status() == reqwest::StatusCode::CONFLICT;
            let answer = r.json::<Value>().await.ok()?;
            // Taskdeck ended the job without us (e.g. its ttlMs passed): say so.
            Some(if conflict {
                json!({"ended": answer["detail"]})
            } else {
                answer
            })
        }
    };
    let mut cancelled = false;
    let mut stopped = false;
    // Said once: Taskdeck ended the job while the command still ran.
    let mut told_ended = false;
    // The signal that stopped `taskdeck run` itself: its exit status is then 128 + it, as a
    // shell expects of a process ended by that signal.
    let mut received: Option<i32> = None;
    // Stopped itself (kill, a closed terminal): stop the command and everything it started too.
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
    let mut hup = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup()).ok();
    let status = loop {
        tokio::select! {
            // An exit that is ready wins over a report tick that would find a cancel.
            biased;
            s = child.wait() => break s.ok(),
            Some(()) = async { term.as_mut()?.recv().await } => {
                eprintln!("taskdeck run: terminated; stopping the command");
                cancelled = true;
                stopped = true;
                received = Some(nix::libc::SIGTERM);
                break stop_command(&mut child, interactive, &tag).await;
            }
            Some(()) = async { hup.as_mut()?.recv().await } => {
                cancelled = true;
                stopped = true;
                received = Some(nix::libc::SIGHUP);
                break stop_command(&mut child, interactive, &tag).await;
            }
            _ = tokio::signal::ctrl_c() => {
                cancelled = true;
                received = Some(nix::libc::SIGINT);
                if interactive {
                    // The terminal sent SIGINT to the command too: let it end as it would alone.
                    if let Ok(s) = tokio::time::timeout(Duration::from_secs(5), child.wait()).await {
                        break s.ok();
                    }
                }
                stopped = true;
                break stop_command(&mut child, interactive, &tag).await;
            }
            _ = tick.tick(), if job.is_some() => {
                let update = latest.lock().unwrap().take();
                let mut body = json!({});
                if let Some(u) = update {
                    body["statusMessage"] = json!(u.message);
                    if let Some((c, t)) = u.progress { body["progress"] = json!({"current": c, "total": t}); }
                }
                let answer = report(body).await;
                if let Some(ended) = answer.as_ref().and_then(|a| a["ended"].as_str())
                    && !told_ended
                {
                    told_ended = true;
                    eprintln!("taskdeck run: Taskdeck ended this job ({ended}); the command keeps running, no longer tracked");
                }
                if let Some(answer) = answer
                    && answer["cancelRequested"] == true
                {
                    // A command that exited before the cancel took effect ended on its own: its
                    // exit code and output are the job's result, not a cancel.
                    if let Ok(Some(exited)) = child.try_wait() {
                        break Some(exited);
                    }
                    eprintln!("taskdeck run: cancelled from Taskdeck; stopping the command");
                    cancelled = true;
                    stopped = true;
                    break stop_command(&mut child, interactive, &tag).await;
                }
            }
        }
    };
    // A command ended by Ctrl-C, a closed terminal or a stop of ours: what it started (even in a
    // session of its own) goes with it, and a hang-up counts as a cancel.
    {
        use std::os::unix::process::ExitStatusExt;
        let signal = status.and_then(|s| s.signal());
        if signal == Some(nix::libc::SIGHUP) {
            cancelled = true;
        }
        // `stop_command` already swept them when it stopped the command (`stopped`).
        if !stopped && (cancelled || signal == Some(nix::libc::SIGINT)) {
            signal_tagged(&tag, Signal::SIGTERM);
            tokio::time::sleep(Duration::from_millis(200)).await;
            signal_tagged(&tag, Signal::SIGKILL);
        }
    }
    for reader in readers {
        let _ = tokio::time::timeout(Duration::from_millis(500), reader).await;
    }
    let duration_ms = started.elapsed().as_millis() as u64;
    let (code, how) = describe_exit(status);
    let tail = log.lock().unwrap().tail();
    if cancelled {
        report(json!({"cancelled": true})).await;
    } else {
        let text = format!(
            "`{name}` {how} after {:.1} s.\n{tail}",
            duration_ms as f64 / 1000.0
        );
        let result = json!({
            "content": [{"type": "text", "text": text}],
            "structuredContent": {"exitCode": code, "durationMs": duration_ms, "tail": tail},
            "isError": code != Some(0)
        });
        report(json!({"result": result})).await;
    }
    use std::os::unix::process::ExitStatusExt;
    let exit = match (received, status) {
        (Some(signal), _) => 128 + signal,
        (None, Some(s)) => s.code().unwrap_or_else(|| 128 + s.signal().unwrap_or(0)),
        (None, None) => 1,
    };
    ExitCode::from(exit.clamp(0, 255) as u8)
}

/// The size of the terminal on our standard output (80x24 when it cannot be read).
fn terminal_size() -> nix::pty::Winsize {
    let mut ws = nix::pty::Winsize {
        ws_row: 24,
        ws_col: 80,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: TIOCGWINSZ writes one `winsize` into the struct we pass; on failure it writes nothing.
    let ok = unsafe { nix::libc::ioctl(1, nix::libc::TIOCGWINSZ, &mut ws) } == 0;
    if !ok || ws.ws_col == 0 || ws.ws_row == 0 {
        ws.ws_row = 24;
        ws.ws_col = 80;
    }
    ws
}

/// Copies the command's terminal output to ours byte for byte until it closes (blocking). Each
/// `\n`-ended line goes to `log`; each line and each `\r` redraw goes to `note`.
fn copy_terminal(mut master: std::fs::File, log: Arc<Mutex<OutputLog>>, note: impl Fn(&str)) {
    let mut buf = vec![0u8; 16 * 1024];
    let mut line: Vec<u8> = Vec::new();
    loop {
        // Linux answers EIO once the command and everything it started closed the terminal.
        let n = match master.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(&buf[..n]).and_then(|_| out.flush());
        drop(out);
        for &b in &buf[..n] {
            match b {
                b'\n' => {
                    // A terminal ends lines with "\r\n".
                    if line.last() == Some(&b'\r') {
                        line.pop();
                    }
                    let text = String::from_utf8_lossy(&line).into_owned();
                    note(&text);
                    log.lock()
                        .unwrap()
                        .push(status_line(&text).unwrap_or_default().as_bytes());
                    line.clear();
                }
                b'\r' => {
                    note(&String::from_utf8_lossy(&line));
                    line.push(b);
                }
                _ if line.len() < taskdeck_server::tools::process::MAX_LINE_BYTES => line.push(b),
                _ => {}
            }
        }
    }
    if !line.is_empty() {
        let text = String::from_utf8_lossy(&line).into_owned();
        note(&text);
        log.lock()
            .unwrap()
            .push(status_line(&text).unwrap_or_default().as_bytes());
    }
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
