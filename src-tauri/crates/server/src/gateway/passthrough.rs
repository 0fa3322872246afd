//! Upstream resources and prompts, passed through (they are reads, not work: no task, no
//! policy step). On `/mcp` every connected upstream's resources are listed with their own URIs
//! and its prompts as `SERVER__PROMPT`; on `/mcp/SERVER` that server's, under their own names.
//! A `resources/read` goes to each upstream in scope in turn (by name) until one has the URI:
//! URIs are the upstreams' own, and a URI made from a template is in no list.
//!
//! An upstream that is not connected contributes nothing; one that fails a request is skipped
//! in a listing (logged) and named in the error of a read or a prompt.
//!
//! The policy's `deny` rules hold for them too (and for a resource a tool's result carries,
//! which is withheld): a read is the tool `resources/read` with the argument `uri`, a prompt
//! the tool `prompts/get` with `name` (a rule for every tool of a server, `"tool": "*"`,
//! covers both). What a principal may not read is not listed to it
//! either, and reading it is refused (`-32600`, naming the rule), by any spelling of its URI
//! (as a URL normalizes it) and inside an answer (a read's contents under another name, a
//! prompt's embedded resources). Other rules (`allow`, `ask`) change nothing: a read is not
//! work, and is not asked for.

use std::{sync::Arc, time::Duration};

use serde_json::{Value, json};

use rmcp::{
    ErrorData as McpError,
    model::{
        GetPromptRequestParams, GetPromptResult, Prompt, ReadResourceRequestParams,
        ReadResourceResult, Resource, ResourceTemplate, ResultType,
    },
};

use super::{
    Gateway,
    catalog::{Scope, registered_name, split},
    upstream::{Connection, Upstream},
};
use crate::policy::{Decision, Policy, PolicyCall, ToolHints};

/// The policy's tool name for reading an upstream's resource (its argument: `uri`).
pub const READ_RESOURCE: &str = "resources/read";
/// The policy's tool name for getting an upstream's prompt (its argument: `name`).
pub const GET_PROMPT: &str = "prompts/get";

/// How long a pass-through request waits for an upstream to answer.
const PASS_THROUGH_TIMEOUT: Duration = Duration::from_secs(30);

/// What denies `principal` doing `tool` ([`READ_RESOURCE`], [`GET_PROMPT`]) on `server` with
/// `arguments`, when something does: `"rule r-…"` when the first rule that matches denies, or
/// Taskdeck's own files named in them (the resource's URI, the prompt's arguments: these
/// answer at once, so no person can be asked, and they are refused).
fn denied_by(
    policy: &Policy,
    principal: &str,
    server: &str,
    tool: &str,
    arguments: Value,
) -> Option<String> {
    if let Some(dir) = policy.own_files_named(&arguments) {
        return Some(format!("naming Taskdeck's own files, {dir}"));
    }
    let call = PolicyCall {
        principal,
        server,
        tool,
        arguments: &arguments,
        hints: ToolHints::default(),
    };
    policy
        .matching_rule(&call, &[])
        .filter(|rule| rule.decision == Decision::Deny)
        .map(|rule| format!("rule {}", rule.id))
}

/// The id of the `deny` rule for `principal` reading `uri` from `server`, as sent and as
/// a URL normalizes it (`DEMO://x/./a` is `demo://x/a`), so another spelling of a denied
/// URI is denied too.
fn denied_uri(policy: &Policy, principal: &str, server: &str, uri: &str) -> Option<String> {
    let normalized = reqwest::Url::parse(uri)
        .map(String::from)
        .ok()
        .filter(|n| n != uri);
    std::iter::once(uri)
        .chain(normalized.as_deref())
        .find_map(|u| {
            denied_by(
                policy,
                principal,
                server,
                READ_RESOURCE,
                json!({ "uri": u }),
            )
        })
}

/// `result` (an upstream tool's CallToolResult, for `principal`) with each content block
/// that carries a resource the policy denies `principal` reading from `server` (an embedded
/// `resource`, a `resource_link`) replaced by a text block saying it was withheld and by
/// which rule: a tool's answer is no way around a deny rule for `resources/read`.
pub(super) fn withhold_denied_resources(
    policy: &Policy,
    principal: &str,
    server: &str,
    mut result: Value,
) -> Value {
    if !policy.may_deny(principal, server, READ_RESOURCE) {
        return result;
    }
    let Some(blocks) = result.get_mut("content").and_then(Value::as_array_mut) else {
        return result;
    };
    for block in blocks.iter_mut() {
        let uri = match block.get("type").and_then(Value::as_str) {
            Some("resource") => block.pointer("/resource/uri"),
            Some("resource_link") => block.get("uri"),
            _ => None,
        };
        let Some(uri) = uri.and_then(Value::as_str).map(str::to_string) else {
            continue;
        };
        if let Some(rule) = denied_uri(policy, principal, server, &uri) {
            *block = json!({"type": "text", "text": format!(
                "[Taskdeck withheld the resource {uri} from {principal}: denied by {rule}]"
            )});
        }
    }
    result
}

impl Gateway {
    /// [`denied_uri`] under this gateway's policy.
    fn denied_uri(&self, principal: &str, server: &str, uri: &str) -> Option<String> {
        denied_uri(&self.state.policy, principal, server, uri)
    }

    /// [`denied_by`] under this gateway's policy.
    fn denied_by(
        &self,
        principal: &str,
        server: &str,
        tool: &str,
        arguments: Value,
    ) -> Option<String> {
        denied_by(&self.state.policy, principal, server, tool, arguments)
    }

    /// The rule denying `principal` one of the resources an upstream answer of `server`
    /// carries (every `uri` in it: a read's contents, a prompt's embedded resources and links),
    /// with that URI.
    fn denied_in_answer(
        &self,
        principal: &str,
        server: &str,
        answer: &impl serde::Serialize,
    ) -> Option<(String, String)> {
        // Reads can be large: looked through only when a rule could deny one.
        if !self.state.policy.may_deny(principal, server, READ_RESOURCE) {
            return None;
        }
        fn uris(value: &Value, out: &mut Vec<String>) {
            match value {
                Value::Object(members) => {
                    for (name, v) in members {
                        match (name.as_str(), v) {
                            ("uri", Value::String(uri)) => out.push(uri.clone()),
                            _ => uris(v, out),
                        }
                    }
                }
                Value::Array(items) => items.iter().for_each(|v| uris(v, out)),
                _ => {}
            }
        }
        let mut found = Vec::new();
        uris(
            &serde_json::to_value(answer).unwrap_or_default(),
            &mut found,
        );
        found.into_iter().find_map(|uri| {
            self.denied_uri(principal, server, &uri)
                .map(|rule| (rule, uri))
        })
    }

    /// The connections of the upstreams in `scope` (those connected now).
    async fn connections(&self, scope: Scope<'_>) -> Vec<(Arc<Upstream>, Arc<Connection>)> {
        let mut out = Vec::new();
        for upstream in self.upstreams() {
            if let Scope::Server(name) = scope
                && name != upstream.name
            {
                continue;
            }
            if let Some(c) = upstream.connected(Duration::ZERO).await {
                out.push((upstream, c));
            }
        }
        out
    }

    /// Every resource the upstreams in `scope` list that `principal` may read.
    pub async fn resources(&self, scope: Scope<'_>, principal: &str) -> Vec<Resource> {
        let mut out = Vec::new();
        for (upstream, c) in self.connections(scope).await {
            if !offers_resources(&c) {
                continue;
            }
            match timed(c.peer.list_all_resources()).await {
                Ok(list) => out.extend(
                    list.into_iter()
                        .filter(|r| self.denied_uri(principal, &upstream.name, &r.uri).is_none()),
                ),
                Err(e) => tracing::warn!(server = %upstream.name, "resources/list failed: {e}"),
            }
        }
        out
    }

    /// Every resource template the upstreams in `scope` list, but those of an upstream whose
    /// every read `principal` is denied (a rule without a `uri` pattern).
    pub async fn resource_templates(
        &self,
        scope: Scope<'_>,
        principal: &str,
    ) -> Vec<ResourceTemplate> {
        let mut out = Vec::new();
        for (upstream, c) in self.connections(scope).await {
            let any_uri = json!({});
            if !offers_resources(&c)
                || self
                    .denied_by(principal, &upstream.name, READ_RESOURCE, any_uri)
                    .is_some()
            {
                continue;
            }
            match timed(c.peer.list_all_resource_templates()).await {
                Ok(list) => out.extend(list),
                Err(e) => {
                    tracing::warn!(server = %upstream.name, "resources/templates/list failed: {e}")
                }
            }
        }
        out
    }

    /// Reads `params.uri` from the first upstream in `scope` that has it and that the policy
    /// lets `principal` read it from. Errors: `-32600` when the policy denies it on an upstream
    /// in scope and no other has it (naming the rules); resource not found (`-32002`, which
    /// rmcp answers a 2026-07-28 client as `-32602`) when none has it and none denies it,
    /// naming the upstreams that failed.
    pub async fn read_resource(
        &self,
        scope: Scope<'_>,
        params: ReadResourceRequestParams,
        principal: &str,
    ) -> Result<ReadResourceResult, McpError> {
        let mut denials = Vec::new();
        let ordered: Vec<_> = self
            .connections(scope)
            .await
            .into_iter()
            .filter(
                |(u, c)| match self.denied_uri(principal, &u.name, &params.uri) {
                    Some(rule) => {
                        denials.push(format!("{}'s by {rule}", u.name));
                        false
                    }
                    None => offers_resources(c),
                },
            )
            .collect();
        if ordered.is_empty() && !denials.is_empty() {
            return Err(denied_reading(&params.uri, principal, &denials.join(", ")));
        }
        let mut failures = Vec::new();
        for (u, c) in ordered {
            match timed(c.peer.read_resource(params.clone())).await {
                Ok(mut result) => {
                    // What came back may be a denied resource under another name.
                    if let Some((rule, uri)) = self.denied_in_answer(principal, &u.name, &result) {
                        return Err(denied_reading(
                            &uri,
                            principal,
                            &format!("{}'s by {rule}", u.name),
                        ));
                    }
                    // A 2025-11-25 upstream sends no `resultType`; every 2026-07-28 result
                    // carries one (rmcp leaves "complete" out again for older clients).
                    result.result_type.get_or_insert(ResultType::COMPLETE);
                    return Ok(without_taskdeck_tokens(result));
                }
                Err(e) => failures.push(format!("{}: {e}", u.name)),
            }
        }
        // No other upstream has it: the agent is told it may not read it, not that it is not
        // there (which would send it looking under other names).
        if !denials.is_empty() {
            return Err(denied_reading(&params.uri, principal, &denials.join(", ")));
        }
        Err(McpError::resource_not_found(
            format!("Resource not found: {}", params.uri),
            (!failures.is_empty()).then(|| serde_json::json!({"upstreams": failures})),
        ))
    }

    /// Every prompt of the upstreams in `scope` (named `SERVER__PROMPT` on `/mcp`) that
    /// `principal` may get.
    pub async fn prompts(&self, scope: Scope<'_>, principal: &str) -> Vec<Prompt> {
        let mut out = Vec::new();
        for (upstream, c) in self.connections(scope).await {
            if c.peer
                .peer_info()
                .is_none_or(|i| i.capabilities.prompts.is_none())
            {
                continue;
            }
            match timed(c.peer.list_all_prompts()).await {
                Ok(list) => out.extend(list.into_iter().filter_map(|mut p| {
                    let name = json!({ "name": p.name });
                    if self
                        .denied_by(principal, &upstream.name, GET_PROMPT, name)
                        .is_some()
                    {
                        return None;
                    }
                    if scope == Scope::All {
                        p.name = registered_name(&upstream.name, &p.name);
                    }
                    Some(p)
                })),
                Err(e) => tracing::warn!(server = %upstream.name, "prompts/list failed: {e}"),
            }
        }
        out
    }

    /// Gets prompt `params.name` as named in `scope`, for `principal`. Errors: `-32602` for a
    /// name no upstream in `scope` has; `-32600` when the policy denies it (naming the rule);
    /// the upstream's error, naming it, when it fails.
    pub async fn get_prompt(
        &self,
        scope: Scope<'_>,
        mut params: GetPromptRequestParams,
        principal: &str,
    ) -> Result<GetPromptResult, McpError> {
        let unknown = || McpError::invalid_params(format!("Unknown prompt: {}", params.name), None);
        let (server, prompt) = match scope {
            Scope::All => split(&params.name).ok_or_else(unknown)?,
            Scope::Server(server) => (server, params.name.as_str()),
        };
        let (server, prompt) = (server.to_string(), prompt.to_string());
        let upstream = self.upstream(&server).ok_or_else(unknown)?;
        // Its arguments too: a prompt that reads the file it is given answers at once.
        let own = params
            .arguments
            .as_ref()
            .and_then(|a| self.state.policy.own_files_named(&Value::Object(a.clone())))
            .map(|dir| format!("naming Taskdeck's own files, {dir}"));
        if let Some(rule) = own
            .or_else(|| self.denied_by(principal, &server, GET_PROMPT, json!({ "name": prompt })))
        {
            return Err(McpError::invalid_request(
                format!(
                    "Taskdeck's policy denies {server}'s prompt {prompt} for {principal} ({rule})"
                ),
                None,
            ));
        }
        let c = upstream.connected(Duration::ZERO).await.ok_or_else(|| {
            McpError::internal_error(format!("upstream {server} is not connected"), None)
        })?;
        params.name = prompt;
        let mut result = timed(c.peer.get_prompt(params))
            .await
            .map_err(|e| McpError::internal_error(format!("upstream {server}: {e}"), None))?;
        // A prompt may embed a resource the principal may not read.
        if let Some((rule, uri)) = self.denied_in_answer(principal, &server, &result) {
            return Err(denied_reading(
                &uri,
                principal,
                &format!("{server}'s by {rule}"),
            ));
        }
        result.result_type.get_or_insert(ResultType::COMPLETE);
        Ok(without_taskdeck_tokens(result))
    }
}

/// `answer` (an upstream's resource or prompt) with Taskdeck's own tokens in it masked
/// ([`crate::tools::secrets::mask_taskdeck_tokens`]): the token file is a resource too.
fn without_taskdeck_tokens<T: serde::Serialize + serde::de::DeserializeOwned>(answer: T) -> T {
    let Ok(value) = serde_json::to_value(&answer) else {
        return answer;
    };
    match crate::tools::secrets::mask_taskdeck_tokens(&value) {
        Some(masked) => serde_json::from_value(masked).unwrap_or(answer),
        None => answer,
    }
}

/// `-32600`: the policy denies `principal` reading `uri` (`rules`: whose, by which rule).
fn denied_reading(uri: &str, principal: &str, rules: &str) -> McpError {
    McpError::invalid_request(
        format!("Taskdeck's policy denies reading {uri} for {principal} ({rules})"),
        None,
    )
}

fn offers_resources(c: &Connection) -> bool {
    c.peer
        .peer_info()
        .is_some_and(|i| i.capabilities.resources.is_some())
}

/// `request`, given up after [`PASS_THROUGH_TIMEOUT`].
async fn timed<T>(
    request: impl Future<Output = Result<T, rmcp::ServiceError>>,
) -> Result<T, String> {
    match tokio::time::timeout(PASS_THROUGH_TIMEOUT, request).await {
        Ok(r) => r.map_err(|e| super::upstream_error::of_request(&e)),
        Err(_) => Err(format!(
            "no answer within {} s",
            PASS_THROUGH_TIMEOUT.as_secs()
        )),
    }
}
