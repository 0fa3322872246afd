//! Task lists: one page of the tasks a filter selects (newest first, with a cursor) and the
//! counts per status, read in one snapshot; free-text filters use the search index when it is
//! attached ([`crate::search`]).

use std::collections::BTreeMap;

use rusqlite::{Connection, params};

use super::{
    Store,
    events::newest_event_id,
    input_requests::outstanding_inputs,
    tasks::{TASK_COLUMNS, row_task},
};
use crate::{
    EngineError, TaskRecord, TaskStatus,
    model::{ERROR_COUNT_KEY, IS_ERROR_SQL},
    search,
};

/// Filters for [`Store::page`]. Empty fields match everything.
#[derive(Debug, Clone, Default)]
pub struct ListFilter {
    /// Any of these statuses.
    pub statuses: Vec<TaskStatus>,
    /// This tool's tasks only.
    pub tool: Option<String>,
    /// Owner; callers that are agents must set this to themselves.
    pub principal: Option<String>,
    /// Free text, matched (case-insensitively) against tool, arguments, status message, result.
    pub query: Option<String>,
    /// Only completed tasks whose result is an error ([`TaskRecord::is_error`]).
    pub errors_only: bool,
    /// Cursor: only tasks older than this `seq`.
    pub before_seq: Option<i64>,
    /// Page size, 1..=1000.
    pub limit: usize,
}

/// One page of the task list as [`Store::page`] reads it.
#[derive(Debug, Clone)]
pub struct Page {
    /// Newest first, at most the filter's `limit`.
    pub tasks: Vec<TaskRecord>,
    /// The `seq` to pass as `before_seq` for the next page, when there is one.
    pub next_seq: Option<i64>,
    /// Tasks per status (see [`Store::counts`]).
    pub counts: BTreeMap<String, i64>,
    /// The newest timeline event the page and the counts reflect (0 when there is none).
    pub event_id: i64,
}

impl Store {
    /// Task counts per status for the tasks `filter` selects, ignoring its status, error,
    /// cursor and limit (so a UI can show how many of each status its other filters leave),
    /// plus [`ERROR_COUNT_KEY`]: how many of the completed ones have an error result (when
    /// there are any). Only keys with a count above 0 are present.
    ///
    /// Without a free-text query the answer comes from `task_counts` (kept by the writer in
    /// the transactions that change the tasks), so it costs the same for 10 or 1,000,000 tasks.
    pub fn counts(&self, filter: &ListFilter) -> Result<BTreeMap<String, i64>, EngineError> {
        self.with_index(filter, |indexed| {
            self.read(|c| count_tasks(c, filter, indexed))
        })
    }

    /// Runs `read` with the search index when it may be used (`true`), and again without it
    /// when a search that uses it failed: such a search is answered by scanning the tasks
    /// instead, and when a check of the index then finds it damaged (at most once a minute,
    /// [`search::IndexHealth::may_check`]) it is marked so ([`search::IndexHealth`]): later
    /// searches go without it and the next start rebuilds it. The failure is logged.
    fn with_index<R>(
        &self,
        filter: &ListFilter,
        read: impl Fn(bool) -> Result<R, EngineError>,
    ) -> Result<R, EngineError> {
        let searches = filter
            .query
            .as_deref()
            .is_some_and(|q| search::candidate_match(q).is_some());
        if !searches || !self.state.readers.has_search() {
            return read(self.state.readers.has_search());
        }
        match read(true) {
            Err(e @ EngineError::Store(_)) => {
                let without = read(false)?;
                self.state.readers.search_failed(&e);
                Ok(without)
            }
            r => r,
        }
    }

    /// One page of the tasks `filter` selects (newest first, with the cursor for the next), its
    /// [`Self::counts`], and the id of the newest timeline event, all read in one snapshot: the
    /// page and the counts reflect exactly the events up to that id, so a change feed resumed
    /// after it (`/v1/events` with `Last-Event-ID`) brings every later change once (a task
    /// deleted meanwhile: only its `deleted` event). Errors: [`EngineError::Store`].
    pub fn page(&self, filter: &ListFilter) -> Result<Page, EngineError> {
        self.with_index(filter, |indexed| self.page_with(filter, indexed))
    }

    /// [`Self::page`], with the search index or not (`indexed`).
    fn page_with(&self, filter: &ListFilter, indexed: bool) -> Result<Page, EngineError> {
        // The event id, the counts and the tasks come from the same commit.
        self.read_snapshot(|c| {
            let event_id = newest_event_id(c)?;
            let counts = count_tasks(c, filter, indexed)?;
            let TaskSlice { tasks, next_seq } = list_tasks(c, filter, indexed)?;
            Ok(Page {
                tasks,
                next_seq,
                counts,
                event_id,
            })
        })
    }
}

/// See [`Store::counts`].
fn count_tasks(
    c: &Connection,
    filter: &ListFilter,
    indexed: bool,
) -> Result<BTreeMap<String, i64>, EngineError> {
    if filter.query.is_none() {
        let mut stmt = c.prepare_cached(
            "SELECT status, SUM(n) FROM task_counts
             WHERE (?1 IS NULL OR principal = ?1) AND (?2 IS NULL OR tool = ?2)
             GROUP BY status HAVING SUM(n) > 0",
        )?;
        let rows = stmt.query_map(params![filter.principal, filter.tool], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?))
        })?;
        return Ok(rows.collect::<Result<_, _>>()?);
    }
    let SqlFilter { clause, args } = filter_clause(
        &ListFilter {
            statuses: Vec::new(),
            errors_only: false,
            before_seq: None,
            ..filter.clone()
        },
        indexed,
    );
    let sql = format!(
        "SELECT status, COUNT(*), SUM({IS_ERROR_SQL}) FROM tasks WHERE 1=1{clause} GROUP BY status"
    );
    let mut stmt = c.prepare_cached(&sql)?;
    let rows = stmt.query_map(rusqlite::params_from_iter(args.iter()), |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, i64>(1)?,
            r.get::<_, i64>(2)?,
        ))
    })?;
    let mut counts = BTreeMap::new();
    for row in rows {
        let (status, n, errors) = row?;
        counts.insert(status, n);
        if errors > 0 {
            counts.insert(ERROR_COUNT_KEY.to_string(), errors);
        }
    }
    Ok(counts)
}

/// A filter as SQL: `AND ...` conditions to append to `WHERE 1=1`, and their arguments.
struct SqlFilter {
    clause: String,
    args: Vec<rusqlite::types::Value>,
}

/// The conditions and their arguments for `f` (statuses, tool, principal, query, cursor).
/// `indexed`: the connection has the search index attached (see [`search`]).
fn filter_clause(f: &ListFilter, indexed: bool) -> SqlFilter {
    let mut sql = String::new();
    let mut args: Vec<rusqlite::types::Value> = Vec::new();
    if !f.statuses.is_empty() {
        let marks: Vec<&str> = f.statuses.iter().map(|_| "?").collect();
        sql.push_str(&format!(" AND status IN ({})", marks.join(",")));
        args.extend(f.statuses.iter().map(|s| s.as_str().to_string().into()));
    }
    if f.errors_only {
        sql.push_str(&format!(" AND {IS_ERROR_SQL}"));
    }
    if let Some(tool) = &f.tool {
        sql.push_str(" AND tool = ?");
        args.push(tool.clone().into());
    }
    if let Some(p) = &f.principal {
        sql.push_str(" AND principal = ?");
        args.push(p.clone().into());
    }
    if let Some(q) = f.query.as_ref().filter(|q| !q.is_empty()) {
        let pattern = format!(
            "%{}%",
            q.replace('\\', "\\\\")
                .replace('%', "\\%")
                .replace('_', "\\_")
        );
        // Candidates: the index's matches, the tasks with more text than it holds, the live
        // tasks (the index holds settled tasks only) and every task changed since its last pass.
        if let Some(candidates) = search::candidate_match(q).filter(|_| indexed) {
            let n = args.len() + 1;
            sql.push_str(&format!(
                " AND seq IN (SELECT rowid FROM search.task_text WHERE task_text MATCH ?{n}
                  UNION ALL SELECT seq FROM search.long_tasks
                  UNION ALL SELECT seq FROM tasks WHERE status IN ('working', 'input_required')
                  UNION ALL SELECT seq FROM tasks WHERE task_id IN (SELECT task_id FROM events
                    WHERE id > (SELECT ifnull(max(value), 0) FROM search.meta WHERE key = 'event_id')))"
            ));
            args.push(candidates.into());
        }
        let n = args.len() + 1;
        if q.is_ascii() {
            sql.push_str(&format!(
                " AND (tool LIKE ?{n} ESCAPE '\\' OR arguments LIKE ?{n} ESCAPE '\\'
                  OR COALESCE(status_message,'') LIKE ?{n} ESCAPE '\\' OR COALESCE(result,'') LIKE ?{n} ESCAPE '\\'
                  OR task_id LIKE ?{n} ESCAPE '\\')"
            ));
            args.push(pattern.into());
        } else {
            sql.push_str(&format!(
                " AND (td_contains(tool, ?{n}) OR td_contains(arguments, ?{n})
                  OR td_contains(status_message, ?{n}) OR td_contains(result, ?{n}))"
            ));
            args.push(search::fold_case(q).into());
        }
    }
    if let Some(before) = f.before_seq {
        sql.push_str(" AND seq < ?");
        args.push(before.into());
    }
    // Positional `?` after a numbered `?N` continue from N+1 in SQLite, so numbering stays right.
    SqlFilter { clause: sql, args }
}

/// One page of tasks as [`list_tasks`] reads it.
struct TaskSlice {
    /// Newest first, at most the filter's `limit`.
    tasks: Vec<TaskRecord>,
    /// The `seq` to continue after, when more tasks match.
    next_seq: Option<i64>,
}

/// The tasks `f` selects, newest first, with their outstanding input requests.
fn list_tasks(c: &Connection, f: &ListFilter, indexed: bool) -> Result<TaskSlice, EngineError> {
    let SqlFilter { clause, args } = filter_clause(f, indexed);
    let mut sql = format!("SELECT {TASK_COLUMNS} FROM tasks WHERE 1=1{clause}");
    let limit = f.limit.clamp(1, 1000);
    sql.push_str(&format!(" ORDER BY seq DESC LIMIT {}", limit + 1));
    // Positional `?` after a numbered `?N` continue from N+1 in SQLite, so numbering stays right.
    let mut stmt = c.prepare(&sql)?;
    let rows = stmt.query_map(rusqlite::params_from_iter(args.iter()), row_task)?;
    let mut tasks: Vec<TaskRecord> = rows.collect::<Result<_, _>>()?;
    let next = if tasks.len() > limit {
        tasks.truncate(limit);
        tasks.last().map(|t| t.seq)
    } else {
        None
    };
    for t in tasks
        .iter_mut()
        .filter(|t| t.status == TaskStatus::InputRequired)
    {
        t.input_requests = outstanding_inputs(c, &t.task_id)?;
    }
    Ok(TaskSlice {
        tasks,
        next_seq: next,
    })
}
