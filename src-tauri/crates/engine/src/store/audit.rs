//! The `audit` table: the hash-chained log of approval decisions ([`crate::audit`]), and the
//! two `meta` rows that bound it: `audit_head` (the newest entry's `{seq, hash}`, changed in the
//! transaction that appends) and `audit_pruned` (the last entry retention removed, the anchor
//! of what remains). Only [`append_audit`] (inside `Engine::record_decision`'s write) and
//! [`prune_audit`] (the sweeper's) write them; an entry outlives its task.

use rusqlite::{Connection, OptionalExtension, Row, params};

use super::{Store, parse_json};
use crate::{
    EngineError,
    audit::{AuditEntry, AuditVerification, ChainLink, DecisionRecord, verify_chain},
};

/// The columns of an entry, in [`row_entry`]'s order.
const COLUMNS: &str = "seq, at, task_id, principal, server, tool, digest, decision, decided_by, \
     human, rule, reason, arguments, edited_arguments, prev_hash, hash";

/// Appends `rec` as the next entry (seq = head + 1, `prevHash` = the head's hash), recorded at
/// `at_ms`, and moves `audit_head` to it, on `conn` inside the caller's write. Returns the
/// entry as stored. Errors: [`EngineError::Store`].
pub fn append_audit(
    conn: &Connection,
    rec: DecisionRecord,
    at_ms: i64,
) -> Result<AuditEntry, EngineError> {
    let head = meta_link(conn, "audit_head")?.unwrap_or_else(ChainLink::genesis);
    let entry = AuditEntry::chained(rec, head.seq + 1, at_ms, head.hash);
    conn.prepare_cached(&format!(
        "INSERT INTO audit({COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)"
    ))?
    .execute(params![
        entry.seq as i64,
        entry.at_ms,
        entry.task_id,
        entry.principal,
        entry.server,
        entry.tool,
        entry.digest,
        entry.decision,
        entry.decided_by,
        entry.human,
        entry.rule,
        entry.reason,
        super::json_text(&entry.arguments),
        entry.edited_arguments.as_ref().map(super::json_text),
        entry.prev_hash,
        entry.hash,
    ])?;
    set_meta_link(
        conn,
        "audit_head",
        &ChainLink {
            seq: entry.seq,
            hash: entry.hash.clone(),
        },
    )?;
    Ok(entry)
}

/// Deletes up to `batch` entries from the oldest end: every entry up to the newest one recorded
/// before `before_ms`, and records the last one deleted as `audit_pruned` (the anchor the rest
/// is verified from). Returns how many were deleted. Errors: [`EngineError::Store`].
pub fn prune_audit(conn: &Connection, before_ms: i64, batch: usize) -> Result<usize, EngineError> {
    let last: Option<(i64, String)> = conn
        .prepare_cached(
            "SELECT seq, hash FROM (SELECT seq, hash, at FROM audit ORDER BY seq LIMIT ?2)
             WHERE at < ?1 ORDER BY seq DESC LIMIT 1",
        )?
        .query_row(params![before_ms, batch as i64], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .optional()?;
    let Some((seq, hash)) = last else {
        return Ok(0);
    };
    let deleted = conn
        .prepare_cached("DELETE FROM audit WHERE seq <= ?1")?
        .execute(params![seq])?;
    set_meta_link(
        conn,
        "audit_pruned",
        &ChainLink {
            seq: seq as u64,
            hash,
        },
    )?;
    Ok(deleted)
}

impl Store {
    /// Entries after seq `after_seq` (all when `None`) recorded at or after `since_ms` (all
    /// when `None`), in seq order, at most `limit`. Errors: [`EngineError::Store`].
    pub fn audit_entries(
        &self,
        since_ms: Option<i64>,
        after_seq: Option<u64>,
        limit: usize,
    ) -> Result<Vec<AuditEntry>, EngineError> {
        self.read(|c| {
            let mut stmt = c.prepare_cached(&format!(
                "SELECT {COLUMNS} FROM audit WHERE seq > ?1 AND at >= ?2 ORDER BY seq LIMIT ?3"
            ))?;
            let rows = stmt.query_map(
                params![
                    after_seq.unwrap_or(0).min(i64::MAX as u64) as i64,
                    since_ms.unwrap_or(i64::MIN),
                    limit.min(i64::MAX as usize) as i64
                ],
                row_entry,
            )?;
            rows.map(|r| r.map_err(EngineError::from)).collect()
        })
    }

    /// Verifies the whole log in one read snapshot, streaming its rows through
    /// [`verify_chain`] from the `audit_pruned` anchor (genesis when nothing was pruned) to the
    /// `audit_head`. Blocking: one pass over the table. Errors: [`EngineError::Store`].
    pub fn verify_audit(&self) -> Result<AuditVerification, EngineError> {
        self.read_snapshot(|c| {
            let anchor = meta_link(c, "audit_pruned")?.unwrap_or_else(ChainLink::genesis);
            let head = meta_link(c, "audit_head")?.unwrap_or_else(ChainLink::genesis);
            let mut stmt = c.prepare(&format!("SELECT {COLUMNS} FROM audit ORDER BY seq"))?;
            let mut failed = None;
            let rows = stmt.query_map([], row_entry)?.map_while(|r| match r {
                Ok(e) => Some(e),
                Err(e) => {
                    failed = Some(e);
                    None
                }
            });
            let report = verify_chain(rows, Some(anchor), Some(head));
            match failed {
                Some(e) => Err(e.into()),
                None => Ok(report),
            }
        })
    }

    /// When the oldest entry was recorded (ms since the epoch), or `None` for an empty log.
    /// Errors: [`EngineError::Store`].
    pub fn oldest_audit_at(&self) -> Result<Option<i64>, EngineError> {
        self.read(|c| {
            Ok(
                c.prepare_cached("SELECT at FROM audit ORDER BY seq LIMIT 1")?
                    .query_row([], |r| r.get(0))
                    .optional()?,
            )
        })
    }
}

fn row_entry(r: &Row<'_>) -> rusqlite::Result<AuditEntry> {
    Ok(AuditEntry {
        seq: r.get::<_, i64>(0)? as u64,
        at_ms: r.get(1)?,
        task_id: r.get(2)?,
        principal: r.get(3)?,
        server: r.get(4)?,
        tool: r.get(5)?,
        digest: r.get(6)?,
        decision: r.get(7)?,
        decided_by: r.get(8)?,
        human: r.get(9)?,
        rule: r.get(10)?,
        reason: r.get(11)?,
        arguments: parse_json(r.get(12)?),
        edited_arguments: r.get::<_, Option<String>>(13)?.map(parse_json),
        prev_hash: r.get(14)?,
        hash: r.get(15)?,
    })
}

/// The `{seq, hash}` kept in `meta.<key>`, if any. Errors: [`EngineError::Store`], also for a
/// value that is not such a link.
fn meta_link(c: &Connection, key: &str) -> Result<Option<ChainLink>, EngineError> {
    let value: Option<String> = c
        .prepare_cached("SELECT value FROM meta WHERE key = ?1")?
        .query_row(params![key], |r| r.get(0))
        .optional()?;
    value
        .map(|v| {
            serde_json::from_str(&v)
                .map_err(|e| EngineError::Store(format!("meta.{key} is not {{seq, hash}}: {e}")))
        })
        .transpose()
}

fn set_meta_link(c: &Connection, key: &str, link: &ChainLink) -> Result<(), EngineError> {
    c.prepare_cached("INSERT OR REPLACE INTO meta(key, value) VALUES (?1, ?2)")?
        .execute(params![key, serde_json::to_string(link)?])?;
    Ok(())
}
