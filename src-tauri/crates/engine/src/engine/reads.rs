//! What a principal may read of its tasks: one task, its `tasks/get` answer, a page of the
//! list, its timeline and input rounds. A task of another principal reads exactly as one that
//! does not exist ([`EngineError::NotFound`]).

use std::sync::Arc;

use super::{
    super::{
        answer_cache::CachedAnswer,
        model::InputRound,
        store::{self, ListFilter},
    },
    Engine, EngineError, TaskRecord,
};
use crate::{Principal, TimelineEvent};

impl Engine {
    /// The task as `principal` may see it. Errors: [`EngineError::NotFound`] when it does not
    /// exist or belongs to another principal (indistinguishable on purpose).
    pub fn get(&self, principal: &Principal, task_id: &str) -> Result<TaskRecord, EngineError> {
        match self.parts.store.get(task_id)? {
            Some(t) if principal.can_see(&t.principal) => Ok(t),
            _ => Err(EngineError::NotFound),
        }
    }

    /// The task as `principal` sees it once `done` holds for it, or at `deadline` as it is then
    /// (a wait of at most `deadline - now`). Woken by the store's change feed, never polling: for
    /// the short waits of an answer that comes just before its question, or of a decision
    /// between two questions of one approval. Errors: [`EngineError::NotFound`] as for
    /// [`Engine::get`], also when the task is deleted while waited on; [`EngineError::Store`].
    pub async fn get_when(
        &self,
        principal: &Principal,
        task_id: &str,
        deadline: tokio::time::Instant,
        mut done: impl FnMut(&TaskRecord) -> bool,
    ) -> Result<TaskRecord, EngineError> {
        // Subscribed before the first read: a change between the two is not missed.
        let mut feed = self.parts.store.feed().subscribe();
        loop {
            let task = self.get(principal, task_id)?;
            if done(&task) {
                return Ok(task);
            }
            // Until a change of this task (or a lag, after which the store is read again).
            loop {
                match tokio::time::timeout_at(deadline, feed.recv()).await {
                    Err(_) => return Ok(task),
                    Ok(Ok(change)) if change.task.task_id != task_id => continue,
                    Ok(Ok(_)) | Ok(Err(tokio::sync::broadcast::error::RecvError::Lagged(_))) => {
                        break;
                    }
                    Ok(Err(tokio::sync::broadcast::error::RecvError::Closed)) => return Ok(task),
                }
            }
        }
    }

    /// The keys of `task`'s outstanding input requests that only a person (the admin or a
    /// human principal) may answer, e.g. `run_command`'s approval. Errors: [`EngineError::Store`].
    pub fn human_only_inputs(&self, task: &TaskRecord) -> Result<Vec<String>, EngineError> {
        self.parts.store.read(|c| {
            let mut keys = Vec::new();
            for key in task.input_requests.keys() {
                if store::input_human_only(c, &task.task_id, key)? {
                    keys.push(key.clone());
                }
            }
            Ok(keys)
        })
    }

    /// [`Engine::get`] for the hot `tasks/get` path: the `GetTaskResult` object as JSON text
    /// (SEP-2663 §Task Polling), built from the stored columns without decoding the result and
    /// kept in the store's answer cache until the task next changes. Same errors as `get`.
    pub fn get_result_json(
        &self,
        principal: &Principal,
        task_id: &str,
    ) -> Result<Arc<CachedAnswer>, EngineError> {
        match self.parts.store.get_answer(task_id)? {
            Some(answer) if principal.can_see(&answer.owner) => Ok(answer),
            _ => Err(EngineError::NotFound),
        }
    }

    /// One page of the tasks visible to `principal`, newest first (see [`ListFilter`]), with
    /// the per-status counts and the newest event id, read in one snapshot ([`Store::page`](store::Store::page)).
    /// Errors: [`EngineError::Store`].
    pub fn page(
        &self,
        principal: &Principal,
        mut filter: ListFilter,
    ) -> Result<store::Page, EngineError> {
        if principal.is_human() {
            return self.parts.store.page(&filter);
        }
        // An agent sees its own tasks only: another principal's are "not found", so asking
        // for them lists none (with the counts and event id of its own, unfiltered further).
        let asked_other = filter
            .principal
            .as_ref()
            .is_some_and(|p| *p != principal.name);
        filter.principal = Some(principal.name.clone());
        let mut page = self.parts.store.page(&filter)?;
        if asked_other {
            page.tasks.clear();
            page.counts.clear();
            page.next_seq = None;
        }
        Ok(page)
    }

    /// A task visible to `principal`: the newest `limit` events of its timeline with an id
    /// below `before` (oldest first; see [`Store::timeline`](store::Store::timeline)), whether older events exist, and
    /// every input round. Errors: [`EngineError::NotFound`].
    pub fn history(
        &self,
        principal: &Principal,
        task_id: &str,
        before: Option<i64>,
        limit: usize,
    ) -> Result<(Vec<TimelineEvent>, bool, Vec<InputRound>), EngineError> {
        self.get(principal, task_id)?;
        let (events, more) = self.parts.store.timeline(task_id, before, limit)?;
        Ok((events, more, self.parts.store.input_rounds(task_id)?))
    }

    /// The input rounds of a task visible to `principal` (who asked what, who answered, when),
    /// without its timeline, which grows with every report. Errors: [`EngineError::NotFound`].
    pub fn input_rounds(
        &self,
        principal: &Principal,
        task_id: &str,
    ) -> Result<Vec<InputRound>, EngineError> {
        self.get(principal, task_id)?;
        self.parts.store.input_rounds(task_id)
    }
}
