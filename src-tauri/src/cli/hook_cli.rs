//! `taskdeck hook claude-code|codex`: the command hook a coding agent runs. It reads the event
//! from stdin, posts it to the running Taskdeck (`POST /v1/hooks/{agent}`) with the agent's token,
//! prints the answer (the JSON the agent's hooks reference documents) and exits 0.
//! `taskdeck hook codex-notify JSON` is Codex's `notify` program (Codex appends one JSON
//! argument); it prints nothing. The `taskdeck-hook` binary runs the same commands without the
//! `hook` word ([`HookBinary`]).
//!
//! It never hangs the agent: when Taskdeck is not running, refuses, or has not answered within
//! [`FIRST_ANSWER`] of the event read (saying so on stderr), it prints nothing (the agent goes on as if there were
//! no hook: for a permission request, its own prompt) and exits 0. Once Taskdeck answered, a
//! permission request waits for the human as long as the agent lets it (Taskdeck's approval
//! expires first and then answers "no decision") while Taskdeck's heartbeat newlines keep
//! coming; after [`SILENCE`] without a byte it prints nothing and exits 0.
//!
//! Where: `--port`/`TASKDECK_PORT`, else the port of the Taskdeck running on the data dir; the
//! token: `--token`/`TASKDECK_TOKEN`, else `<config dir>/hooks/<agent>.token` (written by
//! `taskdeck hook install`).

use std::{
    io::{Read, Write},
    path::PathBuf,
    process::ExitCode,
    time::{Duration, Instant},
};

use taskdeck_server::{
    adapters::hooks_api::{
        ANSWER_BY_HEADER, CLAUDE_CONFIG_HEADER, CLAUDE_PROJECT_HEADER, CODEX_HOME_HEADER, HEARTBEAT,
    },
    hooks::{Agent, own_server::AgentEnv},
};

use super::{
    agent_token,
    hook_install::{self, Placement},
};

/// How long after its start the hook waits for Taskdeck's first answer (the response's
/// headers; for every event but a permission request, the whole answer) before it gives up and
/// prints nothing. With the process's start and exit, the hook is done within 200 ms.
pub const FIRST_ANSWER: Duration = Duration::from_millis(150);

/// What a large event adds to [`FIRST_ANSWER`], per MiB of it (Taskdeck reads, checks and
/// matches it against the policy), up to [`FIRST_ANSWER_MAX`]: a deny rule must not be skipped
/// for want of time to read the call it covers.
const FIRST_ANSWER_PER_MIB: Duration = Duration::from_millis(100);

/// The longest first-answer wait, whatever the event's size: under the 5 s Claude Code gives
/// the hook's `PreToolUse` entry.
const FIRST_ANSWER_MAX: Duration = Duration::from_secs(3);

/// How long the hook waits for Taskdeck's first answer to an event of `bytes` bytes.
fn first_answer_within(bytes: usize) -> Duration {
    let extra = FIRST_ANSWER_PER_MIB.mul_f64(bytes as f64 / (1024.0 * 1024.0));
    (FIRST_ANSWER + extra).min(FIRST_ANSWER_MAX)
}

/// How long a waiting permission request lets Taskdeck be silent (no byte) once it answered:
/// three of the server's heartbeat newlines ([`HEARTBEAT`], one a second). Then the hook
/// prints nothing and exits 0.
pub const SILENCE: Duration = Duration::from_millis(3 * HEARTBEAT.as_millis() as u64);

/// Which agent's files `install`/`uninstall` change.
#[derive(Clone, Copy, clap::ValueEnum)]
pub enum AgentArg {
    /// Claude Code
    ClaudeCode,
    /// OpenAI's Codex CLI
    Codex,
}

impl From<AgentArg> for Agent {
    fn from(a: AgentArg) -> Agent {
        match a {
            AgentArg::ClaudeCode => Agent::ClaudeCode,
            AgentArg::Codex => Agent::Codex,
        }
    }
}

/// Where install/uninstall write: the user's files (default) or the project's.
#[derive(clap::Args)]
pub struct ScopeArgs {
    /// The user's settings (~/.claude/settings.json, ~/.codex/hooks.json) [default]
    #[arg(long, conflicts_with = "project")]
    user: bool,
    /// The project's settings (./.claude/settings.json, ./.codex/hooks.json)
    #[arg(long)]
    project: bool,
    /// The directory that holds .claude / .codex [default: home for --user, the current
    /// directory for --project]
    #[arg(long)]
    dir: Option<PathBuf>,
}

/// One `taskdeck hook` command.
#[derive(clap::Subcommand)]
pub enum HookCommand {
    /// Claude Code's command hook: the event on stdin, the decision on stdout
    ClaudeCode(Target),
    /// Codex's command hook: the event on stdin, the decision on stdout
    Codex(Target),
    /// Codex's notify program: one JSON argument (agent-turn-complete)
    CodexNotify {
        /// The notification, as Codex passes it
        payload: String,
        /// Where Taskdeck is.
        #[command(flatten)]
        target: Target,
    },
    /// Merge Taskdeck's hooks into the agent's settings (after a backup) and make its token
    Install {
        /// The agent whose settings change
        agent: AgentArg,
        /// Whose settings: the user's or the project's.
        #[command(flatten)]
        scope: ScopeArgs,
    },
    /// Remove exactly Taskdeck's hooks from the agent's settings
    Uninstall {
        /// The agent whose settings change
        agent: AgentArg,
        /// Whose settings: the user's or the project's.
        #[command(flatten)]
        scope: ScopeArgs,
    },
}

/// Where the hook finds Taskdeck.
#[derive(clap::Args)]
pub struct Target {
    /// Port of the running Taskdeck [default: the one serving the data dir, else 4747]
    #[arg(long, env = "TASKDECK_PORT")]
    port: Option<u16>,
    /// [default: TASKDECK_TOKEN, else <config dir>/hooks/<agent>.token]
    #[arg(long, env = "TASKDECK_TOKEN", hide_env_values = true)]
    token: Option<String>,
}

/// The command line of the `taskdeck-hook` binary: `taskdeck-hook [--data-dir D]
/// [--config-dir C] <HookCommand>`, the same as `taskdeck hook ...`.
#[derive(clap::Parser)]
#[command(
    name = "taskdeck-hook",
    version,
    about = "Taskdeck's Claude Code and Codex hooks (docs/hooks.md)"
)]
pub struct HookBinary {
    /// Where the task store lives [default: XDG data dir, e.g. ~/.local/share/taskdeck]
    #[arg(long, global = true, env = "TASKDECK_DATA_DIR")]
    data_dir: Option<PathBuf>,
    /// Where the admin token file lives [default: XDG config dir, e.g. ~/.config/taskdeck]
    #[arg(long, global = true, env = "TASKDECK_CONFIG_DIR")]
    config_dir: Option<PathBuf>,
    #[command(subcommand)]
    cmd: HookCommand,
}

/// True when `args` (the process's, its program first) are an agent running a hook: not
/// `install` or `uninstall`, and an event came on stdin from a program, not a terminal (a
/// person typing a wrong command line, or a setup script misspelling `install` with nothing
/// on stdin, gets clap's usage and exit 2 as from any command). Any subcommand counts, a
/// misspelt one too (`claude-cod`): the agent runs whatever its entry says. Reads stdin's first
/// byte (the process exits next).
pub fn runs_an_event(args: &[std::ffi::OsString]) -> bool {
    use std::io::Read;
    if args
        .iter()
        .skip(1)
        .filter_map(|a| a.to_str())
        .any(|w| matches!(w, "install" | "uninstall"))
    {
        return false;
    }
    let stdin = std::io::stdin();
    if std::io::IsTerminal::is_terminal(&stdin) {
        return false;
    }
    let mut first = [0u8; 1];
    matches!(stdin.lock().read(&mut first), Ok(1))
}

/// What to do with a command line that clap could not parse: `None` to let clap say it and
/// exit 2, as every command does; `Some(exit 0)` after saying it on stderr when the line runs
/// an agent's hook event ([`runs_an_event`]). An agent reads exit 2 from a `PreToolUse` hook
/// as "block this call" (Claude Code's hooks reference), so a hook entry gone wrong (an option
/// a newer Taskdeck no longer takes) would block every tool call; instead the agent goes on
/// with its own prompts, as when Taskdeck is not running (docs/hooks.md: "Exit code is always
/// 0").
pub fn step_aside(e: &clap::Error, args: &[std::ffi::OsString]) -> Option<ExitCode> {
    use clap::error::ErrorKind;
    if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion)
        || !runs_an_event(args)
    {
        return None;
    }
    let why = match e.kind() {
        ErrorKind::MissingSubcommand | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            "it names no agent (claude-code, codex or codex-notify)".to_string()
        }
        _ => e
            .to_string()
            .lines()
            .next()
            .unwrap_or_default()
            .trim_start_matches("error: ")
            .to_string(),
    };
    eprintln!(
        "taskdeck-hook: the hook's command line is wrong, so this event goes on without Taskdeck: {why}"
    );
    Some(ExitCode::SUCCESS)
}

impl HookBinary {
    /// Runs the parsed command line.
    pub fn run(self) -> ExitCode {
        let dirs = Dirs {
            data_dir: taskdeck_server::paths::data_dir(self.data_dir.clone()),
            config_dir: taskdeck_server::paths::config_dir(self.config_dir.clone()),
            explicit: (self.data_dir, self.config_dir),
        };
        run(self.cmd, dirs)
    }
}

/// The data and config dirs, resolved and as given on the command line.
pub struct Dirs {
    /// The data dir, given or default.
    pub data_dir: PathBuf,
    /// The config dir, given or default.
    pub config_dir: PathBuf,
    /// `--data-dir` and `--config-dir` as given (`None`: not given).
    pub explicit: (Option<PathBuf>, Option<PathBuf>),
}

/// Runs `cmd`.
pub fn run(cmd: HookCommand, dirs: Dirs) -> ExitCode {
    let placement = |agent: AgentArg, scope: ScopeArgs| Placement {
        agent: agent.into(),
        project: scope.project,
        dir: scope.dir,
        data_dir: dirs.data_dir.clone(),
        config_dir: dirs.config_dir.clone(),
        explicit_dirs: dirs.explicit.clone(),
    };
    match cmd {
        HookCommand::ClaudeCode(t) => hook(Agent::ClaudeCode, None, t, &dirs),
        HookCommand::Codex(t) => hook(Agent::Codex, None, t, &dirs),
        HookCommand::CodexNotify { payload, target } => {
            hook(Agent::Codex, Some(payload), target, &dirs)
        }
        HookCommand::Install { agent, scope } => hook_install::install(&placement(agent, scope)),
        HookCommand::Uninstall { agent, scope } => {
            hook_install::uninstall(&placement(agent, scope))
        }
    }
}

/// The hook event on `input`: its first JSON value, as text, read up to its end and no
/// further (an agent that leaves stdin open after the event does not hang the hook). Errors:
/// the input is empty, not JSON, or not UTF-8.
fn read_event(input: impl Read) -> Result<String, String> {
    let mut values = serde_json::Deserializer::from_reader(input).into_iter::<serde_json::Value>();
    match values.next() {
        Some(Ok(event)) => Ok(event.to_string()),
        Some(Err(e)) => Err(format!("the hook event on stdin is not JSON ({e})")),
        None => Err("no hook event on stdin".into()),
    }
}

/// Posts the event (`payload`, else stdin) and prints the answer; always exit 0.
fn hook(agent: Agent, payload: Option<String>, t: Target, dirs: &Dirs) -> ExitCode {
    let printed = payload.is_none();
    let body = match payload {
        Some(p) => p,
        None => match read_event(std::io::stdin().lock()) {
            Ok(event) => event,
            Err(why) => {
                eprintln!("taskdeck: {why}; no decision");
                return ExitCode::SUCCESS;
            }
        },
    };
    let Some(token) = t
        .token
        .or_else(|| agent_token::read_token(&dirs.config_dir, agent))
    else {
        eprintln!(
            "taskdeck: no token for the {} hook (run `taskdeck hook install {}`)",
            agent.name(),
            agent.name()
        );
        return ExitCode::SUCCESS;
    };
    let port = taskdeck_server::serve::client_port(t.port, &dirs.data_dir);
    let waits = serde_json::from_str::<serde_json::Value>(&body)
        .ok()
        .and_then(|v| {
            v.get("hook_event_name")
                .and_then(|n| n.as_str())
                .map(|n| n == "PermissionRequest")
        })
        .unwrap_or(false);
    // Counted from the event read, not from the start: a slow start or a late stdin on a loaded
    // machine must not cost Taskdeck its answer (a rule's deny dropped without a trace).
    let within = first_answer_within(body.len());
    let answer = ask(agent, port, &token, body, Instant::now() + within, waits);
    if printed && let Some(out) = answer.filter(|a| !a.trim().is_empty()) {
        let mut stdout = std::io::stdout().lock();
        let _ = writeln!(stdout, "{}", out.trim());
        let _ = stdout.flush();
    }
    ExitCode::SUCCESS
}

/// The answer's body, or `None` when Taskdeck did not give one in time (or refused). The
/// headers are due by `deadline`; the body too, unless `waits`: then it may take as long as the
/// human does, but no read may wait longer than [`SILENCE`] (a Taskdeck stopped or wedged after
/// its first answer no longer sends its heartbeat newlines).
fn ask(
    agent: Agent,
    port: u16,
    token: &str,
    body: String,
    deadline: Instant,
    waits: bool,
) -> Option<String> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .ok()?;
    let within_ms = deadline
        .saturating_duration_since(Instant::now())
        .as_millis();
    rt.block_on(async move {
        let deadline = tokio::time::Instant::from_std(deadline);
        let http = reqwest::Client::builder().no_proxy().build().ok()?;
        let mut request = http
            .post(format!("http://127.0.0.1:{port}/v1/hooks/{}", agent.name()))
            .bearer_auth(token)
            .header("content-type", "application/json");
        // Where the agent keeps its MCP servers (its environment is ours): Claude Code's
        // `.claude.json` and the dir it was started in, Codex's `$CODEX_HOME`. Taskdeck tells
        // its own MCP server apart by them. Paths go as UTF-8 bytes, which a header value may
        // carry.
        let env = AgentEnv::from_process(agent);
        for (name, path) in [
            (CLAUDE_CONFIG_HEADER, env.claude_config),
            (CLAUDE_PROJECT_HEADER, env.claude_project_dir),
            (CODEX_HOME_HEADER, env.codex_home),
        ] {
            if let Some(value) = path
                .as_deref()
                .and_then(std::path::Path::to_str)
                .and_then(|p| reqwest::header::HeaderValue::from_bytes(p.as_bytes()).ok())
            {
                request = request.header(name, value);
            }
        }
        // When this hook stops waiting: a decision Taskdeck takes later never reaches the
        // agent, and its audit log says so.
        let answer_by = std::time::SystemTime::now()
            + deadline.saturating_duration_since(tokio::time::Instant::now());
        if let Ok(since_epoch) = answer_by.duration_since(std::time::UNIX_EPOCH) {
            request = request.header(ANSWER_BY_HEADER, since_epoch.as_millis().to_string());
        }
        let send = request.body(body).send();
        let mut resp = match tokio::time::timeout_at(deadline, send).await {
            Ok(sent) => sent.ok()?,
            Err(_) => {
                eprintln!(
                    "taskdeck: Taskdeck did not answer within {} ms; no decision",
                    within_ms
                );
                return None;
            }
        };
        if !resp.status().is_success() {
            let status = resp.status();
            // The problem document's `detail` says why (a malformed event, a bad token).
            let body = tokio::time::timeout_at(deadline, resp.json::<serde_json::Value>()).await;
            let detail = body
                .ok()
                .and_then(Result::ok)
                .and_then(|p| p.get("detail").and_then(|d| d.as_str()).map(String::from));
            // A token revoked or from another data dir: installing again makes a new one.
            let fix = match status == reqwest::StatusCode::UNAUTHORIZED {
                true => format!("; `taskdeck hook install {}` makes a new token", agent.name()),
                false => String::new(),
            };
            match detail {
                Some(why) => {
                    eprintln!("taskdeck: Taskdeck refused the hook event ({status}): {why}{fix}")
                }
                None => eprintln!("taskdeck: Taskdeck refused the hook event ({status}){fix}"),
            }
            return None;
        }
        let mut text = Vec::new();
        loop {
            let read_by = if waits {
                tokio::time::Instant::now() + SILENCE
            } else {
                deadline
            };
            match tokio::time::timeout_at(read_by, resp.chunk()).await {
                Ok(Ok(Some(c))) => text.extend_from_slice(&c),
                Ok(Ok(None)) => break,
                Ok(Err(_)) => return None,
                Err(_) => {
                    if waits {
                        eprintln!(
                            "taskdeck: Taskdeck went silent for {} s while the human was asked; no decision",
                            SILENCE.as_secs()
                        );
                    }
                    return None;
                }
            }
        }
        String::from_utf8(text).ok()
    })
}
