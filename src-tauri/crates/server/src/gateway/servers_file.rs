//! `<config dir>/servers.json`: the upstream MCP servers Taskdeck connects to and serves behind
//! its own endpoint. One object per server, keyed by its name (`[a-z0-9_-]`, 1 to 64 characters):
//!
//! ```json
//! {"servers": {
//!   "fs":   {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"],
//!            "env": {"DEBUG": "1"}, "cwd": "/home/me"},
//!   "docs": {"url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer ..."}},
//!   "old":  {"command": "old-server", "disabled": true}
//! }}
//! ```
//!
//! A server with `command` is started as a child process and spoken to over stdio; one with
//! `url` over Streamable HTTP. Values in `env` and `headers` are secrets: they reach only the
//! upstream, never a view (see [`ServerSpec::public`]).

use std::{collections::BTreeMap, path::PathBuf};

use serde::{Deserialize, Serialize};

/// How to reach one upstream MCP server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Transport {
    /// A child process speaking MCP over stdin/stdout (stderr is kept as a tail for the human).
    Stdio {
        command: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        args: Vec<String>,
        #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
        env: BTreeMap<String, String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cwd: Option<PathBuf>,
    },
    /// A Streamable HTTP endpoint; `headers` are sent with every request (e.g. `Authorization`).
    Http {
        url: String,
        #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
        headers: BTreeMap<String, String>,
    },
}

/// One entry of `servers.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerSpec {
    #[serde(flatten)]
    pub transport: Transport,
    /// A disabled server stays in the file but is not started.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub disabled: bool,
    /// How long one call may take before Taskdeck gives up on it, in milliseconds (default
    /// 10 minutes).
    #[serde(default, rename = "timeoutMs", skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
}

/// The whole file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServersConfig {
    #[serde(default)]
    pub servers: BTreeMap<String, ServerSpec>,
}
