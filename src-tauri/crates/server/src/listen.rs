//! The HTTP/1.1 connection loop under `taskdeck serve`: accepts on the listener and serves each
//! connection with hyper, as `axum::serve` does, plus what a server open to every local process
//! needs and `axum::serve` does not set: a deadline for a request's head. A client that opens
//! a connection and sends its headers slowly, or never, is disconnected once
//! [`HEADER_READ_TIMEOUT`] passes, instead of holding a socket and a task for ever (idle
//! keep-alive connections close after it too, as most servers' keep-alive timeouts do).
//! Every accepted socket gets `TCP_NODELAY`: small answers must not wait for the peer's
//! delayed ACK (~40 ms).

use std::{io, time::Duration};

use axum::Router;
use hyper::server::conn::http1;
use hyper_util::{
    rt::{TokioIo, TokioTimer},
    service::TowerToHyperService,
};
use tokio::net::TcpListener;
use tokio_util::{sync::CancellationToken, task::TaskTracker};

/// How long a client has to send a request's whole head (request line and headers) from the
/// moment the connection is ready for it: after the accept, or after the previous answer on a
/// kept-alive connection. Past it the connection is closed without an answer.
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(30);

/// Serves `app` on `listener` until `stop` is cancelled; then stops accepting, asks every open
/// connection to close after the request it is serving (hyper's graceful shutdown), and returns
/// once all have closed. Accept errors are logged and retried (after 50 ms, unless the peer
/// merely went away first).
pub async fn serve(listener: TcpListener, app: Router, stop: CancellationToken) {
    let connections = TaskTracker::new();
    loop {
        let tcp = tokio::select! {
            _ = stop.cancelled() => break,
            accepted = listener.accept() => match accepted {
                Ok((tcp, _)) => tcp,
                Err(e) if peer_went_away(&e) => continue,
                Err(e) => {
                    // Out of file descriptors, say: wait for some to be freed.
                    tracing::warn!("cannot accept a connection: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let _ = tcp.set_nodelay(true);
        let service = TowerToHyperService::new(app.clone());
        let stop = stop.clone();
        connections.spawn(async move {
            let mut http = http1::Builder::new();
            http.timer(TokioTimer::new())
                .header_read_timeout(HEADER_READ_TIMEOUT);
            let conn = http
                .serve_connection(TokioIo::new(tcp), service)
                .with_upgrades();
            tokio::pin!(conn);
            let served = tokio::select! {
                served = conn.as_mut() => served,
                _ = stop.cancelled() => {
                    conn.as_mut().graceful_shutdown();
                    conn.await
                }
            };
            if let Err(e) = served {
                tracing::debug!("connection ended: {e}");
            }
        });
    }
    drop(listener);
    connections.close();
    connections.wait().await;
}

/// An accept error that concerns only the connection being accepted.
fn peer_went_away(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::ConnectionRefused
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
    )
}
