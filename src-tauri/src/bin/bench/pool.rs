//! A fixed pool of keep-alive HTTP/1.1 connections shared by many simulated clients
//! (`taskdeck-bench fleet`): a thousand agents that each send a request every second or so need
//! a few dozen connections, not a thousand, and one generator thread can drive them all.
//!
//! A request takes the connection idle longest (first in, first out; callers wait in the order
//! they asked), sends, reads the whole body and gives the connection back. A connection that
//! failed is replaced by a new one, so one reset costs one request, not the pool. [`connect`]
//! opens one such connection; `seed`, `rate` and `mcp-calls` use it for their own.

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::{Request, StatusCode, client::conn::http1::SendRequest};
use hyper_util::rt::TokioIo;
use tokio::sync::{Mutex, mpsc};

/// One connection's sending half.
type Sender = SendRequest<Full<Bytes>>;

/// `size` connections to one server.
pub struct Pool {
    /// `host:port` of the server.
    authority: String,
    idle_tx: mpsc::UnboundedSender<Sender>,
    idle_rx: Mutex<mpsc::UnboundedReceiver<Sender>>,
}

/// Opens a keep-alive connection (TCP_NODELAY) to `authority`; errors say which step failed.
pub async fn connect(authority: &str) -> Result<Sender, String> {
    let stream = tokio::net::TcpStream::connect(authority)
        .await
        .map_err(|e| format!("connect {authority}: {e}"))?;
    stream.set_nodelay(true).map_err(|e| e.to_string())?;
    let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| format!("handshake: {e}"))?;
    tokio::spawn(conn);
    Ok(sender)
}

impl Pool {
    /// Opens `size` connections to `authority` (`host:port`).
    pub async fn open(authority: &str, size: usize) -> Result<Pool, String> {
        let (idle_tx, idle_rx) = mpsc::unbounded_channel();
        for _ in 0..size.max(1) {
            idle_tx.send(connect(authority).await?).expect("pool open");
        }
        Ok(Pool {
            authority: authority.to_string(),
            idle_tx,
            idle_rx: Mutex::new(idle_rx),
        })
    }

    /// Sends `req` on the next free connection; returns the status and the whole body, or why
    /// no answer came (the connection is then replaced).
    pub async fn send(&self, req: Request<Full<Bytes>>) -> Result<(StatusCode, Bytes), String> {
        let mut sender = {
            let mut idle = self.idle_rx.lock().await;
            idle.recv().await.expect("the pool holds its own sender")
        };
        let answer = async {
            sender
                .ready()
                .await
                .map_err(|e| format!("connection: {e}"))?;
            let resp = sender
                .send_request(req)
                .await
                .map_err(|e| format!("send: {e}"))?;
            let status = resp.status();
            let body = resp
                .into_body()
                .collect()
                .await
                .map_err(|e| format!("body: {e}"))?
                .to_bytes();
            Ok::<_, String>((status, body))
        }
        .await;
        if answer.is_err() {
            match connect(&self.authority).await {
                Ok(fresh) => sender = fresh,
                // Keep the broken one: its next use fails fast and tries again.
                Err(e) => eprintln!("taskdeck-bench: reconnect failed: {e}"),
            }
        }
        let _ = self.idle_tx.send(sender);
        answer
    }
}
