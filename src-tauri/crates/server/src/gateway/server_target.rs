//! What of a server's spec a human may see: its transport, a target string (the command line,
//! or the URL with its secrets taken out), its cwd and the *names* of its env variables and
//! headers. Every view (`/v1/servers`, the Servers view, `taskdeck servers list`) is built from
//! this, so a value from `env` or `headers` never reaches one.

use super::{
    ServerState, ServerStatus, TransportKind,
    servers_file::{ServerSpec, Transport, Unreadable},
};

/// Stands in for a redacted URL part.
pub const REDACTED: &str = "[redacted]";

/// A server's spec without secrets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublicSpec {
    /// How the server is reached.
    pub transport: TransportKind,
    /// See [`ServerSpec::target`].
    pub target: String,
    /// [`ServerStatus::cwd`].
    pub cwd: Option<String>,
    /// [`ServerStatus::env_keys`].
    pub env_keys: Vec<String>,
    /// [`ServerStatus::header_names`].
    pub header_names: Vec<String>,
    /// [`ServerSpec::disabled`].
    pub disabled: bool,
}

impl ServerSpec {
    /// The spec as a human may see it.
    pub fn public(&self) -> PublicSpec {
        let (transport, cwd, env_keys, header_names) = match &self.transport {
            Transport::Stdio { env, cwd, .. } => (
                TransportKind::Stdio,
                cwd.as_ref().map(|c| c.display().to_string()),
                env.keys().cloned().collect(),
                vec![],
            ),
            Transport::Http { headers, .. } => (
                TransportKind::Http,
                None,
                vec![],
                headers.keys().cloned().collect(),
            ),
        };
        PublicSpec {
            transport,
            target: self.target(),
            cwd,
            env_keys,
            header_names,
            disabled: self.disabled,
        }
    }

    /// stdio: the command line, shell-quoted (`npx -y '@scope/pkg' '/my dir'`), credentials in
    /// its words masked ([`crate::tools::secrets::mask_string`]); http: the URL with every query
    /// value and the fragment replaced by `[redacted]` and the userinfo password by `****` (see
    /// [`redact_url`]).
    pub fn target(&self) -> String {
        match &self.transport {
            Transport::Stdio { command, args, .. } => stdio_target(command, args),
            Transport::Http { url, .. } => redact_url(url),
        }
    }
}

/// A stdio server's command line as [`ServerSpec::target`] shows it.
fn stdio_target(command: &str, args: &[String]) -> String {
    let masked = masked_argv(command, args);
    let words = masked.iter().map(String::as_str);
    // Only a NUL byte makes quoting fail; such a line cannot be run anyway.
    shlex::try_join(words.clone())
        .unwrap_or_else(|_| words.collect::<Vec<_>>().join(" ").replace('\0', "\\0"))
}

/// `command` and `args` with their credentials masked as a tool call's `argv` is
/// ([`crate::tools::secrets::redact_value`]): `postgresql://app:****@db/prod`,
/// `--password=[redacted]`, the word after `--password` or `--token`, `mysql -p[redacted]`.
pub fn masked_argv(command: &str, args: &[String]) -> Vec<String> {
    let argv: Vec<&str> = std::iter::once(command)
        .chain(args.iter().map(String::as_str))
        .collect();
    match crate::tools::secrets::redact_value(&serde_json::json!(argv)) {
        Some(serde_json::Value::Array(masked)) if masked.len() == argv.len() => masked
            .iter()
            .zip(&argv)
            .map(|(m, given)| m.as_str().unwrap_or(given).to_string())
            .collect(),
        _ => argv.iter().map(|w| w.to_string()).collect(),
    }
}

impl PublicSpec {
    /// The status of server `name` as far as the file tells: `disabled` when it is disabled,
    /// else `state`, with no error, no tools and no stderr yet. For a server the gateway does
    /// not report (yet); `since_ms` is when `state` began, Unix ms.
    pub fn status(self, name: &str, state: ServerState, since_ms: i64) -> ServerStatus {
        ServerStatus {
            name: name.to_string(),
            transport: self.transport,
            target: self.target,
            cwd: self.cwd,
            env_keys: self.env_keys,
            header_names: self.header_names,
            state: if self.disabled {
                ServerState::Disabled
            } else {
                state
            },
            disabled: self.disabled,
            last_error: None,
            stderr_tail: vec![],
            tool_count: 0,
            unserved_tools: vec![],
            protocol_version: None,
            restarts: 0,
            since_ms,
        }
    }
}

/// The status of servers.json's entry `name` that is not a spec: `failed`, `lastError` saying
/// why (`not started: ...`), its transport as its fields tell (`http` when it has a `url`), its
/// target as a spec's is shown when it has a `url` or a `command` (with `args`) that are
/// strings (`URL | COMMAND` when it has both), and nothing else of its values (they may be
/// secrets) but its env and header names. `since_ms`: Unix ms.
pub fn unreadable_status(name: &str, entry: &Unreadable, since_ms: i64) -> ServerStatus {
    let keys = |field: &str| -> Vec<String> {
        entry.raw[field]
            .as_object()
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default()
    };
    let http = entry.raw.get("url").is_some() && entry.raw.get("command").is_none();
    let command_line = |command: &str| {
        let args: Vec<String> = entry.raw["args"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|a| a.as_str().map(String::from))
            .collect();
        stdio_target(command, &args)
    };
    let target = match (entry.raw["url"].as_str(), entry.raw["command"].as_str()) {
        (Some(url), None) => redact_url(url),
        (None, Some(command)) => command_line(command),
        // Both, which is its problem: both shown.
        (Some(url), Some(command)) => format!("{} | {}", redact_url(url), command_line(command)),
        (None, None) => String::new(),
    };
    ServerStatus {
        name: name.to_string(),
        transport: if http {
            TransportKind::Http
        } else {
            TransportKind::Stdio
        },
        target,
        cwd: None,
        env_keys: keys("env"),
        header_names: keys("headers"),
        disabled: false,
        state: ServerState::Failed,
        last_error: Some(format!("not started: {}", entry.problem)),
        stderr_tail: vec![],
        tool_count: 0,
        unserved_tools: vec![],
        protocol_version: None,
        restarts: 0,
        since_ms,
    }
}

/// `url` with each query value and the fragment replaced by `[redacted]` (keys stay: they say
/// what is there), the userinfo password by `****` (the user name stays) and any token known by
/// its shape (`ghp_…`, `sk-proj-…`, in the user name or the path) masked as
/// [`crate::tools::secrets::mask_string`] does. A string that is not a URL is shown as
/// `[redacted]` whole: it may be anything.
pub fn redact_url(url: &str) -> String {
    let Ok(mut parsed) = reqwest::Url::parse(url) else {
        return REDACTED.to_string();
    };
    if parsed.password().is_some() {
        let _ = parsed.set_password(Some(crate::tools::http_reach::MASKED_PASSWORD));
    }
    if let Some(query) = parsed.query().filter(|q| !q.is_empty()) {
        let redacted: Vec<String> = query
            .split('&')
            .map(|pair| match pair.split_once('=') {
                Some((key, _)) => format!("{key}={REDACTED}"),
                // `?token` alone: the bare word may itself be the secret.
                None if pair.is_empty() => String::new(),
                None => REDACTED.to_string(),
            })
            .collect();
        parsed.set_query(Some(&redacted.join("&")));
    }
    if parsed.fragment().is_some() {
        parsed.set_fragment(Some(REDACTED));
    }
    // A token known by its shape anywhere else: `https://ghp_…@host/`, `/mcp/sk-proj-…/`.
    let shown = parsed.to_string();
    crate::tools::secrets::mask_string(&shown).unwrap_or(shown)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn tokens_known_by_their_shape_are_masked_anywhere_in_a_url() {
        let ghp = format!("ghp_{}", "a1B2".repeat(9));
        let shown = redact_url(&format!("http://{ghp}@127.0.0.1:3014/mcp/{ghp}/x"));
        assert!(!shown.contains(&ghp), "{shown}");
        assert!(
            shown.starts_with("http://") && shown.contains("127.0.0.1:3014/mcp/"),
            "{shown}"
        );
    }

    #[test]
    fn urls_lose_their_secrets() {
        assert_eq!(
            redact_url("https://user:pw@mcp.example.com/mcp?key=abc&region=eu#tok"),
            "https://user:****@mcp.example.com/mcp?key=[redacted]&region=[redacted]#[redacted]"
        );
        assert_eq!(
            redact_url("http://127.0.0.1:3000/mcp"),
            "http://127.0.0.1:3000/mcp"
        );
        assert_eq!(
            redact_url("https://x.example/?s3cret"),
            "https://x.example/?[redacted]"
        );
        assert_eq!(redact_url("not a url s3cret"), "[redacted]");
    }

    #[test]
    fn public_specs_hold_names_never_values() {
        let spec = ServerSpec {
            transport: Transport::Stdio {
                command: "npx".into(),
                args: vec!["-y".into(), "@scope/server".into(), "/my dir".into()],
                env: BTreeMap::from([("API_KEY".into(), "s3cret".into())]),
                cwd: Some("/home/me".into()),
            },
            disabled: false,
            timeout_ms: None,
        };
        let public = spec.public();
        assert_eq!(public.target, "npx -y @scope/server '/my dir'");
        let spec = ServerSpec {
            transport: Transport::Stdio {
                command: "npx".into(),
                args: vec![
                    "server-postgres".into(),
                    "postgresql://app:S3cretPw@db/prod".into(),
                    "--password=hunter22".into(),
                ],
                env: BTreeMap::new(),
                cwd: None,
            },
            disabled: false,
            timeout_ms: None,
        };
        assert_eq!(
            spec.public().target,
            "npx server-postgres 'postgresql://app:****@db/prod' '--password=[redacted]'"
        );
        // An option's value in the next word, as in a tool call's argv.
        assert_eq!(
            masked_argv("mcp-x", &["--token".into(), "tok12345".into(), "-v".into()]),
            ["mcp-x", "--token", "[redacted]", "-v"]
        );
        assert_eq!(public.env_keys, ["API_KEY"]);
        assert_eq!(public.cwd.as_deref(), Some("/home/me"));
        let status = public.status("fs", ServerState::Starting, 5);
        assert_eq!(status.state, ServerState::Starting);
        assert!(!serde_json::to_string(&status).unwrap().contains("s3cret"));

        let spec = ServerSpec {
            transport: Transport::Http {
                url: "https://x.example/mcp?token=s3cret".into(),
                headers: BTreeMap::from([("Authorization".into(), "Bearer s3cret".into())]),
            },
            disabled: true,
            timeout_ms: None,
        };
        let status = spec.public().status("docs", ServerState::Starting, 5);
        assert_eq!(status.state, ServerState::Disabled);
        assert_eq!(status.header_names, ["Authorization"]);
        assert_eq!(status.transport, TransportKind::Http);
        assert!(!serde_json::to_string(&status).unwrap().contains("s3cret"));
    }
}
