//! The end of an input request nobody answered in time: a tool that gives the human a deadline
//! (an approval's expiry) closes the request itself, through the same write an answer takes,
//! so the request is recorded as answered by `"expiry"` with `{"action": "cancel", "expired":
//! true}`, the task leaves `input_required` when nothing else is outstanding, and a human's
//! answer that lands first wins (the expiry is then a no-op).

use serde_json::{Value, json};

use super::{
    super::{clock::now_ms, context::TaskContext, store},
    EngineError, load,
};

/// Who the input rounds name as the answerer of an expired request.
pub const EXPIRED_BY: &str = "expiry";

/// The response recorded for an expired request.
pub fn expired_response() -> Value {
    json!({"action": "cancel", "expired": true})
}

/// True when `response` (an input round's) is the one an expiry records.
pub fn is_expired_response(response: &Value) -> bool {
    response.get("expired").and_then(Value::as_bool) == Some(true)
}

impl TaskContext {
    /// Closes input request `key` of this task as expired when it is still outstanding, and
    /// hands the run waiting on it [`expired_response`]. Returns false when there was nothing
    /// to close (already answered, never issued, or the task ended). Timeline: one
    /// `inputExpired` event `{key}`. Errors: [`EngineError::Store`].
    pub async fn expire_input(&self, key: &str) -> Result<bool, EngineError> {
        let (id, k) = (self.task_id.clone(), key.to_string());
        let ttl = self.engine.parts.config.default_ttl_ms;
        let expired = self
            .engine
            .parts
            .store
            .write(move |w| {
                let mut t = load(w, &id)?;
                if t.status.is_terminal() || !t.input_requests.contains_key(&k) {
                    return Ok(false);
                }
                let now = now_ms();
                store::answer_input(w.conn, &id, &k, &expired_response(), EXPIRED_BY, now)?;
                t.input_requests.remove(&k);
                t.last_updated_at_ms = now;
                w.event(&t, now, "inputExpired", json!({"key": k}))?;
                let resumed = "No answer came in time".to_string();
                super::input_rounds::back_to_work(w, &mut t, now, ttl, ("input expired", resumed))?;
                w.save(t)?;
                Ok(true)
            })
            .await?;
        if expired {
            self.engine
                .parts
                .running
                .deliver(&self.task_id, vec![(key.to_string(), expired_response())]);
        }
        Ok(expired)
    }
}
