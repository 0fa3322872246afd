//! Approval notifications on the desktop (D-Bus through notify-rust): one notification per
//! pending approval question, with Approve / Deny buttons when the notification server has the
//! `actions` capability, answered in-process without opening the window; Open and Edit… show
//! the window on the task. A notification closes when its question is answered, here or
//! elsewhere (window, CLI, `/v1`), or the task ends. What each notification says and offers is
//! decided by the pure policy in `adapters::notices` (`approval_notice`).

use std::{
    collections::{HashMap, HashSet},
    sync::{Arc, Mutex},
};

use notify_rust::{ActionResponse, Notification, NotificationHandle, Timeout};

use taskdeck_engine::{Engine, Principal, TaskRecord, clock::now_ms};
use taskdeck_server::adapters::notices::{
    ApprovalNotice, Notice, NoticeAction, answer_failed_notice, approval_notice, local_offset,
    pending_approvals,
};
use taskdeck_server::approvals::decide::{DecideAction, DecideItem, DecideRequest, decide};

/// A question: `(task id, input request key)`.
type QuestionId = (String, String);

/// The approval notifications of one desktop session.
pub struct ApprovalNotifications {
    app: tauri::AppHandle,
    engine: Engine,
    book: Mutex<Book>,
}

#[derive(Default)]
struct Book {
    /// Questions notified (shown or tried) and still pending: each is notified once.
    seen: HashSet<QuestionId>,
    /// Notifications on screen, closed when their question stops pending.
    shown: HashMap<QuestionId, Arc<NotificationHandle>>,
}

impl ApprovalNotifications {
    pub fn new(app: tauri::AppHandle, engine: Engine) -> Arc<ApprovalNotifications> {
        Arc::new(ApprovalNotifications {
            app,
            engine,
            book: Mutex::new(Book::default()),
        })
    }

    /// Closes the notifications of `task`'s questions that are no longer pending (answered,
    /// expired, or the task ended).
    pub fn follow(&self, task: &TaskRecord) {
        let ended = task.status.is_terminal();
        self.close_unless(&task.task_id, |key| {
            !ended && task.input_requests.contains_key(key)
        });
    }

    /// Closes every notification of a deleted task.
    pub fn forget(&self, task_id: &str) {
        self.close_unless(task_id, |_| false);
    }

    /// After the change feed lagged: follows every task with a notified question again, from
    /// the store.
    pub fn resync(&self) {
        let ids: HashSet<String> = {
            let book = self.book.lock().unwrap_or_else(|e| e.into_inner());
            book.seen.iter().map(|(id, _)| id.clone()).collect()
        };
        for id in ids {
            match self.engine.store().get(&id) {
                Ok(Some(task)) => self.follow(&task),
                Ok(None) => self.forget(&id),
                Err(e) => tracing::warn!("cannot reread task {id} for its notifications: {e}"),
            }
        }
    }

    /// Forgets the questions of `task_id` for which `pending(key)` is false, closing their
    /// notifications.
    fn close_unless(&self, task_id: &str, pending: impl Fn(&str) -> bool) {
        let mut book = self.book.lock().unwrap_or_else(|e| e.into_inner());
        let stale: Vec<QuestionId> = book
            .seen
            .iter()
            .filter(|(id, key)| id == task_id && !pending(key))
            .cloned()
            .collect();
        for q in stale {
            book.seen.remove(&q);
            if let Some(handle) = book.shown.remove(&q) {
                tauri::async_runtime::spawn(async move { handle.close_async().await });
            }
        }
    }

    /// True when `task` waits on an approval question (then this module, not the generic
    /// input notice, notifies it).
    pub fn handles(task: &TaskRecord) -> bool {
        !pending_approvals(task).is_empty()
    }

    /// Notifies each pending approval question of `task` not notified yet, each on its own
    /// thread (showing and waiting for the click are blocking D-Bus calls).
    pub fn notify(self: &Arc<Self>, task: &Arc<TaskRecord>) {
        for (key, _) in pending_approvals(task) {
            let q = (task.task_id.clone(), key.to_string());
            if !self
                .book
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .seen
                .insert(q.clone())
            {
                continue;
            }
            let (this, task) = (self.clone(), task.clone());
            std::thread::spawn(move || this.show(&task, q));
        }
    }

    fn show(&self, task: &TaskRecord, q: QuestionId) {
        let Some(request) = task.input_requests.get(&q.1) else {
            return;
        };
        let actions_supported = notify_rust::get_capabilities()
            .map(|caps| caps.iter().any(|c| c == "actions"))
            .unwrap_or(false);
        let local = local_offset();
        let notice = approval_notice(
            task,
            &q.1,
            request,
            now_ms(),
            local,
            actions_supported,
            &Principal::admin().name,
        );
        let mut n = Notification::new();
        n.appname("Taskdeck")
            .summary(&notice.summary)
            .body(&notice.body)
            // It stays until answered: its question closes it (see `follow`).
            .timeout(Timeout::Never);
        for a in &notice.actions {
            n.action(a.id(), a.label());
        }
        let handle = match n.show() {
            Ok(h) => Arc::new(h),
            Err(e) => {
                tracing::warn!("cannot show the approval notification: {e}");
                return;
            }
        };
        {
            let mut book = self.book.lock().unwrap_or_else(|e| e.into_inner());
            if book.seen.contains(&q) {
                book.shown.insert(q.clone(), handle.clone());
            } else {
                // Answered while it was being shown.
                drop(book);
                tauri::async_runtime::block_on(handle.close_async());
                return;
            }
        }
        let mut chosen = None;
        tauri::async_runtime::block_on(handle.wait_for_action_async(|r| {
            if let ActionResponse::Custom(id) = r {
                chosen = NoticeAction::from_id(id);
            }
        }));
        if !matches!(chosen, Some(NoticeAction::Open | NoticeAction::Edit)) {
            // Closed, or answered below. After Open or Edit… a server may keep showing it
            // (dunst does after a menu entry): it stays listed, to close once answered.
            self.book
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .shown
                .remove(&q);
        }
        match chosen {
            Some(NoticeAction::Open | NoticeAction::Edit) => {
                super::focus(&self.app, Some(&notice.task_id))
            }
            Some(action @ (NoticeAction::Approve | NoticeAction::Deny)) => {
                let answered = tauri::async_runtime::block_on(answer(
                    &self.engine,
                    &notice,
                    action == NoticeAction::Approve,
                ));
                tauri::async_runtime::block_on(handle.close_async());
                if let Err(why) = answered {
                    show_plain(answer_failed_notice(&notice, action, &why));
                }
            }
            None => {}
        }
    }
}

/// Answers the notice's question as the human at this desktop through the inbox's own
/// decision ([`decide`]): approve or deny (no reason). Errors are for people: "it was already
/// answered", "the task is gone".
async fn answer(engine: &Engine, notice: &ApprovalNotice, approve: bool) -> Result<(), String> {
    let request = DecideRequest {
        items: vec![DecideItem {
            task_id: notice.task_id.clone(),
            key: Some(notice.key.clone()),
        }],
        decision: match approve {
            true => DecideAction::Approve,
            false => DecideAction::Deny,
        },
        reason: None,
        arguments: None,
        always_allow: None,
    };
    let outcomes = decide(engine, &Principal::admin(), request)
        .await
        .map_err(|e| format!("{e:?}"))?;
    match outcomes.into_iter().next().map(|o| o.result) {
        Some(Ok(())) => Ok(()),
        Some(Err(why)) if why == "no such task" => Err("The task is gone.".into()),
        Some(Err(_)) => Err("It was already answered.".into()),
        None => Err("Nothing was answered.".into()),
    }
}

/// Shows a notification without actions (best effort).
fn show_plain(notice: Notice) {
    if let Err(e) = Notification::new()
        .appname("Taskdeck")
        .summary(&notice.summary)
        .body(&notice.body)
        .show()
    {
        tracing::warn!("cannot show a notification: {e}");
    }
}
