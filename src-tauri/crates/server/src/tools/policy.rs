//! Which commands a principal may run without asking the human: rules per principal in
//! `<config dir>/command-policy.json`. A rule is a glob pattern for any directory, or a pattern
//! and the one directory it holds in:
//! `{"allow": {"claude-code": ["cargo test *", {"command": "make", "cwd": "/home/me/app"}]}}`.
//! Approving a command in the window with "always allow" adds its exact command line with the
//! directory it ran in.

use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
};

use serde::{Deserialize, Serialize};

use super::policy_file::PolicyFile;

#[derive(Debug, Default, Serialize, Deserialize)]
struct Rules {
    #[serde(default)]
    allow: BTreeMap<String, Vec<Rule>>,
}

/// One allow rule: a command pattern, in any directory or in one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
enum Rule {
    Anywhere(String),
    In { command: String, cwd: PathBuf },
}

impl Rule {
    fn pattern(&self) -> &str {
        match self {
            Rule::Anywhere(p) | Rule::In { command: p, .. } => p,
        }
    }

    /// True when the rule holds in `cwd` (compared after resolving symlinks where possible).
    fn holds_in(&self, cwd: &Path) -> bool {
        match self {
            Rule::Anywhere(_) => true,
            Rule::In { cwd: dir, .. } => resolved(dir) == resolved(cwd),
        }
    }
}

fn resolved(dir: &Path) -> PathBuf {
    dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf())
}

/// The command policy, re-read from disk on every check (so edits apply at once).
pub struct CommandPolicy {
    file: PolicyFile<Rules>,
}

impl CommandPolicy {
    /// The policy stored in `config_dir`.
    pub fn new(config_dir: &Path) -> CommandPolicy {
        CommandPolicy {
            file: PolicyFile::new(config_dir.join("command-policy.json")),
        }
    }

    /// The pattern that allows `command_line` in directory `cwd` for `principal`, if any. A
    /// pattern equal to the escaped line (what "always allow" saves) allows exactly that line; a
    /// pattern with wildcards (`*` matches any text, spaces and slashes included) is used only
    /// when `wildcards_ok` (the caller vouches that the line holds no shell syntax). A rule with
    /// a `cwd` holds only in that directory.
    pub fn allowing_pattern(
        &self,
        principal: &str,
        command_line: &str,
        cwd: &Path,
        wildcards_ok: bool,
    ) -> Option<String> {
        let opts = glob::MatchOptions {
            case_sensitive: true,
            require_literal_separator: false,
            require_literal_leading_dot: false,
        };
        let exact = glob::Pattern::escape(command_line);
        self.file
            .read()
            .allow
            .get(principal)?
            .iter()
            .filter(|r| r.holds_in(cwd))
            .map(Rule::pattern)
            .find(|p| {
                *p == exact
                    || (wildcards_ok
                        && glob::Pattern::new(p)
                            .is_ok_and(|pat| pat.matches_with(command_line, opts)))
            })
            .map(str::to_string)
    }

    /// Allows exactly `command_line` in directory `cwd` for `principal` from now on.
    /// Errors: the file cannot be written.
    pub fn allow_exact(
        &self,
        principal: &str,
        command_line: &str,
        cwd: &Path,
    ) -> std::io::Result<()> {
        let rule = Rule::In {
            command: glob::Pattern::escape(command_line),
            cwd: resolved(cwd),
        };
        self.file.update(|rules| {
            let list = rules.allow.entry(principal.to_string()).or_default();
            if !list.contains(&rule) {
                list.push(rule);
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_per_principal() {
        let dir = tempfile::tempdir().unwrap();
        let here = dir.path();
        std::fs::write(
            here.join("command-policy.json"),
            r#"{"allow": {"claude-code": ["cargo test *"]}}"#,
        )
        .unwrap();
        let p = CommandPolicy::new(here);
        assert_eq!(
            p.allowing_pattern("claude-code", "cargo test --all -- a/b", here, true)
                .as_deref(),
            Some("cargo test *")
        );
        assert!(
            p.allowing_pattern("claude-code", "cargo test x; rm -rf ~", here, false)
                .is_none(),
            "no wildcards for shell syntax"
        );
        assert!(
            p.allowing_pattern("claude-code", "cargo build", here, true)
                .is_none()
        );
        assert!(
            p.allowing_pattern("other", "cargo test x", here, true)
                .is_none()
        );
    }

    #[test]
    fn always_allow_holds_for_the_exact_line_in_its_directory() {
        let dir = tempfile::tempdir().unwrap();
        let (config, app, elsewhere) = (dir.path(), dir.path().join("app"), dir.path().join("x"));
        std::fs::create_dir_all(&app).unwrap();
        std::fs::create_dir_all(&elsewhere).unwrap();
        let p = CommandPolicy::new(config);
        p.allow_exact("other", "make test[1] && echo ok", &app)
            .unwrap();
        assert!(
            p.allowing_pattern("other", "make test[1] && echo ok", &app, false)
                .is_some(),
            "an exact line is allowed as saved"
        );
        assert!(
            p.allowing_pattern("other", "make test[1] && echo ok", &app.join("."), false)
                .is_some(),
            "the same directory, spelled differently"
        );
        assert!(
            p.allowing_pattern("other", "make test[1] && echo ok", &elsewhere, false)
                .is_none(),
            "not in another directory"
        );
        assert!(
            p.allowing_pattern("other", "make test1 && echo ok", &app, true)
                .is_none(),
            "the exact line, not a class"
        );
        let saved = std::fs::read_to_string(config.join("command-policy.json")).unwrap();
        assert!(saved.contains("\"cwd\""), "{saved}");
    }
}
