//! Ready-to-paste MCP client configuration for Taskdeck's endpoint ("Connect an agent" in the UI,
//! `taskdeck mcp-config CLIENT` on the command line).

use serde_json::{Value, json};

/// The clients we write configuration for.
pub const CLIENTS: [&str; 4] = ["claude-code", "claude-desktop", "vscode", "cursor"];

/// One client's configuration: where it goes and what to paste.
#[derive(Debug, Clone, PartialEq, serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClientConfig {
    pub client: &'static str,
    /// Human name, e.g. "Claude Code".
    pub title: &'static str,
    /// Where to use it: "Run in a terminal", or the file to merge it into.
    pub target: &'static str,
    /// `command` (a shell line) or `json` (a JSON document to merge).
    pub kind: &'static str,
    pub text: String,
}

/// The entry named `taskdeck` in `client`'s own MCP configuration file (one of [`CLIENTS`])
/// that connects to `mcp_url` with `token`; `None` for an unknown client. Claude Desktop speaks
/// only stdio from its file, so its entry runs the `mcp-remote` bridge; the others speak
/// Streamable HTTP with an `Authorization` header.
pub fn server_entry(client: &str, mcp_url: &str, token: &str) -> Option<Value> {
    let auth = format!("Bearer {token}");
    Some(match client {
        "claude-code" => {
            json!({"type": "http", "url": mcp_url, "headers": {"Authorization": auth}})
        }
        "claude-desktop" => json!({"command": "npx",
            "args": ["-y", "mcp-remote", mcp_url, "--header", format!("Authorization:{auth}")]}),
        "vscode" => json!({"type": "http", "url": mcp_url, "headers": {"Authorization": auth}}),
        "cursor" => json!({"url": mcp_url, "headers": {"Authorization": auth}}),
        _ => return None,
    })
}

/// The configuration for `client` (one of [`CLIENTS`]) connecting to `mcp_url` with `token`;
/// `None` for an unknown client.
pub fn client_config(client: &str, mcp_url: &str, token: &str) -> Option<ClientConfig> {
    let entry = server_entry(client, mcp_url, token)?;
    let pretty = |key: &str| {
        serde_json::to_string_pretty(&json!({key: {"taskdeck": entry}})).unwrap_or_default()
    };
    Some(match client {
        "claude-code" => ClientConfig {
            client: "claude-code",
            title: "Claude Code",
            target: "Run in a terminal",
            kind: "command",
            text: format!(
                "claude mcp add --transport http taskdeck {mcp_url} --header \"Authorization: Bearer {token}\""
            ),
        },
        "claude-desktop" => ClientConfig {
            client: "claude-desktop",
            title: "Claude Desktop",
            target: "claude_desktop_config.json (Settings → Developer → Edit Config)",
            kind: "json",
            text: pretty("mcpServers"),
        },
        "vscode" => ClientConfig {
            client: "vscode",
            title: "VS Code",
            target: ".vscode/mcp.json",
            kind: "json",
            text: pretty("servers"),
        },
        "cursor" => ClientConfig {
            client: "cursor",
            title: "Cursor",
            target: "~/.cursor/mcp.json",
            kind: "json",
            text: pretty("mcpServers"),
        },
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_client_has_the_url_and_token() {
        for c in CLIENTS {
            let cfg = client_config(c, "http://127.0.0.1:4747/mcp", "td_secret").unwrap();
            assert!(cfg.text.contains("http://127.0.0.1:4747/mcp"), "{c}");
            assert!(cfg.text.contains("td_secret"), "{c}");
            if cfg.kind == "json" {
                serde_json::from_str::<Value>(&cfg.text).unwrap();
            }
        }
        assert!(client_config("emacs", "u", "t").is_none());
    }
}
