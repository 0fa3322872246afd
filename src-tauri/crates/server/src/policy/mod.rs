//! The one policy for every approval: `<config dir>/policy.json`, rules of principal × server
//! × tool × argument patterns → `allow`, `ask` or `deny`, first match wins. No rule matching
//! gives the default ([`defaults`]): from the tool's MCP annotations for an upstream tool,
//! Taskdeck's own for its tools (`run_command` and `wait_for_http_job` ask). `run_command`,
//! `wait_for_http_job` and the gateway's calls all ask it; "always allow" on an approval adds a
//! narrow rule. The old per-tool files (`command-policy.json`, `http-policy.json`) are folded
//! in on first start ([`migrate`]).

pub mod defaults;
pub mod file;
pub mod migrate;
pub mod own_files;
pub mod rules;
pub mod terms;

use std::{path::Path, sync::Arc};

use serde_json::Value;

pub use file::PolicyDocument;
pub use rules::{Decision, Rule};
pub use terms::{ApprovalTerms, OnExpiry, Terms};

/// True when a command line holds shell syntax that could chain or substitute other commands
/// behind an allowed prefix (`;`, `&`, `|`, `$`, backquote, `<`, `>`, parentheses, newline,
/// backslash): then only an `allow` rule naming the exact line lets it through
/// ([`Policy::decide_exact`]).
pub fn has_shell_syntax(line: &str) -> bool {
    line.contains([';', '&', '|', '$', '`', '<', '>', '(', ')', '\n', '\\'])
}

/// The name Taskdeck's own tools have as a server in rules (`{"server": "taskdeck"}`).
pub const TASKDECK_SERVER: &str = "taskdeck";
/// The file's name in the config dir.
pub const FILE_NAME: &str = "policy.json";

/// What a tool's MCP annotations say about it (`readOnlyHint`, `destructiveHint`; MCP
/// 2025-11-25 §Tool Annotations), `None` when not given.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ToolHints {
    /// `readOnlyHint`.
    pub read_only: Option<bool>,
    /// `destructiveHint`.
    pub destructive: Option<bool>,
}

/// One call the policy decides on.
#[derive(Debug, Clone, Copy)]
pub struct PolicyCall<'a> {
    /// Who calls: the principal (agent) name.
    pub principal: &'a str,
    /// Which server's tool: an upstream's name, or [`TASKDECK_SERVER`].
    pub server: &'a str,
    /// The tool's name on that server.
    pub tool: &'a str,
    /// Its arguments (a JSON object; rules match its top-level values).
    pub arguments: &'a Value,
    /// Its annotations, for the default.
    pub hints: ToolHints,
}

/// What the policy says about a call, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    /// Allow, ask or deny.
    pub decision: Decision,
    /// The rule that decided, `None` for a default.
    pub rule_id: Option<String>,
    /// For people: `"rule r-5f2c0a1b"` (with its note when it has one: `"rule r-5f2c0a1b (no
    /// deploys on Fridays)"`), or the default's reason (`"default: readOnlyHint"`).
    pub reason: String,
    /// For `ask`: the approval's expiry, its default and how many humans must approve.
    pub terms: Terms,
}

/// The policy of one config dir. One per process (`serve.rs` makes it and gives it to the
/// tools and the gateway).
pub struct Policy {
    file: file::PolicyFile,
    /// Taskdeck's own dirs: a call naming them goes to a person ([`own_files`]).
    own_files: own_files::OwnFiles,
}

impl Policy {
    /// The policy in `config_dir/policy.json`, after folding in `command-policy.json` and
    /// `http-policy.json` if they are there ([`migrate::migrate`]; a migration that fails is
    /// logged and tried again at the next start).
    pub fn new(config_dir: &Path) -> Policy {
        let mut own_files = own_files::OwnFiles::default();
        own_files.add(config_dir);
        let policy = Policy {
            file: file::PolicyFile::new(config_dir.join(FILE_NAME)),
            own_files,
        };
        migrate::migrate(&policy.file, config_dir);
        policy
    }

    /// This policy, counting `dir` (the data dir: the store, every principal's command logs)
    /// among Taskdeck's own files as it does the config dir ([`own_files`]).
    pub fn keeping_to_itself(mut self, dir: &Path) -> Policy {
        self.own_files.add(dir);
        self
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        self.file.path()
    }

    /// The verdict on `call`: the first rule that matches it, else the default.
    pub fn decide(&self, call: &PolicyCall) -> Verdict {
        self.decide_exact(call, &[])
    }

    /// Like [`Policy::decide`], but for `allow` rules the arguments named in `exact_only` match
    /// only a pattern that is their exact value escaped (no wildcards): `run_command` and the
    /// agents' shell tools pass `command` when the line holds shell syntax
    /// ([`has_shell_syntax`]), so `cargo test *` cannot wave through `cargo test; rm -rf ~`.
    pub fn decide_exact(&self, call: &PolicyCall, exact_only: &[&str]) -> Verdict {
        // One read of the file's state for the whole verdict.
        let (in_force, problem) = self.file.in_force();
        let doc = in_force.as_deref().and_then(|d| d.as_ref().ok());
        let file_terms = doc.map(|d| d.approval.clone()).unwrap_or_default();
        let mut verdict = match doc.and_then(|d| rule_in(d, call, exact_only)) {
            Some(rule) => Verdict {
                decision: rule.decision,
                reason: rule_reason(&rule),
                terms: rule.approval.resolve(&file_terms),
                rule_id: Some(rule.id),
            },
            None => Verdict {
                terms: file_terms.resolve(&ApprovalTerms::default()),
                ..defaults::default_verdict(call)
            },
        };
        // Said wherever the verdict is shown (the question, a hook's answer, the audit log).
        // With no rules known, nothing runs by default: a deny rule the file may hold, a typo
        // away, is never lifted.
        match (problem, in_force) {
            (None, _) => {}
            (Some(_), Some(_)) => verdict.reason.push_str(
                " (policy.json is not valid: the rules it held when last valid apply until it \
                 is fixed; see GET /v1/policy or taskdeck doctor)",
            ),
            (Some(_), None) => {
                if verdict.decision == Decision::Allow {
                    verdict.decision = Decision::Ask;
                }
                verdict.reason.push_str(
                    " (policy.json is not valid, and was not since Taskdeck started: no rule \
                     applies, and a call that would run by default is asked; see GET \
                     /v1/policy or taskdeck doctor)",
                );
            }
        }
        // Taskdeck's tokens and store are never given to an agent without a person's word,
        // and the person asked is told what the call touches.
        if verdict.decision != Decision::Deny
            && let Some(dir) = self.own_files.named_in(call.arguments)
        {
            verdict.decision = Decision::Ask;
            verdict.reason.push_str(&format!(
                " (it names Taskdeck's own files, {dir}: a person decides)"
            ));
        }
        verdict
    }

    /// The dir (as shown) of Taskdeck's own files that `arguments` name ([`own_files`]), if any:
    /// for what answers at once and so cannot be asked of a person (`resources/read`,
    /// `prompts/get`), which is then refused.
    pub fn own_files_named(&self, arguments: &Value) -> Option<String> {
        self.own_files.named_in(arguments).map(str::to_string)
    }

    /// The rules in force ([`file::PolicyFile::in_force`]), `None` when none are known.
    fn in_force(&self) -> Option<Arc<Result<PolicyDocument, String>>> {
        self.file.in_force().0
    }

    /// The first rule in force that matches `call`, if any (none when no rules are known:
    /// the file was not valid since Taskdeck started).
    pub fn matching_rule(&self, call: &PolicyCall, exact_only: &[&str]) -> Option<Rule> {
        let doc = self.in_force()?;
        rule_in(doc.as_ref().as_ref().ok()?, call, exact_only)
    }

    /// What the policy says of a human's edit of a call, `call` being the call as edited: it is
    /// decided as the agent's call would be ([`Policy::decide`]), so a `deny` rule refuses it
    /// and an `ask` (a rule's or the default's) needs its terms' humans; an `allow` needs none
    /// beyond those the original call's question asks.
    pub fn judge_edit(&self, call: &PolicyCall) -> crate::approvals::ask::EditVerdict {
        use crate::approvals::ask::EditVerdict;
        let verdict = self.decide(call);
        match verdict.decision {
            Decision::Deny => EditVerdict::Denied(verdict.reason),
            Decision::Ask => EditVerdict::Needs {
                humans: verdict.terms.humans,
                asked_by_rule: verdict.rule_id.is_some(),
                why: verdict.reason,
            },
            Decision::Allow => EditVerdict::Needs {
                humans: 0,
                why: verdict.reason,
                asked_by_rule: false,
            },
        }
    }

    /// True when some `deny` rule covers `tool` on `server` by `principal` for some arguments
    /// (its argument patterns not looked at): a cheap test before checking many arguments.
    pub fn may_deny(&self, principal: &str, server: &str, tool: &str) -> bool {
        let Some(doc) = self.in_force() else {
            return false;
        };
        let Ok(doc) = doc.as_ref().as_ref() else {
            return false;
        };
        doc.rules.iter().any(|r| {
            r.decision == Decision::Deny
                && rules::glob_matches_any_case(&r.principal, principal)
                && rules::glob_matches_any_case(&r.server, server)
                && rules::glob_matches(&r.tool, tool)
        })
    }

    /// Allows exactly this call from now on: appends a rule for `principal`, `server`, `tool`
    /// that admits no other argument and whose argument patterns are the given values escaped (`arguments`, a JSON object: each
    /// top-level value, a non-string as its compact JSON), with `note`. An equal rule already
    /// there is kept and its id returned. Returns the rule's id. Errors: the file is not
    /// valid, or cannot be written.
    pub fn allow_always(
        &self,
        principal: &str,
        server: &str,
        tool: &str,
        arguments: &Value,
        note: &str,
    ) -> std::io::Result<String> {
        let patterns = arguments
            .as_object()
            .into_iter()
            .flatten()
            .map(|(k, v)| (k.clone(), rules::exact(&rules::argument_text(v))))
            .collect();
        self.append(Rule {
            id: String::new(),
            principal: rules::exact(principal),
            server: rules::exact(server),
            tool: rules::exact(tool),
            arguments: patterns,
            only_these_arguments: true,
            public_only: false,
            decision: Decision::Allow,
            note: (!note.is_empty()).then(|| note.to_string()),
            created_at_ms: Some(chrono::Utc::now().timestamp_millis()),
            approval: Default::default(),
        })
    }

    /// Appends `rule` (an id is given when it has none) unless an equal one is there. Returns
    /// the id of the rule that now says it. Errors: the rule is not valid
    /// (`ErrorKind::InvalidInput`), the file is not valid, or cannot be written.
    pub fn append(&self, mut rule: Rule) -> std::io::Result<String> {
        rule.assign_id();
        rule.check()
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
        self.file.update(|doc| {
            if let Some(same) = doc.rules.iter().find(|r| r.same_as(&rule)) {
                return same.id.clone();
            }
            let id = rule.id.clone();
            doc.rules.push(rule);
            id
        })
    }

    /// The rules in order. Errors: why the file is not valid.
    pub fn rules(&self) -> Result<Vec<Rule>, String> {
        self.file.read().as_ref().clone().map(|doc| doc.rules)
    }

    /// The whole document (rules and the file's approval terms). Errors: why the file is not
    /// valid.
    pub fn document(&self) -> Result<PolicyDocument, String> {
        self.file.read().as_ref().clone()
    }

    /// Replaces the whole document: every rule (ids given to those without one) and the file's
    /// approval terms. Returns what was stored. Errors: a rule or the terms are not valid, or
    /// two rules share an id (`ErrorKind::InvalidInput`), or the file cannot be written.
    pub fn replace(&self, doc: PolicyDocument) -> std::io::Result<PolicyDocument> {
        match self.replace_if(doc, None) {
            Ok((doc, _)) => Ok(doc),
            Err(file::ReplaceError::Io(e)) => Err(e),
            Err(file::ReplaceError::Changed { .. }) => unreachable!("no version was expected"),
        }
    }

    /// The version of policy.json now ([`file::PolicyFile::version`]) with its document (or
    /// why it is not valid).
    pub fn versioned_document(&self) -> (String, Result<PolicyDocument, String>) {
        let (version, doc) = self.file.read_versioned();
        (version, doc.as_ref().clone())
    }

    /// [`Policy::replace`] if the file is still at version `expected` (whatever it holds when
    /// `None`): a writer that read one version never overwrites a change made since (by
    /// another admin, a human's "always allow", an edit of the file). A rule the file does not
    /// hold yet, and that has no `createdAtMs`, is stamped with the time now; a rule that can
    /// never match ([`Rule::never_matches`]) is refused like an invalid one, unless the file
    /// holds it already as it is (written there by hand: it is kept, and reported by
    /// [`file::PolicyDocument::never_matching`], so that other changes can be made meanwhile). Returns what was
    /// stored and the file's new version. Errors: [`file::ReplaceError::Changed`] (nothing is
    /// written), or [`file::ReplaceError::Io`] as [`Policy::replace`] fails.
    pub fn replace_if(
        &self,
        mut doc: PolicyDocument,
        expected: Option<&str>,
    ) -> Result<(PolicyDocument, String), file::ReplaceError> {
        doc.rules.iter_mut().for_each(Rule::assign_id);
        let held = self.rules().unwrap_or_default();
        let never = doc.rules.iter().enumerate().find_map(|(i, r)| {
            r.never_matches()
                .filter(|_| !held.contains(r))
                .map(|why| format!("rule {}: {why}", i + 1))
        });
        doc.check()
            .and_then(|()| never.map_or(Ok(()), Err))
            .map_err(|e| {
                file::ReplaceError::Io(std::io::Error::new(std::io::ErrorKind::InvalidInput, e))
            })?;
        let now = chrono::Utc::now().timestamp_millis();
        for rule in doc
            .rules
            .iter_mut()
            .filter(|r| !held.iter().any(|h| h.id == r.id))
        {
            rule.created_at_ms.get_or_insert(now);
        }
        let version = self.file.replace_if(&doc, expected)?;
        Ok((doc, version))
    }

    /// Removes the rule `id`. Returns false when there is none. Errors: the file is not valid,
    /// or cannot be written.
    pub fn remove(&self, id: &str) -> std::io::Result<bool> {
        if !self.rules().is_ok_and(|r| r.iter().any(|r| r.id == id)) {
            return Ok(false);
        }
        self.file.update(|doc| {
            let before = doc.rules.len();
            doc.rules.retain(|r| r.id != id);
            doc.rules.len() < before
        })
    }

    /// True when a rule allows `call` to reach `host`, a loopback, link-local or private
    /// destination: among the rules matching `call`, allow rules that do not name `host`
    /// literally in their `url` pattern ([`rules::names_host_literally`]) or are
    /// [`Rule::public_only`] do not count, and the first of the others decides (an allow
    /// naming the host → true; ask or deny → false).
    pub fn allows_host(&self, call: &PolicyCall, host: &str) -> bool {
        let Some(doc) = self.in_force() else {
            return false;
        };
        let Ok(doc) = doc.as_ref().as_ref() else {
            return false;
        };
        let names_host = |rule: &Rule| {
            rule.arguments
                .get("url")
                .is_some_and(|p| rules::names_host_literally(p, host))
        };
        doc.rules
            .iter()
            .filter(|r| r.decision != Decision::Allow || (names_host(r) && !r.public_only))
            .find(|r| r.matches(call.principal, call.server, call.tool, call.arguments, &[]))
            .is_some_and(|r| r.decision == Decision::Allow)
    }
}

/// The first rule of `doc` that matches `call`, if any.
fn rule_in(doc: &PolicyDocument, call: &PolicyCall, exact_only: &[&str]) -> Option<Rule> {
    doc.rules
        .iter()
        .find(|r| {
            r.matches(
                call.principal,
                call.server,
                call.tool,
                call.arguments,
                exact_only,
            )
        })
        .cloned()
}

/// Why `rule` decided, for people (the question, a refusal, the audit log): `rule ID`, with
/// its note when it has one (`rule r-5f2c0a1b (no deploys on Fridays)`), on one line and at
/// most 200 characters: the note is often what an agent needs to read to do better.
fn rule_reason(rule: &Rule) -> String {
    // On one line, without control or bidirectional-override characters: it is shown to
    // people and terminals as part of other text.
    let bidi = |c: char| matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}');
    let note = rule
        .note
        .as_deref()
        .map(|n| {
            let n: String = n
                .chars()
                .map(|c| if c.is_control() { ' ' } else { c })
                .filter(|c| !bidi(*c))
                .collect();
            n.split_whitespace().collect::<Vec<_>>().join(" ")
        })
        .filter(|n| !n.is_empty());
    match note {
        Some(n) if n.chars().count() > 200 => format!(
            "rule {} ({}…)",
            rule.id,
            n.chars().take(200).collect::<String>()
        ),
        Some(n) => format!("rule {} ({n})", rule.id),
        None => format!("rule {}", rule.id),
    }
}

#[cfg(test)]
mod tests;
