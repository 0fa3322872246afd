//! Bearer tokens (`tokens`): one row per principal name with the SHA-256 (hex) of its secret,
//! its [`Role`] (`agent` or `human`; the admin token is known by its reserved name), when it
//! was made and when it was revoked. The store keeps hashes only; making secrets,
//! hashing them and deciding who may do what is the server's (`adapters/auth.rs`).
//!
//! Writes go through the store's writer like every other write; a token made or revoked by
//! another process on the same file (`taskdeck token ...`) is seen by the next read.

use rusqlite::{OptionalExtension, params};

use super::Store;
use crate::{EngineError, Role, clock::now_ms};

/// One token as listed (never its hash).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenRow {
    /// The principal's name.
    pub name: String,
    /// The role stored with it ([`Role::Agent`] for a row written before tokens had roles).
    pub role: Role,
    /// When the token was made, ms since the Unix epoch.
    pub created_at_ms: i64,
    /// The token was revoked: requests with it are refused.
    pub revoked: bool,
}

impl Store {
    /// Adds a live token for `name` with secret hash `hash` and role `role`, in place of a
    /// revoked token of that name. Returns `false` (and changes nothing) when `name` has a live
    /// token. Errors: [`EngineError::Store`], also when another token has the same hash.
    pub async fn add_token(&self, name: &str, hash: &str, role: Role) -> Result<bool, EngineError> {
        let (name, hash) = (name.to_string(), hash.to_string());
        self.write(move |w| {
            let revoked_at: Option<Option<i64>> = w
                .conn
                .prepare_cached("SELECT revoked_at FROM tokens WHERE name = ?1")?
                .query_row(params![name], |r| r.get(0))
                .optional()?;
            if let Some(None) = revoked_at {
                return Ok(false);
            }
            w.conn
                .prepare_cached("DELETE FROM tokens WHERE name = ?1")?
                .execute(params![name])?;
            w.conn
                .prepare_cached(
                    "INSERT INTO tokens(name, hash, created_at, role) VALUES (?1, ?2, ?3, ?4)",
                )?
                .execute(params![name, hash, now_ms(), role.as_str()])?;
            Ok(true)
        })
        .await
    }

    /// Makes `hash` the live token of `name`, whatever `name` had before (live or revoked).
    /// Errors: [`EngineError::Store`], also when another name's token has the same hash.
    pub async fn set_token(&self, name: &str, hash: &str) -> Result<(), EngineError> {
        let (name, hash) = (name.to_string(), hash.to_string());
        self.write(move |w| {
            w.conn
                .prepare_cached(
                    "INSERT INTO tokens(name, hash, created_at) VALUES (?1, ?2, ?3)
                     ON CONFLICT(name) DO UPDATE SET hash = excluded.hash,
                       created_at = excluded.created_at, revoked_at = NULL",
                )?
                .execute(params![name, hash, now_ms()])?;
            Ok(())
        })
        .await
    }

    /// Revokes `name`'s live token. Returns `false` when `name` has none (unknown or already
    /// revoked). Errors: [`EngineError::Store`].
    pub async fn revoke_token(&self, name: &str) -> Result<bool, EngineError> {
        let name = name.to_string();
        self.write(move |w| {
            let n = w
                .conn
                .prepare_cached(
                    "UPDATE tokens SET revoked_at = ?2 WHERE name = ?1 AND revoked_at IS NULL",
                )?
                .execute(params![name, now_ms()])?;
            Ok(n > 0)
        })
        .await
    }

    /// Every token, live and revoked, by name. Errors: [`EngineError::Store`].
    pub fn tokens(&self) -> Result<Vec<TokenRow>, EngineError> {
        self.read(|c| {
            let mut stmt = c.prepare_cached(
                "SELECT name, created_at, revoked_at, role FROM tokens ORDER BY name",
            )?;
            let rows = stmt.query_map([], |r| {
                Ok(TokenRow {
                    name: r.get(0)?,
                    created_at_ms: r.get(1)?,
                    revoked: r.get::<_, Option<i64>>(2)?.is_some(),
                    role: stored_role(&r.get::<_, String>(3)?),
                })
            })?;
            Ok(rows.collect::<Result<_, _>>()?)
        })
    }

    /// The name and stored role of the live token with secret hash `hash`, or `None` (no such
    /// token, or revoked). Errors: [`EngineError::Store`].
    pub fn live_token(&self, hash: &str) -> Result<Option<(String, Role)>, EngineError> {
        self.read(|c| {
            Ok(c.prepare_cached(
                "SELECT name, role FROM tokens WHERE hash = ?1 AND revoked_at IS NULL",
            )?
            .query_row(params![hash], |r| {
                Ok((r.get(0)?, stored_role(&r.get::<_, String>(1)?)))
            })
            .optional()?)
        })
    }

    /// The secret hash of `name`'s live token, or `None`. Errors: [`EngineError::Store`].
    pub fn live_token_hash(&self, name: &str) -> Result<Option<String>, EngineError> {
        self.read(|c| {
            Ok(
                c.prepare_cached("SELECT hash FROM tokens WHERE name = ?1 AND revoked_at IS NULL")?
                    .query_row(params![name], |r| r.get(0))
                    .optional()?,
            )
        })
    }
}

/// The role in a `tokens.role` cell; anything but `human` is an agent (the least trust), so a
/// row can never make an admin: the admin is known by its name.
fn stored_role(cell: &str) -> Role {
    match Role::parse(cell) {
        Some(Role::Human) => Role::Human,
        _ => Role::Agent,
    }
}
