//! Ready-to-paste MCP client configuration for Taskdeck's endpoint ("Connect an agent" in the UI,
//! `taskdeck mcp-config CLIENT` on the command line).

use serde_json::{Value, json};

/// The clients we write configuration for.
pub const CLIENTS: [&str; 5] = ["claude-code", "claude-desktop", "vscode", "cursor", "codex"];

/// One client's configuration: where it goes and what to paste.
#[derive(Debug, Clone, PartialEq, serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClientConfig {
    /// The client's id, one of [`CLIENTS`] (e.g. `claude-code`).
    pub client: &'static str,
    /// Human name, e.g. "Claude Code".
    pub title: &'static str,
    /// Where to use it: "Run in a terminal", or the file to merge it into.
    pub target: String,
    /// `command` (a shell line), `json` (a JSON document to merge) or `toml` (a TOML table to
    /// add).
    pub kind: &'static str,
    /// What to run or paste; it holds the token.
    pub text: String,
}

/// The entry named `taskdeck` in `client`'s own MCP configuration file (one of [`CLIENTS`])
/// that connects to `mcp_url` with `token`; `None` for an unknown client. Claude Desktop speaks
/// only stdio from its file, so its entry runs the `mcp-remote` bridge; the others speak
/// Streamable HTTP with an `Authorization` header (Codex: `http_headers`, its `config.toml`
/// keys, <https://developers.openai.com/codex/config-reference>).
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
        "codex" => json!({"url": mcp_url, "http_headers": {"Authorization": auth}}),
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
            target: "Run in a terminal".into(),
            kind: "command",
            text: format!(
                "claude mcp add --scope user --transport http taskdeck {mcp_url} --header \"Authorization: Bearer {token}\""
            ),
        },
        "claude-desktop" => ClientConfig {
            client: "claude-desktop",
            title: "Claude Desktop",
            target: "claude_desktop_config.json (Settings → Developer → Edit Config)".into(),
            kind: "json",
            text: pretty("mcpServers"),
        },
        "vscode" => ClientConfig {
            client: "vscode",
            title: "VS Code",
            target: ".vscode/mcp.json".into(),
            kind: "json",
            text: pretty("servers"),
        },
        "cursor" => ClientConfig {
            client: "cursor",
            title: "Cursor",
            target: "~/.cursor/mcp.json".into(),
            kind: "json",
            text: pretty("mcpServers"),
        },
        "codex" => ClientConfig {
            client: "codex",
            title: "Codex",
            target: "~/.codex/config.toml".into(),
            kind: "toml",
            // A JSON string is a TOML basic string: the URL and token need no other quoting.
            text: format!(
                "[mcp_servers.taskdeck]\nurl = {}\nhttp_headers = {{ Authorization = {} }}",
                Value::from(mcp_url),
                Value::from(format!("Bearer {token}"))
            ),
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
        let codex = client_config("codex", "http://127.0.0.1:4747/mcp", "td_\"x\\").unwrap();
        let doc: toml_edit::DocumentMut = codex.text.parse().unwrap();
        let entry = &doc["mcp_servers"]["taskdeck"];
        assert_eq!(entry["url"].as_str(), Some("http://127.0.0.1:4747/mcp"));
        assert_eq!(
            entry["http_headers"]["Authorization"].as_str(),
            Some("Bearer td_\"x\\")
        );
        assert!(client_config("emacs", "u", "t").is_none());
    }
}
