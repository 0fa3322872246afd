//! Which of Claude Code's MCP servers are this Taskdeck. A `PermissionRequest` for a tool of
//! such a server (`mcp__taskdeck__run_command`, `mcp__taskdeck__fs__write_file`) is allowed by
//! the hook without a question: the call comes to Taskdeck, whose own approval step (the
//! gateway's policy, `run_command`'s) decides it there. Asking in the hook too would put every
//! such call in the inbox twice.
//!
//! Claude Code's configuration (<https://code.claude.com/docs/en/mcp>, "MCP installation
//! scopes"): a server name is looked up in the local scope (`~/.claude.json`,
//! `projects.<project dir>.mcpServers`), then the project scope (`.mcp.json` in the project
//! dir), then the user scope (`~/.claude.json`, top-level `mcpServers`); the first scope that
//! names it decides. A server is this Taskdeck when its entry's `url` is a loopback `/mcp` URL
//! of this Taskdeck's port ([`is_taskdeck_url`]). A stdio entry never is, even one whose
//! arguments hold such a URL (an `mcp-remote` bridge): its calls go to the program it starts,
//! which a project's `.mcp.json` could make anything. The project dir is the
//! event's `cwd` or the nearest of its parents that has an entry. Files are read again only
//! when their size or modification time changes.

use std::{
    collections::HashMap,
    path::{Path, PathBuf},
    sync::{Arc, Mutex},
    time::SystemTime,
};

use serde_json::Value;

use crate::gateway::import::is_taskdeck_url;

/// The lookup of [`OwnServers::is_taskdeck`], with the files it read kept by path.
pub struct OwnServers {
    port: u16,
    /// `~/.claude.json`; `None` when there is no home dir.
    user_file: Option<PathBuf>,
    files: Mutex<HashMap<PathBuf, Read>>,
}

/// A file as last read: its size and modification time, and its JSON (`Null` when it is
/// missing or not JSON).
struct Read {
    stamp: Option<(u64, SystemTime)>,
    json: Arc<Value>,
}

impl OwnServers {
    /// The lookup for the Taskdeck listening on `port`, reading Claude Code's files under the
    /// home dir (`$HOME`).
    pub fn new(port: u16) -> OwnServers {
        let user_file = directories::BaseDirs::new().map(|d| d.home_dir().join(".claude.json"));
        OwnServers {
            port,
            user_file,
            files: Mutex::new(HashMap::new()),
        }
    }

    /// True when Claude Code's MCP server `server`, in a session whose working directory is
    /// `cwd` (absolute; `None`: the user scope only), reaches this Taskdeck. A file that cannot
    /// be read or parsed names no server.
    pub fn is_taskdeck(&self, server: &str, cwd: Option<&str>) -> bool {
        let dirs: Vec<&Path> = cwd
            .map(Path::new)
            .filter(|p| p.is_absolute())
            .map(|p| p.ancestors().collect())
            .unwrap_or_default();
        let user = self.user_file.as_deref().map(|f| self.read(f));
        let named = |servers: Option<&Value>| servers.and_then(|s| s.get(server)).cloned();
        let ours = |entry: &Value| {
            let url = entry.get("url").and_then(Value::as_str);
            url.is_some_and(|u| is_taskdeck_url(u, self.port))
        };
        // Local scope: this project's entry in ~/.claude.json.
        if let Some(user) = &user {
            let projects = user.get("projects");
            for dir in &dirs {
                let project = projects.and_then(|p| p.get(dir.to_string_lossy().as_ref()));
                if let Some(entry) = named(project.and_then(|p| p.get("mcpServers"))) {
                    return ours(&entry);
                }
            }
        }
        // Project scope: the nearest .mcp.json that names it.
        for dir in &dirs {
            let file = self.read(&dir.join(".mcp.json"));
            if let Some(entry) = named(file.get("mcpServers")) {
                return ours(&entry);
            }
        }
        // User scope.
        user.and_then(|u| named(u.get("mcpServers")))
            .is_some_and(|entry| ours(&entry))
    }

    /// `path`'s JSON, read again when its size or modification time changed.
    fn read(&self, path: &Path) -> Arc<Value> {
        let stamp = std::fs::metadata(path)
            .ok()
            .and_then(|m| Some((m.len(), m.modified().ok()?)));
        let mut files = self.files.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(read) = files.get(path)
            && read.stamp == stamp
        {
            return read.json.clone();
        }
        let json = stamp
            .and_then(|_| std::fs::read(path).ok())
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
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

    fn lookup(home: &Path, port: u16) -> OwnServers {
        OwnServers {
            port,
            user_file: Some(home.join(".claude.json")),
            files: Mutex::new(HashMap::new()),
        }
    }

    fn write(path: &Path, v: &Value) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, v.to_string()).unwrap();
    }

    #[test]
    fn the_first_scope_that_names_a_server_decides() {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("home");
        let project = tmp.path().join("app");
        let ours = json!({"type": "http", "url": "http://127.0.0.1:4747/mcp"});
        let other = json!({"type": "http", "url": "http://127.0.0.1:9000/mcp"});
        write(
            &home.join(".claude.json"),
            &json!({
                "mcpServers": {"taskdeck": ours, "deck": ours, "elsewhere": other},
                "projects": {project.to_str().unwrap(): {"mcpServers": {"deck": other}}}
            }),
        );
        write(
            &project.join(".mcp.json"),
            &json!({"mcpServers": {"taskdeck": other, "shared": ours, "bridge": {
                "command": "npx", "args": ["mcp-remote", "http://127.0.0.1:4747/mcp"]}}}),
        );
        let own = lookup(&home, 4747);
        let sub = project.join("src");
        let in_project = Some(sub.to_str().unwrap());
        // The project's .mcp.json names `taskdeck` another server: it wins over the user's.
        assert!(!own.is_taskdeck("taskdeck", in_project));
        assert!(own.is_taskdeck("taskdeck", Some("/somewhere/else")));
        assert!(own.is_taskdeck("taskdeck", None));
        // The local scope wins over the user's.
        assert!(!own.is_taskdeck("deck", in_project));
        assert!(own.is_taskdeck("deck", None));
        assert!(own.is_taskdeck("shared", in_project));
        assert!(!own.is_taskdeck("elsewhere", in_project));
        // A stdio program is what it starts, whatever its arguments say.
        assert!(!own.is_taskdeck("bridge", in_project));
        assert!(!own.is_taskdeck("unknown", in_project));
        // Another Taskdeck's port is not this one.
        assert!(!lookup(&home, 4748).is_taskdeck("taskdeck", None));
        // A relative cwd is not looked up.
        assert!(own.is_taskdeck("taskdeck", Some("app")));
    }

    #[test]
    fn a_changed_file_is_read_again_and_a_broken_one_names_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join(".claude.json");
        let own = lookup(tmp.path(), 4747);
        assert!(!own.is_taskdeck("taskdeck", None), "no file");
        write(
            &file,
            &json!({"mcpServers": {"taskdeck": {"url": "http://localhost:4747/mcp"}}}),
        );
        assert!(own.is_taskdeck("taskdeck", None));
        std::fs::write(&file, "{ not json").unwrap();
        assert!(!own.is_taskdeck("taskdeck", None));
    }
}
