//! The error answer of every `/v1` route: an RFC 9457 problem document
//! (`application/problem+json`, `{type: "about:blank", title, status, detail}`). Handlers return
//! `Result<_, ApiError>` and use `?`; engine errors map to statuses in one place
//! (`From<EngineError>`), and the extractors' rejections (query string, path) become problem
//! documents through [`ApiQuery`] and [`ApiPath`].

use axum::{
    extract::{FromRequestParts, Path, Query},
    http::{HeaderValue, StatusCode, header},
    response::{IntoResponse, Response},
};
use serde::Serialize;

use taskdeck_engine::EngineError;

/// An RFC 9457 problem document as `/v1` sends it (RFC 9457 §3.1: `type` is `about:blank`, so
/// `title` is the status's reason phrase).
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct ProblemDocument {
    /// Always `about:blank`: the status says what kind of problem it is.
    #[serde(rename = "type")]
    #[schema(example = "about:blank")]
    pub kind: String,
    /// The HTTP reason phrase of `status`, e.g. `Not Found`.
    pub title: String,
    /// The HTTP status code, repeated.
    #[schema(minimum = 400, maximum = 599)]
    pub status: u16,
    /// What was wrong with this request, for a human.
    pub detail: String,
    /// Why, for a program (an RFC 9457 extension member), when the status alone does not say:
    /// `disk_full` on a 503 whose write was refused because the store's disk is full (retry
    /// once there is space: writes resume by themselves); `too_large` on a 422 refusing a value
    /// over its cap (see `limit`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(example = "disk_full")]
    pub reason: Option<String>,
    /// With `reason: "too_large"`: the cap the value went over, in bytes (of compact JSON, or
    /// of UTF-8 text for a name).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit: Option<usize>,
}

/// A `/v1` error answer: `status` with a problem document saying `detail`.
#[derive(Debug, Clone)]
pub struct ApiError {
    /// The HTTP status, 4xx or 5xx (the document's `status` and `title`).
    pub status: StatusCode,
    /// [`ProblemDocument::detail`].
    pub detail: String,
    /// The `Allow` header of a 405 (RFC 9110 §15.5.6).
    pub allow: Option<HeaderValue>,
    /// [`ProblemDocument::reason`].
    pub reason: Option<&'static str>,
    /// [`ProblemDocument::limit`].
    pub limit: Option<usize>,
}

impl ApiError {
    /// `Ok` for the admin; for any other principal, a human one included, 403 "only the admin
    /// WHAT" (e.g. `manages upstream servers`), for the routes that administer Taskdeck
    /// (tokens, the policy, the upstream servers).
    pub fn admin_only(p: &taskdeck_engine::Principal, what: &str) -> Result<(), ApiError> {
        Self::only(p.is_admin(), "the admin", what)
    }

    /// `Ok` for a person (the admin or a human principal); for an agent 403 "only the admin
    /// or a human WHAT" (e.g. `reads the policy`), for the routes that show Taskdeck's settings
    /// without changing them.
    pub fn humans_only(p: &taskdeck_engine::Principal, what: &str) -> Result<(), ApiError> {
        Self::only(p.is_human(), "the admin or a human", what)
    }

    /// `Ok` when `allowed`, else 403 "only WHO WHAT".
    fn only(allowed: bool, who: &str, what: &str) -> Result<(), ApiError> {
        match allowed {
            true => Ok(()),
            false => Err(ApiError::new(
                StatusCode::FORBIDDEN,
                format!("only {who} {what}"),
            )),
        }
    }

    /// `status` with `detail`.
    pub fn new(status: StatusCode, detail: impl Into<String>) -> ApiError {
        ApiError {
            status,
            detail: detail.into(),
            allow: None,
            reason: None,
            limit: None,
        }
    }

    /// 400 Bad Request.
    pub fn bad_request(detail: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, detail)
    }

    /// 404 Not Found.
    pub fn not_found(detail: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::NOT_FOUND, detail)
    }

    /// 409 Conflict.
    pub fn conflict(detail: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::CONFLICT, detail)
    }

    /// 422 Unprocessable Content.
    pub fn unprocessable(detail: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, detail)
    }

    /// 500 Internal Server Error.
    pub fn internal(detail: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, detail)
    }

    /// The problem document this error is sent as.
    pub fn document(&self) -> ProblemDocument {
        ProblemDocument {
            kind: "about:blank".into(),
            title: self.status.canonical_reason().unwrap_or("Error").into(),
            status: self.status.as_u16(),
            detail: self.detail.clone(),
            reason: self.reason.map(str::to_string),
            limit: self.limit,
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = serde_json::to_string(&self.document()).unwrap_or_default();
        let mut resp = (self.status, body).into_response();
        resp.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/problem+json"),
        );
        if let Some(allow) = self.allow {
            resp.headers_mut().insert(header::ALLOW, allow);
        }
        if self.reason == Some(DISK_FULL_REASON) {
            resp.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
        }
        resp
    }
}

/// The `reason` of a 503 refusing a write because the store's disk is full.
pub const DISK_FULL_REASON: &str = "disk_full";

/// The `reason` of a 422 refusing a value over its cap ([`EngineError::TooLarge`]).
pub const TOO_LARGE_REASON: &str = "too_large";

/// Engine errors as HTTP statuses: not found 404, invalid input 422, a settled task or a reused
/// input key 409, an illegal transition or a store failure 500, a full disk 503 with
/// `reason: "disk_full"` and `Retry-After: 5` (seconds), a value over its cap 422 with
/// `reason: "too_large"` and its `limit`.
impl From<EngineError> for ApiError {
    fn from(e: EngineError) -> ApiError {
        if e.is_disk_full() {
            return ApiError {
                reason: Some(DISK_FULL_REASON),
                ..ApiError::new(StatusCode::SERVICE_UNAVAILABLE, e.to_string())
            };
        }
        if let EngineError::TooLarge { limit, .. } = &e {
            return ApiError {
                reason: Some(TOO_LARGE_REASON),
                limit: Some(*limit),
                ..ApiError::unprocessable(e.to_string())
            };
        }
        if let EngineError::HiddenUnread { key, task_id, by } = &e {
            return ApiError::unprocessable(crate::approvals::hidden_unread_text(key, task_id, by));
        }
        let status = match &e {
            EngineError::NotFound => StatusCode::NOT_FOUND,
            EngineError::Invalid(_)
            | EngineError::TooLarge { .. }
            | EngineError::HiddenUnread { .. } => StatusCode::UNPROCESSABLE_ENTITY,
            EngineError::Terminal(_) | EngineError::KeyReused(_) => StatusCode::CONFLICT,
            EngineError::IllegalTransition { .. }
            | EngineError::Store(_)
            | EngineError::DiskFull(_) => StatusCode::INTERNAL_SERVER_ERROR,
        };
        ApiError::new(status, e.to_string())
    }
}

/// A blocking task that panicked or was cancelled: 500.
impl From<tokio::task::JoinError> for ApiError {
    fn from(e: tokio::task::JoinError) -> ApiError {
        ApiError::internal(e.to_string())
    }
}

/// `Query<T>` whose rejection (a malformed or mistyped query string) is a 400 problem document.
pub struct ApiQuery<T>(pub T);

impl<T, S> FromRequestParts<S> for ApiQuery<T>
where
    T: serde::de::DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut http::request::Parts,
        state: &S,
    ) -> Result<Self, Self::Rejection> {
        Query::<T>::from_request_parts(parts, state)
            .await
            .map(|Query(v)| ApiQuery(v))
            .map_err(|e| ApiError::bad_request(e.body_text()))
    }
}

/// `Path<T>` whose rejection (a path segment that is not UTF-8 once percent-decoded) is a 400
/// problem document.
pub struct ApiPath<T>(pub T);

impl<T, S> FromRequestParts<S> for ApiPath<T>
where
    T: serde::de::DeserializeOwned + Send,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut http::request::Parts,
        state: &S,
    ) -> Result<Self, Self::Rejection> {
        Path::<T>::from_request_parts(parts, state)
            .await
            .map(|Path(v)| ApiPath(v))
            .map_err(|e| ApiError::bad_request(e.body_text()))
    }
}

/// The JSON body `body` a handler took as `Result<Json<T>, JsonRejection>`. Errors: 415 when
/// the request did not say `Content-Type: application/json` (RFC 9110 §15.5.16); 400 saying
/// `expected` (the body's shape, for a human) when the body is not that JSON.
pub fn json_body<T>(
    body: Result<axum::Json<T>, axum::extract::rejection::JsonRejection>,
    expected: &str,
) -> Result<T, ApiError> {
    use axum::extract::rejection::JsonRejection;
    match body {
        Ok(axum::Json(body)) => Ok(body),
        Err(JsonRejection::MissingJsonContentType(_)) => Err(ApiError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "send the body as JSON, with `Content-Type: application/json`",
        )),
        Err(e) => Err(ApiError::bad_request(format!(
            "body must be {expected}: {}",
            said_of_body(&e.body_text())
        ))),
    }
}

/// What serde's message `text` about a body says, for its sender: an array given for an object
/// is said so (serde reads a struct from an array's items, so its message would be about the
/// first item: "[0]: invalid type: integer `1`, expected a string"); else [`without_type_names`].
fn said_of_body(text: &str) -> String {
    const PREFIX: &str = "Failed to deserialize the JSON body into the target type: ";
    let what = text.strip_prefix(PREFIX).unwrap_or(text);
    let into_array = what
        .strip_prefix('[')
        .and_then(|rest| rest.split_once(']'))
        .is_some_and(|(index, _)| !index.is_empty() && index.bytes().all(|b| b.is_ascii_digit()));
    if into_array {
        return "it is a JSON array; send a JSON object".into();
    }
    without_type_names(text)
}

/// `text` (serde's message) with the Rust type it names said as JSON does: "expected struct
/// CreateBody with 3 elements" → "expected an object"; "struct ReportProgress" → "an object".
fn without_type_names(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("struct ") {
        let after = &rest[at + "struct ".len()..];
        let name_len = after
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(after.len());
        if name_len == 0 || !after.starts_with(|c: char| c.is_ascii_uppercase()) {
            out.push_str(&rest[..at + "struct ".len()]);
            rest = after;
            continue;
        }
        out.push_str(&rest[..at]);
        out.push_str("an object");
        rest = &after[name_len..];
        // " with 3 elements" (a sequence given where the object was expected).
        if let Some(tail) = rest.strip_prefix(" with ")
            && let Some(end) = tail.find(" element")
            && tail[..end].bytes().all(|b| b.is_ascii_digit())
        {
            let counted = &tail[end + " element".len()..];
            rest = counted.strip_prefix('s').unwrap_or(counted);
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_array_for_an_object_is_said_so() {
        assert_eq!(
            said_of_body(
                "Failed to deserialize the JSON body into the target type: [0]: invalid type: integer `1`, expected a string at line 1 column 2"
            ),
            "it is a JSON array; send a JSON object"
        );
        // A member's path is not the body's.
        assert!(
            said_of_body(
                "Failed to deserialize the JSON body into the target type: tags[0]: invalid type"
            )
            .contains("tags[0]")
        );
    }

    #[test]
    fn serde_messages_name_json_types_not_rust_ones() {
        assert_eq!(
            without_type_names(
                "Failed to deserialize the JSON body into the target type: invalid type: sequence, expected struct CreateBody with 3 elements at line 1 column 2"
            ),
            "Failed to deserialize the JSON body into the target type: invalid type: sequence, expected an object at line 1 column 2"
        );
        assert_eq!(
            without_type_names(
                "progress: invalid type: string \"bad\", expected struct ReportProgress"
            ),
            "progress: invalid type: string \"bad\", expected an object"
        );
        assert_eq!(without_type_names("a struct of mind"), "a struct of mind");
    }

    #[test]
    fn engine_errors_map_to_statuses() {
        let status = |e| ApiError::from(e).status;
        assert_eq!(status(EngineError::NotFound), StatusCode::NOT_FOUND);
        assert_eq!(
            status(EngineError::Invalid("x".into())),
            StatusCode::UNPROCESSABLE_ENTITY
        );
        assert_eq!(
            status(EngineError::KeyReused("k".into())),
            StatusCode::CONFLICT
        );
        assert_eq!(
            status(EngineError::Store("disk".into())),
            StatusCode::INTERNAL_SERVER_ERROR
        );
        // An approval unread: 422, saying every way to read the call.
        let unread = ApiError::from(EngineError::HiddenUnread {
            key: "approve-command".into(),
            task_id: "t1".into(),
            by: "alice".into(),
        });
        assert_eq!(unread.status, StatusCode::UNPROCESSABLE_ENTITY);
        let said = unread.document().detail;
        assert!(
            said.starts_with("approve-command: this call is shown with values hidden, and alice")
                && said.contains("`taskdeck tasks reveal t1`")
                && said.contains("POST /v1/tasks/t1/reveal"),
            "{said}"
        );
        let full = ApiError::from(EngineError::DiskFull("database or disk is full".into()));
        assert_eq!(full.status, StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(full.document().reason.as_deref(), Some("disk_full"));
    }

    #[test]
    fn the_body_is_a_problem_document() {
        let doc = serde_json::to_value(ApiError::not_found("Task not found").document()).unwrap();
        assert_eq!(
            doc,
            serde_json::json!({"type": "about:blank", "title": "Not Found", "status": 404,
                "detail": "Task not found"})
        );
    }
}
