//! How `taskdeck run` ends: the end of the command's output is seen as soon as the command
//! exits (also on a pseudo-terminal, so no reader timeout is waited out), and a last line
//! without a trailing newline reaches the job's result tail and its last status message, with
//! the command on a terminal and on pipes alike.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::harness::{BIN, Server, assert_not_on_disk, in_script};

/// How `taskdeck run` attaches the command's output.
#[derive(Clone, Copy, Debug)]
enum Attached {
    /// Our standard output is a terminal (`script` gives it one): the command gets a
    /// pseudo-terminal.
    Terminal,
    /// Our standard output is a pipe: so are the command's stdout and stderr.
    Pipes,
}

/// A finished `taskdeck run` and the job that tracked it.
struct FinishedRun {
    /// Everything `taskdeck run` wrote (stdout and stderr; on a terminal they are one stream).
    output: String,
    /// `GET /v1/jobs/{id}` once completed.
    job: Value,
    /// The job's status messages in timeline order (`statusMessage` events and progress
    /// messages).
    status_messages: Vec<String>,
}

/// Runs `taskdeck run --name NAME -- sh -c SCRIPT` against `s`, attached as `attached`, waits
/// (at most 20 s) for it to exit and its job to complete, and returns both. `script` must not
/// contain a single quote.
async fn run_and_finish(s: &Server, name: &str, script: &str, attached: Attached) -> FinishedRun {
    let token = &s.admin;
    let out = match attached {
        Attached::Terminal => {
            let line = format!(
                "{BIN} run --port {} --token {token} --name {name} -- sh -c '{script}'",
                s.port
            );
            in_script(&line).output()
        }
        Attached::Pipes => tokio::process::Command::new(BIN)
            .args(["run", "--port", &s.port.to_string(), "--token", token])
            .args(["--name", name, "--", "sh", "-c", script])
            .output(),
    };
    let out = tokio::time::timeout(Duration::from_secs(20), out)
        .await
        .expect("taskdeck run ended")
        .expect("taskdeck run (or `script`, util-linux) could be started");
    let output = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{attached:?}: {output}");
    let (id, job) = completed_job(s, &output).await;
    let (_, detail) = s.v1_get(Some(token), &format!("/v1/tasks/{id}")).await;
    let status_messages = detail["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| match e["kind"].as_str() {
            Some("statusMessage") => e["data"]["statusMessage"].as_str(),
            Some("progress") => e["data"]["message"].as_str(),
            _ => None,
        })
        .map(String::from)
        .collect();
    FinishedRun {
        output,
        job,
        status_messages,
    }
}

/// The id of the job `taskdeck run` announced in `output`, and the job once completed (`GET
/// /v1/jobs/{id}`, 15 s at most).
async fn completed_job(s: &Server, output: &str) -> (String, Value) {
    let id = output
        .split("tracking as job ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("no job announced: {output}"))
        .to_string();
    // The announcement links to the job in the UI (no token in it: it goes to a terminal).
    let link = format!("(watch it at http://127.0.0.1:{}/#task={id})", s.port);
    assert!(output.contains(&link), "no {link} in: {output}");
    let started = Instant::now();
    loop {
        let (_, job) = s.v1_get(Some(&s.admin), &format!("/v1/jobs/{id}")).await;
        if job["status"] == "completed" {
            return (id, job);
        }
        assert!(started.elapsed() < Duration::from_secs(15), "{job}");
        tokio::time::sleep(Duration::from_millis(30)).await;
    }
}

/// Runs `command` under `taskdeck run` against `s`; its output and what Taskdeck shows of its
/// job (`GET /v1/jobs/{id}` and `GET /v1/tasks/{id}`, once completed).
async fn run_and_show(s: &Server, command: &[&str]) -> (std::process::Output, [String; 2]) {
    let out = tokio::process::Command::new(BIN)
        .args([
            "run",
            "--port",
            &s.port.to_string(),
            "--token",
            &s.admin,
            "--",
        ])
        .args(command)
        .output()
        .await
        .unwrap();
    let (id, job) = completed_job(s, &String::from_utf8_lossy(&out.stderr)).await;
    let (_, detail) = s.v1_get(Some(&s.admin), &format!("/v1/tasks/{id}")).await;
    (out, [job.to_string(), detail.to_string()])
}

/// A URL's password on the command line reaches the command, and nothing Taskdeck keeps: the
/// job's name, its result and the store show `****`; so does a program's password option.
#[tokio::test]
async fn a_url_password_on_the_command_line_is_masked() {
    let s = Server::start(&[]).await;
    let url = "postgres://u:hunter2@db/x";
    let test = format!("test \"$1\" = {url}");
    let (out, shown) = run_and_show(&s, &["sh", "-c", &test, "sh", url]).await;
    assert!(
        out.status.success(),
        "the command got the password: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    for shown in shown {
        assert!(
            shown.contains("u:****@db") && !shown.contains("hunter2"),
            "{shown}"
        );
    }

    // A password given as a program's own option (curl's `-u user:password`): the command
    // gets it (Taskdeck answers curl's Basic credentials with 401), nothing kept shows it.
    let me = format!("http://127.0.0.1:{}/v1/me", s.port);
    let curl = ["curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}"];
    let (out, shown) = run_and_show(&s, &[&curl[..], &["-u", "admin:hunter3", &me]].concat()).await;
    assert_eq!(String::from_utf8_lossy(&out.stdout), "401");
    for shown in shown {
        assert!(
            shown.contains("admin:[redacted]") && !shown.contains("hunter3"),
            "{shown}"
        );
    }
    // Arguments a shell line quotes as `$'…\n…'` or with `'\''` (the job's name): masked too.
    for command in [
        &["sh", "-c", "cd /tmp\nmysql -phunter4 db 2>/dev/null; true"][..],
        &["sh", "-c", "export API_TOKEN='hunter5'; true"],
        &["true", "mysql\t-phunter6"],
        // A quoted option, a line continued with a backslash, JSON the shell line escapes.
        &["sh", "-c", "mysql \"-phunter7\" 2>/dev/null; true"],
        &["sh", "-c", "mysql\\\n -phunter8 2>/dev/null; true"],
        &[
            "sh",
            "-c",
            "curl -sd \"{\\\"password\\\":\\\"hunter9\\\"}\" 2>/dev/null; true",
        ],
    ] {
        let (out, shown) = run_and_show(&s, command).await;
        assert!(out.status.success(), "{command:?}: {out:?}");
        for shown in shown {
            assert!(
                !(4..=9).any(|n| shown.contains(&format!("hunter{n}"))),
                "{shown}"
            );
        }
    }
    assert_not_on_disk(
        &s.dir,
        &[
            "hunter2", "hunter3", "hunter4", "hunter5", "hunter6", "hunter7", "hunter8", "hunter9",
        ],
    );
}

/// A process the command leaves running (`… &`) writes to the same stdout after `taskdeck run`
/// has exited, as it would without `taskdeck run`: into the file ours went to, and not killed
/// by a closed pipe at its first line. The job ends when the command does.
#[tokio::test]
async fn a_process_left_running_keeps_writing_to_our_output() {
    let s = Server::start(&[]).await;
    let dir = tempfile::tempdir().unwrap();
    let (out, marker) = (dir.path().join("out.log"), dir.path().join("done"));
    // The process left running outlives `taskdeck run` by far (a loaded machine can take a
    // second to start and report a job): its line comes 4 s after the command's.
    let script = format!(
        "(sleep 4; echo late line; touch {}) & echo parent done",
        marker.display()
    );
    let err = dir.path().join("err.log");
    let started = Instant::now();
    let status = tokio::process::Command::new(BIN)
        .args(["run", "--port", &s.port.to_string(), "--token", &s.admin])
        .args(["--", "sh", "-c", &script])
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap())
        .status()
        .await
        .unwrap();
    let stderr = std::fs::read_to_string(&err).unwrap();
    assert!(status.success(), "{stderr}");
    assert!(
        !marker.exists() && started.elapsed() < Duration::from_secs(3),
        "taskdeck run waited for the process left running: {:?}",
        started.elapsed()
    );
    let (_, job) = completed_job(&s, &stderr).await;
    assert_eq!(job["result"]["structuredContent"]["tail"], "parent done");
    let waited = Instant::now();
    while !marker.exists() && waited.elapsed() < Duration::from_secs(10) {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(marker.exists(), "the process left running was killed");
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        "parent done\nlate line\n"
    );
}

/// A command killed by a signal: its job's result names the signal (there is no exit code),
/// and `taskdeck run` exits as a shell reports it, 128 + the signal's number.
#[tokio::test]
async fn a_command_killed_by_a_signal_is_reported_with_its_signal() {
    let s = Server::start(&[]).await;
    let out = tokio::process::Command::new(BIN)
        .args(["run", "--port", &s.port.to_string(), "--token", &s.admin])
        .args(["--", "sh", "-c", "kill -KILL $$"])
        .output()
        .await
        .unwrap();
    let output = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(128 + 9), "{output}");
    let (_, job) = completed_job(&s, &output).await;
    let fields = &job["result"]["structuredContent"];
    assert_eq!(
        (
            &fields["exitCode"],
            &fields["signal"],
            &job["result"]["isError"]
        ),
        (&Value::Null, &json!("SIGKILL"), &json!(true)),
        "{job}"
    );
}

#[tokio::test]
async fn on_a_terminal_the_run_ends_when_the_command_does() {
    let s = Server::start(&[]).await;
    // The colour reset after the last line shows nothing: it is not a line of its own.
    let script = "sleep 1.2; echo ok; printf \"\\033[0m\"";
    let run = run_and_finish(&s, "slow", script, Attached::Terminal).await;
    let duration_ms = run.job["result"]["structuredContent"]["durationMs"]
        .as_u64()
        .unwrap();
    assert!(
        (1200..1500).contains(&duration_ms),
        "a 1.2 s command is reported as taking {duration_ms} ms: {}",
        run.output
    );
    assert_eq!(run.job["result"]["structuredContent"]["tail"], "ok");
    assert_eq!(run.status_messages.last().map(String::as_str), Some("ok"));
}

#[tokio::test]
async fn a_last_line_without_a_newline_is_the_tail_and_the_last_status() {
    let s = Server::start(&[]).await;
    for (attached, name) in [(Attached::Pipes, "pipes"), (Attached::Terminal, "term")] {
        let last = format!("last-of-{name}");
        // The tail keeps a line's indentation (a traceback's) and tabs, colours removed, and
        // the text around a link longer than a line keeps.
        let script = format!(
            "echo first; printf \"  at main.py:3\\n\\t\\033[31mx\\033[0m\\ty  \\n\"; \
             printf \"L \\033]8;;http://e/%070000d\\007T\\033]8;;\\007 after\\n\" 0; \
             sleep 0.3; printf {last}"
        );
        let run = run_and_finish(&s, name, &script, attached).await;
        assert!(run.output.contains(&last), "{attached:?}: {}", run.output);
        assert_eq!(
            run.job["result"]["structuredContent"]["tail"],
            format!("first\n  at main.py:3\n\tx\ty\nL T after\n{last}"),
            "{attached:?}: {}",
            run.output
        );
        assert_eq!(
            run.status_messages.last(),
            Some(&last),
            "{attached:?}: the last status message"
        );
    }
}

#[tokio::test]
async fn a_run_that_reaches_another_taskdecks_port_names_the_mismatch() {
    let ours = Server::start(&[]).await;
    let other = Server::start(&[]).await;
    let run = |port: u16, extra: &[&str]| {
        let mut cmd = tokio::process::Command::new(BIN);
        cmd.args(["run", "--port", &port.to_string()])
            .args(["--data-dir", &ours.dir.join("data").display().to_string()])
            .args(["--config-dir", &ours.dir.join("cfg").display().to_string()])
            .args(extra)
            .args(["--", "true"]);
        cmd
    };
    // Our data dir's admin token, sent to the other Taskdeck's port.
    let out = run(other.port, &[]).output().await.unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "the command still runs: {stderr}");
    assert!(
        stderr.contains(&format!(
            "the Taskdeck on port {} serves another data dir",
            other.port
        )) && stderr.contains(&format!("runs on port {}", ours.port)),
        "{stderr}"
    );
    assert!(!stderr.contains("invalid or revoked"), "{stderr}");
    // A token that no Taskdeck knows, on our own port.
    let out = run(ours.port, &["--token", "td_nope"])
        .output()
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("does not know the token given with --token"),
        "{stderr}"
    );
}

#[tokio::test]
async fn tasks_and_audit_commands_that_reach_another_taskdeck_name_the_mismatch() {
    let ours = Server::start(&[]).await;
    let other = Server::start(&[]).await;
    let ask = |args: &[&str]| {
        std::process::Command::new(BIN)
            .args(args)
            .args(["--port", &other.port.to_string()])
            .args(["--data-dir", &ours.dir.join("data").display().to_string()])
            .args(["--config-dir", &ours.dir.join("cfg").display().to_string()])
            .output()
            .unwrap()
    };
    for args in [
        &["tasks", "list"][..],
        &["tasks", "clear", "--finished"],
        &["audit", "export"],
    ] {
        let out = ask(args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(4), "{args:?}: {stderr}");
        assert_eq!(
            stderr.trim(),
            format!(
                "taskdeck: the Taskdeck on port {} serves another data dir: the one of {} runs on port {} (leave out --port, or pass that Taskdeck's --data-dir and --config-dir)",
                other.port,
                ours.dir.join("data").display(),
                ours.port
            ),
            "{args:?}"
        );
    }
}

#[tokio::test]
async fn the_admin_token_goes_only_to_a_taskdeck_known_to_serve_the_data_dir() {
    // A stopped Taskdeck: its config dir keeps the admin token, nothing runs on its data dir.
    let mut stopped = Server::start(&[]).await;
    stopped.kill().await;
    // Whatever listens on the default port must not be sent that token.
    let listener = std::net::TcpListener::bind(("127.0.0.1", 4747))
        .expect("this test listens on 4747, Taskdeck's default port: stop what uses it");
    listener.set_nonblocking(true).unwrap();
    let dirs = [
        "--data-dir".to_string(),
        stopped.dir.join("data").display().to_string(),
        "--config-dir".to_string(),
        stopped.dir.join("cfg").display().to_string(),
    ];
    let expected = format!(
        "no Taskdeck is running on {}",
        stopped.dir.join("data").display()
    );
    for args in [
        &["tasks", "list"][..],
        &["audit", "export"],
        &["run", "--", "true"],
    ] {
        let out = tokio::process::Command::new(BIN)
            .args(args.iter().take_while(|a| **a != "--"))
            .args(&dirs)
            .args(args.iter().skip_while(|a| **a != "--"))
            .env_remove("TASKDECK_PORT")
            .env_remove("TASKDECK_TOKEN")
            .output()
            .await
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(&expected), "{args:?}: {stderr}");
        let code = if args[0] == "run" { 0 } else { 1 };
        assert_eq!(out.status.code(), Some(code), "{args:?}: {stderr}");
    }
    assert!(
        listener.accept().is_err(),
        "a client command connected to the default port"
    );
}

/// A runner killed with SIGKILL (it can catch nothing) takes its command with it: the command
/// does not run on untracked while its job is reported lost.
#[tokio::test]
async fn a_runner_killed_outright_takes_its_command_with_it() {
    let s = Server::start(&[]).await;
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("ran-on");
    let mut run = tokio::process::Command::new(BIN)
        .args(["run", "--port", &s.port.to_string(), "--token", &s.admin])
        .args(["--", "sh", "-c"])
        .arg(format!("echo started; sleep 3; touch {}", marker.display()))
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdout = run.stdout.take().unwrap();
    let mut said = String::new();
    {
        use tokio::io::AsyncReadExt;
        let mut buf = [0u8; 256];
        while !said.contains("started") {
            let n = tokio::time::timeout(Duration::from_secs(20), stdout.read(&mut buf))
                .await
                .expect("the command started")
                .unwrap();
            assert!(n > 0, "no output: {said}");
            said.push_str(&String::from_utf8_lossy(&buf[..n]));
        }
    }
    run.start_kill().unwrap();
    run.wait().await.unwrap();
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert!(
        !marker.exists(),
        "the command ran on after its runner was killed"
    );
}

/// A token revoked while its run's command runs: its reports are refused (401), which
/// `taskdeck run` says once; the command's end is refused too, and it says so and exits with
/// the command's code after a few tries (a restart not yet recorded in the data dir looks the
/// same for a moment), not after the final report's ten minutes.
#[tokio::test]
async fn a_run_whose_token_is_revoked_ends_soon_saying_so() {
    let s = Server::start(&[]).await;
    let token = s.token("runner");
    let go = s.dir.join("go");
    let mut run = tokio::process::Command::new(BIN)
        .args(["run", "--name", "revoked", "--token", &token, "--data-dir"])
        .arg(s.dir.join("data"))
        .args(["--", "sh", "-c"])
        .arg(format!(
            "while [ ! -e {} ]; do sleep 0.1; done; exit 4",
            go.display()
        ))
        .env_remove("TASKDECK_PORT")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stderr = run.stderr.take().unwrap();
    let mut said = String::new();
    // Reads stderr into `said` until it says `words`, for at most 20 s.
    let mut read_until = async |said: &mut String, words: &str| {
        use tokio::io::AsyncReadExt;
        let mut buf = [0u8; 4096];
        while !said.contains(words) {
            let n = tokio::time::timeout(Duration::from_secs(20), stderr.read(&mut buf))
                .await
                .unwrap_or_else(|_| panic!("taskdeck run did not say {words:?}: {said}"))
                .unwrap();
            assert!(n > 0, "{said}");
            said.push_str(&String::from_utf8_lossy(&buf[..n]));
        }
    };
    read_until(&mut said, "tracking as job").await;
    let out = std::process::Command::new(BIN)
        .args(["token", "revoke", "runner", "--data-dir"])
        .arg(s.dir.join("data"))
        .output()
        .unwrap();
    assert!(out.status.success());
    // Once Taskdeck refuses the token (it rechecks tokens within 2 s), the command ends.
    let refused = async {
        while s
            .http
            .get(s.url("/v1/tasks"))
            .bearer_auth(&token)
            .send()
            .await
            .unwrap()
            .status()
            != 401
        {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(10), refused)
        .await
        .expect("the revoked token was still taken");
    // The run's reports (one a second) are refused meanwhile, which it says once.
    read_until(&mut said, "refused this job's report").await;
    std::fs::write(&go, "").unwrap();
    let started = Instant::now();
    let status = tokio::time::timeout(Duration::from_secs(30), run.wait())
        .await
        .expect("taskdeck run kept sending a refused end")
        .unwrap();
    let mut rest = Vec::new();
    tokio::io::AsyncReadExt::read_to_end(&mut stderr, &mut rest)
        .await
        .unwrap();
    said.push_str(&String::from_utf8_lossy(&rest));
    assert_eq!(status.code(), Some(4), "{said}");
    assert!(started.elapsed() < Duration::from_secs(20), "{said}");
    assert!(
        said.contains("Taskdeck refused the job's end (HTTP 401")
            && said.contains("does not know the token given with --token")
            && said.contains("trying again for 10 s")
            && !said.contains("600 s"),
        "{said}"
    );
    assert_eq!(
        said.matches("refused this job's report").count(),
        1,
        "{said}"
    );
}

/// An empty or blank `--name` is refused before anything runs (Taskdeck would refuse the job,
/// and the command would run untracked, or show the tool's name).
#[tokio::test]
async fn an_empty_name_is_refused_before_the_command_runs() {
    for name in ["", "   "] {
        let out = tokio::process::Command::new(BIN)
            .args(["run", "--name", name, "--", "sh", "-c", "echo ran"])
            .output()
            .await
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(out.stdout.is_empty(), "{stderr}");
        assert!(
            stderr.contains("the name must have something to show"),
            "{stderr}"
        );
    }
}

/// A Taskdeck that takes connections and answers nothing (stopped with SIGSTOP, or hung):
/// `tasks list`, `tasks show` and `audit verify` exit 1 saying it may be hung, instead of
/// waiting for ever.
#[tokio::test]
async fn client_commands_give_up_on_a_taskdeck_that_does_not_answer() {
    let s = Server::start(&[]).await;
    let pid = s.child.id().expect("the server runs").to_string();
    let signal = |sig: &str| {
        std::process::Command::new("kill")
            .args([sig, &pid])
            .status()
            .unwrap()
    };
    assert!(signal("-STOP").success());
    let dirs = [
        "--data-dir".to_string(),
        s.dir.join("data").display().to_string(),
        "--config-dir".to_string(),
        s.dir.join("cfg").display().to_string(),
    ];
    let ask = |args: &'static [&'static str]| {
        let dirs = dirs.clone();
        async move {
            tokio::process::Command::new(BIN)
                .args(args)
                .args(&dirs)
                .output()
                .await
                .unwrap()
        }
    };
    // `tasks wait --timeout` gives up at its timeout, not at the 30 s of the others.
    let started = std::time::Instant::now();
    let out = ask(&["tasks", "wait", "nope", "--timeout", "3"]).await;
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(
        said.contains("did not answer before the --timeout"),
        "{said}"
    );
    let started = std::time::Instant::now();
    let outs = futures::future::join_all([
        ask(&["tasks", "list"]),
        ask(&["tasks", "show", "nope"]),
        ask(&["audit", "verify"]),
    ])
    .await;
    signal("-CONT");
    assert!(started.elapsed() < std::time::Duration::from_secs(60));
    for out in outs {
        let said = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{said}");
        assert!(
            said.contains("did not answer within 30 s; it may be hung"),
            "{said}"
        );
    }
}

/// SIGTSTP (Ctrl-Z) to `taskdeck run` suspends the command and the runner, as it would the
/// command alone, after telling the job: it reads "Suspended" and is not counted lost while
/// stopped past its 15 s heartbeat; SIGCONT resumes both, the job says so, and the command's
/// end is its result.
#[tokio::test]
async fn a_suspended_run_is_not_lost_and_resumes() {
    let s = Server::start(&[]).await;
    let mut run = tokio::process::Command::new(BIN)
        .args(["run", "--port", &s.port.to_string(), "--token", &s.admin])
        .args(["--name", "suspended", "--", "sh", "-c"])
        .arg("for i in 1 2 3 4 5 6; do echo step $i; sleep 0.5; done")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let pid = run.id().unwrap().to_string();
    let job = async || {
        let (_, list) = s.v1_get(Some(&s.admin), "/v1/tasks?tool=external").await;
        list["tasks"][0].clone()
    };
    let deadline = Instant::now() + Duration::from_secs(20);
    while job().await["taskId"].as_str().is_none() {
        assert!(Instant::now() < deadline, "no job");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let id = job().await["taskId"].as_str().unwrap().to_string();
    let kill = |signal: &str| {
        std::process::Command::new("kill")
            .args([signal, &pid])
            .status()
            .unwrap()
    };
    assert!(kill("-TSTP").success());
    let stopped = s
        .wait_for(&s.admin, &id, "the job told it is suspended", |t| {
            t["statusMessage"]
                .as_str()
                .is_some_and(|m| m.starts_with("Suspended"))
        })
        .await;
    assert_eq!(stopped["status"], "working", "{stopped}");
    // Past the runner's 15 s heartbeat: still working, not "runner lost".
    tokio::time::sleep(Duration::from_secs(17)).await;
    let (_, still) = s.v1_get(Some(&s.admin), &format!("/v1/tasks/{id}")).await;
    assert_eq!(still["task"]["status"], "working", "{still}");
    assert!(kill("-CONT").success());
    let done = s
        .wait_for(&s.admin, &id, "the job completed", |t| {
            t["status"] == "completed"
        })
        .await;
    assert_eq!(done["result"]["structuredContent"]["exitCode"], 0, "{done}");
    assert!(run.wait().await.unwrap().success());
    let (_, detail) = s.v1_get(Some(&s.admin), &format!("/v1/tasks/{id}")).await;
    assert!(
        detail["timeline"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["data"]["statusMessage"] == "Resumed"),
        "{detail}"
    );
}

/// A resize of `taskdeck run`'s terminal reaches the command's: the command's stdout, a
/// pseudo-terminal of our size, takes the new size, and the command is told (SIGWINCH), so a
/// progress bar redraws at the new width.
#[tokio::test]
async fn a_resized_terminal_resizes_the_commands() {
    use std::{io::Read, os::fd::AsRawFd};
    let s = Server::start(&[]).await;
    let size = |cols: u16, rows: u16| nix::pty::Winsize {
        ws_row: rows,
        ws_col: cols,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    let pty = nix::pty::openpty(&size(100, 40), None).unwrap();
    let script = "import os, signal, time\n\
        def said(*_):\n    c, l = os.get_terminal_size(1)\n    print('size', c, l, flush=True)\n\
        signal.signal(signal.SIGWINCH, said)\n\
        print('ready', flush=True)\n\
        time.sleep(8)";
    let mut run = tokio::process::Command::new(BIN)
        .args(["run", "--port", &s.port.to_string(), "--token", &s.admin])
        .args(["--", "python3", "-c", script])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::from(pty.slave.try_clone().unwrap()))
        .stderr(std::process::Stdio::from(pty.slave.try_clone().unwrap()))
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    drop(pty.slave);
    // What the terminal shows, read on a thread (a pseudo-terminal's master reads block).
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<String>();
    let mut master = std::fs::File::from(pty.master.try_clone().unwrap());
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = master.read(&mut buf) {
            if n == 0
                || tx
                    .send(String::from_utf8_lossy(&buf[..n]).into_owned())
                    .is_err()
            {
                break;
            }
        }
    });
    let mut shown = String::new();
    let mut until = async |what: &str, shown: &mut String| {
        while !shown.contains(what) {
            let more = tokio::time::timeout(Duration::from_secs(20), rx.recv())
                .await
                .unwrap_or_else(|_| panic!("no {what:?} in {shown:?}"));
            shown.push_str(&more.unwrap_or_else(|| panic!("ended without {what:?}: {shown:?}")));
        }
    };
    until("ready", &mut shown).await;
    // The terminal resized, as a terminal emulator does: the new size, then SIGWINCH to the
    // process in its foreground (here, `taskdeck run`).
    // SAFETY: TIOCSWINSZ reads one `winsize` from the struct we pass.
    let set =
        unsafe { nix::libc::ioctl(pty.master.as_raw_fd(), nix::libc::TIOCSWINSZ, &size(77, 30)) };
    assert_eq!(set, 0);
    std::process::Command::new("kill")
        .args(["-WINCH", &run.id().unwrap().to_string()])
        .status()
        .unwrap();
    until("size 77 30", &mut shown).await;
    run.start_kill().unwrap();
    let _ = run.wait().await;
}
