//! `taskdeck-bench rate`: durable creation (`tools/call echo` by a client declaring the tasks
//! extension) at a fixed offered rate, or at the peak, for `scripts/bench-fleet.sh`.
//!
//! **Offered rate (open loop).** Request `i` is due at `start + i / rps`, whatever happened to
//! the ones before it. A dispatcher hands each due request to a queue every millisecond (the
//! timer's resolution: at 10k/s, about ten at a time); `connections` keep-alive connections
//! take requests from the queue as soon as they are free. A request's latency runs from the
//! instant it was *due*, not the instant a connection got to send it, so a server that stalls
//! is charged for every request that should have gone out meanwhile (no coordinated
//! omission, as in wrk2 and HdrHistogram's corrected mode). Requests still queued when the run
//! ends are sent and counted.
//!
//! **Peak (`rps` 0, closed loop).** Each connection sends its next request when the previous
//! one is answered; latency runs from the send.
//!
//! Prints one JSON line: `requests`, `errors`, `firstError`, `seconds`, `offeredRps`, `rps`
//! (answers per second of the run), `p50us`, `p99us`, `p999us`, `maxus` (µs), `over10ms`
//! (answers that took over 10 ms), and `maxGapus` / `gapsOver10ms`: the longest time in which
//! no answer arrived at all while the run went on, and how many such gaps exceeded 10 ms (a
//! stall of the server, as opposed to a slow request); `gaps` lists the first 50 of those as
//! `[start, length]` in ms since the run's start, to line them up with the server's log.

use std::{
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
    time::{Duration, Instant},
};

use http_body_util::BodyExt;
use serde_json::{Value, json};
use tokio::sync::{Mutex, mpsc};

use crate::{Creation, check, percentile};

/// What `rate` offers, and where.
pub struct RatePlan {
    /// The MCP endpoint, e.g. `http://127.0.0.1:4747/mcp`.
    pub url: hyper::Uri,
    /// The bearer token.
    pub token: String,
    /// Offered creations per second; 0 for the peak (closed loop).
    pub rps: f64,
    /// How long requests are offered (or, at the peak, sent).
    pub duration: Duration,
    /// Keep-alive connections.
    pub connections: usize,
}

/// A request handed to a connection: its sequence number and the instant it was due.
type Due = (u64, Instant);

/// What one connection measured: latencies (µs) and the instants answers arrived (µs since the
/// start), in the order they arrived.
#[derive(Default)]
struct Measured {
    latencies_us: Vec<u64>,
    answered_at_us: Vec<u64>,
    errors: u64,
    first_error: Option<String>,
}

/// Runs the plan; returns the summary described in the module comment.
pub async fn run(plan: RatePlan) -> Value {
    let creation = Creation {
        tool: "echo".into(),
        arguments: None,
    };
    let plan = Arc::new(plan);
    let start = Instant::now();
    let end = start + plan.duration;
    let (tx, rx) = mpsc::unbounded_channel::<Due>();
    let queue = Arc::new(Mutex::new(rx));
    let seq = Arc::new(AtomicU64::new(0));
    let handles: Vec<_> = (0..plan.connections)
        .map(|_| {
            tokio::spawn(connection(
                creation.clone(),
                plan.clone(),
                queue.clone(),
                seq.clone(),
                start,
                end,
            ))
        })
        .collect();
    if plan.rps > 0.0 {
        let mut sent: u64 = 0;
        let mut tick = tokio::time::interval(Duration::from_millis(1));
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Burst);
        loop {
            tick.tick().await;
            let now = Instant::now();
            let elapsed = now.min(end).duration_since(start).as_secs_f64();
            let due = (elapsed * plan.rps).floor() as u64 + 1;
            while sent < due {
                let at = start + Duration::from_secs_f64(sent as f64 / plan.rps);
                if at >= end {
                    break;
                }
                let _ = tx.send((sent, at));
                sent += 1;
            }
            if now >= end {
                break;
            }
        }
    }
    drop(tx);
    let mut all = Measured::default();
    for h in handles {
        let m = h.await.unwrap();
        all.latencies_us.extend(m.latencies_us);
        all.answered_at_us.extend(m.answered_at_us);
        all.errors += m.errors;
        if all.first_error.is_none() {
            all.first_error = m.first_error;
        }
    }
    let seconds = start.elapsed().as_secs_f64();
    summarize(all, plan.rps, seconds, plan.duration)
}

/// One connection: takes due requests from `queue` (offered rate) or sends back to back until
/// `end` (peak), measuring each answer.
async fn connection(
    creation: Creation,
    plan: Arc<RatePlan>,
    queue: Arc<Mutex<mpsc::UnboundedReceiver<Due>>>,
    seq: Arc<AtomicU64>,
    start: Instant,
    end: Instant,
) -> Measured {
    let mut out = Measured::default();
    let authority = plan.url.authority().unwrap().clone();
    let mut sender = match crate::pool::connect(authority.as_str()).await {
        Ok(s) => s,
        Err(e) => {
            out.errors += 1;
            out.first_error = Some(e);
            return out;
        }
    };
    loop {
        let (n, due) = if plan.rps > 0.0 {
            let next = queue.lock().await.recv().await;
            match next {
                Some(d) => d,
                None => break,
            }
        } else {
            let now = Instant::now();
            if now >= end {
                break;
            }
            (seq.fetch_add(1, Ordering::Relaxed), now)
        };
        let req = creation.request(&plan.url, authority.as_str(), &plan.token, n);
        let answer = match sender.send_request(req).await {
            Ok(r) => {
                let status = r.status();
                let body = r.into_body().collect().await.map(|b| b.to_bytes());
                match body {
                    Ok(b) if status.is_success() => {
                        check(&b).map_err(|e| format!("HTTP {status}: {e}"))
                    }
                    Ok(b) => Err(format!("HTTP {status}: {}", String::from_utf8_lossy(&b))),
                    Err(e) => Err(e.to_string()),
                }
            }
            Err(e) => Err(e.to_string()),
        };
        let now = Instant::now();
        match answer {
            Ok(()) => {
                out.latencies_us
                    .push(now.duration_since(due).as_micros() as u64);
                out.answered_at_us
                    .push(now.duration_since(start).as_micros() as u64);
            }
            Err(e) => {
                out.errors += 1;
                out.first_error.get_or_insert(e);
                if sender.ready().await.is_err() {
                    break;
                }
            }
        }
    }
    out
}

/// The JSON line of a run (see the module comment); gaps count only within `duration`.
fn summarize(mut all: Measured, rps: f64, seconds: f64, duration: Duration) -> Value {
    const STALL_US: u64 = 10_000;
    const MAX_GAPS_LISTED: usize = 50;
    let lat = &mut all.latencies_us;
    lat.sort_unstable();
    let pct = |p: f64| percentile(lat, p);
    let at = &mut all.answered_at_us;
    at.sort_unstable();
    let window = duration.as_micros() as u64;
    let mut max_gap = 0;
    let mut gaps_over = 0;
    let mut first_gaps = Vec::new();
    let mut previous = at.first().copied().unwrap_or(0);
    for &t in at.iter().take_while(|&&t| t <= window) {
        let gap = t - previous;
        max_gap = max_gap.max(gap);
        if gap > STALL_US {
            gaps_over += 1;
            if first_gaps.len() < MAX_GAPS_LISTED {
                first_gaps.push([previous / 1000, gap / 1000]);
            }
        }
        previous = t;
    }
    json!({
        "requests": lat.len(), "errors": all.errors, "firstError": all.first_error,
        "seconds": (seconds * 1000.0).round() / 1000.0, "offeredRps": rps,
        "rps": (lat.len() as f64 / seconds).round(),
        "p50us": pct(0.50), "p99us": pct(0.99), "p999us": pct(0.999),
        "maxus": lat.last().copied().unwrap_or(0),
        "over10ms": lat.iter().filter(|&&l| l > STALL_US).count(),
        "maxGapus": max_gap, "gapsOver10ms": gaps_over, "gaps": first_gaps,
    })
}
