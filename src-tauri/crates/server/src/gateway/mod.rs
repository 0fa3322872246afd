//! The gateway: Taskdeck in front of the user's other MCP servers ("upstreams", listed in
//! `<config dir>/servers.json`). Each upstream is connected with rmcp's client; its tools are
//! served on Taskdeck's `/mcp` as `NAME__TOOL` (and on `/mcp/NAME` under their own names), and
//! every call of one is a task in the store, asked of the human first when the policy says so.

pub mod approval;
pub mod call;
pub mod call_log;
pub mod catalog;
pub mod client_handler;
pub mod era;
pub mod http_transport;
pub mod import;
pub mod passthrough;
pub mod server_target;
pub mod servers_file;
pub mod servers_watch;
pub mod upstream;
pub mod upstream_error;
pub mod upstream_task;

use std::{
    collections::{BTreeMap, BTreeSet},
    path::{Path, PathBuf},
    sync::{Arc, Mutex},
    time::Duration,
};

use serde::Serialize;
use tokio::sync::watch;

use call::{CallSettings, GatewayCall};
use servers_file::{ServerSpec, ServersConfig};
use taskdeck_engine::{Engine, TaskRecord};
use upstream::Upstream;

/// How an upstream is reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum TransportKind {
    /// A child process speaking MCP over stdin/stdout.
    Stdio,
    /// A Streamable HTTP endpoint.
    Http,
}

/// Where an upstream's connection is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum ServerState {
    /// Being started or connected (again, after a failure: see `restarts`).
    Starting,
    /// Initialized; its tools are served.
    Connected,
    /// Could not start or connect, or lost; `lastError` says why. Retried with backoff.
    Failed,
    /// `"disabled": true` in servers.json: not started.
    Disabled,
}

/// One upstream as the human sees it (`/v1/servers`, the Servers view, `taskdeck servers
/// list`). Holds no secret: of `env` and `headers` only the names.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ServerStatus {
    /// The server's name in servers.json (its tools are `NAME__TOOL`, its endpoint `/mcp/NAME`).
    pub name: String,
    /// How it is reached.
    pub transport: TransportKind,
    /// The command line (stdio) or the URL with query values redacted (http).
    pub target: String,
    /// The stdio process's working directory, as configured (null: Taskdeck's own; http: null).
    pub cwd: Option<String>,
    /// The names of the variables set in the stdio process's environment (empty for http).
    pub env_keys: Vec<String>,
    /// The names of the headers sent with every request (empty for stdio).
    pub header_names: Vec<String>,
    /// `"disabled": true` in servers.json.
    pub disabled: bool,
    /// Where its connection is.
    pub state: ServerState,
    /// Why it last failed, with its secrets taken out; null before any failure and once
    /// connected.
    pub last_error: Option<String>,
    /// The last lines (at most 20) the process wrote to stderr; empty for http.
    pub stderr_tail: Vec<String>,
    /// The tools it serves.
    pub tool_count: usize,
    /// The tools it lists that Taskdeck does not serve, and why (a name Taskdeck cannot take,
    /// an input schema that is not an object or does not compile, a repeated name).
    pub unserved_tools: Vec<UnservedTool>,
    /// The protocol version negotiated with it, once connected (e.g. `2025-11-25`).
    pub protocol_version: Option<String>,
    /// How many times it failed and was (or, during the backoff, is about to be) started again.
    pub restarts: u32,
    /// When `state` began, Unix ms.
    pub since_ms: i64,
}

/// A tool an upstream lists that Taskdeck does not serve ([`ServerStatus::unserved_tools`]).
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UnservedTool {
    /// Its name as the server lists it.
    pub name: String,
    /// Why Taskdeck does not serve it.
    pub reason: String,
}

/// How the gateway treats calls.
#[derive(Debug, Clone)]
pub struct GatewayOptions {
    /// A call that ends within this time, without asking anything, is answered with its result
    /// even to a client that takes tasks (`ToolMode::Settle`); default 1 s.
    pub settle_ms: u64,
    /// How long a call waits for an upstream that is (re)connecting; default 30 s.
    pub connect_wait: Duration,
    /// How long an upstream may take to answer one call, unless its servers.json entry sets
    /// `timeoutMs`; default 10 minutes.
    pub call_timeout: Duration,
    /// Where calls' output logs go (`<data dir>/logs`; `serve` sets it): the log messages an
    /// upstream sends during a call. `None`: they are not kept (the latest is still the task's
    /// status message).
    pub log_dir: Option<std::path::PathBuf>,
}

impl Default for GatewayOptions {
    fn default() -> GatewayOptions {
        GatewayOptions {
            settle_ms: 1000,
            connect_wait: Duration::from_secs(30),
            call_timeout: Duration::from_secs(600),
            log_dir: None,
        }
    }
}

/// The gateway: every configured upstream and its connection. Cheap to clone.
#[derive(Clone)]
pub struct Gateway {
    state: Arc<GatewayState>,
}

struct GatewayState {
    engine: Engine,
    policy: Arc<crate::policy::Policy>,
    options: GatewayOptions,
    servers_path: PathBuf,
    upstreams: Mutex<BTreeMap<String, Arc<Upstream>>>,
    /// The engine tool names registered for each server.
    registered: Mutex<BTreeMap<String, BTreeSet<String>>>,
    /// Bumped whenever the tools any upstream offers may have changed.
    tools_version: watch::Sender<u64>,
    /// Entries of servers.json not started because they are invalid, as shown.
    refused: Mutex<BTreeMap<String, ServerStatus>>,
    /// servers.json has been read once (false while a file that cannot be read has kept the
    /// gateway from starting any server).
    loaded: std::sync::atomic::AtomicBool,
    /// The port this Taskdeck listens on: a server that would reach this Taskdeck's own
    /// endpoint is refused ([`servers_file::own_endpoint`]).
    own_port: u16,
}

impl Gateway {
    /// The gateway for the servers listed in `<config_dir>/servers.json`, calling through
    /// `engine` under `policy`, in the Taskdeck listening on 127.0.0.1:`own_port`. Nothing is
    /// started until [`Gateway::reload`].
    pub fn new(
        engine: Engine,
        policy: Arc<crate::policy::Policy>,
        config_dir: &Path,
        options: GatewayOptions,
        own_port: u16,
    ) -> Gateway {
        Gateway {
            state: Arc::new(GatewayState {
                engine,
                policy,
                options,
                servers_path: servers_file::servers_path(config_dir),
                upstreams: Mutex::default(),
                registered: Mutex::default(),
                tools_version: watch::channel(0).0,
                refused: Mutex::default(),
                loaded: Default::default(),
                own_port,
            }),
        }
    }

    /// `<config dir>/servers.json`.
    pub fn servers_path(&self) -> &Path {
        &self.state.servers_path
    }

    /// The port of this Taskdeck's own endpoints (127.0.0.1 only).
    pub fn own_port(&self) -> u16 {
        self.state.own_port
    }

    /// Every configured upstream's status, sorted by name (entries refused at the last reload
    /// included, as `failed`).
    pub fn statuses(&self) -> Vec<ServerStatus> {
        let upstreams: Vec<_> = self
            .state
            .upstreams
            .lock()
            .unwrap()
            .values()
            .cloned()
            .collect();
        let mut all: Vec<ServerStatus> = upstreams.iter().map(|u| u.status()).collect();
        all.extend(self.state.refused.lock().unwrap().values().cloned());
        all.sort_by(|a, b| a.name.cmp(&b.name));
        all
    }

    /// A receiver that changes whenever the upstream tools on offer may have changed
    /// (`notifications/tools/list_changed`).
    pub fn watch_tools(&self) -> watch::Receiver<u64> {
        self.state.tools_version.subscribe()
    }

    /// The upstream named `name`, if configured.
    pub(crate) fn upstream(&self, name: &str) -> Option<Arc<Upstream>> {
        self.state.upstreams.lock().unwrap().get(name).cloned()
    }

    /// Every configured upstream, by name.
    pub(crate) fn upstreams(&self) -> Vec<Arc<Upstream>> {
        self.state
            .upstreams
            .lock()
            .unwrap()
            .values()
            .cloned()
            .collect()
    }

    /// Re-reads servers.json and converges: starts new servers, stops removed ones, restarts
    /// changed ones, and registers the tools of unsettled tasks of configured servers (so that
    /// [`Engine::start`] can resume them). Returns once every change has been started (not
    /// necessarily connected). A file that cannot be read changes nothing (it is logged, and
    /// `/v1/servers`, which reads the file itself, answers 500 naming the problem); at start,
    /// the calls it left waiting for a human keep waiting ([`Gateway::keep_waiting`]).
    pub async fn reload(&self) {
        use std::sync::atomic::Ordering;
        let wanted = match ServersConfig::load(&self.state.servers_path) {
            Ok(c) => self.refuse_invalid(c),
            Err(e) => {
                tracing::warn!("{e}; the upstream servers keep running as they were");
                if !self.state.loaded.load(Ordering::Relaxed) {
                    self.keep_waiting();
                }
                return;
            }
        };
        self.state.loaded.store(true, Ordering::Relaxed);
        let mut stopped = Vec::new();
        let mut started = Vec::new();
        let mut retimed = Vec::new();
        {
            let mut upstreams = self.state.upstreams.lock().unwrap();
            upstreams.retain(|name, u| {
                // Only how it is reached or whether it runs needs a restart; a new
                // `timeoutMs` applies to the calls made from now on.
                let keep = wanted.get(name).is_some_and(|w| {
                    w.transport == u.spec.transport && w.disabled == u.spec.disabled
                });
                match wanted.get(name) {
                    Some(w) if keep && u.timeout_ms() != w.timeout_ms => {
                        u.set_timeout_ms(w.timeout_ms);
                        retimed.push(name.clone());
                    }
                    _ => {}
                }
                if !keep {
                    u.stop();
                    stopped.push(name.clone());
                }
                keep
            });
            for (name, spec) in &wanted {
                if !upstreams.contains_key(name) {
                    let u = Upstream::new(name, spec.clone());
                    upstreams.insert(name.clone(), u.clone());
                    started.push(u);
                }
            }
        }
        for name in &stopped {
            if !wanted.contains_key(name) {
                self.unregister(name);
            }
        }
        for name in &retimed {
            self.tools_changed(name);
        }
        let changed = !stopped.is_empty() || !started.is_empty();
        // One read of the unsettled tasks for every server started.
        let unsettled = match started.is_empty() {
            true => Vec::new(),
            false => self.state.engine.store().unsettled().unwrap_or_default(),
        };
        for u in started {
            self.register_unsettled(&u, &unsettled);
            let gateway = self.clone();
            let name = u.name.clone();
            let on_tools: Arc<dyn Fn() + Send + Sync> =
                Arc::new(move || gateway.tools_changed(&name));
            tokio::spawn(u.supervise(on_tools));
        }
        if changed {
            self.state.tools_version.send_modify(|v| *v += 1);
        }
    }

    /// The entries of `servers` that may be started; the others (a name or spec the CLI and
    /// `/v1/servers` would refuse, e.g. written by hand, or one that reaches this Taskdeck's own
    /// endpoint) are kept as `failed` statuses saying why, and are neither started nor served.
    fn refuse_invalid(&self, config: ServersConfig) -> BTreeMap<String, ServerSpec> {
        let now = taskdeck_engine::clock::now_ms();
        let mut refused: BTreeMap<String, ServerStatus> = config
            .unreadable
            .iter()
            .map(|(name, entry)| {
                let status = server_target::unreadable_status(name, entry, now);
                (name.clone(), status)
            })
            .collect();
        let valid = config
            .servers
            .into_iter()
            .filter(|(name, spec)| {
                let refusal = servers_file::refusal(name, spec).or_else(|| {
                    servers_file::own_endpoint(spec, self.state.own_port)
                        .map(|why| format!("not started: {why}"))
                });
                if let Some(why) = &refusal {
                    let mut status = spec.public().status(name, ServerState::Failed, now);
                    status.last_error = Some(why.clone());
                    refused.insert(name.clone(), status);
                }
                refusal.is_none()
            })
            .collect();
        *self.state.refused.lock().unwrap() = refused;
        valid
    }

    /// Stops every upstream (their processes are killed).
    pub fn shutdown(&self) {
        for u in self.state.upstreams.lock().unwrap().values() {
            u.stop();
        }
    }

    fn settings_for(&self, upstream: &Upstream) -> Arc<CallSettings> {
        Arc::new(CallSettings {
            policy: self.state.policy.clone(),
            connect_wait: self.state.options.connect_wait,
            call_timeout: upstream
                .timeout_ms()
                .map(Duration::from_millis)
                .unwrap_or(self.state.options.call_timeout),
            log_dir: self.state.options.log_dir.clone(),
        })
    }

    /// Registers the current tools of server `name` with the engine, and drops the ones it no
    /// longer offers.
    fn tools_changed(&self, name: &str) {
        let Some(upstream) = self.upstream(name) else {
            return;
        };
        let settings = self.settings_for(&upstream);
        let mut now = BTreeSet::new();
        for tool in upstream.tools() {
            let tool_name = tool.name.to_string();
            let registered = catalog::registered_name(name, &tool.name);
            let call = GatewayCall::new(
                registered.clone(),
                (upstream.clone(), Arc::downgrade(&self.state)),
                tool,
                settings.clone(),
                self.state.options.settle_ms,
            );
            match self.state.engine.try_register_tool(Arc::new(call)) {
                Ok(()) => {
                    now.insert(registered);
                }
                Err(e) => {
                    tracing::warn!(server = name, tool = %registered, "tool not served: {e}");
                    upstream.not_served(&tool_name, e.to_string());
                }
            }
        }
        let mut registered = self.state.registered.lock().unwrap();
        let before = registered
            .insert(name.to_string(), now.clone())
            .unwrap_or_default();
        for gone in before.difference(&now) {
            self.state.engine.unregister_tool(gone);
        }
        drop(registered);
        self.state.tools_version.send_modify(|v| *v += 1);
    }

    fn unregister(&self, name: &str) {
        let gone = self
            .state
            .registered
            .lock()
            .unwrap()
            .remove(name)
            .unwrap_or_default();
        for tool in gone {
            self.state.engine.unregister_tool(&tool);
        }
    }

    /// At a start whose servers.json cannot be read: registers the tools of the unsettled
    /// gateway calls with stand-in servers (never started, not listed), so that the engine
    /// resumes them instead of failing them as interrupted. A call whose approval was pending
    /// is asked again; once approved it goes to its server as the file has it by then
    /// ([`call::GatewayCall`]), or fails unsent while the file still cannot be read.
    fn keep_waiting(&self) {
        let unsettled = self.state.engine.store().unsettled().unwrap_or_default();
        let servers: BTreeSet<&str> = unsettled
            .iter()
            .filter_map(|t| catalog::split(&t.tool).map(|(server, _)| server))
            .collect();
        for name in servers {
            let stand_in = ServerSpec {
                transport: servers_file::Transport::Stdio {
                    command: "(servers.json cannot be read)".into(),
                    args: Vec::new(),
                    env: BTreeMap::new(),
                    cwd: None,
                },
                disabled: true,
                timeout_ms: None,
            };
            self.register_unsettled(&Upstream::new(name, stand_in), &unsettled);
        }
    }

    /// Registers, with what is known before the server connects, the tools of `upstream` that
    /// unsettled tasks name, so that the engine can resume them at start.
    fn register_unsettled(&self, upstream: &Arc<Upstream>, unsettled: &[TaskRecord]) {
        let settings = self.settings_for(upstream);
        for task in unsettled {
            let Some((server, tool)) = catalog::split(&task.tool) else {
                continue;
            };
            if server != upstream.name || self.state.engine.tool(&task.tool).is_some() {
                continue;
            }
            let placeholder = rmcp::model::Tool::new(
                tool.to_string(),
                String::new(),
                Arc::new(serde_json::Map::new()),
            );
            let call = GatewayCall::new(
                task.tool.clone(),
                (upstream.clone(), Arc::downgrade(&self.state)),
                placeholder,
                settings.clone(),
                self.state.options.settle_ms,
            );
            if self.state.engine.try_register_tool(Arc::new(call)).is_ok() {
                self.state
                    .registered
                    .lock()
                    .unwrap()
                    .entry(upstream.name.clone())
                    .or_default()
                    .insert(task.tool.clone());
            }
        }
    }
}
