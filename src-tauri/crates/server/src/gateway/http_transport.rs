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

use rmcp::{
    model::JsonRpcMessage,
    service::{RoleClient, RxJsonRpcMessage, TxJsonRpcMessage},
    transport::Transport,
};

/// `T`, ending (its `receive` answers `None`) at the first JSON-RPC error without an id.
pub struct EndsOnUnaddressedError<T>(pub T);

impl<T: Transport<RoleClient>> Transport<RoleClient> for EndsOnUnaddressedError<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.0.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        let message = self.0.receive().await?;
        if let JsonRpcMessage::Error(error) = &message
            && error.id.is_none()
        {
            tracing::warn!(
                code = error.error.code.0,
                "upstream answered with an error for no request ({}): connecting again",
                error.error.message
            );
            return None;
        }
        Some(message)
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.0.close()
    }
}
