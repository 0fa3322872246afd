//! The `nextCursor` of `GET /v1/tasks`: an opaque token, bound to the caller and to the query
//! that produced it, that only this store can have made.
//!
//! A cursor is base64url (no padding) of 33 bytes: a version (1), the list position (the last
//! task's `seq`, 8 bytes big-endian), a 4-byte tag of the caller, a 4-byte tag of the
//! normalized query, and the first 16 bytes of an HMAC-SHA256 over all of that. The tags and
//! the MAC are keyed by the store's random [`cursor_key`](taskdeck_engine::store::Store::cursor_key),
//! so cursors survive a restart, and a refused cursor can say why ([`CursorError`]): empty,
//! not a cursor at all, altered (or made by another store), another caller's, or another
//! query's. The page size is not bound: a client may page on with another `limit`.

use base64::{Engine as _, engine::general_purpose::URL_SAFE_NO_PAD};
use sha2::{Digest, Sha256};

use taskdeck_engine::{Principal, TaskStatus};

/// The version byte of the current layout.
const VERSION: u8 = 1;
/// Bytes of a decoded cursor: version, position, caller tag, query tag, MAC.
const LEN: usize = 1 + 8 + 4 + 4 + 16;

/// What a cursor is bound to: who asks, and the list they ask for (as `GET /v1/tasks` applies
/// it: for an agent caller, `principal` is the caller).
#[derive(Debug, Clone)]
pub struct CursorScope<'a> {
    /// Who asks: its name and whether it sees every principal's tasks are bound.
    pub caller: &'a Principal,
    /// Status filter, any order, repeats allowed (normalized here).
    pub statuses: &'a [TaskStatus],
    /// Tool filter; `None` and `""` are the same query.
    pub tool: Option<&'a str>,
    /// Owner filter; `None` and `""` are the same query.
    pub principal: Option<&'a str>,
    /// Free text; `None` and `""` are the same query.
    pub query: Option<&'a str>,
    /// Only completed tasks with an error result (`/v1/tasks?error=true`).
    pub errors_only: bool,
}

impl CursorScope<'_> {
    /// The caller's tag: the first 4 bytes of the HMAC of its name and whether it sees every
    /// principal's tasks (a person: the admin or a human).
    fn caller_tag(&self, key: &[u8]) -> [u8; 4] {
        let caller = serde_json::json!(["caller", self.caller.name, self.caller.is_human()]);
        first(&hmac_sha256(key, caller.to_string().as_bytes()))
    }

    /// The query's tag: the first 4 bytes of the HMAC of its normalized filters.
    fn query_tag(&self, key: &[u8]) -> [u8; 4] {
        let mut statuses: Vec<&str> = self.statuses.iter().map(|s| s.as_str()).collect();
        statuses.sort_unstable();
        statuses.dedup();
        let mut query = vec![
            serde_json::json!("query"),
            serde_json::json!(statuses),
            serde_json::json!(self.tool.filter(|t| !t.is_empty())),
            serde_json::json!(self.principal.filter(|p| !p.is_empty())),
            serde_json::json!(self.query.filter(|q| !q.is_empty())),
        ];
        // Only when set, so the cursors of lists without it stay what they were.
        if self.errors_only {
            query.push(serde_json::json!("errors"));
        }
        let query = serde_json::Value::Array(query);
        first(&hmac_sha256(key, query.to_string().as_bytes()))
    }
}

/// Why a cursor was refused; `Display` is the problem detail the caller reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum CursorError {
    /// An empty string.
    #[error("cursor is empty: leave it out for the first page, or pass the nextCursor of a page")]
    Empty,
    /// Not base64url of 33 bytes with version 1, or a position below 1.
    #[error("cursor is not one Taskdeck gave out: pass the nextCursor of a page as it came")]
    Malformed,
    /// The MAC does not match: changed, or keyed by another store.
    #[error(
        "cursor was altered, or was given out by another Taskdeck store: pass the nextCursor of a page as it came"
    )]
    Altered,
    /// Made for another caller (or for this name with another visibility).
    #[error(
        "cursor was given to another principal: page with the cursors your own requests return"
    )]
    OtherPrincipal,
    /// Made for other filters (`status`, `tool`, `principal`, `q` or `error`).
    #[error(
        "cursor belongs to another query: status, tool, principal, q and error must be those of the request that returned it (start again without a cursor)"
    )]
    OtherQuery,
}

/// The cursor that continues `scope`'s list after position `seq`.
pub fn encode(key: &[u8], seq: i64, scope: &CursorScope<'_>) -> String {
    let mut raw = Vec::with_capacity(LEN);
    raw.push(VERSION);
    raw.extend_from_slice(&seq.to_be_bytes());
    raw.extend_from_slice(&scope.caller_tag(key));
    raw.extend_from_slice(&scope.query_tag(key));
    let mac = hmac_sha256(key, &raw);
    raw.extend_from_slice(&mac[..16]);
    URL_SAFE_NO_PAD.encode(raw)
}

/// The position `cursor` continues from, when this store gave it out for `scope`.
/// Errors: [`CursorError`] saying what is wrong with it.
pub fn decode(key: &[u8], cursor: &str, scope: &CursorScope<'_>) -> Result<i64, CursorError> {
    if cursor.is_empty() {
        return Err(CursorError::Empty);
    }
    let raw = URL_SAFE_NO_PAD
        .decode(cursor)
        .ok()
        .filter(|r| r.len() == LEN && r[0] == VERSION)
        .ok_or(CursorError::Malformed)?;
    let (signed, mac) = raw.split_at(LEN - 16);
    if !same(&hmac_sha256(key, signed)[..16], mac) {
        return Err(CursorError::Altered);
    }
    if signed[9..13] != scope.caller_tag(key) {
        return Err(CursorError::OtherPrincipal);
    }
    if signed[13..17] != scope.query_tag(key) {
        return Err(CursorError::OtherQuery);
    }
    let seq = i64::from_be_bytes(signed[1..9].try_into().expect("8 bytes"));
    if seq <= 0 {
        return Err(CursorError::Malformed);
    }
    Ok(seq)
}

fn first(mac: &[u8; 32]) -> [u8; 4] {
    [mac[0], mac[1], mac[2], mac[3]]
}

/// Compares two MACs in time that does not depend on where they differ.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// HMAC-SHA256 (RFC 2104) of `data` under `key`.
fn hmac_sha256(key: &[u8], data: &[u8]) -> [u8; 32] {
    const BLOCK: usize = 64;
    let mut block = [0u8; BLOCK];
    if key.len() > BLOCK {
        block[..32].copy_from_slice(&Sha256::digest(key));
    } else {
        block[..key.len()].copy_from_slice(key);
    }
    let inner = Sha256::new()
        .chain_update(block.map(|b| b ^ 0x36))
        .chain_update(data)
        .finalize();
    Sha256::new()
        .chain_update(block.map(|b| b ^ 0x5c))
        .chain_update(inner)
        .finalize()
        .into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hmac_matches_rfc_4231() {
        // Test case 2.
        assert_eq!(
            hex::encode(hmac_sha256(b"Jefe", b"what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
        // Test case 6: a key longer than the block is hashed first.
        assert_eq!(
            hex::encode(hmac_sha256(
                &[0xaa; 131],
                b"Test Using Larger Than Block-Size Key - Hash Key First"
            )),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
        );
    }

    #[test]
    fn a_cursor_continues_only_its_own_callers_query() {
        let key = [7u8; 32];
        let admin = Principal::admin();
        let agent = Principal::named("agent");
        let statuses = [TaskStatus::Working, TaskStatus::Completed];
        let scope = CursorScope {
            caller: &admin,
            statuses: &statuses,
            tool: Some("echo"),
            principal: None,
            query: Some(""),
            errors_only: false,
        };
        let cursor = encode(&key, 42, &scope);
        assert_eq!(cursor.len(), 44);
        assert_eq!(decode(&key, &cursor, &scope), Ok(42));
        // Normalized: another status order, repeats, an empty query are the same query.
        let same_query = [
            TaskStatus::Completed,
            TaskStatus::Working,
            TaskStatus::Working,
        ];
        let normalized = CursorScope {
            statuses: &same_query,
            query: None,
            ..scope.clone()
        };
        assert_eq!(decode(&key, &cursor, &normalized), Ok(42));

        assert_eq!(decode(&key, "", &scope), Err(CursorError::Empty));
        assert_eq!(decode(&key, "42", &scope), Err(CursorError::Malformed));
        assert_eq!(
            decode(&key, "not base64!", &scope),
            Err(CursorError::Malformed)
        );
        assert_eq!(
            decode(&[8u8; 32], &cursor, &scope),
            Err(CursorError::Altered)
        );
        let mut raw = URL_SAFE_NO_PAD.decode(&cursor).unwrap();
        raw[8] ^= 1;
        let altered = URL_SAFE_NO_PAD.encode(raw);
        assert_eq!(decode(&key, &altered, &scope), Err(CursorError::Altered));
        let theirs = CursorScope {
            caller: &agent,
            ..scope.clone()
        };
        assert_eq!(
            decode(&key, &cursor, &theirs),
            Err(CursorError::OtherPrincipal)
        );
        for other in [
            CursorScope {
                tool: None,
                ..scope.clone()
            },
            CursorScope {
                principal: Some("agent"),
                ..scope.clone()
            },
            CursorScope {
                query: Some("x"),
                ..scope.clone()
            },
            CursorScope {
                statuses: &[TaskStatus::Working],
                ..scope.clone()
            },
            CursorScope {
                errors_only: true,
                ..scope.clone()
            },
        ] {
            assert_eq!(decode(&key, &cursor, &other), Err(CursorError::OtherQuery));
        }
    }
}
