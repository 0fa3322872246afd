//! Which private-network destinations a principal's HTTP jobs (`wait_for_http_job`) may reach
//! without asking the human: `<config dir>/http-policy.json`, e.g.
//! `{"allowPrivate": {"claude-code": ["127.0.0.1:8080", "build.lan:80", "[::1]:9000"]}}`, one
//! `host:port` authority per entry (a host as the URL writes it, IPv6 in brackets, the port
//! always given). Answering a job's question with "always allow" adds the entry. The file is
//! re-read on every check, so edits apply at once.

use std::{collections::BTreeMap, path::Path};

use serde::{Deserialize, Serialize};

use super::policy_file::PolicyFile;

#[derive(Debug, Default, Serialize, Deserialize)]
struct Allowances {
    #[serde(default, rename = "allowPrivate")]
    allow_private: BTreeMap<String, Vec<String>>,
}

/// The HTTP jobs' policy for private destinations.
pub struct HttpPolicy {
    file: PolicyFile<Allowances>,
}

impl HttpPolicy {
    /// The policy stored in `config_dir` (the file need not exist).
    pub fn new(config_dir: &Path) -> HttpPolicy {
        HttpPolicy {
            file: PolicyFile::new(config_dir.join("http-policy.json")),
        }
    }

    /// True when `principal` may reach `authority` (`host:port`, compared without regard to
    /// case) without asking. A missing or unreadable file allows nothing.
    pub fn allows(&self, principal: &str, authority: &str) -> bool {
        self.file
            .read()
            .allow_private
            .get(principal)
            .is_some_and(|list| list.iter().any(|a| a.eq_ignore_ascii_case(authority)))
    }

    /// Lets `principal` reach `authority` from now on. Errors: the file cannot be written.
    pub fn allow(&self, principal: &str, authority: &str) -> std::io::Result<()> {
        self.file.update(|file| {
            let list = file.allow_private.entry(principal.to_string()).or_default();
            if !list.iter().any(|a| a.eq_ignore_ascii_case(authority)) {
                list.push(authority.to_ascii_lowercase());
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::HttpPolicy;

    #[test]
    fn allowances_are_per_principal_and_per_host_and_port() {
        let dir = tempfile::tempdir().unwrap();
        let p = HttpPolicy::new(dir.path());
        assert!(
            !p.allows("agent", "127.0.0.1:8080"),
            "no file, no allowance"
        );
        std::fs::write(
            dir.path().join("http-policy.json"),
            r#"{"allowPrivate": {"agent": ["Build.LAN:80"]}}"#,
        )
        .unwrap();
        assert!(p.allows("agent", "build.lan:80"));
        assert!(!p.allows("agent", "build.lan:8080"), "another port");
        assert!(!p.allows("other", "build.lan:80"), "another principal");
        p.allow("agent", "[::1]:9000").unwrap();
        assert!(p.allows("agent", "[::1]:9000"));
        assert!(p.allows("agent", "build.lan:80"), "kept what was there");
        p.allow("agent", "[::1]:9000").unwrap();
        let saved = std::fs::read_to_string(dir.path().join("http-policy.json")).unwrap();
        assert_eq!(saved.matches("[::1]:9000").count(), 1, "{saved}");
    }
}
