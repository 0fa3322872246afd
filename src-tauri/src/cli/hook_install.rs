//! `taskdeck hook install|uninstall claude-code|codex [--user|--project] [--dir D]`: puts
//! Taskdeck's hook entries into the agent's hooks file and takes exactly them out again.
//!
//! - Claude Code: `D/.claude/settings.json` (user: D = home; project: D = the current
//!   directory), every event of [`claude_entries`].
//! - Codex: `D/.codex/hooks.json` (user: `$CODEX_HOME`, else `~/.codex`; project:
//!   `./.codex`), the events of [`codex_entries`], and `notify` in the `config.toml` beside it
//!   when no other program is set there (edited with `toml_edit`: comments and layout stay).
//!
//! Files are written by [`hook_file::write`]: only when they change, through their symlinks,
//! and backed up to `<file>.taskdeck-backup` only from a file Taskdeck had not changed yet.
//! `--dir` must name an existing directory. Install also makes the
//! agent's token (principal `claude-code` or `codex`) and writes it to the token file the hook
//! reads ([`agent_token::token_path`], mode 0600), or keeps the one already there (which
//! `mcp-config` or `servers import` may have made).

use std::{
    path::{Path, PathBuf},
    process::ExitCode,
};

use serde_json::Value;
use taskdeck_server::{
    adapters::auth,
    hooks::{Agent, EVENT_HOOK_TIMEOUT_SECS, PERMISSION_HOOK_TIMEOUT_SECS},
};

use super::{
    agent_token::{read_token, token_path, write_token},
    hook_file,
    hook_settings::{self, HookEntry},
};

/// Where install and uninstall work.
pub struct Placement {
    pub agent: Agent,
    /// `.claude` / `.codex` of the project instead of the user's.
    pub project: bool,
    /// The directory holding `.claude` / `.codex` (default: home or the current directory).
    pub dir: Option<PathBuf>,
    pub data_dir: PathBuf,
    pub config_dir: PathBuf,
    /// `--data-dir` / `--config-dir` as given (baked into the hook's command line).
    pub explicit_dirs: (Option<PathBuf>, Option<PathBuf>),
}

fn agent_dir(p: &Placement) -> Result<PathBuf, String> {
    let dot = match p.agent {
        Agent::ClaudeCode => ".claude",
        Agent::Codex => ".codex",
    };
    if let Some(d) = &p.dir {
        if !d.is_dir() {
            return Err(format!(
                "--dir {}: not a directory (give an existing one; {dot} inside it is made when missing)",
                d.display()
            ));
        }
        return Ok(d.join(dot));
    }
    if p.project {
        let cwd = std::env::current_dir().map_err(|e| e.to_string())?;
        return Ok(cwd.join(dot));
    }
    if p.agent == Agent::Codex
        && let Some(home) = std::env::var_os("CODEX_HOME").filter(|h| !h.is_empty())
    {
        return Ok(PathBuf::from(home));
    }
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .ok_or("HOME is not set (pass --dir)")?;
    Ok(PathBuf::from(home).join(dot))
}

fn hooks_file(p: &Placement) -> Result<PathBuf, String> {
    Ok(agent_dir(p)?.join(match p.agent {
        Agent::ClaudeCode => "settings.json",
        Agent::Codex => "hooks.json",
    }))
}

/// The hook's command line words: `taskdeck-hook VERB` when that binary lies beside this one
/// (it starts faster: no GUI library), else this binary, `hook`, `VERB`; then the dirs given.
/// Paths are absolute.
fn command_words(p: &Placement, verb: &str) -> Result<Vec<String>, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this program: {e}"))?;
    let exe = exe.canonicalize().unwrap_or(exe);
    let hook_binary = exe.with_file_name("taskdeck-hook");
    let mut words = if exe.file_name() == hook_binary.file_name() || hook_binary.is_file() {
        vec![hook_binary.display().to_string(), verb.into()]
    } else {
        vec![exe.display().to_string(), "hook".into(), verb.into()]
    };
    if let Some(d) = &p.explicit_dirs.0 {
        words.extend(["--data-dir".into(), absolute(d).display().to_string()]);
    }
    if let Some(d) = &p.explicit_dirs.1 {
        words.extend(["--config-dir".into(), absolute(d).display().to_string()]);
    }
    Ok(words)
}

fn absolute(p: &Path) -> PathBuf {
    std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf())
}

/// Claude Code's entries: `PreToolUse` and `PermissionRequest` for every tool (`*`), and the
/// session events.
pub fn claude_entries(command: &str) -> Vec<HookEntry> {
    let entry = |event, matcher, timeout_secs| HookEntry {
        event,
        matcher,
        command: command.to_string(),
        timeout_secs,
    };
    vec![
        entry("PreToolUse", Some("*"), EVENT_HOOK_TIMEOUT_SECS),
        entry("PermissionRequest", Some("*"), PERMISSION_HOOK_TIMEOUT_SECS),
        entry("SessionStart", None, EVENT_HOOK_TIMEOUT_SECS),
        entry("UserPromptSubmit", None, EVENT_HOOK_TIMEOUT_SECS),
        entry("Notification", None, EVENT_HOOK_TIMEOUT_SECS),
        entry("Stop", None, EVENT_HOOK_TIMEOUT_SECS),
        entry("SubagentStop", None, EVENT_HOOK_TIMEOUT_SECS),
        entry("SessionEnd", None, EVENT_HOOK_TIMEOUT_SECS),
    ]
}

/// Codex's entries (Codex has no `Notification` or `SessionEnd` event).
pub fn codex_entries(command: &str) -> Vec<HookEntry> {
    let entry = |event, timeout_secs| HookEntry {
        event,
        matcher: None,
        command: command.to_string(),
        timeout_secs,
    };
    vec![
        entry("PreToolUse", EVENT_HOOK_TIMEOUT_SECS),
        entry("PermissionRequest", PERMISSION_HOOK_TIMEOUT_SECS),
        entry("SessionStart", EVENT_HOOK_TIMEOUT_SECS),
        entry("UserPromptSubmit", EVENT_HOOK_TIMEOUT_SECS),
        entry("Stop", EVENT_HOOK_TIMEOUT_SECS),
    ]
}

fn read_json(path: &Path) -> Result<Value, String> {
    match std::fs::read_to_string(path) {
        Ok(t) if t.trim().is_empty() => Ok(serde_json::json!({})),
        Ok(t) => serde_json::from_str(&t)
            .map_err(|e| format!("{} is not valid JSON: {e}", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(serde_json::json!({})),
        Err(e) => Err(format!("cannot read {}: {e}", path.display())),
    }
}

/// Writes `v` to `path` ([`hook_file::write`]; `pristine`: the file holds none of Taskdeck's
/// hooks yet).
fn write_json(path: &Path, v: &Value, pristine: bool) -> Result<(), String> {
    let mut text = serde_json::to_string_pretty(v).map_err(|e| e.to_string())?;
    text.push('\n');
    hook_file::write(path, &text, pristine).map(drop)
}

/// The token file's token while it is live, else a new token for principal `agent` written to
/// it (0600): a token revoked since the last install would have every event refused (401), and
/// the agent fall back to its own prompts without a word.
fn ensure_token(p: &Placement) -> Result<(), String> {
    let store = taskdeck_engine::store::Store::file_in(&p.data_dir);
    if read_token(&p.config_dir, p.agent).is_some() && !store.exists() {
        return Err(format!(
            "no task store at {}, and {} holds a token already: check --data-dir",
            store.display(),
            token_path(&p.config_dir, p.agent).display()
        ));
    }
    std::fs::create_dir_all(&p.data_dir)
        .map_err(|e| format!("cannot create {}: {e}", p.data_dir.display()))?;
    let tokens = auth::TokenCommands::open(&p.data_dir).map_err(|e| e.to_string())?;
    if let Some(kept) = read_token(&p.config_dir, p.agent) {
        if tokens.is_live(&kept).map_err(|e| e.to_string())? {
            return Ok(());
        }
        // Made again only when this data dir shows it was revoked: a token from another data
        // dir (a --data-dir typo) is kept, for the Taskdeck it works with.
        let name = p.agent.name();
        let listed = tokens.list().map_err(|e| e.to_string())?;
        let revoked = listed.iter().any(|t| t.name == name && t.revoked)
            && !listed.iter().any(|t| t.name == name && !t.revoked);
        let file = token_path(&p.config_dir, p.agent);
        if listed.iter().any(|t| t.name == name && !t.revoked) {
            return Err(format!(
                "the token in {} is not live, and principal {name:?} has another live token \
                 (made elsewhere, e.g. by Connect an agent): write that token into the file, or \
                 revoke it (`taskdeck token revoke {name}`) and install again",
                file.display()
            ));
        }
        if !revoked {
            return Err(format!(
                "the token in {} is not one of {}'s: check --data-dir, or delete the file and \
                 install again to make a new token",
                file.display(),
                p.data_dir.display()
            ));
        }
        eprintln!(
            "taskdeck: the token in {} was revoked: making a new one",
            file.display()
        );
    }
    let token = tokens
        .create(p.agent.name())
        .map_err(|e| match e {
            auth::AuthError::Exists(_) => format!(
                "a token for principal {0:?} exists but {1} does not hold it: revoke it (`taskdeck token revoke {0}`) and install again",
                p.agent.name(),
                token_path(&p.config_dir, p.agent).display()
            ),
            e => e.to_string(),
        })?;
    write_token(&p.config_dir, p.agent, &token)
}

/// True when `notify` is Taskdeck's (`[".../taskdeck-hook", "codex-notify", ...]`).
fn notify_is_ours(item: &toml_edit::Item) -> bool {
    let words: Vec<String> = item
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str())
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    hook_settings::runs_taskdeck_hook(&words, "codex-notify")
}

/// Sets (`words` = Some) or removes (None) Taskdeck's `notify` in Codex's `config.toml`;
/// another program's `notify` is left alone (said on stderr).
fn codex_notify(config: &Path, words: Option<&[String]>) -> Result<(), String> {
    let text = match std::fs::read_to_string(config) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(format!("cannot read {}: {e}", config.display())),
    };
    let mut doc: toml_edit::DocumentMut = text
        .parse()
        .map_err(|e| format!("{} is not valid TOML: {e}", config.display()))?;
    let current = doc.get("notify");
    let ours = current.is_some_and(notify_is_ours);
    // Codex runs hooks unless its `[features]` turn them off (`hooks`, or the older
    // `codex_hooks`): then the entries just installed would never run.
    let off = ["hooks", "codex_hooks"].into_iter().find(|key| {
        doc.get("features")
            .and_then(|f| f.get(key))
            .and_then(|v| v.as_bool())
            == Some(false)
    });
    if let (Some(key), Some(_)) = (off, words) {
        eprintln!(
            "note: {} sets [features] {key} = false, so Codex runs no hooks: remove that line for Taskdeck's to run",
            config.display()
        );
    }
    match words {
        Some(words) => {
            if current.is_some() && !ours {
                eprintln!(
                    "note: {} already sets notify to another program; left as it is (the Stop hook reports finished turns)",
                    config.display()
                );
                return Ok(());
            }
            let set: Option<Vec<&str>> = current
                .and_then(|i| i.as_array())
                .map(|a| a.iter().filter_map(|v| v.as_str()).collect());
            if set.is_some_and(|set| set.iter().copied().eq(words.iter().map(String::as_str))) {
                return Ok(());
            }
            let wanted: toml_edit::Array = words.iter().map(String::as_str).collect();
            doc["notify"] = toml_edit::value(wanted);
        }
        None if ours => {
            doc.remove("notify");
        }
        None => return Ok(()),
    }
    hook_file::write(config, &doc.to_string(), !ours).map(drop)
}

fn fail(e: String) -> ExitCode {
    eprintln!("taskdeck: {e}");
    ExitCode::from(1)
}

/// `taskdeck hook install AGENT`. Exit 0 done; 1 a file could not be read or written, or no
/// token could be made.
pub fn install(p: &Placement) -> ExitCode {
    let run = || -> Result<(), String> {
        ensure_token(p)?;
        let words = command_words(p, p.agent.name())?;
        let command =
            shlex::try_join(words.iter().map(String::as_str)).map_err(|e| e.to_string())?;
        let path = hooks_file(p)?;
        let entries = match p.agent {
            Agent::ClaudeCode => claude_entries(&command),
            Agent::Codex => codex_entries(&command),
        };
        let mut settings = read_json(&path)?;
        let pristine = !hook_settings::remove(&mut settings.clone(), p.agent.name());
        if hook_settings::merge(&mut settings, p.agent.name(), &entries)
            .map_err(|e| format!("{}: {e}", path.display()))?
        {
            write_json(&path, &settings, pristine)?;
            eprintln!("Taskdeck's hooks are in {}.", path.display());
        } else {
            eprintln!("Taskdeck's hooks were already in {}.", path.display());
        }
        if p.agent == Agent::Codex {
            let notify = command_words(p, "codex-notify")?;
            codex_notify(&agent_dir(p)?.join("config.toml"), Some(&notify))?;
        }
        Ok(())
    };
    run().map_or_else(fail, |()| ExitCode::SUCCESS)
}

/// `taskdeck hook uninstall AGENT`: takes exactly Taskdeck's entries out (the token stays; revoke
/// it with `taskdeck token revoke AGENT`).
pub fn uninstall(p: &Placement) -> ExitCode {
    let run = || -> Result<(), String> {
        let path = hooks_file(p)?;
        if path.exists() {
            let mut settings = read_json(&path)?;
            if hook_settings::remove(&mut settings, p.agent.name()) {
                write_json(&path, &settings, false)?;
                eprintln!("Taskdeck's hooks are out of {}.", path.display());
            } else {
                eprintln!("{} had no Taskdeck hooks.", path.display());
            }
        }
        if p.agent == Agent::Codex {
            codex_notify(&agent_dir(p)?.join("config.toml"), None)?;
        }
        Ok(())
    };
    run().map_or_else(fail, |()| ExitCode::SUCCESS)
}
