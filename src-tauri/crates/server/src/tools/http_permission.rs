//! What one `wait_for_http_job` run may reach, under the policy ([`crate::policy`]): the call
//! itself needs the policy's `allow` or the human's approval (asked before the first request
//! is sent, key `approve`, once its destination is resolved, so the question says when it is
//! private), and every destination on a loopback, link-local or private network (or this
//! machine), redirect hops and monitors included, needs a rule naming its host literally in
//! `arguments.url`, or the human's allowance for this run (key `allow-private-network`, then
//! `-2`, `-3`, ...). A `deny` rule matching any hop's URL ends the run.
//!
//! "Always allow" writes a rule for this principal and tool whose `url` pattern is the
//! request's origin (`scheme://host:port/*`, the port left out when it is the scheme's
//! default). Given on the question about a private destination, it names the host literally
//! and so covers that destination; given on the call's question (the destination public, or
//! not looked up yet) it is [`Rule::public_only`](crate::policy::Rule): a private address the
//! host resolves to, then or later, is asked about all the same.

use std::{collections::HashSet, sync::Arc};

use reqwest::Url;
use serde_json::{Value, json};

use super::{
    destination::Destination,
    http_job::{ALLOW_PRIVATE_KEY, APPROVE_KEY, refusal},
    http_reach::{Failure, shown},
};
use crate::approvals::{self, Answer, Ask};
use crate::policy::{
    Decision, OnExpiry, Policy, PolicyCall, Rule, TASKDECK_SERVER, Terms, ToolHints, Verdict,
    rules::exact,
};
use taskdeck_engine::TaskContext;

/// The tool's name in rules.
const TOOL: &str = "wait_for_http_job";

/// The arguments the policy sees for a run: the agent's, without `headers` (they may hold
/// credentials) and `monitor`, with `url` set to the URL the run starts at (its `url` or its
/// `monitor`) as it is sent (`Url`'s form: lowercase host, the scheme's default port left out),
/// without a user name and password: a rule names where requests go (an "always allow" rule
/// names the origin), and a URL's credentials change nothing of that.
pub fn policed_arguments(arguments: &Value, first: &Url) -> Value {
    let mut policed = arguments.clone();
    if let Some(map) = policed.as_object_mut() {
        map.remove("headers");
        map.remove("monitor");
        map.insert("url".into(), Value::String(policed_url(first)));
    }
    policed
}

/// `url` as the policy matches it: without a user name and password.
fn policed_url(url: &Url) -> String {
    super::http_reach::without_userinfo(url).to_string()
}

/// `policed` ([`policed_arguments`]) as people see it: a password in the URL, and credentials
/// in the `body` ([`super::secrets::redact_value`]), are never shown, recorded or hashed. With
/// `headers` (the agent's, as sent) as `{"headers": {NAME: VALUE}}`, their credentials masked
/// the same way: a person deciding sees that the request carries, say, an `Authorization`
/// header, never its value. Rules never match on headers ([`policed_arguments`]).
pub fn shown_arguments(policed: &Value, url: &Url, headers: &[(String, String)]) -> Value {
    let mut shown_arguments =
        super::secrets::redact_value(policed).unwrap_or_else(|| policed.clone());
    shown_arguments["url"] = Value::String(shown(url));
    if !headers.is_empty() {
        let given: serde_json::Map<String, Value> = headers
            .iter()
            .map(|(name, value)| (name.clone(), Value::String(value.clone())))
            .collect();
        let given = Value::Object(given);
        shown_arguments["headers"] = super::secrets::redact_value(&given).unwrap_or(given);
    }
    shown_arguments
}

/// The call as the agent gave it: [`shown_arguments`] without its masks, for the people who
/// decide ([`crate::approvals::ask::Ask::hidden`]).
fn given_arguments(policed: &Value, url: &Url, headers: &[(String, String)]) -> Value {
    let mut given = policed.clone();
    given["url"] = Value::String(url.to_string());
    if !headers.is_empty() {
        given["headers"] = Value::Object(
            headers
                .iter()
                .map(|(name, value)| (name.clone(), Value::String(value.clone())))
                .collect(),
        );
    }
    given
}

/// True when [`shown_arguments`] of the call hides something from the person asked: a
/// credential-looking value of its arguments or headers, or a URL's password or query value.
fn holds_secrets(policed: &Value, url: &Url, headers: &[(String, String)]) -> bool {
    let given: serde_json::Map<String, Value> = headers
        .iter()
        .map(|(name, value)| (name.clone(), Value::String(value.clone())))
        .collect();
    super::secrets::redact_value(policed).is_some()
        || shown(url) != url.as_str()
        || super::secrets::redact_value(&Value::Object(given)).is_some()
}

/// The permissions of one run.
pub struct Permission {
    ctx: TaskContext,
    policy: Arc<Policy>,
    /// [`policed_arguments`] of the run.
    arguments: Value,
    /// The agent's headers, sent with every request (shown masked, [`shown_arguments`]).
    headers: Vec<(String, String)>,
    /// False until the policy or the human allowed the call.
    approved: bool,
    /// Near authorities (`host:port`) the human allowed for this run.
    allowed: HashSet<String>,
    /// Questions about near destinations asked so far (each needs a key of its own).
    asked: u32,
}

impl Permission {
    /// The permissions of the run of `ctx` with `arguments` ([`policed_arguments`]) and
    /// `headers`, `approved` when the policy allowed the call.
    pub fn new(
        ctx: TaskContext,
        policy: Arc<Policy>,
        arguments: Value,
        headers: Vec<(String, String)>,
        approved: bool,
    ) -> Permission {
        Permission {
            ctx,
            policy,
            arguments,
            headers,
            approved,
            allowed: HashSet::new(),
            asked: 0,
        }
    }

    fn call_for<'a>(&'a self, arguments: &'a Value) -> PolicyCall<'a> {
        PolicyCall {
            principal: self.ctx.principal(),
            server: TASKDECK_SERVER,
            tool: TOOL,
            arguments,
            hints: ToolHints::default(),
        }
    }

    /// The policed arguments with `url` set to `url` ([`policed_url`]).
    fn at(&self, url: &Url) -> Value {
        let mut args = self.arguments.clone();
        args["url"] = Value::String(policed_url(url));
        args
    }

    /// True when `dest` (where `url` leads) may be reached without asking: the call was
    /// allowed, and `dest` is public, or this run or a rule naming its host allowed it.
    pub fn may_reach(&self, dest: &Destination, url: &Url) -> bool {
        if !self.approved {
            return false;
        }
        if dest.near.is_none() || self.allowed.contains(&dest.authority()) {
            return true;
        }
        let host = url.host_str().unwrap_or_default();
        self.policy.allows_host(&self.call_for(&self.at(url)), host)
    }

    /// Makes sure the request `what` to `url`, whose destination is `dest`, may be sent:
    /// refused by a `deny` rule; else asked about when the call is not approved yet or the
    /// destination is near and not allowed. Errors: [`Failure::End`] with the refusal (the
    /// human's reason included) or the engine's error.
    pub async fn clear(
        &mut self,
        dest: &Destination,
        url: &Url,
        what: &str,
    ) -> Result<(), Failure> {
        let near = dest.near.map(|(ip, how)| (dest.authority(), ip, how));
        let reachable = self.may_reach(dest, url);
        self.clear_for(near, reachable, url, what).await
    }

    /// [`Permission::clear`] before `url`'s host name is looked up: a call not allowed yet is
    /// asked about (or refused by a `deny` rule) as a request to a public destination, so that
    /// no DNS query goes out on an agent's word (a query is traffic, and a name can carry
    /// data); a private address the name then resolves to is asked about after, by `clear`.
    pub async fn clear_before_lookup(&mut self, url: &Url, what: &str) -> Result<(), Failure> {
        let reachable = self.approved;
        self.clear_for(None, reachable, url, what).await
    }

    /// The decision on a request to `url`: a `deny` rule refuses it; `reachable` (allowed
    /// already) lets it go; else the human is asked, about the call, and about `near` (its
    /// authority, address and why it is near) when it is near.
    async fn clear_for(
        &mut self,
        near: Option<(String, std::net::IpAddr, super::destination::Nearness)>,
        reachable: bool,
        url: &Url,
        what: &str,
    ) -> Result<(), Failure> {
        let at = self.at(url);
        let verdict = self.policy.decide(&self.call_for(&at));
        if verdict.decision == Decision::Deny {
            return Err(Failure::End(refusal(
                format!(
                    "{what} was not sent: the policy denies it ({}).",
                    verdict.reason
                ),
                json!({"url": shown(url), "denied": true, "policy": verdict.reason}),
                "denied",
            )));
        }
        if reachable {
            return Ok(());
        }
        let principal = self.ctx.principal().to_string();
        let origin = url.origin().ascii_serialization();
        let (key, question) = match (&near, self.approved) {
            (Some((authority, ip, how)), approved) => {
                let key = match approved {
                    false => APPROVE_KEY.to_string(),
                    true => {
                        self.asked += 1;
                        match self.asked {
                            1 => ALLOW_PRIVATE_KEY.to_string(),
                            n => format!("{ALLOW_PRIVATE_KEY}-{n}"),
                        }
                    }
                };
                (
                    key,
                    format!(
                        "Allow this task to reach {authority} ({ip}, {how})?\n\n\
                     {principal} asked wait_for_http_job to send {what}. The response goes back to {principal}."
                    ),
                )
            }
            (None, _) => (
                APPROVE_KEY.to_string(),
                format!(
                    "Allow {principal} to send {what}?\n\n\
                 wait_for_http_job sends it from this machine and follows the operation it starts; \
                 the responses go back to {principal}."
                ),
            ),
        };
        let title = format!("Always allow {principal} to send requests to {origin}");
        let ask = Ask {
            key,
            message: question,
            always_title: Some(title),
            server: TASKDECK_SERVER.into(),
            tool: TOOL.into(),
            arguments: shown_arguments(&at, url, &self.headers),
            hidden: holds_secrets(&at, url, &self.headers)
                .then(|| given_arguments(&at, url, &self.headers)),
            input_schema: None,
            editable: false,
            // A private destination is reached only with a rule naming it or a human's
            // allowance: its question never expires into `allow`.
            verdict: match near.is_some() && verdict.terms.on_expiry == OnExpiry::Allow {
                true => Verdict {
                    terms: Terms {
                        on_expiry: OnExpiry::Deny,
                        ..verdict.terms
                    },
                    ..verdict
                },
                false => verdict,
            },
            expiry_cap_ms: None,
            hands_back: false,
        };
        // The window's list shows what the task waits for, not the request it has not sent.
        let waiting = match &near {
            Some((authority, ..)) => format!("Waiting for approval to reach {authority}: {what}"),
            None => format!("Waiting for approval: {what}"),
        };
        self.ctx.status_message(waiting).await;
        // Not editable: there is no edit to check.
        let no_edit = |_: &Value| approvals::ask::EditVerdict::Needs {
            humans: 0,
            why: String::new(),
            asked_by_rule: false,
        };
        let answer = approvals::ask::ask(&self.ctx, &ask, &no_edit)
            .await
            .map_err(|e| Failure::End(e.into()))?;
        let always = match answer {
            Answer::Approved { always, .. } => always,
            Answer::Expired(OnExpiry::Allow) => false,
            Answer::Expired(_) => {
                return Err(Failure::End(refusal(
                    format!("Nobody answered in time: {what} was not sent."),
                    json!({"expired": true, "request": what}),
                    "denied",
                )));
            }
            Answer::Denied { reason, .. } => {
                let because = reason
                    .as_deref()
                    .map_or(String::new(), |r| format!(" Their reason: {r}"));
                let (text, data) = match &near {
                    Some((authority, ip, how)) => (
                        format!(
                            "The human did not allow this task to reach {authority} ({ip}, {how}): {what} was not sent.{because}"
                        ),
                        json!({"refused": authority, "ip": ip, "request": what, "reason": reason}),
                    ),
                    None => (
                        format!("The human declined: {what} was not sent.{because}"),
                        json!({"declined": true, "request": what, "reason": reason}),
                    ),
                };
                return Err(Failure::End(refusal(text, data, "declined")));
            }
        };
        if always {
            let rule = Rule {
                id: String::new(),
                principal: exact(&principal),
                server: TASKDECK_SERVER.into(),
                tool: TOOL.into(),
                arguments: [("url".to_string(), format!("{}/*", exact(&origin)))].into(),
                only_these_arguments: false,
                // Only the question about a private destination allows reaching one.
                public_only: near.is_none(),
                decision: Decision::Allow,
                note: Some(format!("always allow, from task {}", self.ctx.task_id())),
                created_at_ms: Some(chrono::Utc::now().timestamp_millis()),
                approval: Default::default(),
            };
            if let Err(e) = self.policy.append(rule) {
                tracing::warn!("cannot save the policy: {e}");
            }
        }
        self.approved = true;
        if let Some((authority, ..)) = near {
            self.allowed.insert(authority);
        }
        self.ctx.status_message(format!("Sending {what}")).await;
        Ok(())
    }
}
