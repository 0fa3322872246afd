//! `/v1/audit` (admin only): the audit log of approval decisions ([`taskdeck_engine::audit`]).
//! `GET /v1/audit` reads it as pages of JSON (`format=json`, the default) or streams it as JSON
//! Lines (`format=jsonl`, one entry per line, the form `taskdeck audit verify --file` and
//! docs/audit.md's script check) or CSV (`format=csv`: a header row, object columns as JSON
//! text); a stream is read from the engine page by page, never built whole. `GET
//! /v1/audit/verify` checks the stored chain.

use axum::{
    Extension, Json, Router,
    body::Body,
    extract::State,
    http::{HeaderValue, header},
    response::{IntoResponse, Response},
};
use bytes::Bytes;
use chrono::{DateTime, NaiveDate};
use futures::StreamExt;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::api_error::{ApiError, ApiQuery, ProblemDocument};
use taskdeck_engine::{AuditEntry, AuditVerification, Engine, Principal};

/// Entries one engine read returns while a stream is written.
const STREAM_PAGE: usize = 1_000;
/// Entries a `format=json` page holds at most (and by default).
const JSON_PAGE_MAX: u64 = 1_000;
/// What the admin-only refusal says the routes do.
const WHAT: &str = "reads the audit log";
/// The CSV header row: the entry's JSON keys, in the order of its fields.
pub const CSV_COLUMNS: [&str; 16] = [
    "seq",
    "atMs",
    "taskId",
    "principal",
    "server",
    "tool",
    "digest",
    "decision",
    "decidedBy",
    "human",
    "rule",
    "reason",
    "arguments",
    "editedArguments",
    "prevHash",
    "hash",
];

/// The `/v1/audit` routes with their OpenAPI operations.
pub fn routes() -> OpenApiRouter<Engine> {
    OpenApiRouter::new()
        .routes(routes!(read_audit))
        .routes(routes!(verify_audit))
}

/// The `/v1/audit` router.
pub fn router(engine: Engine) -> Router {
    routes().split_for_parts().0.with_state(engine)
}

/// How `GET /v1/audit` answers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum AuditFormat {
    /// One page: `{entries, nextAfterSeq}`.
    #[default]
    Json,
    /// Every matching entry, one JSON object per line (`application/jsonl`).
    Jsonl,
    /// Every matching entry as CSV (`text/csv`): a header row, then one row per entry.
    Csv,
}

/// The query of `GET /v1/audit`: which entries, how many, and in what format.
#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase")]
pub struct AuditQuery {
    /// Only entries recorded at or after this time: Unix ms, an RFC 3339 timestamp
    /// (`2026-12-01T09:00:00Z`) or a date (`2026-12-01`, midnight UTC).
    #[param(
        pattern = r"^(\d{1,15}|\d{4}-\d{2}-\d{2}([Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2}))?)$"
    )]
    since: Option<String>,
    /// Only entries after this seq (the previous page's `nextAfterSeq`).
    #[param(minimum = 0)]
    after_seq: Option<i64>,
    /// Most entries: a JSON page holds at most 1000 (the default); a stream holds all unless
    /// this is given.
    #[param(minimum = 1, maximum = 4294967295_u64)]
    limit: Option<u32>,
    /// `json` (default), `jsonl` or `csv`.
    #[param(inline)]
    format: Option<AuditFormat>,
}

/// `GET /v1/audit?format=json`'s answer.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AuditPage {
    /// Entries in seq order.
    #[schema(value_type = Vec<AuditEntryDoc>)]
    entries: Vec<AuditEntry>,
    /// The `afterSeq` of the next page; `null` when this page is the last.
    #[schema(minimum = 0)]
    next_after_seq: Option<u64>,
}

/// One audit log entry (the schema of [`AuditEntry`]); docs/audit.md defines `hash`.
#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = AuditEntry)]
#[serde(rename_all = "camelCase")]
#[allow(
    dead_code,
    reason = "a schema only: the route serializes the engine's AuditEntry"
)]
pub struct AuditEntryDoc {
    /// 1, 2, 3, ... without gaps.
    #[schema(minimum = 1)]
    seq: u64,
    /// When the decision was recorded, Unix ms.
    at_ms: i64,
    /// The call's task, if any (it may have been deleted since).
    task_id: Option<String>,
    /// The agent that asked for the call.
    principal: String,
    server: String,
    tool: String,
    /// `sha256:<64 hex>` of the canonical `{server, tool, arguments}`.
    digest: String,
    /// `allow`, `deny` or `ask`.
    decision: String,
    /// `rule`, `default`, `human`, `expiry` or `abandoned`.
    decided_by: String,
    /// The human who decided, when `decidedBy` is `human`.
    human: Option<String>,
    /// The policy rule that decided, if one did.
    rule: Option<String>,
    reason: Option<String>,
    /// The call as asked (secrets redacted).
    #[schema(value_type = Object)]
    arguments: Value,
    /// The call as approved, when the human edited it.
    #[schema(value_type = Option<Object>)]
    edited_arguments: Option<Value>,
    /// The previous entry's `hash` (64 zeros for seq 1).
    prev_hash: String,
    /// Lowercase hex SHA-256 of `prevHash` followed by the canonical JSON of the entry
    /// without `hash`.
    hash: String,
}

/// Where a chain breaks.
#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = AuditProblem)]
#[allow(
    dead_code,
    reason = "a schema only: the route serializes the engine's AuditProblem"
)]
pub struct AuditProblemDoc {
    #[schema(minimum = 0)]
    seq: u64,
    /// What is wrong, for people.
    what: String,
}

/// `GET /v1/audit/verify`'s answer.
#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = AuditVerification)]
#[serde(rename_all = "camelCase")]
#[allow(
    dead_code,
    reason = "a schema only: the route serializes the engine's AuditVerification"
)]
pub struct AuditVerificationDoc {
    /// No problem found.
    ok: bool,
    /// Entries checked.
    #[schema(minimum = 0)]
    entries: u64,
    #[schema(minimum = 0)]
    first_seq: Option<u64>,
    #[schema(minimum = 0)]
    last_seq: Option<u64>,
    /// The hash of the last entry checked.
    head_hash: Option<String>,
    /// The first problem, when `ok` is false.
    #[schema(value_type = Option<AuditProblemDoc>)]
    problem: Option<AuditProblemDoc>,
}

/// `since` as Unix ms: digits are ms, else an RFC 3339 timestamp, else a date (midnight UTC).
/// Errors: a 400 saying which forms are taken.
pub fn parse_since(s: &str) -> Result<i64, ApiError> {
    if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
        return s
            .parse()
            .map_err(|_| ApiError::bad_request(format!("since {s:?} is too large")));
    }
    if let Ok(t) = DateTime::parse_from_rfc3339(s) {
        return Ok(t.timestamp_millis());
    }
    if let Ok(d) = NaiveDate::parse_from_str(s, "%Y-%m-%d")
        && let Some(t) = d.and_hms_opt(0, 0, 0)
    {
        return Ok(t.and_utc().timestamp_millis());
    }
    Err(ApiError::bad_request(format!(
        "since {s:?} is not Unix ms, an RFC 3339 time (2026-12-01T09:00:00Z) or a date (2026-12-01)"
    )))
}

/// `GET /v1/audit`.
#[utoipa::path(get, path = "/v1/audit", params(AuditQuery), tag = "audit",
    responses((status = 200, description = "the entries in seq order: a page (`format=json`), or every matching entry streamed as JSON Lines (`format=jsonl`) or CSV with a header row (`format=csv`)",
                content((AuditPage = "application/json"), (String = "application/jsonl"), (String = "text/csv"))),
              (status = 400, description = "a malformed query (e.g. a `since` that is no time)", body = ProblemDocument, content_type = "application/problem+json"),
              (status = 403, description = "not the admin", body = ProblemDocument, content_type = "application/problem+json")))]
pub(crate) async fn read_audit(
    State(engine): State<Engine>,
    Extension(p): Extension<Principal>,
    ApiQuery(q): ApiQuery<AuditQuery>,
) -> Result<Response, ApiError> {
    ApiError::admin_only(&p, WHAT)?;
    let since = q.since.as_deref().map(parse_since).transpose()?;
    if q.limit == Some(0) {
        return Err(ApiError::bad_request("limit must be at least 1"));
    }
    let after_seq = match q.after_seq {
        Some(n) if n < 0 => return Err(ApiError::bad_request("afterSeq must be at least 0")),
        n => n.map(|n| n as u64),
    };
    let limit = q.limit.map(u64::from);
    let format = q.format.unwrap_or_default();
    if format == AuditFormat::Json {
        let limit = limit.unwrap_or(JSON_PAGE_MAX).min(JSON_PAGE_MAX) as usize;
        let after = after_seq;
        let entries =
            tokio::task::spawn_blocking(move || engine.audit_entries(since, after, limit + 1))
                .await??;
        return Ok(Json(page(entries, limit)).into_response());
    }
    let (content_type, head) = match format {
        AuditFormat::Csv => ("text/csv; charset=utf-8", Some(csv_row(CSV_COLUMNS))),
        _ => ("application/jsonl", None),
    };
    let head = futures::stream::iter(head.map(|h| Ok(Bytes::from(h))));
    let rows = entry_stream(engine, since, after_seq, limit, format);
    let mut resp = Body::from_stream(head.chain(rows)).into_response();
    resp.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    Ok(resp)
}

/// The first `limit` of `entries` (read one more than `limit`, to know whether more follow).
fn page(mut entries: Vec<AuditEntry>, limit: usize) -> AuditPage {
    let more = entries.len() > limit;
    entries.truncate(limit);
    let next_after_seq = more.then(|| entries.last().map(|e| e.seq)).flatten();
    AuditPage {
        entries,
        next_after_seq,
    }
}

/// The matching entries rendered in `format` (`jsonl` or `csv` rows), read [`STREAM_PAGE`] at a
/// time. A read that fails ends the stream with the error (the response is cut off).
fn entry_stream(
    engine: Engine,
    since: Option<i64>,
    after_seq: Option<u64>,
    limit: Option<u64>,
    format: AuditFormat,
) -> impl futures::Stream<Item = Result<Bytes, std::io::Error>> + Send + 'static {
    let start = (after_seq, limit.unwrap_or(u64::MAX));
    let pages = futures::stream::try_unfold(start, move |(after, remaining)| {
        let engine = engine.clone();
        async move {
            if remaining == 0 {
                return Ok(None);
            }
            let n = (remaining.min(STREAM_PAGE as u64)) as usize;
            let entries =
                tokio::task::spawn_blocking(move || engine.audit_entries(since, after, n))
                    .await??;
            let Some(last) = entries.last().map(|e| e.seq) else {
                return Ok(None);
            };
            let mut out = String::new();
            for e in &entries {
                match format {
                    AuditFormat::Csv => out.push_str(&csv_entry(e)),
                    _ => {
                        out.push_str(&serde_json::to_string(e).map_err(|e| {
                            ApiError::internal(format!("cannot render an entry: {e}"))
                        })?);
                        out.push('\n');
                    }
                }
            }
            // A short page is the last: ending here saves one empty read.
            let remaining = if entries.len() < n {
                0
            } else {
                remaining - n as u64
            };
            Ok::<_, ApiError>(Some((Bytes::from(out), (Some(last), remaining))))
        }
    });
    pages.map(|page| page.map_err(|e| std::io::Error::other(e.detail)))
}

/// One CSV row (RFC 4180: CRLF, fields with `,` `"` CR or LF quoted, quotes doubled). A field
/// a spreadsheet would take for a formula (starting with `=`, `+`, `-`, `@`, a tab or a CR:
/// an agent's tool name or argument can) starts with `'`, which spreadsheets read as "text"
/// (OWASP's advice on CSV injection).
fn csv_row<'a>(fields: impl IntoIterator<Item = &'a str>) -> String {
    let mut row = String::new();
    for (i, f) in fields.into_iter().enumerate() {
        if i > 0 {
            row.push(',');
        }
        let text;
        let f = match f.starts_with(['=', '+', '-', '@', '\t', '\r']) {
            true => {
                text = format!("'{f}");
                text.as_str()
            }
            false => f,
        };
        if f.contains([',', '"', '\r', '\n']) {
            row.push('"');
            row.push_str(&f.replace('"', "\"\""));
            row.push('"');
        } else {
            row.push_str(f);
        }
    }
    row.push_str("\r\n");
    row
}

/// `entry` as a CSV row in [`CSV_COLUMNS`] order: `null` is an empty field, the argument
/// objects are their JSON text.
fn csv_entry(e: &AuditEntry) -> String {
    let text = |v: &Option<String>| v.clone().unwrap_or_default();
    let fields = [
        e.seq.to_string(),
        e.at_ms.to_string(),
        text(&e.task_id),
        e.principal.clone(),
        e.server.clone(),
        e.tool.clone(),
        e.digest.clone(),
        e.decision.clone(),
        e.decided_by.clone(),
        text(&e.human),
        text(&e.rule),
        text(&e.reason),
        e.arguments.to_string(),
        e.edited_arguments
            .as_ref()
            .map(Value::to_string)
            .unwrap_or_default(),
        e.prev_hash.clone(),
        e.hash.clone(),
    ];
    csv_row(fields.iter().map(String::as_str))
}

/// `GET /v1/audit/verify`.
#[utoipa::path(get, path = "/v1/audit/verify", tag = "audit",
    responses((status = 200, description = "the stored chain checked from the oldest kept entry to the recorded head: `ok`, or the first problem and its seq", body = AuditVerificationDoc),
              (status = 403, description = "not the admin", body = ProblemDocument, content_type = "application/problem+json")))]
pub(crate) async fn verify_audit(
    State(engine): State<Engine>,
    Extension(p): Extension<Principal>,
) -> Result<Json<AuditVerification>, ApiError> {
    ApiError::admin_only(&p, WHAT)?;
    Ok(Json(
        tokio::task::spawn_blocking(move || engine.verify_audit()).await??,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn since_takes_ms_rfc3339_and_dates() {
        assert_eq!(parse_since("1764600000000").unwrap(), 1_764_600_000_000);
        assert_eq!(
            parse_since("2026-12-01T16:00:00+01:00").unwrap(),
            parse_since("2026-12-01T15:00:00Z").unwrap()
        );
        assert_eq!(parse_since("2026-12-01").unwrap(), 1_796_083_200_000);
        for bad in ["", "yesterday", "2026-13-01", "99999999999999999999"] {
            assert!(parse_since(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn csv_rows_quote_what_needs_it() {
        assert_eq!(csv_row(["a", "b c", ""]), "a,b c,\r\n");
        assert_eq!(
            csv_row(["x,y", "say \"hi\"", "two\nlines"]),
            "\"x,y\",\"say \"\"hi\"\"\",\"two\nlines\"\r\n"
        );
        // What a spreadsheet would run is text.
        assert_eq!(
            csv_row([
                "=HYPERLINK(\"http://x/\",\"y\")",
                "@SUM(A1)",
                "-2+3",
                "+1",
                "a=b"
            ]),
            "\"'=HYPERLINK(\"\"http://x/\"\",\"\"y\"\")\",'@SUM(A1),'-2+3,'+1,a=b\r\n"
        );
    }
}
