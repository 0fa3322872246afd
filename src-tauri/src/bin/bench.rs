//! `taskdeck-bench`: the load tool behind `BENCHMARKS.md` (run through `scripts/bench.sh`).
//!
//! - `ceiling --port P`: a bare axum server that parses the same JSON-RPC body a `tasks/get`
//!   carries and answers a small JSON object: the ceiling any endpoint on this machine can reach.
//! - `load --url U --mode get|create|ceiling --connections N --seconds S [--token T] [--task-id ID]`:
//!   N keep-alive HTTP/1.1 connections (TCP_NODELAY) on one thread, each sending the next
//!   request as soon as the previous answer is read; prints one JSON line with requests/s and
//!   latency percentiles (µs). Every response is checked (status 200 and the expected body
//!   shape), so errors cannot pass as throughput.
//! - `seed --url U --token T --count N`: creates N finished tasks as fast as the server takes them.

use std::time::{Duration, Instant};

use bytes::Bytes;
use clap::{Parser, Subcommand, ValueEnum};
use http_body_util::{BodyExt, Full};
use hyper::Request;
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};

#[derive(Parser)]
#[command(name = "taskdeck-bench", about = "Load tool for Taskdeck's benchmarks")]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Clone, Copy, ValueEnum, PartialEq)]
enum Mode {
    /// `tasks/get` of one task
    Get,
    /// `tools/call echo` creating a task (durable before the reply)
    Create,
    /// POST the tasks/get body to the ceiling server
    Ceiling,
}

#[derive(Subcommand)]
enum Cmd {
    Ceiling {
        #[arg(long)]
        port: u16,
    },
    Load {
        #[arg(long)]
        url: String,
        #[arg(long, value_enum)]
        mode: Mode,
        #[arg(long, default_value_t = 50)]
        connections: usize,
        #[arg(long, default_value_t = 10.0)]
        seconds: f64,
        #[arg(long, default_value = "")]
        token: String,
        #[arg(long, default_value = "")]
        task_id: String,
    },
    Seed {
        #[arg(long)]
        url: String,
        #[arg(long)]
        token: String,
        #[arg(long)]
        count: usize,
        #[arg(long, default_value_t = 50)]
        connections: usize,
    },
}

fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "taskdeck-bench", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}}
    })
}

/// Method, `Mcp-Name` and body of one request of `mode`.
fn request_parts(mode: Mode, task_id: &str, n: u64) -> (&'static str, String, Bytes) {
    match mode {
        Mode::Get | Mode::Ceiling => {
            let body = json!({"jsonrpc": "2.0", "id": n, "method": "tasks/get", "params": {"taskId": task_id, "_meta": meta()}});
            (
                "tasks/get",
                task_id.to_string(),
                Bytes::from(body.to_string()),
            )
        }
        Mode::Create => {
            let body = json!({"jsonrpc": "2.0", "id": n, "method": "tools/call",
                "params": {"name": "echo", "arguments": {"n": n, "note": "benchmark task"}, "_meta": meta()}});
            (
                "tools/call",
                "echo".to_string(),
                Bytes::from(body.to_string()),
            )
        }
    }
}

fn check(mode: Mode, body: &[u8]) -> Result<(), String> {
    let v: Value = serde_json::from_slice(body).map_err(|e| format!("not JSON: {e}"))?;
    let ok = match mode {
        Mode::Get => v["result"]["taskId"].is_string() && v["result"]["resultType"] == "complete",
        Mode::Create => v["result"]["resultType"] == "task" && v["result"]["taskId"].is_string(),
        Mode::Ceiling => v["ok"] == true,
    };
    if ok {
        Ok(())
    } else {
        Err(format!("unexpected answer: {v}"))
    }
}

struct ConnResult {
    latencies_us: Vec<u32>,
    errors: u64,
    first_error: Option<String>,
}

async fn connection(
    url: hyper::Uri,
    mode: Mode,
    token: String,
    task_id: String,
    deadline: Instant,
    limit: Option<u64>,
    seq: std::sync::Arc<std::sync::atomic::AtomicU64>,
) -> ConnResult {
    let authority = url.authority().unwrap().clone();
    let stream = tokio::net::TcpStream::connect(authority.as_str())
        .await
        .expect("connect");
    stream.set_nodelay(true).unwrap();
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .expect("handshake");
    tokio::spawn(conn);
    let mut out = ConnResult {
        latencies_us: Vec::with_capacity(1 << 16),
        errors: 0,
        first_error: None,
    };
    while Instant::now() < deadline {
        let n = seq.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if limit.is_some_and(|l| n >= l) {
            break;
        }
        let (method, name, body) = request_parts(mode, &task_id, n);
        let mut req = Request::post(url.path())
            .header("host", authority.as_str())
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", method)
            .header("mcp-name", name);
        if !token.is_empty() {
            req = req.header("authorization", format!("Bearer {token}"));
        }
        let req = req.body(Full::new(body)).unwrap();
        let start = Instant::now();
        let resp = match sender.send_request(req).await {
            Ok(r) => r,
            Err(e) => {
                out.errors += 1;
                out.first_error.get_or_insert(e.to_string());
                break;
            }
        };
        let status = resp.status();
        let bytes = resp
            .into_body()
            .collect()
            .await
            .map(|b| b.to_bytes())
            .unwrap_or_default();
        let us = start.elapsed().as_micros().min(u32::MAX as u128) as u32;
        match (status.is_success(), check(mode, &bytes)) {
            (true, Ok(())) => out.latencies_us.push(us),
            (_, r) => {
                out.errors += 1;
                out.first_error
                    .get_or_insert(format!("HTTP {status}: {}", r.err().unwrap_or_default()));
            }
        }
    }
    out
}

async fn run_load(
    url: &str,
    mode: Mode,
    connections: usize,
    seconds: f64,
    token: &str,
    task_id: &str,
    limit: Option<u64>,
) -> Value {
    let url: hyper::Uri = url.parse().expect("url");
    let deadline = Instant::now() + Duration::from_secs_f64(seconds);
    let seq = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let started = Instant::now();
    let handles: Vec<_> = (0..connections)
        .map(|_| {
            tokio::spawn(connection(
                url.clone(),
                mode,
                token.to_string(),
                task_id.to_string(),
                deadline,
                limit,
                seq.clone(),
            ))
        })
        .collect();
    let mut all = Vec::new();
    let mut errors = 0;
    let mut first_error = None;
    for h in handles {
        let r = h.await.unwrap();
        all.extend(r.latencies_us);
        errors += r.errors;
        if first_error.is_none() {
            first_error = r.first_error;
        }
    }
    let elapsed = started.elapsed().as_secs_f64();
    all.sort_unstable();
    let pct = |p: f64| {
        all.get(((all.len() as f64 * p) as usize).min(all.len().saturating_sub(1)))
            .copied()
            .unwrap_or(0)
    };
    json!({
        "requests": all.len(), "errors": errors, "firstError": first_error, "seconds": elapsed,
        "rps": (all.len() as f64 / elapsed).round(),
        "p50us": pct(0.50), "p99us": pct(0.99), "maxus": all.last().copied().unwrap_or(0),
    })
}

async fn ceiling(port: u16) {
    use axum::{Json, Router, routing::post};
    #[derive(serde::Deserialize)]
    #[allow(dead_code)]
    struct Rpc {
        jsonrpc: String,
        id: Value,
        method: String,
        params: Value,
    }
    let app = Router::new().route(
        "/mcp",
        post(|Json(rpc): Json<Rpc>| async move {
            Json(json!({"ok": true, "id": rpc.id, "method": rpc.method}))
        }),
    );
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
        .await
        .expect("bind");
    use axum::serve::ListenerExt;
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    println!("ceiling listening on 127.0.0.1:{port}");
    axum::serve(listener, app).await.unwrap();
}

fn main() {
    let cli = Cli::parse();
    match cli.cmd {
        Cmd::Ceiling { port } => {
            // One worker thread: the server is pinned to one core by the bench script.
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(ceiling(port));
        }
        Cmd::Load {
            url,
            mode,
            connections,
            seconds,
            token,
            task_id,
        } => {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            let r = rt.block_on(run_load(
                &url,
                mode,
                connections,
                seconds,
                &token,
                &task_id,
                None,
            ));
            println!("{r}");
            if r["errors"].as_u64() != Some(0) {
                std::process::exit(1);
            }
        }
        Cmd::Seed {
            url,
            token,
            count,
            connections,
        } => {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            let r = rt.block_on(run_load(
                &url,
                Mode::Create,
                connections,
                3600.0,
                &token,
                "",
                Some(count as u64),
            ));
            println!("{r}");
            if r["errors"].as_u64() != Some(0) {
                std::process::exit(1);
            }
        }
    }
}
