//! Which of Codex's MCP tools are this Taskdeck's: the Codex side of [`super::own_server`]. A
//! `PermissionRequest` for one of them is allowed by the hook, because the call comes to
//! Taskdeck, whose own approval step decides it; asking in the hook too would ask twice.
//!
//! Codex (`openai/codex`, `codex-rs/config`): MCP servers are `[mcp_servers.NAME]` tables of
//! `config.toml` layers merged key by key: the system's `/etc/codex/config.toml` (and an
//! administrator's `/etc/codex/managed_config.toml`), the user's
//! `$CODEX_HOME/config.toml` (else `~/.codex`), a profile's `$CODEX_HOME/NAME.config.toml`,
//! and a trusted project's `.codex/config.toml` (in the session's `cwd` or a parent). A
//! Streamable HTTP server has a `url`; a stdio one a `command`. Codex names an MCP tool
//! `mcp__<server>__<tool>`, with every character of the server's name but ASCII letters, digits
//! and `_` as `_` (older versions also kept `-`), and adds a hash to a name that collides or
//! is over 64 bytes.
//!
//! The definitions in sight are every layer's ([`super::own_server`]'s rules decide): a
//! definition with a `command`, `enabled = false` or no table is not Taskdeck; one with a `url`
//! is Taskdeck when that is its endpoint; a layer that only tunes a server (its timeouts) adds
//! none. Which profile runs and `-c` overrides on Codex's command line cannot be seen.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use super::own_server::{Definition, FileState, OwnServers};

/// The system layer Codex reads on Unix, and the administrator's, which overrides the user's.
const SYSTEM_CONFIGS: [&str; 2] = ["/etc/codex/config.toml", "/etc/codex/managed_config.toml"];

/// `$CODEX_HOME`, else `~/.codex`, as this process sees them (the hook's environment is
/// Codex's own).
pub fn default_codex_home() -> Option<PathBuf> {
    match std::env::var_os("CODEX_HOME") {
        Some(dir) if !dir.is_empty() => Some(PathBuf::from(dir)),
        _ => directories::BaseDirs::new().map(|d| d.home_dir().join(".codex")),
    }
}

/// The rest of the tool name `rest` (after `mcp__`) when Codex's name for server `name` starts
/// it, followed by `__`.
pub fn fits(rest: &str, name: &str) -> Option<String> {
    let sanitized = |keep_dash: bool| -> String {
        name.chars()
            .map(|c| match c {
                c if c.is_ascii_alphanumeric() || c == '_' || (keep_dash && c == '-') => c,
                _ => '_',
            })
            .collect()
    };
    [false, true].into_iter().find_map(|keep_dash| {
        rest.strip_prefix(&sanitized(keep_dash))?
            .strip_prefix("__")
            .filter(|tool| !tool.is_empty())
            .map(str::to_string)
    })
}

/// A `config.toml`'s `mcp_servers`, as JSON: name → `{url?, enabled?, notHttp?}` (`notHttp`:
/// the entry has a `command`, or is not a table). `None` when the file is not TOML.
fn codex_servers(bytes: &[u8]) -> Option<Value> {
    let doc: toml_edit::DocumentMut = std::str::from_utf8(bytes).ok()?.parse().ok()?;
    let mut servers = Map::new();
    let tables = doc
        .get("mcp_servers")
        .and_then(toml_edit::Item::as_table_like);
    for (name, item) in tables.into_iter().flat_map(|t| t.iter()) {
        let entry = match item.as_table_like() {
            Some(t) => {
                let mut e = Map::new();
                if t.contains_key("command") {
                    e.insert("notHttp".into(), json!(true));
                }
                if let Some(url) = t.get("url") {
                    // A `url` that is not a string names no endpoint: never Taskdeck's.
                    e.insert("url".into(), json!(url.as_str().unwrap_or_default()));
                }
                if let Some(enabled) = t.get("enabled").and_then(toml_edit::Item::as_bool) {
                    e.insert("enabled".into(), json!(enabled));
                }
                e
            }
            None => Map::from_iter([("notHttp".to_string(), json!(true))]),
        };
        servers.insert(name.to_string(), Value::Object(entry));
    }
    Some(Value::Object(servers))
}

impl OwnServers {
    /// Every server definition a Codex session in `cwd` (absolute) sees with its configuration
    /// dir `codex_home`; `None` when a layer in sight is there but cannot be read as TOML.
    pub fn codex_definitions(&self, cwd: &Path, codex_home: &Path) -> Option<Vec<Definition>> {
        let mut files: Vec<PathBuf> = SYSTEM_CONFIGS.iter().map(PathBuf::from).collect();
        files.push(codex_home.join("config.toml"));
        if let Ok(dir) = std::fs::read_dir(codex_home) {
            let mut profiles: Vec<PathBuf> = dir
                .flatten()
                .map(|e| e.path())
                .filter(|p| {
                    p.file_name()
                        .and_then(|n| n.to_str())
                        .is_some_and(|n| n.ends_with(".config.toml"))
                })
                .collect();
            profiles.sort();
            files.extend(profiles);
        }
        files.extend(
            cwd.ancestors()
                .map(|d| d.join(".codex").join("config.toml")),
        );
        let mut definitions = Vec::new();
        for file in &files {
            let servers = match &*self.read_as(file, codex_servers) {
                FileState::Missing => continue,
                FileState::Unreadable => return None,
                FileState::Read(servers) => servers.as_object()?.clone(),
            };
            for (name, entry) in servers {
                let taskdeck_path = if entry.get("notHttp").is_some()
                    || entry.get("enabled") == Some(&json!(false))
                {
                    None
                } else if let Some(url) = entry.get("url").and_then(Value::as_str) {
                    self.taskdeck_url_path(url)
                } else {
                    continue;
                };
                definitions.push(Definition {
                    name,
                    taskdeck_path,
                });
            }
        }
        Some(definitions)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hooks::own_server::{OwnTool, own_tool as own};

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    /// The Taskdeck tool `tool_name` calls in `cwd` with Codex's dir `home`, outside any
    /// session.
    fn codex_tool(
        lookup: &OwnServers,
        tool_name: &str,
        cwd: Option<&str>,
        home: &Path,
    ) -> Option<OwnTool> {
        let rest = tool_name.strip_prefix("mcp__")?;
        let cwd = Path::new(cwd?);
        if !cwd.is_absolute() {
            return None;
        }
        let seen = lookup.codex_definitions(cwd, home)?.into_iter().collect();
        OwnServers::decide(rest, Some(&seen), fits)
    }

    #[test]
    fn every_layer_in_sight_must_make_the_name_this_taskdeck() {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("codex");
        write(
            &home.join("config.toml"),
            r#"
model = "gpt-5-codex"
[mcp_servers.taskdeck]
url = "http://127.0.0.1:4747/mcp"
http_headers = { Authorization = "Bearer x" }

[mcp_servers.files]
url = "http://127.0.0.1:4747/mcp/fs/"

[mcp_servers.my-deck]
url = "http://127.0.0.1:4747/mcp"

[mcp_servers.elsewhere]
url = "http://127.0.0.1:9000/mcp"

[mcp_servers.bridge]
command = "npx"
args = ["mcp-remote", "http://127.0.0.1:4747/mcp"]
url = "http://127.0.0.1:4747/mcp"

[mcp_servers.off]
url = "http://127.0.0.1:4747/mcp"
enabled = false
"#,
        );
        let project = tmp.path().join("shop");
        std::fs::create_dir_all(project.join("src")).unwrap();
        let lookup = OwnServers::new(4747);
        let src = project.join("src");
        let is = |tool: &str| codex_tool(&lookup, tool, src.to_str(), &home);
        assert_eq!(is("mcp__taskdeck__run_command"), own("run_command", None));
        assert_eq!(is("mcp__files__write_file"), own("write_file", Some("fs")));
        // Codex's name for `my-deck`, now and in older versions.
        assert_eq!(is("mcp__my_deck__task_status"), own("task_status", None));
        assert_eq!(is("mcp__my-deck__task_status"), own("task_status", None));
        for tool in [
            "mcp__elsewhere__run_command",
            "mcp__bridge__run_command",
            "mcp__off__run_command",
            "mcp__unknown__run_command",
            "mcp__taskdeck__",
            "shell",
        ] {
            assert_eq!(is(tool), None, "{tool}");
        }
        assert_eq!(codex_tool(&lookup, "mcp__taskdeck__x", None, &home), None);
        assert_eq!(
            codex_tool(&lookup, "mcp__taskdeck__x", Some("rel"), &home),
            None
        );

        // A project's layer that makes `taskdeck` a program: asked, in the project only.
        write(
            &project.join(".codex/config.toml"),
            "[mcp_servers.taskdeck]\ncommand = \"evil\"\n",
        );
        assert_eq!(is("mcp__taskdeck__run_command"), None);
        let outside = tmp.path().to_str().unwrap();
        assert_eq!(
            codex_tool(&lookup, "mcp__taskdeck__run_command", Some(outside), &home),
            own("run_command", None)
        );
        // A profile's layer pointing the name elsewhere: asked.
        write(
            &home.join("work.config.toml"),
            "[mcp_servers.files]\nurl = \"http://127.0.0.1:4747/mcp\"\n",
        );
        assert_eq!(is("mcp__files__write_file"), None);
        // Two names Codex writes the same way: asked.
        write(
            &home.join("config.toml"),
            "[mcp_servers.\"task.deck\"]\nurl = \"http://127.0.0.1:4747/mcp\"\n\
             [mcp_servers.task_deck]\nurl = \"http://127.0.0.1:4747/mcp\"\n",
        );
        assert_eq!(
            codex_tool(&lookup, "mcp__task_deck__run_command", Some(outside), &home),
            None
        );
        // A layer that only tunes a server adds no definition; one that is not TOML might
        // name anything.
        std::fs::remove_file(home.join("work.config.toml")).unwrap();
        write(
            &home.join("config.toml"),
            "[mcp_servers.taskdeck]\nurl = \"http://127.0.0.1:4747/mcp\"\n",
        );
        write(
            &home.join("slow.config.toml"),
            "[mcp_servers.taskdeck]\ntool_timeout_sec = 600\n",
        );
        assert_eq!(
            codex_tool(&lookup, "mcp__taskdeck__run_command", Some(outside), &home),
            own("run_command", None)
        );
        write(&home.join("slow.config.toml"), "[mcp_servers.taskdeck\n");
        assert_eq!(
            codex_tool(&lookup, "mcp__taskdeck__run_command", Some(outside), &home),
            None
        );
    }
}
