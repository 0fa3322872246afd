//! Which commands a principal may run without asking the human: glob patterns per principal in
//! `<config dir>/command-policy.json`, e.g. `{"allow": {"claude-code": ["cargo test *"]}}`.
//! Approving a command in the window with "always allow" adds its exact command line.

use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
    sync::Mutex,
};

use serde::{Deserialize, Serialize};

#[derive(Debug, Default, Serialize, Deserialize)]
struct PolicyFile {
    #[serde(default)]
    allow: BTreeMap<String, Vec<String>>,
}

/// The command policy, re-read from disk on every check (so edits apply at once).
pub struct CommandPolicy {
    path: PathBuf,
    lock: Mutex<()>,
}

impl CommandPolicy {
    /// The policy stored in `config_dir`.
    pub fn new(config_dir: &Path) -> CommandPolicy {
        CommandPolicy {
            path: config_dir.join("command-policy.json"),
            lock: Mutex::new(()),
        }
    }

    fn load(&self) -> PolicyFile {
        std::fs::read_to_string(&self.path)
            .ok()
            .and_then(|s| serde_json::from_str(&s).ok())
            .unwrap_or_default()
    }

    /// The pattern that allows `command_line` for `principal`, if any. A pattern equal to the
    /// escaped line (what "always allow" saves) allows exactly that line; a pattern with
    /// wildcards (`*` matches any text, spaces and slashes included) is used only when
    /// `wildcards_ok` (the caller vouches that the line holds no shell syntax).
    pub fn allowing_pattern(
        &self,
        principal: &str,
        command_line: &str,
        wildcards_ok: bool,
    ) -> Option<String> {
        let _g = self.lock.lock().unwrap();
        let opts = glob::MatchOptions {
            case_sensitive: true,
            require_literal_separator: false,
            require_literal_leading_dot: false,
        };
        let exact = glob::Pattern::escape(command_line);
        self.load()
            .allow
            .get(principal)?
            .iter()
            .find(|p| {
                **p == exact
                    || (wildcards_ok
                        && glob::Pattern::new(p)
                            .is_ok_and(|pat| pat.matches_with(command_line, opts)))
            })
            .cloned()
    }

    /// Allows exactly `command_line` for `principal` from now on. Errors: the file cannot be written.
    pub fn allow_exact(&self, principal: &str, command_line: &str) -> std::io::Result<()> {
        let _g = self.lock.lock().unwrap();
        let mut file = self.load();
        let pattern = glob::Pattern::escape(command_line);
        let list = file.allow.entry(principal.to_string()).or_default();
        if !list.contains(&pattern) {
            list.push(pattern);
        }
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        std::fs::write(&self.path, serde_json::to_vec_pretty(&file)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_per_principal() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("command-policy.json"),
            r#"{"allow": {"claude-code": ["cargo test *"]}}"#,
        )
        .unwrap();
        let p = CommandPolicy::new(dir.path());
        assert_eq!(
            p.allowing_pattern("claude-code", "cargo test --all -- a/b", true)
                .as_deref(),
            Some("cargo test *")
        );
        assert!(
            p.allowing_pattern("claude-code", "cargo test x; rm -rf ~", false)
                .is_none(),
            "no wildcards for shell syntax"
        );
        assert!(
            p.allowing_pattern("claude-code", "cargo build", true)
                .is_none()
        );
        assert!(p.allowing_pattern("other", "cargo test x", true).is_none());
        p.allow_exact("other", "make test[1] && echo ok").unwrap();
        assert!(
            p.allowing_pattern("other", "make test[1] && echo ok", false)
                .is_some(),
            "an exact line is allowed as saved"
        );
        assert!(
            p.allowing_pattern("other", "make test1 && echo ok", true)
                .is_none(),
            "the exact line, not a class"
        );
    }
}
