//! The HTTP side of `taskdeck run`: the external job that tracks the command in Taskdeck
//! (`/v1/jobs`). Its start carries a random `Idempotency-Key`; a start that fails on the way (the
//! connection dropped or was reset, a 5xx) is sent again with the same key a few times, so a
//! retried start never makes a second job. Reports go to `/v1/jobs/{id}/report`.

use std::{io::Write as _, path::Path, process::ExitCode, sync::Mutex, time::Duration};

use serde_json::{Value, json};

use taskdeck_server::serve;

use super::{
    endpoint::{Endpoint, Target},
    run_cli::RunArgs,
};

/// Heartbeat timeout given to the job, in ms (reports go every second).
const HEARTBEAT_MS: u64 = 15_000;

/// How many times a start that failed on the way (a dropped connection, a 5xx) is sent again,
/// with the same `Idempotency-Key`, before the command runs without Taskdeck.
const START_RETRIES: u32 = 4;

/// The wait before the first of those retries; each next one waits twice as long.
const FIRST_RETRY_DELAY: Duration = Duration::from_millis(250);
/// How long a periodic report ([`JobLink::report`]) may take: it stands between two looks at
/// the command, and a Taskdeck that does not answer must not hold those up. Under the job's
/// heartbeat ([`HEARTBEAT_MS`]), so the next report still keeps the job alive.
const REPORT_TIMEOUT: Duration = Duration::from_secs(5);

/// How long [`JobLink::report_final`] keeps sending a final report Taskdeck cannot record yet,
/// and how long when `taskdeck run` was told to stop (SIGTERM, SIGHUP: it should go soon).
pub(crate) const FINAL_REPORT_PATIENCE: Duration = Duration::from_secs(10 * 60);
pub(crate) const FINAL_REPORT_PATIENCE_STOPPING: Duration = Duration::from_secs(30);

/// The external job that tracks this run in Taskdeck (`/v1/jobs`), if Taskdeck took one.
pub(crate) struct JobLink {
    http: reqwest::Client,
    /// Where the job was started, to find Taskdeck again if it restarts on another port.
    target: Target,
    /// Where Taskdeck is now: where the job was started, then wherever a report that could not
    /// connect found it again through the data dir ([`JobLink::relocate`]).
    endpoint: Mutex<Endpoint>,
    /// The job's taskId; `None` when the command runs without Taskdeck.
    pub(crate) job: Option<String>,
}

impl JobLink {
    /// Starts the job (`POST /v1/jobs`, an external job with the command, its working directory
    /// and [`HEARTBEAT_MS`]). A start that fails on the way is sent again with the same
    /// `Idempotency-Key` up to [`START_RETRIES`] times; with `--wait`, it waits for Taskdeck
    /// (and for a token it accepts) as long as it takes. Without a job (Taskdeck not running,
    /// or it refused), says why on stderr.
    pub(crate) async fn start(args: &RunArgs, config_dir: &Path, name: &str) -> JobLink {
        let target = Target {
            port: args.port,
            token: args.token.clone(),
            data_dir: args.data_dir.clone(),
            config_dir: config_dir.to_path_buf(),
        };
        let mut endpoint = target.locate();
        let http = reqwest::Client::new();
        let cwd = std::env::current_dir()
            .map(|d| d.display().to_string())
            .unwrap_or_default();
        let body = json!({"external": {"name": name, "command": args.command, "cwd": cwd, "heartbeatMs": HEARTBEAT_MS}});
        // One key for this run's job, sent again with every retry of its start: a start whose
        // answer was lost is not done twice (Taskdeck answers the retry with the job it started).
        let idempotency_key = format!("\"{}\"", uuid::Uuid::new_v4());
        let mut announced = false;
        let mut retries = 0;
        // Why the last try failed, said once however many tries fail the same way.
        let mut said_why = String::new();
        let job: Option<String> = loop {
            // Not sent (`None`) where no Taskdeck of this data dir is known to be.
            let sent = match endpoint.known {
                true => Some(
                    http.post(format!("{}/v1/jobs", endpoint.base))
                        .bearer_auth(&endpoint.token)
                        .header("Idempotency-Key", &idempotency_key)
                        .json(&body)
                        .send()
                        .await,
                ),
                false => None,
            };
            // Why this attempt failed on the way, when it may be sent again (nothing was started,
            // or what was is found again by its key).
            let why = match sent {
                // 202: started; 200: a retry found the job an earlier attempt started.
                Some(Ok(r)) if r.status() == 202 || r.status() == 200 => {
                    match r.json::<Value>().await {
                        Ok(v) => break v["taskId"].as_str().map(String::from),
                        Err(e) => format!("the answer was cut off: {e}"),
                    }
                }
                // The admin-token file this run read may be older than the Taskdeck that just
                // started (or not exist yet): keep waiting for a token that works.
                Some(Ok(r)) if r.status() == 401 && args.wait && args.token.is_none() => {
                    if !announced {
                        eprintln!(
                            "taskdeck run: waiting for Taskdeck to accept its admin token ..."
                        );
                        announced = true;
                    }
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    endpoint = target.locate();
                    continue;
                }
                Some(Ok(r)) if r.status().is_server_error() && retries < START_RETRIES => {
                    let status = r.status();
                    match problem_detail(r).await {
                        detail if detail.is_empty() => format!("HTTP {status}"),
                        detail => format!("HTTP {status}: {detail}"),
                    }
                }
                Some(Ok(r)) => {
                    let status = r.status();
                    let detail = problem_detail(r).await;
                    match status.as_u16() {
                        401 => eprintln!(
                            "taskdeck run: {}; running the command without it.",
                            target.refused(&endpoint)
                        ),
                        _ => eprintln!(
                            "taskdeck run: Taskdeck refused the job (HTTP {status}: {detail}); running the command without it."
                        ),
                    }
                    break None;
                }
                // Connected, then lost (reset, closed before the answer, timed out).
                Some(Err(e)) if !e.is_connect() => e.to_string(),
                // Not running there (refused to connect), or not known to run at all.
                _ if args.wait => {
                    if !announced {
                        eprintln!(
                            "taskdeck run: waiting: {} ...",
                            endpoint.not_running(&target)
                        );
                        announced = true;
                    }
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    endpoint = target.locate();
                    continue;
                }
                _ => {
                    eprintln!(
                        "taskdeck run: {}; running the command without it (use --wait to wait for it).",
                        endpoint.not_running(&target)
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
                endpoint = target.locate();
                continue;
            }
            if why != said_why {
                eprintln!("taskdeck run: starting the job failed ({why}); trying again");
                said_why = why;
            }
            tokio::time::sleep(FIRST_RETRY_DELAY * 2u32.pow(retries)).await;
            retries += 1;
        };
        JobLink {
            http,
            target,
            endpoint: Mutex::new(endpoint),
            job,
        }
    }

    /// Where Taskdeck is now: where the job was started, or where a report found it again.
    pub(crate) fn endpoint(&self) -> Endpoint {
        self.endpoint
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// A report could not connect: Taskdeck may have restarted on another port (`--port 0`).
    /// The next report goes where its data dir says it runs now, once a Taskdeck holds the data
    /// dir and has recorded its port; until then (and with `--port`, which names the port for
    /// good) it keeps going where it went, so a restart's gap never sends the token to the
    /// default port.
    fn relocate(&self) {
        if self.target.port.is_some() || serve::running_port(&self.target.data_dir).is_none() {
            return;
        }
        let found = self.target.locate();
        if found.known {
            *self.endpoint.lock().unwrap_or_else(|p| p.into_inner()) = found;
        }
    }

    /// Sends one report (`POST /v1/jobs/{id}/report`, at most [`REPORT_TIMEOUT`]) and returns
    /// Taskdeck's answer, or `{"ended": detail}` when Taskdeck already ended the job (409, e.g.
    /// its ttlMs passed). `None` without a job or when the report did not get through; one that
    /// could not connect looks for Taskdeck again for the next ([`JobLink::relocate`]), so a
    /// Taskdeck restarted on another port keeps the job's heartbeat.
    pub(crate) async fn report(&self, body: Value) -> Option<Value> {
        let id = self.job.as_ref()?;
        let endpoint = self.endpoint();
        let r = match self
            .http
            .post(format!("{}/v1/jobs/{id}/report", endpoint.base))
            .bearer_auth(&endpoint.token)
            .timeout(REPORT_TIMEOUT)
            .json(&body)
            .send()
            .await
        {
            Ok(r) => r,
            Err(e) => {
                if e.is_connect() {
                    self.relocate();
                }
                return None;
            }
        };
        let conflict = r.status() == reqwest::StatusCode::CONFLICT;
        let answer = r.json::<Value>().await.ok()?;
        Some(if conflict {
            json!({"ended": answer["detail"]})
        } else {
            answer
        })
    }

    /// Sends the job's final report (its result or cancel) until Taskdeck records it: a report
    /// refused with 503 (its disk is full: the end cannot be stored yet) or lost on the way is
    /// sent again after the answer's `Retry-After` (5 s by default, 1 to 10 s: under the job's
    /// heartbeat, which each try keeps), each try given 30 s, for up to `patience`, saying so
    /// once on stderr; a Taskdeck that restarted on another port is found again through the
    /// data dir ([`JobLink::relocate`]). Gives up early when `give_up` resolves (Ctrl-C, SIGTERM
    /// or SIGHUP). Any other refusal (the job already ended) is said and not retried. A job
    /// whose end is never recorded ends as "runner lost" after its heartbeat: without the exit
    /// code, or, for a cancel, instead of cancelled.
    pub(crate) async fn report_final(
        &self,
        body: Value,
        patience: Duration,
        give_up: impl Future<Output = ()>,
    ) {
        let Some(id) = self.job.as_ref() else {
            return;
        };
        // Written, not printed: after a hang-up stderr may be gone, and printing would panic.
        let say = |line: String| {
            let _ = writeln!(std::io::stderr(), "taskdeck run: {line}");
        };
        let deadline = tokio::time::Instant::now() + patience;
        // What is lost when the end is not recorded: the command's result, or the cancel.
        let lost = match body.get("cancelled") {
            Some(Value::Bool(true)) => "as \"runner lost\" instead of cancelled",
            _ => "as \"runner lost\", without the exit code",
        };
        let mut said = false;
        tokio::pin!(give_up);
        loop {
            let endpoint = self.endpoint();
            let send = async {
                let r = self
                    .http
                    .post(format!("{}/v1/jobs/{id}/report", endpoint.base))
                    .bearer_auth(&endpoint.token)
                    .timeout(Duration::from_secs(30))
                    .json(&body)
                    .send()
                    .await?;
                let status = r.status();
                let retry_after = r
                    .headers()
                    .get(reqwest::header::RETRY_AFTER)
                    .and_then(|v| v.to_str().ok()?.trim().parse::<u64>().ok());
                let detail = problem_detail(r).await;
                Ok::<_, reqwest::Error>((status, retry_after, detail))
            };
            let sent = tokio::select! {
                sent = send => sent,
                _ = &mut give_up => {
                    say(format!("gave up sending the job's end: the job will end {lost}"));
                    return;
                }
            };
            let (why, wait) = match sent {
                Ok((status, _, _)) if status.is_success() => return,
                Ok((status, retry_after, detail)) if status.as_u16() == 503 => (
                    detail,
                    Duration::from_secs(retry_after.unwrap_or(5).clamp(1, 10)),
                ),
                Ok((status, _, detail)) => {
                    say(format!(
                        "Taskdeck refused the job's end (HTTP {status}: {detail})"
                    ));
                    return;
                }
                Err(e) => {
                    let why = if e.is_connect() {
                        self.relocate();
                        format!("Taskdeck is not reachable at {}", endpoint.base)
                    } else if e.is_timeout() {
                        "Taskdeck did not answer within 30 s".to_string()
                    } else {
                        e.to_string()
                    };
                    (why, Duration::from_secs(5))
                }
            };
            if tokio::time::Instant::now() + wait > deadline {
                say(format!(
                    "Taskdeck did not record the job's end ({why}); gave up after {} s: the job \
                     will end {lost}",
                    patience.as_secs()
                ));
                return;
            }
            if !said {
                say(format!(
                    "Taskdeck cannot record the job's end yet ({why}); sending it again every {} \
                     s (Ctrl-C to give up)",
                    wait.as_secs()
                ));
                said = true;
            }
            tokio::select! {
                _ = tokio::time::sleep(wait) => {}
                _ = &mut give_up => {
                    say(format!("gave up sending the job's end: the job will end {lost}"));
                    return;
                }
            }
        }
    }

    /// The command could not be started: says so, ends the job with an error result, and
    /// returns the exit code a shell would (127 when the command is not found, 126 otherwise).
    pub(crate) async fn could_not_start(&self, program: &str, e: std::io::Error) -> ExitCode {
        eprintln!("taskdeck run: cannot start {program:?}: {e}");
        let result = json!({"content": [{"type": "text", "text": format!("Could not start: {e}")}], "isError": true});
        // The job's only result: sent until recorded, as a command's end is, for a short while
        // (nothing runs meanwhile).
        self.report_final(
            json!({"result": result}),
            FINAL_REPORT_PATIENCE_STOPPING,
            std::future::pending(),
        )
        .await;
        ExitCode::from(if e.kind() == std::io::ErrorKind::NotFound {
            127
        } else {
            126
        })
    }
}

/// The `detail` of the problem document `r` carries, or "" (no JSON body, no detail).
async fn problem_detail(r: reqwest::Response) -> String {
    r.json::<Value>()
        .await
        .ok()
        .and_then(|v| v["detail"].as_str().map(String::from))
        .unwrap_or_default()
}
