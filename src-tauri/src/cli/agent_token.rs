//! The token a coding agent's connections share. `taskdeck mcp-config claude-code`, `taskdeck
//! servers import claude-code` and `taskdeck hook install claude-code` all act as principal
//! `claude-code` (`codex` likewise), and a principal has one live token, whose value is shown
//! only when it is made. So the first of them to make it keeps it in
//! `<config dir>/hooks/<agent>.token` (mode 0600), and the others take it from there: in either
//! order, the second command works.

use std::path::{Path, PathBuf};

use taskdeck_server::{adapters::auth, hooks::Agent};

/// The file holding `agent`'s token: `<config dir>/hooks/<agent>.token`.
pub fn token_path(config_dir: &Path, agent: Agent) -> PathBuf {
    config_dir
        .join("hooks")
        .join(format!("{}.token", agent.name()))
}

/// `agent`'s token from its token file, if there is one.
pub fn read_token(config_dir: &Path, agent: Agent) -> Option<String> {
    let t = std::fs::read_to_string(token_path(config_dir, agent)).ok()?;
    let t = t.trim();
    (!t.is_empty()).then(|| t.to_string())
}

/// Writes `token` to `agent`'s token file (mode 0600, its dir made when missing). Errors: what
/// could not be written, as a sentence.
pub fn write_token(config_dir: &Path, agent: Agent, token: &str) -> Result<(), String> {
    let path = token_path(config_dir, agent);
    let dir = path.parent().expect("token path has a parent");
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    auth::write_private(&path, token).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// A token for a client acting as principal `name`, and whether it was made now. For an agent's
/// name (`claude-code`, `codex`): the live token of its token file when there is one, else a
/// new token, kept in that file too (a file that cannot be written is said on stderr; the token
/// is still given). For any other name: a new token.
///
/// Errors: [`auth::AuthError::Exists`] when `name` has a live token this config dir does not
/// hold, and the store's or the name's errors.
pub fn for_client(
    tokens: &auth::TokenCommands,
    config_dir: &Path,
    name: &str,
) -> Result<(String, bool), auth::AuthError> {
    if let Some(kept) = kept_live(tokens, config_dir, name)? {
        return Ok((kept, false));
    }
    let token = tokens.create(name)?;
    if let Some(agent) = Agent::from_name(name)
        && let Err(e) = write_token(config_dir, agent, &token)
    {
        eprintln!("taskdeck: {e}; `taskdeck hook install {name}` will not find this token");
    }
    Ok((token, true))
}

/// Whether [`for_client`] would make a new token for principal `name` (`true`) or give the live
/// one of the agent's token file (`false`), found without making or changing anything: no store
/// is created in `data_dir` when there is none.
///
/// Errors: those [`for_client`] would meet (the name's, [`auth::AuthError::Exists`], the
/// store's).
pub fn would_make(data_dir: &Path, config_dir: &Path, name: &str) -> Result<bool, auth::AuthError> {
    if !taskdeck_engine::store::Store::file_in(data_dir).exists() {
        auth::check_name(name)?;
        return Ok(true);
    }
    let tokens = auth::TokenCommands::open(data_dir)?;
    if kept_live(&tokens, config_dir, name)?.is_some() {
        return Ok(false);
    }
    tokens.check_create(name)?;
    Ok(true)
}

/// The token kept in the token file of the agent named `name`, when `name` is an agent's and
/// that token is still live in `tokens`' store; `None` otherwise. Errors: the store's.
fn kept_live(
    tokens: &auth::TokenCommands,
    config_dir: &Path,
    name: &str,
) -> Result<Option<String>, auth::AuthError> {
    match Agent::from_name(name).and_then(|a| read_token(config_dir, a)) {
        Some(kept) if tokens.is_live(&kept)? => Ok(Some(kept)),
        _ => Ok(None),
    }
}

/// Says on stderr which token [`for_client`] gave for principal `name`: made now, or the one
/// kept in the agent's token file.
pub fn say_which(name: &str, made: bool, config_dir: &Path) {
    match Agent::from_name(name).filter(|_| !made) {
        Some(agent) => eprintln!(
            "Using principal {name:?}'s token from {}.",
            token_path(config_dir, agent).display()
        ),
        None => eprintln!("Created a token for principal {name:?}."),
    }
}

/// Says on stderr when `token`, given by the person (`--token`), is not a live token of the
/// store in `data_dir` (revoked, mistyped, or another data dir's), or is a person's rather than
/// an agent's. The configuration is still printed (the token may be for a Taskdeck on another
/// data dir, at `--port`), but a client given a dead token is refused at its first request,
/// far from this command, and one given a person's could answer its own questions. Nothing is
/// said when there is no store there to check against.
pub fn warn_unless_live(data_dir: &Path, token: &str) {
    if !taskdeck_engine::store::Store::file_in(data_dir).exists() {
        return;
    }
    let live = auth::TokenCommands::open(data_dir).and_then(|tokens| tokens.live_role(token));
    match live {
        Ok(None) => eprintln!(
            "taskdeck: warning: the --token given is not a live token of {} (revoked, mistyped, \
             or another data dir's): a client given it is refused (401). `taskdeck token create \
             NAME` makes one",
            data_dir.display()
        ),
        Ok(Some(role)) if role != taskdeck_engine::Role::Agent => eprintln!(
            "taskdeck: warning: the --token given is a person's ({}), not an agent's: an agent \
             given it could answer the questions Taskdeck asks a person about its own calls. \
             `taskdeck token create NAME` makes an agent's",
            role.as_str()
        ),
        _ => {}
    }
}
