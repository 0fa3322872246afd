//! Taskdeck's one connection to the desktop's notification server (`org.freedesktop.Notifications`
//! on the session bus, the Desktop Notifications Specification 1.2, through a zbus proxy):
//! shows notifications, closes them, and hands each one's outcome (an action invoked, or the
//! notification closed) to whoever waits for it.
//!
//! One connection and one signal listener serve every notification, however many are open (a
//! connection and a blocked thread per notification made 271 threads for 120 open approvals).
//! The notifications that stay until closed (approval questions) are known here, so that Quit
//! closes them ([`NotificationBus::close_all`]): one left on screen after Taskdeck ended would
//! offer an Approve that nothing answers. News ("… completed") stays true after Quit and stays.

use std::{
    collections::{HashMap, HashSet, VecDeque},
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, Ordering},
    },
    time::Duration,
};

use futures::StreamExt;
use tokio::sync::oneshot;
use zbus::zvariant::Value;

/// The notification server's D-Bus interface (Desktop Notifications Specification 1.2): the
/// methods and signals Taskdeck uses.
#[zbus::proxy(
    interface = "org.freedesktop.Notifications",
    default_service = "org.freedesktop.Notifications",
    default_path = "/org/freedesktop/Notifications"
)]
trait Notifications {
    /// Shows a notification (`replaces_id` 0: a new one); returns its id. `actions` alternates
    /// action keys and labels; `expire_timeout` in ms, -1 for the server's default, 0 never.
    #[allow(clippy::too_many_arguments)]
    fn notify(
        &self,
        app_name: &str,
        replaces_id: u32,
        app_icon: &str,
        summary: &str,
        body: &str,
        actions: &[&str],
        hints: HashMap<&str, Value<'_>>,
        expire_timeout: i32,
    ) -> zbus::Result<u32>;

    /// Closes notification `id` (the server then emits `NotificationClosed` with reason 3).
    fn close_notification(&self, id: u32) -> zbus::Result<()>;

    /// The server's optional features, e.g. `actions`, `body-markup`.
    fn get_capabilities(&self) -> zbus::Result<Vec<String>>;

    /// The user invoked action `action_key` of notification `id`.
    #[zbus(signal)]
    fn action_invoked(&self, id: u32, action_key: String) -> zbus::Result<()>;

    /// Notification `id` closed: `reason` 1 expired, 2 dismissed, 3 closed by a call, 4 other.
    #[zbus(signal)]
    fn notification_closed(&self, id: u32, reason: u32) -> zbus::Result<()>;
}

/// How many outcomes of notifications nobody waits for (yet) are kept: signals that arrived
/// before the reply to `Notify`, and those of other applications' notifications where the
/// server sends them to every client.
const EARLY_OUTCOMES: usize = 64;

/// The outcomes waited for, and those that came before their waiter.
#[derive(Default)]
struct Outcomes {
    waiters: HashMap<u32, oneshot::Sender<Outcome>>,
    early: VecDeque<(u32, Outcome)>,
}

/// What became of a notification shown with [`NotificationBus::show`].
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// The user invoked this action key (`default` for a click on the notification itself).
    Action(String),
    /// It closed without an action (expired, dismissed, closed by Taskdeck), or Taskdeck quit.
    Closed,
}

/// A notification to show (plain text summary; body in the server's markup, already escaped).
pub struct Shown<'a> {
    /// Plain text, no markup.
    pub summary: &'a str,
    /// Escaped for the body markup (`adapters::notices::escape_body`).
    pub body: &'a str,
    /// `(key, label)` pairs; `default` is a click on the notification.
    pub actions: &'a [(&'a str, &'a str)],
    /// Stays until closed (approval questions) instead of the server's default timeout, and is
    /// closed at Quit.
    pub persistent: bool,
}

/// The session's notification server, through one connection. Errors are the bus's
/// (`zbus::Error`): no session bus, no notification server, a refused call.
pub struct NotificationBus {
    proxy: NotificationsProxy<'static>,
    /// Who waits for which notification's outcome. Locked only briefly, never across a D-Bus
    /// call: the listener must keep reading signals, or the connection stops reading the
    /// replies to Taskdeck's own calls too.
    outcomes: Mutex<Outcomes>,
    /// Persistent notifications shown and not closed yet: what [`Self::close_all`] closes.
    open: Mutex<HashSet<u32>>,
    /// Set by [`Self::close_all`]: nothing more is shown.
    closed: AtomicBool,
}

impl NotificationBus {
    /// Connects to the session bus and starts listening for the notification server's
    /// signals. Errors: no session bus (`DBUS_SESSION_BUS_ADDRESS`), or it refused us. Without
    /// a notification server the connection still succeeds; [`Self::show`] then fails.
    pub async fn connect() -> zbus::Result<Arc<NotificationBus>> {
        let connection = zbus::Connection::session().await?;
        let proxy = NotificationsProxy::new(&connection).await?;
        let actions = proxy.receive_action_invoked().await?;
        let closes = proxy.receive_notification_closed().await?;
        let bus = Arc::new(NotificationBus {
            proxy,
            outcomes: Default::default(),
            open: Default::default(),
            closed: AtomicBool::new(false),
        });
        let listener = Arc::downgrade(&bus);
        tauri::async_runtime::spawn(async move {
            let actions = actions.filter_map(|s| {
                let a = s.args().ok();
                std::future::ready(a.map(|a| (a.id, Outcome::Action(a.action_key))))
            });
            let closes = closes.filter_map(|s| {
                let a = s.args().ok();
                std::future::ready(a.map(|a| (a.id, Outcome::Closed)))
            });
            let mut signals = futures::stream::select(actions, closes);
            while let Some((id, outcome)) = signals.next().await {
                let Some(bus) = listener.upgrade() else {
                    return;
                };
                bus.settle(id, outcome);
            }
        });
        Ok(bus)
    }

    /// Hands `outcome` to notification `id`'s waiter (the first outcome only: a server emits
    /// `NotificationClosed` after an action too), or keeps it for a waiter to come (the signal
    /// can arrive before the reply to `Notify` that names the id).
    fn settle(&self, id: u32, outcome: Outcome) {
        if outcome == Outcome::Closed {
            self.open
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .remove(&id);
        }
        let mut outcomes = self.outcomes.lock().unwrap_or_else(|e| e.into_inner());
        match outcomes.waiters.remove(&id) {
            Some(waiter) => {
                let _ = waiter.send(outcome);
            }
            None => {
                if outcomes.early.len() == EARLY_OUTCOMES {
                    outcomes.early.pop_front();
                }
                outcomes.early.push_back((id, outcome));
            }
        }
    }

    /// True when the server shows actions (buttons or a menu): its `actions` capability.
    pub async fn actions_supported(&self) -> bool {
        self.proxy
            .get_capabilities()
            .await
            .is_ok_and(|caps| caps.iter().any(|c| c == "actions"))
    }

    /// Shows `n` as app "Taskdeck". Returns its id and its [`Outcome`] to come (a receiver
    /// that yields it once; dropped unanswered when Taskdeck quits). Errors: the server refused
    /// or there is none, or Taskdeck is quitting (`zbus::Error::Failure`).
    pub async fn show(&self, n: &Shown<'_>) -> zbus::Result<(u32, oneshot::Receiver<Outcome>)> {
        if self.closed.load(Ordering::Acquire) {
            return Err(zbus::Error::Failure("Taskdeck is quitting".into()));
        }
        let actions: Vec<&str> = n.actions.iter().flat_map(|(k, l)| [*k, *l]).collect();
        let (tx, rx) = oneshot::channel();
        let id = self
            .proxy
            .notify(
                "Taskdeck",
                0,
                "",
                n.summary,
                n.body,
                &actions,
                HashMap::new(),
                if n.persistent { 0 } else { -1 },
            )
            .await?;
        if n.persistent {
            self.open
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(id);
        }
        let mut outcomes = self.outcomes.lock().unwrap_or_else(|e| e.into_inner());
        match outcomes.early.iter().position(|(early, _)| *early == id) {
            Some(at) => {
                let (_, outcome) = outcomes.early.remove(at).expect("a position in the queue");
                if outcome == Outcome::Closed {
                    self.open
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .remove(&id);
                }
                let _ = tx.send(outcome);
            }
            None => {
                outcomes.waiters.insert(id, tx);
            }
        }
        Ok((id, rx))
    }

    /// Closes notification `id` (best effort: it may be gone already).
    pub async fn close(&self, id: u32) {
        self.open
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&id);
        if let Err(e) = self.proxy.close_notification(id).await {
            tracing::debug!("cannot close notification {id}: {e}");
        }
    }

    /// At Quit: closes every persistent notification still open, waiting at most `limit` for
    /// the server, and shows nothing more. Waiters get nothing (their receivers end).
    pub async fn close_all(&self, limit: Duration) {
        self.closed.store(true, Ordering::Release);
        let ids: Vec<u32> = self
            .open
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .drain()
            .collect();
        let closing = futures::future::join_all(ids.iter().map(|id| self.close(*id)));
        if tokio::time::timeout(limit, closing).await.is_err() {
            tracing::warn!(
                "the notification server did not close Taskdeck's notifications in time"
            );
        }
        self.outcomes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .waiters
            .clear();
    }
}

/// Shows one notification without actions and waits for nothing, on a connection of its own
/// (blocking): for a process that is not Taskdeck's running one (a second launch saying where
/// Taskdeck runs). Errors: as [`NotificationBus::show`].
pub fn notify_once(summary: &str, body: &str) -> zbus::Result<u32> {
    let connection = zbus::blocking::Connection::session()?;
    NotificationsProxyBlocking::new(&connection)?.notify(
        "Taskdeck",
        0,
        "",
        summary,
        body,
        &[],
        HashMap::new(),
        -1,
    )
}
