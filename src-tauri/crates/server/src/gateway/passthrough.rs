//! Upstream resources and prompts, passed through (they are reads, not work: no task, no
//! policy step). On `/mcp` every connected upstream's resources are listed with their own URIs
//! and its prompts as `SERVER__PROMPT`; on `/mcp/SERVER` that server's, under their own names.
//! A `resources/read` goes to each upstream in scope in turn (by name) until one has the URI:
//! URIs are the upstreams' own, and a URI made from a template is in no list.
//!
//! An upstream that is not connected contributes nothing; one that fails a request is skipped
//! in a listing (logged) and named in the error of a read or a prompt.

use std::{sync::Arc, time::Duration};

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

/// How long a pass-through request waits for an upstream to answer.
const PASS_THROUGH_TIMEOUT: Duration = Duration::from_secs(30);

impl Gateway {
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

    /// Every resource the upstreams in `scope` list.
    pub async fn resources(&self, scope: Scope<'_>) -> Vec<Resource> {
        let mut out = Vec::new();
        for (upstream, c) in self.connections(scope).await {
            if !offers_resources(&c) {
                continue;
            }
            match timed(c.peer.list_all_resources()).await {
                Ok(list) => out.extend(list),
                Err(e) => tracing::warn!(server = %upstream.name, "resources/list failed: {e}"),
            }
        }
        out
    }

    /// Every resource template the upstreams in `scope` list.
    pub async fn resource_templates(&self, scope: Scope<'_>) -> Vec<ResourceTemplate> {
        let mut out = Vec::new();
        for (upstream, c) in self.connections(scope).await {
            if !offers_resources(&c) {
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

    /// Reads `params.uri` from the first upstream in `scope` that has it. Errors: `-32002` (resource not
    /// found) when none has it, naming the upstreams that failed.
    pub async fn read_resource(
        &self,
        scope: Scope<'_>,
        params: ReadResourceRequestParams,
    ) -> Result<ReadResourceResult, McpError> {
        let ordered: Vec<_> = self
            .connections(scope)
            .await
            .into_iter()
            .filter(|(_, c)| offers_resources(c))
            .collect();
        let mut failures = Vec::new();
        for (u, c) in ordered {
            match timed(c.peer.read_resource(params.clone())).await {
                Ok(mut result) => {
                    // A 2025-11-25 upstream sends no `resultType`; every 2026-07-28 result
                    // carries one (rmcp leaves "complete" out again for older clients).
                    result.result_type.get_or_insert(ResultType::COMPLETE);
                    return Ok(result);
                }
                Err(e) => failures.push(format!("{}: {e}", u.name)),
            }
        }
        Err(McpError::resource_not_found(
            format!("Resource not found: {}", params.uri),
            (!failures.is_empty()).then(|| serde_json::json!({"upstreams": failures})),
        ))
    }

    /// Every prompt of the upstreams in `scope` (named `SERVER__PROMPT` on `/mcp`).
    pub async fn prompts(&self, scope: Scope<'_>) -> Vec<Prompt> {
        let mut out = Vec::new();
        for (upstream, c) in self.connections(scope).await {
            if c.peer
                .peer_info()
                .is_none_or(|i| i.capabilities.prompts.is_none())
            {
                continue;
            }
            match timed(c.peer.list_all_prompts()).await {
                Ok(list) => out.extend(list.into_iter().map(|mut p| {
                    if scope == Scope::All {
                        p.name = registered_name(&upstream.name, &p.name);
                    }
                    p
                })),
                Err(e) => tracing::warn!(server = %upstream.name, "prompts/list failed: {e}"),
            }
        }
        out
    }

    /// Gets prompt `params.name` as named in `scope`. Errors: `-32602` for a name no upstream
    /// in `scope` has; the upstream's error, naming it, when it fails.
    pub async fn get_prompt(
        &self,
        scope: Scope<'_>,
        mut params: GetPromptRequestParams,
    ) -> Result<GetPromptResult, McpError> {
        let unknown = || McpError::invalid_params(format!("Unknown prompt: {}", params.name), None);
        let (server, prompt) = match scope {
            Scope::All => split(&params.name).ok_or_else(unknown)?,
            Scope::Server(server) => (server, params.name.as_str()),
        };
        let (server, prompt) = (server.to_string(), prompt.to_string());
        let upstream = self.upstream(&server).ok_or_else(unknown)?;
        let c = upstream.connected(Duration::ZERO).await.ok_or_else(|| {
            McpError::internal_error(format!("upstream {server} is not connected"), None)
        })?;
        params.name = prompt;
        timed(c.peer.get_prompt(params))
            .await
            .map(|mut result| {
                result.result_type.get_or_insert(ResultType::COMPLETE);
                result
            })
            .map_err(|e| McpError::internal_error(format!("upstream {server}: {e}"), None))
    }
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
