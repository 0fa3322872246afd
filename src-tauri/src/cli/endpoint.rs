//! Which Taskdeck a client command (`taskdeck run`, `tasks`, `audit`) talks to, with which
//! token, and what it says when that Taskdeck refuses the token: a 401 is nearly always a
//! mismatch of port, data dir and config dir (docs/cli.md, "Which Taskdeck the client commands
//! talk to"), so the message names which one instead of repeating "invalid or revoked token".

use std::{path::PathBuf, process::ExitCode};

use serde_json::Value;

use taskdeck_server::{adapters::auth, serve};

/// What the user chose: `--port` / `TASKDECK_PORT`, `--token` / `TASKDECK_TOKEN`, and the data
/// and config dirs (given or default).
#[derive(Debug, Clone)]
pub struct Target {
    /// `--port` / `TASKDECK_PORT`, when given.
    pub port: Option<u16>,
    /// `--token` / `TASKDECK_TOKEN`, when given.
    pub token: Option<String>,
    /// The data dir, given or default.
    pub data_dir: PathBuf,
    /// The config dir, given or default.
    pub config_dir: PathBuf,
}

/// Where Taskdeck is (`http://127.0.0.1:PORT`) and the bearer token to use ("" when none).
#[derive(Debug, Clone)]
pub(crate) struct Endpoint {
    pub(crate) base: String,
    pub(crate) token: String,
    /// False when nothing says a Taskdeck of this data dir is at `base`: no `--port`, none
    /// runs on the data dir, and the token would be the admin token from the config dir. The
    /// admin token is never sent to whatever listens on the default port then; callers say
    /// Taskdeck is not running ([`Endpoint::not_running`]).
    pub(crate) known: bool,
}

impl Endpoint {
    /// What to say when Taskdeck is not running there (or, unknown, not on the data dir; or
    /// running on it without having recorded its port, as on a full disk).
    pub(crate) fn not_running(&self, target: &Target) -> String {
        match self.known {
            true => format!("Taskdeck is not running at {}", self.base),
            false if serve::data_dir_in_use(&target.data_dir) => format!(
                "{} is in use, but no port is recorded in {}: a Taskdeck starting, or running on \
                 a full disk, or a `taskdeck restore` (`taskdeck doctor` says which); for a \
                 Taskdeck that runs, pass --port with the port it printed at its start",
                target.data_dir.display(),
                serve::port_path(&target.data_dir).display()
            ),
            false => format!(
                "no Taskdeck is running on {} (start it with `taskdeck`, or pass the --data-dir, \
                 or --port and --token, of the one that runs)",
                target.data_dir.display()
            ),
        }
    }
}

impl Target {
    /// The endpoint, looked up now (again while `taskdeck run --wait` waits, since Taskdeck may
    /// start on another port or write a new admin token): `--port`, else the port of the
    /// Taskdeck running on the data dir, else the default; `--token`, else the admin token in
    /// the config dir (see [`Endpoint::known`]).
    pub(crate) fn locate(&self) -> Endpoint {
        let running = serve::running_port(&self.data_dir);
        let port = self
            .port
            .or(running)
            .unwrap_or(taskdeck_server::serve::DEFAULT_PORT);
        let token = self
            .token
            .clone()
            .or_else(|| auth::read_admin_token(&self.config_dir))
            .unwrap_or_default();
        Endpoint {
            base: format!("http://127.0.0.1:{port}"),
            token,
            known: self.port.is_some() || running.is_some() || self.token.is_some(),
        }
    }

    /// The endpoint, or, said on stderr, an exit code when there is no token at all (none
    /// given and no admin-token file in the config dir): 1 when no Taskdeck runs on the data
    /// dir either (a Taskdeck that never ran there writes no admin token: that is what the
    /// person needs to hear), else 2.
    pub(crate) fn locate_with_token(&self) -> Result<Endpoint, ExitCode> {
        if self.token.is_none() && auth::read_admin_token(&self.config_dir).is_none() {
            let endpoint = self.locate();
            if !endpoint.known && !serve::data_dir_in_use(&self.data_dir) {
                eprintln!("taskdeck: {}", endpoint.not_running(self));
                return Err(ExitCode::from(1));
            }
            eprintln!(
                "taskdeck: no token: {} does not exist (pass --token or TASKDECK_TOKEN, or \
                 --config-dir for the directory Taskdeck was started with)",
                auth::admin_token_path(&self.config_dir).display()
            );
            return Err(ExitCode::from(2));
        }
        Ok(self.locate())
    }

    /// Why the Taskdeck at `endpoint` refused the token: a `--port` that reaches a Taskdeck
    /// serving another data dir (whose own Taskdeck runs on another port, or not at all), a
    /// `--token` it does not know, or an admin token from the config dir that belongs to
    /// another Taskdeck.
    pub(crate) fn refused(&self, endpoint: &Endpoint) -> String {
        let data_dir = self.data_dir.display();
        match (self.port, serve::running_port(&self.data_dir)) {
            (Some(port), Some(theirs)) if port != theirs => format!(
                "the Taskdeck on port {port} serves another data dir: the one of {data_dir} runs on port {theirs} (leave out --port, or pass that Taskdeck's --data-dir and --config-dir)"
            ),
            (Some(port), None) => format!(
                "the Taskdeck on port {port} does not take this token: it serves another data dir, and none runs on {data_dir} (pass that Taskdeck's --data-dir and --config-dir, or its --token)"
            ),
            _ if self.token.is_some() => format!(
                "the Taskdeck at {} does not know the token given with --token / TASKDECK_TOKEN (revoked, or another Taskdeck's)",
                endpoint.base
            ),
            _ => format!(
                "the Taskdeck at {} does not take the admin token in {}: it belongs to another Taskdeck (pass --config-dir of the one that runs there)",
                endpoint.base,
                self.config_dir.display()
            ),
        }
    }

    /// Sends `request` with the endpoint's token; the response when it succeeded. Errors, said
    /// on stderr, as the exit code: 1 when Taskdeck is not running there or failed, 4 when it
    /// refused the request (its problem `detail` is printed; for a 401, [`Target::refused`]).
    pub(crate) async fn send(
        &self,
        endpoint: &Endpoint,
        request: reqwest::RequestBuilder,
    ) -> Result<reqwest::Response, ExitCode> {
        match self.send_unless_away(endpoint, request).await? {
            Some(resp) => Ok(resp),
            None => {
                eprintln!("taskdeck: {}", endpoint.not_running(self));
                Err(ExitCode::from(1))
            }
        }
    }

    /// [`Target::send`], but `None` (nothing said) when nothing answered at the endpoint: no
    /// Taskdeck is known there, or the connection failed (it is not running, or restarting);
    /// or there is no token yet (`tasks watch` before the first start has written the admin
    /// token: sent without one, its 401 would read as a wrong token).
    pub(crate) async fn send_unless_away(
        &self,
        endpoint: &Endpoint,
        request: reqwest::RequestBuilder,
    ) -> Result<Option<reqwest::Response>, ExitCode> {
        if !endpoint.known || endpoint.token.is_empty() {
            return Ok(None);
        }
        let resp = match request.bearer_auth(&endpoint.token).send().await {
            Ok(resp) => resp,
            // It took the connection and said nothing: stopped or hung, not away.
            Err(e) if e.is_timeout() => {
                eprintln!(
                    "taskdeck: Taskdeck at {} did not answer within {} s; it may be hung \
                     (`taskdeck doctor` checks it)",
                    endpoint.base,
                    ANSWER_TIMEOUT.as_secs()
                );
                return Err(ExitCode::from(1));
            }
            Err(_) => return Ok(None),
        };
        let status = resp.status();
        if status.is_success() {
            return Ok(Some(resp));
        }
        if status == reqwest::StatusCode::UNAUTHORIZED {
            eprintln!("taskdeck: {}", self.refused(endpoint));
        } else {
            let body: Value = resp.json().await.unwrap_or(Value::Null);
            // Taskdeck takes writes again by itself; this command has exited by then.
            let again = match body["reason"] == "disk_full" {
                true => "; run this again once there is room",
                false => "",
            };
            // The same for an id that never was, another principal's, and a task deleted
            // since (on purpose: ids of others' tasks are not told apart); say all three.
            let gone = match status == reqwest::StatusCode::NOT_FOUND
                && body["detail"] == "Task not found"
            {
                true => {
                    ": no task with that id for this token (a mistyped id, another agent's \
                     task, or one deleted since: its retention ran out, a cap removed it, or \
                     someone deleted it)"
                }
                false => "",
            };
            eprintln!(
                "taskdeck: {} ({status}){gone}{again}",
                body["detail"].as_str().unwrap_or("request refused")
            );
        }
        Err(ExitCode::from(if status.is_client_error() { 4 } else { 1 }))
    }

    /// [`Target::send`], then the answer's JSON body (`null` when there is none).
    pub(crate) async fn send_json(
        &self,
        endpoint: &Endpoint,
        request: reqwest::RequestBuilder,
    ) -> Result<Value, ExitCode> {
        let resp = self.send(endpoint, request).await?;
        Ok(resp.json().await.unwrap_or(Value::Null))
    }
}

/// How long a client command waits for Taskdeck to connect (5 s) and then between two reads
/// of its answer ([`ANSWER_TIMEOUT`]) before it says Taskdeck may be hung.
pub(crate) const ANSWER_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// The HTTP client of the commands that ask a running Taskdeck (`tasks`, `audit`, `servers
/// list`): a Taskdeck that is stopped (SIGSTOP) or hung makes them exit 1 saying so, not wait
/// for ever. An event stream without keep-alives read through it ends after
/// [`ANSWER_TIMEOUT`] without an event.
pub(crate) fn http_client() -> reqwest::Client {
    reqwest::Client::builder()
        .connect_timeout(std::time::Duration::from_secs(5))
        .read_timeout(ANSWER_TIMEOUT)
        .build()
        .unwrap_or_default()
}

/// Runs a client command's `work` on a one-thread Tokio runtime; exit code 1 when the runtime
/// cannot start.
pub(crate) fn block_on(work: impl Future<Output = ExitCode>) -> ExitCode {
    match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt.block_on(work),
        Err(e) => {
            eprintln!("taskdeck: {e}");
            ExitCode::from(1)
        }
    }
}
