//! How upstream tools are named and offered. On `/mcp` every upstream's tools appear together,
//! each as `SERVER__TOOL` (server names never contain `__`, so the first `__` splits them); on
//! `/mcp/SERVER` one server's tools appear under their own names. Schemas, annotations,
//! titles and descriptions are the upstream's, except that a client that may be answered with
//! the text handle is not shown the `outputSchema` (see [`Answers`]).

use rmcp::model::Tool;

use super::{Gateway, ServerState};

/// Separates the server name from the tool name in a registered name.
pub const SEPARATOR: &str = "__";

/// Which tools an endpoint offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope<'a> {
    /// `/mcp`: Taskdeck's own tools and every upstream's, as `SERVER__TOOL`.
    All,
    /// `/mcp/SERVER`: that server's tools only, under their own names.
    Server(&'a str),
}

/// What a client may be answered with when it calls an upstream tool, which decides whether
/// `tools/list` shows it the upstream's `outputSchema`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answers {
    /// A 2026-07-28 request declaring the tasks extension: the tool's own `CallToolResult`, or a
    /// `CreateTaskResult` (SEP-2663). The `outputSchema` is shown.
    ResultOrTask,
    /// Any other client (2025-11-25 sessions, 2026-07-28 without the extension): a call still
    /// running or waiting for the human after the settle time is answered with the text handle,
    /// `structuredContent: {task}`, which the upstream's `outputSchema` does not describe. The
    /// schema is left out, since a client validating structured content against it (MCP
    /// 2025-11-25 §Tools "Output Schema": clients SHOULD validate; the TS SDK's `callTool` does)
    /// would reject the handle. The outcome itself reaches it through `task_status`.
    ResultOrHandle,
}

/// The engine's name of `server`'s tool `tool`: `SERVER__TOOL`.
pub fn registered_name(server: &str, tool: &str) -> String {
    format!("{server}{SEPARATOR}{tool}")
}

/// `(server, tool)` of a registered name, or `None` for a name without the separator.
pub fn split(registered: &str) -> Option<(&str, &str)> {
    registered.split_once(SEPARATOR)
}

impl Gateway {
    /// Why tool `name`, as called in `scope`, is not offered, when its server is configured
    /// but serves no tools now: ` (upstream S is starting: its tools are not known yet)`,
    /// ` (upstream S is disabled in servers.json)`, ` (upstream S is not running: …)`; empty
    /// otherwise (no such server, or it is connected and has no such tool).
    pub fn why_unknown(&self, scope: Scope<'_>, name: &str) -> String {
        let server = match scope {
            Scope::All => split(name).map_or("", |(server, _)| server),
            Scope::Server(server) => server,
        };
        let Some(status) = self.statuses().into_iter().find(|s| s.name == server) else {
            return String::new();
        };
        match status.state {
            ServerState::Connected => String::new(),
            ServerState::Starting => {
                format!(" (upstream {server} is starting: its tools are not known yet)")
            }
            ServerState::Disabled => format!(" (upstream {server} is disabled in servers.json)"),
            // Why is the person's to read (`servers list`): its error and stderr can hold what
            // an agent should not see.
            ServerState::Failed => {
                format!(" (upstream {server} is not running: Taskdeck's Servers view says why)")
            }
        }
    }

    /// The upstream tools offered in `scope`, sorted by server then as the server lists them,
    /// as shown to a client answered as `answers` says. Only tools the engine can run are
    /// offered: a server's new tool list is published before its tools are registered, and a
    /// tool whose input schema does not compile is never.
    pub fn tools(&self, scope: Scope<'_>, answers: Answers) -> Vec<Tool> {
        let mut out = Vec::new();
        for upstream in self.upstreams() {
            let served = |t: &Tool| {
                let registered = registered_name(&upstream.name, &t.name);
                self.state.engine.tool(&registered).is_some()
            };
            match scope {
                Scope::All => {
                    out.extend(upstream.tools().into_iter().filter(served).map(|mut t| {
                        t.name = registered_name(&upstream.name, &t.name).into();
                        t
                    }))
                }
                Scope::Server(name) if name == upstream.name => {
                    out.extend(upstream.tools().into_iter().filter(served))
                }
                Scope::Server(_) => {}
            }
        }
        if answers == Answers::ResultOrHandle {
            for tool in &mut out {
                tool.output_schema = None;
            }
        }
        out
    }

    /// The engine's name for tool `name` as called in `scope`, when that scope offers it.
    pub fn resolve(&self, scope: Scope<'_>, name: &str) -> Option<String> {
        let (server, tool) = match scope {
            Scope::All => split(name)?,
            Scope::Server(server) => (server, name),
        };
        self.upstream(server)?
            .has_tool(tool)
            .then(|| registered_name(server, tool))
    }

    /// True when `/mcp/NAME` exists: `name` is a configured server.
    pub fn has_server(&self, name: &str) -> bool {
        self.upstream(name).is_some()
    }
}
