//! One upstream MCP server and its supervisor: starts it (a child process over stdio, or a
//! Streamable HTTP connection), initializes it with rmcp's client (the handshake of its protocol
//! era, probed until known: [`Era`]), lists its tools, and starts it
//! again with exponential backoff (1 s doubling to 60 s) whenever it fails or exits. Its state
//! is kept as a [`ServerStatus`] for the human.

use std::{
    collections::{HashMap, VecDeque},
    process::Stdio,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use rmcp::{
    model::Tool,
    service::{
        ClientInitializeError, ClientServiceExt, Peer, QuitReason, RoleClient, RunningService,
    },
    transport::{
        StreamableHttpClientTransport, TokioChildProcess,
        streamable_http_client::StreamableHttpClientTransportConfig,
    },
};
use tokio::{
    io::{AsyncBufReadExt, BufReader},
    sync::{Notify, watch},
};
use tokio_util::sync::CancellationToken;

use super::{
    ServerState, ServerStatus,
    client_handler::{InFlight, UpstreamClient},
    era::Era,
    http_transport::{EndsOnUnaddressedError, SessionAware, Unreachable, resume_policy},
    server_target::redact_url,
    servers_file::{ServerSpec, Transport},
    upstream_error::{of_handshake, of_request},
};
use taskdeck_engine::clock::now_ms;

/// The variables of Taskdeck's environment a stdio upstream inherits (the TypeScript and
/// Python SDKs' default for stdio servers on POSIX, plus the locale).
const INHERITED_ENV: &[&str] = &[
    "HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "LC_ALL",
];

/// Lines of stderr kept per server.
const STDERR_LINES: usize = 20;
/// Time allowed to start a server and complete its handshake and first `tools/list`; after
/// each attempt that ran out of it, the next one gets twice as long, up to
/// [`CONNECT_TIMEOUT_MAX`] (a server that takes a minute to start connects in the end).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);
const CONNECT_TIMEOUT_MAX: Duration = Duration::from_secs(300);
/// First and largest wait before starting a failed server again.
const BACKOFF_FIRST: Duration = Duration::from_secs(1);
const BACKOFF_MAX: Duration = Duration::from_secs(60);
/// A connection that lasted this long resets the backoff: a server back for a while starts
/// again from [`BACKOFF_FIRST`] when it fails; one that fails sooner keeps doubling it.
const STABLE_AFTER: Duration = Duration::from_secs(10);
/// How long a stdio server whose handshake failed is given to be seen exiting.
const EXIT_SEEN_WITHIN: Duration = Duration::from_millis(500);

/// A live connection to an upstream: the peer to send requests to, and its protocol version.
pub struct Connection {
    /// rmcp's handle for sending the server requests.
    pub peer: Peer<RoleClient>,
    /// Negotiated protocol version, e.g. `2025-11-25`.
    pub protocol_version: String,
}

/// One configured upstream server.
pub struct Upstream {
    /// The server's name in servers.json.
    pub name: String,
    /// Its entry in servers.json, as it was started.
    pub spec: ServerSpec,
    status: Mutex<ServerStatus>,
    /// What [`Upstream::scrub`] takes out, longest first.
    secrets: Vec<String>,
    /// `timeoutMs` (a reload may change it without restarting the server).
    timeout_ms: Mutex<Option<u64>>,
    /// The last lines the process wrote to stderr.
    stderr_tail: Arc<Mutex<VecDeque<String>>>,
    connection: watch::Sender<Option<Arc<Connection>>>,
    /// The tools it offered when last connected (kept while it restarts, so that agents keep
    /// seeing them and a call waits for the reconnection).
    tools: Mutex<Vec<Tool>>,
    /// Calls under way, for attributing progress, logs and elicitations.
    pub in_flight: Arc<InFlight>,
    /// Ask the supervisor to list the tools again (`notifications/tools/list_changed`).
    relist: Arc<Notify>,
    /// Tell the supervisor the connection failed a request, or (HTTP) that its server cannot
    /// be reached any more: it is dropped and made again. Why, in `lost_why`.
    lost: Arc<Notify>,
    lost_why: Arc<Mutex<Option<String>>>,
    /// A call waits for the connection: the supervisor cuts its backoff wait short.
    wanted: Notify,
    /// Calls waiting for the connection now: while there are any, failed attempts are retried
    /// every [`BACKOFF_FIRST`].
    waiting_calls: std::sync::atomic::AtomicUsize,
    /// Why an HTTP connection's transport ended it ([`EndsOnUnaddressedError`]), unscrubbed.
    transport_ended: Arc<Mutex<Option<String>>>,
    stop: CancellationToken,
    /// Its protocol era, once a connection or a late answer told it: which handshake it gets.
    era: Mutex<Era>,
    /// The process group of the running stdio server (it and every process it started).
    process_group: Mutex<Option<ProcessGroup>>,
    /// A pidfd of the running stdio server's process, taken by the supervisor to see it exit.
    exit_watch: Mutex<Option<std::os::fd::OwnedFd>>,
}

impl Upstream {
    /// The upstream `name` as configured by `spec`, not yet started.
    pub fn new(name: &str, spec: ServerSpec) -> Arc<Upstream> {
        let status = initial_status(name, &spec);
        let secrets = secrets_of(&spec);
        let timeout_ms = Mutex::new(spec.timeout_ms);
        Arc::new(Upstream {
            name: name.to_string(),
            spec,
            status: Mutex::new(status),
            secrets,
            timeout_ms,
            stderr_tail: Arc::default(),
            connection: watch::channel(None).0,
            tools: Mutex::new(Vec::new()),
            in_flight: Arc::new(InFlight::default()),
            relist: Arc::new(Notify::new()),
            lost: Arc::default(),
            lost_why: Arc::default(),
            wanted: Notify::new(),
            waiting_calls: Default::default(),
            transport_ended: Arc::default(),
            stop: CancellationToken::new(),
            era: Mutex::default(),
            process_group: Mutex::default(),
            exit_watch: Mutex::default(),
        })
    }

    /// `text` with every secret of this server's spec (values of `env` and `headers`, query
    /// values and the password of its URL) replaced by `[redacted]`: for any message made from
    /// an upstream error, which may quote them (a transport error quotes the URL whole).
    pub fn scrub(&self, text: &str) -> String {
        let mut out = text.to_string();
        for secret in &self.secrets {
            out = out.replace(secret.as_str(), "[redacted]");
        }
        out
    }

    /// Its `timeoutMs`: the spec's, or the one a reload gave it since.
    pub fn timeout_ms(&self) -> Option<u64> {
        *self.timeout_ms.lock().unwrap()
    }

    /// Gives it a new `timeoutMs` (for calls made from now on), without a restart.
    pub fn set_timeout_ms(&self, timeout_ms: Option<u64>) {
        *self.timeout_ms.lock().unwrap() = timeout_ms;
    }

    /// Its status now.
    pub fn status(&self) -> ServerStatus {
        let mut status = self.status.lock().unwrap().clone();
        status.stderr_tail = self.stderr_tail.lock().unwrap().iter().cloned().collect();
        status
    }

    /// Notes that its tool `name` is not served (the engine refused it, for `reason`): it is
    /// counted out of `toolCount` and listed in `unservedTools`.
    pub fn not_served(&self, name: &str, reason: String) {
        let mut status = self.status.lock().unwrap();
        if !status.unserved_tools.iter().any(|t| t.name == name) {
            status.tool_count = status.tool_count.saturating_sub(1);
            status.unserved_tools.push(super::UnservedTool {
                name: name.to_string(),
                reason,
            });
        }
    }

    /// The tools it offered when last connected.
    pub fn tools(&self) -> Vec<Tool> {
        self.tools.lock().unwrap().clone()
    }

    /// True when it offered tool `name` when last connected (without copying the list: asked
    /// on every call).
    pub fn has_tool(&self, name: &str) -> bool {
        self.tools.lock().unwrap().iter().any(|t| t.name == name)
    }

    /// The connection, waiting up to `within` for one. `None`: not connected in time. While a
    /// call waits (`within` > 0) for a failed server, the supervisor tries again every
    /// [`BACKOFF_FIRST`] rather than at the end of its backoff (up to [`BACKOFF_MAX`]): the
    /// server may be back, and a call is waiting for it.
    pub async fn connected(&self, within: Duration) -> Option<Arc<Connection>> {
        self.connected_anew(None, within).await
    }

    /// As [`Upstream::connected`], but a connection other than `failed` (one that just failed
    /// a request; the supervisor is told by [`Upstream::lost`] and replaces it).
    pub async fn connected_anew(
        &self,
        failed: Option<&Arc<Connection>>,
        within: Duration,
    ) -> Option<Arc<Connection>> {
        use std::sync::atomic::Ordering;
        let usable = |c: &Option<Arc<Connection>>| {
            c.as_ref()
                .is_some_and(|c| failed.is_none_or(|f| !Arc::ptr_eq(c, f)))
        };
        let mut rx = self.connection.subscribe();
        let now = rx.borrow().clone();
        if usable(&now) {
            return now;
        }
        if within.is_zero() {
            return None;
        }
        // Counted until this wait ends, however it ends (a cancelled call drops it).
        struct Counted<'a>(&'a std::sync::atomic::AtomicUsize);
        impl Drop for Counted<'_> {
            fn drop(&mut self) {
                self.0.fetch_sub(1, Ordering::SeqCst);
            }
        }
        self.waiting_calls.fetch_add(1, Ordering::SeqCst);
        let _counted = Counted(&self.waiting_calls);
        self.wanted.notify_one();
        let wait = rx.wait_for(usable);
        match tokio::time::timeout(within, wait).await {
            Ok(Ok(c)) => c.clone(),
            _ => None,
        }
    }

    /// Reports that connection `failed` failed a request (`why`, e.g. the HTTP endpoint refused
    /// it): the supervisor drops it and connects again with backoff, as for a server that
    /// exited. An HTTP client cannot tell otherwise that the server went away. A connection
    /// already replaced is left alone (its successor is not the one that failed).
    pub fn lost(&self, failed: &Arc<Connection>, why: String) {
        let current = self.connection.borrow().clone();
        if current.is_some_and(|c| Arc::ptr_eq(&c, failed)) {
            *self.lost_why.lock().unwrap() = Some(why);
            self.lost.notify_one();
        }
    }

    /// True once [`Upstream::stop`] was called (the server was removed or changed in
    /// servers.json, or Taskdeck is stopping).
    pub fn stopped(&self) -> bool {
        self.stop.is_cancelled()
    }

    /// Stops the supervisor and the server: a stdio server's process group (the server and
    /// what it started) is sent SIGTERM now, its process killed as the connection ends.
    pub fn stop(&self) {
        self.stop.cancel();
        drop(self.process_group.lock().unwrap().take());
    }

    /// Runs the supervisor until [`Upstream::stop`]. `on_tools`: called whenever the tool list
    /// may have changed (connected, listed again).
    pub async fn supervise(self: Arc<Self>, on_tools: Arc<dyn Fn() + Send + Sync>) {
        if self.spec.disabled {
            return;
        }
        let mut backoff = BACKOFF_FIRST;
        let mut connect_timeout = CONNECT_TIMEOUT;
        loop {
            self.set_state(ServerState::Starting, None);
            let started = Instant::now();
            match tokio::time::timeout(connect_timeout, self.connect()).await {
                Ok(Ok(running)) => {
                    connect_timeout = CONNECT_TIMEOUT;
                    on_tools();
                    let reason = self.serve_until_lost(running, &on_tools).await;
                    self.connection.send_replace(None);
                    match reason {
                        None => return,
                        // Stopped while the loss was seen: nothing to start again or report.
                        Some(_) if self.stop.is_cancelled() => return,
                        Some(why) => self.set_state(ServerState::Failed, Some(why)),
                    }
                    if started.elapsed() >= STABLE_AFTER {
                        backoff = BACKOFF_FIRST;
                    }
                }
                Ok(Err(e)) => self.set_state(ServerState::Failed, Some(e)),
                Err(_) => {
                    let next = (connect_timeout * 2).min(CONNECT_TIMEOUT_MAX);
                    self.set_state(
                        ServerState::Failed,
                        Some(format!(
                            "did not complete the MCP handshake within {} s (the next start waits up to {} s)",
                            connect_timeout.as_secs(),
                            next.as_secs()
                        )),
                    );
                    connect_timeout = next;
                }
            }
            // What the server started and left behind goes with it.
            drop(self.process_group.lock().unwrap().take());
            let waited_for = self.waiting_calls.load(std::sync::atomic::Ordering::SeqCst) > 0;
            let wait = if waited_for { BACKOFF_FIRST } else { backoff };
            tracing::warn!(
                server = %self.name,
                "upstream failed: {}; starting it again in {wait:?}",
                self.status().last_error.unwrap_or_default()
            );
            self.status.lock().unwrap().restarts += 1;
            tokio::select! {
                _ = self.stop.cancelled() => return,
                _ = tokio::time::sleep(wait) => {}
                _ = async {
                    self.wanted.notified().await;
                    tokio::time::sleep(BACKOFF_FIRST).await;
                } => {}
            }
            backoff = (backoff * 2).min(BACKOFF_MAX);
        }
    }

    /// Holds `running` until it ends (`Some(why)`) or the upstream is stopped (`None`), listing
    /// the tools again whenever the server says they changed.
    async fn serve_until_lost(
        &self,
        running: RunningService<RoleClient, UpstreamClient>,
        on_tools: &Arc<dyn Fn() + Send + Sync>,
    ) -> Option<String> {
        // A loss reported of the previous connection is not this one's.
        let _ = futures::FutureExt::now_or_never(self.lost.notified());
        // A stdio server's exit is seen by its process, not only by its stdout closing: a
        // process it started in the background may hold that open.
        let exit = exited(self.exit_watch.lock().unwrap().take());
        tokio::pin!(exit);
        let peer = running.peer().clone();
        let token = running.cancellation_token();
        let waiting = running.waiting();
        tokio::pin!(waiting);
        loop {
            tokio::select! {
                // A stop ends the server too: its exit is then no loss.
                biased;
                _ = self.stop.cancelled() => {
                    token.cancel();
                    let _ = waiting.await;
                    return None;
                }
                _ = self.lost.notified() => {
                    token.cancel();
                    let _ = waiting.await;
                    let why = self.lost_why.lock().unwrap().take();
                    return Some(why.unwrap_or_else(|| "a request to it failed".into()));
                }
                _ = &mut exit => {
                    token.cancel();
                    let _ = waiting.await;
                    return Some("the server's process exited".into());
                }
                reason = &mut waiting => {
                    if let Some(why) = self.transport_ended.lock().unwrap().take() {
                        return Some(why);
                    }
                    return Some(match reason {
                        Ok(QuitReason::Closed) => "the connection closed".into(),
                        Ok(r) => format!("disconnected ({r:?})"),
                        Err(e) => format!("disconnected: {e}"),
                    });
                }
                _ = self.relist.notified() => {
                    match peer.list_all_tools().await {
                        Ok(tools) => {
                            self.publish(peer.clone(), tools);
                            on_tools();
                        }
                        Err(e) => tracing::warn!(server = %self.name, "tools/list failed: {}", of_request(&e)),
                    }
                }
            }
        }
    }

    /// Starts or reaches the server, completes the handshake and lists its tools.
    async fn connect(&self) -> Result<RunningService<RoleClient, UpstreamClient>, String> {
        let client = UpstreamClient::new(&self.name, self.in_flight.clone(), self.relist.clone());
        let running = match &self.spec.transport {
            Transport::Stdio {
                command,
                args,
                env,
                cwd,
            } => {
                let mut cmd = tokio::process::Command::new(command);
                // Only the usual variables of a login and the server's own `env`: Taskdeck's
                // environment (tokens, its own settings) is not the upstream's business. The
                // same set the MCP SDKs' stdio clients pass on.
                cmd.env_clear()
                    .envs(
                        INHERITED_ENV
                            .iter()
                            .filter_map(|k| Some((k, std::env::var_os(k)?))),
                    )
                    .args(args)
                    .envs(env);
                if let Some(dir) = cwd {
                    // Else the spawn's "No such file or directory" would seem to be the command's.
                    if !dir.is_dir() {
                        return Err(format!(
                            "cannot start {command}: its cwd {} is not a directory",
                            dir.display()
                        ));
                    }
                    cmd.current_dir(dir);
                }
                die_with_parent(&mut cmd);
                // A group of its own: the processes it starts are stopped with it.
                cmd.process_group(0);
                let (transport, stderr) = TokioChildProcess::builder(cmd)
                    .stderr(Stdio::piped())
                    .spawn()
                    .map_err(|e| format!("cannot start {command}: {e}"))?;
                *self.process_group.lock().unwrap() = transport.id().map(ProcessGroup);
                *self.exit_watch.lock().unwrap() = transport.id().and_then(pidfd);
                if let Some(stderr) = stderr {
                    self.stderr_tail.lock().unwrap().clear();
                    tokio::spawn(keep_stderr_tail(
                        self.name.clone(),
                        self.secrets.clone(),
                        self.stderr_tail.clone(),
                        stderr,
                    ));
                }
                let era = *self.era.lock().unwrap();
                match client
                    .serve_with_lifecycle(transport, era.lifecycle())
                    .await
                {
                    Ok(running) => running,
                    Err(e) => {
                        if let Some(late) = self.learn_era(&e) {
                            return Err(self.with_stderr(format!(
                                "MCP handshake failed: {}: {late}",
                                of_handshake(&e)
                            )));
                        }
                        // A server that exits at start is the usual cause: say so.
                        let watch = self.exit_watch.lock().unwrap().take();
                        let exited = match watch {
                            Some(fd) => exits_within(fd, EXIT_SEEN_WITHIN).await,
                            None => false,
                        };
                        return Err(self.with_stderr(format!(
                            "MCP handshake failed: {}{}",
                            of_handshake(&e),
                            if exited { "; the process exited" } else { "" }
                        )));
                    }
                }
            }
            Transport::Http { url, headers } => {
                let mut custom = HashMap::new();
                for (k, v) in headers {
                    let name = http::HeaderName::try_from(k.as_str())
                        .map_err(|_| format!("invalid header name {k:?}"))?;
                    let value = http::HeaderValue::try_from(v.as_str())
                        .map_err(|_| format!("invalid value for header {k}"))?;
                    custom.insert(name, value);
                }
                let mut config = StreamableHttpClientTransportConfig::with_uri(url.as_str())
                    .custom_headers(custom)
                    // A server that restarted forgets the session: start a new one.
                    .reinit_on_expired_session(true);
                config.retry_config = resume_policy();
                self.transport_ended.lock().unwrap().take();
                let transport = EndsOnUnaddressedError {
                    inner: StreamableHttpClientTransport::with_client(
                        SessionAware {
                            client: http_client()?,
                            unreachable: Unreachable {
                                url: redact_url(url),
                                why: self.lost_why.clone(),
                                notify: self.lost.clone(),
                            },
                        },
                        config,
                    ),
                    why: self.transport_ended.clone(),
                };
                let era = *self.era.lock().unwrap();
                client
                    .serve_with_lifecycle(transport, era.lifecycle())
                    .await
                    .map_err(|e| {
                        let why = self.transport_ended.lock().unwrap().take();
                        let late = self.learn_era(&e).map(|l| format!(": {l}"));
                        format!(
                            "MCP handshake with {} failed: {}{}",
                            redact_url(url),
                            why.unwrap_or_else(|| of_handshake(&e)),
                            late.unwrap_or_default()
                        )
                    })?
            }
        };
        if let Some(info) = running.peer().peer_info() {
            *self.era.lock().unwrap() = Era::of(&info.protocol_version);
        }
        let tools = running
            .peer()
            .list_all_tools()
            .await
            .map_err(|e| self.with_stderr(format!("tools/list failed: {}", of_request(&e))))?;
        self.publish(running.peer().clone(), tools);
        Ok(running)
    }

    /// Records a (re)listed tool set and the connection it came from, and marks it connected.
    fn publish(&self, peer: Peer<RoleClient>, tools: Vec<Tool>) {
        let (tools, unserved) = servable(&self.name, tools);
        let protocol_version = peer
            .peer_info()
            .map(|i| i.protocol_version.to_string())
            .unwrap_or_default();
        {
            let mut s = self.status.lock().unwrap();
            s.tool_count = tools.len();
            s.unserved_tools = unserved;
            s.protocol_version = Some(protocol_version.clone());
        }
        *self.tools.lock().unwrap() = tools;
        self.set_state(ServerState::Connected, None);
        self.connection.send_replace(Some(Arc::new(Connection {
            peer,
            protocol_version,
        })));
    }

    /// Keeps the era a failed handshake revealed ([`Era::revealed_by`]) for the next start;
    /// returns what to tell the human then.
    fn learn_era(&self, e: &ClientInitializeError) -> Option<&'static str> {
        let era = Era::revealed_by(e)?;
        *self.era.lock().unwrap() = era;
        Some(match era {
            Era::Legacy => {
                "it answered the 2026-07-28 probe only after Taskdeck had moved on (a slow start); the next start waits for its 2025-11-25 handshake"
            }
            _ => {
                "it answered the 2026-07-28 probe only after Taskdeck had moved on (a slow start); the next start waits for it"
            }
        })
    }

    fn set_state(&self, state: ServerState, error: Option<String>) {
        let mut s = self.status.lock().unwrap();
        if s.state != state {
            s.since_ms = now_ms();
        }
        s.state = state;
        if error.is_some() || state == ServerState::Connected {
            s.last_error = error.map(|e| self.scrub(&e));
        }
    }

    /// `message`, followed by the last stderr line when there is one (why a process failed is
    /// usually there).
    fn with_stderr(&self, message: String) -> String {
        match self.stderr_tail.lock().unwrap().back() {
            Some(line) => format!("{message} (stderr: {line})"),
            None => message,
        }
    }
}

/// The HTTP client of Streamable HTTP upstreams: connections are kept and reused (rmcp's
/// default client opens one per request, which costs a connect and a close per call), and only
/// same-origin 307 and 308 redirects are followed (at most 10), as rmcp's default does: those
/// keep the method and the body, and another origin never sees the headers.
fn http_client() -> Result<reqwest_rmcp::Client, String> {
    use reqwest_rmcp::redirect::{Attempt, Policy};
    let same_origin = Policy::custom(|attempt: Attempt| {
        let first = attempt.previous().first().map(|u| u.origin());
        let status = attempt.status().as_u16();
        if attempt.previous().len() > 10 {
            attempt.error("more than 10 redirects")
        } else if matches!(status, 307 | 308) && first == Some(attempt.url().origin()) {
            attempt.follow()
        } else {
            attempt.stop()
        }
    });
    reqwest_rmcp::Client::builder()
        .redirect(same_origin)
        .tcp_nodelay(true)
        .build()
        .map_err(|e| format!("cannot make the HTTP client: {e}"))
}

/// The tools of `server` Taskdeck can offer: a name of 1 to 128 of `A-Z a-z 0-9 _ - .` (MCP's
/// tool names; `SERVER__TOOL` at most 128 too), an input schema of `type: "object"` (clients
/// refuse a whole `tools/list` over one that is not), each name once (the first). The others
/// are logged and left out.
fn servable(server: &str, tools: Vec<Tool>) -> (Vec<Tool>, Vec<super::UnservedTool>) {
    let mut seen = std::collections::HashSet::new();
    let mut unserved = Vec::new();
    let served = tools
        .into_iter()
        .filter(|t| {
            let name = t.name.as_ref();
            let why = if name.is_empty()
                || !name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
            {
                Some("its name is not 1-128 of A-Z a-z 0-9 _ - .")
            } else if server.len() + 2 + name.len() > 128 {
                Some("its name with the server's (SERVER__TOOL, as /mcp lists it) is over 128 characters")
            } else if t
                .input_schema
                .get("type")
                .and_then(serde_json::Value::as_str)
                != Some("object")
            {
                Some("its inputSchema is not of type object")
            } else if !seen.insert(name.to_string()) {
                Some("a tool of that name came before it")
            } else {
                None
            };
            if let Some(why) = why {
                tracing::warn!(server, tool = name, "tool not served: {why}");
                unserved.push(super::UnservedTool {
                    name: name.to_string(),
                    reason: why.to_string(),
                });
            }
            why.is_none()
        })
        .collect();
    (served, unserved)
}

/// An upstream process never outlives Taskdeck, even one killed without a chance to stop it
/// (many stdio servers do not exit when their stdin closes): on Linux the kernel sends it
/// SIGTERM when Taskdeck's thread that started it ends (`PR_SET_PDEATHSIG`; that thread is one
/// of the runtime's workers, which live as long as the process).
fn die_with_parent(cmd: &mut tokio::process::Command) {
    #[cfg(target_os = "linux")]
    // SAFETY: the closure runs in the forked child before exec and only calls prctl(2), which
    // is async-signal-safe.
    unsafe {
        cmd.pre_exec(|| {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM) == -1 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    #[cfg(not(target_os = "linux"))]
    let _ = cmd;
}

/// A stdio server's process group (its id is the server's pid), sent SIGTERM when dropped: the
/// processes the server started (a `sh -c '... &'`, a database it spawned) end with it rather
/// than outlive it, and Taskdeck. Dropped when the connection ends and on a stop (a removal,
/// and Taskdeck's shutdown, which stops every upstream).
struct ProcessGroup(u32);

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        let group = nix::unistd::Pid::from_raw(self.0 as i32);
        // ESRCH: every process of the group has exited already.
        let _ = nix::sys::signal::killpg(group, nix::sys::signal::Signal::SIGTERM);
    }
}

/// A pidfd of process `pid` (`pidfd_open(2)`, Linux 5.3): readable once the process has
/// exited. Opened while `pid` is an unreaped child of ours, so it cannot name another process.
/// `None` where the kernel has none.
fn pidfd(pid: u32) -> Option<std::os::fd::OwnedFd> {
    use std::os::fd::FromRawFd;
    // SAFETY: pidfd_open takes a pid and flags and returns a new fd or -1; nothing is borrowed.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid as libc::pid_t, 0) };
    // SAFETY: a non-negative result is a new file descriptor that nothing else owns.
    (fd >= 0).then(|| unsafe { std::os::fd::OwnedFd::from_raw_fd(fd as i32) })
}

/// Resolves once the process `pidfd` refers to has exited; never without one.
async fn exited(pidfd: Option<std::os::fd::OwnedFd>) {
    let watched = pidfd.and_then(|fd| {
        use tokio::io::{Interest, unix::AsyncFd};
        // SAFETY: the OwnedFd moves into the AsyncFd, which keeps it open, unchanged, until
        // it is dropped.
        unsafe { AsyncFd::register_with_interest(fd, Interest::READABLE) }.ok()
    });
    match watched {
        Some(fd) => {
            let _ = fd.readable().await;
        }
        None => std::future::pending().await,
    }
}

/// True once the process `pidfd` refers to has exited, waiting up to `within` for it. (Its
/// exit status is not known here: the process is reaped by its `Child`, inside rmcp's
/// transport, as soon as the handshake fails.)
async fn exits_within(pidfd: std::os::fd::OwnedFd, within: Duration) -> bool {
    tokio::time::timeout(within, exited(Some(pidfd)))
        .await
        .is_ok()
}

/// The secret values of `spec`, longest first (so that a secret containing another is taken out
/// whole): `env` and `headers` values, and of a URL its password and query values, as written
/// and as percent-decoded. Values under 4 characters are left alone: replacing them would garble
/// every message, and they guard nothing.
fn secrets_of(spec: &ServerSpec) -> Vec<String> {
    let mut secrets: Vec<String> = match &spec.transport {
        Transport::Stdio {
            env, command, args, ..
        } => {
            let mut s: Vec<String> = env.values().cloned().collect();
            s.extend(
                args.iter()
                    .flat_map(|a| a.split_whitespace())
                    .filter_map(word_secret),
            );
            // What the target masks (`--token VALUE`, `-pVALUE`): the part of each word that
            // differs from its masked form.
            let masked = super::server_target::masked_argv(command, args);
            let given = std::iter::once(command).chain(args);
            s.extend(given.zip(&masked).filter_map(|(g, m)| hidden_part(g, m)));
            s
        }
        Transport::Http { url, headers } => {
            let mut s: Vec<String> = headers.values().cloned().collect();
            // A header value's credential part too (`Bearer xyz` is quoted as `xyz` as well).
            s.extend(
                headers
                    .values()
                    .filter_map(|v| v.split_whitespace().last().map(String::from)),
            );
            if let Ok(u) = reqwest_rmcp::Url::parse(url) {
                s.extend(u.password().map(String::from));
                // As sent: `Authorization: Basic base64(user:password)`, which a server may echo.
                s.extend(u.password().map(|pw| {
                    use base64::Engine as _;
                    base64::engine::general_purpose::STANDARD
                        .encode(format!("{}:{pw}", u.username()))
                }));
                s.extend(u.query_pairs().map(|(_, v)| v.into_owned()));
                if let Some(q) = u.query() {
                    // `k=v` gives `v`; a bare `v` (no `=`) is a value too.
                    s.extend(
                        q.split('&')
                            .map(|kv| kv.split_once('=').map_or(kv, |(_, v)| v).to_string()),
                    );
                }
                if let Some(f) = u.fragment() {
                    s.push(f.to_string());
                    s.extend(
                        f.split('&')
                            .filter_map(|kv| kv.split_once('=').map(|(_, v)| v.to_string())),
                    );
                }
            }
            s
        }
    };
    secrets.retain(|s| s.len() >= 4);
    secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
    secrets.dedup();
    secrets
}

/// The credential a word of a stdio server's arguments carries, which the server may echo on
/// stderr: a URL's password (`postgresql://app:pw@db/prod`, as written) or the value of a
/// secret-named option or variable (`--password=pw`, `API_KEY=pw`).
fn word_secret(word: &str) -> Option<String> {
    if let Some(at) = word.find("://") {
        // The URL starts where its scheme does (`--dsn=postgresql://...`).
        let scheme = word[..at]
            .rfind(|c: char| !(c.is_ascii_alphanumeric() || "+-.".contains(c)))
            .map_or(0, |i| i + 1);
        let url = reqwest_rmcp::Url::parse(&word[scheme..]).ok();
        if let Some(password) = url.as_ref().and_then(|u| u.password()) {
            return Some(password.to_string());
        }
    }
    let (name, value) = word.split_once('=')?;
    crate::tools::secrets::is_secret_name(name.trim_start_matches('-')).then(|| value.to_string())
}

/// What masking took out of `given` to show `shown`: the text between their common start and
/// end (`admin:s3` → `admin:[redacted]` hid `s3`); `None` when nothing was.
fn hidden_part(given: &str, shown: &str) -> Option<String> {
    if given == shown {
        return None;
    }
    let start = given
        .char_indices()
        .zip(shown.chars())
        .find(|((_, a), b)| a != b)
        .map_or(given.len().min(shown.len()), |((i, _), _)| i);
    let end = given[start..]
        .chars()
        .rev()
        .zip(shown[start.min(shown.len())..].chars().rev())
        .take_while(|(a, b)| a == b)
        .map(|(a, _)| a.len_utf8())
        .sum::<usize>();
    let hidden = &given[start..given.len() - end];
    (!hidden.is_empty()).then(|| hidden.to_string())
}

/// Reads a child's stderr into `tail` (its last [`STDERR_LINES`] lines) and the debug log,
/// each line without the spec's `secrets` and what looks like a credential.
async fn keep_stderr_tail(
    server: String,
    secrets: Vec<String>,
    tail: Arc<Mutex<VecDeque<String>>>,
    stderr: tokio::process::ChildStderr,
) {
    let mut lines = BufReader::new(stderr).lines();
    while let Ok(Some(mut line)) = lines.next_line().await {
        for secret in &secrets {
            line = line.replace(secret.as_str(), "[redacted]");
        }
        // What looks like a credential of the server's own (`PASSWORD=…`, a URL's password, a
        // token by its shape), as the arguments of a call are masked.
        if let Some(masked) = crate::tools::secrets::mask_string(&line) {
            line = masked;
        }
        tracing::debug!(server = %server, "stderr: {line}");
        let mut tail = tail.lock().unwrap();
        tail.push_back(line);
        while tail.len() > STDERR_LINES {
            tail.pop_front();
        }
    }
}

fn initial_status(name: &str, spec: &ServerSpec) -> ServerStatus {
    spec.public().status(name, ServerState::Starting, now_ms())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(name: &str, schema: serde_json::Value) -> Tool {
        Tool::new(
            name.to_string(),
            String::new(),
            Arc::new(schema.as_object().cloned().unwrap_or_default()),
        )
    }

    #[test]
    fn only_tools_clients_can_take_are_served() {
        let object = json!({"type": "object"});
        let tools = vec![
            tool("ok", object.clone()),
            tool("string-schema", json!({"type": "string"})),
            tool("with space", object.clone()),
            tool("ünï", object.clone()),
            tool(&"x".repeat(125), object.clone()),
            tool(
                "ok",
                json!({"type": "object", "properties": {"second": {}}}),
            ),
            tool("dotted.name-2", object),
        ];
        let (served, unserved) = servable("fs", tools);
        let names: Vec<String> = served.iter().map(|t| t.name.to_string()).collect();
        assert_eq!(names, ["ok", "dotted.name-2"]);
        let why: Vec<(&str, &str)> = unserved
            .iter()
            .map(|t| (&t.name[..t.name.len().min(10)], t.reason.as_str()))
            .collect();
        assert_eq!(
            why,
            [
                ("string-sch", "its inputSchema is not of type object"),
                ("with space", "its name is not 1-128 of A-Z a-z 0-9 _ - ."),
                ("ünï", "its name is not 1-128 of A-Z a-z 0-9 _ - ."),
                (
                    "xxxxxxxxxx",
                    "its name with the server's (SERVER__TOOL, as /mcp lists it) is over 128 characters"
                ),
                ("ok", "a tool of that name came before it"),
            ]
        );
    }

    #[test]
    fn every_secret_of_a_url_is_scrubbed() {
        let spec = ServerSpec {
            transport: Transport::Http {
                url: "https://me:pass-word@x.example/mcp?key=k-secret&BARESECRET#frag=f-secret"
                    .into(),
                headers: [("Authorization".to_string(), "Bearer h-secret".to_string())].into(),
            },
            disabled: false,
            timeout_ms: None,
        };
        let upstream = Upstream::new("web", spec);
        let quoted = "error sending request for url \
            (https://me:pass-word@x.example/mcp?key=k-secret&BARESECRET#frag=f-secret) with h-secret \
            (Basic bWU6cGFzcy13b3Jk)";
        let scrubbed = upstream.scrub(quoted);
        for secret in [
            "pass-word",
            "k-secret",
            "BARESECRET",
            "f-secret",
            "h-secret",
            "bWU6cGFzcy13b3Jk",
        ] {
            assert!(!scrubbed.contains(secret), "{secret} in {scrubbed}");
        }
    }

    #[test]
    fn credentials_in_a_stdio_servers_arguments_are_scrubbed() {
        let spec = ServerSpec {
            transport: Transport::Stdio {
                command: "npx".into(),
                args: vec![
                    "server-postgres".into(),
                    "postgresql://app:S3cretPw@db/prod".into(),
                    "--dsn=mysql://root:r00tpw@db".into(),
                    "--api-key=k3y-value".into(),
                    "--password".into(),
                    "hunter88".into(),
                    "--port=5432".into(),
                ],
                env: Default::default(),
                cwd: None,
            },
            disabled: false,
            timeout_ms: None,
        };
        let upstream = Upstream::new("pg", spec);
        let said = "cannot connect to postgresql://app:S3cretPw@db/prod, mysql://root:r00tpw@db \
            or with k3y-value (hunter88) on port 5432";
        let scrubbed = upstream.scrub(said);
        for secret in ["S3cretPw", "r00tpw", "k3y-value", "hunter88"] {
            assert!(!scrubbed.contains(secret), "{secret} in {scrubbed}");
        }
        assert!(scrubbed.contains("5432"), "{scrubbed}");
    }
}
