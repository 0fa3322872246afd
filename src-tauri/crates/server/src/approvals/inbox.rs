//! The inbox's view of every open question a principal may see: approvals of calls (their
//! `_meta["taskdeck/approval"]`) and other questions waiting for an answer (a `request_approval`
//! form, an upstream's elicitation), oldest waiting first, with identical pending calls (same
//! digest) gathered in groups. `GET /v1/approvals` serves it.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use super::{
    digest,
    question::{self, VerdictShown},
};
use taskdeck_engine::{Engine, EngineError, Principal, TaskStatus, store::ListFilter};

/// The most tasks waiting for input one listing reads.
pub const MAX_LISTED: usize = 5_000;

/// One open question.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PendingApproval {
    /// The task waiting.
    pub task_id: String,
    /// The input request's key (what `POST /v1/approvals/decide` answers).
    pub key: String,
    /// `"call"`: the approval of a call; `"question"`: any other question (a form).
    pub kind: String,
    /// Who waits (the task's principal).
    pub principal: String,
    /// The server of the call or question (`taskdeck` for Taskdeck's own tools and their
    /// questions; an upstream's name for its tools' questions; `(hosted)` for a hosted task's
    /// question, [`HOSTED_SERVER`]).
    pub server: String,
    /// The tool called (for a question: the task's tool; an upstream's under its own name).
    pub tool: String,
    /// The call's arguments as shown (for a question: the task's).
    pub arguments: Value,
    /// [`super::digest`] of server, tool and arguments.
    pub digest: String,
    /// The question's text.
    pub message: String,
    /// Since when it has waited, Unix ms: for a call, when it was first asked (`askedAtMs`:
    /// the same in every round of one approval, M of N or an edit asked again, so the queue
    /// keeps the call in its place); for a question, when it was asked.
    pub waiting_since_ms: i64,
    /// When it expires, Unix ms; `None` = never.
    pub expires_at_ms: Option<i64>,
    /// What it becomes then (`deny`, `allow`, `ask`); `None` for a question without terms.
    pub on_expiry: Option<String>,
    /// Distinct humans who must approve.
    pub required: u32,
    /// Humans who approved so far.
    pub approved_by: Vec<String>,
    /// The human whose edit of the call this is (the others approve that edit, not the agent's
    /// call); absent when nobody edited it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub edited_by: Option<String>,
    /// True when an edited call may be approved.
    pub editable: bool,
    /// The tool's input schema, for editing.
    pub input_schema: Option<Value>,
    /// The form of a question (`requestedSchema`).
    pub requested_schema: Option<Value>,
    /// What the policy said (calls only).
    pub verdict: Option<VerdictShown>,
    /// Only a human may answer (true for every call's approval).
    pub human_only: bool,
    /// True when `arguments` masks values of the call (credentials) that a person may read
    /// while the question is open (`POST /v1/tasks/{taskId}/reveal`).
    pub hidden_values: bool,
}

/// Identical pending calls.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalGroup {
    /// Their digest.
    pub digest: String,
    /// How many (at least 2).
    pub count: usize,
    /// Their tasks, oldest waiting first.
    pub task_ids: Vec<String>,
}

/// `GET /v1/approvals`.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct ApprovalList {
    /// Oldest waiting first.
    pub approvals: Vec<PendingApproval>,
    /// Groups of identical calls, largest first.
    pub groups: Vec<ApprovalGroup>,
}

/// Every open question of the tasks `principal` may see. Errors: [`EngineError::Store`].
pub fn pending(engine: &Engine, principal: &Principal) -> Result<ApprovalList, EngineError> {
    let mut approvals = Vec::new();
    let mut filter = ListFilter {
        statuses: vec![TaskStatus::InputRequired],
        limit: 1000,
        ..ListFilter::default()
    };
    let mut read = 0;
    loop {
        let page = engine.page(principal, filter.clone())?;
        read += page.tasks.len();
        for task in &page.tasks {
            // A task deleted since the page was read is simply no longer waiting.
            let rounds = match engine.input_rounds(principal, &task.task_id) {
                Ok(rounds) => rounds,
                Err(EngineError::NotFound) => continue,
                Err(e) => return Err(e),
            };
            // A hosted task's tool is its host's own name, which may read like a gateway call
            // (`fs__write_file`): its questions are not said to be any server's. Looked up for
            // a question only (an approval of a call carries its server in `_meta`).
            let mut hosted = None;
            for round in rounds.iter().filter(|r| r.state == "outstanding") {
                let is_hosted = match (hosted, question::meta_of(&round.request)) {
                    (_, Some(_)) => false,
                    (Some(known), None) => known,
                    (None, None) => *hosted.insert(engine.is_hosted_task(&task.task_id)?),
                };
                if let Some(a) = describe(task, round, is_hosted) {
                    approvals.push(a);
                }
            }
        }
        match page.next_seq {
            Some(seq) if read < MAX_LISTED => filter.before_seq = Some(seq),
            _ => break,
        }
    }
    approvals.sort_by(|a, b| {
        (a.waiting_since_ms, &a.task_id, &a.key).cmp(&(b.waiting_since_ms, &b.task_id, &b.key))
    });
    // Calls whose arguments mask values are alike where they are shown, not necessarily where
    // they are masked: each is decided on its own.
    let mut by_digest: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for a in approvals
        .iter()
        .filter(|a| a.kind == "call" && !a.hidden_values)
    {
        by_digest
            .entry(&a.digest)
            .or_default()
            .push(a.task_id.clone());
    }
    let mut groups: Vec<ApprovalGroup> = by_digest
        .into_iter()
        .filter(|(_, ids)| ids.len() >= 2)
        .map(|(digest, task_ids)| ApprovalGroup {
            digest: digest.to_string(),
            count: task_ids.len(),
            task_ids,
        })
        .collect();
    groups.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.digest.cmp(&b.digest)));
    Ok(ApprovalList { approvals, groups })
}

/// The `server` of a hosted task's question: no server's name can be it (server names are
/// `a-z 0-9 _ -`), so it never reads as a gateway call's.
pub const HOSTED_SERVER: &str = "(hosted)";

/// The inbox entry of one outstanding round, `None` for a request that is not a form
/// elicitation (sampling, roots: the agent answers those). `hosted`: the task is a hosted
/// task's (its server is [`HOSTED_SERVER`], its tool its name whole).
fn describe(
    task: &taskdeck_engine::TaskRecord,
    round: &taskdeck_engine::InputRound,
    hosted: bool,
) -> Option<PendingApproval> {
    let request = &round.request;
    if request.get("method").and_then(Value::as_str) != Some("elicitation/create") {
        return None;
    }
    let message = request
        .pointer("/params/message")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let requested_schema = request.pointer("/params/requestedSchema").cloned();
    Some(match question::meta_of(request) {
        Some(meta) => PendingApproval {
            task_id: task.task_id.clone(),
            key: round.key.clone(),
            kind: "call".into(),
            principal: task.principal.clone(),
            server: meta.server,
            tool: meta.tool,
            arguments: meta.arguments,
            digest: meta.digest,
            message,
            waiting_since_ms: meta.asked_at_ms.unwrap_or(round.created_at_ms),
            expires_at_ms: meta.expires_at_ms,
            on_expiry: Some(meta.on_expiry),
            required: meta.required,
            approved_by: meta.approved_by,
            edited_by: meta.edited_by,
            hidden_values: meta.hidden_values,
            editable: meta.editable,
            input_schema: meta.input_schema,
            requested_schema,
            verdict: Some(meta.verdict),
            human_only: round.human_only,
        },
        None => {
            // An upstream tool's own question names its server; Taskdeck's tools' name Taskdeck.
            let (server, tool) = match hosted {
                true => (HOSTED_SERVER, task.tool.as_str()),
                false => crate::gateway::catalog::split(&task.tool)
                    .unwrap_or((crate::policy::TASKDECK_SERVER, &task.tool)),
            };
            PendingApproval {
                task_id: task.task_id.clone(),
                key: round.key.clone(),
                kind: "question".into(),
                principal: task.principal.clone(),
                server: server.into(),
                tool: tool.into(),
                digest: digest(server, tool, &task.arguments),
                arguments: task.arguments.clone(),
                message,
                waiting_since_ms: round.created_at_ms,
                expires_at_ms: None,
                on_expiry: None,
                required: 1,
                approved_by: Vec::new(),
                edited_by: None,
                hidden_values: false,
                editable: false,
                input_schema: None,
                requested_schema,
                verdict: None,
                human_only: round.human_only,
            }
        }
    })
}
