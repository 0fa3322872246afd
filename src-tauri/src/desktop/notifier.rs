//! Sends desktop notifications for the changes the policy in `adapters::notices` selects.
//! Clicking one focuses the window on that task. A task waiting on an approval is notified by
//! `approval_notifications` instead (Approve / Deny buttons).
//!
//! At start it also notifies what already waits for an answer (questions asked before a
//! restart, which no notification of this process announced): each of up to
//! [`WAITING_AT_START_EACH`] tasks as if it had just asked, or one notification saying how many
//! wait. Without a session bus or a notification server it logs once and keeps running.

use std::sync::{
    Arc,
    atomic::{AtomicBool, Ordering},
};

use tauri::Manager;

use super::{
    SettingsStore,
    approval_notifications::ApprovalNotifications,
    notification_bus::{NotificationBus, Outcome, Shown},
};
use taskdeck_engine::{Engine, TaskStatus, store::ListFilter};
use taskdeck_server::adapters::notices::{
    ChangeNotices, Notice, WAITING_AT_START_EACH, needs_input_notice, waiting_at_start_notice,
};

/// Follows the engine's change feed and notifies through `bus`.
pub fn spawn(
    app: tauri::AppHandle,
    engine: Engine,
    settings: Arc<SettingsStore>,
    bus: Arc<NotificationBus>,
) {
    let mut feed = engine.store().feed().subscribe();
    let plain = Arc::new(PlainNotices {
        app: app.clone(),
        bus: bus.clone(),
        unavailable_logged: AtomicBool::new(false),
    });
    let approvals = ApprovalNotifications::new(app.clone(), engine.clone(), bus);
    let mut notices = ChangeNotices::default();
    tauri::async_runtime::spawn(async move {
        notify_waiting(&engine, &settings, &approvals, &plain);
        loop {
            let change = match feed.recv().await {
                Ok(c) => c,
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {
                    approvals.resync();
                    continue;
                }
                Err(_) => return,
            };
            // Answered questions close their notifications even while notifications are paused.
            if change.event.kind == "deleted" {
                approvals.forget(&change.task.task_id);
            } else {
                approvals.follow(&change.task);
            }
            let focused = app
                .get_webview_window("main")
                .and_then(|w| w.is_focused().ok())
                .unwrap_or(false);
            // Every change is seen, paused or not: a task's run time counts from its answer.
            let notice = notices.notice(&change, &settings.get(), focused);
            if settings.paused() {
                continue;
            }
            if ApprovalNotifications::handles(&change.task) {
                let s = settings.get();
                if s.input_required && !s.do_not_disturb {
                    approvals.notify(&change.task);
                }
                continue;
            }
            if let Some(notice) = notice {
                plain.spawn_show(notice);
            }
        }
    });
}

/// Notifies the tasks found waiting for input at start (see the module's doc), when
/// notifications of input are on.
fn notify_waiting(
    engine: &Engine,
    settings: &SettingsStore,
    approvals: &Arc<ApprovalNotifications>,
    plain: &Arc<PlainNotices>,
) {
    let s = settings.get();
    if settings.paused() || s.do_not_disturb || !s.input_required {
        return;
    }
    let filter = ListFilter {
        statuses: vec![TaskStatus::InputRequired],
        limit: 1000,
        ..Default::default()
    };
    let page = match engine.store().page(&filter) {
        Ok(p) => p,
        Err(e) => {
            tracing::warn!("cannot list the tasks waiting for input to notify them: {e}");
            return;
        }
    };
    let total = page
        .counts
        .get(TaskStatus::InputRequired.as_str())
        .copied()
        .unwrap_or(0)
        .max(0) as u64;
    if page.tasks.len() <= WAITING_AT_START_EACH && total <= WAITING_AT_START_EACH as u64 {
        for task in page.tasks {
            match ApprovalNotifications::handles(&task) {
                true => approvals.notify(&Arc::new(task)),
                false => plain.spawn_show(needs_input_notice(&task)),
            }
        }
        return;
    }
    // Summed up: their approval questions count as notified, not to pop up one by one later.
    for task in &page.tasks {
        approvals.summarized(task);
    }
    if let Some(notice) = waiting_at_start_notice(&page.tasks, total) {
        plain.spawn_show(notice);
    }
}

/// Notifications with one action, Open (a click), which shows the window on their task.
struct PlainNotices {
    app: tauri::AppHandle,
    bus: Arc<NotificationBus>,
    unavailable_logged: AtomicBool,
}

impl PlainNotices {
    /// Shows `notice` and waits (on a task, not a thread) for a click on it.
    fn spawn_show(self: &Arc<Self>, notice: Notice) {
        let this = self.clone();
        tauri::async_runtime::spawn(async move {
            let shown = Shown {
                summary: &notice.summary,
                body: &notice.body,
                actions: &[("default", "Open")],
                persistent: false,
            };
            match this.bus.show(&shown).await {
                Ok((_, outcome)) => {
                    if let Ok(Outcome::Action(a)) = outcome.await
                        && a == "default"
                    {
                        let task = Some(notice.task_id.as_str()).filter(|id| !id.is_empty());
                        super::focus(&this.app, task);
                    }
                }
                Err(e) => {
                    if !this.unavailable_logged.swap(true, Ordering::Relaxed) {
                        tracing::warn!(
                            "desktop notifications unavailable ({e}); Taskdeck keeps running without them"
                        );
                    }
                }
            }
        });
    }
}
