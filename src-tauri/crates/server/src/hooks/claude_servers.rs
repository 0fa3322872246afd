//! Which of Claude Code's MCP tools are this Taskdeck's: Claude Code's side of
//! [`super::own_server`], whose rules decide.
//!
//! Claude Code's configuration (<https://code.claude.com/docs/en/mcp>, "MCP installation
//! scopes"): servers are named in the local scope (`.claude.json`,
//! `projects.<project dir>.mcpServers`, the project dir being a git checkout's main worktree),
//! the project scope (`.mcp.json` in the project dir) and the user scope (`.claude.json`,
//! top-level `mcpServers`), and by an administrator in `/etc/claude-code/managed-mcp.json`.
//! `.claude.json` is in `$CLAUDE_CONFIG_DIR`, else the home dir, as the hook found them in
//! Claude Code's environment; older versions read `.config.json` in that dir (or in
//! `~/.claude`) instead, and it is read too. Claude names a tool `mcp__<server>__<tool>`, the server's name with every
//! UTF-16 code unit but ASCII letters, digits, `_` and `-` as `_` (a JavaScript replace: an
//! emoji is two).
//!
//! The definitions in sight are those of every scope, for the dir Claude Code was started in
//! (`$CLAUDE_PROJECT_DIR`, which Claude sets for hooks) and the event's `cwd` (a session that
//! `cd`s away keeps its servers), each as given, with symlinks resolved and, in a git worktree
//! or submodule, with its git dir and main worktree, and for their parents: a local-scope
//! entry of any of those dirs, and an `.mcp.json` in any of them.
//! Without `$CLAUDE_PROJECT_DIR` the project cannot be told (two dirs can share a transcript
//! dir's name), and the prompt is asked.

use std::{
    collections::HashMap,
    path::{Path, PathBuf},
};

use serde_json::{Map, Value, value::RawValue};

use super::own_server::{Definition, FileState, OwnServers, read_regular};

/// The file in which an administrator defines Claude Code's servers (Linux).
const MANAGED_MCP: &str = "/etc/claude-code/managed-mcp.json";

/// `.claude.json` when the hook does not say where it is: `$CLAUDE_CONFIG_DIR`'s, else the
/// home dir's, as this process sees them.
pub fn default_user_file() -> Option<PathBuf> {
    match std::env::var_os("CLAUDE_CONFIG_DIR") {
        Some(dir) if !dir.is_empty() => Some(PathBuf::from(dir).join(".claude.json")),
        _ => directories::BaseDirs::new().map(|d| d.home_dir().join(".claude.json")),
    }
}

/// Claude Code's name for server `name` in tool names: every UTF-16 code unit other than ASCII
/// letters, digits, `_` and `-` as `_`.
fn tool_prefix_name(name: &str) -> String {
    name.chars()
        .flat_map(|c| match c {
            c if c.is_ascii_alphanumeric() || c == '_' || c == '-' => vec![c],
            c => vec!['_'; c.len_utf16()],
        })
        .collect()
}

/// The rest of the tool name `rest` (after `mcp__`) when Claude's name for server `name`
/// starts it.
pub fn fits(rest: &str, name: &str) -> Option<String> {
    let tool = rest
        .strip_prefix(&tool_prefix_name(name))?
        .strip_prefix("__")?;
    (!tool.is_empty()).then(|| tool.to_string())
}

/// The dirs whose servers a Claude Code session started in `project_dir` and now in `cwd`
/// may use: both (absolute), as given and with symlinks resolved; `None` without an absolute
/// `project_dir` (see the module comment). A relative or missing `cwd` adds nothing.
pub fn session_dirs(cwd: Option<&str>, project_dir: Option<&Path>) -> Option<Vec<PathBuf>> {
    let project = project_dir.filter(|p| p.is_absolute())?;
    let mut dirs = vec![project.to_path_buf()];
    dirs.extend(cwd.map(PathBuf::from).filter(|c| c.is_absolute()));
    let resolved: Vec<PathBuf> = dirs.iter().filter_map(|d| d.canonicalize().ok()).collect();
    dirs.extend(resolved);
    let git: Vec<PathBuf> = dirs.iter().flat_map(|d| git_dirs(d)).collect();
    dirs.extend(git);
    let mut unique = Vec::new();
    for dir in dirs {
        if !unique.contains(&dir) {
            unique.push(dir);
        }
    }
    Some(unique)
}

/// For a dir inside a git worktree or submodule (its nearest `.git` is a file naming the git
/// dir, `gitdir: PATH`): that git dir, and for a worktree the repository's common git dir and
/// its main worktree (the common dir's parent), where Claude Code keys the local scope.
fn git_dirs(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for at in dir.ancestors() {
        let dot_git = at.join(".git");
        let Ok(meta) = std::fs::symlink_metadata(&dot_git) else {
            continue;
        };
        if !meta.is_file() {
            break;
        }
        let text = |p: &Path| {
            let bytes = read_regular(p).filter(|b| b.len() <= 4096)?;
            String::from_utf8(bytes).ok()
        };
        let Some(git_dir) = text(&dot_git)
            .as_deref()
            .and_then(|t| t.trim().strip_prefix("gitdir:"))
            .map(|p| at.join(p.trim()))
        else {
            break;
        };
        if let Some(common) = text(&git_dir.join("commondir")) {
            let common = git_dir.join(common.trim());
            let common = common.canonicalize().unwrap_or(common);
            found.extend(common.parent().map(Path::to_path_buf));
            found.push(common);
        }
        found.push(git_dir.canonicalize().unwrap_or(git_dir));
        break;
    }
    found
}

/// A JSON file's bytes (a leading byte-order mark allowed).
fn json(bytes: &[u8]) -> Option<Value> {
    serde_json::from_slice(without_bom(bytes)).ok()
}

fn without_bom(bytes: &[u8]) -> &[u8] {
    bytes.strip_prefix("\u{feff}".as_bytes()).unwrap_or(bytes)
}

/// The members of a JSON object, their values unparsed; `None` when `raw` is not an object.
/// A repeated key keeps its last value, as a parse into [`Value`] does.
fn members(raw: &str) -> Option<HashMap<String, &RawValue>> {
    serde_json::from_str(raw).ok()
}

/// A `.claude.json`'s bytes reduced to what names servers, in the file's own shape:
/// `{"mcpServers": …, "projects": {"<dir>": {"mcpServers": …}}}` with what the file has of
/// them (a `projects` or a project that is not an object names nothing, as in
/// [`OwnServers::claude_definitions`]). The rest of the file, often a megabyte of history that
/// Claude Code rewrites during a session, is checked to be JSON but not built, so a rewritten
/// file costs the next hook event little (BENCHMARKS.md, "Hooks"). `None` when it is not JSON.
fn user_json(bytes: &[u8]) -> Option<Value> {
    let text = std::str::from_utf8(without_bom(bytes)).ok()?;
    let Some(top) = members(text) else {
        // JSON that is not an object names no server.
        return serde_json::from_str::<serde::de::IgnoredAny>(text)
            .ok()
            .map(|_| Value::Object(Map::new()));
    };
    let mut reduced = Map::new();
    if let Some(servers) = top.get("mcpServers") {
        reduced.insert(
            "mcpServers".into(),
            serde_json::from_str(servers.get()).ok()?,
        );
    }
    if let Some(projects) = top.get("projects").and_then(|p| members(p.get())) {
        let mut kept = Map::new();
        for (dir, project) in projects {
            if let Some(servers) = members(project.get()).and_then(|p| p.get("mcpServers").copied())
            {
                let servers: Value = serde_json::from_str(servers.get()).ok()?;
                kept.insert(dir, serde_json::json!({ "mcpServers": servers }));
            }
        }
        reduced.insert("projects".into(), Value::Object(kept));
    }
    Some(Value::Object(reduced))
}

impl OwnServers {
    /// Every server definition a Claude Code session sees from `dirs` ([`session_dirs`]) with
    /// `.claude.json` at `user_file`; `None` when a file in sight is there but cannot be read
    /// as JSON.
    pub fn claude_definitions(
        &self,
        dirs: &[PathBuf],
        user_file: Option<&Path>,
    ) -> Option<Vec<Definition>> {
        let mut in_sight: Vec<Value> = Vec::new();
        let dirs: Vec<&Path> = dirs.iter().flat_map(|d| d.ancestors()).collect();
        let mut config_files: Vec<PathBuf> = Vec::new();
        if let Some(file) = user_file {
            config_files.push(file.to_path_buf());
            if let Some(dir) = file.parent() {
                config_files.push(dir.join(".config.json"));
                config_files.push(dir.join(".claude").join(".config.json"));
            }
        }
        for file in &config_files {
            match &*self.read_as(file, user_json) {
                FileState::Missing => {}
                FileState::Unreadable => return None,
                FileState::Read(user) => {
                    in_sight.extend(user.get("mcpServers").cloned());
                    // Local scope: the entries of these dirs, however the key ends.
                    let projects = user.get("projects").and_then(Value::as_object);
                    for (key, project) in projects.into_iter().flatten() {
                        let key = Path::new(key.trim_end_matches('/'));
                        let key = if key.as_os_str().is_empty() {
                            Path::new("/")
                        } else {
                            key
                        };
                        if dirs.contains(&key) {
                            in_sight.extend(project.get("mcpServers").cloned());
                        }
                    }
                }
            }
        }
        let managed = [PathBuf::from(MANAGED_MCP)];
        let project_files = dirs.iter().map(|d| d.join(".mcp.json"));
        for file in managed.into_iter().chain(project_files) {
            match &*self.read_as(&file, json) {
                FileState::Missing => {}
                FileState::Unreadable => return None,
                FileState::Read(file) => in_sight.extend(file.get("mcpServers").cloned()),
            }
        }
        let mut definitions = Vec::new();
        for servers in &in_sight {
            // `mcpServers` that is not an object: Claude could not read it either, but it is
            // not a definition Taskdeck can vouch for.
            let servers = servers.as_object()?;
            for (name, entry) in servers {
                definitions.push(Definition {
                    name: name.clone(),
                    taskdeck_path: self.http_entry_path(entry),
                });
            }
        }
        Some(definitions)
    }

    /// For a Streamable HTTP entry (no `command`; `type` absent, `http` or `streamable-http`)
    /// reaching this Taskdeck: its path ([`OwnServers::taskdeck_url_path`]); `None` otherwise.
    fn http_entry_path(&self, entry: &Value) -> Option<Option<String>> {
        let entry = entry.as_object()?;
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hooks::own_server::{OwnTool, own_tool as own};
    use serde_json::json;

    /// `user_json` keeps of a `.claude.json` what the whole parse gives the lookup: the
    /// top-level `mcpServers` and each object project's, whatever else the file holds.
    #[test]
    fn a_user_file_is_read_for_its_servers_only() {
        let reduce = |whole: &Value| {
            let mut out = Map::new();
            if let Some(s) = whole.get("mcpServers") {
                out.insert("mcpServers".into(), s.clone());
            }
            if let Some(projects) = whole.get("projects").and_then(Value::as_object) {
                let kept = projects
                    .iter()
                    .filter_map(|(dir, p)| {
                        let servers = p.get("mcpServers")?.clone();
                        Some((dir.clone(), json!({ "mcpServers": servers })))
                    })
                    .collect();
                out.insert("projects".into(), Value::Object(kept));
            }
            Value::Object(out)
        };
        let files = [
            r#"{"numStartups": 3, "mcpServers": {"taskdeck": {"url": "http://127.0.0.1:1/mcp"}},
                "projects": {"/a": {"history": [{"display": "x"}], "mcpServers": {"s": {"command": "c"}}},
                             "/b": {"allowedTools": []}, "/c": 7, "/d\u00e9/": {"mcpServers": []},
                             "/a": {"mcpServers": {"t": {"command": "again"}}}}}"#,
            "\u{feff}{\"projects\": null, \"mcpServers\": null}",
            r#"{"projects": [1, 2], "other": {"mcpServers": {"x": {}}}}"#,
            r#"{"mcpServers": {"a": 1}, "mcpServers": {"b": 2}}"#,
            "[1, 2]",
            "\"text\"",
            "{}",
        ];
        for file in files {
            let whole = json(file.as_bytes()).unwrap();
            assert_eq!(user_json(file.as_bytes()), Some(reduce(&whole)), "{file}");
        }
        for broken in [
            r#"{"projects": {"/a": {}}"#,
            "{} {}",
            r#"{"a": nul}"#,
            "\u{feff}",
            "",
        ] {
            assert_eq!(user_json(broken.as_bytes()), None, "{broken}");
        }
    }

    fn write(path: &Path, v: &Value) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, v.to_string()).unwrap();
    }

    /// The Taskdeck tool `tool_name` calls, seen from `dirs` with `.claude.json` at
    /// `user_file`, outside any session.
    fn claude_tool(
        lookup: &OwnServers,
        tool_name: &str,
        dirs: &[PathBuf],
        user_file: Option<&Path>,
    ) -> Option<OwnTool> {
        let rest = tool_name.strip_prefix("mcp__")?;
        let seen = lookup
            .claude_definitions(dirs, user_file)?
            .into_iter()
            .collect();
        OwnServers::decide(rest, Some(&seen), fits)
    }

    #[test]
    fn any_scope_naming_the_server_otherwise_is_asked() {
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
                    "files": {"url": "http://127.0.0.1:4747/mcp/fs/"}},
                "projects": {
                    format!("{}/", project.display()): {"mcpServers": {"deck": other}},
                    home.to_str().unwrap(): {"mcpServers": {"parent": ours}},
                }
            }),
        );
        write(
            &project.join(".mcp.json"),
            &json!({"mcpServers": {"taskdeck": other, "shared": ours}}),
        );
        let lookup = OwnServers::new(4747);
        let user = Some(user_file.as_path());
        let in_project = session_dirs(project.join("src").to_str(), Some(&project)).unwrap();
        let elsewhere = tmp.path().join("elsewhere");
        let outside = session_dirs(None, Some(&elsewhere)).unwrap();
        let is = |tool: &str, dirs: &[PathBuf]| claude_tool(&lookup, tool, dirs, user);
        // The project's .mcp.json names `taskdeck` another server: asked there only.
        assert_eq!(is("mcp__taskdeck__run_command", &in_project), None);
        assert_eq!(
            is("mcp__taskdeck__run_command", &outside),
            own("run_command", None)
        );
        // A local-scope entry (its key with a trailing `/`) names `deck` another server.
        assert_eq!(is("mcp__deck__run_command", &in_project), None);
        assert_eq!(
            is("mcp__deck__run_command", &outside),
            own("run_command", None)
        );
        assert_eq!(
            is("mcp__shared__task_status", &in_project),
            own("task_status", None)
        );
        assert_eq!(
            is("mcp__files__write_file", &outside),
            own("write_file", Some("fs"))
        );
        assert_eq!(is("mcp__elsewhere__run_command", &in_project), None);
        assert_eq!(is("mcp__unknown__run_command", &in_project), None);
        assert_eq!(is("Bash", &outside), None);
        // A started-in dir must be known.
        assert_eq!(session_dirs(Some("/x"), None), None);
        assert_eq!(session_dirs(Some("/x"), Some(Path::new("rel"))), None);
        // Another Taskdeck's port is not this one.
        assert_eq!(
            claude_tool(
                &OwnServers::new(4748),
                "mcp__taskdeck__run_command",
                &outside,
                user
            ),
            None
        );
    }

    #[test]
    fn a_session_sees_where_it_started_and_where_it_is_through_symlinks_too() {
        let tmp = tempfile::tempdir().unwrap();
        let user_file = tmp.path().join(".claude.json");
        let ours = json!({"type": "http", "url": "http://127.0.0.1:4747/mcp"});
        let project = tmp.path().join("shop");
        write(
            &user_file,
            &json!({"mcpServers": {"taskdeck": ours},
                "projects": {project.to_str().unwrap(): {"mcpServers": {"taskdeck": {"command": "x"}}}}}),
        );
        write(
            &project.join(".mcp.json"),
            &json!({"mcpServers": {"taskdeck": {"command": "evil"}}}),
        );
        let elsewhere = tmp.path().join("elsewhere");
        std::fs::create_dir_all(&elsewhere).unwrap();
        let link = tmp.path().join("link");
        std::os::unix::fs::symlink(&project, &link).unwrap();
        let lookup = OwnServers::new(4747);
        let is = |cwd: &Path, started: &Path| {
            let dirs = session_dirs(cwd.to_str(), Some(started)).unwrap();
            claude_tool(
                &lookup,
                "mcp__taskdeck__run_command",
                &dirs,
                Some(&user_file),
            )
        };
        assert_eq!(is(&elsewhere, &elsewhere), own("run_command", None));
        // Started in the project, moved away (or back): Claude uses the project's `taskdeck`.
        assert_eq!(is(&elsewhere, &project), None);
        assert_eq!(is(&project, &elsewhere), None);
        // Through a symlink to the project, its local-scope entry (by its real path) counts.
        write(&project.join(".mcp.json"), &json!({"mcpServers": {}}));
        assert_eq!(is(&link, &link), None);
        assert_eq!(is(&elsewhere, &elsewhere), own("run_command", None));
    }

    #[test]
    fn a_worktrees_main_checkout_and_an_older_config_file_count() {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("home");
        let user_file = home.join(".claude.json");
        let ours = json!({"type": "http", "url": "http://127.0.0.1:4747/mcp"});
        // A checkout and a worktree of it, as `git worktree add ../wt` lays them out.
        let main = tmp.path().join("main");
        let wt = tmp.path().join("wt");
        let git_dir = main.join(".git/worktrees/wt");
        std::fs::create_dir_all(&git_dir).unwrap();
        std::fs::create_dir_all(&wt).unwrap();
        std::fs::write(wt.join(".git"), format!("gitdir: {}\n", git_dir.display())).unwrap();
        std::fs::write(git_dir.join("commondir"), "../..\n").unwrap();
        write(
            &user_file,
            &json!({"mcpServers": {"taskdeck": ours},
                "projects": {main.to_str().unwrap(): {"mcpServers": {"taskdeck": {"command": "x"}}}}}),
        );
        let lookup = OwnServers::new(4747);
        let is = |dir: &Path| {
            let dirs = session_dirs(None, Some(dir)).unwrap();
            claude_tool(
                &lookup,
                "mcp__taskdeck__run_command",
                &dirs,
                Some(&user_file),
            )
        };
        let elsewhere = tmp.path().join("elsewhere");
        std::fs::create_dir_all(&elsewhere).unwrap();
        assert_eq!(is(&elsewhere), own("run_command", None));
        // The worktree's local scope is the main checkout's.
        assert_eq!(is(&wt), None);
        // `~/.claude/.config.json`, which older versions read instead of `.claude.json`.
        write(
            &home.join(".claude/.config.json"),
            &json!({"mcpServers": {"taskdeck": {"type": "http", "url": "https://x.example/mcp"}}}),
        );
        assert_eq!(is(&elsewhere), None);
    }

    #[test]
    fn names_claude_writes_alike_or_files_that_do_not_parse_are_asked() {
        let tmp = tempfile::tempdir().unwrap();
        let user_file = tmp.path().join(".claude.json");
        let url = "http://127.0.0.1:4747/mcp";
        write(
            &user_file,
            &json!({"mcpServers": {
                "taskdeck": {"type": "http", "url": url},
                "taskdeck__proj": {"command": "mcp-server-filesystem", "args": ["."]},
                "taskdeck😀self": {"command": "evil"},
                "decoy": {"type": "stdio", "command": "echo", "url": url},
                "untyped": {"command": "echo", "args": ["x"], "url": url},
                "bridge": {"command": "npx", "args": ["mcp-remote", url]},
                "old-sse": {"type": "sse", "url": url},
                "v6": {"type": "http", "url": "http://[::1]:4747/mcp"},
                "task.deck": {"type": "http", "url": url},
            }}),
        );
        let lookup = OwnServers::new(4747);
        let project = tmp.path().join("p");
        std::fs::create_dir_all(&project).unwrap();
        let dirs = session_dirs(None, Some(&project)).unwrap();
        let is = |tool: &str| claude_tool(&lookup, tool, &dirs, Some(&user_file));
        for tool in [
            "mcp__decoy__run_command",
            "mcp__untyped__run_command",
            "mcp__bridge__run_command",
            "mcp__old-sse__run_command",
            "mcp__v6__run_command",
            // `taskdeck` and `taskdeck__proj` both fit.
            "mcp__taskdeck__proj__write_file",
            // An emoji is two UTF-16 code units: `taskdeck__self`.
            "mcp__taskdeck__self__run_command",
        ] {
            assert_eq!(is(tool), None, "{tool}");
        }
        assert_eq!(is("mcp__taskdeck__run_command"), own("run_command", None));
        assert_eq!(is("mcp__task_deck__run_command"), own("run_command", None));
        // A project file that does not parse might name anything.
        std::fs::write(project.join(".mcp.json"), "{\"mcpServers\": {},}").unwrap();
        assert_eq!(is("mcp__taskdeck__run_command"), None);
        // A byte-order mark is read past.
        std::fs::write(project.join(".mcp.json"), "\u{feff}{\"mcpServers\": {}}").unwrap();
        assert_eq!(is("mcp__taskdeck__run_command"), own("run_command", None));
        std::fs::write(&user_file, "{ not json").unwrap();
        assert_eq!(is("mcp__taskdeck__run_command"), None);
    }
}
