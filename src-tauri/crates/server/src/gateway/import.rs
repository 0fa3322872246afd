//! `taskdeck servers import CLIENT`: takes the MCP servers an agent client is configured with
//! and puts Taskdeck in front of them. The client's file is read in that client's documented
//! format, its servers become servers.json entries, and the file is rewritten with those
//! servers replaced by one entry, `taskdeck`, that reaches them all through Taskdeck. Everything
//! else in the file (other keys, servers that could not be imported) is kept as it was.
//!
//! Formats (each client's documentation):
//! - Claude Desktop: `claude_desktop_config.json`, `{"mcpServers": {NAME: {command, args, env}}}`
//!   (Linux `~/.config/Claude/`, macOS `~/Library/Application Support/Claude/`, Windows
//!   `%APPDATA%\Claude\`).
//! - Claude Code: `~/.claude.json`, user scope in the top-level `mcpServers`, local scope in
//!   `projects.<path>.mcpServers`; a project's shared `.mcp.json` has the top-level form only.
//!   Entries: `{type: "stdio", command, args, env}` or `{type: "http"|"sse", url, headers}`.
//! - VS Code: `mcp.json` (user profile, or a workspace's `.vscode/mcp.json`), top-level
//!   `servers` with `{type: "stdio", command, args, env, envFile, cwd}` or
//!   `{type: "http"|"sse", url, headers}`, and `inputs` for `${input:ID}` prompts.
//! - Cursor: `~/.cursor/mcp.json` (or a project's `.cursor/mcp.json`), `mcpServers` with
//!   `{command, args, env}` or `{url, headers}` for a remote server.
//!
//! The default file is always the user's own (never a project's, which is often committed: the
//! rewritten file holds a token). A server whose values use `${...}` variables (resolved only by
//! the client, e.g. VS Code's `${input:...}` prompts), an SSE server, or one reading an
//! `envFile` is not imported and stays in the client's file.

use std::{collections::BTreeMap, path::PathBuf};

use serde_json::{Map, Value};

use super::servers_file::{
    MAX_NAME_LEN, RESERVED_NAME, ServerSpec, ServersConfig, Transport, validate_name,
};

/// An agent client whose configuration can be imported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Client {
    /// Claude Desktop: `claude_desktop_config.json` in its config dir.
    ClaudeDesktop,
    /// Claude Code: `~/.claude.json`, top level and per project.
    ClaudeCode,
    /// VS Code: the user's `mcp.json` (key `servers`).
    Vscode,
    /// Cursor: `~/.cursor/mcp.json`.
    Cursor,
}

impl Client {
    /// Every client, in the order the CLI lists them.
    pub const ALL: [Client; 4] = [
        Client::ClaudeDesktop,
        Client::ClaudeCode,
        Client::Vscode,
        Client::Cursor,
    ];

    /// The client's id on the command line and in `mcp_config` (`claude-desktop`, ...).
    pub fn id(self) -> &'static str {
        match self {
            Client::ClaudeDesktop => "claude-desktop",
            Client::ClaudeCode => "claude-code",
            Client::Vscode => "vscode",
            Client::Cursor => "cursor",
        }
    }

    /// The client with id `id`, if any.
    pub fn from_id(id: &str) -> Option<Client> {
        Client::ALL.into_iter().find(|c| c.id() == id)
    }

    /// The top-level key holding the servers in this client's file.
    pub fn servers_key(self) -> &'static str {
        match self {
            Client::Vscode => "servers",
            _ => "mcpServers",
        }
    }

    /// The user's own configuration file of this client on this OS; `None` when the home
    /// directory is unknown.
    pub fn default_file(self) -> Option<PathBuf> {
        let dirs = directories::BaseDirs::new()?;
        Some(match self {
            Client::ClaudeDesktop => dirs
                .config_dir()
                .join("Claude")
                .join("claude_desktop_config.json"),
            Client::ClaudeCode => dirs.home_dir().join(".claude.json"),
            Client::Vscode => dirs.config_dir().join("Code").join("User").join("mcp.json"),
            Client::Cursor => dirs.home_dir().join(".cursor").join("mcp.json"),
        })
    }
}

/// Where in the client's file an entry is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// The top-level servers object.
    TopLevel,
    /// Claude Code's `projects.<path>.mcpServers`.
    Project(String),
}

/// What became of one entry of the client's file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Added to servers.json as `name`; replaced by `taskdeck` in the client's file.
    Added {
        /// The server's name in servers.json.
        name: String,
    },
    /// servers.json already has it (same spec) as `name`; replaced in the client's file.
    AlreadyThere {
        /// The server's name in servers.json.
        name: String,
    },
    /// It is Taskdeck itself; replaced by the new `taskdeck` entry.
    Taskdeck,
    /// Not imported, for `reason`; kept in the client's file.
    Skipped {
        /// Why, for the user.
        reason: String,
    },
}

impl Verdict {
    /// True when the entry leaves the client's file (Taskdeck reaches it now).
    pub fn replaced(&self) -> bool {
        !matches!(self, Verdict::Skipped { .. })
    }
}

/// One entry of the client's file and what became of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntryReport {
    /// Where the entry is in the client's file.
    pub scope: Scope,
    /// Its name in the client's file.
    pub client_name: String,
    /// What became of it.
    pub verdict: Verdict,
}

/// What an import does: the report of every entry, and the servers to add to servers.json.
#[derive(Debug, Clone, Default)]
pub struct ImportPlan {
    /// One report per server entry of the client's file.
    pub entries: Vec<EntryReport>,
    /// Name → spec.
    pub to_add: BTreeMap<String, ServerSpec>,
}

/// Plans the import of `client`'s `file` (its parsed JSON) into `existing` servers.json, for a
/// Taskdeck listening on `taskdeck_port` (entries pointing at it are Taskdeck itself);
/// `project_dir` is the project a project's own file belongs to ([`project_dir_of`]), where the
/// client starts its stdio servers. Errors: the file is not a JSON object, or its servers key
/// is not an object.
pub fn plan(
    client: Client,
    file: &Value,
    existing: &ServersConfig,
    (taskdeck_port, project_dir): (u16, Option<&str>),
) -> Result<ImportPlan, String> {
    let mut plan = ImportPlan::default();
    for ScopedServers { scope, servers } in server_maps(client, file)? {
        // The client starts a project's stdio servers in the project's directory.
        let cwd = match &scope {
            Scope::Project(dir) => Some(dir.as_str()),
            Scope::TopLevel => project_dir,
        };
        for (client_name, entry) in servers {
            let verdict = judge(client_name, entry, cwd, existing, &plan, taskdeck_port);
            if let Verdict::Added { name } = &verdict
                && !plan.to_add.contains_key(name)
            {
                let spec = convert(entry, cwd).expect("judged convertible");
                plan.to_add.insert(name.clone(), spec);
            }
            plan.entries.push(EntryReport {
                scope: scope.clone(),
                client_name: client_name.clone(),
                verdict,
            });
        }
    }
    Ok(plan)
}

/// The project directory of `client`'s file at `path` when it is a project's own file, whose
/// stdio servers the client starts there: Claude Code's `DIR/.mcp.json`, VS Code's
/// `DIR/.vscode/mcp.json`, Cursor's `DIR/.cursor/mcp.json` (not in the home dir); `None` for a
/// user's file.
pub fn project_dir_of(client: Client, path: &std::path::Path) -> Option<PathBuf> {
    let path = std::path::absolute(path).ok()?;
    let name = path.file_name()?.to_str()?;
    let parent = path.parent()?;
    let in_dir = |dir: &str| parent.file_name().and_then(|n| n.to_str()) == Some(dir);
    match client {
        Client::ClaudeCode if name == ".mcp.json" => Some(parent.to_path_buf()),
        Client::Vscode if name == "mcp.json" && in_dir(".vscode") => {
            parent.parent().map(PathBuf::from)
        }
        // `~/.cursor/mcp.json` is Cursor's global file, not a project's.
        Client::Cursor if name == "mcp.json" && in_dir(".cursor") => parent
            .parent()
            .filter(|dir| directories::BaseDirs::new().is_none_or(|d| d.home_dir() != *dir))
            .map(PathBuf::from),
        _ => None,
    }
}

/// `file` with every replaced entry of `plan` removed and `taskdeck_entry` added as `taskdeck`
/// in the top-level servers object (created when missing); every other key kept, in order.
pub fn rewrite(client: Client, file: &Value, plan: &ImportPlan, taskdeck_entry: Value) -> Value {
    let mut out = file.clone();
    let root = out.as_object_mut().expect("planned files are objects");
    for report in plan.entries.iter().filter(|r| r.verdict.replaced()) {
        let servers = match &report.scope {
            Scope::TopLevel => root.get_mut(client.servers_key()),
            Scope::Project(p) => root
                .get_mut("projects")
                .and_then(|ps| ps.get_mut(p))
                .and_then(|p| p.get_mut("mcpServers")),
        };
        if let Some(Value::Object(servers)) = servers {
            servers.shift_remove(&report.client_name);
        }
    }
    let servers = root
        .entry(client.servers_key())
        .or_insert_with(|| Value::Object(Map::new()));
    if let Value::Object(servers) = servers {
        servers.insert(RESERVED_NAME.to_string(), taskdeck_entry);
    }
    out
}

/// The servers objects of the file: the top level's, then (Claude Code) each project's.
/// One servers object of a client's file and where it is.
struct ScopedServers<'a> {
    scope: Scope,
    servers: &'a Map<String, Value>,
}

fn server_maps(client: Client, file: &Value) -> Result<Vec<ScopedServers<'_>>, String> {
    let root = file.as_object().ok_or("the file is not a JSON object")?;
    let mut maps = Vec::new();
    match root.get(client.servers_key()) {
        None | Some(Value::Null) => {}
        Some(Value::Object(servers)) => maps.push(ScopedServers {
            scope: Scope::TopLevel,
            servers,
        }),
        Some(_) => return Err(format!("\"{}\" is not an object", client.servers_key())),
    }
    if client == Client::ClaudeCode
        && let Some(Value::Object(projects)) = root.get("projects")
    {
        for (path, project) in projects {
            if let Some(Value::Object(servers)) = project.get("mcpServers") {
                maps.push(ScopedServers {
                    scope: Scope::Project(path.clone()),
                    servers,
                });
            }
        }
    }
    Ok(maps)
}

fn judge(
    client_name: &str,
    entry: &Value,
    cwd: Option<&str>,
    existing: &ServersConfig,
    plan: &ImportPlan,
    taskdeck_port: u16,
) -> Verdict {
    let skipped = |reason: String| Verdict::Skipped { reason };
    let name = normalize_name(client_name);
    if is_taskdeck(entry, Some(taskdeck_port)) {
        return Verdict::Taskdeck;
    }
    if name == RESERVED_NAME {
        // Taskdeck's entry from before, on the port it had then; else the user's own server,
        // which cannot take Taskdeck's name in servers.json.
        if is_taskdeck(entry, None) {
            return Verdict::Taskdeck;
        }
        return skipped(if client_name == RESERVED_NAME {
            "is named taskdeck, as Taskdeck's own entry is: the client's file keeps it only in \
             the backup (a top-level one is replaced); rename it and import again"
                .into()
        } else {
            "its name becomes taskdeck, Taskdeck's own, in servers.json: kept in the client's \
             file; rename it to import it"
                .into()
        });
    }
    let spec = match convert(entry, cwd) {
        Ok(spec) => spec,
        Err(reason) => return skipped(reason),
    };
    if let Err(e) = validate_name(&name) {
        return skipped(e.to_string());
    }
    // Another entry of this import already took the name (two scopes, or names that
    // normalise alike): the same server is imported once; another one is a collision.
    if let Some(planned) = plan.to_add.get(&name) {
        return if *planned == spec {
            Verdict::Added { name }
        } else {
            skipped(format!(
                "another server of this file is imported as {name:?}; rename one of them"
            ))
        };
    }
    if existing.unreadable.contains_key(&name) {
        return skipped(format!(
            "servers.json has an entry named {name:?} that is not a server spec; fix or remove it"
        ));
    }
    match existing.servers.get(&name) {
        None => Verdict::Added { name },
        Some(known) if *known == spec => Verdict::AlreadyThere { name },
        Some(_) => skipped(format!(
            "servers.json already has another server named {name:?}"
        )),
    }
}

/// `name` in the allowed charset: lowercase, other characters as `-`, no `__`, no `-` or `_` at
/// either end, at most 64 characters; `server` when nothing is left.
pub fn normalize_name(name: &str) -> String {
    let mut out: String = name
        .trim()
        .chars()
        .map(|c| match c.to_ascii_lowercase() {
            c @ ('a'..='z' | '0'..='9' | '_' | '-') => c,
            _ => '-',
        })
        .collect();
    while out.contains("__") {
        out = out.replace("__", "_");
    }
    // A name that starts with `-` reads as an option to `taskdeck servers remove`.
    out = out.trim_matches(['-', '_']).to_string();
    out.truncate(MAX_NAME_LEN);
    out.truncate(out.trim_end_matches(['-', '_']).len());
    if out.is_empty() {
        out.push_str("server");
    }
    out
}

/// A client entry as a servers.json spec, or why it cannot be one; a stdio entry without a
/// `cwd` of its own gets `cwd` (where the client starts it), when given.
fn convert(entry: &Value, cwd: Option<&str>) -> Result<ServerSpec, String> {
    let obj = entry.as_object().ok_or("the entry is not an object")?;
    if contains_variable(entry) {
        return Err(
            "it uses ${...} variables, which only the client resolves (add it with \
                    `taskdeck servers add`)"
                .into(),
        );
    }
    if obj.contains_key("envFile") {
        return Err("it reads an envFile (add it with `taskdeck servers add --env`)".into());
    }
    let kind = obj.get("type").and_then(Value::as_str);
    let transport = match (kind, obj.get("command"), obj.get("url")) {
        (Some("sse"), _, _) => {
            return Err(
                "it is an SSE server; Taskdeck connects to stdio and Streamable HTTP \
                        servers"
                    .into(),
            );
        }
        (Some("stdio") | None, Some(command), _) => Transport::Stdio {
            command: command.as_str().ok_or("`command` is not a string")?.into(),
            args: strings(obj.get("args"), "args")?,
            env: string_map(obj.get("env"), "env")?,
            cwd: match obj.get("cwd") {
                None | Some(Value::Null) => cwd.map(std::path::PathBuf::from),
                Some(Value::String(c)) => Some(c.into()),
                Some(_) => return Err("`cwd` is not a string".into()),
            },
        },
        (Some("http" | "streamable-http" | "streamableHttp") | None, _, Some(url)) => {
            Transport::Http {
                url: url.as_str().ok_or("`url` is not a string")?.into(),
                headers: string_map(obj.get("headers"), "headers")?,
            }
        }
        (Some(other), _, _) if !matches!(other, "stdio" | "http") => {
            return Err(format!("unknown server type {other:?}"));
        }
        _ => return Err("it has neither a `command` nor a `url`".into()),
    };
    let spec = ServerSpec {
        transport,
        disabled: obj
            .get("disabled")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        timeout_ms: None,
    };
    spec.validate().map_err(|e| e.to_string())?;
    Ok(spec)
}

fn contains_variable(v: &Value) -> bool {
    match v {
        Value::String(s) => s.contains("${"),
        Value::Array(a) => a.iter().any(contains_variable),
        Value::Object(o) => o.values().any(contains_variable),
        _ => false,
    }
}

fn strings(v: Option<&Value>, field: &str) -> Result<Vec<String>, String> {
    match v {
        None | Some(Value::Null) => Ok(vec![]),
        Some(Value::Array(a)) => a
            .iter()
            .map(|s| scalar(s).ok_or(format!("`{field}` holds a value that is not a string")))
            .collect(),
        Some(_) => Err(format!("`{field}` is not an array")),
    }
}

fn string_map(v: Option<&Value>, field: &str) -> Result<BTreeMap<String, String>, String> {
    match v {
        None | Some(Value::Null) => Ok(Default::default()),
        Some(Value::Object(o)) => o
            .iter()
            .map(|(k, v)| {
                scalar(v)
                    .map(|v| (k.clone(), v))
                    .ok_or(format!("`{field}.{k}` is not a string"))
            })
            .collect(),
        Some(_) => Err(format!("`{field}` is not an object")),
    }
}

/// A string, or a number or boolean as its text (clients take `"PORT": 8080`).
fn scalar(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// True when `url` is an `/mcp` URL (`/mcp` or `/mcp/SERVER`) of a host that reaches this
/// machine's loopback interface (`localhost` and `*.localhost`, any `127.x.y.z`, `[::1]`,
/// and the unspecified `0.0.0.0` and `[::]`, which Linux connects to the loopback) on `port`
/// (on any port when `None`).
pub fn is_taskdeck_url(url: &str, port: Option<u16>) -> bool {
    use std::net::IpAddr;
    reqwest::Url::parse(url).is_ok_and(|u| {
        let host = u.host_str().unwrap_or_default();
        let local = match host.trim_matches(['[', ']']).parse::<IpAddr>() {
            Ok(ip) => {
                let ip = ip.to_canonical();
                ip.is_loopback() || ip.is_unspecified()
            }
            // The URL parser has lowercased a domain already.
            Err(_) => {
                let d = host.trim_end_matches('.');
                d == "localhost" || d.ends_with(".localhost")
            }
        };
        matches!(u.scheme(), "http" | "https")
            && local
            && port.is_none_or(|port| u.port_or_known_default() == Some(port))
            && (u.path() == "/mcp" || u.path().starts_with("/mcp/"))
    })
}

/// The entries of `client`'s `file` (its parsed JSON) that reach a Taskdeck, on any port: each
/// one's name and the Taskdeck URL it uses (its `url`, or the URL among a stdio entry's
/// arguments). Errors, as [`plan`]'s: the file is not a JSON object, or its servers key is not
/// an object.
pub fn taskdeck_entries(client: Client, file: &Value) -> Result<Vec<(String, String)>, String> {
    let maps = server_maps(client, file)?;
    let ours = |s: &&str| is_taskdeck_url(s, None);
    Ok(maps
        .iter()
        .flat_map(|m| m.servers.iter())
        .filter_map(|(name, entry)| {
            let url = entry.get("url").and_then(Value::as_str).filter(ours);
            let arg = || {
                entry
                    .get("args")?
                    .as_array()?
                    .iter()
                    .filter_map(Value::as_str)
                    .find(ours)
            };
            Some((name.clone(), url.or_else(arg)?.to_string()))
        })
        .collect())
}

/// True when the entry reaches Taskdeck on `port` (any port when `None`): its `url`, or a URL
/// among a stdio entry's arguments (e.g. `npx mcp-remote http://127.0.0.1:4747/mcp`), is a
/// loopback `/mcp` URL of that port.
fn is_taskdeck(entry: &Value, port: Option<u16>) -> bool {
    let is_ours = |s: &str| is_taskdeck_url(s, port);
    let url = entry.get("url").and_then(Value::as_str);
    let args = entry.get("args").and_then(Value::as_array);
    url.is_some_and(is_ours)
        || args.is_some_and(|a| a.iter().filter_map(Value::as_str).any(is_ours))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn entry(plan: &ImportPlan, name: &str) -> Verdict {
        plan.entries
            .iter()
            .find(|e| e.client_name == name)
            .unwrap_or_else(|| panic!("no entry {name}"))
            .verdict
            .clone()
    }

    #[test]
    fn names_are_normalised() {
        assert_eq!(normalize_name("My Server"), "my-server");
        assert_eq!(normalize_name("github.com/tools"), "github-com-tools");
        assert_eq!(normalize_name("a___b"), "a_b");
        assert_eq!(normalize_name("  "), "server");
        assert_eq!(normalize_name("ÜBER"), "ber", "no leading dash");
        assert_eq!(normalize_name(&"X".repeat(80)).len(), 64);
        // Cut at 64 characters, it still does not end with `_`.
        assert_eq!(
            normalize_name(&format!("{}_b", "a".repeat(63))),
            "a".repeat(63)
        );
    }

    #[test]
    fn claude_code_scopes_are_read_and_collisions_reported() {
        let file = json!({
            "numStartups": 3,
            "mcpServers": {
                "fs": {"type": "stdio", "command": "npx", "args": ["-y", "server-fs", "/tmp"]},
                "Docs": {"type": "http", "url": "https://docs.example/mcp",
                         "headers": {"Authorization": "Bearer s3cret"}},
                "old": {"type": "sse", "url": "https://old.example/sse"},
                "taskdeck": {"type": "http", "url": "http://127.0.0.1:4747/mcp"}
            },
            "projects": {"/home/me/app": {"allowedTools": [], "mcpServers": {
                "fs": {"type": "stdio", "command": "npx", "args": ["-y", "server-fs", "/tmp"]},
                "docs": {"type": "http", "url": "https://other.example/mcp"},
                "db": {"command": "db-mcp", "env": {"PORT": 5432}}
            }}}
        });
        let plan = plan(
            Client::ClaudeCode,
            &file,
            &ServersConfig::default(),
            (4747, None),
        )
        .unwrap();
        assert_eq!(entry(&plan, "fs"), Verdict::Added { name: "fs".into() });
        assert_eq!(
            entry(&plan, "Docs"),
            Verdict::Added {
                name: "docs".into()
            }
        );
        assert!(
            matches!(entry(&plan, "old"), Verdict::Skipped { reason } if reason.contains("SSE"))
        );
        assert_eq!(entry(&plan, "taskdeck"), Verdict::Taskdeck);
        // The project's fs runs in the project's directory, so it is not the user's fs.
        assert_eq!(plan.entries[4].scope, Scope::Project("/home/me/app".into()));
        for (i, name) in [(4, "\"fs\""), (5, "\"docs\"")] {
            assert!(
                matches!(&plan.entries[i].verdict, Verdict::Skipped { reason } if reason.contains(name)),
                "{:?}",
                plan.entries[i]
            );
        }
        assert_eq!(plan.to_add.len(), 3, "fs, docs, db");
        let db = &plan.to_add["db"];
        assert!(matches!(&db.transport, Transport::Stdio { env, cwd, .. }
            if env["PORT"] == "5432" && cwd.as_deref() == Some(std::path::Path::new("/home/me/app"))));
        assert!(matches!(
            &plan.to_add["fs"].transport,
            Transport::Stdio { cwd: None, .. }
        ));

        let rewritten = rewrite(
            Client::ClaudeCode,
            &file,
            &plan,
            json!({"type": "http", "url": "http://127.0.0.1:4747/mcp"}),
        );
        assert_eq!(rewritten["numStartups"], 3);
        let top: Vec<_> = rewritten["mcpServers"]
            .as_object()
            .unwrap()
            .keys()
            .collect();
        assert_eq!(top, ["old", "taskdeck"]);
        let project: Vec<_> = rewritten["projects"]["/home/me/app"]["mcpServers"]
            .as_object()
            .unwrap()
            .keys()
            .collect();
        assert_eq!(project, ["fs", "docs"]);
        assert_eq!(
            rewritten["projects"]["/home/me/app"]["allowedTools"],
            json!([])
        );
    }

    #[test]
    fn vscode_variables_and_existing_servers() {
        let file = json!({
            "inputs": [{"type": "promptString", "id": "key", "password": true}],
            "servers": {
                "github": {"type": "http", "url": "https://api.example/mcp",
                           "headers": {"Authorization": "Bearer ${input:key}"}},
                "fs": {"type": "stdio", "command": "npx", "args": ["server-fs"]},
                "git": {"type": "stdio", "command": "uvx", "args": ["mcp-server-git"]},
                "bridge": {"command": "npx", "args": ["-y", "mcp-remote", "http://localhost:4747/mcp"]}
            }
        });
        let mut existing = ServersConfig::default();
        existing
            .servers
            .insert("fs".into(), convert(&file["servers"]["fs"], None).unwrap());
        existing
            .servers
            .insert("git".into(), convert(&file["servers"]["fs"], None).unwrap());
        let plan = plan(Client::Vscode, &file, &existing, (4747, None)).unwrap();
        assert!(
            matches!(entry(&plan, "github"), Verdict::Skipped { reason } if reason.contains("${...}"))
        );
        assert_eq!(
            entry(&plan, "fs"),
            Verdict::AlreadyThere { name: "fs".into() }
        );
        assert!(
            matches!(entry(&plan, "git"), Verdict::Skipped { reason } if reason.contains("already has"))
        );
        assert_eq!(entry(&plan, "bridge"), Verdict::Taskdeck);
        assert!(plan.to_add.is_empty());
        let rewritten = rewrite(Client::Vscode, &file, &plan, json!({"type": "http"}));
        let names: Vec<_> = rewritten["servers"].as_object().unwrap().keys().collect();
        assert_eq!(names, ["github", "git", "taskdeck"]);
        assert_eq!(rewritten["inputs"], file["inputs"]);
    }

    /// A server the user named like Taskdeck is theirs unless it reaches a Taskdeck: it is not
    /// taken for Taskdeck and dropped; an entry of Taskdeck's on an older port is.
    #[test]
    fn a_server_named_like_taskdeck_is_the_users_own() {
        let file = json!({"mcpServers": {
            "TaskDeck": {"command": "/bin/echo", "args": ["d"]},
            "taskdeck": {"command": "notes-mcp"},
            "bridge": {"command": "npx", "args": ["mcp-remote", "http://localhost:4000/mcp"]},
        }});
        let plan = plan(
            Client::ClaudeDesktop,
            &file,
            &ServersConfig::default(),
            (4747, None),
        )
        .unwrap();
        let skipped = |name: &str, says: &str| {
            assert!(
                matches!(entry(&plan, name), Verdict::Skipped { reason } if reason.contains(says)),
                "{:?}",
                entry(&plan, name)
            );
        };
        skipped("TaskDeck", "kept in the client's file");
        skipped("taskdeck", "only in the backup");
        // Not a Taskdeck here: mcp-remote to another port is the user's bridge.
        assert_eq!(
            entry(&plan, "bridge"),
            Verdict::Added {
                name: "bridge".into()
            }
        );
        let older = json!({"mcpServers": {"taskdeck": {"url": "http://127.0.0.1:4000/mcp"}}});
        let again = super::plan(
            Client::ClaudeDesktop,
            &older,
            &ServersConfig::default(),
            (4747, None),
        )
        .unwrap();
        assert_eq!(entry(&again, "taskdeck"), Verdict::Taskdeck);
    }

    #[test]
    fn a_file_without_servers_gets_the_taskdeck_entry() {
        let file = json!({"globalShortcut": ""});
        let plan = plan(
            Client::ClaudeDesktop,
            &file,
            &ServersConfig::default(),
            (1, None),
        )
        .unwrap();
        assert!(plan.entries.is_empty());
        let rewritten = rewrite(
            Client::ClaudeDesktop,
            &file,
            &plan,
            json!({"command": "npx"}),
        );
        assert_eq!(rewritten["mcpServers"]["taskdeck"]["command"], "npx");
        assert_eq!(rewritten["globalShortcut"], "");
        assert!(
            super::plan(
                Client::Cursor,
                &json!([]),
                &ServersConfig::default(),
                (1, None)
            )
            .is_err()
        );
        assert!(
            super::plan(
                Client::Cursor,
                &json!({"mcpServers": []}),
                &ServersConfig::default(),
                (1, None)
            )
            .is_err()
        );
    }

    #[test]
    fn bad_entries_are_skipped_with_a_reason() {
        for (bad, why) in [
            (json!({"command": 3}), "not a string"),
            (json!({"command": "x", "args": [{}]}), "args"),
            (json!({"url": "ftp://x"}), "scheme"),
            (json!({"args": []}), "neither"),
            (
                json!({"type": "ws", "url": "ws://x"}),
                "unknown server type",
            ),
            (
                json!({"type": "stdio", "command": "x", "envFile": ".env"}),
                "envFile",
            ),
        ] {
            let e = convert(&bad, None).unwrap_err();
            assert!(e.contains(why), "{bad}: {e}");
        }
        let cursor = convert(
            &json!({"url": "https://x.example/mcp", "headers": {"X-Key": "v"}}),
            None,
        )
        .unwrap();
        assert!(matches!(cursor.transport, Transport::Http { .. }));
    }

    #[test]
    fn a_projects_own_file_names_its_project_dir() {
        let dir = |client, path: &str| project_dir_of(client, std::path::Path::new(path));
        let some = |p: &str| Some(PathBuf::from(p));
        assert_eq!(
            dir(Client::ClaudeCode, "/home/me/app/.mcp.json"),
            some("/home/me/app")
        );
        assert_eq!(
            dir(Client::Vscode, "/w/site/.vscode/mcp.json"),
            some("/w/site")
        );
        assert_eq!(dir(Client::Cursor, "/w/x/.cursor/mcp.json"), some("/w/x"));
        let home = directories::BaseDirs::new()
            .unwrap()
            .home_dir()
            .to_path_buf();
        let global = home.join(".cursor").join("mcp.json");
        assert_eq!(dir(Client::Cursor, global.to_str().unwrap()), None);
        assert_eq!(dir(Client::ClaudeCode, "/home/me/.claude.json"), None);
        assert_eq!(dir(Client::Cursor, "/home/me/.cursor-other/mcp.json"), None);
        assert_eq!(dir(Client::ClaudeDesktop, "/x/.mcp.json"), None);
        // Its stdio servers get that directory.
        let file = json!({"mcpServers": {"cfs": {"command": "fs-server", "args": ["."]}}});
        let plan = plan(
            Client::ClaudeCode,
            &file,
            &ServersConfig::default(),
            (4747, Some("/home/me/app")),
        )
        .unwrap();
        assert!(matches!(&plan.to_add["cfs"].transport,
            Transport::Stdio { cwd: Some(c), .. } if c == std::path::Path::new("/home/me/app")));
    }

    #[test]
    fn every_client_has_a_default_file() {
        for c in Client::ALL {
            assert_eq!(Client::from_id(c.id()), Some(c));
            if let Some(path) = c.default_file() {
                assert!(path.is_absolute(), "{path:?}");
            }
        }
        assert_eq!(Client::from_id("emacs"), None);
    }
}
