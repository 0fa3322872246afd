//! Which of an agent's MCP tools are this Taskdeck's. A `PermissionRequest` for one of them
//! (`mcp__taskdeck__run_command`, `mcp__taskdeck__fs__write_file`) is allowed by the hook
//! without a question: the call comes to Taskdeck, whose own approval step (the gateway's
//! policy, `run_command`'s) decides it there. Asking in the hook too would put every such call
//! in the inbox twice.
//!
//! The agent's configuration names its servers ([`super::claude_servers`],
//! [`super::codex_servers`] read it as [`Definition`]s). A hook cannot see everything the agent
//! saw when it loaded them (which scope won, which profile runs, the files as they were at the
//! session's start), so no precedence is trusted: every definition in sight, and every one
//! seen from the same started-in dir before while Taskdeck runs (a session keeps its servers
//! across `/clear`, which starts a new session id), must agree. A tool is Taskdeck's only
//! when:
//! - exactly one server name makes a prefix of the tool's name as the agent writes names
//!   (`taskdeck` and `taskdeck__proj` both fit `mcp__taskdeck__proj__write_file`: asked);
//! - every definition of that name is a Streamable HTTP one whose URL is
//!   `http://127.0.0.1:PORT/mcp` or `/mcp/SERVER` on this Taskdeck's port, the same each time
//!   ([`OwnServers::taskdeck_url_path`]; Taskdeck listens on 127.0.0.1 only, so `localhost` and
//!   `[::1]` could be another program). A stdio definition never is, whatever else it holds:
//!   its calls go to the program it starts, which a project's file could make anything;
//! - no file in sight is unreadable or malformed (it could hold another definition), or other
//!   than a regular file (a FIFO or a device would block the read: never opened as one);
//! - the rest of the name is a tool that Taskdeck serves there ([`OwnTool`], checked by the
//!   caller).
//!
//! Files are read again when their size, modification or change time differs.

use std::{
    collections::{BTreeSet, HashMap, VecDeque},
    path::{Path, PathBuf},
    sync::{Arc, Mutex},
    time::SystemTime,
};

use serde_json::Value;

/// For how many started-in dirs definitions are remembered (the oldest are forgotten first).
const DIRS_KEPT: usize = 512;

/// A tool of this Taskdeck as an agent's tool name names it: the part of the Taskdeck URL
/// after `/mcp` (`None` for `/mcp`, `Some("fs")` for `/mcp/fs`) and the tool's name there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwnTool {
    /// The endpoint's path after `/mcp/` (`None`: `/mcp` itself).
    pub server_path: Option<String>,
    /// The tool's name on that endpoint.
    pub tool: String,
}

/// One server definition in an agent's configuration: the server's name, and where it leads:
/// `Some(path)` for this Taskdeck's endpoint (`path` as [`OwnTool::server_path`]), `None` for
/// anything else (a program, another URL, a server turned off).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Definition {
    /// The server's name in the agent's configuration.
    pub name: String,
    /// `Some(path)`: this Taskdeck's endpoint; `None`: anything else.
    pub taskdeck_path: Option<Option<String>>,
}

/// What `taskdeck hook` found in the agent's environment and sends along with the event
/// (request headers [`crate::adapters::hooks_api::CLAUDE_CONFIG_HEADER`],
/// [`crate::adapters::hooks_api::CLAUDE_PROJECT_HEADER`],
/// [`crate::adapters::hooks_api::CODEX_HOME_HEADER`]). Paths are absolute.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AgentEnv {
    /// Claude's `.claude.json`: `$CLAUDE_CONFIG_DIR/.claude.json`, else the home dir's.
    /// `None`: this process's own view ([`super::claude_servers::default_user_file`]).
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
                claude_config: super::claude_servers::default_user_file()
                    .filter(|p| p.is_absolute()),
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

/// A file as [`OwnServers::read_as`] found it.
#[derive(Debug, PartialEq)]
pub enum FileState {
    /// No such file, or an empty one.
    Missing,
    /// There, but unreadable or not what it should be (not JSON, not TOML).
    Unreadable,
    /// Parsed.
    Read(Value),
}

/// A file as last read: its size, modification and change times, and what it held.
struct Cached {
    stamp: Option<(u64, Option<SystemTime>, i64)>,
    state: Arc<FileState>,
}

/// The definitions seen for each started-in dir, kept from event to event.
#[derive(Default)]
struct Seen {
    by_dir: HashMap<String, BTreeSet<Definition>>,
    order: VecDeque<String>,
}

/// The lookup for the Taskdeck listening on a port: the files it read, kept by path, and the
/// definitions seen for each started-in dir so far.
pub struct OwnServers {
    port: u16,
    files: Mutex<HashMap<PathBuf, Cached>>,
    seen: Mutex<Seen>,
}

impl OwnServers {
    /// The lookup for the Taskdeck listening on `port`.
    pub fn new(port: u16) -> OwnServers {
        OwnServers {
            port,
            files: Mutex::new(HashMap::new()),
            seen: Mutex::new(Seen::default()),
        }
    }

    /// The Taskdeck tool `rest` (a tool name after `mcp__`) calls, given every definition the
    /// session sees and saw ([`OwnServers::remember`]; `None`: a file in sight could not be
    /// read). `fits(rest, name)` is the rest of the tool's name when the agent's name for
    /// server `name` starts it. `None` unless the module comment's rules hold.
    pub fn decide(
        rest: &str,
        definitions: Option<&BTreeSet<Definition>>,
        fits: impl Fn(&str, &str) -> Option<String>,
    ) -> Option<OwnTool> {
        let definitions = definitions?;
        let fitting: BTreeSet<&str> = definitions
            .iter()
            .filter(|d| fits(rest, &d.name).is_some())
            .map(|d| d.name.as_str())
            .collect();
        let [name] = fitting.into_iter().collect::<Vec<_>>()[..] else {
            return None;
        };
        let tool = fits(rest, name)?;
        let mut paths = definitions
            .iter()
            .filter(|d| d.name == name)
            .map(|d| d.taskdeck_path.clone());
        let first = paths.next()??;
        paths
            .all(|p| p.as_ref() == Some(&first))
            .then_some(OwnTool {
                server_path: first,
                tool,
            })
    }

    /// Adds `definitions` to those seen before under `started_in` (none for an empty key) and
    /// returns them all. They are kept while Taskdeck runs: a restart forgets them.
    pub fn remember(&self, started_in: &str, definitions: Vec<Definition>) -> BTreeSet<Definition> {
        if started_in.is_empty() {
            return definitions.into_iter().collect();
        }
        let mut seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
        if !seen.by_dir.contains_key(started_in) {
            if seen.order.len() >= DIRS_KEPT
                && let Some(oldest) = seen.order.pop_front()
            {
                seen.by_dir.remove(&oldest);
            }
            seen.order.push_back(started_in.to_string());
        }
        let all = seen.by_dir.entry(started_in.to_string()).or_default();
        all.extend(definitions);
        all.clone()
    }

    /// For a URL of this Taskdeck's endpoint, `http://127.0.0.1:PORT/mcp` or
    /// `http://127.0.0.1:PORT/mcp/SERVER`: `Some(None)` for `/mcp`, `Some(Some(server))` for
    /// `/mcp/server`; `None` for any other URL.
    pub fn taskdeck_url_path(&self, url: &str) -> Option<Option<String>> {
        let url = reqwest::Url::parse(url).ok()?;
        let ours = url.scheme() == "http"
            && url.host_str() == Some("127.0.0.1")
            && url.port() == Some(self.port)
            && url.username().is_empty()
            && url.password().is_none();
        if !ours {
            return None;
        }
        match url.path() {
            "/mcp" | "/mcp/" => Some(None),
            path => {
                let server = path.strip_prefix("/mcp/")?.trim_end_matches('/');
                (!server.is_empty() && !server.contains('/')).then(|| Some(server.to_string()))
            }
        }
    }

    /// `path` as `parse` makes it into JSON, read again when its size, modification or change
    /// time changed. One path, one `parse`. Only a regular file is read (opened without
    /// blocking, so a FIFO put in its place cannot hang the reader); anything else there is
    /// [`FileState::Unreadable`], and an empty file is [`FileState::Missing`] (it names
    /// nothing, whatever reads it).
    pub fn read_as(&self, path: &Path, parse: fn(&[u8]) -> Option<Value>) -> Arc<FileState> {
        let metadata = std::fs::metadata(path);
        let stamp = metadata.as_ref().ok().map(|m| {
            #[cfg(unix)]
            let changed = std::os::unix::fs::MetadataExt::ctime_nsec(m)
                + std::os::unix::fs::MetadataExt::ctime(m) * 1_000_000_000;
            #[cfg(not(unix))]
            let changed = 0;
            (m.len(), m.modified().ok(), changed)
        });
        {
            let files = self.files.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(cached) = files.get(path)
                && cached.stamp == stamp
            {
                return cached.state.clone();
            }
        }
        let state = match metadata {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => FileState::Missing,
            Err(_) => FileState::Unreadable,
            Ok(m) if !m.is_file() => FileState::Unreadable,
            Ok(_) => match read_regular(path) {
                Some(bytes) if bytes.iter().all(u8::is_ascii_whitespace) => FileState::Missing,
                Some(bytes) => parse(&bytes).map_or(FileState::Unreadable, FileState::Read),
                None => FileState::Unreadable,
            },
        };
        let state = Arc::new(state);
        let mut files = self.files.lock().unwrap_or_else(|p| p.into_inner());
        files.insert(
            path.to_path_buf(),
            Cached {
                stamp,
                state: state.clone(),
            },
        );
        state
    }
}

/// The bytes of `path` when it is a regular file, opened without blocking (a FIFO swapped in
/// after a check would otherwise wait for a writer).
pub(super) fn read_regular(path: &Path) -> Option<Vec<u8>> {
    use std::io::Read;
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NONBLOCK);
    let mut file = options.open(path).ok()?;
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes).ok()?;
    Some(bytes)
}

/// `Some` tool `tool` at `server_path`: what the lookups' tests expect of a tool of Taskdeck.
#[cfg(test)]
pub(super) fn own_tool(tool: &str, server_path: Option<&str>) -> Option<OwnTool> {
    Some(OwnTool {
        server_path: server_path.map(String::from),
        tool: tool.into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn def(name: &str, path: Option<Option<&str>>) -> Definition {
        Definition {
            name: name.into(),
            taskdeck_path: path.map(|p| p.map(String::from)),
        }
    }

    fn prefix(rest: &str, name: &str) -> Option<String> {
        Some(rest.strip_prefix(name)?.strip_prefix("__")?.to_string())
    }

    #[test]
    fn every_definition_of_the_name_must_be_this_taskdeck() {
        let lookup = OwnServers::new(4747);
        let decide = |defs: Vec<Definition>, started_in: &str| {
            let seen = lookup.remember(started_in, defs);
            OwnServers::decide("taskdeck__run_command", Some(&seen), prefix)
        };
        let ours = def("taskdeck", Some(None));
        let own = Some(OwnTool {
            server_path: None,
            tool: "run_command".into(),
        });
        assert_eq!(decide(vec![ours.clone()], ""), own);
        assert_eq!(decide(vec![ours.clone(), def("other", None)], ""), own);
        // Another definition of the name, wherever it is: asked.
        assert_eq!(decide(vec![ours.clone(), def("taskdeck", None)], ""), None);
        assert_eq!(
            decide(vec![ours.clone(), def("taskdeck", Some(Some("fs")))], ""),
            None
        );
        // Two names that fit.
        let two = |defs: Vec<Definition>| {
            let seen = defs.into_iter().collect();
            OwnServers::decide("taskdeck__proj__write", Some(&seen), prefix)
        };
        assert_eq!(two(vec![ours.clone()]).unwrap().tool, "proj__write");
        assert_eq!(
            two(vec![ours.clone(), def("taskdeck__proj", Some(None))]),
            None
        );
        assert_eq!(decide(vec![], ""), None);
        assert_eq!(
            OwnServers::decide("taskdeck__run_command", None, prefix),
            None
        );
        // What was seen before for the same started-in dir still counts.
        assert_eq!(decide(vec![def("taskdeck", None)], "claude-code:/p"), None);
        assert_eq!(decide(vec![ours.clone()], "claude-code:/p"), None);
        assert_eq!(decide(vec![ours.clone()], "claude-code:/q"), own);
    }

    #[test]
    fn only_this_taskdecks_own_address_is_taskdeck() {
        let lookup = OwnServers::new(4747);
        let path = |url: &str| lookup.taskdeck_url_path(url);
        assert_eq!(path("http://127.0.0.1:4747/mcp"), Some(None));
        assert_eq!(path("http://127.0.0.1:4747/mcp/"), Some(None));
        assert_eq!(
            path("http://127.0.0.1:4747/mcp/fs/"),
            Some(Some("fs".into()))
        );
        for other in [
            "http://localhost:4747/mcp",
            "http://[::1]:4747/mcp",
            "https://127.0.0.1:4747/mcp",
            "http://127.0.0.1:4748/mcp",
            "http://127.0.0.1/mcp",
            "http://127.0.0.2:4747/mcp",
            "http://x@127.0.0.1:4747/mcp",
            "http://127.0.0.1:4747/other",
            "http://127.0.0.1:4747/mcpx",
            "http://127.0.0.1:4747/mcp/a/b",
            "not a url",
        ] {
            assert_eq!(path(other), None, "{other}");
        }
    }

    #[test]
    fn a_file_is_missing_unreadable_or_read_and_read_again_when_changed() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("f.json");
        let lookup = OwnServers::new(4747);
        let json = |b: &[u8]| serde_json::from_slice(b).ok();
        assert_eq!(*lookup.read_as(&file, json), FileState::Missing);
        std::fs::write(&file, "{\"a\": 1}").unwrap();
        assert_eq!(
            *lookup.read_as(&file, json),
            FileState::Read(serde_json::json!({"a": 1}))
        );
        std::fs::write(&file, "{ not json").unwrap();
        assert_eq!(*lookup.read_as(&file, json), FileState::Unreadable);
        std::fs::write(&file, " \n").unwrap();
        assert_eq!(*lookup.read_as(&file, json), FileState::Missing);
        assert_eq!(*lookup.read_as(tmp.path(), json), FileState::Unreadable);
        // A FIFO (or a link to one) is never opened: no writer would ever come.
        let fifo = tmp.path().join("fifo");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        let link = tmp.path().join("link.json");
        std::os::unix::fs::symlink(&fifo, &link).unwrap();
        assert_eq!(*lookup.read_as(&fifo, json), FileState::Unreadable);
        assert_eq!(*lookup.read_as(&link, json), FileState::Unreadable);
        assert_eq!(
            *lookup.read_as(Path::new("/dev/null"), json),
            FileState::Unreadable
        );
    }
}
