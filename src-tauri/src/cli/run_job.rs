//! The HTTP side of `taskdeck run`: the external job that tracks the command in Taskdeck
//! (`/v1/jobs`). Its start carries a random `Idempotency-Key`; a start that fails on the way (the
//! connection dropped or was reset, a 5xx) is sent again with the same key a few times, so a
//! retried start never makes a second job. Reports go to `/v1/jobs/{id}/report`.

use std::{path::Path, process::ExitCode, sync::Mutex, time::Duration};

use serde_json::{Value, json};

use taskdeck_server::serve;

use super::{
    endpoint::{Endpoint, Target},
    run_cli::RunArgs,
    run_output::say,
};

/// Heartbeat timeout given to the job, in ms (reports go every second).
pub(crate) const HEARTBEAT_MS: u64 = 15_000;

/// Heartbeat timeout while `taskdeck run` is suspended (Ctrl-Z), in ms: the longest a job may
/// ask for (a day), so a job left in the background is not counted lost.
pub(crate) const SUSPENDED_HEARTBEAT_MS: u64 = 86_400_000;

/// How many times a start that failed on the way (a dropped connection, a 5xx) is sent again,
/// with the same `Idempotency-Key`, before the command runs without Taskdeck.
const START_RETRIES: u32 = 4;

/// The wait before the first of those retries; each next one waits twice as long.
const FIRST_RETRY_DELAY: Duration = Duration::from_millis(250);
/// How long a periodic report ([`JobLink::report`]) may take: it stands between two looks at
/// the command, and a Taskdeck that does not answer must not hold those up. Under the job's
/// heartbeat ([`HEARTBEAT_MS`]), so the next report still keeps the job alive.
const REPORT_TIMEOUT: Duration = Duration::from_secs(5);

/// How long the job's start may take: a Taskdeck that does not answer (frozen, stopped with
/// SIGSTOP) must not hold the command back; it then runs untracked.
const START_TIMEOUT: Duration = Duration::from_secs(10);

/// The most of the command line stored with the job (bytes of its arguments): a longer one (a
/// glob expanded to thousands of paths) is stored as a cut line to read, not as a command to
/// run again, so that Taskdeck takes the job (it refuses arguments over 256 KiB).
const STORED_COMMAND_MAX_BYTES: usize = 64 * 1024;

/// The longest job name Taskdeck takes, in characters.
const NAME_MAX_CHARS: usize = 200;

/// How long [`JobLink::report_final`] keeps sending a final report Taskdeck cannot record yet,
/// and how long when `taskdeck run` was told to stop (SIGTERM, SIGHUP: it should go soon).
pub(crate) const FINAL_REPORT_PATIENCE: Duration = Duration::from_secs(10 * 60);
pub(crate) const FINAL_REPORT_PATIENCE_STOPPING: Duration = Duration::from_secs(30);

/// How many 401 or 404 answers to a final report, from the port a data dir names, are taken
/// for a restart not yet recorded there (10 s of them) before the refusal is believed.
const REFUSALS_BELIEVED: u32 = 5;

/// The external job that tracks this run in Taskdeck (`/v1/jobs`), if Taskdeck took one.
pub(crate) struct JobLink {
    http: reqwest::Client,
    /// Where the job was started, to find Taskdeck again if it restarts on another port.
    target: Target,
    /// Where Taskdeck is now: where the job was started, then wherever the data dir says it
    /// runs ([`JobLink::endpoint_now`]).
    endpoint: Mutex<Endpoint>,
    /// The job was started at the port the data dir recorded (no `--port`): each report first
    /// checks that the data dir's Taskdeck still runs there, so that a report never goes to
    /// another program that took the port after a restart.
    follows_data_dir: bool,
    /// The job's taskId; `None` when the command runs without Taskdeck.
    pub(crate) job: Option<String>,
    /// Taskdeck refused a report's `output` (one older than this `taskdeck run`): reports go
    /// without it from then on.
    output_refused: std::sync::atomic::AtomicBool,
    /// A report was refused for its token (401), and that was said.
    token_refused: std::sync::atomic::AtomicBool,
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
        let mut external = json!({"name": job_name(name), "cwd": cwd, "heartbeatMs": HEARTBEAT_MS});
        external
            .as_object_mut()
            .expect("an object")
            .extend(command_fields(&args.command));
        let body = json!({ "external": external });
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
                        .timeout(START_TIMEOUT)
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
                        detail if detail.is_empty() => format!("HTTP {}", status.as_u16()),
                        detail => format!("HTTP {}: {detail}", status.as_u16()),
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
                        // Its reason was said with the tries before.
                        _ if retries > 0 && !detail.is_empty() && said_why.ends_with(&detail) => {
                            eprintln!(
                                "taskdeck run: Taskdeck still refused the job after {} tries; running the command without it.",
                                retries + 1
                            )
                        }
                        _ => eprintln!(
                            "taskdeck run: Taskdeck refused the job (HTTP {}: {detail}); running the command without it.",
                            status.as_u16()
                        ),
                    }
                    break None;
                }
                // No answer in time: Taskdeck is there but not running (frozen); another try
                // would wait as long again.
                Some(Err(e)) if e.is_timeout() && args.wait => {
                    if !announced {
                        eprintln!(
                            "taskdeck run: waiting: Taskdeck at {} does not answer ...",
                            endpoint.base
                        );
                        announced = true;
                    }
                    endpoint = target.locate();
                    continue;
                }
                Some(Err(e)) if e.is_timeout() => {
                    eprintln!(
                        "taskdeck run: Taskdeck did not answer the job's start within {} s; running the command without it.",
                        START_TIMEOUT.as_secs()
                    );
                    break None;
                }
                // Connected, then lost (reset, closed before the answer).
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
        let follows_data_dir = target.port.is_none()
            && serve::running_port(&target.data_dir)
                .is_some_and(|p| endpoint.base == format!("http://127.0.0.1:{p}"));
        JobLink {
            http,
            target,
            endpoint: Mutex::new(endpoint),
            follows_data_dir,
            job,
            output_refused: Default::default(),
            token_refused: Default::default(),
        }
    }

    /// Whether `detail`, the problem of a 400 answer to `body`, says that Taskdeck takes no
    /// `output` in reports (a Taskdeck older than this `taskdeck run`); if so, the reports from
    /// now on go without it (said once). Errors: none.
    fn refuses_output(&self, detail: &str, body: &Value) -> bool {
        use std::sync::atomic::Ordering;
        let refused = body.get("output").is_some() && detail.contains("unknown field `output`");
        if refused && !self.output_refused.swap(true, Ordering::Relaxed) {
            say(
                "this Taskdeck is older than this taskdeck run and takes no output: the \
                 job's output is not kept there",
            );
        }
        refused
    }

    /// `body` without its `output` once Taskdeck refused one ([`JobLink::refuses_output`]).
    fn strip_output(&self, body: &mut Value) {
        if self
            .output_refused
            .load(std::sync::atomic::Ordering::Relaxed)
            && let Some(report) = body.as_object_mut()
        {
            report.remove("output");
        }
    }

    /// Where Taskdeck is now: where the job was started, or where a report found it again.
    pub(crate) fn endpoint(&self) -> Endpoint {
        self.endpoint
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Where the next report goes, or `None` when it must wait. A job started at the port its
    /// data dir recorded follows that record: Taskdeck may have restarted on another port
    /// (`--port 0`), and the old port may now be another program's (another Taskdeck's, which
    /// must never get this token); while no Taskdeck holds the data dir with a recorded port (a
    /// restart's gap), `None`. Otherwise (`--port`, or a token given for a Taskdeck of another
    /// data dir) the endpoint where the job was started.
    fn endpoint_now(&self) -> Option<Endpoint> {
        let current = self.endpoint();
        if !self.follows_data_dir {
            return Some(current);
        }
        let port = serve::running_port(&self.target.data_dir)?;
        let base = format!("http://127.0.0.1:{port}");
        if current.base == base {
            return Some(current);
        }
        let found = self.target.locate();
        // Read again: it must still say that port (not the default port of a Taskdeck gone
        // meanwhile).
        if !found.known || found.base != base {
            return None;
        }
        *self.endpoint.lock().unwrap_or_else(|p| p.into_inner()) = found.clone();
        Some(found)
    }

    /// Sends one report (`POST /v1/jobs/{id}/report`, at most [`REPORT_TIMEOUT`]) and returns
    /// Taskdeck's answer, or `{"ended": detail, "status": status}` when Taskdeck answered that
    /// the job's run is over (409, e.g. its ttlMs passed, or Taskdeck is stopping; `status`
    /// from `GET /v1/jobs/{id}`, null when unread). `None` without a job or when the report did
    /// not get through (refused for its token, 401, included: said once), or was not sent for want of the data dir's Taskdeck
    /// ([`JobLink::endpoint_now`]: one restarted on another port is followed, so it keeps the
    /// job's heartbeat).
    pub(crate) async fn report(&self, mut body: Value) -> Option<Value> {
        let id = self.job.as_ref()?;
        let endpoint = self.endpoint_now()?;
        let (status, answer) = loop {
            self.strip_output(&mut body);
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
                Err(_) => return None,
            };
            let status = r.status();
            if status == reqwest::StatusCode::UNAUTHORIZED {
                self.say_token_refused(&endpoint, r).await;
                return None;
            }
            let answer = r.json::<Value>().await.ok()?;
            let detail = answer["detail"].as_str().unwrap_or_default();
            if !(status == reqwest::StatusCode::BAD_REQUEST && self.refuses_output(detail, &body)) {
                break (status, answer);
            }
        };
        let conflict = status == reqwest::StatusCode::CONFLICT;
        if !conflict {
            return Some(answer);
        }
        // How it ended: a cancel is still to be carried out, though Taskdeck took it without us.
        let status = self.job_status(&endpoint, id).await;
        Some(json!({"ended": answer["detail"], "status": status}))
    }

    /// Says once that Taskdeck refused a report's token (`refusal`, a 401 from `endpoint`):
    /// the job can no longer hear from this run and will end as "runner lost".
    async fn say_token_refused(&self, endpoint: &Endpoint, refusal: reqwest::Response) {
        if self
            .token_refused
            .swap(true, std::sync::atomic::Ordering::Relaxed)
        {
            return;
        }
        let detail = problem_detail(refusal).await;
        say(&format!(
            "Taskdeck refused this job's report (HTTP 401: {detail}): {}; the command goes on, \
             and the job will end as \"runner lost\" unless Taskdeck takes the token again",
            self.target.refused(endpoint)
        ));
    }

    /// The job's status (`GET /v1/jobs/{id}`, at most [`REPORT_TIMEOUT`]); null when it cannot
    /// be read now.
    async fn job_status(&self, endpoint: &Endpoint, id: &str) -> Value {
        let r = self
            .http
            .get(format!("{}/v1/jobs/{id}", endpoint.base))
            .bearer_auth(&endpoint.token)
            .timeout(REPORT_TIMEOUT)
            .send()
            .await;
        match r {
            Ok(r) if r.status().is_success() => r
                .json::<Value>()
                .await
                .map_or(Value::Null, |t| t["status"].clone()),
            _ => Value::Null,
        }
    }

    /// Sends the job's final report (its result or cancel) until Taskdeck records it: a report
    /// refused with 503 (its disk is full: the end cannot be stored yet) or lost on the way is
    /// sent again after the answer's `Retry-After` (5 s by default, 1 to 10 s: under the job's
    /// heartbeat, which each try keeps), each try given 30 s (a third of a shorter `patience`),
    /// for up to `patience`, saying so once on stderr; a Taskdeck that restarted on another port
    /// is found again through the data dir ([`JobLink::endpoint_now`]), and a 401 or 404 from a
    /// port the data dir named is taken for a restart not yet recorded, [`REFUSALS_BELIEVED`]
    /// times (2 s apart), then for a refusal (a revoked token). Gives up early when
    /// `give_up` resolves (Ctrl-C, SIGTERM or SIGHUP). Any other refusal (the job already
    /// ended) is said and not retried. A job whose end is never recorded ends as "runner lost"
    /// after its heartbeat: without the exit code, or, for a cancel, instead of cancelled.
    pub(crate) async fn report_final(
        &self,
        mut body: Value,
        patience: Duration,
        give_up: impl Future<Output = ()>,
    ) {
        let Some(id) = self.job.as_ref() else {
            return;
        };
        let say = |line: String| say(&line);
        let deadline = tokio::time::Instant::now() + patience;
        // What is lost when the end is not recorded: the command's result, or the cancel.
        let lost = match body.get("cancelled") {
            Some(Value::Bool(true)) => "as \"runner lost\" instead of cancelled",
            _ => "as \"runner lost\", without the exit code",
        };
        let mut said = false;
        let mut refusals = 0;
        // Each try's time: 30 s, or a third of a shorter patience (told to stop), so that the
        // wait is said within it.
        let try_timeout = Duration::from_secs(30).min(patience / 3);
        tokio::pin!(give_up);
        loop {
            self.strip_output(&mut body);
            // `None`: not sent, no Taskdeck of the data dir to send it to yet.
            let sent = match self.endpoint_now() {
                None => None,
                Some(endpoint) => {
                    let send = async {
                        let r = self
                            .http
                            .post(format!("{}/v1/jobs/{id}/report", endpoint.base))
                            .bearer_auth(&endpoint.token)
                            .timeout(try_timeout)
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
                    tokio::select! {
                        sent = send => Some((sent, endpoint)),
                        _ = &mut give_up => {
                            say(format!("gave up sending the job's end: the job will end {lost}"));
                            return;
                        }
                    }
                }
            };
            let (why, wait) = match sent {
                None => (
                    format!(
                        "no Taskdeck runs on {} with a recorded port: stopped or starting",
                        self.target.data_dir.display()
                    ),
                    Duration::from_secs(2),
                ),
                Some((Ok((status, _, _)), _)) if status.is_success() => {
                    if said || refusals > 0 {
                        say("Taskdeck recorded the job's end".into());
                    }
                    return;
                }
                Some((Ok((status, retry_after, detail)), _)) if status.as_u16() == 503 => (
                    detail,
                    Duration::from_secs(retry_after.unwrap_or(5).clamp(1, 10)),
                ),
                Some((Ok((status, _, detail)), _))
                    if status.as_u16() == 400 && self.refuses_output(&detail, &body) =>
                {
                    continue;
                }
                // Maybe not the data dir's Taskdeck after all (a port file left by a start that
                // has not written its own yet): look again, for a while; a Taskdeck that keeps
                // refusing (the token was revoked) is believed.
                Some((Ok((status, _, detail)), _))
                    if self.follows_data_dir
                        && matches!(status.as_u16(), 401 | 404)
                        && refusals < REFUSALS_BELIEVED =>
                {
                    if refusals == 0 {
                        say(format!(
                            "Taskdeck refused the job's end (HTTP {}: {detail}); trying \
                             again for {} s in case it is restarting",
                            status.as_u16(),
                            2 * REFUSALS_BELIEVED
                        ));
                    }
                    refusals += 1;
                    (
                        format!("HTTP {}: {detail}", status.as_u16()),
                        Duration::from_secs(2),
                    )
                }
                Some((Ok((status, _, detail)), endpoint)) => {
                    // A cancel Taskdeck already took (after its grace) is recorded as it is.
                    let cancelled = body.get("cancelled") == Some(&Value::Bool(true));
                    if !(status.as_u16() == 409
                        && cancelled
                        && self.job_status(&endpoint, id).await == "cancelled")
                    {
                        let why = match status.as_u16() {
                            401 => format!(": {}", self.target.refused(&endpoint)),
                            _ => String::new(),
                        };
                        say(format!(
                            "Taskdeck refused the job's end (HTTP {}: {detail}){why}",
                            status.as_u16()
                        ));
                    }
                    return;
                }
                Some((Err(e), endpoint)) => {
                    let why = if e.is_connect() {
                        format!("Taskdeck is not reachable at {}", endpoint.base)
                    } else if e.is_timeout() {
                        format!("Taskdeck did not answer within {} s", try_timeout.as_secs())
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
            if !said && refusals == 0 {
                say(format!(
                    "Taskdeck cannot record the job's end yet ({why}); sending it again until it \
                     does, for up to {} s (Ctrl-C to give up)",
                    patience.as_secs()
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
        let result = json!({"content": [{"type": "text", "text": format!("Could not start {program:?}: {e}")}], "isError": true});
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

/// `name` as the job's name: cut to [`NAME_MAX_CHARS`] with "…" (a default name is the whole
/// command line, which may be longer).
fn job_name(name: &str) -> String {
    match name.chars().count() > NAME_MAX_CHARS {
        true => name.chars().take(NAME_MAX_CHARS - 1).chain(['…']).collect(),
        false => name.to_string(),
    }
}

/// `command`'s arguments with their credentials masked, as Taskdeck stores an argument list
/// ([`taskdeck_server::tools::secrets::redact_value`]).
pub(super) fn masked(command: &[String]) -> Vec<String> {
    let list = json!(command);
    match taskdeck_server::tools::secrets::redact_value(&list) {
        Some(Value::Array(items)) => items
            .into_iter()
            .map(|v| v.as_str().unwrap_or_default().to_string())
            .collect(),
        _ => command.to_vec(),
    }
}

/// The job's fields for `command`: `command` (the argument list, which `taskdeck tasks rerun`
/// runs again) when its arguments fit in [`STORED_COMMAND_MAX_BYTES`], else `commandLine`, the
/// command as a shell line (its credentials masked) cut to 1,000 characters with "…", to read
/// (not to run again).
fn command_fields(command: &[String]) -> serde_json::Map<String, Value> {
    let bytes: usize = command.iter().map(|a| a.len() + 1).sum();
    let mut fields = serde_json::Map::new();
    if bytes <= STORED_COMMAND_MAX_BYTES {
        fields.insert("command".into(), json!(command));
    } else {
        let line = taskdeck_server::tools::process::shell_line(&masked(command));
        let cut: String = line.chars().take(999).chain(['…']).collect();
        fields.insert("commandLine".into(), json!(cut));
    }
    fields
}
