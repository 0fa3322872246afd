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
//! A call's event stream that breaks before its answer is resumed (`GET` with
//! `Last-Event-ID`, SEP-1699) a few times over about five seconds ([`resume_policy`]), not
//! for ever: when the server died, the call fails then ("it may have run") instead of at its
//! timeout.

use std::{
    sync::{Arc, Mutex},
    time::Duration,
};

use rmcp::{
    model::JsonRpcMessage,
    service::{RoleClient, RxJsonRpcMessage, TxJsonRpcMessage},
    transport::{
        Transport,
        common::client_side_sse::{ExponentialBackoff, SseRetryPolicy},
    },
};

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

/// `inner`, ending (its `receive` answers `None`) at the first JSON-RPC error without an id,
/// whose code and message it leaves in `why` for the supervisor to show (scrubbed of the
/// server's secrets: the message may quote them, so it is not logged here).
pub struct EndsOnUnaddressedError<T> {
    pub inner: T,
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
