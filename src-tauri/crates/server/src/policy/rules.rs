//! One policy rule (a line of `policy.json`'s `rules`) and how it matches a call: principal,
//! server and tool are globs, and each named argument's value must match its glob (`*` matches
//! any text, `/` included; a non-string value is compared as its compact JSON). Also the checks
//! a rule passes before it is stored (`PUT /v1/policy`, a hand-edited file).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::terms::ApprovalTerms;

/// What a matching rule decides (`"allow"`, `"ask"` or `"deny"` in the file).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    /// The call runs without asking anyone.
    Allow,
    /// The human is asked first (an `input_required` question only the human answers).
    Ask,
    /// The call is refused at once with a tool error naming the rule.
    Deny,
}

/// One rule of `<config dir>/policy.json`, e.g.
/// `{"id": "r-5f2c0a1b", "principal": "claude-code", "server": "fs", "tool": "write_file",
///   "arguments": {"path": "/home/me/notes/*"}, "decision": "allow", "note": "...",
///   "createdAtMs": 1764600000000}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Rule {
    /// Short and stable: `r-` and 8 hex digits (assigned when a rule comes without one).
    #[serde(default)]
    #[schema(pattern = r"^(r-[A-Za-z0-9-]{1,38})?$")]
    pub id: String,
    /// The principal (agent name) it holds for: a glob, `*` for every principal.
    #[schema(min_length = 1, pattern = r"\S")]
    pub principal: String,
    /// The server: an upstream's name from `servers.json`, `taskdeck` for Taskdeck's own tools,
    /// or a glob (`*`).
    #[schema(min_length = 1, pattern = r"\S")]
    pub server: String,
    /// The tool's name as the server has it (a glob: `write_*`, `*`).
    #[schema(min_length = 1, pattern = r"\S")]
    pub tool: String,
    /// Argument name → glob its value must match. Absent or empty: any arguments.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub arguments: BTreeMap<String, String>,
    /// The call may carry no argument beyond those `arguments` names (what "always allow" saves:
    /// exactly the approved call, not that call with more options).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub only_these_arguments: bool,
    /// For `wait_for_http_job`: the rule allows public destinations only. A loopback,
    /// link-local or private address its host resolves to is asked about all the same, though
    /// the rule names the host (what "always allow" saves for a destination that was public
    /// when allowed: a name's address can change, and one that turns private would otherwise
    /// let jobs reach this machine's network unasked: DNS rebinding).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub public_only: bool,
    /// What the rule decides.
    pub decision: Decision,
    /// For `ask`: the approval's expiry, its default and how many humans must approve (absent:
    /// the file's `approval`, then the built-in defaults; see [`super::terms`]).
    #[serde(
        default,
        skip_serializing_if = "ApprovalTerms::is_empty",
        deserialize_with = "super::terms::from_object"
    )]
    pub approval: ApprovalTerms,
    /// Why it exists (e.g. "always allow, from task 01J…"), shown in the Policies view.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// When it was made, Unix ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at_ms: Option<i64>,
}

/// How globs match: case-sensitive, and `*` crosses `/` (a path or URL pattern `/a/*` covers
/// `/a/b/c`).
const MATCH: glob::MatchOptions = glob::MatchOptions {
    case_sensitive: true,
    require_literal_separator: false,
    require_literal_leading_dot: false,
};

/// True when `text` matches the glob `pattern` (a pattern that is not a valid glob matches
/// only the text equal to it).
pub fn glob_matches(pattern: &str, text: &str) -> bool {
    match glob::Pattern::new(pattern) {
        Ok(p) => p.matches_with(text, MATCH),
        Err(_) => pattern == text,
    }
}

/// [`glob_matches`] ignoring ASCII case, for names that are one name in any case: principals
/// (no two differ only in case: `AuthError::CaseOf`) and servers (an upstream's name is
/// lowercase), so that a rule written `Agent1` or `FS` is not silently a rule for no one.
pub fn glob_matches_any_case(pattern: &str, text: &str) -> bool {
    let any_case = glob::MatchOptions {
        case_sensitive: false,
        ..MATCH
    };
    match glob::Pattern::new(pattern) {
        Ok(p) => p.matches_with(text, any_case),
        Err(_) => pattern.eq_ignore_ascii_case(text),
    }
}

/// The text an argument's value is matched as: a string as it is, anything else as its compact
/// JSON (`5`, `true`, `["a","b"]`).
pub fn argument_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// True when `pattern` holds a glob's special characters (`*`, `?`, `[`).
fn is_glob(pattern: &str) -> bool {
    pattern.contains(['*', '?', '['])
}

/// The glob that matches exactly `text` and nothing else.
pub fn exact(text: &str) -> String {
    glob::Pattern::escape(text)
}

impl Rule {
    /// True when the rule covers a call of `tool` on `server` by `principal` with `arguments`
    /// (a JSON object); principal and server match in any case, the tool and the arguments as
    /// written. For an `allow` rule, an argument named in `exact_only` matches only a
    /// pattern equal to its escaped value ([`exact`]): no wildcards lets such a call through.
    /// `ask` and `deny` rules match it as usual (a wildcard that catches it still refuses or
    /// asks, with its terms).
    pub fn matches(
        &self,
        principal: &str,
        server: &str,
        tool: &str,
        arguments: &Value,
        exact_only: &[&str],
    ) -> bool {
        glob_matches_any_case(&self.principal, principal)
            && glob_matches_any_case(&self.server, server)
            && glob_matches(&self.tool, tool)
            && (!self.only_these_arguments
                || arguments
                    .as_object()
                    .is_none_or(|given| given.keys().all(|k| self.arguments.contains_key(k))))
            && self.arguments.iter().all(|(name, pattern)| {
                let Some(value) = arguments.get(name) else {
                    return false;
                };
                let text = argument_text(value);
                let exact_only =
                    self.decision == Decision::Allow && exact_only.contains(&name.as_str());
                match exact_only {
                    true => *pattern == exact(&text),
                    false => glob_matches(pattern, &text),
                }
            })
    }

    /// Checks what a stored rule must be: an id of the form `r-` + hex (after
    /// [`assign_id`](Rule::assign_id)), non-empty principal, server and tool, every pattern a
    /// valid glob, and `publicOnly` only on an `allow` with a `url` pattern (where it means
    /// something). Errors: what is wrong, naming the field.
    pub fn check(&self) -> Result<(), String> {
        let id_ok = self.id.len() > 2
            && self.id.len() <= 40
            && self.id.starts_with("r-")
            && self.id[2..]
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-');
        if !id_ok {
            return Err(format!(
                "id {:?} is not a rule id (r- and letters or digits)",
                self.id
            ));
        }
        let named = [
            ("principal", &self.principal),
            ("server", &self.server),
            ("tool", &self.tool),
        ];
        for (field, pattern) in named {
            if pattern.trim().is_empty() {
                return Err(format!("{field} is empty (use \"*\" for any)"));
            }
            glob::Pattern::new(pattern)
                .map_err(|e| format!("{field} {pattern:?} is not a valid pattern: {e}"))?;
        }
        self.approval.check()?;
        if self.public_only
            && (self.decision != Decision::Allow || !self.arguments.contains_key("url"))
        {
            return Err(
                "publicOnly is for an allow rule with a url pattern (wait_for_http_job's \
                 destinations)"
                    .into(),
            );
        }
        for (name, pattern) in &self.arguments {
            if name.is_empty() {
                return Err("an argument name is empty".into());
            }
            glob::Pattern::new(pattern)
                .map_err(|e| format!("arguments.{name} {pattern:?} is not a valid pattern: {e}"))?;
        }
        Ok(())
    }

    /// Why the rule can never match a call, when it names one of Taskdeck's own tools (server
    /// `taskdeck`) in a way no call of it is policed: a tool Taskdeck does not police
    /// (`request_approval` is a question to a person already), a tool name in other case (tool
    /// names match as written), or an argument the tool's policed call never has:
    /// `run_command`'s rules see only `command` (the command line, `argv` quoted for a shell)
    /// and `cwd`; `wait_for_http_job`'s see `url` (the URL it starts at, its `monitor` too),
    /// `method`, `body` and `pollIntervalMs`, never `headers`. Such a rule is refused when
    /// written ([`super::Policy::replace_if`]): a "two humans for deploys" rule on `argv` would
    /// silently ask no one. A file that holds one is still read (it just never matches).
    pub fn never_matches(&self) -> Option<String> {
        const POLICED: [(&str, &[&str]); 2] = [
            ("run_command", &["command", "cwd"]),
            (
                "wait_for_http_job",
                &["url", "method", "body", "pollIntervalMs"],
            ),
        ];
        if !self.server.eq_ignore_ascii_case("taskdeck") || is_glob(&self.tool) {
            return None;
        }
        let Some((tool, sees)) = POLICED.iter().find(|(t, _)| *t == self.tool) else {
            let why = match POLICED
                .iter()
                .find(|(t, _)| t.eq_ignore_ascii_case(&self.tool))
            {
                Some((tool, _)) => format!("tool names match as written: write `{tool}`"),
                None => format!(
                    "Taskdeck's policy decides only run_command and wait_for_http_job of its own \
                     tools, so a rule for {:?} never applies",
                    self.tool
                ),
            };
            return Some(why);
        };
        let unseen = self
            .arguments
            .keys()
            .find(|k| !sees.contains(&k.as_str()))?;
        let sees = sees
            .iter()
            .map(|k| format!("`{k}`"))
            .collect::<Vec<_>>()
            .join(", ");
        let hint = match (*tool, unseen.as_str()) {
            ("run_command", _) => " (argv is matched as `command`, quoted for a shell)",
            (_, "headers") => " (no rule sees a request's headers)",
            (_, "monitor") => " (a monitor is matched as `url`)",
            _ => "",
        };
        Some(format!(
            "{tool}'s rules see only {sees}, so `arguments.{unseen}` would never match{hint}"
        ))
    }

    /// Gives the rule a fresh id when it has none.
    pub fn assign_id(&mut self) {
        if self.id.is_empty() {
            self.id = new_id();
        }
    }

    /// True when the rule says the same as `other` (all but id, note and time).
    pub fn same_as(&self, other: &Rule) -> bool {
        (
            &self.principal,
            &self.server,
            &self.tool,
            &self.arguments,
            self.decision,
            &self.approval,
        ) == (
            &other.principal,
            &other.server,
            &other.tool,
            &other.arguments,
            other.decision,
            &other.approval,
        )
    }
}

/// A new rule id: `r-` and 8 random hex digits.
pub fn new_id() -> String {
    format!("r-{}", hex::encode(rand::random::<[u8; 4]>()))
}

/// True when the URL glob `pattern` names `host` literally: its host part (between `://` and
/// the next `/`, without user info and port) is exactly `host` escaped, so no wildcard there.
/// `host` as a URL writes it (`127.0.0.1`, `[::1]`, `build.lan`), compared without regard to
/// case.
pub fn names_host_literally(pattern: &str, host: &str) -> bool {
    let Some((_, rest)) = pattern.split_once("://") else {
        return false;
    };
    let authority = rest.split('/').next().unwrap_or_default();
    let authority = authority.rsplit_once('@').map_or(authority, |(_, a)| a);
    let escaped = exact(&host.to_ascii_lowercase());
    let authority = authority.to_ascii_lowercase();
    // The host, alone or followed by `:port` (any port pattern: the whole URL glob decides it).
    authority == escaped
        || authority
            .strip_prefix(&escaped)
            .is_some_and(|tail| tail.starts_with(':'))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn rule(principal: &str, server: &str, tool: &str, args: &[(&str, &str)]) -> Rule {
        Rule {
            id: new_id(),
            principal: principal.into(),
            server: server.into(),
            tool: tool.into(),
            arguments: args
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            only_these_arguments: false,
            public_only: false,
            decision: Decision::Allow,
            note: None,
            created_at_ms: None,
            approval: Default::default(),
        }
    }

    #[test]
    fn names_and_arguments_match_as_globs() {
        let r = rule("claude-*", "fs", "write_*", &[("path", "/home/me/notes/*")]);
        let args = json!({"path": "/home/me/notes/a/b.md", "content": "x"});
        assert!(r.matches("claude-code", "fs", "write_file", &args, &[]));
        assert!(!r.matches("codex", "fs", "write_file", &args, &[]));
        assert!(!r.matches("claude-code", "git", "write_file", &args, &[]));
        assert!(!r.matches("claude-code", "fs", "read_file", &args, &[]));
        let elsewhere = json!({"path": "/etc/passwd"});
        assert!(!r.matches("claude-code", "fs", "write_file", &elsewhere, &[]));
        assert!(
            !r.matches("claude-code", "fs", "write_file", &json!({}), &[]),
            "a named argument that is missing does not match"
        );
    }

    #[test]
    fn non_string_values_are_compared_as_compact_json() {
        let r = rule("*", "*", "*", &[("n", "5"), ("list", "[[]\"a\",*")]);
        assert!(r.matches("a", "s", "t", &json!({"n": 5, "list": ["a", "b"]}), &[]));
        assert!(!r.matches("a", "s", "t", &json!({"n": 6, "list": ["a"]}), &[]));
    }

    #[test]
    fn exact_only_arguments_ignore_wildcards() {
        let wide = rule("*", "*", "*", &[("command", "cargo test *")]);
        let line = json!({"command": "cargo test x; rm -rf ~"});
        assert!(wide.matches("a", "s", "t", &line, &[]));
        assert!(!wide.matches("a", "s", "t", &line, &["command"]));
        let mut refuse = wide.clone();
        refuse.decision = Decision::Deny;
        assert!(
            refuse.matches("a", "s", "t", &line, &["command"]),
            "a deny (or ask) rule's wildcard still catches a line with shell syntax"
        );
        let narrow = rule("*", "*", "*", &[("command", &exact("make test[1] && ok"))]);
        let line = json!({"command": "make test[1] && ok"});
        assert!(narrow.matches("a", "s", "t", &line, &["command"]));
    }

    #[test]
    fn checks_name_the_bad_field() {
        let mut r = rule("", "fs", "t", &[]);
        assert!(r.check().unwrap_err().contains("principal"));
        r.principal = "*".into();
        r.arguments.insert("path".into(), "[".into());
        assert!(r.check().unwrap_err().contains("arguments.path"));
        r.arguments.clear();
        assert!(r.check().is_ok());
        r.id = "x".into();
        assert!(r.check().unwrap_err().contains("id"));
        let id = new_id();
        assert!(id.starts_with("r-") && id.len() == 10, "{id}");
    }

    #[test]
    fn a_literal_host_is_told_from_a_wildcard_one() {
        assert!(names_host_literally("http://127.0.0.1:8080/*", "127.0.0.1"));
        assert!(names_host_literally("https://Build.LAN/*", "build.lan"));
        assert!(names_host_literally("http*://[[]::1[]]:9000/*", "[::1]"));
        assert!(names_host_literally("http://bob@127.0.0.1/x", "127.0.0.1"));
        assert!(!names_host_literally("http://127.0.0.*/*", "127.0.0.1"));
        assert!(!names_host_literally("http://*/*", "127.0.0.1"));
        assert!(!names_host_literally("*", "127.0.0.1"));
        assert!(!names_host_literally(
            "http://127.0.0.1.evil/*",
            "127.0.0.1"
        ));
    }
}
