//! The approval policy (interim: annotation defaults only; the rules file comes with the
//! policy module proper).

use std::path::Path;

use serde_json::Value;

/// A call the policy decides on.
pub struct PolicyCall<'a> {
    pub principal: &'a str,
    pub server: &'a str,
    pub tool: &'a str,
    pub arguments: &'a Value,
    pub hints: ToolHints,
}

/// The MCP tool annotations the defaults read.
#[derive(Debug, Clone, Copy, Default)]
pub struct ToolHints {
    pub read_only: Option<bool>,
    pub destructive: Option<bool>,
}

/// What to do with a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    Allow,
    Ask,
    Deny,
}

/// A decision and why.
#[derive(Debug, Clone)]
pub struct Verdict {
    pub decision: Decision,
    pub rule_id: Option<String>,
    pub reason: String,
}

/// The policy.
pub struct Policy {}

impl Policy {
    /// The policy of `config_dir`.
    pub fn new(_config_dir: &Path) -> Policy {
        Policy {}
    }

    /// Decides `call`.
    pub fn decide(&self, call: &PolicyCall) -> Verdict {
        if call.hints.read_only == Some(true) {
            Verdict {
                decision: Decision::Allow,
                rule_id: None,
                reason: "default: readOnlyHint".into(),
            }
        } else {
            Verdict {
                decision: Decision::Ask,
                rule_id: None,
                reason: "default: not read-only".into(),
            }
        }
    }

    /// Writes a narrow allow rule.
    pub fn allow_always(
        &self,
        _principal: &str,
        _server: &str,
        _tool: &str,
        _arguments: &Value,
        _note: &str,
    ) -> std::io::Result<String> {
        Err(std::io::Error::other("no rules file yet"))
    }
}
