//! `taskdeck-bench fleet`: a fleet of simulated agents, UI event streams and reporting jobs
//! against one Taskdeck, for `scripts/bench-agents.sh` (issue #17: "a fleet" and "soak").
//!
//! **Agents** (2026-07-28 era, the tasks extension and form elicitation declared on every
//! request; spec digest `../shared/spec/mcp-tasks.md` §2-5). Each agent in turn: creates a
//! task (`tools/call` of the next tool of the mix, answered with a `CreateTaskResult`), then
//! polls it with `tasks/get` at the `pollIntervalMs` the server gave it (the latest one: the
//! creation's, then each poll's), measured from the previous answer, so never faster; when the
//! task is `input_required`, it answers each `inputRequests` key it has not answered yet with
//! `tasks/update` (`inputResponses`: an elicitation is accepted with `true` for each boolean
//! property of its schema, `"fleet"` for each string, 1 for each number); when the task is
//! `completed` (with a result that is not `isError`) the agent creates its next task at once.
//! A task that ends otherwise is an error. Agents start spread over the first second. The
//! fixture tools (`taskdeck serve --conformance-fixtures`): `echo` completes at once,
//! `slow_compute` works for `--work-seconds` with 10 progress reports, `confirm_delete` asks
//! one elicitation. Without form elicitation declared, a task's `inputRequests` would not be
//! shown to the agent.
//!
//! **Connections.** All agents share `--connections` keep-alive connections (`bench/pool.rs`);
//! a call's latency runs from the moment the agent asked for a connection to the end of the
//! answer's body, so time spent waiting for a free connection counts against the server.
//!
//! **Event streams.** Each of `--streams` holds its own `GET /v1/events` (SSE, the token given,
//! normally the admin's, as the UI's) open and reads it to the end of the run, counting `change`
//! and `resync` events and how long each change took from its timeline event's `at` to here
//! (ms resolution, the same clock).
//!
//! **Jobs.** Each of `--jobs` does what `taskdeck run` does (`src-tauri/src/cli/run_job.rs`):
//! `POST /v1/jobs` (an external job), then every second a report (`statusMessage` `i/100` and
//! `progress`), 100 reports, then a last one with the result, then the next job.
//!
//! **Server.** With `--server-pid`, its `/proc` is read once a second (`bench/proc_stats.rs`):
//! CPU share (utime + stime over wall time, % of one core; also by thread name), RSS and open
//! files; and the machine's steal time (`/proc/stat`), which says when the host, not the
//! build, was slow.
//!
//! Prints one JSON line: `seconds`, `calls` (per kind: `count`, `rps`, `p50us`, `p99us`,
//! `maxus`, `errors`), `errors`, `firstError`, `tasks` (`created`, `completed`,
//! `inputsAnswered`), `streamEvents` (`events`, `resyncs`, `bytes`, `delayP50ms`, `delayP99ms`,
//! `delayMaxms`, `errors`), `server` (`cpuPercent`, `cpuUsPerCall`, `rssMiB` and `fds` as
//! `[first, last, max]`, `hostStealPercent`, `cpuPercentByThread`), `generatorCpuPercent`
//! (this process, % of one core) and, with `--window-seconds`, `windows`: the same latencies
//! and server readings per window.

use std::{
    sync::Arc,
    time::{Duration, Instant, SystemTime, UNIX_EPOCH},
};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::Request;
use serde_json::{Map, Value, json};

use crate::{percentile, pool::Pool, proc_stats};

/// What to run, and against what.
pub struct FleetPlan {
    /// The MCP endpoint, e.g. `http://127.0.0.1:4747/mcp`; `/v1` is on the same host.
    pub url: hyper::Uri,
    /// Bearer token of agents, jobs and streams.
    pub token: String,
    /// Simulated agents.
    pub agents: usize,
    /// Keep-alive connections the agents and jobs share.
    pub connections: usize,
    /// Tools the agents call, in turn (agent `a`'s `n`th task uses `mix[(a + n) % len]`).
    pub mix: Vec<String>,
    /// `seconds` argument of `slow_compute`.
    pub work_seconds: f64,
    /// `GET /v1/events` streams held open.
    pub streams: usize,
    /// Jobs reporting like `taskdeck run`.
    pub jobs: usize,
    /// Length of the run.
    pub duration: Duration,
    /// Length of a reporting window; zero for none.
    pub window: Duration,
    /// The server's process id, for its CPU, RSS and open files.
    pub server_pid: Option<u32>,
}

/// The kinds of call measured, in report order.
const KINDS: [&str; 5] = [
    "create",
    "tasks/get",
    "tasks/update",
    "job start",
    "job report",
];
const CREATE: usize = 0;
const GET: usize = 1;
const UPDATE: usize = 2;
const JOB_START: usize = 3;
const JOB_REPORT: usize = 4;

/// One answered call: its kind (index in [`KINDS`]), when it was answered (ms since the start)
/// and its latency (µs).
#[derive(Clone, Copy)]
struct Call {
    kind: u8,
    at_ms: u32,
    latency_us: u32,
}

/// What one agent, job or stream measured.
#[derive(Default)]
struct Measured {
    calls: Vec<Call>,
    errors: [u64; KINDS.len()],
    first_error: Option<String>,
    created: u64,
    completed: u64,
    inputs_answered: u64,
    stream: StreamCount,
}

/// What the event streams read.
#[derive(Default)]
struct StreamCount {
    events: u64,
    resyncs: u64,
    bytes: u64,
    errors: u64,
    /// Per change: (ms since the start, ms from its `at` to its arrival).
    delays_ms: Vec<(u32, u32)>,
}

impl Measured {
    fn record(&mut self, kind: usize, start: Instant, began: Instant) {
        let now = Instant::now();
        self.calls.push(Call {
            kind: kind as u8,
            at_ms: now.duration_since(start).as_millis() as u32,
            latency_us: now.duration_since(began).as_micros().min(u32::MAX as u128) as u32,
        });
    }

    fn fail(&mut self, kind: usize, error: String) {
        self.errors[kind] += 1;
        self.first_error
            .get_or_insert_with(|| format!("{}: {error}", KINDS[kind]));
    }

    fn merge(&mut self, other: Measured) {
        self.calls.extend(other.calls);
        for (a, b) in self.errors.iter_mut().zip(other.errors) {
            *a += b;
        }
        if self.first_error.is_none() {
            self.first_error = other.first_error;
        }
        self.created += other.created;
        self.completed += other.completed;
        self.inputs_answered += other.inputs_answered;
        self.stream.events += other.stream.events;
        self.stream.resyncs += other.stream.resyncs;
        self.stream.bytes += other.stream.bytes;
        self.stream.errors += other.stream.errors;
        self.stream.delays_ms.extend(other.stream.delays_ms);
    }
}

/// What every simulated client shares.
struct Shared {
    plan: FleetPlan,
    pool: Pool,
    authority: String,
    start: Instant,
    deadline: Instant,
}

impl Shared {
    /// A 2026-07-28 MCP request: `method` with `params` (plus [`agent_meta`]) and the routing
    /// headers (`Mcp-Method`, `Mcp-Name`: the tool or the taskId).
    fn mcp(&self, method: &str, name: &str, mut params: Value) -> Request<Full<Bytes>> {
        params["_meta"] = agent_meta();
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        self.post(self.plan.url.path())
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", method)
            .header("mcp-name", name)
            .header("accept", "application/json, text/event-stream")
            .body(Full::new(Bytes::from(body.to_string())))
            .expect("request")
    }

    /// A POST of JSON to `path` with the bearer token (body not yet attached).
    fn post(&self, path: &str) -> hyper::http::request::Builder {
        Request::post(path)
            .header("host", &self.authority)
            .header("content-type", "application/json")
            .header("authorization", format!("Bearer {}", self.plan.token))
    }

    /// A JSON POST to `/v1/...`.
    fn api(&self, path: &str, body: Value) -> Request<Full<Bytes>> {
        self.post(path)
            .body(Full::new(Bytes::from(body.to_string())))
            .expect("request")
    }

    /// Sends `req`; the JSON answer when the status is `ok_status`, else why not.
    async fn call(&self, req: Request<Full<Bytes>>, ok_status: u16) -> Result<Value, String> {
        let (status, body) = self.pool.send(req).await?;
        if status.as_u16() != ok_status {
            return Err(format!("HTTP {status}: {}", String::from_utf8_lossy(&body)));
        }
        serde_json::from_slice(&body).map_err(|e| format!("not JSON ({e}): {body:?}"))
    }
}

/// The `_meta` of every agent request: protocol version 2026-07-28, the tasks extension and
/// form elicitation.
fn agent_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "taskdeck-bench fleet", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {},
            "extensions": {"io.modelcontextprotocol/tasks": {}}}
    })
}

/// The arguments of agent `agent`'s `n`th call of `tool`.
fn arguments(tool: &str, agent: usize, n: u64, work_seconds: f64) -> Value {
    match tool {
        "echo" => json!({"n": n, "note": format!("fleet agent {agent}")}),
        "slow_compute" => json!({"seconds": work_seconds, "label": format!("agent {agent}")}),
        "confirm_delete" => json!({"filename": format!("agent-{agent}-{n}.txt")}),
        _ => json!({}),
    }
}

/// The answer an agent gives to one `inputRequests` entry: an elicitation accepted with a value
/// for each property of its schema.
fn input_response(request: &Value) -> Value {
    let mut content = Map::new();
    if let Some(props) = request
        .pointer("/params/requestedSchema/properties")
        .and_then(Value::as_object)
    {
        for (name, schema) in props {
            let value = match schema["type"].as_str() {
                Some("boolean") => json!(true),
                Some("number" | "integer") => json!(1),
                _ => json!("fleet"),
            };
            content.insert(name.clone(), value);
        }
    }
    json!({"action": "accept", "content": content})
}

/// The `pollIntervalMs` of a task answer, or `previous` when it has none.
fn poll_interval(task: &Value, previous: Duration) -> Duration {
    task["pollIntervalMs"]
        .as_u64()
        .map_or(previous, Duration::from_millis)
}

/// One agent until the deadline.
async fn agent(shared: Arc<Shared>, index: usize) -> Measured {
    let plan = &shared.plan;
    let mut out = Measured::default();
    let stagger = Duration::from_secs(1).mul_f64(index as f64 / plan.agents.max(1) as f64);
    tokio::time::sleep(stagger).await;
    let mut n: u64 = 0;
    'tasks: while Instant::now() < shared.deadline {
        let tool = &plan.mix[(index + n as usize) % plan.mix.len()];
        let params =
            json!({"name": tool, "arguments": arguments(tool, index, n, plan.work_seconds)});
        n += 1;
        let began = Instant::now();
        let created = match shared
            .call(shared.mcp("tools/call", tool, params), 200)
            .await
        {
            Ok(v) if v["result"]["resultType"] == "task" && v["result"]["taskId"].is_string() => {
                v["result"].clone()
            }
            Ok(v) => {
                out.fail(CREATE, format!("not a CreateTaskResult: {v}"));
                break;
            }
            Err(e) => {
                out.fail(CREATE, e);
                break;
            }
        };
        out.record(CREATE, shared.start, began);
        out.created += 1;
        let task_id = created["taskId"].as_str().unwrap_or_default().to_string();
        let mut interval = poll_interval(&created, Duration::from_secs(1));
        let mut answered: Vec<String> = Vec::new();
        loop {
            let due = tokio::time::Instant::now() + interval;
            if due.into_std() >= shared.deadline {
                break 'tasks;
            }
            tokio::time::sleep_until(due).await;
            let began = Instant::now();
            let req = shared.mcp("tasks/get", &task_id, json!({"taskId": task_id}));
            let task = match shared.call(req, 200).await {
                Ok(v) if v["result"]["resultType"] == "complete" => v["result"].clone(),
                Ok(v) => {
                    out.fail(GET, format!("unexpected answer: {v}"));
                    break 'tasks;
                }
                Err(e) => {
                    out.fail(GET, e);
                    break 'tasks;
                }
            };
            out.record(GET, shared.start, began);
            interval = poll_interval(&task, interval);
            match task["status"].as_str() {
                Some("working") => {}
                Some("input_required") => {
                    let mut responses = Map::new();
                    for (key, request) in task["inputRequests"].as_object().into_iter().flatten() {
                        if !answered.contains(key) {
                            responses.insert(key.clone(), input_response(request));
                            answered.push(key.clone());
                        }
                    }
                    if responses.is_empty() {
                        continue;
                    }
                    let count = responses.len() as u64;
                    let params = json!({"taskId": task_id, "inputResponses": responses});
                    let began = Instant::now();
                    match shared
                        .call(shared.mcp("tasks/update", &task_id, params), 200)
                        .await
                    {
                        Ok(v) if v["result"]["resultType"] == "complete" => {
                            out.record(UPDATE, shared.start, began);
                            out.inputs_answered += count;
                        }
                        Ok(v) => {
                            out.fail(UPDATE, format!("unexpected answer: {v}"));
                            break 'tasks;
                        }
                        Err(e) => {
                            out.fail(UPDATE, e);
                            break 'tasks;
                        }
                    }
                }
                Some("completed") if task["result"]["isError"] != json!(true) => {
                    out.completed += 1;
                    break;
                }
                _ => {
                    out.fail(GET, format!("task {task_id} ended so: {task}"));
                    break 'tasks;
                }
            }
        }
    }
    out
}

/// One job reporter until the deadline (see the module comment).
async fn job(shared: Arc<Shared>, index: usize) -> Measured {
    const REPORTS: u32 = 100;
    let mut out = Measured::default();
    let stagger = Duration::from_secs(1).mul_f64(index as f64 / shared.plan.jobs.max(1) as f64);
    tokio::time::sleep(stagger).await;
    let mut n = 0;
    'jobs: while Instant::now() < shared.deadline {
        n += 1;
        let body = json!({"external": {"name": format!("fleet job {index}.{n}"),
            "command": ["sh", "-c", "fleet"], "heartbeatMs": 15000}});
        let began = Instant::now();
        let id = match shared.call(shared.api("/v1/jobs", body), 202).await {
            Ok(v) if v["taskId"].is_string() => {
                v["taskId"].as_str().unwrap_or_default().to_string()
            }
            Ok(v) => {
                out.fail(JOB_START, format!("no taskId: {v}"));
                break;
            }
            Err(e) => {
                out.fail(JOB_START, e);
                break;
            }
        };
        out.record(JOB_START, shared.start, began);
        let path = format!("/v1/jobs/{id}/report");
        let mut next = tokio::time::Instant::now();
        for i in 1..=REPORTS + 1 {
            next += Duration::from_secs(1);
            if next.into_std() >= shared.deadline {
                break 'jobs;
            }
            tokio::time::sleep_until(next).await;
            let body = if i <= REPORTS {
                json!({"statusMessage": format!("{i}/{REPORTS}"), "progress": {"current": i, "total": REPORTS}})
            } else {
                json!({"result": {"content": [{"type": "text", "text": "done"}], "isError": false}})
            };
            let began = Instant::now();
            match shared.call(shared.api(&path, body), 200).await {
                Ok(_) => out.record(JOB_REPORT, shared.start, began),
                Err(e) => {
                    out.fail(JOB_REPORT, e);
                    break 'jobs;
                }
            }
        }
    }
    out
}

/// One UI event stream, read until the deadline (see the module comment).
async fn stream(shared: Arc<Shared>) -> Measured {
    let mut out = Measured::default();
    let read = async {
        let mut sender = crate::pool::connect(&shared.authority).await?;
        let req = Request::get("/v1/events")
            .header("host", &shared.authority)
            .header("accept", "text/event-stream")
            .header("authorization", format!("Bearer {}", shared.plan.token))
            .body(Full::new(Bytes::new()))
            .map_err(|e| e.to_string())?;
        let resp = sender
            .send_request(req)
            .await
            .map_err(|e| format!("send: {e}"))?;
        if resp.status() != 200 {
            return Err(format!("HTTP {}", resp.status()));
        }
        let mut body = resp.into_body();
        let mut pending = String::new();
        let mut event = String::new();
        while let Some(frame) = body.frame().await {
            let frame = frame.map_err(|e| format!("stream: {e}"))?;
            let Ok(data) = frame.into_data() else {
                continue;
            };
            out.stream.bytes += data.len() as u64;
            pending.push_str(&String::from_utf8_lossy(&data));
            while let Some(end) = pending.find('\n') {
                let line = pending[..end].trim_end_matches('\r');
                if let Some(name) = line.strip_prefix("event:") {
                    event = name.trim().to_string();
                    match event.as_str() {
                        "change" => out.stream.events += 1,
                        "resync" => out.stream.resyncs += 1,
                        _ => {}
                    }
                } else if let Some(data) = line.strip_prefix("data:")
                    && event == "change"
                    && let Some(delay) = change_delay_ms(data)
                {
                    let since = shared.start.elapsed().as_millis() as u32;
                    out.stream.delays_ms.push((since, delay));
                }
                pending.drain(..=end);
            }
        }
        Err::<(), String>("the server ended the stream".to_string())
    };
    // The deadline ends a stream that is fine; an error before it counts.
    if let Ok(Err(e)) = tokio::time::timeout_at(shared.deadline.into(), read).await {
        out.stream.errors += 1;
        out.first_error.get_or_insert(format!("event stream: {e}"));
    }
    out
}

/// Milliseconds from the `at` of a `change` event's data (its timeline event's, the first
/// `"at":` of the text) to now; `None` when it has none.
fn change_delay_ms(data: &str) -> Option<u32> {
    let from = data.find("\"at\":\"")? + 6;
    let at = &data[from..from + data[from..].find('"')?];
    let at_ms = taskdeck_engine::clock::parse_iso8601(at)?;
    let now_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .ok()?
        .as_millis() as i64;
    Some((now_ms - at_ms).max(0) as u32)
}

/// Latency figures of `latencies` (µs, any order) for `seconds` of run.
fn latency_summary(latencies: &mut [u32], errors: u64, seconds: f64) -> Value {
    latencies.sort_unstable();
    json!({"count": latencies.len(), "rps": (latencies.len() as f64 / seconds * 10.0).round() / 10.0,
        "p50us": percentile(latencies, 0.50), "p99us": percentile(latencies, 0.99),
        "maxus": latencies.last().copied().unwrap_or(0), "errors": errors})
}

/// Per kind, the latency figures of the calls answered in `[from_ms, to_ms)`.
fn calls_summary(calls: &[Call], errors: &[u64], from_ms: u32, to_ms: u32) -> Value {
    let seconds = f64::from(to_ms - from_ms).max(1.0) / 1000.0;
    let mut out = Map::new();
    for (k, name) in KINDS.iter().enumerate() {
        let mut lat: Vec<u32> = calls
            .iter()
            .filter(|c| c.kind as usize == k && (from_ms..to_ms).contains(&c.at_ms))
            .map(|c| c.latency_us)
            .collect();
        out.insert(
            name.to_string(),
            latency_summary(&mut lat, errors.get(k).copied().unwrap_or(0), seconds),
        );
    }
    Value::Object(out)
}

/// The server's readings from `first` to `last`: CPU share (% of one core), and RSS and open
/// files at the end, with the highest RSS and open files in between; the same CPU share by
/// thread name ([`proc_stats::cpu_by_thread`]: a thread that ended loses its CPU after its last
/// reading); and the machine's steal time over the same span (% of one core, all CPUs summed;
/// null where the kernel does not report it).
fn server_summary(samples: &[proc_stats::Sample], calls: usize) -> Value {
    let (Some(first), Some(last)) = (samples.first(), samples.last()) else {
        return Value::Null;
    };
    let wall = last.at.duration_since(first.at).as_secs_f64().max(1e-3);
    let cpu = last.cpu_seconds - first.cpu_seconds;
    let mib = |kib: u64| (kib as f64 / 1024.0 * 10.0).round() / 10.0;
    json!({
        "cpuPercent": (cpu / wall * 1000.0).round() / 10.0,
        "cpuUsPerCall": (cpu * 1e6 / calls.max(1) as f64 * 10.0).round() / 10.0,
        "rssMiB": [mib(first.rss_kib), mib(last.rss_kib), mib(samples.iter().map(|s| s.rss_kib).max().unwrap_or(0))],
        "fds": [first.fds, last.fds, samples.iter().map(|s| s.fds).max().unwrap_or(0)],
        "hostStealPercent": first.steal_seconds.zip(last.steal_seconds)
            .map(|(a, b)| ((b - a) / wall * 1000.0).round() / 10.0),
        "cpuPercentByThread": proc_stats::cpu_by_thread(samples).into_iter()
            .map(|(name, seconds)| (name, json!((seconds / wall * 1000.0).round() / 10.0)))
            .collect::<serde_json::Map<_, _>>(),
    })
}

/// The `delays_ms` percentiles of the changes that arrived in `[from_ms, to_ms)`.
fn delay_summary(delays: &[(u32, u32)], from_ms: u32, to_ms: u32) -> (u32, u32, u32) {
    let mut d: Vec<u32> = delays
        .iter()
        .filter(|(at, _)| (from_ms..to_ms).contains(at))
        .map(|&(_, d)| d)
        .collect();
    d.sort_unstable();
    (
        percentile(&d, 0.5),
        percentile(&d, 0.99),
        d.last().copied().unwrap_or(0),
    )
}

/// Runs the plan; returns the summary described in the module comment.
pub async fn run(plan: FleetPlan) -> Result<Value, String> {
    if plan.mix.is_empty() {
        return Err("--mix names no tool".into());
    }
    let authority = plan
        .url
        .authority()
        .ok_or("--url without host")?
        .to_string();
    let pool = Pool::open(&authority, plan.connections).await?;
    let start = Instant::now();
    let duration = plan.duration;
    let shared = Arc::new(Shared {
        deadline: start + duration,
        plan,
        pool,
        authority,
        start,
    });
    let cpu0 = proc_stats::own_cpu_seconds();
    let mut handles = Vec::new();
    for _ in 0..shared.plan.streams {
        handles.push(tokio::spawn(stream(shared.clone())));
    }
    for i in 0..shared.plan.agents {
        handles.push(tokio::spawn(agent(shared.clone(), i)));
    }
    for i in 0..shared.plan.jobs {
        handles.push(tokio::spawn(job(shared.clone(), i)));
    }
    // The server's readings, once a second while the run lasts: the last one comes before
    // the streams close at the deadline, so that its open files are the run's.
    let pid = shared.plan.server_pid;
    let sampler = tokio::spawn({
        let deadline = shared.deadline;
        async move {
            let mut samples = Vec::new();
            let mut tick = tokio::time::interval(Duration::from_secs(1));
            while let Some(pid) = pid {
                tick.tick().await;
                if Instant::now() >= deadline {
                    break;
                }
                samples.extend(proc_stats::sample(pid));
            }
            samples
        }
    });
    let mut all = Measured::default();
    for h in handles {
        all.merge(h.await.map_err(|e| e.to_string())?);
    }
    let samples = sampler.await.map_err(|e| e.to_string())?;
    let generator_cpu = proc_stats::own_cpu_seconds() - cpu0;
    let end_ms = duration.as_millis() as u32;
    let seconds = duration.as_secs_f64();
    let in_run = all.calls.iter().filter(|c| c.at_ms < end_ms).count();
    let (d50, d99, dmax) = delay_summary(&all.stream.delays_ms, 0, end_ms);
    let errors: u64 = all.errors.iter().sum::<u64>() + all.stream.errors;
    let mut out = json!({
        "seconds": seconds,
        "agents": shared.plan.agents, "connections": shared.plan.connections,
        "streams": shared.plan.streams, "jobs": shared.plan.jobs, "mix": shared.plan.mix,
        "calls": calls_summary(&all.calls, &all.errors, 0, end_ms),
        "errors": errors, "firstError": all.first_error,
        "tasks": {"created": all.created, "completed": all.completed, "inputsAnswered": all.inputs_answered},
        "streamEvents": {"events": all.stream.events, "resyncs": all.stream.resyncs, "bytes": all.stream.bytes,
            "delayP50ms": d50, "delayP99ms": d99, "delayMaxms": dmax, "errors": all.stream.errors},
        "server": server_summary(&samples, in_run),
        "generatorCpuPercent": (generator_cpu / seconds * 1000.0).round() / 10.0,
    });
    let window_ms = shared.plan.window.as_millis() as u32;
    if window_ms > 0 {
        let mut windows = Vec::new();
        let mut from = 0;
        while from < end_ms {
            let to = (from + window_ms).min(end_ms);
            let in_window: Vec<proc_stats::Sample> = samples
                .iter()
                .filter(|s| {
                    let at = s.at.duration_since(start).as_millis() as u32;
                    // The reading at the window's start belongs to both windows.
                    at + 500 >= from && at < to + 500
                })
                .cloned()
                .collect();
            let calls = all
                .calls
                .iter()
                .filter(|c| (from..to).contains(&c.at_ms))
                .count();
            let (d50, d99, _) = delay_summary(&all.stream.delays_ms, from, to);
            windows.push(json!({"fromS": from / 1000, "toS": to / 1000,
                "calls": calls_summary(&all.calls, &[], from, to),
                "server": server_summary(&in_window, calls),
                "delayP50ms": d50, "delayP99ms": d99}));
            from = to;
        }
        out["windows"] = Value::Array(windows);
    }
    Ok(out)
}
