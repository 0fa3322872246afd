//! Bearer tokens for named principals. A token is `td_` + 32 random bytes (base64url); only its
//! SHA-256 is stored (table `tokens` in the Taskdeck database). The admin token is created on
//! first start and written to `<config dir>/admin-token` with mode 0600.

use std::{
    collections::HashMap,
    path::{Path, PathBuf},
    sync::RwLock,
};

use base64::Engine as _;
use rand::RngCore;
use rusqlite::{Connection, OptionalExtension, params};
use sha2::{Digest, Sha256};

use taskdeck_engine::{Principal, clock::now_ms};

/// Name of the admin principal (sees every task).
pub const ADMIN: &str = "admin";
/// Name of the principal of unauthenticated requests under `--allow-anonymous`.
pub const ANONYMOUS: &str = "anonymous";

/// Errors of token management.
#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    #[error("a token named {0:?} already exists (revoke it first)")]
    Exists(String),
    #[error("no token named {0:?}")]
    Unknown(String),
    /// Revoking the admin token would lock the human out of a running Taskdeck.
    #[error(
        "the admin token cannot be revoked; to replace it, delete the admin-token file in the config dir and restart Taskdeck"
    )]
    AdminRevoke,
    #[error("token names are 1-64 characters of letters, digits, '-', '_' and '.'; {0:?} is not")]
    BadName(String),
    /// `admin` (its token is in the admin-token file) and `anonymous` (requests without a
    /// token under `--allow-anonymous`) name Taskdeck's own principals, in any case.
    #[error(
        "the name {0:?} is reserved for Taskdeck's own principal (the admin token is in the admin-token file in the config dir); choose another name"
    )]
    Reserved(String),
    #[error("database: {0}")]
    Db(#[from] rusqlite::Error),
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// One token as listed (never the secret).
#[derive(Debug, Clone, serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TokenInfo {
    pub name: String,
    pub created_at: String,
    pub revoked: bool,
}

fn hash(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

fn new_secret() -> String {
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    format!(
        "td_{}",
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
    )
}

fn open(db: &Path) -> Result<Connection, AuthError> {
    let c = Connection::open(db)?;
    c.busy_timeout(std::time::Duration::from_secs(10))?;
    c.execute_batch(
        "CREATE TABLE IF NOT EXISTS tokens(name TEXT PRIMARY KEY, hash TEXT NOT NULL UNIQUE,
           created_at INTEGER NOT NULL, revoked_at INTEGER);",
    )?;
    Ok(c)
}

/// Creates a token for principal `name` in the database at `db` and returns the secret (shown
/// once; only its hash is kept). Errors: [`AuthError::Exists`], [`AuthError::BadName`],
/// [`AuthError::Reserved`] for `admin` and `anonymous`.
pub fn create_token(db: &Path, name: &str) -> Result<String, AuthError> {
    let valid = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c));
    if !valid {
        return Err(AuthError::BadName(name.into()));
    }
    if name.eq_ignore_ascii_case(ADMIN) || name.eq_ignore_ascii_case(ANONYMOUS) {
        return Err(AuthError::Reserved(name.into()));
    }
    let c = open(db)?;
    let secret = new_secret();
    let live: Option<Option<i64>> = c
        .query_row(
            "SELECT revoked_at FROM tokens WHERE name = ?1",
            params![name],
            |r| r.get(0),
        )
        .optional()?;
    match live {
        Some(None) => return Err(AuthError::Exists(name.into())),
        Some(Some(_)) => {
            c.execute("DELETE FROM tokens WHERE name = ?1", params![name])?;
        }
        None => {}
    }
    c.execute(
        "INSERT INTO tokens(name, hash, created_at) VALUES (?1, ?2, ?3)",
        params![name, hash(&secret), now_ms()],
    )?;
    Ok(secret)
}

/// Lists tokens (names and dates, never secrets).
pub fn list_tokens(db: &Path) -> Result<Vec<TokenInfo>, AuthError> {
    let c = open(db)?;
    let mut stmt = c.prepare("SELECT name, created_at, revoked_at FROM tokens ORDER BY name")?;
    let rows = stmt.query_map([], |r| {
        Ok(TokenInfo {
            name: r.get(0)?,
            created_at: taskdeck_engine::clock::iso8601(r.get(1)?),
            revoked: r.get::<_, Option<i64>>(2)?.is_some(),
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Revokes principal `name`'s token; requests with it get 401 from then on.
/// Errors: [`AuthError::Unknown`]; [`AuthError::AdminRevoke`] for the admin token.
pub fn revoke_token(db: &Path, name: &str) -> Result<(), AuthError> {
    if name == ADMIN {
        return Err(AuthError::AdminRevoke);
    }
    let c = open(db)?;
    let n = c.execute(
        "UPDATE tokens SET revoked_at = ?2 WHERE name = ?1 AND revoked_at IS NULL",
        params![name, now_ms()],
    )?;
    if n == 0 {
        Err(AuthError::Unknown(name.into()))
    } else {
        Ok(())
    }
}

/// Path of the admin token file in `config_dir`.
pub fn admin_token_path(config_dir: &Path) -> PathBuf {
    config_dir.join("admin-token")
}

/// The admin token as stored in `<config dir>/admin-token` (trimmed), or `None` when the file
/// cannot be read. Command-line tools use it when given no `--token`.
pub fn read_admin_token(config_dir: &Path) -> Option<String> {
    std::fs::read_to_string(admin_token_path(config_dir))
        .ok()
        .map(|t| t.trim().to_string())
}

/// Makes sure the store at `db` has an admin token whose secret is in
/// `<config_dir>/admin-token` (0600), and returns the file's path. The file is the source: a
/// store whose admin token differs (another data dir sharing this config dir, a restored
/// backup) takes the file's token, so one config dir never has two admin tokens replacing each
/// other. Only a missing or empty file gets a new secret (and the store's old admin token goes).
pub fn ensure_admin_token(db: &Path, config_dir: &Path) -> Result<PathBuf, AuthError> {
    let path = admin_token_path(config_dir);
    let c = open(db)?;
    let stored: Option<String> = c
        .query_row(
            "SELECT hash FROM tokens WHERE name = ?1 AND revoked_at IS NULL",
            params![ADMIN],
            |r| r.get(0),
        )
        .optional()?;
    let existing = std::fs::read_to_string(&path)
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty());
    if let Some(secret) = &existing
        && stored.as_deref() == Some(hash(secret).as_str())
    {
        return Ok(path);
    }
    let secret = existing.clone().unwrap_or_else(new_secret);
    c.execute("DELETE FROM tokens WHERE name = ?1", params![ADMIN])?;
    c.execute(
        "INSERT INTO tokens(name, hash, created_at) VALUES (?1, ?2, ?3)",
        params![ADMIN, hash(&secret), now_ms()],
    )?;
    if existing.is_none() {
        std::fs::create_dir_all(config_dir)?;
        write_private(&path, &secret)?;
    }
    Ok(path)
}

fn write_private(path: &Path, contents: &str) -> std::io::Result<()> {
    use std::io::Write;
    #[cfg(unix)]
    use std::os::unix::fs::OpenOptionsExt;
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create(true).truncate(true);
    #[cfg(unix)]
    opts.mode(0o600);
    let mut f = opts.open(path)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        f.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    }
    f.write_all(contents.as_bytes())?;
    f.write_all(b"\n")
}

/// Resolves bearer tokens to principals. Unknown hashes are looked up in the database, so a
/// token made by `taskdeck token create` while the server runs works at once; a known hash is
/// trusted for [`Authenticator::RECHECK_MS`] before the database is asked again, so a revoked
/// token stops working within that time.
pub struct Authenticator {
    db: PathBuf,
    cache: RwLock<HashMap<String, (Principal, i64)>>,
}

impl Authenticator {
    /// How long a cached token is trusted before the database is asked again, in ms.
    pub const RECHECK_MS: i64 = 2_000;

    /// An authenticator over the token table of the database at `db`.
    pub fn new(db: &Path) -> Authenticator {
        Authenticator {
            db: db.to_path_buf(),
            cache: RwLock::new(HashMap::new()),
        }
    }

    /// The principal owning `token`, or `None` (unknown or revoked).
    pub fn authenticate(&self, token: &str) -> Option<Principal> {
        let h = hash(token);
        let now = now_ms();
        if let Some((p, at)) = self.cache.read().unwrap().get(&h)
            && now - at < Self::RECHECK_MS
        {
            return Some(p.clone());
        }
        let name = self.live_name(&h).ok()?;
        let mut cache = self.cache.write().unwrap();
        match name {
            Some(name) => {
                let p = if name == ADMIN {
                    Principal::admin()
                } else {
                    Principal::named(name)
                };
                cache.insert(h, (p.clone(), now));
                Some(p)
            }
            None => {
                cache.remove(&h);
                None
            }
        }
    }

    /// Asks the database (never the cache) whether `token` was revoked or deleted since it
    /// authenticated a request. `false` when the database cannot be read: an open event stream
    /// is not cut because of a busy or briefly unreadable file.
    pub fn is_revoked(&self, token: &str) -> bool {
        let h = hash(token);
        match self.live_name(&h) {
            Ok(Some(_)) => false,
            Ok(None) => {
                self.cache.write().unwrap().remove(&h);
                true
            }
            Err(_) => false,
        }
    }

    /// The principal name of the live (not revoked) token with hash `h`.
    fn live_name(&self, h: &str) -> Result<Option<String>, AuthError> {
        Ok(open(&self.db)?
            .query_row(
                "SELECT name FROM tokens WHERE hash = ?1 AND revoked_at IS NULL",
                params![h],
                |r| r.get(0),
            )
            .optional()?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stores_sharing_a_config_dir_share_its_admin_token() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = dir.path().join("cfg");
        let (a, b) = (dir.path().join("a.sqlite3"), dir.path().join("b.sqlite3"));
        let file = ensure_admin_token(&a, &cfg).unwrap();
        let token = std::fs::read_to_string(&file).unwrap().trim().to_string();
        ensure_admin_token(&b, &cfg).unwrap();
        ensure_admin_token(&a, &cfg).unwrap();
        assert_eq!(
            std::fs::read_to_string(&file).unwrap().trim(),
            token,
            "never rewritten"
        );
        for db in [&a, &b] {
            assert_eq!(
                Authenticator::new(db).authenticate(&token),
                Some(Principal::admin())
            );
        }
        // A lost file: a new token, and the old one stops working.
        std::fs::remove_file(&file).unwrap();
        ensure_admin_token(&a, &cfg).unwrap();
        let fresh = std::fs::read_to_string(&file).unwrap().trim().to_string();
        assert_ne!(fresh, token);
        assert_eq!(Authenticator::new(&a).authenticate(&token), None);
    }
}
