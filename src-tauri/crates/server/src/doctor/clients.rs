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
/// entry's name, the port of its URL and whether it is `https` (Taskdeck listens on plain
/// `http`).
struct Entry {
    client: &'static str,
    file: PathBuf,
    name: String,
    port: u16,
    https: bool,
}

/// The most bytes of a client's file read as JSON with comments (VS Code's): JSON5's parser is
/// slow on a large file that is not valid, and the others are plain JSON.
const JSONC_MAX_BYTES: usize = 1 << 20;

/// The check, for a Taskdeck running on `running_port` (`None`: not running, or its port not
/// recorded: the entries are listed, not judged). An entry counts as Taskdeck's when it is
/// named `taskdeck` (as `mcp-config` and `servers import` write it) or reaches the running
/// Taskdeck's port: another local MCP server's `/mcp` on its own port is not Taskdeck. A
/// client file that cannot be read as its client's format is a problem too: the client cannot
/// read it either.
pub(super) fn check_clients(running_port: Option<u16>) -> Finding {
    let mut entries = Vec::new();
    let mut broken = Vec::new();
    for client in Client::ALL {
        let Some(file) = client.default_file() else {
            continue;
        };
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        match parse(client, &text).map(|json| import::taskdeck_entries(client, &json)) {
            Some(Ok(found)) => entries.extend(
                found
                    .into_iter()
                    .filter_map(|(name, url)| entry(client.id(), &file, name, &url)),
            ),
            Some(Err(_)) | None => broken.push(format!("{}'s {}", client.id(), file.display())),
        }
    }
    if let Some(home) = crate::hooks::codex_servers::default_codex_home() {
        let file = home.join("config.toml");
        match codex_entries(&file) {
            Some(found) => entries.extend(found),
            None => broken.push(format!("codex's {}", file.display())),
        }
    }
    entries.retain(|e| {
        e.name == crate::gateway::servers_file::RESERVED_NAME || Some(e.port) == running_port
    });
    if !broken.is_empty() {
        return Finding::problem(
            CHECK,
            format!(
                "not valid, so its client cannot read its servers either: {}",
                broken.join("; ")
            ),
            "fix the file (its client's own settings may help), then run doctor again",
        );
    }
    judge(&entries, running_port)
}

/// `text` as `client`'s file: JSON, or for VS Code JSON with comments; `None` when it is
/// neither.
fn parse(client: Client, text: &str) -> Option<Value> {
    serde_json::from_str::<Value>(text).ok().or_else(|| {
        (client == Client::Vscode && text.len() <= JSONC_MAX_BYTES)
            .then(|| json5::from_str(text).ok())
            .flatten()
    })
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
            "{}'s {} (entry {:?}) on {}port {}",
            e.client,
            e.file.display(),
            e.name,
            if e.https { "https, " } else { "" },
            e.port
        )
    };
    let Some(port) = running_port else {
        let all: Vec<String> = entries.iter().map(said).collect();
        return Finding::ok(CHECK, format!("Taskdeck is named by {}", all.join("; ")));
    };
    let (right, wrong): (Vec<&Entry>, Vec<&Entry>) =
        entries.iter().partition(|e| e.port == port && !e.https);
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
            "in that entry's URL, make it http://…:{port}/mcp (Taskdeck serves plain http; its \
             token stays good) and restart the client; or start Taskdeck with the port the file \
             names"
        ),
    )
}

/// The entry named `name` of `client`'s `file`, if `url` has a port (an `http` URL without one
/// is port 80).
fn entry(client: &'static str, file: &Path, name: String, url: &str) -> Option<Entry> {
    let url = reqwest::Url::parse(url).ok()?;
    Some(Entry {
        client,
        file: file.to_path_buf(),
        name,
        port: url.port_or_known_default()?,
        https: url.scheme() == "https",
    })
}

/// The `[mcp_servers.NAME]` tables of Codex's `file` that reach a Taskdeck: a `url` that is
/// one, or one among a stdio server's `args` (`npx mcp-remote URL`). `None` when the file is
/// there but is not TOML; empty when it is missing.
fn codex_entries(file: &Path) -> Option<Vec<Entry>> {
    let Ok(text) = std::fs::read_to_string(file) else {
        return Some(Vec::new());
    };
    let doc = text.parse::<toml_edit::DocumentMut>().ok()?;
    let Some(servers) = doc.get("mcp_servers").and_then(|s| s.as_table_like()) else {
        return Some(Vec::new());
    };
    let ours = |s: &&str| import::is_taskdeck_url(s, None);
    Some(
        servers
            .iter()
            .filter_map(|(name, server)| {
                let server = server.as_table_like()?;
                let url = server.get("url").and_then(|u| u.as_str()).filter(ours);
                let arg = || {
                    server
                        .get("args")?
                        .as_array()?
                        .iter()
                        .filter_map(|a| a.as_str())
                        .find(ours)
                };
                entry("codex", file, name.to_string(), url.or_else(arg)?)
            })
            .collect(),
    )
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
            https: false,
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
                .starts_with("in that entry's URL, make it http://…:4800/mcp")
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
        let found = codex_entries(&file).unwrap();
        assert_eq!(found.len(), 1);
        assert_eq!((found[0].name.as_str(), found[0].port), ("taskdeck", 4747));
        // Through mcp-remote; and a file that is not TOML is said to be broken.
        std::fs::write(
            &file,
            "[mcp_servers.td]\ncommand = \"npx\"\nargs = [\"-y\", \"mcp-remote\", \"http://localhost:4800/mcp\"]\n",
        )
        .unwrap();
        let found = codex_entries(&file).unwrap();
        assert_eq!((found[0].name.as_str(), found[0].port), ("td", 4800));
        std::fs::write(&file, "[mcp_servers.td\nurl = ").unwrap();
        assert!(codex_entries(&file).is_none());
    }
}
