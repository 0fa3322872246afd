//! `GET /v1/events`: the Server-Sent Events stream of changes to the tasks the caller may see
//! (the UI's live view). Each `change` event's `id` is its timeline event id, so a client
//! resumes with `Last-Event-ID` (or `?since=`) after a reconnect.
//!
//! Each frame is rendered once into shared bytes (a live change's once for all open streams),
//! and the frames of a batch ([`super::sse_batch`]) are written as one chunk: with 20 windows
//! open under a fleet's 2,500 changes/s, copying each frame into each stream and writing it on
//! its own cost more CPU than the calls that made the changes.

use std::{
    collections::VecDeque,
    convert::Infallible,
    sync::{Arc, Mutex, Weak},
    time::Duration,
};

use axum::{
    Extension,
    body::Body,
    extract::State,
    http::{HeaderMap, HeaderValue, header},
    response::{IntoResponse, Response},
};
use bytes::{Bytes, BytesMut};
use futures::{StreamExt, future::Either, stream};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio_stream::wrappers::{BroadcastStream, WatchStream, errors::BroadcastStreamRecvError};

use super::{
    api_error::{ApiError, ApiQuery, ProblemDocument},
    api_types::{TaskView, TimelineEventView},
};
use taskdeck_engine::{Engine, Principal, feed::Change};

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct EventsQuery {
    /// Resume after this event id (like `Last-Event-ID`).
    since: Option<i64>,
    /// Send a keep-alive comment (`: ` line) after 15 s without an event (default `true`), so
    /// that a proxy keeps the idle stream open and a reader can tell a dead connection from a
    /// quiet one. `false`: none, and an idle stream wakes nobody; for readers that reach the
    /// server over loopback, where a dead peer closes the connection at once (the UI does so).
    #[serde(rename = "keepAlive")]
    keep_alive: Option<bool>,
}

/// How long an idle stream waits before its keep-alive comment (see [`EventsQuery`]).
const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// The data of one `change` event: the timeline event and the task as it is after it (for a
/// `deleted` event, only `{taskId, status, tool, principal}` of the task).
#[derive(Serialize, utoipa::ToSchema)]
pub struct ChangeEvent {
    /// The timeline event.
    pub event: TimelineEventView,
    /// The task after the event, its large members cut as a list page's are (`abridged`); for
    /// `deleted`, only `{taskId, status, tool, principal}`.
    #[schema(value_type = TaskView)]
    pub task: Value,
}

/// A [`ChangeEvent`] borrowed: what a `change` event's `data` serializes, field for field.
#[derive(Serialize)]
struct ChangeEventData<'a> {
    event: &'a TimelineEventView,
    task: &'a TaskView,
}

/// The SSE frame of a `change` event with id `id` whose `data` is `data` as one line of JSON:
/// `id: …\nevent: change\ndata: …\n\n`. The JSON is written straight into the frame, with no
/// `Value` tree or string in between (under a fleet's load this runs 2,500 times a second).
fn change_frame(id: i64, data: &impl Serialize) -> Bytes {
    use std::io::Write;
    let mut out = Vec::with_capacity(1024);
    let _ = write!(out, "id: {id}\nevent: change\ndata: ");
    // Writing into a Vec fails only if `data` cannot be JSON (a map with non-string keys),
    // which none of the views here can be; the reader would then reload its list.
    if let Err(e) = serde_json::to_writer(&mut out, data) {
        tracing::error!("/v1/events: cannot render event {id}: {e}");
        // With its id, so that a reader that reconnects resumes after it.
        return format!("id: {id}\nevent: resync\ndata: {{}}\n\n").into();
    }
    out.extend_from_slice(b"\n\n");
    out.into()
}

/// The `change` frame of `change`.
fn change_event(change: &Change) -> Bytes {
    let data = ChangeEventData {
        event: &TimelineEventView::streamed(&change.event),
        task: &TaskView::listed(&change.task),
    };
    change_frame(change.event.id, &data)
}

/// The keep-alive frame: an empty comment.
const KEEP_ALIVE_FRAME: &[u8] = b":\n\n";

/// How many recent live changes keep their rendered frame (see [`live_change_event`]).
const RENDERED_KEPT: usize = 256;

/// The rendered frames of the most recent live changes, shared by all streams: each entry's
/// `Weak` keeps the change's allocation, so its address is not reused while it is cached and
/// an address that matches is that very change.
static RENDERED: Mutex<VecDeque<(Weak<Change>, Bytes)>> = Mutex::new(VecDeque::new());

/// The `change` frame of a live `change` from the feed, as [`change_event`] renders it. The
/// frame (the same for every reader) is rendered once and shared by every open stream that
/// sends it: with N streams open (the UI in several windows), rendering it per stream took N
/// times the CPU.
fn live_change_event(change: &Arc<Change>) -> Bytes {
    let key = Arc::as_ptr(change);
    let cached = RENDERED.lock().ok().and_then(|r| {
        r.iter()
            .rev()
            .find(|(w, _)| w.as_ptr() == key)
            .map(|(_, d)| d.clone())
    });
    cached.unwrap_or_else(|| {
        let frame = change_event(change);
        if let Ok(mut r) = RENDERED.lock() {
            if r.len() == RENDERED_KEPT {
                r.pop_front();
            }
            r.push_back((Arc::downgrade(change), frame.clone()));
        }
        frame
    })
}

/// Most events one replay sends; a client further behind gets `resync` instead.
const MAX_REPLAY: usize = 50_000;

/// The `resync` frame: the client fell behind further than a replay reaches and must reload.
fn resync() -> Bytes {
    Bytes::from_static(b"event: resync\ndata: {}\n\n")
}

/// A `store` event: whether writes are refused because the disk holding the store is full
/// (`{"diskFull": true, "since": RFC 3339}`, or `{"diskFull": false}` once it has room again).
/// It has no `id`, so it leaves the stream's `Last-Event-ID` as it was.
fn store_event(disk_full_since: Option<i64>) -> Bytes {
    let data = match disk_full_since {
        Some(ms) => json!({"diskFull": true, "since": taskdeck_engine::clock::iso8601(ms)}),
        None => json!({"diskFull": false}),
    };
    Bytes::from(format!("event: store\ndata: {data}\n\n"))
}

/// One chunk of the stream: the frames of a batch back to back, or the keep-alive comment
/// for an empty batch (the batcher's idle signal).
fn chunk(mut frames: Vec<Bytes>) -> Bytes {
    match frames.len() {
        0 => Bytes::from_static(KEEP_ALIVE_FRAME),
        1 => frames.pop().unwrap_or_default(),
        _ => {
            let mut out = BytesMut::with_capacity(frames.iter().map(Bytes::len).sum());
            for f in &frames {
                out.extend_from_slice(f);
            }
            out.freeze()
        }
    }
}

/// The `change` events of the timeline events `p` may see (`owner`: only that principal's;
/// `None` for a person, who sees all) after id `after` and, with `before`, below it, read from
/// the store oldest first, each with its task as it is now (a deleted task's last status, tool
/// and principal, from its `deleted` event). Also returns the last id read. More than
/// [`MAX_REPLAY`] events: just `resync`. Errors: the store's, as [`ApiError`].
fn replay(
    engine: &Engine,
    p: &Principal,
    owner: Option<&str>,
    mut after: i64,
    before: Option<i64>,
) -> Result<(Vec<Bytes>, i64), ApiError> {
    let mut out = Vec::new();
    loop {
        let mut batch = engine.store().events_since(after, owner, 1000)?;
        batch.retain(|ev| before.is_none_or(|b| ev.id < b));
        let Some(last) = batch.last() else { break };
        after = last.id;
        // A short batch (the store's end, or `before` reached) is the last.
        let ended = batch.len() < 1000;
        for ev in batch {
            if ev.kind == "deleted" {
                // The task is gone; its last status, tool and principal are in the event.
                let task = json!({"taskId": ev.task_id, "status": ev.data["status"],
                    "tool": ev.data["tool"], "principal": ev.data["principal"]});
                let data = json!({"event": TimelineEventView::streamed(&ev), "task": task});
                out.push(change_frame(ev.id, &data));
            } else if let Ok(task) = engine.get(p, &ev.task_id) {
                out.push(change_event(&Change {
                    event: ev,
                    task: Arc::new(task),
                }));
            }
        }
        if out.len() > MAX_REPLAY {
            return Ok((vec![resync()], after));
        }
        if ended {
            break;
        }
    }
    Ok((out, after))
}

/// `GET /v1/events`: every change to tasks the caller may see, as SSE `change` events whose
/// `id` is the timeline event id. A task removed from the store (TTL, caps) ends with an
/// event of kind `deleted` (`data: {status, tool, principal}`). With `Last-Event-ID` (or `?since=`), the stream first replays
/// what was missed from the store. If the caller falls too far behind, a `resync` event asks it
/// to reload its list; changes a live stream fell behind on (a burst it could not keep up with)
/// are read from the store and sent in order, so `resync` comes only past 50,000. A `store`
/// event (no `id`) says when writes start being refused because the store's disk is full (at
/// once to a stream that opens while they are) and when they resume. An idle
/// stream carries a keep-alive comment every 15 s unless `?keepAlive=false`.
#[utoipa::path(get, path = "/v1/events", params(EventsQuery), tag = "tasks",
    params(("Last-Event-ID" = Option<String>, Header, description = "Resume after this event id (wins over `since`); one this store never gave gets `resync`")),
    responses((status = 200, description = "Server-Sent Events: `change` events whose data is a `ChangeEvent` and whose `id` is the event id; `resync` (data `{}`) when the client fell behind and must reload its list; `store` (data `{diskFull, since?}`, no id) when writes start or stop being refused for a full disk", content_type = "text/event-stream", body = String),
              (status = 400, description = "a malformed query", body = ProblemDocument, content_type = "application/problem+json")))]
pub(crate) async fn events(
    State(engine): State<Engine>,
    Extension(p): Extension<Principal>,
    headers: HeaderMap,
    ApiQuery(q): ApiQuery<EventsQuery>,
) -> Result<Response, ApiError> {
    // A Last-Event-ID that is not an event id this store could have given cannot be resumed:
    // like one past the newest event, it gets `resync` (below).
    let header_id = headers
        .get("last-event-id")
        .map(|v| v.to_str().ok().and_then(|v| v.trim().parse::<i64>().ok()));
    let since = match header_id {
        Some(Some(id)) => Some(id),
        Some(None) => Some(i64::MAX),
        None => q.since,
    };
    // The store's disk: its state now when the disk is full, then each change of it.
    let mut disk = engine.store().disk_full();
    // Marked seen, so that only later changes follow (the receiver is a clone of one that
    // never looked, so any past change would otherwise count as new).
    let full_now = *disk.borrow_and_update();
    let disk = stream::iter(full_now.map(|since| store_event(Some(since))))
        .chain(WatchStream::from_changes(disk).map(store_event));
    // Subscribe before reading the backlog so nothing falls between the two.
    let live = BroadcastStream::new(engine.store().feed().subscribe());
    let owner = (!p.is_human()).then(|| p.name.clone());
    let newest = engine.store().last_event_id()?;
    let mut replayed_up_to = since.unwrap_or(i64::MAX);
    let mut backlog = Vec::new();
    // An id this store never reached (e.g. a backup older than the client's last event was
    // restored): the client's state cannot be resumed, so it is asked to reload.
    if since.is_some_and(|s| s > newest) {
        backlog.push(resync());
        replayed_up_to = newest;
    } else if let Some(after) = since {
        let (events, up_to) = replay(&engine, &p, owner.as_deref(), after, None)?;
        backlog = events;
        replayed_up_to = up_to;
    }
    // The id of the last live change received (or, before any, where the feed was joined):
    // after a lag, the changes between it and the next one received were dropped by the feed
    // and are read from the store instead.
    let mut last_seen = if since.is_some() {
        replayed_up_to
    } else {
        newest
    };
    let mut lagged = false;
    // What one feed item adds to the stream: most often one frame, without a `Vec` (the 20
    // windows of a fleet's load would allocate one per change each).
    let live = live.flat_map(move |item| {
        let mut missed = Vec::new();
        let mut frame = None;
        match item {
            Err(BroadcastStreamRecvError::Lagged(_)) => lagged = true,
            Ok(change) => {
                let id = change.event.id;
                // Ids the replay covered need nothing; a lag that dropped only those (a burst
                // while the replay was read) is no loss.
                let from = last_seen.max(if replayed_up_to == i64::MAX {
                    i64::MIN
                } else {
                    replayed_up_to
                });
                if std::mem::take(&mut lagged) && id > from + 1 {
                    match replay(&engine, &p, owner.as_deref(), from, Some(id)) {
                        Ok((events, _)) => missed = events,
                        Err(e) => {
                            tracing::warn!("/v1/events: cannot read what a stream missed: {e:?}");
                            missed.push(resync());
                        }
                    }
                }
                last_seen = last_seen.max(id);
                let fresh = id > replayed_up_to || replayed_up_to == i64::MAX;
                if fresh && p.can_see(&change.task.principal) {
                    frame = Some(live_change_event(&change));
                }
            }
        }
        if missed.is_empty() {
            Either::Left(stream::iter(frame))
        } else {
            missed.extend(frame);
            Either::Right(stream::iter(missed))
        }
    });
    let idle = q.keep_alive.unwrap_or(true).then_some(KEEP_ALIVE);
    let frames = stream::select(stream::iter(backlog).chain(live), disk);
    let body =
        super::sse_batch::batched(frames, idle).map(|batch| Ok::<_, Infallible>(chunk(batch)));
    let mut resp = Body::from_stream(body).into_response();
    let headers = resp.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
    Ok(resp)
}
