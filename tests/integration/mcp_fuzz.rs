//! A fuzz of `/mcp` against the real server: generated and mutated JSON-RPC messages for both
//! protocol eras (2026-07-28 sessionless requests, 2025-11-25 requests on a session and without
//! one) and every method the server knows, each checked against the answer the specs give for
//! its mutation class:
//!
//! - not JSON (truncated, invalid UTF-8, lone surrogates, nesting past the parser's limit):
//!   HTTP 400, `-32700`, id `null` (JSON-RPC 2.0 §5.1);
//! - JSON but not one JSON-RPC 2.0 request (batch or scalar, `jsonrpc` not `"2.0"`, an id that
//!   is not a string or an integer (MCP: "MUST NOT be null"), a method that is not a string,
//!   params that are not an object): HTTP 400, `-32600`;
//! - a known method with a required param missing or of the wrong type: `-32602`;
//! - an unknown (or, in 2026-07-28, removed) method: `-32601` (HTTP 404 in 2026-07-28,
//!   2026-07-28 Streamable HTTP);
//! - 2026-07-28 routing headers that do not match the body: HTTP 400, `-32020`; an unsupported
//!   `MCP-Protocol-Version`: HTTP 400, `-32022`; no tasks extension on `tasks/*`: `-32021`;
//!   `Accept` without both media types: 406; another `Content-Type`: 415;
//! - a notification: 202; a valid request: a JSON-RPC answer echoing its id.
//!
//! Every request has a deadline (no hang), and a task is created only by a request answered
//! with that task. Generation is proptest's, from a fixed seed with a bounded number of cases,
//! so each run sends the same messages. Afterwards the server still answers a `tools/call` and a
//! `tasks/get`.

use std::{cell::RefCell, time::Duration};

use proptest::{
    prelude::*,
    test_runner::{Config, RngAlgorithm, TestRng, TestRunner},
};
use reqwest::Client;
use serde_json::{Map, Value, json};

use crate::harness::{LegacySession, Server, meta, parse_body};

/// Messages sent per run.
const CASES: u32 = 600;
/// The generator's seed: a run sends the same messages every time.
const SEED: [u8; 32] = *b"taskdeck /mcp fuzz, fixed seed!!";
/// Longest wait for one answer (or for the first event of a stream).
const DEADLINE: Duration = Duration::from_secs(10);

/// How a message reaches the server.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Era {
    /// 2026-07-28: no session, routing headers, `_meta` in every request.
    Modern,
    /// 2025-11-25 on an initialized session.
    Session,
    /// 2025-11-25 headers without a session.
    NoSession,
}

/// The methods the server knows (and some it does not).
const METHODS: &[&str] = &[
    "initialize",
    "ping",
    "server/discover",
    "tools/list",
    "tools/call",
    "tasks/get",
    "tasks/list",
    "tasks/cancel",
    "tasks/result",
    "tasks/update",
    "subscriptions/listen",
    "resources/list",
    "resources/read",
    "resources/templates/list",
    "prompts/list",
    "prompts/get",
    "completion/complete",
    "logging/setLevel",
    "fuzz/unknown",
    "notifications/initialized",
    "notifications/cancelled",
    "notifications/fuzz",
];

/// A required param of `method` (the one a mutation may drop or retype).
fn required_param(method: &str) -> Option<&'static str> {
    match method {
        "tools/call" | "prompts/get" => Some("name"),
        "tasks/get" | "tasks/cancel" | "tasks/result" | "tasks/update" => Some("taskId"),
        "resources/read" => Some("uri"),
        _ => None,
    }
}

/// What is done to a valid message.
#[derive(Debug, Clone)]
enum Mutation {
    None,
    /// The body cut after this fraction (per mille) of its bytes.
    Truncate(u16),
    /// A 0xFF byte inside the body's first string.
    InvalidUtf8,
    /// A lone UTF-16 surrogate escape as an extra param.
    LoneSurrogate,
    /// An extra param nested this deep (arrays).
    DeepNesting(usize),
    /// The body replaced by a JSON value that is not a request object.
    NotAnObject(Value),
    /// `jsonrpc` set to this (`None`: removed).
    JsonrpcVersion(Option<Value>),
    /// `id` set to a value that is neither a string nor an integer within `i64`.
    BadId(Value),
    /// `method` set to a non-string.
    BadMethodType(Value),
    /// `params` set to a non-object.
    BadParamsType(Value),
    /// An extra top-level member.
    ExtraMember(String, Value),
    /// An extra param.
    ExtraParam(String, Value),
    /// The method's required param removed.
    DropRequired,
    /// The method's required param given this (wrong-typed) value.
    RetypeRequired(Value),
    /// A huge number for an argument or the task TTL.
    HugeNumber(Value),
    /// 2026-07-28 headers: `Mcp-Method` names another method.
    MethodHeaderMismatch,
    /// 2026-07-28 headers: `Mcp-Name` names another value.
    NameHeaderMismatch(String),
    /// `MCP-Protocol-Version` (and `_meta`) of an unsupported revision.
    UnsupportedVersion,
    /// `_meta.protocolVersion` differs from the header.
    MetaVersionMismatch,
    /// No `Accept: text/event-stream`.
    AcceptJsonOnly,
    /// `Content-Type: text/plain`.
    TextContentType,
}

/// One generated message.
#[derive(Debug, Clone)]
struct Case {
    era: Era,
    method: &'static str,
    /// 2026-07-28: `_meta` declares the tasks extension; 2025-11-25 `tools/call`: `params.task`.
    tasks: bool,
    /// A valid id: an integer within `i64` or a string.
    id: Value,
    mutation: Mutation,
}

/// JSON values of every kind, nested a little, with arbitrary (often odd) strings.
fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<u64>().prop_map(|n| json!(n)),
        (-1e300f64..1e300).prop_map(|f| json!(f)),
        any::<String>().prop_map(Value::String),
        "[\\u{0}-\\u{1f}\\u{7f}-\\u{9f}\\u{202e}\\u{fffd}\\u{10ffff}]{0,8}".prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[a-zA-Z_]{1,6}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// A value of a type no required param has (they are all strings).
fn non_string() -> impl Strategy<Value = Value> {
    any_json().prop_filter("not a string", |v| !v.is_string())
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        4 => Just(Mutation::None),
        1 => (0u16..1000).prop_map(Mutation::Truncate),
        1 => Just(Mutation::InvalidUtf8),
        1 => Just(Mutation::LoneSurrogate),
        1 => (129usize..3000).prop_map(Mutation::DeepNesting),
        1 => prop_oneof![
            Just(json!([])),
            Just(json!(null)),
            any::<i64>().prop_map(|n| json!(n)),
            any::<String>().prop_map(Value::String),
        ]
        .prop_map(Mutation::NotAnObject),
        1 => prop_oneof![
            Just(None),
            Just(Some(json!("1.0"))),
            Just(Some(json!(2.0))),
            Just(Some(json!(null))),
            Just(Some(json!("2.0 "))),
        ]
        .prop_map(Mutation::JsonrpcVersion),
        2 => prop_oneof![
            Just(json!(null)),
            Just(json!(1.5)),
            Just(json!(true)),
            Just(json!({"id": 1})),
            Just(json!([1])),
            Just(serde_json::from_str::<Value>("18446744073709551616").unwrap()),
            // An integer beyond i64, which rmcp's ids cannot hold.
            Just(json!(u64::MAX)),
        ]
        .prop_map(Mutation::BadId),
        1 => non_string().prop_map(Mutation::BadMethodType),
        1 => any_json()
            .prop_filter("not an object", |v| !v.is_object())
            .prop_map(Mutation::BadParamsType),
        1 => ("x-fuzz-[a-z]{1,8}", any_json()).prop_map(|(k, v)| Mutation::ExtraMember(k, v)),
        2 => ("x-fuzz-[a-z]{1,8}", any_json()).prop_map(|(k, v)| Mutation::ExtraParam(k, v)),
        2 => Just(Mutation::DropRequired),
        2 => non_string().prop_map(Mutation::RetypeRequired),
        1 => prop_oneof![
            Just(json!(1e308)),
            Just(json!(-1e308)),
            Just(json!(u64::MAX)),
            Just(json!(i64::MIN)),
        ]
        .prop_map(Mutation::HugeNumber),
        1 => Just(Mutation::MethodHeaderMismatch),
        1 => "[a-z0-9-]{1,12}".prop_map(Mutation::NameHeaderMismatch),
        1 => Just(Mutation::UnsupportedVersion),
        1 => Just(Mutation::MetaVersionMismatch),
        1 => Just(Mutation::AcceptJsonOnly),
        1 => Just(Mutation::TextContentType),
    ]
}

fn case() -> impl Strategy<Value = Case> {
    (
        prop_oneof![
            3 => Just(Era::Modern),
            3 => Just(Era::Session),
            1 => Just(Era::NoSession)
        ],
        prop::sample::select(METHODS),
        any::<bool>(),
        prop_oneof![
            any::<i64>().prop_map(|n| json!(n)),
            Just(json!(i64::MAX)),
            "[ -~]{0,16}".prop_map(Value::String),
        ],
        mutation(),
    )
        .prop_map(|(era, method, tasks, id, mutation)| Case {
            era,
            method,
            tasks,
            id,
            mutation,
        })
}

/// The fixed context of a run: the server, the tasks the messages name, the session.
struct Context<'a> {
    server: &'a Server,
    token: String,
    /// A completed task of the fuzz principal (`tasks/result` answers at once).
    task_id: String,
    session: String,
    http: Client,
}

/// What the server answered.
#[derive(Debug)]
struct Answer {
    status: u16,
    content_type: String,
    /// The JSON-RPC message: the whole JSON body, or the first SSE `data:` message.
    message: Value,
    text: String,
}

/// The valid params of `method` in `era`.
fn base_params(ctx: &Context<'_>, case: &Case) -> Map<String, Value> {
    let t = &ctx.task_id;
    let params = match case.method {
        "initialize" => json!({"protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "fuzz", "version": "0"}}),
        "tools/call" => {
            let mut p =
                json!({"name": "slow_compute", "arguments": {"seconds": 0.01, "label": "fuzz"}});
            if case.era != Era::Modern && case.tasks {
                p["task"] = json!({"ttl": 60000});
            }
            p
        }
        "tasks/get" | "tasks/cancel" | "tasks/result" => json!({"taskId": t}),
        "tasks/update" => json!({"taskId": t, "inputResponses": {}}),
        "subscriptions/listen" => json!({"notifications": {"taskIds": [t]}}),
        "resources/read" => json!({"uri": "file:///etc/hostname"}),
        "prompts/get" => json!({"name": "fuzz"}),
        "completion/complete" => json!({"ref": {"type": "ref/prompt", "name": "fuzz"},
            "argument": {"name": "a", "value": "b"}}),
        "logging/setLevel" => json!({"level": "info"}),
        "notifications/cancelled" => json!({"requestId": 1}),
        _ => json!({}),
    };
    let mut params = params.as_object().cloned().unwrap_or_default();
    if case.era == Era::Modern {
        params.insert("_meta".into(), meta(case.tasks));
    }
    params
}

/// The request (headers and body bytes) of `case`.
fn build(ctx: &Context<'_>, case: &Case) -> (Vec<(&'static str, String)>, Vec<u8>) {
    let mut params = base_params(ctx, case);
    let notification = case.method.starts_with("notifications/");
    let mut message = Map::new();
    message.insert("jsonrpc".into(), json!("2.0"));
    if !notification {
        message.insert("id".into(), case.id.clone());
    }
    message.insert("method".into(), json!(case.method));
    let required = required_param(case.method);
    match &case.mutation {
        Mutation::ExtraParam(k, v) => {
            params.insert(k.clone(), v.clone());
        }
        Mutation::DropRequired => {
            required.map(|r| params.remove(r));
        }
        Mutation::RetypeRequired(v) => {
            if let Some(r) = required {
                params.insert(r.into(), v.clone());
            }
        }
        Mutation::HugeNumber(v) => {
            if let Some(args) = params.get_mut("arguments") {
                args["seconds"] = v.clone();
            }
            if let Some(task) = params.get_mut("task") {
                task["ttl"] = v.clone();
            }
        }
        Mutation::UnsupportedVersion | Mutation::MetaVersionMismatch => {
            if let Some(m) = params.get_mut("_meta")
                && matches!(case.mutation, Mutation::UnsupportedVersion)
            {
                m["io.modelcontextprotocol/protocolVersion"] = json!("2099-01-01");
            }
            if let Some(m) = params.get_mut("_meta")
                && matches!(case.mutation, Mutation::MetaVersionMismatch)
            {
                m["io.modelcontextprotocol/protocolVersion"] = json!("2025-11-25");
            }
        }
        _ => {}
    }
    message.insert("params".into(), Value::Object(params));
    match &case.mutation {
        Mutation::JsonrpcVersion(v) => match v {
            None => {
                message.remove("jsonrpc");
            }
            Some(v) => {
                message.insert("jsonrpc".into(), v.clone());
            }
        },
        Mutation::BadId(v) => {
            message.insert("id".into(), v.clone());
        }
        Mutation::BadMethodType(v) => {
            message.insert("method".into(), v.clone());
        }
        Mutation::BadParamsType(v) => {
            message.insert("params".into(), v.clone());
        }
        Mutation::ExtraMember(k, v) => {
            message.insert(k.clone(), v.clone());
        }
        _ => {}
    }
    let mut body = match &case.mutation {
        Mutation::NotAnObject(v) if v.as_array().is_some_and(Vec::is_empty) => {
            // A batch of the valid message.
            json!([Value::Object(message.clone())]).to_string()
        }
        Mutation::NotAnObject(v) => v.to_string(),
        _ => Value::Object(message).to_string(),
    }
    .into_bytes();
    match &case.mutation {
        Mutation::Truncate(per_mille) => {
            body.truncate(body.len() * *per_mille as usize / 1000);
        }
        Mutation::InvalidUtf8 => {
            let at = body.iter().position(|b| *b == b'"').unwrap() + 1;
            body.insert(at, 0xFF);
        }
        Mutation::LoneSurrogate => {
            let text = String::from_utf8(body).unwrap();
            body = text
                .replacen(r#""params":{"#, r#""params":{"x-fuzz":"\ud800","#, 1)
                .into_bytes();
        }
        Mutation::DeepNesting(depth) => {
            let text = String::from_utf8(body).unwrap();
            let deep = format!("{}{}", "[".repeat(*depth), "]".repeat(*depth));
            body = text
                .replacen(
                    r#""params":{"#,
                    &format!(r#""params":{{"x-fuzz":{deep},"#),
                    1,
                )
                .into_bytes();
        }
        _ => {}
    }

    let mut headers = vec![
        ("Content-Type", "application/json".to_string()),
        ("Accept", "application/json, text/event-stream".to_string()),
    ];
    match case.era {
        Era::Modern => {
            headers.push(("MCP-Protocol-Version", "2026-07-28".into()));
            headers.push(("Mcp-Method", case.method.into()));
            let name = match case.method {
                "tools/call" => Some("slow_compute".to_string()),
                "tasks/get" | "tasks/update" | "tasks/cancel" => Some(ctx.task_id.clone()),
                "resources/read" => Some("file:///etc/hostname".into()),
                "prompts/get" => Some("fuzz".into()),
                _ => None,
            };
            if let Some(n) = name {
                headers.push(("Mcp-Name", n));
            }
        }
        Era::Session => {
            headers.push(("MCP-Protocol-Version", "2025-11-25".into()));
            headers.push(("Mcp-Session-Id", ctx.session.clone()));
        }
        Era::NoSession => {
            headers.push(("MCP-Protocol-Version", "2025-11-25".into()));
        }
    }
    let set = |headers: &mut Vec<(&'static str, String)>, name: &'static str, value: String| {
        headers.retain(|(n, _)| *n != name);
        headers.push((name, value));
    };
    match &case.mutation {
        Mutation::MethodHeaderMismatch => set(&mut headers, "Mcp-Method", "fuzz/other".into()),
        Mutation::NameHeaderMismatch(n) => set(&mut headers, "Mcp-Name", format!("not-{n}")),
        Mutation::UnsupportedVersion => {
            set(&mut headers, "MCP-Protocol-Version", "2099-01-01".into())
        }
        Mutation::AcceptJsonOnly => set(&mut headers, "Accept", "application/json".into()),
        Mutation::TextContentType => set(&mut headers, "Content-Type", "text/plain".into()),
        _ => {}
    }
    (headers, body)
}

/// What the server must answer to `case` (see the module doc).
#[derive(Debug, Clone, PartialEq)]
enum Expect {
    /// A JSON-RPC error with one of `codes`, HTTP status one of `statuses`; `echo`: the id sent,
    /// else `null`.
    Error {
        statuses: &'static [u16],
        codes: &'static [i64],
        echo: bool,
    },
    /// A JSON-RPC answer echoing the id: a result, or an error with one of `errors`.
    Answer { errors: &'static [i64] },
    /// HTTP 202 Accepted, no body.
    Accepted,
    /// This HTTP status, whatever the body.
    Status(u16),
    /// An SSE stream opening with `notifications/subscriptions/acknowledged`.
    Stream,
    /// `-32700` (see [`PARSE`]) or what this expectation allows.
    ParseOr(Box<Expect>),
}

const PARSE: Expect = Expect::Error {
    statuses: &[400],
    codes: &[-32700],
    echo: false,
};
const NOT_A_REQUEST: Expect = Expect::Error {
    statuses: &[400],
    codes: &[-32600],
    echo: false,
};

fn expect(case: &Case) -> Expect {
    use Mutation as M;
    let method = case.method;
    let notification = method.starts_with("notifications/");
    let required = required_param(method);
    let era = case.era;
    let error = |statuses: &'static [u16], codes: &'static [i64]| Expect::Error {
        statuses,
        codes,
        echo: true,
    };
    // What any JSON-RPC parser sees first.
    match &case.mutation {
        M::Truncate(_) | M::InvalidUtf8 => return PARSE,
        // Grammatical JSON (RFC 8259 §7, §9) that serde_json cannot hold: the generic path
        // fails to parse it; the dedicated 2026-07-28 paths never read the extra param that
        // carries it, so they may answer the message as if it were not there.
        M::LoneSurrogate | M::DeepNesting(_) => {
            return match (era, method) {
                (Era::Modern, "tasks/get" | "tools/call" | "subscriptions/listen") => {
                    Expect::ParseOr(Box::new(expect(&Case {
                        mutation: M::None,
                        ..case.clone()
                    })))
                }
                _ => PARSE,
            };
        }
        M::NotAnObject(_) | M::BadId(_) => return NOT_A_REQUEST,
        M::JsonrpcVersion(_) | M::BadMethodType(_) | M::BadParamsType(_) => {
            return Expect::Error {
                statuses: &[400],
                codes: &[-32600],
                echo: !notification,
            };
        }
        _ => {}
    }
    // Streamable HTTP checks, before the message is dispatched.
    match &case.mutation {
        M::AcceptJsonOnly => return Expect::Status(406),
        M::TextContentType => return Expect::Status(415),
        M::UnsupportedVersion if era == Era::Modern && !notification => {
            return error(&[400], &[-32022]);
        }
        M::UnsupportedVersion => return Expect::Status(400),
        _ => {}
    }
    if notification {
        return match (era, &case.mutation) {
            (Era::NoSession, _) | (Era::Modern, M::MethodHeaderMismatch) => Expect::Status(400),
            _ => Expect::Accepted,
        };
    }
    if era == Era::NoSession && method != "initialize" {
        return Expect::Status(400);
    }
    if era == Era::Session && method == "initialize" {
        // The session is initialized already.
        return error(&[400], &[-32600]);
    }
    if era == Era::Modern && method == "initialize" {
        // No initialize in 2026-07-28: rmcp refuses it (its protocolVersion is not the header's).
        return error(&[400], &[-32600, -32020]);
    }
    if era == Era::Modern
        && matches!(
            case.mutation,
            M::MethodHeaderMismatch | M::MetaVersionMismatch
        )
    {
        return error(&[400], &[-32020]);
    }
    let removed = era == Era::Modern && matches!(method, "tasks/list" | "tasks/result");
    if method == "fuzz/unknown" || removed {
        return error(if era == Era::Modern { &[404] } else { &[200] }, &[-32601]);
    }
    if era == Era::Session && matches!(method, "tasks/update" | "subscriptions/listen") {
        // 2026-07-28 methods, not defined on a 2025-11-25 session: refused as unknown, as
        // needing the (2026-07-28) tasks extension, or as of an unsupported revision.
        return error(&[200, 400, 404], &[-32601, -32602, -32021, -32022]);
    }
    if era == Era::Modern {
        let mismatch = error(&[400], &[-32020]);
        if matches!(case.mutation, M::NameHeaderMismatch(_)) && required.is_some() {
            return mismatch;
        }
    }
    if matches!(case.mutation, M::DropRequired | M::RetypeRequired(_)) && required.is_some() {
        return error(&[200, 400], &[-32602]);
    }
    if era == Era::Modern
        && !case.tasks
        && matches!(
            method,
            "tasks/get" | "tasks/update" | "tasks/cancel" | "subscriptions/listen"
        )
    {
        return error(&[400], &[-32021]);
    }
    if method == "subscriptions/listen" {
        return Expect::Stream;
    }
    if method == "resources/read" {
        // Resources pass through to the upstream servers; a URI none has is -32002 (MCP
        // §Resources, Error Handling).
        return Expect::Answer {
            errors: &[-32601, -32602, -32002],
        };
    }
    Expect::Answer {
        errors: &[-32601, -32602],
    }
}

/// Sends `case`'s request; `Err` when no answer came within [`DEADLINE`].
async fn send(ctx: &Context<'_>, case: &Case) -> Result<Answer, String> {
    let (headers, body) = build(ctx, case);
    let mut req = ctx
        .http
        .post(ctx.server.url("/mcp"))
        .bearer_auth(&ctx.token)
        .body(body);
    for (k, v) in &headers {
        req = req.header(*k, v);
    }
    let answer = async {
        let mut resp = req.send().await.map_err(|e| format!("send: {e}"))?;
        let status = resp.status().as_u16();
        let content_type = resp
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string();
        let mut text = String::new();
        if content_type.starts_with("text/event-stream") {
            // A stream may stay open: read up to its first message.
            while let Some(chunk) = resp.chunk().await.map_err(|e| format!("read: {e}"))? {
                text.push_str(&String::from_utf8_lossy(&chunk));
                if first_sse_message(&text).is_some() {
                    break;
                }
            }
            let message = first_sse_message(&text).unwrap_or(Value::Null);
            return Ok(Answer {
                status,
                content_type,
                message,
                text,
            });
        }
        text = resp.text().await.map_err(|e| format!("read: {e}"))?;
        Ok(Answer {
            status,
            content_type,
            message: parse_body(&text),
            text,
        })
    };
    tokio::time::timeout(DEADLINE, answer)
        .await
        .map_err(|_| format!("no answer within {DEADLINE:?}"))?
}

fn first_sse_message(text: &str) -> Option<Value> {
    text.lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .find_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
}

/// Why `answer` is not what `expected` allows for `case` (`None`: it is).
fn disagreement(case: &Case, expected: &Expect, answer: &Answer) -> Option<String> {
    let m = &answer.message;
    let well_formed = m.get("jsonrpc") == Some(&json!("2.0"))
        && (m.get("result").is_some()
            ^ m.get("error")
                .is_some_and(|e| e["code"].is_i64() && e["message"].is_string()));
    let echoed = m.get("id") == Some(&case.id);
    match expected {
        Expect::Error {
            statuses,
            codes,
            echo,
        } => {
            let code = m["error"]["code"].as_i64().unwrap_or(0);
            let id_ok = if *echo {
                echoed
            } else {
                m.get("id") == Some(&Value::Null)
            };
            (!(well_formed && statuses.contains(&answer.status) && codes.contains(&code) && id_ok))
                .then(|| {
                    format!("expected HTTP {statuses:?} with error {codes:?} (id echoed: {echo})")
                })
        }
        Expect::Answer { errors } => {
            let ok = well_formed
                && echoed
                && (m.get("result").is_some()
                    || errors.contains(&m["error"]["code"].as_i64().unwrap_or(0)))
                && [200, 400, 404].contains(&answer.status);
            (!ok).then(|| format!("expected a result or an error in {errors:?}, echoing the id"))
        }
        Expect::Accepted => (!(answer.status == 202 && answer.text.is_empty()))
            .then(|| "expected 202 without a body".to_string()),
        Expect::Status(s) => (answer.status != *s).then(|| format!("expected HTTP {s}")),
        Expect::ParseOr(other) => disagreement(case, &PARSE, answer)
            .and(disagreement(case, other, answer))
            .map(|why| format!("{why}, or else -32700")),
        Expect::Stream => (!(answer.status == 200
            && answer.content_type.starts_with("text/event-stream")
            && m["method"] == "notifications/subscriptions/acknowledged"))
            .then(|| "expected a listen stream".to_string()),
    }
}

/// The taskId an answer hands out, if it created or shows one.
fn handed_task(answer: &Answer) -> Option<&str> {
    let r = answer.message.get("result")?;
    r.get("taskId")
        .or_else(|| r.pointer("/task/taskId"))
        .or_else(|| r.pointer("/structuredContent/task/taskId"))
        .and_then(Value::as_str)
}

/// How many tasks the store holds (all principals').
async fn task_count(server: &Server) -> u64 {
    let (status, body) = server
        .v1_get(Some(&server.admin), "/v1/tasks?limit=1")
        .await;
    assert_eq!(status, 200, "{body}");
    body["counts"]
        .as_object()
        .map(|c| c.values().filter_map(Value::as_u64).sum())
        .unwrap_or(0)
}

#[test]
fn mcp_answers_every_mutated_message_correctly() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let server = rt.block_on(Server::start(&["--conformance-fixtures"]));
    let token = server.token("fuzz");
    let (task_id, session) = rt.block_on(async {
        let task_id = server.completed_task(&token, "fuzz-known").await;
        let session = LegacySession::open(&server, &token).await.session;
        (task_id, session)
    });
    let ctx = Context {
        server: &server,
        token,
        task_id,
        session,
        http: Client::builder().timeout(DEADLINE).build().unwrap(),
    };

    let config = Config {
        cases: CASES,
        failure_persistence: None,
        max_shrink_iters: 0,
        ..Config::default()
    };
    let mut runner =
        TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &SEED));
    let problems = RefCell::new(Vec::<String>::new());
    let sent = RefCell::new(0u32);
    let result = runner.run(&case(), |case| {
        rt.block_on(async {
            *sent.borrow_mut() += 1;
            let before = task_count(&server).await;
            let expected = expect(&case);
            let report = |why: String, answer: Option<&Answer>| {
                let (headers, body) = build(&ctx, &case);
                problems.borrow_mut().push(format!(
                    "{why}\n  case: {case:?}\n  request: {headers:?} {}\n  answer: {answer:?}",
                    String::from_utf8_lossy(&body)
                ));
            };
            let answer = match send(&ctx, &case).await {
                Ok(a) => a,
                Err(e) => {
                    report(e, None);
                    return;
                }
            };
            if let Some(why) = disagreement(&case, &expected, &answer) {
                report(why, Some(&answer));
            }
            let created = task_count(&server).await as i64 - before as i64;
            let handed = handed_task(&answer).is_some_and(|t| t != ctx.task_id);
            if created != i64::from(handed) {
                report(
                    format!("{created} task(s) created, answer hands out a new task: {handed}"),
                    Some(&answer),
                );
            }
        });
        Ok(())
    });
    result.unwrap();
    assert_eq!(*sent.borrow(), CASES);

    rt.block_on(async {
        // Still up, and still right.
        let task = ctx
            .server
            .call(
                &ctx.token,
                "slow_compute",
                json!({"seconds": 0.01, "label": "after"}),
            )
            .await;
        let id = task["taskId"]
            .as_str()
            .expect("a CreateTaskResult")
            .to_string();
        let done = ctx.server.wait_status(&ctx.token, &id, "completed").await;
        assert_eq!(done["taskId"], id.as_str());
    });
    let problems = problems.into_inner();
    assert!(
        problems.is_empty(),
        "{} of {CASES} messages were answered wrongly:\n{}",
        problems.len(),
        problems.join("\n")
    );
}
