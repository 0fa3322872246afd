//! Which of Claude Code's MCP tools are this Taskdeck's. A `PermissionRequest` for one of them
//! (`mcp__taskdeck__run_command`, `mcp__taskdeck__fs__write_file`) is allowed by the hook
//! without a question: the call comes to Taskdeck, whose own approval step (the gateway's
//! policy, `run_command`'s) decides it there. Asking in the hook too would put every such call
//! in the inbox twice.
//!
//! Claude Code's configuration (<https://code.claude.com/docs/en/mcp>, "MCP installation
//! scopes"): a server name is looked up in the local scope (`.claude.json`,
//! `projects.<project dir>.mcpServers`), then the project scope (`.mcp.json` in the project
//! dir), then the user scope (`.claude.json`, top-level `mcpServers`); the first scope that
//! names it decides. `.claude.json` is in `$CLAUDE_CONFIG_DIR`, else the home dir, as the hook
//! found them in Claude Code's environment ([`AgentEnv`]). Claude names a tool
//! `mcp__<server>__<tool>`, the server's name with every character but letters, digits, `_`
//! and `-` as `_`.
//!
//! The project dir is where Claude Code was started, which the event's `cwd` need not be any
//! more (a session that `cd`s away keeps its servers). [`session_dirs`] finds it: the hook's
//! `$CLAUDE_PROJECT_DIR` (Claude sets it for hooks), else the `cwd` when the transcript's
//! directory is the one Claude names after the `cwd` ([`project_key`]); otherwise the lookup
//! cannot see what Claude sees and the prompt is asked. Each dir looks at its own entry and
//! its parents' entries. With both the project dir and a different `cwd`, both views must find
//! the same Taskdeck tool.
//!
//! A tool is Taskdeck's only when:
//! - exactly one of the server names in sight makes a prefix of the tool's name (`taskdeck` and
//!   `taskdeck__proj` both fit `mcp__taskdeck__proj__write_file`: asked);
//! - that server's entry is a Streamable HTTP one (no `command`; `type` absent, `http` or
//!   `streamable-http`) whose `url` is a loopback `/mcp` URL of this Taskdeck's port
//!   ([`is_taskdeck_url`]). A stdio entry never is, whatever else it holds (a decoy `url`, an
//!   `mcp-remote` bridge's arguments): its calls go to the program it starts, which a
//!   project's `.mcp.json` could make anything;
//! - the rest of the name is a tool that Taskdeck serves there ([`OwnTool`], checked by the
//!   caller).
//!
//! Files are read again when their size, modification or change time differs.

use std::{
    collections::HashMap,
    path::{Path, PathBuf},
    sync::{Arc, Mutex},
    time::SystemTime,
};

use serde_json::{Map, Value};

use crate::gateway::import::is_taskdeck_url;

/// A tool of this Taskdeck as a Claude Code tool name names it: the part of the Taskdeck URL
/// after `/mcp` (`None` for `/mcp`, `Some("fs")` for `/mcp/fs`) and the tool's name there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwnTool {
    pub server_path: Option<String>,
    pub tool: String,
}

/// The lookup of [`OwnServers::taskdeck_tool`], with the files it read kept by path.
pub struct OwnServers {
    port: u16,
    files: Mutex<HashMap<PathBuf, Read>>,
}

/// A file as last read: its size, modification and change times, and its JSON (`Null` when
/// it is missing or not JSON).
struct Read {
    stamp: Option<(u64, Option<SystemTime>, i64)>,
    json: Arc<Value>,
}

/// Claude Code's name for a server in tool names: characters other than ASCII letters, digits,
/// `_` and `-` as `_`.
fn tool_prefix_name(name: &str) -> String {
    name.chars()
        .map(|c| match c {
            c if c.is_ascii_alphanumeric() || c == '_' || c == '-' => c,
            _ => '_',
        })
        .collect()
}

/// What `taskdeck hook` found in the agent's environment and sends along with the event
/// (request headers [`crate::adapters::hooks_api::CLAUDE_CONFIG_HEADER`],
/// [`crate::adapters::hooks_api::CLAUDE_PROJECT_HEADER`],
/// [`crate::adapters::hooks_api::CODEX_HOME_HEADER`]). Paths are absolute.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AgentEnv {
    /// Claude's `.claude.json`: `$CLAUDE_CONFIG_DIR/.claude.json`, else the home dir's.
    /// `None`: this process's own view ([`OwnServers::default_user_file`]).
    pub claude_config: Option<PathBuf>,
    /// `$CLAUDE_PROJECT_DIR`: the directory Claude Code was started in.
    pub claude_project_dir: Option<PathBuf>,
    /// Codex's configuration dir: `$CODEX_HOME`, else `~/.codex`. `None`: this process's
    /// own view ([`super::codex_servers::default_codex_home`]).
    pub codex_home: Option<PathBuf>,
}

impl AgentEnv {
    /// This process's environment as `agent`'s hook sees it (the agent's own, for a hook it
    /// runs): only what `agent`'s lookup uses.
    pub fn from_process(agent: super::Agent) -> AgentEnv {
        match agent {
            super::Agent::ClaudeCode => AgentEnv {
                claude_config: OwnServers::default_user_file().filter(|p| p.is_absolute()),
                claude_project_dir: std::env::var_os("CLAUDE_PROJECT_DIR")
                    .map(PathBuf::from)
                    .filter(|p| p.is_absolute()),
                codex_home: None,
            },
            super::Agent::Codex => AgentEnv {
                codex_home: super::codex_servers::default_codex_home().filter(|p| p.is_absolute()),
                ..AgentEnv::default()
            },
        }
    }
}

/// The name Claude Code gives a project's directory under `projects/` of its configuration dir
/// (where the session's `transcript_path` is): `dir` with every UTF-16 code unit that is not
/// an ASCII letter or digit as `-` (`/home/a_b` → `-home-a-b`).
pub fn project_key(dir: &str) -> String {
    dir.encode_utf16()
        .map(|u| match char::from_u32(u32::from(u)) {
            Some(c) if c.is_ascii_alphanumeric() => c,
            _ => '-',
        })
        .collect()
}

/// The directories a Claude Code session looks up its project's MCP servers from, given the
/// event's `cwd` and `transcript_path` and the hook's `project_dir` (see the module comment):
/// the project dir and the `cwd` (once when the same); the `cwd` alone when the transcript's
/// directory is named after it. `None` when the session's project cannot be told (no absolute
/// `cwd`, or it moved and the hook did not say where Claude started).
pub fn session_dirs(
    cwd: Option<&str>,
    transcript_path: Option<&str>,
    project_dir: Option<&Path>,
) -> Option<Vec<PathBuf>> {
    let cwd = PathBuf::from(cwd?);
    if !cwd.is_absolute() {
        return None;
    }
    if let Some(project) = project_dir.filter(|p| p.is_absolute()) {
        let mut dirs = vec![project.to_path_buf()];
        if cwd != project {
            dirs.push(cwd);
        }
        return Some(dirs);
    }
    let transcript_dir = Path::new(transcript_path?).parent()?.file_name()?;
    (transcript_dir.to_str()? == project_key(cwd.to_str()?)).then(|| vec![cwd])
}

impl OwnServers {
    /// The lookup for the Taskdeck listening on `port`.
    pub fn new(port: u16) -> OwnServers {
        OwnServers {
            port,
            files: Mutex::new(HashMap::new()),
        }
    }

    /// `.claude.json` when the hook does not say where it is: `$CLAUDE_CONFIG_DIR`'s, else
    /// the home dir's, as this process sees them.
    pub fn default_user_file() -> Option<PathBuf> {
        match std::env::var_os("CLAUDE_CONFIG_DIR") {
            Some(dir) if !dir.is_empty() => Some(PathBuf::from(dir).join(".claude.json")),
            _ => directories::BaseDirs::new().map(|d| d.home_dir().join(".claude.json")),
        }
    }

    /// The Taskdeck tool Claude Code's `tool_name` calls in a session whose project's servers
    /// are looked up from each of `dirs` (absolute; [`session_dirs`]; empty: the user scope
    /// only), with Claude's `.claude.json` at `user_file`; `None` when it is not one of this
    /// Taskdeck's (see the module comment), cannot be told apart from another server's, or two
    /// of `dirs` see different servers under its name. A file that cannot be read or parsed
    /// names no server.
    pub fn taskdeck_tool(
        &self,
        tool_name: &str,
        dirs: &[&Path],
        user_file: Option<&Path>,
    ) -> Option<OwnTool> {
        let rest = tool_name.strip_prefix("mcp__")?;
        let user = user_file.map(|f| self.read(f));
        let user = user.as_deref();
        let Some((first, others)) = dirs.split_first() else {
            return self.seen_from(rest, None, user);
        };
        let own = self.seen_from(rest, Some(first), user)?;
        others
            .iter()
            .all(|dir| self.seen_from(rest, Some(dir), user).as_ref() == Some(&own))
            .then_some(own)
    }

    /// [`Self::taskdeck_tool`] for the tool name `rest` (after `mcp__`) seen from `dir` and its
    /// parents (`None`: the user scope only), with `.claude.json`'s JSON `user`.
    fn seen_from(&self, rest: &str, dir: Option<&Path>, user: Option<&Value>) -> Option<OwnTool> {
        let dirs: Vec<&Path> = dir
            .filter(|p| p.is_absolute())
            .map(|p| p.ancestors().collect())
            .unwrap_or_default();
        // Every server name in sight, each with the entry its first scope gives it.
        let mut seen: HashMap<String, Value> = HashMap::new();
        let mut add = |servers: Option<&Value>| {
            for (name, entry) in servers.and_then(Value::as_object).into_iter().flatten() {
                seen.entry(name.clone()).or_insert_with(|| entry.clone());
            }
        };
        if let Some(user) = user {
            for dir in &dirs {
                let project = user
                    .get("projects")
                    .and_then(|p| p.get(dir.to_string_lossy().as_ref()));
                add(project.and_then(|p| p.get("mcpServers")));
            }
        }
        for dir in &dirs {
            add(self.read(&dir.join(".mcp.json")).get("mcpServers"));
        }
        if let Some(user) = user {
            add(user.get("mcpServers"));
        }
        let mut fitting = seen.iter().filter_map(|(name, entry)| {
            let tool = rest
                .strip_prefix(&tool_prefix_name(name))?
                .strip_prefix("__")?;
            Some((entry, tool))
        });
        let (entry, tool) = fitting.next()?;
        if fitting.next().is_some() || tool.is_empty() {
            return None;
        }
        let server_path = self.taskdeck_path(entry.as_object()?)?;
        Some(OwnTool {
            server_path,
            tool: tool.to_string(),
        })
    }

    /// For a Streamable HTTP entry reaching this Taskdeck: `Some(None)` for `/mcp`,
    /// `Some(Some(server))` for `/mcp/server`; `None` for anything else.
    fn taskdeck_path(&self, entry: &Map<String, Value>) -> Option<Option<String>> {
        let http = !entry.contains_key("command")
            && match entry.get("type") {
                None => true,
                Some(t) => matches!(t.as_str(), Some("http" | "streamable-http")),
            };
        if !http {
            return None;
        }
        self.taskdeck_url_path(entry.get("url").and_then(Value::as_str)?)
    }

    /// For a URL of this Taskdeck's endpoint ([`is_taskdeck_url`]): `Some(None)` for `/mcp`,
    /// `Some(Some(server))` for `/mcp/server`; `None` for any other URL.
    pub(super) fn taskdeck_url_path(&self, url: &str) -> Option<Option<String>> {
        if !is_taskdeck_url(url, self.port) {
            return None;
        }
        let path = reqwest::Url::parse(url).ok()?.path().to_string();
        Some(
            path.strip_prefix("/mcp/")
                .map(|s| s.trim_end_matches('/').to_string())
                .filter(|s| !s.is_empty()),
        )
    }

    /// `path`'s JSON, read again when its size, modification or change time changed.
    fn read(&self, path: &Path) -> Arc<Value> {
        self.read_as(path, |bytes| serde_json::from_slice(bytes).ok())
    }

    /// `path` as `parse` makes it into JSON (`Null` when it is missing or `parse` fails), read
    /// again when its size, modification or change time changed. One path, one `parse`.
    pub(super) fn read_as(&self, path: &Path, parse: fn(&[u8]) -> Option<Value>) -> Arc<Value> {
        let stamp = std::fs::metadata(path).ok().map(|m| {
            #[cfg(unix)]
            let changed = std::os::unix::fs::MetadataExt::ctime_nsec(&m)
                + std::os::unix::fs::MetadataExt::ctime(&m) * 1_000_000_000;
            #[cfg(not(unix))]
            let changed = 0;
            (m.len(), m.modified().ok(), changed)
        });
        let mut files = self.files.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(read) = files.get(path)
            && read.stamp == stamp
        {
            return read.json.clone();
        }
        let json = stamp
            .and_then(|_| std::fs::read(path).ok())
            .and_then(|bytes| parse(&bytes))
            .unwrap_or(Value::Null);
        let json = Arc::new(json);
        files.insert(
            path.to_path_buf(),
            Read {
                stamp,
                json: json.clone(),
            },
        );
        json
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn write(path: &Path, v: &Value) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, v.to_string()).unwrap();
    }

    fn own(tool: &str, server_path: Option<&str>) -> Option<OwnTool> {
        Some(OwnTool {
            server_path: server_path.map(String::from),
            tool: tool.into(),
        })
    }

    #[test]
    fn the_first_scope_that_names_a_server_decides() {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("home");
        let user_file = home.join(".claude.json");
        let project = tmp.path().join("app");
        let ours = json!({"type": "http", "url": "http://127.0.0.1:4747/mcp"});
        let other = json!({"type": "http", "url": "http://127.0.0.1:9000/mcp"});
        write(
            &user_file,
            &json!({
                "mcpServers": {"taskdeck": ours, "deck": ours, "elsewhere": other,
                    "files": {"url": "http://localhost:4747/mcp/fs/"}},
                "projects": {project.to_str().unwrap(): {"mcpServers": {"deck": other}}}
            }),
        );
        write(
            &project.join(".mcp.json"),
            &json!({"mcpServers": {"taskdeck": other, "shared": ours}}),
        );
        let lookup = OwnServers::new(4747);
        let sub = project.join("src");
        let in_project = Some(sub.as_path());
        let user = Some(user_file.as_path());
        let is = |tool: &str, dir: Option<&Path>| {
            let dirs: Vec<&Path> = dir.into_iter().collect();
            lookup.taskdeck_tool(tool, &dirs, user)
        };
        // The project's .mcp.json names `taskdeck` another server: it wins over the user's.
        assert_eq!(is("mcp__taskdeck__run_command", in_project), None);
        assert_eq!(
            is(
                "mcp__taskdeck__run_command",
                Some(Path::new("/somewhere/else"))
            ),
            own("run_command", None)
        );
        assert_eq!(
            is("mcp__taskdeck__fs__write_file", None),
            own("fs__write_file", None)
        );
        // The local scope wins over the user's.
        assert_eq!(is("mcp__deck__run_command", in_project), None);
        assert_eq!(is("mcp__deck__run_command", None), own("run_command", None));
        assert_eq!(
            is("mcp__shared__task_status", in_project),
            own("task_status", None)
        );
        assert_eq!(
            is("mcp__files__write_file", None),
            own("write_file", Some("fs"))
        );
        assert_eq!(is("mcp__elsewhere__run_command", in_project), None);
        assert_eq!(is("mcp__unknown__run_command", in_project), None);
        assert_eq!(is("Bash", None), None);
        // Another Taskdeck's port is not this one.
        assert_eq!(
            OwnServers::new(4748).taskdeck_tool("mcp__taskdeck__run_command", &[], user),
            None
        );
    }

    #[test]
    fn a_stdio_entry_or_a_name_another_server_could_make_is_never_taskdeck() {
        let tmp = tempfile::tempdir().unwrap();
        let user_file = tmp.path().join(".claude.json");
        let url = "http://127.0.0.1:4747/mcp";
        write(
            &user_file,
            &json!({"mcpServers": {
                "taskdeck": {"type": "http", "url": url},
                "taskdeck__proj": {"command": "mcp-server-filesystem", "args": ["."]},
                "decoy": {"type": "stdio", "command": "echo", "url": url},
                "untyped": {"command": "echo", "args": ["x"], "url": url},
                "bridge": {"command": "npx", "args": ["mcp-remote", url]},
                "old-sse": {"type": "sse", "url": url},
                "task.deck": {"type": "http", "url": url},
            }}),
        );
        let lookup = OwnServers::new(4747);
        let is = |tool: &str| lookup.taskdeck_tool(tool, &[], Some(&user_file));
        for tool in [
            "mcp__decoy__run_command",
            "mcp__untyped__run_command",
            "mcp__bridge__run_command",
            "mcp__old-sse__run_command",
            // `taskdeck` and `taskdeck__proj` both fit: asked.
            "mcp__taskdeck__proj__write_file",
        ] {
            assert_eq!(is(tool), None, "{tool}");
        }
        assert_eq!(is("mcp__taskdeck__run_command"), own("run_command", None));
        // Claude's name for `task.deck` is `task_deck`.
        assert_eq!(is("mcp__task_deck__run_command"), own("run_command", None));
    }

    #[test]
    fn a_changed_file_is_read_again_and_a_broken_one_names_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join(".claude.json");
        let lookup = OwnServers::new(4747);
        let is = || lookup.taskdeck_tool("mcp__taskdeck__run_command", &[], Some(&file));
        assert_eq!(is(), None, "no file");
        write(
            &file,
            &json!({"mcpServers": {"taskdeck": {"url": "http://localhost:4747/mcp"}}}),
        );
        assert_eq!(is(), own("run_command", None));
        std::fs::write(&file, "{ not json").unwrap();
        assert_eq!(is(), None);
    }

    #[test]
    fn a_session_that_moved_away_sees_its_project_and_where_it_is() {
        let tmp = tempfile::tempdir().unwrap();
        let user_file = tmp.path().join(".claude.json");
        let ours = json!({"type": "http", "url": "http://127.0.0.1:4747/mcp"});
        write(&user_file, &json!({"mcpServers": {"taskdeck": ours}}));
        let project = tmp.path().join("shop");
        write(
            &project.join(".mcp.json"),
            &json!({"mcpServers": {"taskdeck": {"command": "evil"}}}),
        );
        let elsewhere = tmp.path().join("elsewhere");
        std::fs::create_dir_all(&elsewhere).unwrap();
        let lookup = OwnServers::new(4747);
        let is = |dirs: &[&Path]| {
            lookup.taskdeck_tool("mcp__taskdeck__run_command", dirs, Some(&user_file))
        };
        assert_eq!(is(&[&elsewhere]), own("run_command", None));
        // Claude still uses the project's stdio `taskdeck`: asked.
        assert_eq!(is(&[&project, &elsewhere]), None);
        assert_eq!(is(&[&elsewhere, &project]), None);
    }

    #[test]
    fn the_project_dir_is_the_hooks_or_the_cwd_the_transcript_is_named_after() {
        assert_eq!(project_key("/home/dev/my_app.v2"), "-home-dev-my-app-v2");
        // One `-` per UTF-16 code unit, as Claude's JavaScript replaces them.
        assert_eq!(project_key("/h/é😀"), "-h----");
        let transcript = "/home/dev/.claude/projects/-home-dev-shop/3f1c.jsonl";
        let dirs = |cwd, project: Option<&str>| {
            session_dirs(cwd, Some(transcript), project.map(Path::new))
        };
        let v = |dirs: &[&str]| Some(dirs.iter().map(PathBuf::from).collect::<Vec<_>>());
        assert_eq!(dirs(Some("/home/dev/shop"), None), v(&["/home/dev/shop"]));
        // Moved away, and where Claude started is not said: cannot be told.
        assert_eq!(dirs(Some("/tmp/other"), None), None);
        assert_eq!(
            dirs(Some("/tmp/other"), Some("/home/dev/shop")),
            v(&["/home/dev/shop", "/tmp/other"])
        );
        assert_eq!(
            dirs(Some("/home/dev/shop"), Some("/home/dev/shop")),
            v(&["/home/dev/shop"])
        );
        assert_eq!(dirs(None, Some("/home/dev/shop")), None);
        assert_eq!(dirs(Some("shop"), None), None);
        assert_eq!(session_dirs(Some("/home/dev/shop"), None, None), None);
    }
}
