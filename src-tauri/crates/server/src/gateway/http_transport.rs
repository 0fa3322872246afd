//! An HTTP upstream's transport: rmcp's Streamable HTTP client, ended when the server answers
//! with a JSON-RPC error that names no request (`"id": null`).
//!
//! A server that restarted has forgotten its sessions. The spec has it answer an unknown
//! session with 404, which rmcp's client takes as a sign to start a new session; some answer
//! 400 with such an error instead (the TypeScript SDK's servers: "Bad Request: No valid session
//! ID provided"). rmcp hands that error on, and the request it answers waits for a reply that
//! never comes, until its timeout (10 minutes by default), as does every request after it on
//! the same session. Ending the connection there fails the requests in flight at once ("it may
//! have run": Taskdeck cannot tell whether one reached the server) and lets the supervisor
//! connect again with a new session.
//!
//! A request that the server refuses with such an error naming its session (400 "Bad Request:
//! No valid session ID provided") did not run: [`SessionAware`] reports it to rmcp as an
//! expired session, as a 404 is, so rmcp starts a new session and sends the request again once.
//! A developer restarting their server between two calls then sees the second one served, not
//! failed as "it may have run".
//!
//! A server that stops listening between calls is seen by the `GET` event stream the client
//! keeps open: when it breaks and cannot be opened again because nothing accepts the
//! connection, [`Unreachable`] tells the supervisor, which shows the server as failed and
//! connects again, instead of showing it connected until the next call finds out. (A server
//! that offers no such stream is found out by the next call.)
//!
//! A call's event stream that breaks before its answer is resumed (`GET` with
//! `Last-Event-ID`, SEP-1699) a few times over about five seconds ([`resume_policy`]), not
//! for ever: when the server died, the call fails then ("it may have run") instead of at its
//! timeout.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
    time::Duration,
};

use futures::stream::BoxStream;
use http::{HeaderName, HeaderValue};
use rmcp::{
    model::{ClientJsonRpcMessage, JsonRpcMessage},
    service::{RoleClient, RxJsonRpcMessage, TxJsonRpcMessage},
    transport::{
        Transport,
        common::client_side_sse::{ExponentialBackoff, SseRetryPolicy},
        streamable_http_client::{
            SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
            StreamableHttpResponseLimits,
        },
    },
};
use tokio::sync::Notify;

/// How often a broken event stream is resumed: after 0.4, 0.8, 1.6 and 2 s (5 tries, the first
/// at once; a server's `retry:` field can only lengthen a wait), then the stream ends and a
/// call still waiting on it fails. rmcp's default retries for ever, doubling its wait.
pub fn resume_policy() -> Arc<dyn SseRetryPolicy> {
    let mut policy = ExponentialBackoff::default();
    policy.max_times = Some(5);
    policy.base_duration = Duration::from_millis(200);
    policy.max_delay = Some(Duration::from_secs(2));
    Arc::new(policy)
}

/// rmcp's HTTP client (reqwest's), but for a request sent in a session that the server answers
/// with a JSON-RPC error for no request that names the session: that is
/// [`StreamableHttpError::SessionExpired`], as a 404 would be (see the module doc). The error's
/// words decide it (`session`, in any case): a server that refuses a request for another
/// reason without naming it (bad credentials) is not sent it again. An event stream that
/// cannot connect is reported to `unreachable`.
#[derive(Clone)]
pub struct SessionAware {
    /// The HTTP client that sends the requests.
    pub client: reqwest_rmcp::Client,
    /// Where a failed event stream connection is reported.
    pub unreachable: Unreachable,
}

/// Where an HTTP connection reports that its server cannot be reached any more (an event
/// stream's `GET` found nothing accepting the connection at `url`): `why` gets
/// "cannot reach URL any more: ERROR" and `notify` wakes the supervisor, which drops the
/// connection and connects again with backoff. `url` is shown, so it holds no credential
/// (`redact_url`).
#[derive(Clone)]
pub struct Unreachable {
    /// The server's URL, credentials redacted.
    pub url: String,
    /// Set to "cannot reach URL any more: ERROR" for the supervisor to show.
    pub why: Arc<Mutex<Option<String>>>,
    /// Wakes the supervisor.
    pub notify: Arc<Notify>,
}

impl Unreachable {
    /// Reports `result` of a `GET` when it failed to connect; passes it on as it is.
    fn check<T>(
        &self,
        result: Result<T, StreamableHttpError<reqwest_rmcp::Error>>,
    ) -> Result<T, StreamableHttpError<reqwest_rmcp::Error>> {
        if let Err(StreamableHttpError::Client(e)) = &result
            && e.is_connect()
        {
            // The innermost cause says it ("Connection refused (os error 111)"); reqwest's own
            // words only say that a request failed.
            let cause = std::iter::successors(std::error::Error::source(e), |c| c.source())
                .last()
                .map_or_else(|| "the connection failed".into(), |c| c.to_string());
            *self.why.lock().unwrap() =
                Some(format!("cannot reach {} any more: {cause}", self.url));
            self.notify.notify_one();
        }
        result
    }
}

/// True when `response`, to `message` sent in a session, says the server knows no such
/// session: a JSON-RPC error with no id whose message names the session.
fn forgot_session(
    message: &ClientJsonRpcMessage,
    in_session: bool,
    response: &StreamableHttpPostResponse,
) -> bool {
    let StreamableHttpPostResponse::Json(JsonRpcMessage::Error(error), _) = response else {
        return false;
    };
    in_session
        && matches!(message, ClientJsonRpcMessage::Request(_))
        && error.id.is_none()
        && error.error.message.to_ascii_lowercase().contains("session")
}

impl StreamableHttpClient for SessionAware {
    type Error = reqwest_rmcp::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        self.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            StreamableHttpResponseLimits::default(),
        )
        .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        let in_session = session_id.is_some();
        let response = self
            .client
            .post_message_with_response_limits(
                uri,
                message.clone(),
                session_id,
                auth_header,
                custom_headers,
                limits,
            )
            .await?;
        if forgot_session(&message, in_session, &response) {
            return Err(StreamableHttpError::SessionExpired);
        }
        Ok(response)
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), StreamableHttpError<Self::Error>> {
        self.client
            .delete_session(uri, session_id, auth_header, custom_headers)
            .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<
        BoxStream<'static, Result<sse_stream::Sse, SseError>>,
        StreamableHttpError<Self::Error>,
    > {
        let result = self
            .client
            .get_stream(uri, session_id, last_event_id, auth_header, custom_headers)
            .await;
        self.unreachable.check(result)
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<
        BoxStream<'static, Result<sse_stream::Sse, SseError>>,
        StreamableHttpError<Self::Error>,
    > {
        let result = self
            .client
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await;
        self.unreachable.check(result)
    }
}

/// `inner`, ending (its `receive` answers `None`) at the first JSON-RPC error without an id,
/// whose code and message it leaves in `why` for the supervisor to show (scrubbed of the
/// server's secrets: the message may quote them, so it is not logged here).
pub struct EndsOnUnaddressedError<T> {
    /// The transport wrapped.
    pub inner: T,
    /// Set to the error's code and message (scrubbed) when it ends.
    pub why: Arc<Mutex<Option<String>>>,
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for EndsOnUnaddressedError<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        let message = self.inner.receive().await?;
        if let JsonRpcMessage::Error(error) = &message
            && error.id.is_none()
        {
            tracing::debug!(
                code = error.error.code.0,
                "upstream answered with an error for no request: ending the connection"
            );
            *self.why.lock().unwrap() = Some(format!(
                "the server answered with an error for no request: {} (code {})",
                error.error.message, error.error.code.0
            ));
            return None;
        }
        Some(message)
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}
