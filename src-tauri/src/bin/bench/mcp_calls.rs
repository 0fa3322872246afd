//! `taskdeck-bench mcp-calls`: one quick tool, called in a loop by N concurrent MCP sessions of
//! the 2025-11-25 era over Streamable HTTP, against any MCP server. The gateway benchmark
//! (`scripts/bench-gateway.sh`) runs it against `server-everything` directly and against the
//! same server behind Taskdeck: one client code path for both, so the difference is the gateway.
//!
//! Each session is one keep-alive HTTP/1.1 connection: `initialize` (the `Mcp-Session-Id` it
//! answers is sent with every later request), `notifications/initialized`, then `tools/call`
//! after `tools/call`, each waiting for its answer (a JSON body or an SSE stream; the SSE
//! `data:` event carrying the response is picked out). An answer counts when it is a
//! `CallToolResult` without `isError` whose first text content contains the expected text.
//! Calls that start during the warmup are made and checked but not counted in the latencies;
//! `allRequests` in the summary counts every checked answer, warmup included (to divide the
//! servers' CPU time by).

use std::{
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
    time::{Duration, Instant},
};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::{Request, client::conn::http1::SendRequest};
use serde_json::{Value, json};

use crate::{Latencies, summary};

/// The protocol version the sessions negotiate.
const PROTOCOL_VERSION: &str = "2025-11-25";

/// What to call and how hard.
#[derive(Clone)]
pub struct CallPlan {
    /// The server's MCP endpoint, e.g. `http://127.0.0.1:4747/mcp`.
    pub url: hyper::Uri,
    /// A bearer token, or empty for none.
    pub token: String,
    /// The tool's name as the server lists it, e.g. `echo` or `everything__echo`.
    pub tool: String,
    /// The tool's arguments (a JSON object).
    pub arguments: Value,
    /// Text the result's first text content must contain.
    pub expect: String,
    /// Concurrent sessions, each with its own connection.
    pub sessions: usize,
    /// Calls before this instant are not counted.
    pub measure_from: Instant,
    /// No call starts after this instant.
    pub deadline: Instant,
}

/// One HTTP/1.1 connection carrying one MCP session.
struct Session {
    sender: SendRequest<Full<Bytes>>,
    plan: Arc<CallPlan>,
    session_id: Option<String>,
    next_id: u64,
}

impl Session {
    /// Connects and initializes; errors say which step failed.
    async fn open(plan: Arc<CallPlan>) -> Result<Session, String> {
        let authority = plan.url.authority().ok_or("url without host")?.clone();
        let sender = crate::pool::connect(authority.as_str()).await?;
        let mut session = Session {
            sender,
            plan,
            session_id: None,
            next_id: 1,
        };
        let init = json!({"protocolVersion": PROTOCOL_VERSION, "capabilities": {},
            "clientInfo": {"name": "taskdeck-bench", "version": "1"}});
        let answer = session.request("initialize", init).await?;
        if answer.get("result").is_none() {
            return Err(format!("initialize failed: {answer}"));
        }
        session
            .post(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await?;
        Ok(session)
    }

    /// One `tools/call`; `Ok` when its answer is the expected result.
    async fn call_tool(&mut self) -> Result<(), String> {
        let params = json!({"name": self.plan.tool, "arguments": self.plan.arguments});
        let answer = self.request("tools/call", params).await?;
        let result = &answer["result"];
        let text = result["content"][0]["text"].as_str().unwrap_or_default();
        if result["isError"] != json!(true) && text.contains(&self.plan.expect) {
            Ok(())
        } else {
            Err(format!("unexpected answer: {answer}"))
        }
    }

    /// Sends request `method` and returns the JSON-RPC response with its id.
    async fn request(&mut self, method: &str, params: Value) -> Result<Value, String> {
        let id = self.next_id;
        self.next_id += 1;
        let body = self
            .post(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await?;
        response_with_id(&body, id).ok_or_else(|| {
            format!(
                "no response with id {id} to {method} in: {}",
                String::from_utf8_lossy(&body)
            )
        })
    }

    /// POSTs one JSON-RPC message; returns the whole body (the SSE stream ends with the answer).
    async fn post(&mut self, message: Value) -> Result<Bytes, String> {
        let url = &self.plan.url;
        let mut req = Request::post(url.path())
            .header("host", url.authority().map(|a| a.as_str()).unwrap_or(""))
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", PROTOCOL_VERSION);
        if !self.plan.token.is_empty() {
            req = req.header("authorization", format!("Bearer {}", self.plan.token));
        }
        if let Some(sid) = &self.session_id {
            req = req.header("mcp-session-id", sid);
        }
        let req = req
            .body(Full::new(Bytes::from(message.to_string())))
            .map_err(|e| e.to_string())?;
        let resp = self
            .sender
            .send_request(req)
            .await
            .map_err(|e| format!("send: {e}"))?;
        let status = resp.status();
        if let Some(sid) = resp.headers().get("mcp-session-id") {
            self.session_id = sid.to_str().ok().map(str::to_string);
        }
        let body = resp
            .into_body()
            .collect()
            .await
            .map_err(|e| format!("body: {e}"))?
            .to_bytes();
        if !status.is_success() {
            return Err(format!("HTTP {status}: {}", String::from_utf8_lossy(&body)));
        }
        Ok(body)
    }
}

/// The JSON-RPC response with `id` in `body`: a JSON object, or the `data:` of an SSE event.
fn response_with_id(body: &[u8], id: u64) -> Option<Value> {
    let is_it =
        |v: &Value| v["id"] == json!(id) && (v.get("result").is_some() || v.get("error").is_some());
    if let Ok(v) = serde_json::from_slice::<Value>(body) {
        return is_it(&v).then_some(v);
    }
    let text = std::str::from_utf8(body).ok()?;
    text.lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
        .find(is_it)
}

/// One session's loop until the deadline; `answered` counts every good answer.
async fn run_session(plan: Arc<CallPlan>, answered: Arc<AtomicU64>) -> Latencies {
    let mut out = Latencies::default();
    let mut session = match Session::open(plan.clone()).await {
        Ok(s) => s,
        Err(e) => {
            out.fail(e);
            return out;
        }
    };
    loop {
        let start = Instant::now();
        if start >= plan.deadline {
            break;
        }
        let answer = session.call_tool().await;
        if answer.is_ok() {
            answered.fetch_add(1, Ordering::Relaxed);
        }
        match answer {
            // Only calls wholly inside the measured window count.
            Ok(()) if start >= plan.measure_from && Instant::now() <= plan.deadline => {
                out.record(start.elapsed())
            }
            Ok(()) => {}
            Err(e) => {
                out.fail(e);
                break;
            }
        }
    }
    out
}

/// Runs `plan`; returns the summary of the calls made after the warmup (see [`summary`]) with
/// `allRequests`.
pub async fn run(plan: CallPlan) -> Value {
    let plan = Arc::new(plan);
    let answered = Arc::new(AtomicU64::new(0));
    let handles: Vec<_> = (0..plan.sessions)
        .map(|_| tokio::spawn(run_session(plan.clone(), answered.clone())))
        .collect();
    let mut all = Latencies::default();
    for h in handles {
        all.merge(h.await.expect("session task"));
    }
    let measured = plan.deadline.saturating_duration_since(plan.measure_from);
    let mut out = summary(all, measured.max(Duration::from_millis(1)).as_secs_f64());
    out["allRequests"] = answered.load(Ordering::Relaxed).into();
    out
}
