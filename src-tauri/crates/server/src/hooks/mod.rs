//! Agent hooks: Claude Code's and Codex CLI's command hooks (`taskdeck hook claude-code|codex`)
//! post each event they are given to `POST /v1/hooks/{agent}` (`adapters::hooks_api`), and this
//! module decides what the agent is told.
//!
//! - `PreToolUse`: only an explicit policy rule decides ([`decide`]); no rule, no decision (the
//!   agent goes on with its own permission flow). No task; a rule's decision goes to the audit
//!   log in the background ([`records`]: the answer waits neither for the masking of the
//!   call's credentials nor for the store); no rule, no write. This path is fast.
//! - `PermissionRequest`: the policy decides with its defaults (no rule → ask). An ask is a
//!   task of [`permission_task`], whose run asks the human; the hook waits for it. A tool of
//!   the agent's MCP server that is this Taskdeck ([`own_server`]) is allowed without a
//!   question: Taskdeck decides that call when it arrives. Every event but `SessionEnd` notes
//!   the servers the session sees, which then keep counting.
//! - `SessionStart`, `UserPromptSubmit`, `Notification`, `Stop`, `SubagentStop`, `SessionEnd`
//!   and Codex's `notify` (`agent-turn-complete`): each agent session is one task of
//!   [`session_task`], found again by its session id ([`sessions`]).
//!
//! Shapes of what the agents send and accept: [`event`] (input) and [`output`] (stdout).
//! Sources: Claude Code's hooks reference (<https://code.claude.com/docs/en/hooks>), Codex's
//! generated hook schemas (`openai/codex`, `codex-rs/hooks/schema/generated/`) and its legacy
//! `notify` payload (`codex-rs/hooks/src/legacy_notify.rs`).

pub mod claude_servers;
pub mod codex_servers;
pub mod decide;
pub mod dispatch;
pub mod event;
pub mod output;
pub mod own_server;
pub mod permission_task;
pub mod records;
pub mod session_task;
pub mod sessions;

use std::{sync::Arc, time::Duration};

use crate::{adapters::task_watch::TaskWatch, policy::Policy};
use taskdeck_engine::Engine;

/// The `timeout` (seconds) `taskdeck hook install` gives the `PermissionRequest` hook: how long
/// the agent lets the hook wait for the human. [`APPROVAL_EXPIRY`] ends before it.
pub const PERMISSION_HOOK_TIMEOUT_SECS: u64 = 900;

/// The longest a hook's approval waits for the human, counted from its first question (14 min,
/// one minute under [`PERMISSION_HOOK_TIMEOUT_SECS`]; the policy's terms may make it shorter;
/// with M of N humans the later questions share the first one's deadline); then the terms'
/// `onExpiry` applies (`ask`: the agent gets no decision and shows its own prompt).
pub const APPROVAL_EXPIRY: Duration = Duration::from_secs(840);

/// The `timeout` (seconds) of every other hook entry; the hook itself gives up when Taskdeck
/// has not answered within 150 ms of its start.
pub const EVENT_HOOK_TIMEOUT_SECS: u64 = 5;

/// Which coding agent sent an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Agent {
    /// Claude Code (`claude-code`).
    ClaudeCode,
    /// OpenAI's Codex CLI (`codex`).
    Codex,
}

impl Agent {
    /// Both agents, in the order they are listed.
    pub const ALL: [Agent; 2] = [Agent::ClaudeCode, Agent::Codex];

    /// `claude-code` or `codex`: the route's last segment, the `taskdeck hook` argument, the
    /// token's principal name, and the policy's server for the agent's own tools.
    pub fn name(self) -> &'static str {
        match self {
            Agent::ClaudeCode => "claude-code",
            Agent::Codex => "codex",
        }
    }

    /// How people call it: `Claude`, `Codex`.
    pub fn display(self) -> &'static str {
        match self {
            Agent::ClaudeCode => "Claude",
            Agent::Codex => "Codex",
        }
    }

    /// The agent named `name` ([`Agent::name`]).
    pub fn from_name(name: &str) -> Option<Agent> {
        Agent::ALL.into_iter().find(|a| a.name() == name)
    }

    /// True when the agent takes an edited call back (`updatedInput`): Claude Code does; Codex
    /// refuses it (its PermissionRequest hooks fail closed when it is present).
    pub fn takes_updated_input(self) -> bool {
        self == Agent::ClaudeCode
    }
}

/// What the hooks endpoint needs: the engine, the policy, the session tools, the queue of
/// session events and a watch on the approval tasks the hooks wait for.
pub struct Hooks {
    /// The engine the approval and session tasks live in.
    pub engine: Engine,
    /// Decides the permission events before any human is asked.
    pub policy: Arc<Policy>,
    /// The agents' session tools, which keep one task per agent session.
    pub sessions: Arc<session_task::SessionTool>,
    /// Wakes a waiting hook when its approval task changes.
    pub watch: Arc<TaskWatch>,
    /// Session events, applied one after another in arrival order by one worker
    /// ([`sessions::apply_in_order`]): a hook does not wait for the store.
    pub session_events: tokio::sync::mpsc::UnboundedSender<sessions::SessionEvent>,
    /// Which of Claude Code's MCP servers are this Taskdeck (their calls are decided here).
    pub own_servers: Arc<own_server::OwnServers>,
    /// Edited inputs holding credentials, for the hooks that print them
    /// ([`permission_task::EditedInputs`]).
    pub edited: Arc<permission_task::EditedInputs>,
    /// The policy's decisions waiting to be recorded in the audit log ([`records`]).
    pub records: records::Records,
}

impl Hooks {
    /// Registers the hooks' task tools ([`permission_task::PERMISSION_TOOL`] and one session
    /// tool per agent, [`session_task::tool_name`]) and returns what the endpoint uses; `port`
    /// is the one this Taskdeck listens on. Call inside a tokio runtime (it subscribes to the
    /// change feed), before `Engine::start`.
    pub fn register(engine: &Engine, policy: Arc<Policy>, port: u16) -> Arc<Hooks> {
        let edited = Arc::new(permission_task::EditedInputs::default());
        engine.register_tool(Arc::new(permission_task::PermissionTool::new(
            policy.clone(),
            edited.clone(),
        )));
        let sessions = session_task::SessionTool::new();
        for agent in Agent::ALL {
            engine.register_tool(Arc::new(session_task::SessionToolFor::new(
                agent,
                sessions.clone(),
            )));
        }
        let (session_events, queue) = tokio::sync::mpsc::unbounded_channel();
        let hooks = Arc::new(Hooks {
            engine: engine.clone(),
            policy,
            sessions,
            watch: TaskWatch::spawn(engine),
            session_events,
            own_servers: Arc::new(own_server::OwnServers::new(port)),
            edited,
            records: records::Records::spawn(engine.clone()),
        });
        tokio::spawn(sessions::apply_in_order(Arc::downgrade(&hooks), queue));
        hooks
    }
}
