//! A read-only look at a store file from outside its writer: what `taskdeck doctor`, `backup`
//! and `restore` read (schema, tokens, task count), safe while Taskdeck runs (WAL readers
//! block no one).

use std::path::{Path, PathBuf};

use rusqlite::{Connection, OptionalExtension, params};

use super::{integrity::open_read_only, schema};
use crate::EngineError;

/// A read-only connection to one store file.
pub struct StoreFile {
    path: PathBuf,
    conn: Connection,
}

impl StoreFile {
    /// Opens the store file of data dir `dir` (`dir/taskdeck.sqlite3`) read-only.
    /// Errors: [`EngineError::Store`] when it does not exist or cannot be opened.
    pub fn open_in(dir: &Path) -> Result<StoreFile, EngineError> {
        StoreFile::open(&dir.join(super::FILE_NAME))
    }

    /// Opens the SQLite file at `path` (a store or a backup of one) read-only.
    /// Errors: [`EngineError::Store`] when it does not exist or cannot be opened.
    pub fn open(path: &Path) -> Result<StoreFile, EngineError> {
        if !path.is_file() {
            return Err(EngineError::Store(format!(
                "{} does not exist",
                path.display()
            )));
        }
        let conn = open_read_only(path)
            .map_err(|e| EngineError::Store(format!("{}: {e}", path.display())))?;
        Ok(StoreFile {
            path: path.to_path_buf(),
            conn,
        })
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// What the file lacks of this Taskdeck's schema, one line each (e.g. "table audit is
    /// missing"); empty when current. A store written by an earlier Taskdeck gets what it
    /// lacks at its next start. Errors: [`EngineError::Store`].
    pub fn schema_gaps(&self) -> Result<Vec<String>, EngineError> {
        Ok(schema::gaps(&self.conn)?)
    }

    /// The hash (hex SHA-256) of principal `name`'s live token, `None` when it has none.
    /// Errors: [`EngineError::Store`].
    pub fn live_token_hash(&self, name: &str) -> Result<Option<String>, EngineError> {
        Ok(self
            .conn
            .query_row(
                "SELECT hash FROM tokens WHERE name = ?1 AND revoked_at IS NULL",
                params![name],
                |r| r.get(0),
            )
            .optional()?)
    }

    /// Tasks stored. Errors: [`EngineError::Store`].
    pub fn task_count(&self) -> Result<u64, EngineError> {
        Ok(self
            .conn
            .query_row("SELECT count(*) FROM tasks", [], |r| r.get::<_, i64>(0))?
            .max(0) as u64)
    }
}
