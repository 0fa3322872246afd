//! The 2025-11-25 MCP sessions Taskdeck knows of, and what it pushes to them.
//!
//! rmcp owns each session's transport (`initialize`, `Mcp-Session-Id`, the GET stream, DELETE);
//! this registry adds what Taskdeck needs on top:
//! - the principal that opened the session: a request on it with another principal's token is
//!   refused exactly as an unknown session is (404), so a session id is no bearer credential;
//! - whether the client declared form elicitation at `initialize` (`agent_view`);
//! - the session's rmcp [`Peer`], to push on the session's stream, for the tasks it watches:
//!   `notifications/tasks/status` (2025-11-25 §Task Notifications) for tasks created by a
//!   task-augmented call, and `notifications/progress` for those that carried a
//!   `progressToken` (valid for the task's whole life, 2025-11-25 §Task Progress Notifications).
//!
//! One feed subscriber serves every session: it looks each change's task up in the watch list.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
};

use rmcp::{
    Peer, RoleServer,
    model::{
        CustomNotification, Notification, ProgressNotificationParam, ProgressToken,
        ServerNotification,
    },
};
use tokio::sync::{Notify, broadcast::error::RecvError};
use tokio_util::sync::CancellationToken;

use super::{agent_view, legacy_wire};
use taskdeck_engine::{Engine, Principal, TaskRecord};

/// How long one notification may wait for a session that is not reading its stream.
const SEND_WAIT: std::time::Duration = std::time::Duration::from_secs(1);

/// What Taskdeck knows of one session.
#[derive(Clone)]
pub struct Session {
    /// The principal whose token opened the session.
    pub principal: Principal,
    /// The client declared form elicitation at `initialize`.
    pub can_elicit: bool,
    /// The session's peer, once rmcp reported the session initialized.
    pub peer: Option<Peer<RoleServer>>,
    /// Cancelled when the session ends (DELETE, or rmcp dropped it): what serves it stops.
    pub ended: CancellationToken,
    /// Notified when an answer the client sent was refused: its `tasks/result` streams ask again.
    pub reask: Arc<Notify>,
    /// The client's refused answers (see [`Session::refused`]).
    refusals: Arc<Mutex<HashMap<(String, String), Refusal>>>,
}

/// How many times a `tasks/result` stream asks a question again after the client's answer to
/// it was refused. Past that the question is left to the human in Taskdeck: a client that
/// answers the same wrong thing at once, every time, would otherwise be asked in a tight loop.
pub const REASK_LIMIT: u32 = 3;

/// The client's refused answers to one question: how many, and why the last one was.
#[derive(Clone, Debug)]
pub struct Refusal {
    /// Refused answers so far.
    pub count: u32,
    /// The last refusal's message, e.g. `answer to "approval" does not match its schema: ...`.
    pub reason: String,
}

/// The most questions whose refusals a session remembers; past it the record starts anew.
const REFUSALS_KEPT: usize = 1024;

impl Session {
    /// Records that the client's answer to request `key` of task `task_id` was refused for
    /// `reason`, and tells the session's `tasks/result` streams to ask again.
    pub fn refuse(&self, task_id: &str, key: &str, reason: &str) {
        {
            let mut refusals = self.refusals.lock().unwrap();
            if refusals.len() >= REFUSALS_KEPT {
                refusals.clear();
            }
            let r = refusals
                .entry((task_id.to_string(), key.to_string()))
                .or_insert(Refusal {
                    count: 0,
                    reason: String::new(),
                });
            r.count += 1;
            r.reason = reason.to_string();
        }
        self.reask.notify_waiters();
    }

    /// The client's refused answers to request `key` of task `task_id`, if any.
    pub fn refused(&self, task_id: &str, key: &str) -> Option<Refusal> {
        let key = (task_id.to_string(), key.to_string());
        self.refusals.lock().unwrap().get(&key).cloned()
    }

    /// Who reads tasks through this session (`agent_view`).
    pub fn reader(&self) -> agent_view::Reader {
        agent_view::Reader {
            can_elicit: self.can_elicit,
            human: self.principal.is_human(),
        }
    }
}

/// How long tool list changes are gathered before sessions are told of them.
const LIST_CHANGED_COALESCE: std::time::Duration = std::time::Duration::from_millis(100);

/// A task whose changes go to a session.
struct Watch {
    session_id: String,
    progress_token: Option<ProgressToken>,
    /// The last `progress` value sent: each notification's must be larger (2025-11-25
    /// §Progress).
    last_progress: f64,
    /// The last (status, statusMessage) sent, so a change that alters neither sends nothing.
    last_status: Option<(String, Option<String>)>,
}

/// The registry; cheap to share behind an `Arc`.
#[derive(Default)]
pub struct Sessions {
    sessions: Mutex<HashMap<String, Session>>,
    watches: Mutex<HashMap<String, Watch>>,
}

impl Sessions {
    /// Records a session rmcp just created for `principal`, and forgets those whose session
    /// worker has ended (rmcp dropped them: their clients left without a DELETE).
    pub fn open(&self, session_id: &str, principal: Principal, can_elicit: bool) {
        let live: Option<Vec<String>> = {
            let mut sessions = self.sessions.lock().unwrap();
            let before = sessions.len();
            sessions.retain(|_, s| {
                let gone = s.peer.as_ref().is_some_and(Peer::is_transport_closed);
                if gone {
                    s.ended.cancel();
                }
                !gone
            });
            let pruned = sessions.len() < before;
            sessions.insert(
                session_id.to_string(),
                Session {
                    principal,
                    can_elicit,
                    peer: None,
                    ended: CancellationToken::new(),
                    reask: Arc::new(Notify::new()),
                    refusals: Arc::default(),
                },
            );
            pruned.then(|| sessions.keys().cloned().collect())
        };
        // Never both locks at once: `on_change` takes `watches` first.
        if let Some(live) = live {
            self.watches
                .lock()
                .unwrap()
                .retain(|_, w| live.contains(&w.session_id));
        }
    }

    /// Attaches the session's peer (rmcp's `on_initialized`).
    pub fn attach_peer(&self, session_id: &str, peer: Peer<RoleServer>) {
        if let Some(s) = self.sessions.lock().unwrap().get_mut(session_id) {
            s.peer = Some(peer);
        }
    }

    /// The session, when Taskdeck knows it.
    pub fn get(&self, session_id: &str) -> Option<Session> {
        self.sessions.lock().unwrap().get(session_id).cloned()
    }

    /// Forgets a session (DELETE, or rmcp no longer has it) and the watches it had.
    pub fn close(&self, session_id: &str) {
        if let Some(s) = self.sessions.lock().unwrap().remove(session_id) {
            s.ended.cancel();
        }
        self.watches
            .lock()
            .unwrap()
            .retain(|_, w| w.session_id != session_id);
    }

    /// Sends `task_id`'s changes (a task a task-augmented call created) to `session_id` until
    /// the task ends: status notifications, and progress notifications when the call carried
    /// `progress_token` (valid for the task's life, unlike a plain call's, which ends with its
    /// answer).
    pub fn watch(&self, task_id: &str, session_id: &str, progress_token: Option<ProgressToken>) {
        self.watches.lock().unwrap().insert(
            task_id.to_string(),
            Watch {
                session_id: session_id.to_string(),
                progress_token,
                last_progress: 0.0,
                last_status: None,
            },
        );
    }

    /// Sends `notifications/tools/list_changed` to every live session whenever `tools` changes
    /// (the upstream servers' tools), until `stop`. A burst of changes makes one notification.
    pub fn spawn_tool_list_notifier(
        self: &Arc<Self>,
        mut tools: tokio::sync::watch::Receiver<u64>,
        stop: tokio_util::sync::CancellationToken,
    ) {
        let sessions = self.clone();
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    _ = stop.cancelled() => return,
                    changed = tools.changed() => if changed.is_err() { return },
                }
                tokio::time::sleep(LIST_CHANGED_COALESCE).await;
                tools.borrow_and_update();
                let peers: Vec<Peer<RoleServer>> = sessions
                    .sessions
                    .lock()
                    .unwrap()
                    .values()
                    .filter_map(|s| s.peer.clone())
                    .collect();
                for peer in peers {
                    let _ = tokio::time::timeout(SEND_WAIT, peer.notify_tool_list_changed()).await;
                }
            }
        });
    }

    /// Starts the one feed subscriber that pushes watched tasks' changes to their sessions.
    pub fn spawn_notifier(self: &Arc<Self>, engine: Engine) {
        let sessions = self.clone();
        let mut feed = engine.store().feed().subscribe();
        tokio::spawn(async move {
            loop {
                let change = match feed.recv().await {
                    Ok(c) => c,
                    // Notifications are optional (2025-11-25 §Task Notifications): a lag skips
                    // some, the next change brings the current state.
                    Err(RecvError::Lagged(_)) => continue,
                    Err(RecvError::Closed) => return,
                };
                if change.event.kind == "deleted" {
                    sessions
                        .watches
                        .lock()
                        .unwrap()
                        .remove(&change.task.task_id);
                    continue;
                }
                let Some(sends) = sessions.on_change(&engine, &change.task) else {
                    continue;
                };
                for (peer, notification) in sends {
                    // A session whose client left has no stream: nothing to deliver to. One
                    // whose client stopped reading may not hold up every other session's.
                    let send = peer.send_notification(notification);
                    let _ = tokio::time::timeout(SEND_WAIT, send).await;
                }
            }
        });
    }

    /// The notifications one change of `task` makes, with the peer each goes to.
    fn on_change(
        &self,
        engine: &Engine,
        task: &TaskRecord,
    ) -> Option<Vec<(Peer<RoleServer>, ServerNotification)>> {
        let mut watches = self.watches.lock().unwrap();
        let watch = watches.get_mut(&task.task_id)?;
        let session = self.get(&watch.session_id)?;
        let peer = session.peer.clone()?;
        let human_only = engine.human_only_inputs(task).unwrap_or_default();
        let (status, message) = agent_view::status(task, &human_only, session.reader());
        let mut sends = Vec::new();
        let shown = (status.as_str().to_string(), message.clone());
        let status_changed = watch.last_status.as_ref() != Some(&shown);
        if status_changed {
            let params = legacy_wire::task(task, status, message.clone());
            sends.push((
                peer.clone(),
                ServerNotification::CustomNotification(CustomNotification::new(
                    "notifications/tasks/status",
                    Some(serde_json::Value::Object(params)),
                )),
            ));
        }
        if let Some(token) = &watch.progress_token {
            // Parsed progress when it grew. Before any, each new status message is a step of
            // 1/1000: `progress` must grow with each notification, and a step that small stays
            // below the first progress a command reports (`1/50`, `2%`).
            let next = match &task.progress {
                Some(p) if p.current > watch.last_progress => Some((p.current, p.total)),
                Some(_) => None,
                None if status_changed => Some((watch.last_progress + 0.001, None)),
                None => None,
            };
            if let Some((progress, total)) = next {
                watch.last_progress = progress;
                let mut param = ProgressNotificationParam::new(token.clone(), progress);
                // A notification related to a task says which (2025-11-25 §Associating
                // Task-Related Messages); `notifications/tasks/status` carries the task itself.
                let mut related = serde_json::Map::new();
                related.insert(
                    "io.modelcontextprotocol/related-task".into(),
                    serde_json::json!({"taskId": task.task_id}),
                );
                param.meta = Some(related.into());
                if let Some(t) = total {
                    param = param.with_total(t);
                }
                if let Some(m) = &message {
                    param = param.with_message(m.clone());
                }
                sends.push((
                    peer,
                    ServerNotification::ProgressNotification(Notification::new(param)),
                ));
            }
        }
        watch.last_status = Some(shown);
        if task.status.is_terminal() {
            watches.remove(&task.task_id);
        }
        Some(sends)
    }
}
