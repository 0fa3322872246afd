//! Idempotency keys of task creation (the IETF httpapi idempotency-key draft's semantics,
//! without its HTTP): a creation that names a key is done at most once per principal and key
//! for [`KEY_KEPT_MS`]. Doing it again with the same request (same tool, same arguments as JSON,
//! members in any order) finds the task the first one created; with another request, it is a
//! conflict.
//!
//! The keys live in the store's `idempotency_keys` table, written only by the store's writer in
//! the very write that creates the task ([`Engine::create_task_once`](super::Engine::create_task_once)),
//! so racing creations with one key make one task and the keys survive restarts. Expired keys are
//! ignored when looked up, replaced when used again, and deleted by the sweeper.

use std::sync::Arc;

use rusqlite::{Connection, OptionalExtension, params};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::{EngineError, TaskRecord};

/// How long a key is kept after the creation that used it: 24 h, in ms.
pub const KEY_KEPT_MS: i64 = 24 * 60 * 60 * 1000;

/// What [`Engine::create_task_once`](super::Engine::create_task_once) did.
#[derive(Debug)]
pub enum Creation {
    /// The key was new (or had expired): the task was created, committed and started.
    Created(Arc<TaskRecord>),
    /// The key was used before for the same request: the task that creation made, as it is
    /// now (`task` is `None` when it was deleted since: its TTL ran out or a cap removed it).
    Replayed {
        /// The id of the task that creation made.
        task_id: String,
        /// That task as it is now; `None` when it was deleted since.
        task: Option<Arc<TaskRecord>>,
    },
    /// The key was used before for another request (which created `task_id`).
    Conflict {
        /// The id of the task the other request created.
        task_id: String,
    },
}

/// The fingerprint of a creation request: SHA-256 (hex) of `[tool, arguments]` as JSON with
/// every object's members sorted, so that the same arguments written in another order match.
pub fn fingerprint(tool: &str, arguments: &Value) -> String {
    let canonical = Value::Array(vec![Value::String(tool.into()), sorted(arguments)]);
    hex::encode(Sha256::digest(canonical.to_string().as_bytes()))
}

/// `v` with the members of every object in key order.
fn sorted(v: &Value) -> Value {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            Value::Object(
                keys.into_iter()
                    .map(|k| (k.clone(), sorted(&m[k])))
                    .collect::<Map<_, _>>(),
            )
        }
        Value::Array(a) => Value::Array(a.iter().map(sorted).collect()),
        other => other.clone(),
    }
}

/// The `(fingerprint, task_id)` stored for `principal`'s `key`, unless it expired by `now_ms`.
pub(crate) fn lookup(
    c: &Connection,
    principal: &str,
    key: &str,
    now_ms: i64,
) -> Result<Option<(String, String)>, EngineError> {
    Ok(c.prepare_cached(
        "SELECT fingerprint, task_id FROM idempotency_keys
         WHERE principal = ?1 AND key = ?2 AND expires_at > ?3",
    )?
    .query_row(params![principal, key, now_ms], |r| {
        Ok((r.get(0)?, r.get(1)?))
    })
    .optional()?)
}

/// Stores `principal`'s `key` for the creation of `task_id` at `now_ms` (kept [`KEY_KEPT_MS`]),
/// replacing an expired entry.
pub(crate) fn remember(
    c: &Connection,
    principal: &str,
    key: &str,
    fingerprint: &str,
    task_id: &str,
    now_ms: i64,
) -> Result<(), EngineError> {
    c.prepare_cached(
        "INSERT OR REPLACE INTO idempotency_keys(principal, key, fingerprint, task_id, created_at, expires_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?
    .execute(params![principal, key, fingerprint, task_id, now_ms, now_ms + KEY_KEPT_MS])?;
    Ok(())
}

/// Deletes the keys expired by `now_ms`; returns how many.
pub(crate) fn prune(c: &Connection, now_ms: i64) -> Result<usize, EngineError> {
    Ok(
        c.prepare_cached("DELETE FROM idempotency_keys WHERE expires_at <= ?1")?
            .execute(params![now_ms])?,
    )
}

/// When the next key expires (ms since the epoch), if any is stored.
pub(crate) fn next_expiry(c: &Connection) -> Result<Option<i64>, EngineError> {
    Ok(
        c.prepare_cached("SELECT MIN(expires_at) FROM idempotency_keys")?
            .query_row([], |r| r.get(0))?,
    )
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::{
        feed::ChangeFeed,
        store::{Durability, Store},
    };

    #[test]
    fn the_same_arguments_in_another_order_have_the_same_fingerprint() {
        let a = json!({"name": "x", "opts": {"b": [1, {"d": 1, "c": 2}], "a": null}});
        let b = json!({"opts": {"a": null, "b": [1, {"c": 2, "d": 1}]}, "name": "x"});
        assert_eq!(fingerprint("t", &a), fingerprint("t", &b));
        assert_ne!(fingerprint("t", &a), fingerprint("u", &a));
        let c = json!({"opts": {"a": null, "b": [{"c": 2, "d": 1}, 1]}, "name": "x"});
        assert_ne!(
            fingerprint("t", &a),
            fingerprint("t", &c),
            "array order counts"
        );
    }

    #[tokio::test]
    async fn a_key_holds_for_24_hours_then_is_forgotten_and_swept() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path(), Durability::Process, ChangeFeed::new(8)).unwrap();
        let t0 = 1_000_000;
        store
            .write(move |w| remember(w.conn, "agent", "k", "fp", "task-1", t0))
            .await
            .unwrap();
        let at = |now| store.read(move |c| lookup(c, "agent", "k", now));
        assert_eq!(
            at(t0 + KEY_KEPT_MS - 1).unwrap(),
            Some(("fp".into(), "task-1".into()))
        );
        assert_eq!(at(t0 + KEY_KEPT_MS).unwrap(), None, "expired");
        assert_eq!(
            store.read(|c| lookup(c, "other", "k", t0)).unwrap(),
            None,
            "keys are per principal"
        );
        assert_eq!(store.read(next_expiry).unwrap(), Some(t0 + KEY_KEPT_MS));
        // Used again once expired: replaced.
        store
            .write(move |w| remember(w.conn, "agent", "k", "fp2", "task-2", t0 + KEY_KEPT_MS))
            .await
            .unwrap();
        assert_eq!(
            at(t0 + KEY_KEPT_MS).unwrap(),
            Some(("fp2".into(), "task-2".into()))
        );
        let swept = store
            .write(move |w| prune(w.conn, t0 + 2 * KEY_KEPT_MS))
            .await
            .unwrap();
        assert_eq!(swept, 1);
        assert_eq!(store.read(next_expiry).unwrap(), None);
    }
}
