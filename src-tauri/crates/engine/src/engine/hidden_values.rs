//! Values a run holds for the people who decide its questions, in this process's memory only:
//! a call whose credentials are masked everywhere Taskdeck shows or stores it ("Secrets in
//! arguments", docs/security.md) is approved by a person who may need to read it whole, since
//! a masked value could be the command itself. The run holds the call as given while its
//! question is open ([`TaskContext::hold_hidden`]); a person (the admin or a human principal,
//! never an agent) asks for it ([`Engine::reveal_hidden`]), and the task's timeline records
//! who did (`hiddenValuesShown`), never the values. A person approves such a question only
//! once they read it whole ([`Engine::answer`] refuses their `accept` before): the approver
//! reads what may run, whichever way they answer (window, CLI, `/v1`). Nothing of it is
//! written to the store: at a restart it is gone with the run.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use super::{Engine, EngineError, load};
use crate::{Principal, TaskContext, clock::now_ms, store};

/// What a run holds for the people who decide its questions: the values, and who read them
/// whole since they were held.
pub(super) struct Held {
    values: Value,
    read_by: BTreeSet<String>,
}

/// Keeps a run's hidden values while it lives ([`TaskContext::hold_hidden`]); dropping it
/// forgets them.
#[must_use = "the values are forgotten when this is dropped"]
pub struct HiddenHeld {
    ctx: TaskContext,
}

impl Drop for HiddenHeld {
    fn drop(&mut self) {
        self.ctx
            .engine
            .parts
            .running
            .set_hidden(&self.ctx.task_id, None);
    }
}

impl TaskContext {
    /// Holds `values` (a call as the agent gave it, whose shown form masks credentials) for
    /// the people who decide this task's questions, until the returned guard is dropped or the
    /// run ends; a later hold replaces it, and whoever read the earlier values must read these
    /// before approving. Only memory: never stored, lost at a restart.
    pub fn hold_hidden(&self, values: Value) -> HiddenHeld {
        let held = Held {
            values,
            read_by: BTreeSet::new(),
        };
        self.engine
            .parts
            .running
            .set_hidden(&self.task_id, Some(held));
        HiddenHeld { ctx: self.clone() }
    }
}

impl Engine {
    /// The values the run of `task_id` holds for the people who decide its questions
    /// ([`TaskContext::hold_hidden`]), for `principal`, a person, while one of the task's
    /// human-only questions is open; the task's timeline gets a `hiddenValuesShown` event
    /// `{"by": NAME}` (the values are not in it), and `principal` may approve the question from
    /// then on ([`Engine::answer`]).
    ///
    /// Errors: [`EngineError::NotFound`] when the task is not visible to `principal` or
    /// `principal` is an agent (whose answer to a human-only question counts for nothing
    /// either); [`EngineError::Invalid`] when no human-only question of the task is open or
    /// its run holds nothing (nothing was hidden, or Taskdeck restarted since it was asked);
    /// [`EngineError::Store`], [`EngineError::DiskFull`] when the event cannot be written (the
    /// values are then not given).
    pub async fn reveal_hidden(
        &self,
        principal: &Principal,
        task_id: &str,
    ) -> Result<Value, EngineError> {
        if !principal.is_human() {
            return Err(EngineError::NotFound);
        }
        let (who, id) = (principal.clone(), task_id.to_string());
        let running = self.clone();
        let values = self
            .parts
            .store
            .write(move |w| {
                let t = load(w, &id)?;
                if !who.can_see(&t.principal) {
                    return Err(EngineError::NotFound);
                }
                let mut asks_a_person = false;
                for key in t.input_requests.keys() {
                    asks_a_person |= store::input_human_only(w.conn, &id, key)?;
                }
                if t.status.is_terminal() || !asks_a_person {
                    return Err(EngineError::Invalid(
                        "no question of this task that only a person may answer is open".into(),
                    ));
                }
                let Some(values) = running
                    .parts
                    .running
                    .with_hidden(&id, |held| held.values.clone())
                else {
                    return Err(EngineError::Invalid(
                        "this question hides nothing that Taskdeck still holds (nothing was hidden, or Taskdeck restarted since it was asked)".into(),
                    ));
                };
                w.event(&t, now_ms(), "hiddenValuesShown", json!({"by": who.name}))?;
                Ok(values)
            })
            .await?;
        // Counted once the event is stored, and only for the values given: a hold replaced
        // meanwhile (an edit asked again) is read by nobody yet.
        self.parts.running.with_hidden(task_id, |held| {
            if held.values == values {
                held.read_by.insert(principal.name.clone());
            }
        });
        Ok(values)
    }

    /// True when the run of `task_id` holds hidden values that `name` has not read whole
    /// ([`Engine::reveal_hidden`]) since they were held: their approval waits for that.
    pub(super) fn hidden_unread_by(&self, task_id: &str, name: &str) -> bool {
        self.parts
            .running
            .with_hidden(task_id, |held| !held.read_by.contains(name))
            .unwrap_or(false)
    }
}
