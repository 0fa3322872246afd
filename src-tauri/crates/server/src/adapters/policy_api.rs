//! `/v1/policy`: the rules of `<config dir>/policy.json` ([`crate::policy`]). `GET` (the admin
//! or a human) lists them in order (first match wins); the admin alone changes them: `PUT`
//! replaces them all (each checked; 400 names the first bad one), `DELETE
//! /v1/policy/rules/{id}` revokes one. The file stays the
//! truth: a human's edit shows in the next `GET`.

use std::sync::Arc;

use axum::{Extension, Json, Router, extract::State, http::StatusCode};
use serde::Serialize;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::api_error::{ApiError, ApiPath, ProblemDocument, json_body};
use crate::policy::{ApprovalTerms, Policy, PolicyDocument, Rule};
use taskdeck_engine::Principal;

/// The `/v1/policy` routes with their OpenAPI operations.
pub fn routes() -> OpenApiRouter<Arc<Policy>> {
    OpenApiRouter::new()
        .routes(routes!(get_policy, put_policy))
        .routes(routes!(delete_rule))
}

/// The `/v1/policy` router.
pub fn router(policy: Arc<Policy>) -> Router {
    routes().split_for_parts().0.with_state(policy)
}

/// `GET /v1/policy`'s answer.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PolicyView {
    /// The rules in order; empty when the file is not valid.
    rules: Vec<Rule>,
    /// The approval terms of every `ask` whose rule sets none (absent: the defaults).
    #[serde(skip_serializing_if = "ApprovalTerms::is_empty")]
    approval: ApprovalTerms,
    /// Why the file is not valid (then no rule applies: every call gets its default), if it
    /// is not.
    #[serde(skip_serializing_if = "Option::is_none")]
    problem: Option<String>,
}

fn io_error(e: std::io::Error) -> ApiError {
    match e.kind() {
        std::io::ErrorKind::InvalidInput => ApiError::bad_request(e.to_string()),
        _ => ApiError::internal(e.to_string()),
    }
}

/// `GET /v1/policy`.
#[utoipa::path(get, path = "/v1/policy", tag = "policy",
    responses((status = 200, description = "the rules, first match wins (and why the file is not valid, if it is not)", body = PolicyView),
              (status = 403, description = "an agent (only the admin or a human reads the policy)", body = ProblemDocument, content_type = "application/problem+json")))]
pub(crate) async fn get_policy(
    State(policy): State<Arc<Policy>>,
    Extension(p): Extension<Principal>,
) -> Result<Json<PolicyView>, ApiError> {
    ApiError::humans_only(&p, "reads the policy")?;
    Ok(Json(match policy.document() {
        Ok(doc) => PolicyView {
            rules: doc.rules,
            approval: doc.approval,
            problem: None,
        },
        Err(problem) => PolicyView {
            rules: Vec::new(),
            approval: ApprovalTerms::default(),
            problem: Some(format!("{} {problem}", policy.path().display())),
        },
    }))
}

/// `PUT /v1/policy`: replaces every rule (a rule without an id gets one).
#[utoipa::path(put, path = "/v1/policy", tag = "policy", request_body = PolicyDocument,
    responses((status = 200, description = "the rules as stored", body = PolicyView),
              (status = 400, description = "a rule is not valid, or the body is not `{rules: [...]}`", body = ProblemDocument, content_type = "application/problem+json"),
              (status = 403, description = "not the admin (a human may read the policy, not change it)", body = ProblemDocument, content_type = "application/problem+json")))]
pub(crate) async fn put_policy(
    State(policy): State<Arc<Policy>>,
    Extension(p): Extension<Principal>,
    body: Result<Json<PolicyDocument>, axum::extract::rejection::JsonRejection>,
) -> Result<Json<PolicyView>, ApiError> {
    ApiError::admin_only(&p, "changes the policy")?;
    let doc = json_body(
        body,
        "{\"rules\": [{\"principal\", \"server\", \"tool\", \"arguments\"?, \"onlyTheseArguments\"?, \"publicOnly\"?, \"decision\": \"allow\"|\"ask\"|\"deny\", \"approval\"?, \"note\"?}]}",
    )?;
    let doc = policy.replace(doc).map_err(io_error)?;
    Ok(Json(PolicyView {
        rules: doc.rules,
        approval: doc.approval,
        problem: None,
    }))
}

/// `DELETE /v1/policy/rules/{id}`: revokes one rule.
#[utoipa::path(delete, path = "/v1/policy/rules/{id}", tag = "policy",
    params(("id" = String, Path, description = "the rule's id (`r-` and hex digits)")),
    responses((status = 204, description = "revoked"),
              (status = 403, description = "not the admin (a human may read the policy, not change it)", body = ProblemDocument, content_type = "application/problem+json"),
              (status = 404, description = "no such rule", body = ProblemDocument, content_type = "application/problem+json"),
              (status = 409, description = "the policy file is not valid (fix it, or replace the rules with PUT)", body = ProblemDocument, content_type = "application/problem+json")))]
pub(crate) async fn delete_rule(
    State(policy): State<Arc<Policy>>,
    Extension(p): Extension<Principal>,
    ApiPath(id): ApiPath<String>,
) -> Result<StatusCode, ApiError> {
    ApiError::admin_only(&p, "changes the policy")?;
    if let Err(problem) = policy.rules() {
        return Err(ApiError::conflict(format!(
            "{} {problem}",
            policy.path().display()
        )));
    }
    match policy.remove(&id).map_err(io_error)? {
        true => Ok(StatusCode::NO_CONTENT),
        false => Err(ApiError::not_found(format!("no policy rule {id}"))),
    }
}
