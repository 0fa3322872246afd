//! Folds the per-tool policy files of earlier versions into `policy.json`, once:
//! - `command-policy.json` (`{"allow": {principal: [pattern | {"command", "cwd"}]}}`) → allow
//!   rules for `taskdeck`/`run_command` with `arguments.command` = the pattern (and
//!   `arguments.cwd` = the directory, resolved and escaped);
//! - `http-policy.json` (`{"allowPrivate": {principal: ["host:port", ...]}}`) → allow rules for
//!   `taskdeck`/`wait_for_http_job` whose `arguments.url` pattern names that host and port
//!   literally (for the scheme's default port, the URL form without a port).
//!
//! Rules already in `policy.json` stay first; an equal rule is not added twice. The old file is
//! then renamed to `*.migrated`, so it is not migrated again; a file that cannot be read is left
//! where it is, with a warning.

use std::{collections::BTreeMap, path::Path};

use serde::Deserialize;

use super::{
    Decision, Rule, TASKDECK_SERVER,
    file::PolicyFile,
    rules::{exact, new_id},
};

/// `command-policy.json`'s shape.
#[derive(Deserialize)]
struct CommandPolicy {
    #[serde(default)]
    allow: BTreeMap<String, Vec<CommandRule>>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum CommandRule {
    Anywhere(String),
    In { command: String, cwd: String },
}

/// `http-policy.json`'s shape.
#[derive(Deserialize)]
struct HttpPolicy {
    #[serde(default, rename = "allowPrivate")]
    allow_private: BTreeMap<String, Vec<String>>,
}

/// Turns an old file's text into rules. Errors: why the text is not that file's shape.
type Convert = fn(&str) -> Result<Vec<Rule>, String>;

fn allow_rule(principal: &str, tool: &str, arguments: BTreeMap<String, String>) -> Rule {
    Rule {
        id: new_id(),
        principal: principal.to_string(),
        server: TASKDECK_SERVER.into(),
        tool: tool.into(),
        arguments,
        only_these_arguments: false,
        public_only: false,
        decision: Decision::Allow,
        note: None,
        created_at_ms: Some(chrono::Utc::now().timestamp_millis()),
        approval: Default::default(),
    }
}

fn command_rules(text: &str) -> Result<Vec<Rule>, String> {
    let old: CommandPolicy = serde_json::from_str(text).map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    for (principal, list) in old.allow {
        for rule in list {
            let mut args = BTreeMap::new();
            let note = match rule {
                CommandRule::Anywhere(pattern) => {
                    args.insert("command".into(), pattern);
                    "from command-policy.json"
                }
                CommandRule::In { command, cwd } => {
                    let dir = Path::new(&cwd);
                    let dir = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
                    args.insert("command".into(), command);
                    args.insert("cwd".into(), exact(&dir.display().to_string()));
                    "from command-policy.json (this directory)"
                }
            };
            let mut rule = allow_rule(&principal, "run_command", args);
            rule.note = Some(note.into());
            out.push(rule);
        }
    }
    Ok(out)
}

/// The `url` patterns that name `authority` (`host:port`, IPv6 in brackets) literally: the
/// URL as `Url` writes it drops the scheme's default port, so port 80 and 443 get the plain
/// form for that scheme and the `:port` form for the other.
fn url_patterns(authority: &str) -> Result<Vec<String>, String> {
    let (host, port) = authority
        .rsplit_once(':')
        .filter(|(h, p)| !h.is_empty() && p.parse::<u16>().is_ok())
        .ok_or_else(|| format!("{authority:?} is not host:port"))?;
    let host = exact(&host.to_ascii_lowercase());
    Ok(match port {
        "80" => vec![format!("http://{host}/*"), format!("https://{host}:80/*")],
        "443" => vec![format!("https://{host}/*"), format!("http://{host}:443/*")],
        _ => vec![format!("http*://{host}:{port}/*")],
    })
}

fn http_rules(text: &str) -> Result<Vec<Rule>, String> {
    let old: HttpPolicy = serde_json::from_str(text).map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    for (principal, list) in old.allow_private {
        for authority in list {
            for pattern in url_patterns(&authority)? {
                let args = BTreeMap::from([("url".to_string(), pattern)]);
                let mut rule = allow_rule(&principal, "wait_for_http_job", args);
                rule.note = Some(format!("from http-policy.json ({authority})"));
                out.push(rule);
            }
        }
    }
    Ok(out)
}

/// Migrates the old files found in `config_dir` into `file` (see the module's doc).
pub fn migrate(file: &PolicyFile, config_dir: &Path) {
    let olds: [(&str, Convert); 2] = [
        ("command-policy.json", command_rules),
        ("http-policy.json", http_rules),
    ];
    for (name, convert) in olds {
        let old = config_dir.join(name);
        let Ok(text) = std::fs::read_to_string(&old) else {
            continue;
        };
        let rules = match convert(&text) {
            Ok(r) => r,
            Err(e) => {
                tracing::warn!(
                    "{} is not valid ({e}); it is not migrated into {}",
                    old.display(),
                    file.path().display()
                );
                continue;
            }
        };
        let added = file.update(|doc| {
            let mut added = 0;
            for rule in rules {
                if !doc.rules.iter().any(|r| r.same_as(&rule)) {
                    doc.rules.push(rule);
                    added += 1;
                }
            }
            added
        });
        let migrated = old.with_file_name(format!("{name}.migrated"));
        match added.and_then(|added| std::fs::rename(&old, &migrated).map(|()| added)) {
            Ok(added) => tracing::info!(
                "migrated {} into {} ({added} rules); the old file is now {}",
                old.display(),
                file.path().display(),
                migrated.display()
            ),
            Err(e) => tracing::warn!("cannot migrate {}: {e}", old.display()),
        }
    }
}
