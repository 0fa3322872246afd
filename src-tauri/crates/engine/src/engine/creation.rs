//! Task creation: a task is stored (with its `created` event, and its idempotency key when
//! one is given) in one write, and only then is its tool started (SEP-2663 §Task Creation:
//! durable before the `CreateTaskResult`).

use std::sync::Arc;

use serde_json::{Value, json};

use super::{
    super::{
        clock::now_ms,
        idempotency::{self, Creation},
        limits,
    },
    Engine, EngineError, TaskRecord, TaskTool,
};
use crate::{Principal, store::WriteCtx};

impl Engine {
    /// Creates a task owned by `principal` for `tool` with `arguments`, commits it, and only then
    /// starts the tool. The returned record is what `tasks/get` would return right now
    /// (SEP-2663 §Task Creation: durable before the CreateTaskResult).
    ///
    /// Errors: [`EngineError::Invalid`] for an unknown tool or arguments over
    /// [`limits::ARGUMENTS_MAX_BYTES`] as JSON; [`EngineError::Store`].
    pub async fn create_task(
        &self,
        principal: &Principal,
        tool: &str,
        arguments: Value,
    ) -> Result<Arc<TaskRecord>, EngineError> {
        self.create_task_with_ttl(principal, tool, arguments, None)
            .await
    }

    /// [`Engine::create_task`] with the retention the requestor asked for (ms from creation;
    /// 2025-11-25 `params.task.ttl`). The server's bounds hold: at least
    /// [`Engine::MIN_REQUESTED_TTL_MS`], at most the configured default ttlMs (a client may
    /// shorten its task's retention, never extend it past the default). `None`: the default.
    ///
    /// Errors: those of [`Engine::create_task`].
    pub async fn create_task_with_ttl(
        &self,
        principal: &Principal,
        tool: &str,
        arguments: Value,
        requested_ttl_ms: Option<u64>,
    ) -> Result<Arc<TaskRecord>, EngineError> {
        match self
            .create(principal, tool, arguments, None, requested_ttl_ms)
            .await?
        {
            Creation::Created(task) => Ok(task),
            // Only a creation that names a key can find one.
            Creation::Replayed { .. } | Creation::Conflict { .. } => Err(EngineError::Store(
                "a creation without an idempotency key found one".into(),
            )),
        }
    }

    /// [`Engine::create_task`] at most once per `principal` and idempotency `key` (kept
    /// [`idempotency::KEY_KEPT_MS`]): the first call creates the task and stores the key with it
    /// in one write; a later one with the same tool and arguments (members in any order) gets
    /// that task back ([`Creation::Replayed`]), one with another request gets
    /// [`Creation::Conflict`]. Racing calls with one key create one task. The key is not
    /// checked here (the adapter speaks its wire rules).
    ///
    /// Errors: those of [`Engine::create_task`].
    pub async fn create_task_once(
        &self,
        principal: &Principal,
        tool: &str,
        arguments: Value,
        key: &str,
    ) -> Result<Creation, EngineError> {
        let fingerprint = idempotency::fingerprint(tool, &arguments);
        self.create(
            principal,
            tool,
            arguments,
            Some((key.to_string(), fingerprint)),
            None,
        )
        .await
    }

    /// Creates a task (see [`Engine::create_task_with_ttl`]); with `key` = (idempotency key,
    /// fingerprint), first looks the key up in the same write (see [`Engine::create_task_once`]).
    async fn create(
        &self,
        principal: &Principal,
        tool: &str,
        arguments: Value,
        key: Option<(String, String)>,
        requested_ttl_ms: Option<u64>,
    ) -> Result<Creation, EngineError> {
        let Some(tool_impl) = self.tool(tool) else {
            return Err(EngineError::Invalid(format!("unknown tool: {tool}")));
        };
        limits::check_arguments_size(tool, &arguments)?;
        // Secrets never reach the store (or any view of it): the run gets them in memory only.
        let (stored, run_arguments) = match tool_impl.redact_arguments(&arguments) {
            Some(shown) => (shown, Some(arguments)),
            None => (arguments, None),
        };
        let arguments = stored;
        let now = now_ms();
        let ttl_ms = match (requested_ttl_ms, self.parts.config.default_ttl_ms) {
            (Some(asked), Some(max)) => Some(asked.clamp(Self::MIN_REQUESTED_TTL_MS, max)),
            (Some(asked), None) => {
                Some(asked.clamp(Self::MIN_REQUESTED_TTL_MS, Self::MAX_REQUESTED_TTL_MS))
            }
            (None, default) => default,
        };
        let task = TaskRecord::working(
            now,
            tool,
            arguments,
            &principal.name,
            ttl_ms,
            self.parts.config.new_task_poll_interval_ms(),
        );
        let keyed = key.is_some();
        // Stored and started on a task of its own: if the caller goes away while the write is
        // queued (the client closed its connection), the write still commits, and a task that
        // is stored must also be started, or it would stay `working` for ever.
        let engine = self.clone();
        let created = tokio::spawn(async move {
            let creation = engine
                .parts
                .store
                .write(move |w| {
                    // The key is looked up and stored by the writer, in the creating write:
                    // racing creations with one key are serialized here.
                    if let Some((key, fingerprint)) = &key
                        && let Some((stored, task_id)) =
                            idempotency::lookup(w.conn, &task.principal, key, now)?
                    {
                        if stored != *fingerprint {
                            return Ok(Creation::Conflict { task_id });
                        }
                        let task = w.load(&task_id)?.map(Arc::new);
                        return Ok(Creation::Replayed { task_id, task });
                    }
                    let task = insert_new(w, task, now)?;
                    if let Some((key, fingerprint)) = &key {
                        idempotency::remember(
                            w.conn,
                            &task.principal,
                            key,
                            fingerprint,
                            &task.task_id,
                            now,
                        )?;
                    }
                    Ok(Creation::Created(task))
                })
                .await?;
            if let Creation::Created(task) = &creation {
                engine.started(task, tool_impl, run_arguments);
                if keyed {
                    engine.note_deadline_at(now + idempotency::KEY_KEPT_MS);
                }
            }
            Ok(creation)
        });
        created
            .await
            .map_err(|e| EngineError::Store(format!("task creation stopped: {e}")))?
    }

    /// After a task was stored: its deadline and the counts the sweeper's caps use, then its
    /// tool. `arguments`: what the run gets when it is not the stored arguments (secrets
    /// redacted).
    fn started(&self, task: &Arc<TaskRecord>, tool: Arc<dyn TaskTool>, arguments: Option<Value>) {
        self.note_created(task);
        self.spawn_executor(task.clone(), tool, false, arguments);
    }
}

/// Stores the new task `task` with its `created` event at `now` (ms since the epoch), inside a
/// write; returns it with its `seq`. Errors: [`EngineError::Store`].
pub(super) fn insert_new(
    w: &mut WriteCtx<'_>,
    task: TaskRecord,
    now: i64,
) -> Result<Arc<TaskRecord>, EngineError> {
    w.event(
        &task,
        now,
        "created",
        json!({"status": "working", "tool": task.tool, "ttlMs": task.ttl_ms}),
    )?;
    w.insert(task)
}
