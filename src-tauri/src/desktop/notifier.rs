//! Sends desktop notifications (notify-rust, D-Bus) for the changes the policy in
//! `adapters::notices` selects. Clicking one focuses the window on that task. A task waiting on
//! an approval is notified by `approval_notifications` instead (Approve / Deny buttons). Without
//! a session bus or a notification daemon it logs once and keeps running.

use std::sync::{
    Arc,
    atomic::{AtomicBool, Ordering},
};

use tauri::Manager;

use super::{SettingsStore, approval_notifications::ApprovalNotifications};
use taskdeck_engine::Engine;
use taskdeck_server::adapters::notices::{ChangeNotices, Notice};

/// Follows the engine's change feed and notifies.
pub fn spawn(app: tauri::AppHandle, engine: Engine, settings: Arc<SettingsStore>) {
    let mut feed = engine.store().feed().subscribe();
    let unavailable_logged = Arc::new(AtomicBool::new(false));
    let approvals = ApprovalNotifications::new(app.clone(), engine.clone());
    let mut notices = ChangeNotices::default();
    tauri::async_runtime::spawn(async move {
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
            let Some(notice) = notice else {
                continue;
            };
            let (app, logged) = (app.clone(), unavailable_logged.clone());
            std::thread::spawn(move || show(app, notice, &logged));
        }
    });
}

fn show(app: tauri::AppHandle, notice: Notice, unavailable_logged: &AtomicBool) {
    let result = notify_rust::Notification::new()
        .appname("Taskdeck")
        .summary(&notice.summary)
        .body(&notice.body)
        .action("default", "Open")
        .show();
    match result {
        Ok(handle) => {
            let task_id = notice.task_id.clone();
            handle.wait_for_action(move |action| {
                if action == "default" {
                    super::focus(&app, Some(&task_id));
                }
            });
        }
        Err(e) => {
            if !unavailable_logged.swap(true, Ordering::Relaxed) {
                tracing::warn!(
                    "desktop notifications unavailable ({e}); Taskdeck keeps running without them"
                );
            }
        }
    }
}
