//! The audit log's shapes and its hash chain: what a caller records about one approval decision
//! ([`DecisionRecord`]), the entry the log keeps ([`AuditEntry`]), how an entry's hash is made
//! ([`entry_hash`] over [`canonical_json`]), and [`verify_chain`], which checks a sequence of
//! entries — read from the store or from an exported JSON Lines file — link by link.
//!
//! The chain (docs/audit.md says it for people who verify an export with their own script):
//! entry `n` carries `prevHash` = entry `n-1`'s `hash` (64 zeros for entry 1) and
//! `hash` = lowercase hex SHA-256 of the UTF-8 text `prevHash ++ canonical_json(entry without
//! "hash")`. Canonical JSON: object keys sorted by their UTF-8 bytes, no whitespace, strings
//! escaped as serde_json escapes them. The store (`store::audit`) writes entries; the engine
//! (`Engine::record_decision`) is the only caller.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// The `prevHash` of the first entry of a log: 64 zeros.
pub const GENESIS_HASH: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// One approval decision as the deciding code hands it to [`Engine::record_decision`](crate::Engine::record_decision).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DecisionRecord {
    /// The task the call belongs to (its timeline gets a `decision` event), if any.
    pub task_id: Option<String>,
    /// Who asked for the call (the agent's principal name).
    pub principal: String,
    /// The MCP server of the call (`claude-code`, `codex`, an upstream's name, `taskdeck`).
    pub server: String,
    /// The tool called.
    pub tool: String,
    /// `sha256:<64 hex>` of the canonical `{server, tool, arguments}` (the approval's binding).
    pub digest: String,
    /// `allow`, `deny` or `ask` (handed back to the agent's own prompt).
    pub decision: String,
    /// `rule`, `default`, `human`, `expiry` or `abandoned`.
    pub decided_by: String,
    /// The human's principal name when `decided_by` is `human`.
    pub human: Option<String>,
    /// The id of the policy rule that decided, if one did.
    pub rule: Option<String>,
    /// Why: the human's reason, or the policy's explanation.
    pub reason: Option<String>,
    /// The call as asked (secrets redacted).
    pub arguments: Value,
    /// The call as approved, when the human edited it.
    pub edited_arguments: Option<Value>,
}

/// One entry of the audit log, as stored, exported (one JSON object per line) and served by
/// `/v1/audit`. JSON keys: `seq`, `atMs`, `taskId`, `principal`, `server`, `tool`, `digest`,
/// `decision`, `decidedBy`, `human`, `rule`, `reason`, `arguments`, `editedArguments`,
/// `prevHash`, `hash`; absent values are `null` (never left out: the hash covers them).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuditEntry {
    /// Position in the log: 1, 2, 3, ... without gaps (pruning removes a prefix).
    pub seq: u64,
    /// When the decision was recorded, ms since the Unix epoch.
    pub at_ms: i64,
    /// The task the call belongs to, if any ([`DecisionRecord::task_id`]).
    pub task_id: Option<String>,
    /// Who asked for the call, the agent's principal name.
    pub principal: String,
    /// The MCP server of the call ([`DecisionRecord::server`]).
    pub server: String,
    /// The tool called.
    pub tool: String,
    /// `sha256:<64 hex>` of the canonical `{server, tool, arguments}`.
    pub digest: String,
    /// `allow`, `deny` or `ask`.
    pub decision: String,
    /// `rule`, `default`, `human`, `expiry` or `abandoned`.
    pub decided_by: String,
    /// The human's principal name when `decidedBy` is `human`.
    pub human: Option<String>,
    /// The id of the policy rule that decided, if one did.
    pub rule: Option<String>,
    /// Why: the human's reason, or the policy's explanation.
    pub reason: Option<String>,
    /// The call as asked (secrets redacted); over [`crate::limits::ARGUMENTS_MAX_BYTES`] as
    /// JSON, its longest strings cut ([`crate::limits::cut_to_size`]).
    pub arguments: Value,
    /// The call as approved, when the human edited it.
    pub edited_arguments: Option<Value>,
    /// The previous entry's `hash` ([`GENESIS_HASH`] for seq 1).
    pub prev_hash: String,
    /// Lowercase hex SHA-256 of `prev_hash` followed by the canonical JSON of this entry
    /// without `hash` ([`entry_hash`]).
    pub hash: String,
}

impl AuditEntry {
    /// The entry `rec` becomes at position `seq`, recorded at `at_ms`, after the entry whose
    /// hash is `prev_hash`; its `hash` is computed here.
    pub fn chained(rec: DecisionRecord, seq: u64, at_ms: i64, prev_hash: String) -> AuditEntry {
        let mut entry = AuditEntry {
            seq,
            at_ms,
            task_id: rec.task_id,
            principal: rec.principal,
            server: rec.server,
            tool: rec.tool,
            digest: rec.digest,
            decision: rec.decision,
            decided_by: rec.decided_by,
            human: rec.human,
            rule: rec.rule,
            reason: rec.reason,
            arguments: rec.arguments,
            edited_arguments: rec.edited_arguments,
            prev_hash,
            hash: String::new(),
        };
        entry.hash = entry_hash(&entry);
        entry
    }

    /// The entry one line of an exported log holds (a JSON object), read strictly: the line
    /// must hold exactly an entry's members, with values of their types, so that what
    /// [`entry_hash`] covers is all the line says (a member added, or a `null` one left out,
    /// would otherwise pass a check of the fields it knows). Errors: why the line is not an
    /// entry (not JSON, another shape, or the members it has beyond or short of an entry's).
    pub fn from_exported(line: &str) -> Result<AuditEntry, String> {
        // Read as an entry first: a member given twice (`"decision":"allow","decision":"deny"`,
        // which reads as one thing and hashes as another) is refused.
        let entry: AuditEntry = serde_json::from_str(line).map_err(|e| e.to_string())?;
        let given: Value = serde_json::from_str(line).map_err(|e| e.to_string())?;
        let read_back = serde_json::to_value(&entry).map_err(|e| e.to_string())?;
        if canonical_json(&given) == canonical_json(&read_back) {
            return Ok(entry);
        }
        let keys = |v: &Value| -> Vec<String> {
            v.as_object()
                .map(|m| m.keys().cloned().collect())
                .unwrap_or_default()
        };
        let (has, wants) = (keys(&given), keys(&read_back));
        let extra: Vec<&String> = has.iter().filter(|k| !wants.contains(k)).collect();
        let missing: Vec<&String> = wants.iter().filter(|k| !has.contains(k)).collect();
        Err(match (extra.is_empty(), missing.is_empty()) {
            (false, _) => format!("it has members an audit entry does not: {extra:?}"),
            (_, false) => format!("it lacks members of an audit entry: {missing:?}"),
            _ => "a value is not written as an audit entry writes it".to_string(),
        })
    }
}

/// `value` as canonical JSON text: every object's keys sorted by their UTF-8 bytes (at every
/// depth), no whitespace, numbers and string escapes as serde_json writes them (`\"`, `\\`,
/// `\n`, `\r`, `\t`, `\b`, `\f`, other control characters as `\u00xx`; everything else as is).
/// The workspace enables serde_json's `preserve_order`, so maps keep insertion order and are
/// sorted here explicitly.
pub fn canonical_json(value: &Value) -> String {
    let mut sorted = value.clone();
    sorted.sort_all_objects();
    sorted.to_string()
}

/// The hash `entry` must carry: lowercase hex SHA-256 over the UTF-8 text of
/// `entry.prev_hash` followed by [`canonical_json`] of the entry's JSON without `hash`.
pub fn entry_hash(entry: &AuditEntry) -> String {
    let mut body = serde_json::to_value(entry).unwrap_or(Value::Null);
    if let Value::Object(map) = &mut body {
        map.shift_remove("hash");
    }
    let mut sha = Sha256::new();
    sha.update(entry.prev_hash.as_bytes());
    sha.update(canonical_json(&body).as_bytes());
    hex::encode(sha.finalize())
}

/// A position in the chain: an entry's `seq` and `hash` (seq 0 with [`GENESIS_HASH`] is the
/// start of a log that was never pruned).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChainLink {
    /// The entry's seq (0 before entry 1).
    pub seq: u64,
    /// The entry's `hash`, lowercase hex ([`GENESIS_HASH`] at seq 0).
    pub hash: String,
}

impl ChainLink {
    /// The link before entry 1.
    pub fn genesis() -> ChainLink {
        ChainLink {
            seq: 0,
            hash: GENESIS_HASH.to_string(),
        }
    }
}

/// What is wrong with a log, and where: the first problem found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditProblem {
    /// The seq of the entry at which the chain breaks (for a missing entry: the seq that is
    /// missing).
    pub seq: u64,
    /// What is wrong, for people (a changed field, a changed hash, a missing entry, a broken
    /// link).
    pub what: String,
}

/// The outcome of [`verify_chain`]: `{ok, entries, firstSeq, lastSeq, headHash, problem?}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuditVerification {
    /// No problem found.
    pub ok: bool,
    /// How many entries were checked (up to and including the problem's, when there is one).
    pub entries: u64,
    /// The seq of the first entry checked (`null` for an empty log).
    pub first_seq: Option<u64>,
    /// The seq of the last entry checked.
    pub last_seq: Option<u64>,
    /// The `hash` of the last entry checked: note it somewhere else, and a later verification
    /// shows whether the log still reaches it.
    pub head_hash: Option<String>,
    /// The first problem found; absent when `ok`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problem: Option<AuditProblem>,
}

/// Checks `entries` (in seq order) as one chain and reports the first problem:
/// - an entry whose hash does not match its content: "a field was changed" when the next entry
///   (or `head`) still links to the stored hash, "the hash was changed" when it links to the
///   recomputed one;
/// - a seq that is not the previous one plus 1 (a deleted or inserted entry);
/// - a `prevHash` that is not the previous entry's `hash` (for the first entry: `anchor`'s);
/// - when `head` is given (the store's record of its newest entry), a log that ends before it
///   or elsewhere (newest entries deleted).
///
/// `anchor`: the link the first entry must follow (the store: the last pruned entry, or
/// [`ChainLink::genesis`]); `None` for an exported file, whose first entry is taken as it is,
/// except that an entry with seq 1 must follow the genesis hash.
pub fn verify_chain(
    entries: impl Iterator<Item = AuditEntry>,
    anchor: Option<ChainLink>,
    head: Option<ChainLink>,
) -> AuditVerification {
    let mut report = AuditVerification {
        ok: true,
        entries: 0,
        first_seq: None,
        last_seq: None,
        head_hash: None,
        problem: None,
    };
    let fail = |report: &mut AuditVerification, seq: u64, what: String| {
        report.ok = false;
        report.problem = Some(AuditProblem { seq, what });
    };
    let mut prev: Option<ChainLink> = anchor.clone();
    let mut entries = entries.peekable();
    while let Some(entry) = entries.next() {
        report.entries += 1;
        report.first_seq.get_or_insert(entry.seq);
        let expected = match &prev {
            Some(link) => Some(link.clone()),
            None if entry.seq == 1 => Some(ChainLink::genesis()),
            None => None,
        };
        if let Some(link) = expected {
            if entry.seq != link.seq + 1 {
                let what = match entry.seq.cmp(&(link.seq + 1)) {
                    std::cmp::Ordering::Greater => format!(
                        "entry {} is missing: after seq {} comes seq {} (deleted?)",
                        link.seq + 1,
                        link.seq,
                        entry.seq
                    ),
                    _ => format!(
                        "seq {} follows seq {}: entries out of order or inserted",
                        entry.seq, link.seq
                    ),
                };
                fail(&mut report, link.seq + 1, what);
                return report;
            }
            if entry.prev_hash != link.hash {
                fail(
                    &mut report,
                    entry.seq,
                    format!(
                        "prevHash does not link to the hash of seq {} (the chain is broken)",
                        link.seq
                    ),
                );
                return report;
            }
        }
        let recomputed = entry_hash(&entry);
        if recomputed != entry.hash {
            let next_link = match entries.peek() {
                Some(next) => Some(next.prev_hash.clone()),
                None => head
                    .as_ref()
                    .filter(|h| h.seq == entry.seq)
                    .map(|h| h.hash.clone()),
            };
            let what = match next_link {
                Some(h) if h == entry.hash => {
                    "a field was changed: the entry no longer matches its hash"
                }
                Some(h) if h == recomputed => "the hash was changed: it does not match the entry",
                _ => "the entry does not match its hash (a field or the hash was changed)",
            };
            fail(&mut report, entry.seq, what.to_string());
            return report;
        }
        report.last_seq = Some(entry.seq);
        report.head_hash = Some(entry.hash.clone());
        prev = Some(ChainLink {
            seq: entry.seq,
            hash: entry.hash,
        });
    }
    if let Some(head) = head {
        let end = prev.unwrap_or_else(ChainLink::genesis);
        if end != head {
            let what = if end.seq < head.seq {
                format!(
                    "the log ends at seq {} but its head records seq {}: the newest entries were deleted",
                    end.seq, head.seq
                )
            } else {
                format!(
                    "the log ends at seq {} but its head records seq {} with another hash",
                    end.seq, head.seq
                )
            };
            let seq = if end.seq < head.seq {
                end.seq + 1
            } else {
                end.seq
            };
            fail(&mut report, seq, what);
        }
    }
    report
}

#[cfg(test)]
mod tests;
