//! Approval notifications on the desktop ([`NotificationBus`]): one notification per
//! pending approval question, with Approve / Deny buttons when the notification server has the
//! `actions` capability, answered in-process without opening the window; Open and Edit… show
//! the window on the task. A notification closes when its question is answered, here or
//! elsewhere (window, CLI, `/v1`), or the task ends. What each notification says and offers is
//! decided by the pure policy in `adapters::notices` (`approval_notice`).

use std::{
    collections::{HashMap, HashSet},
    sync::{Arc, Mutex},
};

use super::notification_bus::{NotificationBus, Outcome, Shown};
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
    bus: Arc<NotificationBus>,
    book: Mutex<Book>,
}

#[derive(Default)]
struct Book {
    /// Questions notified (shown, tried, or summed up at start) and still pending: each is
    /// notified once.
    seen: HashSet<QuestionId>,
    /// Notifications on screen (their ids), closed when their question stops pending.
    shown: HashMap<QuestionId, u32>,
}

impl ApprovalNotifications {
    /// Notifications of approval questions, shown through `bus` and answered as the admin.
    pub fn new(
        app: tauri::AppHandle,
        engine: Engine,
        bus: Arc<NotificationBus>,
    ) -> Arc<ApprovalNotifications> {
        Arc::new(ApprovalNotifications {
            app,
            engine,
            bus,
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
            if let Some(id) = book.shown.remove(&q) {
                let bus = self.bus.clone();
                tauri::async_runtime::spawn(async move { bus.close(id).await });
            }
        }
    }

    /// True when `task` waits on an approval question (then this module, not the generic
    /// input notice, notifies it).
    pub fn handles(task: &TaskRecord) -> bool {
        !pending_approvals(task).is_empty()
    }

    /// Counts `task`'s pending approval questions as notified without showing them (one
    /// notification at start summed them up).
    pub fn summarized(&self, task: &TaskRecord) {
        let mut book = self.book.lock().unwrap_or_else(|e| e.into_inner());
        for (key, _) in pending_approvals(task) {
            book.seen.insert((task.task_id.clone(), key.to_string()));
        }
    }

    /// Notifies each pending approval question of `task` not notified yet, each on its own
    /// async task (which then waits for the person's choice).
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
            tauri::async_runtime::spawn(async move { this.show(&task, q).await });
        }
    }

    async fn show(&self, task: &TaskRecord, q: QuestionId) {
        let Some(request) = task.input_requests.get(&q.1) else {
            return;
        };
        let actions_supported = self.bus.actions_supported().await;
        let notice = approval_notice(
            task,
            &q.1,
            request,
            now_ms(),
            local_offset(),
            actions_supported,
            &Principal::admin().name,
        );
        let actions: Vec<(&str, &str)> =
            notice.actions.iter().map(|a| (a.id(), a.label())).collect();
        let shown = Shown {
            summary: &notice.summary,
            body: &notice.body,
            actions: &actions,
            // It stays until answered: its question closes it (see `follow`).
            persistent: true,
        };
        let (id, outcome) = match self.bus.show(&shown).await {
            Ok(shown) => shown,
            Err(e) => {
                tracing::warn!("cannot show the approval notification: {e}");
                return;
            }
        };
        let still_pending = {
            let mut book = self.book.lock().unwrap_or_else(|e| e.into_inner());
            let pending = book.seen.contains(&q);
            if pending {
                book.shown.insert(q.clone(), id);
            }
            pending
        };
        if !still_pending {
            // Answered while it was being shown.
            self.bus.close(id).await;
            return;
        }
        // Nothing (Taskdeck quits) counts as closed.
        let chosen = match outcome.await {
            Ok(Outcome::Action(key)) => NoticeAction::from_id(&key),
            Ok(Outcome::Closed) | Err(_) => None,
        };
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
                let answered = answer(&self.engine, &notice, action == NoticeAction::Approve).await;
                self.bus.close(id).await;
                if let Err(why) = answered {
                    self.show_plain(answer_failed_notice(&notice, action, &why))
                        .await;
                }
            }
            None => {}
        }
    }

    /// Shows a notification without actions (best effort).
    async fn show_plain(&self, notice: Notice) {
        let shown = Shown {
            summary: &notice.summary,
            body: &notice.body,
            actions: &[],
            persistent: false,
        };
        if let Err(e) = self.bus.show(&shown).await {
            tracing::warn!("cannot show a notification: {e}");
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
