//! `run_command`: an agent asks to run a local command. By default the human approves every run
//! first (the task is `input_required` with the exact command line); patterns in the command
//! policy let a principal run matching commands without asking. While it runs, the latest output
//! line is the statusMessage, progress is parsed from the output (`42%`, `12/50`), and output goes
//! to a bounded log (last lines in memory, the rest in `<data dir>/logs/<taskId>.log`).
//! Cancel and timeout stop the whole process group (SIGTERM, SIGKILL after a grace period).
//! A non-zero exit is a completed task with `isError: true` (SEP-2663 §Task Execution Errors).

use std::{
    path::PathBuf,
    process::Stdio,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use futures::{FutureExt, future::BoxFuture};
use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{
    arguments::{WholeNumber, input_schema, parse, parse_for_run},
    output::{LatestStatus, OutputLog},
    process::{Ended, Output, describe_exit, killing_signal, read_lines, wait_or_stop},
    secrets::{REDACTED, mask_string},
};
use crate::{
    approvals::{self, Answer, Ask, refusal},
    policy::{
        Decision, OnExpiry, Policy, PolicyCall, TASKDECK_SERVER, Terms, ToolHints, Verdict,
        has_shell_syntax,
    },
};
use taskdeck_engine::{Outcome, TaskContext, TaskFailure, TaskTool, ToolDescriptor, ToolMode};

/// Lines of output kept in memory (and returned in the result).
pub const TAIL_LINES: usize = 40;
/// Largest log file per run, in bytes.
pub const MAX_LOG_BYTES: u64 = 16 * 1024 * 1024;
/// Time a command gets between SIGTERM and SIGKILL.
pub const KILL_GRACE: Duration = Duration::from_secs(5);

/// The tool's name; its tasks are the ones with an output log (`GET /v1/tasks/{taskId}/log`).
pub const NAME: &str = "run_command";

/// `run_command`'s arguments: exactly one of `argv` and `command` (checked by
/// [`RunCommand`]'s `check_arguments`, not the schema), nothing unknown.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RunCommandArguments {
    /// Program and arguments (no shell).
    #[schemars(length(min = 1))]
    pub argv: Option<Vec<String>>,
    /// A shell command line (run with /bin/sh -c).
    #[schemars(length(min = 1))]
    pub command: Option<String>,
    /// Working directory (default: Taskdeck's).
    pub cwd: Option<String>,
    /// Environment additions.
    pub env: Option<IndexMap<String, String>>,
    /// Stop and fail the task after this many ms.
    #[schemars(range(min = 1))]
    pub timeout_ms: Option<WholeNumber>,
}

impl RunCommandArguments {
    /// The command line as shown to the human and matched against the policy: `command` as
    /// given, or `argv` quoted for a POSIX shell.
    pub fn command_line(&self) -> String {
        match (&self.command, &self.argv) {
            (Some(command), _) => command.clone(),
            (None, argv) => {
                let argv: Vec<&str> = argv.iter().flatten().map(String::as_str).collect();
                super::process::shell_line(&argv)
            }
        }
    }

    /// The line the policy matches: `command` as given, or `argv` as a POSIX shell line
    /// ([`super::process::posix_shell_line`]) that `sh` runs as exactly that `argv`. Not the line
    /// people read ([`Self::command_line`]'s `$'…'` words, which `sh` reads otherwise): a rule
    /// saved for an argument list must never match a `command` that runs something else.
    pub fn policy_line(&self) -> String {
        match (&self.command, &self.argv) {
            (Some(command), _) => command.clone(),
            (None, argv) => {
                let argv: Vec<&str> = argv.iter().flatten().map(String::as_str).collect();
                super::process::posix_shell_line(&argv)
            }
        }
    }

    /// The environment additions, `None` when there are none.
    fn env_additions(&self) -> Option<&IndexMap<String, String>> {
        self.env.as_ref().filter(|e| !e.is_empty())
    }
}

/// The `run_command` tool.
pub struct RunCommand {
    descriptor: ToolDescriptor,
    policy: Arc<Policy>,
    log_dir: PathBuf,
}

impl RunCommand {
    /// The tool, asking `policy` (rules for server `taskdeck`, tool `run_command`, arguments
    /// `command` (the line) and `cwd` (the directory it runs in, resolved)); logs in
    /// `data_dir/logs`.
    pub fn new(policy: Arc<Policy>, data_dir: &std::path::Path) -> RunCommand {
        RunCommand {
            descriptor: ToolDescriptor {
                name: NAME.into(),
                title: Some("Run a local command (with the human's approval)".into()),
                description: "Run a command on the user's machine. The human approves it first unless their policy \
                    allows it for you. Returns at once with a task; the result has the exit code, duration and the \
                    last lines of output (isError when the exit code is not 0)."
                    .into(),
                input_schema: input_schema::<RunCommandArguments>(),
                mode: ToolMode::Task { required: false },
                resumable: false,
                agent_callable: true,
            },
            policy,
            log_dir: super::output::log_dir(data_dir),
        }
    }
}

/// Why a call with `arguments` could not start in its `cwd` (not a directory), for a human's
/// edit of a call: refused then (422), before it is approved. An agent's own call with such a
/// `cwd` is run and ends with a tool error saying so (MCP: an input the model can correct is a
/// tool execution error, not a protocol one).
pub fn cwd_problem(arguments: &Value) -> Option<String> {
    let cwd = arguments.get("cwd")?.as_str()?;
    (!std::path::Path::new(cwd).is_dir()).then(|| {
        format!(
            "cwd: the working directory {} does not exist or is not a directory",
            mask_string(cwd).unwrap_or_else(|| cwd.to_string())
        )
    })
}

/// The result when the human declined: a tool error with their reason, if they gave one.
fn declined(line: &str, reason: Option<&str>) -> Outcome {
    let text = match reason {
        Some(r) => {
            format!("The human declined to run `{line}`; it was not started. Their reason: {r}")
        }
        None => format!("The human declined to run `{line}`; it was not started."),
    };
    let mut result = json!({
        "content": [{"type": "text", "text": text}],
        "structuredContent": {"declined": true, "command": line, "reason": reason},
        "isError": true
    });
    refusal::mark(&mut result, "declined");
    Outcome::Completed(result)
}

/// The result when a `deny` rule refuses the command (`why`: "rule r-5f2c0a1b").
fn refused(line: &str, why: &str) -> Outcome {
    let mut result = json!({
        "content": [{"type": "text", "text": format!("`{line}` was not started: the policy denies it ({why}).")}],
        "structuredContent": {"denied": true, "command": line, "policy": why},
        "isError": true
    });
    refusal::mark(&mut result, "denied");
    Outcome::Completed(result)
}

impl TaskTool for RunCommand {
    /// `env` values whose names say they are credentials are kept and shown as `[redacted]`,
    /// and the password of a URL anywhere in the call (`argv`, `command`, `env`) as `****`.
    fn redact_arguments(&self, arguments: &Value) -> Option<Value> {
        super::secrets::redact_value(arguments)
    }

    fn descriptor(&self) -> &ToolDescriptor {
        &self.descriptor
    }

    /// Exactly one of `argv` and `command`; env names an environment can hold.
    fn check_arguments(&self, arguments: &Value) -> Result<(), String> {
        let arguments: RunCommandArguments = parse(NAME, arguments)?;
        // A name the environment cannot hold (`execve` takes `NAME=value` strings): refused
        // before anyone is asked about it, as `taskdeck servers add` refuses one.
        if let Some(name) = arguments
            .env
            .iter()
            .flat_map(|env| env.keys())
            .find(|k| !super::process::is_env_name(k))
        {
            return Err(format!(
                "env: {name:?} is not a variable name (empty, or with '=' or a NUL byte)"
            ));
        }
        // Nor can a program be given text holding a NUL byte (`execve` takes C strings): the
        // command could never start, so no one is asked to approve it.
        let texts = (arguments.argv.iter().flatten().enumerate())
            .map(|(i, item)| (format!("argv[{i}]"), item))
            .chain(arguments.command.iter().map(|c| ("command".into(), c)))
            .chain(arguments.cwd.iter().map(|c| ("cwd".into(), c)))
            .chain(
                arguments
                    .env
                    .iter()
                    .flatten()
                    .map(|(k, v)| (format!("env {k:?}"), v)),
            );
        for (what, text) in texts {
            if text.contains('\0') {
                return Err(format!(
                    "{what} holds a NUL byte, which no program can be given"
                ));
            }
        }
        match (arguments.argv.is_some(), arguments.command.is_some()) {
            (true, false) | (false, true) => Ok(()),
            _ => Err(
                "give exactly one of argv (program and arguments) or command (a shell line)".into(),
            ),
        }
    }

    /// After a crash: stops every process the command left running (tagged with
    /// `TASKDECK_TASK_ID`), so nothing outlives the task that failed as interrupted.
    fn interrupted(&self, task_id: &str) {
        let killed = super::process::kill_tagged(task_id);
        if killed > 0 {
            tracing::warn!(
                task_id,
                killed,
                "stopped processes an interrupted command left running"
            );
        }
    }

    /// A call still waiting for its approval when the process ended is asked again at start,
    /// the same question (its expiry, its approvals so far): nothing ran yet. Not one whose
    /// stored arguments hide credentials, which the command would need; nor one that was
    /// between two questions or running, which fails as interrupted.
    fn resumes(&self, task: &taskdeck_engine::TaskRecord) -> bool {
        task.status == taskdeck_engine::TaskStatus::InputRequired
            && task
                .input_requests
                .values()
                .any(|r| crate::approvals::question::meta_of(r).is_some())
            && !super::secrets::holds_masks(&task.arguments)
    }

    /// A call waiting for its approval is asked again after a restart, but not one holding
    /// credentials (the store has them masked): that is why it failed.
    fn interrupted_because(&self, task: &taskdeck_engine::TaskRecord) -> Option<String> {
        (task.status == taskdeck_engine::TaskStatus::InputRequired
            && super::secrets::holds_masks(&task.arguments))
        .then(|| {
            "its call held credentials, which Taskdeck never stores, so it could not be asked \
             again: send the call again"
                .to_string()
        })
    }

    /// Its approval still open when the process ended is recorded as abandoned.
    fn abandoned_decisions(
        &self,
        task: &taskdeck_engine::TaskRecord,
    ) -> Vec<taskdeck_engine::DecisionRecord> {
        crate::approvals::record::abandoned_at_restart(task, false)
    }

    fn run(&self, ctx: TaskContext, arguments: Value) -> BoxFuture<'static, Outcome> {
        let policy = self.policy.clone();
        let log_path = super::output::log_path(&self.log_dir, ctx.task_id());
        let input_schema = self.descriptor.input_schema.clone();
        let redacted = self.redact_arguments(&arguments);
        let holds_secrets = redacted.is_some();
        let shown = redacted.unwrap_or_else(|| arguments.clone());
        let hidden = holds_secrets.then(|| arguments.clone());
        async move {
            let mut arguments: RunCommandArguments = match parse_for_run(NAME, arguments) {
                Ok(a) => a,
                Err(outcome) => return outcome,
            };
            let mut line = arguments.command_line();
            // The line as every message shows it: made from the stored arguments, so that a
            // credential is masked however the line quotes it.
            let mut seen = parse::<RunCommandArguments>(NAME, &shown)
                .map_or_else(|_| REDACTED.to_string(), |a| a.command_line());
            let mut cwd = resolve_cwd(&arguments);
            // A directory named with a credential is shown as given, masked: resolving it may
            // undo the mask (`a//b` reads `a/b`).
            let masked_cwd = arguments.cwd.as_deref().and_then(mask_string);
            // The command as asked (as shown), when a person edited it before approving.
            let mut edited_from = None;
            // Nothing to approve when the directory is missing: `execute` says so without running.
            if cwd.as_ref().is_some_and(|d| !d.is_dir()) {
                return execute(ctx, arguments, (line, seen, None), cwd, log_path).await;
            }
            // The human sees the directory the command will run in (the one "always allow" saves).
            let where_ = match (&cwd, std::env::current_dir()) {
                // With where it leads, masked too: a mask must not hide a `..` that takes
                // the command elsewhere (`/srv/a TOKEN=b/../..`).
                (Some(c), _) if let Some(masked) = &masked_cwd => {
                    let resolved = std::fs::canonicalize(c).unwrap_or_else(|_| c.clone());
                    let resolved = resolved.display().to_string();
                    let resolved = mask_string(&resolved).unwrap_or(resolved);
                    if resolved == *masked {
                        super::process::shell_word(masked)
                    } else {
                        format!(
                            "{} (that is {})",
                            super::process::shell_word(masked),
                            super::process::shell_word(&resolved)
                        )
                    }
                }
                (Some(c), _) => super::process::shell_word(&c.display().to_string()),
                (None, Ok(d)) => format!(
                    "{} (Taskdeck's working directory)",
                    super::process::shell_word(&d.display().to_string())
                ),
                (None, Err(_)) => "Taskdeck's working directory".to_string(),
            };
            let env = arguments.env_additions();
            // The policy only waves through a plain command: no extra environment, and no shell
            // syntax that could chain or substitute other commands behind an allowed prefix
            // (then only a rule naming this exact line matches).
            let plain = !has_shell_syntax(&arguments.policy_line());
            let policed = policed_arguments(&arguments.policy_line(), cwd.as_deref());
            let call = PolicyCall {
                principal: ctx.principal(),
                server: TASKDECK_SERVER,
                tool: NAME,
                arguments: &policed,
                hints: ToolHints::default(),
            };
            let verdict = policy.decide_exact(&call, if plain { &[] } else { &["command"] });
            let needs_human = verdict.decision == Decision::Ask || env.is_some();
            if verdict.decision == Decision::Deny || !needs_human {
                approvals::record::record_verdict(&ctx, TASKDECK_SERVER, NAME, &shown, &verdict)
                    .await;
            }
            if verdict.decision == Decision::Deny {
                return refused(&seen, &verdict.reason);
            }
            // Extra environment always asks: it can change what an allowed command does.
            if needs_human {
                // As the stored arguments show them, so that the question and the call's
                // arguments read alike.
                let env_text = env.map_or(String::new(), |e| {
                    let pairs: Vec<String> = e
                        .keys()
                        .map(|k| match shown["env"][k].as_str().unwrap_or(REDACTED) {
                            REDACTED => format!("{}={REDACTED}", super::process::shell_word(k)),
                            v => format!(
                                "{}={}",
                                super::process::shell_word(k),
                                super::process::shell_word(v)
                            ),
                        })
                        .collect();
                    format!(" with environment {}", pairs.join(" "))
                });
                // Where and with what come first: nothing the command's text holds can pose as them.
                let question = Ask {
                    key: "approve-command".into(),
                    message: format!(
                        "{} wants to run in {where_}{env_text}:\n\n{}{}",
                        ctx.principal(),
                        super::process::shown_script(&seen),
                        // An argument list and the shell line shown for it read alike:
                        // `sh` reads `$'…'` otherwise, so the question says which it is.
                        match arguments.argv.is_some() {
                            true =>
                                "\n\n(A program and its arguments, run without a shell; \
                                         shown quoted as bash would read them.)",
                            false => "",
                        }
                    ),
                    // A rule would write the credentials down in policy.json; and a call with
                    // extra environment asks whatever the rules say, so its rule would never
                    // be used.
                    always_title: (!holds_secrets && env.is_none()).then(|| {
                        format!(
                            "Always allow this exact command in this directory for {}",
                            ctx.principal()
                        )
                    }),
                    server: TASKDECK_SERVER.into(),
                    tool: NAME.into(),
                    // Environment values may be credentials, and credentials are shown
                    // redacted: such a call is approved or denied as it is, never edited.
                    editable: env.is_none() && !holds_secrets,
                    arguments: shown,
                    hidden,
                    input_schema: Some(input_schema),
                    verdict: Verdict {
                        terms: safety_terms(&verdict, env.is_some()),
                        ..verdict
                    },
                    expiry_cap_ms: None,
                    hands_back: false,
                };
                // An edit is policed as the agent's call is: its line, where it runs.
                let judge = |edited: &Value| {
                    // An edit that is not run_command's arguments is refused by the schema
                    // check before this; were it not, it would be asked as the call was.
                    let Ok(edited) = parse::<RunCommandArguments>(NAME, edited) else {
                        return approvals::ask::EditVerdict::Needs {
                            humans: 0,
                            why: String::new(),
                            asked_by_rule: false,
                        };
                    };
                    let policed =
                        policed_arguments(&edited.policy_line(), resolve_cwd(&edited).as_deref());
                    policy.judge_edit(&PolicyCall {
                        principal: ctx.principal(),
                        server: TASKDECK_SERVER,
                        tool: NAME,
                        arguments: &policed,
                        hints: ToolHints::default(),
                    })
                };
                match approvals::ask::ask(&ctx, &question, &judge).await {
                    Err(e) => return e.into(),
                    Ok(Answer::Denied { reason, .. }) => return declined(&seen, reason.as_deref()),
                    Ok(Answer::Expired(OnExpiry::Allow)) => {}
                    Ok(Answer::Expired(_)) => return expired(&seen),
                    Ok(Answer::Approved { edited, always, .. }) => {
                        if let Some(new) = edited {
                            edited_from = Some(seen.clone());
                            // A credential the human typed into the edit is shown masked too.
                            let shown_edit = super::secrets::redact_value(&new);
                            let stored = shown_edit.clone().unwrap_or_else(|| new.clone());
                            arguments = match edited_call(new) {
                                Ok(a) => a,
                                Err(why) => return declined(&seen, Some(&why)),
                            };
                            // The task shows the command that runs, not the one asked for.
                            ctx.arguments_edited(stored).await;
                            line = arguments.command_line();
                            seen = shown_edit
                                .and_then(|shown| parse::<RunCommandArguments>(NAME, &shown).ok())
                                .map_or_else(|| line.clone(), |a| a.command_line());
                            cwd = resolve_cwd(&arguments);
                        }
                        // An edit that adds environment asks whatever the rules say: a rule
                        // (which names no environment) would allow the command without it.
                        if always && arguments.env_additions().is_some() {
                            ctx.status_message(
                                "\"Always allow\" was not saved: the call as edited has extra \
                                 environment, which is asked about whatever the rules say",
                            )
                            .await;
                        } else if always {
                            let note = format!("always allow, from task {}", ctx.task_id());
                            let policed =
                                policed_arguments(&arguments.policy_line(), cwd.as_deref());
                            if let Err(e) = policy.allow_always(
                                ctx.principal(),
                                TASKDECK_SERVER,
                                NAME,
                                &policed,
                                &note,
                            ) {
                                tracing::warn!("cannot save the policy: {e}");
                                // The task's timeline says so, as a gateway call's does.
                                ctx.status_message(format!("\"Always allow\" was not saved: {e}"))
                                    .await;
                            }
                        }
                    }
                }
            }
            execute(ctx, arguments, (line, seen, edited_from), cwd, log_path).await
        }
        .boxed()
    }
}

/// The terms a question is asked under: the verdict's, except that a call the policy would
/// have allowed (asked only for its extra environment, which always asks) never expires into
/// `allow`: only a human lets such a call through.
fn safety_terms(verdict: &Verdict, extra_env: bool) -> Terms {
    let mut terms = verdict.terms;
    if extra_env && terms.on_expiry == OnExpiry::Allow {
        terms.on_expiry = OnExpiry::Deny;
    }
    terms
}

/// A relative `cwd` is taken from Taskdeck's working directory, resolved: the human is shown,
/// the policy checks and the command runs in that directory.
fn resolve_cwd(arguments: &RunCommandArguments) -> Option<PathBuf> {
    arguments.cwd.as_deref().filter(|c| !c.is_empty()).map(|c| {
        let dir = PathBuf::from(c);
        let dir = if dir.is_relative() {
            std::env::current_dir().map_or(dir.clone(), |d| d.join(&dir))
        } else {
            dir
        };
        dir.canonicalize().unwrap_or(dir)
    })
}

/// What the policy matches: `{command: the line, cwd: the directory it runs in}` (Taskdeck's
/// working directory when none is given), resolved.
fn policed_arguments(line: &str, cwd: Option<&std::path::Path>) -> Value {
    let run_dir = cwd
        .map(std::path::Path::to_path_buf)
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_default();
    let run_dir = run_dir.canonicalize().unwrap_or(run_dir);
    json!({"command": line, "cwd": run_dir.display().to_string()})
}

/// The call as the human edited it (already checked against the input schema), or why it is
/// not a call `run_command` can make.
fn edited_call(arguments: Value) -> Result<RunCommandArguments, String> {
    let arguments: RunCommandArguments = parse(NAME, &arguments)?;
    match (arguments.argv.is_some(), arguments.command.is_some()) {
        (true, false) | (false, true) => Ok(arguments),
        _ => Err("the edited call must give exactly one of argv or command".into()),
    }
}

/// The result when the call was not approved in time (by nobody, or by fewer people than its
/// rule needs) and the policy refuses on expiry.
fn expired(line: &str) -> Outcome {
    let mut result = json!({
        "content": [{"type": "text", "text": format!("`{line}` was not started: it was not approved in time.")}],
        "structuredContent": {"expired": true, "command": line},
        "isError": true
    });
    // The policy's terms refuse it once nobody answered in time.
    refusal::mark(&mut result, "denied");
    Outcome::Completed(result)
}

/// Runs the command. `(line, seen, edited_from)`: the command line as it runs (`sh -c` runs
/// it), as status messages and results show it (credentials masked), and, when a person edited
/// the call before approving it, the command as the agent asked it (shown): the result says
/// so (its text's second line, and `editedFrom`), so the agent does not take the run for its
/// own call; the first line stays how the command ended (the task's status message).
async fn execute(
    ctx: TaskContext,
    arguments: RunCommandArguments,
    (line, seen, edited_from): (String, String, Option<String>),
    cwd: Option<PathBuf>,
    log_path: PathBuf,
) -> Outcome {
    let mut cmd = match &arguments.argv {
        Some(argv) => {
            let mut c = tokio::process::Command::new(&argv[0]);
            c.args(&argv[1..]);
            c
        }
        None => {
            let mut c = tokio::process::Command::new("/bin/sh");
            c.arg("-c").arg(&line);
            c
        }
    };
    let line = seen;
    if let Some(dir) = &cwd {
        cmd.current_dir(dir);
    }
    for (k, v) in arguments.env.iter().flatten() {
        cmd.env(k, v);
    }
    // Tagged, so that what it leaves behind can be found if Taskdeck dies (`interrupted`).
    cmd.env(super::process::TASK_ID_ENV, ctx.task_id());
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let started = Instant::now();
    // A missing working directory fails the spawn with the same "not found" as a missing
    // program: say which one it is.
    let spawned = match &cwd {
        Some(dir) if !dir.is_dir() => {
            let dir = dir.display().to_string();
            Err(format!(
                "the working directory {} does not exist or is not a directory",
                mask_string(&dir).unwrap_or(dir)
            ))
        }
        // A cancel that came while the call was approved or set up: nothing runs (the answer
        // and the cancel may land in the same moment; the task then says "cancelled", which
        // must mean the command never started).
        _ if ctx.is_cancelled() => return Outcome::Cancelled,
        _ => cmd.spawn().map_err(|e| e.to_string()),
    };
    let mut child = match spawned {
        Ok(c) => c,
        Err(e) => {
            return Outcome::Completed(json!({
                "content": [{"type": "text", "text": format!("Could not start `{line}`: {e}")}],
                "structuredContent": {"command": line, "started": false, "error": e},
                "isError": true
            }));
        }
    };
    // The log exists before the status says "Running", so a reader woken by that change finds it.
    let log = Arc::new(Mutex::new(OutputLog::new(
        Some(&log_path),
        TAIL_LINES,
        super::run_command::MAX_LOG_BYTES,
    )));
    ctx.status_message(format!("Running: {line}")).await;
    let latest = Arc::new(Mutex::new(LatestStatus::default()));
    // Each line, each `\r` redraw and what a read left unfinished (a prompt, a bar's latest
    // frame) goes to the log at once, and becomes the status (with its progress, `12/50`).
    let on_output = |stream: usize| {
        let (log, latest) = (log.clone(), latest.clone());
        move |out: Output<'_>| {
            log.lock().unwrap().take(stream, out);
            let (Output::Line(text) | Output::Redraw(text) | Output::Partial(text)) = out;
            latest.lock().unwrap().note(&String::from_utf8_lossy(text));
        }
    };
    let stdout = child
        .stdout
        .take()
        .map(|o| tokio::spawn(read_lines(o, on_output(1))));
    let stderr = child
        .stderr
        .take()
        .map(|e| tokio::spawn(read_lines(e, on_output(2))));
    let timeout = arguments.timeout_ms.map(|ms| Duration::from_millis(ms.0));
    // Latest status line and progress, published at most every 250 ms.
    let ended = wait_or_stop(
        &mut child,
        ctx.task_id(),
        ctx.cancelled(),
        timeout,
        KILL_GRACE,
        Duration::from_millis(250),
        || publish(&ctx, &latest),
    )
    .await;
    // Output still buffered in the pipes (bounded wait: a grandchild may keep them open).
    for reader in [stdout, stderr].into_iter().flatten() {
        let _ = tokio::time::timeout(Duration::from_millis(500), reader).await;
    }
    publish(&ctx, &latest).await;
    let duration_ms = started.elapsed().as_millis() as u64;
    let (tail, cut) = {
        let log = log.lock().unwrap();
        (log.tail(), log.cut())
    };
    let (code, how) = describe_exit(ended.status());
    // A command killed by a signal has no exit code: the signal's name says what ended it.
    let signal = killing_signal(ended.status());
    // A log file cut short (its disk full, or its size cap) is said in the result: the tail is
    // then the only copy of the last lines.
    let cut_note = cut.map_or(String::new(), |c| {
        format!(
            "\n(output log truncated: {}; the tail above is complete)",
            c.as_str()
        )
    });
    // The sentences name the command on one line: one of several lines is written as one
    // `$'…'` word (as the approval question shows it), so the first line stays whole.
    let one_line = |l: &str| match l.contains(['\n', '\r']) {
        true => super::process::shell_word(l),
        false => l.to_string(),
    };
    let edit_note = edited_from.as_ref().map_or(String::new(), |asked| {
        format!(
            "A person edited this call before approving it: you asked for `{}`; `{}` ran \
             instead.\n",
            one_line(asked),
            one_line(&line)
        )
    });
    let shown_line = one_line(&line);
    let mut outcome = match ended {
        Ended::Cancelled(_) => return Outcome::Cancelled,
        Ended::TimedOut(_) => Outcome::Failed(TaskFailure::tool(
            format!(
                "`{shown_line}` timed out after {} ms and was stopped.\n{edit_note}{cut_note}",
                timeout.map_or(0, |t| t.as_millis())
            )
            .trim_end()
            .to_string(),
            Some(
                json!({"reason": "timeout", "durationMs": duration_ms, "tail": tail, "log": log_path}),
            ),
        )),
        Ended::Exited(_) => Outcome::Completed(json!({
            "content": [{"type": "text", "text": format!("`{shown_line}` {how} after {:.1} s.\n{edit_note}{tail}{cut_note}", duration_ms as f64 / 1000.0)}],
            "structuredContent": {"command": line, "exitCode": code, "durationMs": duration_ms, "tail": tail, "log": log_path},
            "isError": code != Some(0)
        })),
    };
    if let (Some(signal), Outcome::Completed(result)) = (signal, &mut outcome) {
        result["structuredContent"]["signal"] = Value::String(signal);
    }
    if let (Some(asked), Outcome::Completed(result)) = (edited_from, &mut outcome) {
        result["structuredContent"]["editedFrom"] = Value::String(asked);
    }
    if let Some(cut) = cut {
        let fields = match &mut outcome {
            Outcome::Completed(result) => result.get_mut("structuredContent"),
            Outcome::Failed(failure) => failure.data.as_mut(),
            _ => None,
        };
        if let Some(Value::Object(fields)) = fields {
            fields.insert("logTruncated".into(), json!(cut.as_str()));
        }
    }
    outcome
}

async fn publish(ctx: &TaskContext, latest: &Mutex<LatestStatus>) {
    let Some(update) = latest.lock().unwrap().take() else {
        return;
    };
    match update.progress {
        Some((current, total)) => ctx.progress(current, Some(total), Some(update.message)),
        None => ctx.status_message(update.message).await,
    }
}
