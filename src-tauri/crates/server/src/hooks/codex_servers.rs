//! Which of Codex's MCP tools are this Taskdeck's: the Codex side of [`super::own_server`]. A
//! `PermissionRequest` for one of them is allowed by the hook, because the call comes to
//! Taskdeck, whose own approval step decides it; asking in the hook too would ask twice.
//!
//! Codex (`openai/codex`, `codex-rs/config`): MCP servers are `[mcp_servers.NAME]` tables of
//! `config.toml` layers merged key by key: the system's `/etc/codex/config.toml`, the user's
//! `$CODEX_HOME/config.toml` (else `~/.codex`), a profile's `$CODEX_HOME/NAME.config.toml`,
//! and a trusted project's `.codex/config.toml` (in the session's `cwd` or a parent). A
//! Streamable HTTP server has a `url`; a stdio one a `command`. Codex names an MCP tool
//! `mcp__<server>__<tool>`, with every character of the server's name but ASCII letters, digits
//! and `_` as `_` (older versions also kept `-`), and adds a hash to a name that collides or
//! is over 64 bytes.
//!
//! Which profile runs, `-c` overrides and managed settings cannot be seen from a hook, so every
//! layer in sight counts and all of them must agree. A tool is Taskdeck's only when:
//! - exactly one server name in any layer makes a prefix of the tool's name;
//! - no layer gives that server a `command` (or anything but a table) or `enabled = false`;
//! - every `url` any layer gives it is this Taskdeck's endpoint, the same path each time, and
//!   at least one layer gives one;
//! - the rest of the name is a tool that Taskdeck serves there (checked by the caller).

use std::{
    collections::BTreeSet,
    path::{Path, PathBuf},
};

use serde_json::{Map, Value, json};

use super::own_server::{OwnServers, OwnTool};

/// The system layer Codex reads on Unix.
const SYSTEM_CONFIG: &str = "/etc/codex/config.toml";

/// `$CODEX_HOME`, else `~/.codex`, as this process sees them (the hook's environment is
/// Codex's own).
pub fn default_codex_home() -> Option<PathBuf> {
    match std::env::var_os("CODEX_HOME") {
        Some(dir) if !dir.is_empty() => Some(PathBuf::from(dir)),
        _ => directories::BaseDirs::new().map(|d| d.home_dir().join(".codex")),
    }
}

/// Whether Codex's name for server `name` in tool names makes the start of `rest` (the tool
/// name after `mcp__`), followed by `__`: what follows, when it does.
fn tool_after<'a>(rest: &'a str, name: &str) -> Option<&'a str> {
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
    /// The Taskdeck tool Codex's `tool_name` calls in a session whose working directory is
    /// `cwd` (absolute), with Codex's configuration dir `codex_home`; `None` when it is not one
    /// of this Taskdeck's or any layer in sight disagrees (see the module comment). A file that
    /// cannot be read or parsed names no server.
    pub fn codex_tool(
        &self,
        tool_name: &str,
        cwd: Option<&str>,
        codex_home: &Path,
    ) -> Option<OwnTool> {
        let rest = tool_name.strip_prefix("mcp__")?;
        let cwd = Path::new(cwd?);
        if !cwd.is_absolute() {
            return None;
        }
        let mut files = vec![PathBuf::from(SYSTEM_CONFIG), codex_home.join("config.toml")];
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
        let layers: Vec<_> = files
            .iter()
            .map(|f| self.read_as(f, codex_servers))
            .collect();
        let fitting: BTreeSet<&str> = layers
            .iter()
            .flat_map(|l| l.as_object().into_iter().flatten())
            .filter(|(name, _)| tool_after(rest, name).is_some())
            .map(|(name, _)| name.as_str())
            .collect();
        let [name] = fitting.into_iter().collect::<Vec<_>>()[..] else {
            return None;
        };
        let tool = tool_after(rest, name)?;
        let mut server_path = None;
        for entry in layers.iter().filter_map(|l| l.get(name)) {
            if entry.get("notHttp").is_some() || entry.get("enabled") == Some(&json!(false)) {
                return None;
            }
            if let Some(url) = entry.get("url").and_then(Value::as_str) {
                let path = self.taskdeck_url_path(url)?;
                if server_path.as_ref().is_some_and(|p| *p != path) {
                    return None;
                }
                server_path = Some(path);
            }
        }
        Some(OwnTool {
            server_path: server_path?,
            tool: tool.to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    fn own(tool: &str, server_path: Option<&str>) -> Option<OwnTool> {
        Some(OwnTool {
            server_path: server_path.map(String::from),
            tool: tool.into(),
        })
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
url = "http://localhost:4747/mcp/fs/"

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
        let is = |tool: &str| lookup.codex_tool(tool, src.to_str(), &home);
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
        assert_eq!(lookup.codex_tool("mcp__taskdeck__x", None, &home), None);
        assert_eq!(
            lookup.codex_tool("mcp__taskdeck__x", Some("rel"), &home),
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
            lookup.codex_tool("mcp__taskdeck__run_command", Some(outside), &home),
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
            lookup.codex_tool("mcp__task_deck__run_command", Some(outside), &home),
            None
        );
        // Not TOML: names nothing.
        write(&home.join("config.toml"), "[mcp_servers.taskdeck\n");
        assert_eq!(
            lookup.codex_tool("mcp__taskdeck__run_command", Some(outside), &home),
            None
        );
    }
}
