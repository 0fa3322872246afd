//! The one renderer of a task on the wire: the SEP-2663 `Task`, `DetailedTask` (§Task Polling)
//! and `GetTaskResult` objects, as JSON text or as a `serde_json` object.
//!
//! Every caller describes the task with a [`DetailedTask`] view (borrowed fields: from a
//! [`TaskRecord`] or straight from the store's columns, whose stored `result` and `error` JSON
//! text is copied verbatim instead of decoded) and picks an output. The shape (which keys, their
//! values, the defaults of a payload-less `completed` or `failed` task, `resultType` in the
//! inlined result) is decided once, in `DetailedTask::entries`; the two encoders only write
//! what it lists, each in its own key order:
//! - objects keep the SEP's order (`taskId`, `status`, ... then the payload), and an inlined
//!   result gets its `resultType` last, as `serde_json` inserts it;
//! - JSON text (the cached `tasks/get` answer agents poll) lists keys alphabetically, and an
//!   inlined result gets its `resultType` first, spliced into the stored text without decoding
//!   it.

use std::collections::BTreeMap;
use std::io::Write as _;

use serde_json::{Map, Value};

use super::{TaskRecord, TaskStatus, clock::iso8601};

/// A JSON value the view borrows: text as the store keeps it (valid JSON, written by
/// `serde_json`), or a decoded value.
#[derive(Debug, Clone, Copy)]
pub enum StoredJson<'a> {
    /// JSON text as stored, written out as it is.
    Text(&'a str),
    /// A decoded value, serialized when written.
    Value(&'a Value),
}

/// A task as the wire shows it, borrowed from wherever the caller holds it. Times are ms since
/// the Unix epoch; the payload fields are read only for the status that carries them
/// (`input_requests` for `input_required`, `result` for `completed`, `error` for `failed`).
#[derive(Debug, Clone, Copy)]
pub struct DetailedTask<'a> {
    /// SEP-2663 `taskId`.
    pub task_id: &'a str,
    /// SEP-2663 `status`.
    pub status: TaskStatus,
    /// SEP-2663 `statusMessage`; `None` leaves it out.
    pub status_message: Option<&'a str>,
    /// SEP-2663 `createdAt`, ms since the Unix epoch (shown as ISO 8601).
    pub created_at_ms: i64,
    /// SEP-2663 `lastUpdatedAt`, ms since the Unix epoch (shown as ISO 8601).
    pub last_updated_at_ms: i64,
    /// `None` = unlimited retention, shown as `ttlMs: null`.
    pub ttl_ms: Option<u64>,
    /// SEP-2663 `pollIntervalMs`, in ms.
    pub poll_interval_ms: u64,
    /// Outstanding input requests, key → `{method, params}`.
    pub input_requests: Option<&'a BTreeMap<String, Value>>,
    /// The tool's `CallToolResult`; `None` shows as `{"content": []}`.
    pub result: Option<StoredJson<'a>>,
    /// The JSON-RPC error object the failed task stores (made by the server's
    /// [`FailureToErrorObject`](crate::FailureToErrorObject)); `None`, which only a damaged row
    /// can give, shows no `error`.
    pub error: Option<StoredJson<'a>>,
}

/// Which object to render.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// The base `Task`: no payload, no `resultType`.
    Task,
    /// `DetailedTask`: the base task plus the payload of its status.
    Detailed,
    /// `GetTaskResult`: `DetailedTask` plus `resultType: "complete"`.
    GetResult,
}

/// One value of a rendered object, as [`DetailedTask::entries`] lists it.
enum Field<'a> {
    Str(&'a str),
    /// A time, ms since the epoch, written as ISO 8601 text.
    Time(i64),
    Integer(u64),
    Null,
    Json(StoredJson<'a>),
    Requests(&'a BTreeMap<String, Value>),
    /// A `CallToolResult` inlined as a 2026-07-28 result: with `resultType: "complete"` unless
    /// it has a `resultType` of its own (schema/2026-07-28 `Result.resultType` is required on
    /// every result).
    CompleteResult(StoredJson<'a>),
}

const EMPTY_RESULT: &str = r#"{"content":[]}"#;

impl<'a> DetailedTask<'a> {
    /// The view of a whole record.
    pub fn of(task: &'a TaskRecord) -> DetailedTask<'a> {
        DetailedTask {
            task_id: &task.task_id,
            status: task.status,
            status_message: task.status_message.as_deref(),
            created_at_ms: task.created_at_ms,
            last_updated_at_ms: task.last_updated_at_ms,
            ttl_ms: task.ttl_ms,
            poll_interval_ms: task.poll_interval_ms,
            input_requests: Some(&task.input_requests),
            result: task.result.as_ref().map(StoredJson::Value),
            error: task.error.as_ref().map(StoredJson::Value),
        }
    }

    /// The `GetTaskResult` object of SEP-2663 §Task Polling (`DetailedTask` with
    /// `resultType: "complete"`) as compact JSON text: what `tasks/get` answers.
    pub fn get_result_json(&self) -> String {
        let mut entries = self.entries(Shape::GetResult);
        entries.sort_unstable_by_key(|(key, _)| *key);
        let mut out = Vec::with_capacity(256 + self.payload_text_len());
        write_object(&mut out, &entries);
        String::from_utf8(out).expect("serde_json and this encoder write UTF-8")
    }

    /// The `DetailedTask` object of SEP-2663 §Task Polling: the base task plus `inputRequests`
    /// (input_required), `result` (completed) or `error` (failed).
    pub fn detailed_map(&self) -> Map<String, Value> {
        to_map(&self.entries(Shape::Detailed))
    }

    /// The base `Task` object of SEP-2663 (no `resultType`, no payload).
    pub fn task_map(&self) -> Map<String, Value> {
        to_map(&self.entries(Shape::Task))
    }

    /// Bytes of stored payload text, to size the output buffer once.
    fn payload_text_len(&self) -> usize {
        match (self.status, self.result, self.error) {
            (TaskStatus::Completed, Some(StoredJson::Text(t)), _)
            | (TaskStatus::Failed, _, Some(StoredJson::Text(t))) => t.len(),
            _ => 0,
        }
    }

    /// The keys of `shape` and their values, in the SEP's order.
    fn entries(&self, shape: Shape) -> Vec<(&'static str, Field<'a>)> {
        let mut e = Vec::with_capacity(11);
        e.push(("taskId", Field::Str(self.task_id)));
        e.push(("status", Field::Str(self.status.as_str())));
        if let Some(m) = self.status_message {
            e.push(("statusMessage", Field::Str(m)));
        }
        e.push(("createdAt", Field::Time(self.created_at_ms)));
        e.push(("lastUpdatedAt", Field::Time(self.last_updated_at_ms)));
        e.push(("ttlMs", self.ttl_ms.map_or(Field::Null, Field::Integer)));
        e.push(("pollIntervalMs", Field::Integer(self.poll_interval_ms)));
        if shape == Shape::Task {
            return e;
        }
        match self.status {
            TaskStatus::InputRequired => {
                static NONE: BTreeMap<String, Value> = BTreeMap::new();
                let requests = self.input_requests.unwrap_or(&NONE);
                e.push(("inputRequests", Field::Requests(requests)));
            }
            TaskStatus::Completed => {
                let result = self.result.unwrap_or(StoredJson::Text(EMPTY_RESULT));
                e.push(("result", Field::CompleteResult(result)));
            }
            TaskStatus::Failed => {
                if let Some(error) = self.error {
                    e.push(("error", Field::Json(error)));
                }
            }
            TaskStatus::Working | TaskStatus::Cancelled => {}
        }
        if shape == Shape::GetResult {
            e.push(("resultType", Field::Str("complete")));
        }
        e
    }
}

impl TaskRecord {
    /// The base `Task` object of SEP-2663 (no `resultType`, no payload); see [`DetailedTask`].
    pub fn wire_task(&self) -> Map<String, Value> {
        DetailedTask::of(self).task_map()
    }

    /// The `DetailedTask` of SEP-2663 §Task Polling (see [`DetailedTask::detailed_map`]).
    pub fn wire_detailed(&self) -> Map<String, Value> {
        DetailedTask::of(self).detailed_map()
    }
}

/// Writes `entries` as one compact JSON object, in their order.
fn write_object(out: &mut Vec<u8>, entries: &[(&'static str, Field<'_>)]) {
    out.push(b'{');
    for (i, (key, value)) in entries.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        // Keys are ASCII names without characters to escape.
        out.push(b'"');
        out.extend_from_slice(key.as_bytes());
        out.extend_from_slice(b"\":");
        write_field(out, value);
    }
    out.push(b'}');
}

fn write_field(out: &mut Vec<u8>, field: &Field<'_>) {
    match field {
        Field::Str(s) => write_json(out, *s),
        Field::Time(ms) => {
            out.push(b'"');
            out.extend_from_slice(iso8601(*ms).as_bytes());
            out.push(b'"');
        }
        Field::Integer(n) => {
            let _ = write!(out, "{n}");
        }
        Field::Null => out.extend_from_slice(b"null"),
        Field::Json(StoredJson::Text(t)) => out.extend_from_slice(t.as_bytes()),
        Field::Json(StoredJson::Value(v)) => write_json(out, *v),
        Field::Requests(r) => write_json(out, *r),
        Field::CompleteResult(StoredJson::Text(t)) => match t.strip_prefix('{') {
            // Stored text is compact serde_json output: splice the key in rather than decode.
            Some(rest) if !t.contains("\"resultType\"") => {
                out.extend_from_slice(b"{\"resultType\":\"complete\"");
                if !rest.trim_start().starts_with('}') {
                    out.push(b',');
                }
                out.extend_from_slice(rest.as_bytes());
            }
            _ => match serde_json::from_str::<Value>(t) {
                Ok(v) => write_complete_result(out, &v),
                Err(_) => out.extend_from_slice(t.as_bytes()),
            },
        },
        Field::CompleteResult(StoredJson::Value(v)) => write_complete_result(out, v),
    }
}

/// [`Field::CompleteResult`] of a decoded result.
fn write_complete_result(out: &mut Vec<u8>, result: &Value) {
    match result.as_object() {
        Some(m) if !m.contains_key("resultType") => {
            out.extend_from_slice(b"{\"resultType\":\"complete\"");
            for (k, v) in m {
                out.push(b',');
                write_json(out, k);
                out.push(b':');
                write_json(out, v);
            }
            out.push(b'}');
        }
        _ => write_json(out, result),
    }
}

/// Builds `entries` as a `serde_json` object, in their order (stored text is decoded).
fn to_map(entries: &[(&'static str, Field<'_>)]) -> Map<String, Value> {
    let decoded = |j: &StoredJson<'_>| match j {
        StoredJson::Text(t) => serde_json::from_str(t).unwrap_or(Value::Null),
        StoredJson::Value(v) => (*v).clone(),
    };
    let mut m = Map::with_capacity(entries.len());
    for (key, field) in entries {
        let value = match field {
            Field::Str(s) => Value::String((*s).to_string()),
            Field::Time(ms) => Value::String(iso8601(*ms)),
            Field::Integer(n) => Value::from(*n),
            Field::Null => Value::Null,
            Field::Json(j) => decoded(j),
            Field::Requests(r) => {
                Value::Object(r.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
            }
            Field::CompleteResult(j) => match decoded(j) {
                Value::Object(mut r) => {
                    r.entry("resultType").or_insert_with(|| "complete".into());
                    Value::Object(r)
                }
                other => other,
            },
        };
        m.insert((*key).to_string(), value);
    }
    m
}

/// Appends the compact JSON of `value` (`serde_json`'s writer; writing to a Vec cannot fail).
fn write_json<T: serde::Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) {
    serde_json::to_writer(&mut *out, value).expect("serializable into a Vec");
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn record(status: TaskStatus) -> TaskRecord {
        TaskRecord {
            task_id: "t-1".into(),
            seq: 1,
            tool: "echo".into(),
            arguments: json!({}),
            principal: "p".into(),
            status,
            status_message: Some("say \"hi\"\n".into()),
            created_at_ms: 1_700_000_000_000,
            last_updated_at_ms: 1_700_000_000_500,
            ttl_ms: None,
            poll_interval_ms: 1000,
            progress: None,
            result: None,
            error: None,
            input_requests: BTreeMap::new(),
            cancel_requested: false,
        }
    }

    /// The view over stored text gives the same bytes as the view over decoded values, and
    /// the text decodes to the object form plus `resultType`.
    #[test]
    fn text_and_object_forms_agree_for_every_status() {
        let mut completed = record(TaskStatus::Completed);
        completed.result = Some(json!({"content": [{"type": "text", "text": "é\u{1}"}], "x": 1.5}));
        let mut empty = record(TaskStatus::Completed);
        empty.result = Some(json!({}));
        let mut typed = record(TaskStatus::Completed);
        typed.result = Some(json!({"content": [], "resultType": "complete"}));
        let mut nested = record(TaskStatus::Completed);
        nested.result = Some(json!({"structuredContent": {"resultType": 1}}));
        let mut failed = record(TaskStatus::Failed);
        failed.error = Some(json!({"code": -32000, "message": "no"}));
        let mut waiting = record(TaskStatus::InputRequired);
        waiting
            .input_requests
            .insert("k".into(), json!({"method": "elicitation/create"}));
        let tasks = [
            completed,
            empty,
            typed,
            nested,
            failed,
            waiting,
            record(TaskStatus::Working),
            record(TaskStatus::Cancelled),
            record(TaskStatus::Completed),
            record(TaskStatus::Failed),
        ];
        for task in &tasks {
            let from_values = DetailedTask::of(task).get_result_json();
            let (result, error) = (
                task.result.as_ref().map(Value::to_string),
                task.error.as_ref().map(Value::to_string),
            );
            let from_text = DetailedTask {
                result: result.as_deref().map(StoredJson::Text),
                error: error.as_deref().map(StoredJson::Text),
                ..DetailedTask::of(task)
            }
            .get_result_json();
            assert_eq!(from_values, from_text);
            let mut object = task.wire_detailed();
            object.insert("resultType".into(), json!("complete"));
            let decoded: Map<String, Value> = serde_json::from_str(&from_text).unwrap();
            assert_eq!(decoded, object, "{from_text}");
            let keys: Vec<&String> = decoded.keys().collect();
            assert!(
                keys.is_sorted(),
                "text lists keys alphabetically: {from_text}"
            );
            assert_eq!(
                serde_json::to_string(&decoded).unwrap(),
                from_text,
                "compact"
            );
        }
    }

    #[test]
    fn the_cached_answer_keeps_its_bytes() {
        let mut t = record(TaskStatus::Completed);
        t.result = Some(json!({"content": [], "isError": false}));
        t.ttl_ms = Some(60_000);
        assert_eq!(
            DetailedTask::of(&t).get_result_json(),
            r#"{"createdAt":"2023-11-14T22:13:20.000Z","lastUpdatedAt":"2023-11-14T22:13:20.500Z","pollIntervalMs":1000,"result":{"resultType":"complete","content":[],"isError":false},"resultType":"complete","status":"completed","statusMessage":"say \"hi\"\n","taskId":"t-1","ttlMs":60000}"#
        );
        let mut failed = record(TaskStatus::Failed);
        assert!(
            !DetailedTask::of(&failed)
                .get_result_json()
                .contains("error")
        );
        failed.error = Some(json!({"code": 1, "message": "m"}));
        assert!(
            DetailedTask::of(&failed)
                .get_result_json()
                .contains(r#""error":{"code":1,"message":"m"}"#)
        );
        let base = DetailedTask::of(&t).task_map();
        let keys: Vec<&str> = base.keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "taskId",
                "status",
                "statusMessage",
                "createdAt",
                "lastUpdatedAt",
                "ttlMs",
                "pollIntervalMs"
            ]
        );
        let detailed = Value::Object(t.wire_detailed()).to_string();
        assert!(
            detailed.ends_with(r#""pollIntervalMs":1000,"result":{"content":[],"isError":false,"resultType":"complete"}}"#),
            "{detailed}"
        );
    }

    /// A micro-benchmark of the `tasks/get` rendering of a stored completed task (run with
    /// `cargo test -p taskdeck-engine --release -- --ignored --nocapture render_speed`).
    #[test]
    #[ignore]
    fn render_speed() {
        let mut t = record(TaskStatus::Completed);
        t.result = Some(
            json!({"content": [{"type": "text", "text": "Computed x in 0.05s"}], "isError": false}),
        );
        t.ttl_ms = Some(86_400_000);
        let stored = t.result.as_ref().unwrap().to_string();
        let view = DetailedTask {
            result: Some(StoredJson::Text(&stored)),
            ..DetailedTask::of(&t)
        };
        let n = 1_000_000;
        let start = std::time::Instant::now();
        let mut bytes = 0;
        for _ in 0..n {
            bytes += std::hint::black_box(view.get_result_json()).len();
        }
        let per = start.elapsed() / n;
        println!(
            "get_result_json: {per:?} per answer ({} bytes)",
            bytes / n as usize
        );
    }
}
