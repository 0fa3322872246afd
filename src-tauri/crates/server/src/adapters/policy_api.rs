//! `/v1/policy`: the rules of `<config dir>/policy.json` ([`crate::policy`]). `GET` (the admin
//! or a human) lists them in order (first match wins); the admin alone changes them: `PUT`
//! replaces them all (each checked; 400 names the first bad one), `DELETE
//! /v1/policy/rules/{id}` revokes one. The file stays the
//! truth: a human's edit shows in the next `GET`.
//!
//! `GET` and `PUT` answer the file's version as an `ETag`; a `PUT` with `If-Match` (RFC 9110
//! §13.1.1) replaces the rules only if the file is still at that version, else 412: an editor
//! that read the rules never writes back an old copy over a rule added since (by another
//! admin, a human's "always allow", or an edit of the file).

use std::sync::Arc;

use axum::{
    Extension, Json, Router,
    extract::State,
    http::{HeaderMap, HeaderValue, StatusCode, header},
    response::{IntoResponse, Response},
};
use serde::Serialize;
use serde_json::Value;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::api_error::{ApiError, ApiPath, ProblemDocument, json_body};
use crate::policy::{
    ApprovalTerms, Policy, PolicyDocument, Rule,
    file::{ReplaceError, RuleWarning},
};
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
    /// Why the file is not valid, if it is not: `rules` is then empty, and the rules in force
    /// are those the file held when last valid (none when Taskdeck started with the file
    /// broken: a call that would run by default is then asked).
    #[serde(skip_serializing_if = "Option::is_none")]
    problem: Option<String>,
    /// The file's version, as the `ETag` header says it (without quotes): for `If-Match`.
    version: String,
    /// The rules that can never match a call (written into the file by hand; `PUT` refuses
    /// new ones), with why: they decide nothing until fixed. Absent when none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    never_matching: Vec<RuleWarning>,
}

impl PolicyView {
    fn of(doc: PolicyDocument, version: String) -> PolicyView {
        PolicyView {
            never_matching: doc.never_matching(),
            rules: doc.rules,
            approval: doc.approval,
            problem: None,
            version,
        }
    }
}

fn io_error(e: std::io::Error) -> ApiError {
    match e.kind() {
        std::io::ErrorKind::InvalidInput => ApiError::bad_request(e.to_string()),
        _ => ApiError::internal(e.to_string()),
    }
}

/// `view` with the file's version as its `ETag`.
fn with_etag(view: PolicyView) -> Response {
    let tag = format!("\"{}\"", view.version);
    let mut resp = Json(view).into_response();
    if let Ok(tag) = HeaderValue::from_str(&tag) {
        resp.headers_mut().insert(header::ETAG, tag);
    }
    resp
}

/// The versions an `If-Match` header accepts: `None` for any (no header, or `*`), else the
/// entity tags it lists, quotes taken off (a weak `W/"…"` tag is kept as it is, so it never
/// matches: If-Match compares strongly, RFC 9110 §13.1.1). Errors: 400 for a header that is
/// not text.
fn if_match(headers: &HeaderMap) -> Result<Option<Vec<String>>, ApiError> {
    let Some(value) = headers.get(header::IF_MATCH) else {
        return Ok(None);
    };
    let value = value
        .to_str()
        .map_err(|_| ApiError::bad_request("If-Match is not text"))?;
    if value.trim() == "*" {
        return Ok(None);
    }
    Ok(Some(
        value
            .split(',')
            .map(|t| t.trim().trim_matches('"').to_string())
            .collect(),
    ))
}

/// `GET /v1/policy`.
#[utoipa::path(get, path = "/v1/policy", tag = "policy",
    responses((status = 200, description = "the rules, first match wins (and why the file is not valid, if it is not); the `ETag` header is the file's version, for `If-Match` on `PUT`", body = PolicyView),
              (status = 403, description = "an agent (only the admin or a human reads the policy)", body = ProblemDocument, content_type = "application/problem+json")))]
pub(crate) async fn get_policy(
    State(policy): State<Arc<Policy>>,
    Extension(p): Extension<Principal>,
) -> Result<Response, ApiError> {
    ApiError::humans_only(&p, "reads the policy")?;
    let (version, doc) = policy.versioned_document();
    Ok(with_etag(match doc {
        Ok(doc) => PolicyView::of(doc, version),
        Err(problem) => PolicyView {
            rules: Vec::new(),
            approval: ApprovalTerms::default(),
            problem: Some(format!("{} {problem}", policy.path().display())),
            version,
            never_matching: Vec::new(),
        },
    }))
}

/// `PUT /v1/policy`: replaces every rule (a rule without an id gets one; a new rule without
/// `createdAtMs` gets the time now), and the file's `approval` terms when the body has them
/// (without, they stay). With `If-Match: "<ETag of a GET>"` only if the file has not changed
/// since.
#[utoipa::path(put, path = "/v1/policy", tag = "policy", request_body = PolicyDocument,
    params(("If-Match" = Option<String>, Header, description = "the `ETag` of the policy this change was made to: the change is refused (412) if the file has changed since")),
    responses((status = 200, description = "the rules as stored; the `ETag` header is the file's new version", body = PolicyView),
              (status = 400, description = "a rule is not valid, or the body is not `{rules: [...]}`", body = ProblemDocument, content_type = "application/problem+json"),
              (status = 403, description = "not the admin (a human may read the policy, not change it)", body = ProblemDocument, content_type = "application/problem+json"),
              (status = 412, description = "`If-Match` names another version: the policy changed since it was read; nothing was written (read it again and make the change to what it holds now)", body = ProblemDocument, content_type = "application/problem+json")))]
pub(crate) async fn put_policy(
    State(policy): State<Arc<Policy>>,
    Extension(p): Extension<Principal>,
    headers: HeaderMap,
    body: Result<Json<Value>, axum::extract::rejection::JsonRejection>,
) -> Result<Response, ApiError> {
    ApiError::admin_only(&p, "changes the policy")?;
    let expected = if_match(&headers)?;
    const SHAPE: &str = "{\"rules\": [{\"principal\", \"server\", \"tool\", \"arguments\"?, \"onlyTheseArguments\"?, \"publicOnly\"?, \"decision\": \"allow\"|\"ask\"|\"deny\", \"approval\"?, \"note\"?}], \"approval\"?}";
    let given = json_body(body, SHAPE)?;
    // `{rules}` alone changes the rules: the file's own approval terms stay.
    let keeps_terms = given
        .as_object()
        .is_some_and(|m| !m.contains_key("approval"));
    let bytes = serde_json::to_vec(&given).map_err(|e| ApiError::internal(e.to_string()))?;
    let mut doc = json_body(Json::<PolicyDocument>::from_bytes(&bytes), SHAPE)?;
    if keeps_terms && let Ok(now) = policy.document() {
        doc.approval = now.approval;
    }
    // One tag or several: the file must be at one of them.
    let current = policy.versioned_document().0;
    let expected = match expected {
        Some(tags) if tags.contains(&current) => Some(current),
        Some(tags) => tags.into_iter().next(),
        None => None,
    };
    match policy.replace_if(doc, expected.as_deref()) {
        Ok((doc, version)) => Ok(with_etag(PolicyView::of(doc, version))),
        Err(ReplaceError::Changed { .. }) => Err(ApiError::new(
            StatusCode::PRECONDITION_FAILED,
            "the policy has changed since it was read (another admin, a human's \"always \
             allow\", or an edit of policy.json): nothing was written; read it again and make \
             the change to what it holds now",
        )),
        Err(ReplaceError::Io(e)) => Err(io_error(e)),
    }
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
