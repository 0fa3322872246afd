//! The store's tables: the DDL, the migrations that bring a store written by an earlier Taskdeck
//! up to it, and the values kept in `meta` (the store's identity and its secrets).
//!
//! Tables: `tasks` (one row per task), `input_requests` (every input round), `events` (the
//! timeline), `tokens` (bearer token hashes, [`super::tokens`]), `meta` (key/value),
//! `idempotency_keys` ([`crate::idempotency`]), `task_counts` (tasks per principal, tool and
//! status, kept by the writer in the transactions that change the tasks), `audit` (the
//! hash-chained log of approval decisions, [`super::audit`]; it outlives the tasks).

use rusqlite::{Connection, params};

use crate::EngineError;

/// Creates what is missing, migrates what is old, and makes sure the store has its identity
/// (`meta.store_id`, which derived files such as the search index check they belong to).
/// Returns the list cursors' key ([`super::Store::cursor_key`]). Errors: [`EngineError::Store`].
pub(super) fn prepare(conn: &Connection) -> Result<[u8; 32], EngineError> {
    conn.execute_batch(SCHEMA)?;
    migrate(conn)?;
    conn.execute(
        "INSERT OR IGNORE INTO meta(key, value) VALUES ('store_id', ?1)",
        params![uuid::Uuid::new_v4().simple().to_string()],
    )?;
    meta_secret(conn, "cursor_key")
}

/// The tables [`SCHEMA`] makes, and the `meta` keys `prepare` and [`migrate`] leave behind: a
/// store that lacks one was not (yet) opened by this Taskdeck ([`gaps`]).
const TABLES: &[&str] = &[
    "tasks",
    "input_requests",
    "events",
    "tokens",
    "meta",
    "idempotency_keys",
    "task_counts",
    "audit",
];
const META_KEYS: &[&str] = &[
    "store_id",
    "cursor_key",
    "task_counts",
    "task_counts_errors",
];

/// What the store on `conn` lacks of this Taskdeck's schema, one line each ("table audit is
/// missing", "column tokens.role is missing", "meta.store_id is missing"); empty when it is
/// current. Reads only. Errors: SQLite's.
pub(super) fn gaps(conn: &Connection) -> rusqlite::Result<Vec<String>> {
    let mut gaps = Vec::new();
    let mut table =
        conn.prepare("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?1")?;
    for t in TABLES {
        if !table.exists([t])? {
            gaps.push(format!("table {t} is missing"));
        }
    }
    if !gaps.is_empty() {
        return Ok(gaps);
    }
    let mut column = conn.prepare("SELECT 1 FROM pragma_table_info(?1) WHERE name = ?2")?;
    for (t, c, _) in ADDED {
        if !column.exists(params![t, c])? {
            gaps.push(format!("column {t}.{c} is missing"));
        }
    }
    let mut key = conn.prepare("SELECT 1 FROM meta WHERE key = ?1")?;
    for k in META_KEYS {
        if !key.exists([k])? {
            gaps.push(format!("meta.{k} is missing"));
        }
    }
    Ok(gaps)
}

/// Every table and index, created when missing.
const SCHEMA: &str = r#"
CREATE TABLE IF NOT EXISTS tasks(
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  task_id TEXT NOT NULL UNIQUE,
  tool TEXT NOT NULL,
  arguments TEXT NOT NULL,
  principal TEXT NOT NULL,
  status TEXT NOT NULL,
  status_message TEXT,
  created_at INTEGER NOT NULL,
  last_updated_at INTEGER NOT NULL,
  ttl_ms INTEGER,
  expires_at INTEGER,
  poll_interval_ms INTEGER NOT NULL,
  progress TEXT,
  result TEXT,
  error TEXT,
  cancel_requested INTEGER NOT NULL DEFAULT 0,
  bytes INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS tasks_expires ON tasks(expires_at) WHERE expires_at IS NOT NULL;
CREATE INDEX IF NOT EXISTS tasks_status ON tasks(status, seq);
CREATE INDEX IF NOT EXISTS tasks_principal ON tasks(principal, seq);
CREATE INDEX IF NOT EXISTS tasks_tool ON tasks(tool, seq);
CREATE TABLE IF NOT EXISTS input_requests(
  task_id TEXT NOT NULL,
  key TEXT NOT NULL,
  request TEXT NOT NULL,
  state TEXT NOT NULL,
  human_only INTEGER NOT NULL DEFAULT 0,
  response TEXT,
  answered_by TEXT,
  answered_at INTEGER,
  created_at INTEGER NOT NULL,
  PRIMARY KEY(task_id, key)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS events(
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  task_id TEXT NOT NULL,
  principal TEXT NOT NULL,
  at INTEGER NOT NULL,
  kind TEXT NOT NULL,
  data TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS events_task ON events(task_id, id);
CREATE INDEX IF NOT EXISTS events_deleted ON events(at) WHERE kind = 'deleted';
CREATE TABLE IF NOT EXISTS tokens(
  name TEXT PRIMARY KEY,
  hash TEXT NOT NULL UNIQUE,
  created_at INTEGER NOT NULL,
  revoked_at INTEGER,
  role TEXT NOT NULL DEFAULT 'agent'
);
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS idempotency_keys(
  principal TEXT NOT NULL,
  key TEXT NOT NULL,
  fingerprint TEXT NOT NULL,
  task_id TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  PRIMARY KEY(principal, key)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS idempotency_keys_expires ON idempotency_keys(expires_at);
CREATE TABLE IF NOT EXISTS task_counts(
  principal TEXT NOT NULL,
  tool TEXT NOT NULL,
  status TEXT NOT NULL,
  n INTEGER NOT NULL,
  PRIMARY KEY(principal, tool, status)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS audit(
  seq INTEGER PRIMARY KEY,
  at INTEGER NOT NULL,
  task_id TEXT,
  principal TEXT NOT NULL,
  server TEXT NOT NULL,
  tool TEXT NOT NULL,
  digest TEXT NOT NULL,
  decision TEXT NOT NULL,
  decided_by TEXT NOT NULL,
  human TEXT,
  rule TEXT,
  reason TEXT,
  arguments TEXT NOT NULL,
  edited_arguments TEXT,
  prev_hash TEXT NOT NULL,
  hash TEXT NOT NULL
);
"#;

/// Brings a store written by an earlier Taskdeck up to [`SCHEMA`] (which only creates what is
/// missing, so tables added since, such as `audit` (2026-12), appear empty there): columns
/// added since are added with their defaults. Errors: [`EngineError::Store`].
fn migrate(conn: &Connection) -> Result<(), EngineError> {
    // `task_counts` (added 2026-11-29) is filled once from the tasks of a store that had none;
    // from then on the writer keeps it in step.
    let counted = conn
        .prepare("SELECT 1 FROM meta WHERE key = 'task_counts'")?
        .exists([])?;
    if !counted {
        conn.execute_batch(
            "BEGIN IMMEDIATE;
             DELETE FROM task_counts;
             INSERT INTO task_counts(principal, tool, status, n)
               SELECT principal, tool, status, COUNT(*) FROM tasks GROUP BY 1, 2, 3;
             INSERT OR REPLACE INTO meta(key, value) VALUES ('task_counts', '1');
             COMMIT;",
        )?;
    }
    // The counts of completed tasks with an error result (`model::ERROR_COUNT_KEY`, added
    // 2026-12-01) are filled once from the tasks of a store that had none.
    let errors_counted = conn
        .prepare("SELECT 1 FROM meta WHERE key = 'task_counts_errors'")?
        .exists([])?;
    if !errors_counted {
        conn.execute_batch(&format!(
            "BEGIN IMMEDIATE;
             DELETE FROM task_counts WHERE status = '{key}';
             INSERT INTO task_counts(principal, tool, status, n)
               SELECT principal, tool, '{key}', COUNT(*) FROM tasks WHERE {cond} GROUP BY 1, 2;
             INSERT OR REPLACE INTO meta(key, value) VALUES ('task_counts_errors', '1');
             COMMIT;",
            key = crate::model::ERROR_COUNT_KEY,
            cond = crate::model::IS_ERROR_SQL,
        ))?;
    }
    for (table, column, decl) in ADDED {
        let present = conn
            .prepare("SELECT 1 FROM pragma_table_info(?1) WHERE name = ?2")?
            .exists(params![table, column])?;
        if !present {
            conn.execute_batch(&format!("ALTER TABLE {table} ADD COLUMN {column} {decl}"))?;
            tracing::info!("store: added column {table}.{column}");
        }
    }
    Ok(())
}

/// Columns added since the first stores, as (table, column, declaration): stores from before
/// 2026-11-29 11:34 lack `human_only`; stores made before tokens had roles lack `tokens.role`:
/// their tokens are agents' (the admin's token is known by its reserved name, not by this
/// column).
const ADDED: &[(&str, &str, &str)] = &[
    ("input_requests", "human_only", "INTEGER NOT NULL DEFAULT 0"),
    ("tokens", "role", "TEXT NOT NULL DEFAULT 'agent'"),
];

/// The 32-byte secret `meta.<name>` (hex), drawn the first time from `rand`'s thread RNG (a
/// CSPRNG seeded by the OS).
/// Errors: [`EngineError::Store`], also when the stored value is not 32 bytes of hex.
fn meta_secret(conn: &Connection, name: &str) -> Result<[u8; 32], EngineError> {
    conn.execute(
        "INSERT OR IGNORE INTO meta(key, value) VALUES (?1, ?2)",
        params![name, hex::encode(rand::random::<[u8; 32]>())],
    )?;
    let stored: String = conn.query_row(
        "SELECT value FROM meta WHERE key = ?1",
        params![name],
        |r| r.get(0),
    )?;
    hex::decode(&stored)
        .ok()
        .and_then(|b| <[u8; 32]>::try_from(b).ok())
        .ok_or_else(|| EngineError::Store(format!("meta.{name} is not 32 bytes of hex")))
}
