//! The `clients` check of `taskdeck doctor`: which of this user's MCP clients name Taskdeck in
//! their files (Claude Desktop, Claude Code, VS Code and Cursor as `taskdeck servers import`
//! knows them, Codex's `$CODEX_HOME/config.toml`), and whether on the port the running Taskdeck
//! listens on. A client's entry keeps the port it was written with: after Taskdeck moves to
//! another port (`--port`), every such client fails to connect, far from the cause.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::Finding;
use crate::gateway::import::{self, Client};

const CHECK: &str = "clients";

/// One client's entry that reaches a Taskdeck: the client (`mcp-config`'s id), its file, the
/// entry's name and the port of its URL.
struct Entry {
    client: &'static str,
    file: PathBuf,
    name: String,
    port: u16,
}

/// The check, for a Taskdeck running on `running_port` (`None`: not running, or its port not
/// recorded: the entries are listed, not judged).
pub(super) fn check_clients(running_port: Option<u16>) -> Finding {
    let mut entries = Vec::new();
    for client in Client::ALL {
        if let Some(file) = client.default_file()
            && let Some(json) = read_json(&file)
        {
            entries.extend(
                import::taskdeck_entries(client, &json)
                    .into_iter()
                    .filter_map(|(name, url)| entry(client.id(), &file, name, &url)),
            );
        }
    }
    if let Some(home) = crate::hooks::codex_servers::default_codex_home() {
        let file = home.join("config.toml");
        entries.extend(codex_entries(&file));
    }
    judge(&entries, running_port)
}

/// The finding for `entries` and the running Taskdeck's port.
fn judge(entries: &[Entry], running_port: Option<u16>) -> Finding {
    if entries.is_empty() {
        return Finding::ok(
            CHECK,
            "no MCP client's file names Taskdeck (Claude Desktop, Claude Code, VS Code, Cursor, \
             Codex): `taskdeck mcp-config CLIENT` connects one",
        );
    }
    let said = |e: &Entry| {
        format!(
            "{}'s {} (entry {:?}) on port {}",
            e.client,
            e.file.display(),
            e.name,
            e.port
        )
    };
    let Some(port) = running_port else {
        let all: Vec<String> = entries.iter().map(said).collect();
        return Finding::ok(CHECK, format!("Taskdeck is named by {}", all.join("; ")));
    };
    let (right, wrong): (Vec<&Entry>, Vec<&Entry>) = entries.iter().partition(|e| e.port == port);
    if wrong.is_empty() {
        let mut all: Vec<&str> = right.iter().map(|e| e.client).collect();
        all.dedup();
        let verb = if all.len() == 1 { "reaches" } else { "reach" };
        return Finding::ok(
            CHECK,
            format!("{} {verb} it on port {port}", all.join(", ")),
        );
    }
    let stale: Vec<String> = wrong.iter().map(|e| said(e)).collect();
    let mut clients: Vec<&str> = wrong.iter().map(|e| e.client).collect();
    clients.dedup();
    // The entry's token stays good: only its URL's port changes (a new entry from
    // `mcp-config` would need a new token, refused while the client's name has one).
    Finding::problem(
        CHECK,
        format!(
            "Taskdeck runs on port {port}, but {} reach{} it elsewhere: {}",
            clients.join(", "),
            if clients.len() == 1 { "es" } else { "" },
            stale.join("; ")
        ),
        format!(
            "in that entry's URL, change the port to {port} (its token stays good) and restart \
             the client; or start Taskdeck with the port the file names"
        ),
    )
}

/// The entry named `name` of `client`'s `file`, if `url` has a port (an `http` URL without one
/// is port 80).
fn entry(client: &'static str, file: &Path, name: String, url: &str) -> Option<Entry> {
    let port = reqwest::Url::parse(url).ok()?.port_or_known_default()?;
    Some(Entry {
        client,
        file: file.to_path_buf(),
        name,
        port,
    })
}

/// `path` as JSON (or JSON with comments, as VS Code's); `None` when it is missing or neither.
fn read_json(path: &Path) -> Option<Value> {
    let text = std::fs::read_to_string(path).ok()?;
    serde_json::from_str(&text)
        .ok()
        .or_else(|| json5::from_str(&text).ok())
}

/// The `[mcp_servers.NAME]` tables of Codex's `file` whose `url` is a Taskdeck's.
fn codex_entries(file: &Path) -> Vec<Entry> {
    let Some(doc) = std::fs::read_to_string(file)
        .ok()
        .and_then(|t| t.parse::<toml_edit::DocumentMut>().ok())
    else {
        return Vec::new();
    };
    let Some(servers) = doc.get("mcp_servers").and_then(|s| s.as_table_like()) else {
        return Vec::new();
    };
    servers
        .iter()
        .filter_map(|(name, server)| {
            let url = server.as_table_like()?.get("url")?.as_str()?;
            import::is_taskdeck_url(url, None)
                .then(|| entry("codex", file, name.to_string(), url))
                .flatten()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(client: &'static str, port: u16) -> Entry {
        Entry {
            client,
            file: PathBuf::from(format!("/home/me/{client}.json")),
            name: "taskdeck".into(),
            port,
        }
    }

    #[test]
    fn a_client_on_another_port_is_a_problem_naming_the_fix() {
        let f = judge(&[at("cursor", 4747), at("claude-code", 4800)], Some(4800));
        assert!(!f.ok);
        assert_eq!(
            f.detail,
            "Taskdeck runs on port 4800, but cursor reaches it elsewhere: cursor's \
             /home/me/cursor.json (entry \"taskdeck\") on port 4747"
        );
        assert!(
            f.fix
                .as_deref()
                .unwrap()
                .starts_with("in that entry's URL, change the port to 4800")
        );
        let f = judge(&[at("cursor", 4800)], Some(4800));
        assert!(f.ok);
        assert_eq!(f.detail, "cursor reaches it on port 4800");
        // Not running: listed, not judged.
        assert!(judge(&[at("cursor", 4747)], None).ok);
        assert!(judge(&[], Some(4800)).detail.starts_with("no MCP client"));
    }

    #[test]
    fn codex_tables_with_a_taskdeck_url_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("config.toml");
        std::fs::write(
            &file,
            "[mcp_servers.taskdeck]\nurl = \"http://127.0.0.1:4747/mcp\"\n\
             [mcp_servers.github]\nurl = \"https://api.githubcopilot.com/mcp/\"\n\
             [mcp_servers.fs]\ncommand = \"npx\"\n",
        )
        .unwrap();
        let found = codex_entries(&file);
        assert_eq!(found.len(), 1);
        assert_eq!((found[0].name.as_str(), found[0].port), ("taskdeck", 4747));
    }
}
