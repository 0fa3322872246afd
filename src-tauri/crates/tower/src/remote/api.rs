//! [`Api`]: the calls of Taskdeck's `/v1/hosted-tasks` routes (documented in Taskdeck's
//! `docs/http-api.md` and its OpenAPI document) as typed Rust calls, with the answers mapped to
//! tower-mcp's store semantics: 404 (unknown, expired, another principal's) is absent, a 409
//! for a reused input key and a 422 are [`TaskStoreError::InvalidTransition`] (a value over its
//! cap: [`TaskStoreError::RetentionLimitExceeded`]), anything else unexpected is
//! [`TaskStoreError::Backend`].

use reqwest::{Method, RequestBuilder, Response, StatusCode, Url};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use tower_mcp::async_task::{TaskOwner, TaskRetentionLimitKind, TaskStoreError};

use super::wire::{Answered, Changed, HostedRecord, RecordList, Settled};

type Result<T> = std::result::Result<T, TaskStoreError>;

/// A client of one Taskdeck server, authenticated as one principal. Cheap to clone.
#[derive(Clone)]
pub(crate) struct Api {
    http: reqwest::Client,
    /// e.g. `http://127.0.0.1:4747`, without a trailing `/`.
    base: String,
    token: String,
}

/// A refusal as tower-mcp's error: a 422 (the same call fails the same way) is
/// [`TaskStoreError::RetentionLimitExceeded`] for a value over its cap (`reason: "too_large"`
/// with its `limit`), [`TaskStoreError::InvalidTransition`] otherwise; any other unexpected
/// answer is a backend error `HTTP STATUS: detail`, except 413 (a body over
/// [`MAX_BODY_BYTES`]): [`TaskStoreError::RetentionLimitExceeded`].
async fn unexpected(resp: Response) -> TaskStoreError {
    let status = resp.status();
    let body: Value = resp.json().await.unwrap_or(Value::Null);
    let detail = body["detail"].as_str().unwrap_or("");
    if status == StatusCode::UNPROCESSABLE_ENTITY {
        if let (Some("too_large"), Some(limit)) = (body["reason"].as_str(), body["limit"].as_u64())
        {
            return TaskStoreError::RetentionLimitExceeded {
                kind: TaskRetentionLimitKind::PayloadBytes,
                limit: limit as usize,
            };
        }
        return TaskStoreError::InvalidTransition(detail.to_string());
    }
    if status == StatusCode::PAYLOAD_TOO_LARGE {
        return TaskStoreError::RetentionLimitExceeded {
            kind: TaskRetentionLimitKind::PayloadBytes,
            limit: MAX_BODY_BYTES,
        };
    }
    TaskStoreError::Backend(format!("Taskdeck answered HTTP {status}: {detail}"))
}

/// Why a settle call failed.
#[derive(Debug)]
pub(crate) enum SettleError {
    /// Taskdeck could not be reached, or answered that it cannot take it now (408, 429, 5xx).
    Retry(TaskStoreError),
    /// Taskdeck refused it: the same call fails the same way.
    Refused(TaskStoreError),
}

impl SettleError {
    /// The store error it is.
    pub(crate) fn into_inner(self) -> TaskStoreError {
        match self {
            SettleError::Retry(e) | SettleError::Refused(e) => e,
        }
    }
}

/// The largest request body Taskdeck's `/v1` routes take (`/mcp` takes the same), in bytes:
/// 4 MiB. A larger one is answered 413.
pub(crate) const MAX_BODY_BYTES: usize = 4 * 1024 * 1024;

/// A transport failure as a backend error.
fn transport(e: reqwest::Error) -> TaskStoreError {
    TaskStoreError::Backend(format!("cannot reach Taskdeck: {e}"))
}

/// The JSON body of a 2xx answer. Errors: [`TaskStoreError::Decode`].
async fn body<T: DeserializeOwned>(resp: Response) -> Result<T> {
    resp.json()
        .await
        .map_err(|e| TaskStoreError::Decode(format!("Taskdeck's answer: {e}")))
}

impl Api {
    /// A client of the server at `base` (e.g. `http://127.0.0.1:4747`) with bearer `token`.
    pub(crate) fn new(base: &str, token: &str) -> Api {
        Api {
            http: reqwest::Client::new(),
            base: base.trim_end_matches('/').to_string(),
            token: token.to_string(),
        }
    }

    /// A request to `path` (starting with `/`).
    pub(crate) fn request(&self, method: Method, path: &str) -> RequestBuilder {
        self.http
            .request(method, format!("{}{path}", self.base))
            .bearer_auth(&self.token)
    }

    /// A request to `/v1/hosted-tasks/{id}` followed by the segments `rest`, each escaped as
    /// one path segment.
    fn task_request(&self, method: Method, id: &str, rest: &[&str]) -> Result<RequestBuilder> {
        let mut url = Url::parse(&self.base)
            .map_err(|e| TaskStoreError::Backend(format!("Taskdeck's URL {}: {e}", self.base)))?;
        url.path_segments_mut()
            .map_err(|()| TaskStoreError::Backend(format!("{} is no base URL", self.base)))?
            .pop_if_empty()
            .extend(["v1", "hosted-tasks", id])
            .extend(rest);
        Ok(self.http.request(method, url).bearer_auth(&self.token))
    }

    /// Sends `req`: the answer when it is 2xx, `None` when 404.
    async fn send(&self, req: RequestBuilder) -> Result<Option<Response>> {
        let resp = req.send().await.map_err(transport)?;
        match resp.status() {
            s if s.is_success() => Ok(Some(resp)),
            StatusCode::NOT_FOUND => Ok(None),
            _ => Err(unexpected(resp).await),
        }
    }

    /// `POST /v1/hosted-tasks`: a new working task.
    pub(crate) async fn create(
        &self,
        tool: &str,
        arguments: Value,
        ttl_ms: Option<u64>,
        owner: &TaskOwner,
    ) -> Result<HostedRecord> {
        let req = self.request(Method::POST, "/v1/hosted-tasks").json(&json!({
            "tool": tool, "arguments": arguments, "ttlMs": ttl_ms, "owner": owner,
        }));
        match self.send(req).await? {
            Some(resp) => body(resp).await,
            None => Err(TaskStoreError::Backend(
                "this Taskdeck has no /v1/hosted-tasks (too old a version)".into(),
            )),
        }
    }

    /// `GET /v1/hosted-tasks/{id}`; `None` when absent.
    pub(crate) async fn read(&self, id: &str) -> Result<Option<HostedRecord>> {
        let req = self.task_request(Method::GET, id, &[])?;
        match self.send(req).await? {
            Some(resp) => body(resp).await.map(Some),
            None => Ok(None),
        }
    }

    /// `GET /v1/hosted-tasks?status=`, page after page (500 tasks looked at each): every live
    /// task of this principal, newest first.
    pub(crate) async fn list(&self, status: Option<&str>) -> Result<Vec<HostedRecord>> {
        let mut tasks = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let mut req = self
                .request(Method::GET, "/v1/hosted-tasks")
                .query(&[("limit", "500")]);
            if let Some(status) = status {
                req = req.query(&[("status", status)]);
            }
            if let Some(cursor) = &cursor {
                req = req.query(&[("cursor", cursor)]);
            }
            let Some(resp) = self.send(req).await? else {
                return Ok(tasks);
            };
            let page = body::<RecordList>(resp).await?;
            tasks.extend(page.tasks);
            match page.next_cursor {
                Some(next) => cursor = Some(next),
                None => return Ok(tasks),
            }
        }
    }

    /// `POST .../settle` with `settlement` (`{completed}`, `{failed}` or `{cancelled}`):
    /// whether this call ended the task, and the task after it; `None` when absent.
    /// Errors: [`SettleError::Retry`] when Taskdeck cannot be reached or answers 408, 429 or
    /// 5xx (the same call may succeed later); [`SettleError::Refused`] otherwise.
    pub(crate) async fn settle(
        &self,
        id: &str,
        settlement: Value,
    ) -> std::result::Result<Option<Settled>, SettleError> {
        let req = self
            .task_request(Method::POST, id, &["settle"])
            .map_err(SettleError::Refused)?
            .json(&settlement);
        let resp = req
            .send()
            .await
            .map_err(|e| SettleError::Retry(transport(e)))?;
        match resp.status() {
            s if s.is_success() => body(resp).await.map(Some).map_err(SettleError::Refused),
            StatusCode::NOT_FOUND => Ok(None),
            s if s.is_server_error()
                || s == StatusCode::REQUEST_TIMEOUT
                || s == StatusCode::TOO_MANY_REQUESTS =>
            {
                Err(SettleError::Retry(unexpected(resp).await))
            }
            _ => Err(SettleError::Refused(unexpected(resp).await)),
        }
    }

    /// A change answered `{changed}` (`false` when absent).
    async fn change(&self, method: Method, id: &str, rest: &str, payload: Value) -> Result<bool> {
        let req = self.task_request(method, id, &[rest])?.json(&payload);
        match self.send(req).await? {
            Some(resp) => Ok(body::<Changed>(resp).await?.changed),
            None => Ok(false),
        }
    }

    /// `PUT .../ttl`.
    pub(crate) async fn set_ttl(&self, id: &str, ttl_ms: u64) -> Result<bool> {
        self.change(Method::PUT, id, "ttl", json!({"ttlMs": ttl_ms}))
            .await
    }

    /// `POST .../status` (`working` or `input_required`).
    pub(crate) async fn set_status(
        &self,
        id: &str,
        status: &str,
        message: Option<&str>,
    ) -> Result<bool> {
        let payload = json!({"status": status, "statusMessage": message});
        self.change(Method::POST, id, "status", payload).await
    }

    /// `PUT .../meta`.
    pub(crate) async fn set_meta(&self, id: &str, meta: Value) -> Result<bool> {
        self.change(Method::PUT, id, "meta", json!({"meta": meta}))
            .await
    }

    /// `PUT .../input-requests`: replaces the outstanding set. Errors:
    /// [`TaskStoreError::InvalidTransition`] for a key spent earlier (409).
    pub(crate) async fn require_input(
        &self,
        id: &str,
        requests: Value,
        message: Option<&str>,
    ) -> Result<bool> {
        let req = self
            .task_request(Method::PUT, id, &["input-requests"])?
            .json(&json!({"requests": requests, "statusMessage": message}));
        let resp = req.send().await.map_err(transport)?;
        match resp.status() {
            s if s.is_success() => Ok(body::<Changed>(resp).await?.changed),
            StatusCode::NOT_FOUND => Ok(false),
            StatusCode::CONFLICT => {
                let problem: Value = resp.json().await.unwrap_or(Value::Null);
                Err(TaskStoreError::InvalidTransition(format!(
                    "input request keys must be unique over a task's lifetime: {}",
                    problem["detail"]
                        .as_str()
                        .unwrap_or("a key was used before")
                )))
            }
            _ => Err(unexpected(resp).await),
        }
    }

    /// `POST .../input-responses`; `None` when the task is absent or settled (409).
    pub(crate) async fn answer(&self, id: &str, responses: Value) -> Result<Option<Answered>> {
        let req = self
            .task_request(Method::POST, id, &["input-responses"])?
            .json(&json!({"responses": responses}));
        let resp = req.send().await.map_err(transport)?;
        match resp.status() {
            s if s.is_success() => body(resp).await.map(Some),
            StatusCode::NOT_FOUND | StatusCode::CONFLICT => Ok(None),
            _ => Err(unexpected(resp).await),
        }
    }

    /// `DELETE /v1/hosted-tasks/{id}`; `false` when absent.
    pub(crate) async fn discard(&self, id: &str) -> Result<bool> {
        let req = self.task_request(Method::DELETE, id, &[])?;
        Ok(self.send(req).await?.is_some())
    }
}
