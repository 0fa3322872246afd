//! Deleting settled tasks on a person's or an agent's request (`DELETE /v1/tasks/{id}`, the
//! CLI's `tasks delete` and `tasks clear --finished`): through the store's writer and
//! `WriteCtx::delete`, the same path the TTL sweeper and the caps take, so the `deleted` event
//! (invariant 3) and `task_counts` (invariant 10) stay right.

use std::sync::atomic::Ordering;

use rusqlite::params;

use super::{Engine, EngineError, TaskStatus};
use crate::Principal;

/// Most tasks one store write deletes: a large "clear" is split into several writes.
const DELETE_BATCH: usize = 500;

/// What a request to delete one task found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Deletion {
    /// The task was settled and is gone.
    Deleted,
    /// No task with this id is visible to the caller (unknown, or another principal's).
    NotFound,
    /// The task is still live (`working` or `input_required`): it is kept.
    NotTerminal(TaskStatus),
}

impl Engine {
    /// Deletes each of `task_ids` that `principal` may see and that is terminal, in one store
    /// write; returns what each id found, in order (a repeated id finds `NotFound` the second
    /// time). Errors: [`EngineError::Store`].
    pub async fn delete_tasks(
        &self,
        principal: &Principal,
        task_ids: Vec<String>,
    ) -> Result<Vec<Deletion>, EngineError> {
        let who = principal.clone();
        let found = self
            .parts
            .store
            .write(move |w| {
                let mut found = Vec::with_capacity(task_ids.len());
                for id in &task_ids {
                    let outcome = match w.load(id)? {
                        Some(t) if who.can_see(&t.principal) => {
                            if t.status.is_terminal() {
                                w.delete(id)?;
                                Deletion::Deleted
                            } else {
                                Deletion::NotTerminal(t.status)
                            }
                        }
                        _ => Deletion::NotFound,
                    };
                    found.push(outcome);
                }
                Ok(found)
            })
            .await?;
        let deleted = found.iter().filter(|d| **d == Deletion::Deleted).count();
        self.forget_deleted(deleted);
        Ok(found)
    }

    /// Deletes every terminal task `principal` may see (a person: every principal's; an
    /// agent: its own), in writes of at most 500 tasks; returns how many were deleted.
    /// Live tasks are kept. Errors: [`EngineError::Store`].
    pub async fn delete_finished(&self, principal: &Principal) -> Result<usize, EngineError> {
        let mut total = 0;
        loop {
            let everyone = principal.is_human();
            let name = principal.name.clone();
            let deleted = self
                .parts
                .store
                .write(move |w| {
                    let ids: Vec<String> = {
                        let mut stmt = w.conn.prepare_cached(
                            "SELECT task_id FROM tasks
                             WHERE status IN ('completed','failed','cancelled')
                               AND (?1 OR principal = ?2)
                             ORDER BY seq LIMIT ?3",
                        )?;
                        let rows = stmt
                            .query_map(params![everyone, name, DELETE_BATCH as i64], |r| {
                                r.get(0)
                            })?;
                        rows.collect::<Result<_, _>>()?
                    };
                    for id in &ids {
                        w.delete(id)?;
                    }
                    Ok(ids.len())
                })
                .await?;
            self.forget_deleted(deleted);
            total += deleted;
            if deleted < DELETE_BATCH {
                return Ok(total);
            }
        }
    }

    /// Keeps the sweeper's task count (which wakes it on a cap) in step with `n` deletions.
    fn forget_deleted(&self, n: usize) {
        self.parts
            .sweeper
            .task_count
            .fetch_sub(n as i64, Ordering::Relaxed);
    }
}
