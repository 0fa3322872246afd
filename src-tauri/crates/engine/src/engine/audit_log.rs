//! The audit log of approval decisions, seen from the engine: recording one decision (the
//! hash-chained entry and the task's `decision` event in one store write), reading entries
//! page by page, verifying the chain, and retention (entries older than
//! `EngineConfig::audit_retention_ms` are pruned from the oldest end by the sweeper, which
//! also sleeps until the oldest entry is due). The shapes and the chain are [`crate::audit`].

use super::{
    super::{
        audit::{AuditEntry, AuditVerification, DecisionRecord},
        clock::now_ms,
        limits::{self, ARGUMENTS_MAX_BYTES},
        store,
    },
    Engine, EngineError,
};

/// `DecisionRecord::decision` values.
const DECISIONS: &[&str] = &["allow", "deny", "ask"];
/// `DecisionRecord::decided_by` values.
const DECIDERS: &[&str] = &["rule", "default", "human", "expiry", "abandoned"];
/// Entries one pruning write deletes at most, so that the writer never stalls on a long log.
const PRUNE_BATCH: usize = 10_000;

impl Engine {
    /// Records one approval decision in one store write: appends the audit entry (next seq,
    /// chained to the previous entry's hash, `atMs` = now) and moves the log's head, and, when
    /// `rec.task_id` names a task that exists, appends a timeline event `decision` to it whose
    /// data is the entry (so the task shows the decision while it lives; the entry outlives it).
    /// Returns the entry as stored. Its `arguments` and `editedArguments` are kept up to
    /// [`ARGUMENTS_MAX_BYTES`] each as JSON, longer strings cut ([`limits::cut_to_size`]); the
    /// digest stays the caller's, of the whole call.
    ///
    /// Errors: [`EngineError::Invalid`] when `decision` is not `allow`/`deny`/`ask` or
    /// `decided_by` not `rule`/`default`/`human`/`expiry`/`abandoned` (nothing is written);
    /// [`EngineError::Store`].
    pub async fn record_decision(
        &self,
        mut rec: DecisionRecord,
    ) -> Result<AuditEntry, EngineError> {
        if !DECISIONS.contains(&rec.decision.as_str()) {
            return Err(EngineError::Invalid(format!(
                "decision must be one of {DECISIONS:?}, not {:?}",
                rec.decision
            )));
        }
        if !DECIDERS.contains(&rec.decided_by.as_str()) {
            return Err(EngineError::Invalid(format!(
                "decidedBy must be one of {DECIDERS:?}, not {:?}",
                rec.decided_by
            )));
        }
        rec.arguments = limits::cut_to_size(rec.arguments, ARGUMENTS_MAX_BYTES);
        rec.edited_arguments = rec
            .edited_arguments
            .map(|e| limits::cut_to_size(e, ARGUMENTS_MAX_BYTES));
        let entry = self
            .parts
            .store
            .write(move |w| {
                let task = match &rec.task_id {
                    Some(id) => w.load(id)?,
                    None => None,
                };
                let at = now_ms();
                let entry = store::append_audit(w.conn, rec, at)?;
                if let Some(task) = task {
                    w.event(&task, at, "decision", serde_json::to_value(&entry)?)?;
                }
                Ok(entry)
            })
            .await?;
        if let Some(retention) = self.parts.config.audit_retention_ms {
            self.note_deadline_at(entry.at_ms.saturating_add(retention as i64));
        }
        Ok(entry)
    }

    /// Audit entries after seq `after_seq` recorded at or after `since_ms` (ms since the epoch),
    /// in seq order, at most `limit`: page through a log with the last seq of each page.
    /// Blocking (one indexed read). Errors: [`EngineError::Store`].
    pub fn audit_entries(
        &self,
        since_ms: Option<i64>,
        after_seq: Option<u64>,
        limit: usize,
    ) -> Result<Vec<AuditEntry>, EngineError> {
        self.parts.store.audit_entries(since_ms, after_seq, limit)
    }

    /// Verifies the stored log ([`crate::audit::verify_chain`] from the last pruned entry to the
    /// recorded head). Blocking: reads the whole log once. Errors: [`EngineError::Store`].
    pub fn verify_audit(&self) -> Result<AuditVerification, EngineError> {
        self.parts.store.verify_audit()
    }

    /// Deletes the entries older than the audit retention, from the oldest end, in writes of
    /// at most [`PRUNE_BATCH`]. Returns how many. Errors: [`EngineError::Store`].
    pub(super) async fn prune_audit(&self) -> Result<usize, EngineError> {
        let Some(retention) = self.parts.config.audit_retention_ms else {
            return Ok(0);
        };
        let before = now_ms().saturating_sub(retention.min(i64::MAX as u64) as i64);
        let mut pruned = 0;
        loop {
            let n = self
                .parts
                .store
                .write(move |w| store::prune_audit(w.conn, before, PRUNE_BATCH))
                .await?;
            pruned += n;
            if n < PRUNE_BATCH {
                return Ok(pruned);
            }
        }
    }

    /// When the oldest audit entry falls out of the retention (ms since the epoch), or `None`
    /// (empty log, or entries kept forever). Errors: [`EngineError::Store`].
    pub(super) fn next_audit_prune(&self) -> Result<Option<i64>, EngineError> {
        let Some(retention) = self.parts.config.audit_retention_ms else {
            return Ok(None);
        };
        Ok(self
            .parts
            .store
            .oldest_audit_at()?
            .map(|at| at.saturating_add(retention.min(i64::MAX as u64) as i64)))
    }
}

#[cfg(test)]
mod tests;
