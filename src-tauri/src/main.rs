//! The `taskdeck` binary: parses the command line and hands over to a shell.
//!
//! Exit codes: 0 success; 1 runtime error (port busy, store unreadable...); 2 usage error
//! (clap); 3 unknown or duplicate token or server name. `taskdeck run` exits with its command's code; `taskdeck tasks` and `taskdeck audit` exit 4 when the API refuses; `taskdeck audit verify` exits 1 when the chain is broken; `taskdeck doctor` exits 1 when a check finds a problem. `taskdeck` (the window) exits 0 on SIGTERM or Ctrl-C, and at once with 0 when Taskdeck already runs on its data dir (it says where).

use std::{path::PathBuf, process::ExitCode};

/// mimalloc: fewer allocator stalls on the request path than glibc's malloc (BENCHMARKS.md),
/// built without transparent huge pages (the workspace's `Cargo.toml` says why).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use clap::{Parser, Subcommand};
use taskdeck_engine::{EngineConfig, Role, store::Durability};
use taskdeck_server::{
    adapters::{auth, mcp_endpoint::TaskRouting},
    gateway::GatewayOptions,
    paths, serve,
};

#[derive(Parser)]
#[command(
    name = "taskdeck",
    version,
    about = "Control room for long-running agent work: durable MCP tasks you can watch, answer and cancel"
)]
struct Cli {
    /// Where the task store lives [default: XDG data dir, e.g. ~/.local/share/taskdeck]
    #[arg(long, global = true, env = "TASKDECK_DATA_DIR")]
    data_dir: Option<PathBuf>,
    /// Where the admin token file lives [default: XDG config dir, e.g. ~/.config/taskdeck]
    #[arg(long, global = true, env = "TASKDECK_CONFIG_DIR")]
    config_dir: Option<PathBuf>,
    /// Start the window hidden: only the tray icon shows until its Show or a second launch
    /// (the autostart entry starts Taskdeck this way)
    #[arg(long)]
    hidden: bool,
    #[command(subcommand)]
    command: Option<Command>,
}

/// `--durability`: the command-line names of [`Durability`].
#[derive(Clone, Copy, clap::ValueEnum)]
enum DurabilityArg {
    Process,
    Power,
}

#[derive(Subcommand)]
enum Command {
    /// Run the engine and the local endpoints without a window (MCP at /mcp, HTTP API at /v1)
    Serve(ServeArgs),
    /// Manage the bearer tokens of agents, scripts and the people who answer approvals
    #[command(subcommand)]
    Token(TokenCommand),
    /// Run a command as a Taskdeck job: output as usual, status and progress in Taskdeck,
    /// cancellable from the window; exits with the command's exit code
    Run {
        /// Name shown in Taskdeck [default: the command line]
        #[arg(long, value_parser = job_name)]
        name: Option<String>,
        /// When Taskdeck is not running, wait for it instead of running the command untracked
        #[arg(long)]
        wait: bool,
        /// Port of the running Taskdeck [default: the one serving the data dir, else 4747]
        #[arg(long, env = "TASKDECK_PORT")]
        port: Option<u16>,
        /// Token to report with [default: TASKDECK_TOKEN, else the admin token file]
        #[arg(long, env = "TASKDECK_TOKEN", hide_env_values = true)]
        token: Option<String>,
        /// The command and its arguments: everything from the first word that is not an
        /// option (`--` before it is needed only for a command whose name starts with `-`)
        #[arg(trailing_var_arg = true, required = true)]
        command: Vec<String>,
    },
    /// List, show, wait for, answer, cancel, run again and delete tasks (exit 4 when the API
    /// refuses)
    Tasks {
        #[command(subcommand)]
        cmd: taskdeck::cli::task_actions_cli::TasksCli,
        /// Port of the running Taskdeck [default: the one serving the data dir, else 4747]
        #[arg(long, global = true, env = "TASKDECK_PORT")]
        port: Option<u16>,
        /// [default: TASKDECK_TOKEN, else the admin token file]
        #[arg(long, global = true, env = "TASKDECK_TOKEN", hide_env_values = true)]
        token: Option<String>,
        /// Print the API's JSON
        #[arg(long, global = true)]
        json: bool,
    },
    /// Add, remove, list and import the upstream MCP servers Taskdeck serves (servers.json)
    Servers {
        #[command(subcommand)]
        cmd: taskdeck::cli::servers_cli::ServersCommand,
    },
    /// Claude Code and Codex hooks: the hook the agent runs (`claude-code`, `codex`,
    /// `codex-notify`), and `install` / `uninstall` of its entries (docs/hooks.md)
    Hook {
        #[command(subcommand)]
        cmd: taskdeck::cli::hook_cli::HookCommand,
    },
    /// Export and verify the audit log of approval decisions (exit 1 when the chain is broken)
    Audit {
        #[command(subcommand)]
        cmd: taskdeck::cli::audit_cli::AuditCommand,
        /// Port of the running Taskdeck [default: the one serving the data dir, else 4747]
        #[arg(long, global = true, env = "TASKDECK_PORT")]
        port: Option<u16>,
        /// [default: TASKDECK_TOKEN, else the admin token file]
        #[arg(long, global = true, env = "TASKDECK_TOKEN", hide_env_values = true)]
        token: Option<String>,
    },
    /// Start Taskdeck at login, hidden in the tray: on, off or status (an XDG autostart entry)
    Autostart {
        #[command(subcommand)]
        cmd: taskdeck::cli::autostart_cli::AutostartCommand,
    },
    /// Check the task store, the search index, the disk, the lock and port files and the admin
    /// token; one line per check (exit 1 when one finds a problem). Only reads: safe while running
    Doctor {
        /// Run SQLite's integrity_check on the store instead of quick_check (slower: it also
        /// matches every index to its table)
        #[arg(long)]
        full: bool,
        /// Print {"ok", "checks": [{check, ok, detail, fix?}]}
        #[arg(long)]
        json: bool,
    },
    /// Copy the task store to PATH while Taskdeck runs (SQLite's online backup: one
    /// consistent state); prints the path, its size and its task count
    Backup {
        path: PathBuf,
        /// Replace PATH if it exists
        #[arg(long)]
        force: bool,
    },
    /// Replace the task store with the backup at PATH (Taskdeck must be stopped; the replaced
    /// store is moved aside, not deleted)
    Restore { path: PathBuf },
    /// Print ready-to-paste configuration connecting CLIENT to Taskdeck (creates a token)
    McpConfig {
        /// claude-code, claude-desktop, vscode, cursor or codex
        client: String,
        /// Principal name for the new token [default: the client's name]
        #[arg(long)]
        name: Option<String>,
        /// Use this token instead of creating one
        #[arg(long)]
        token: Option<String>,
        /// Port of the running Taskdeck [default: the one serving the data dir, else 4747]
        #[arg(long, env = "TASKDECK_PORT")]
        port: Option<u16>,
        /// Print {client, title, target, kind, text} as JSON
        #[arg(long)]
        json: bool,
    },
}

#[derive(Subcommand)]
enum TokenCommand {
    /// Create a token for principal NAME and print it (shown once; only its hash is stored)
    Create {
        name: String,
        /// Make NAME a human: sees every task and answers approvals (human-only requests),
        /// but manages no tokens, policy or servers [default: an agent, its own tasks only]
        #[arg(long)]
        human: bool,
        /// Print {"name", "role", "token"} as JSON
        #[arg(long)]
        json: bool,
    },
    /// List token names and roles (never the secrets)
    List {
        #[arg(long)]
        json: bool,
    },
    /// Revoke principal NAME's token
    Revoke { name: String },
}

#[derive(Parser, Clone)]
struct ServeArgs {
    /// Port on 127.0.0.1 (0 picks a free one)
    #[arg(long, env = "TASKDECK_PORT", default_value_t = serve::DEFAULT_PORT)]
    port: u16,
    /// Let requests without a token act as principal "anonymous" (loopback test runs only)
    #[arg(long)]
    allow_anonymous: bool,
    /// Serve the MCP conformance suite's fixture tools (greet, slow_compute, ...)
    #[arg(long)]
    conformance_fixtures: bool,
    /// Answer 2026-07-28 tasks/get and task creation through rmcp's generic path instead of
    /// the dedicated ones (to compare and benchmark both)
    #[arg(long = "no-fast-path", hide = true)]
    rmcp_task_routing: bool,
    /// process: commits survive a crash of Taskdeck; power: also a power loss (fsync per commit)
    #[arg(long, env = "TASKDECK_DURABILITY", value_enum, default_value_t = DurabilityArg::Process)]
    durability: DurabilityArg,
    /// ttlMs of new tasks, in ms, at most 100 years (0 = unlimited). Waiting for input never
    /// expires a task, and an external job's (taskdeck run's) grows while its runner reports.
    #[arg(long, default_value_t = 86_400_000,
          value_parser = clap::value_parser!(u64).range(0..=3_155_760_000_000))]
    default_ttl_ms: u64,
    /// pollIntervalMs suggested to clients, in ms, on average: each task gets one drawn at
    /// random within a twentieth of it, so that clients polling in a loop do not fall into step;
    /// from 1 ms to a day (0 would ask clients to poll in a tight loop)
    #[arg(long, default_value_t = 1000,
          value_parser = clap::value_parser!(u64).range(1..=86_400_000))]
    poll_interval_ms: u64,
    /// Keep at most this many tasks (oldest finished ones are deleted first)
    #[arg(long)]
    max_tasks: Option<u64>,
    /// Keep at most about this many bytes of task data (oldest finished tasks go first)
    #[arg(long)]
    max_store_bytes: Option<u64>,
    /// How long a tool may ignore a cancel before it is stopped, in ms
    #[arg(long, default_value_t = 10_000)]
    cancel_grace_ms: u64,
    /// An upstream server's call that ends within this time (without asking the human) is
    /// answered with its result even to clients that take tasks, in ms
    #[arg(long, default_value_t = 1_000)]
    upstream_settle_ms: u64,
    /// How long an upstream server may take to answer one call unless its servers.json entry
    /// sets `timeoutMs`, in seconds
    #[arg(long, default_value_t = 600)]
    upstream_timeout_secs: u64,
    /// How long the audit log keeps a decision, in days (0 = forever), however long its task
    /// is kept
    #[arg(long, default_value_t = 365, value_parser = clap::value_parser!(u64).range(0..=36_500))]
    audit_retention_days: u64,
}

/// `--name` of `taskdeck run`: some text to show (Taskdeck refuses an empty name, and shows a
/// blank one as the tool's).
fn job_name(name: &str) -> Result<String, &'static str> {
    match name.trim().is_empty() {
        true => Err("the name must have something to show (leave --name out for the command line)"),
        false => Ok(name.to_string()),
    }
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                // rmcp's client transports log upstream URLs whole (query secrets included); the
                // gateway reports their errors itself, with the secrets taken out. rmcp's service
                // warns of every error answer, an agent's unknown taskId included: its client's
                // mistakes are the client's to see.
                .unwrap_or_else(|_| {
                    "info,rmcp=warn,rmcp::service=error,rmcp::transport::streamable_http_client=off,\
                     rmcp::transport::worker=off,rmcp::transport::common=off"
                        .into()
                }),
        )
        .with_writer(std::io::stderr)
        // Colour only on a terminal: a log redirected to a file (or the journal) stays plain.
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let cli = match Cli::try_parse_from(&args) {
        Ok(cli) => cli,
        Err(e) => {
            // `taskdeck hook claude-code|codex|codex-notify`: an agent's hook event.
            if args.iter().any(|a| a == "hook")
                && let Some(exit) = taskdeck::cli::hook_cli::step_aside(&e, &args)
            {
                return exit;
            }
            e.exit()
        }
    };
    // `taskdeck run` keeps SIGPIPE ignored: its output pipe closing (`taskdeck run -- cmd | head`)
    // is the command's business, which it learns as it would alone (run_cli.rs).
    if !matches!(
        cli.command,
        None | Some(Command::Serve(_)) | Some(Command::Run { .. })
    ) {
        // Command-line tools end quietly when their output pipe closes (`taskdeck tasks list | head`).
        // SAFETY: restoring the default disposition of SIGPIPE before any other thread exists.
        unsafe {
            let _ = nix::sys::signal::signal(
                nix::sys::signal::Signal::SIGPIPE,
                nix::sys::signal::SigHandler::SigDfl,
            );
        }
    }
    let data_dir = paths::data_dir(cli.data_dir.clone());
    let config_dir = paths::config_dir(cli.config_dir.clone());
    match cli.command {
        None => {
            let cfg = serve_config(data_dir, config_dir, ServeArgs::parse_from(["serve"]));
            #[cfg(feature = "desktop")]
            return taskdeck::desktop::run(cfg, cli.hidden);
            #[cfg(not(feature = "desktop"))]
            let _headless_has_no_window_to_hide = cli.hidden;
            #[cfg(not(feature = "desktop"))]
            serve::run_headless(cfg, true)
        }
        Some(Command::Serve(args)) => {
            serve::run_headless(serve_config(data_dir, config_dir, args), true)
        }
        Some(Command::Token(cmd)) => run_token(&data_dir, cmd),
        Some(Command::Run {
            name,
            wait,
            port,
            token,
            command,
        }) => taskdeck::cli::run_cli::run(
            taskdeck::cli::run_cli::RunArgs {
                name,
                wait,
                port,
                data_dir: data_dir.clone(),
                token,
                command,
            },
            &config_dir,
        ),
        Some(Command::Tasks {
            cmd,
            port,
            token,
            json,
        }) => taskdeck::cli::task_actions_cli::run_any(
            cmd,
            &taskdeck::cli::Target {
                port,
                token,
                data_dir,
                config_dir,
            },
            json,
        ),
        Some(Command::Servers { cmd }) => taskdeck::cli::servers_cli::run(
            cmd,
            &taskdeck::cli::servers_cli::ServersContext {
                config_dir,
                data_dir,
            },
        ),
        Some(Command::Hook { cmd }) => taskdeck::cli::hook_cli::run(
            cmd,
            taskdeck::cli::hook_cli::Dirs {
                data_dir,
                config_dir,
                explicit: (cli.data_dir, cli.config_dir),
            },
        ),
        Some(Command::Audit { cmd, port, token }) => taskdeck::cli::audit_cli::run(
            cmd,
            &taskdeck::cli::Target {
                port,
                token,
                data_dir,
                config_dir,
            },
        ),
        Some(Command::Autostart { cmd }) => {
            taskdeck::cli::autostart_cli::run(cmd, (cli.data_dir, cli.config_dir))
        }
        Some(Command::Doctor { full, json }) => taskdeck::cli::doctor_cli::run(
            taskdeck_server::doctor::DoctorOptions {
                data_dir,
                config_dir,
                full,
            },
            json,
        ),
        Some(Command::Backup { path, force }) => {
            taskdeck::cli::backup_cli::run_backup(&data_dir, &path, force)
        }
        Some(Command::Restore { path }) => taskdeck::cli::backup_cli::run_restore(&data_dir, &path),
        Some(Command::McpConfig {
            client,
            name,
            token,
            port,
            json,
        }) => {
            let running = serve::running_port(&data_dir);
            // A token made here is this data dir's: a Taskdeck on another port serving
            // another data dir refuses it.
            if let (Some(asked), Some(theirs), None) = (port, running, &token)
                && asked != theirs
            {
                eprintln!(
                    "taskdeck: warning: the Taskdeck on {} runs on port {theirs}, not {asked}: \
                     the token made here is its own, and a Taskdeck on port {asked} serving \
                     another data dir refuses it (leave out --port, or pass that Taskdeck's \
                     --data-dir and --config-dir)",
                    data_dir.display()
                );
            }
            if let (Some(asked), None, None) = (port, running, &token) {
                eprintln!(
                    "note: no Taskdeck is running on {}: the token made here is its own, and a \
                     Taskdeck on port {asked} serving another data dir refuses it (pass that \
                     Taskdeck's --data-dir and --config-dir)",
                    data_dir.display()
                );
            }
            let port = port.or(running);
            if port.is_none() {
                // A token made here is this data dir's: one served from another refuses it.
                let token_note = match token {
                    Some(_) => "",
                    None => {
                        ", and its token is this data dir's: a Taskdeck started with another \
                         --data-dir refuses it (pass that --data-dir here)"
                    }
                };
                eprintln!(
                    "note: no Taskdeck is running on {}; the configuration uses port {} \
                     (pass --port if Taskdeck will listen elsewhere){token_note}",
                    data_dir.display(),
                    serve::DEFAULT_PORT
                );
            }
            run_mcp_config(
                (&data_dir, &config_dir),
                &client,
                name,
                token,
                port.unwrap_or(serve::DEFAULT_PORT),
                json,
            )
        }
    }
}

fn serve_config(data_dir: PathBuf, config_dir: PathBuf, args: ServeArgs) -> serve::ServeConfig {
    let engine = EngineConfig {
        default_ttl_ms: (args.default_ttl_ms > 0).then_some(args.default_ttl_ms),
        poll_interval_ms: args.poll_interval_ms,
        cancel_grace: std::time::Duration::from_millis(args.cancel_grace_ms),
        max_tasks: args.max_tasks,
        max_bytes: args.max_store_bytes,
        audit_retention_ms: (args.audit_retention_days > 0)
            .then_some(args.audit_retention_days * 86_400_000),
        ..EngineConfig::default()
    };
    serve::ServeConfig {
        port: args.port,
        data_dir,
        config_dir,
        allow_anonymous: args.allow_anonymous,
        conformance_fixtures: args.conformance_fixtures,
        task_routing: if args.rmcp_task_routing {
            TaskRouting::Rmcp
        } else {
            TaskRouting::Dedicated
        },
        durability: match args.durability {
            DurabilityArg::Process => Durability::Process,
            DurabilityArg::Power => Durability::Power,
        },
        engine,
        gateway: GatewayOptions {
            settle_ms: args.upstream_settle_ms,
            call_timeout: std::time::Duration::from_secs(args.upstream_timeout_secs),
            ..GatewayOptions::default()
        },
    }
}

fn run_token(data_dir: &std::path::Path, cmd: TokenCommand) -> ExitCode {
    // Listing or revoking reads tokens that exist: a data dir with no store is a mistake (a
    // typo in --data-dir), not an empty list. Creating one makes the store, as a start does.
    let store = taskdeck_engine::store::Store::file_in(data_dir);
    if !matches!(cmd, TokenCommand::Create { .. }) && !store.exists() {
        eprintln!(
            "taskdeck: no task store at {}: Taskdeck has not run with this data dir (check \
             --data-dir)",
            store.display()
        );
        return ExitCode::from(1);
    }
    if !store.exists() {
        // Said first: a mistyped --data-dir makes a token the running Taskdeck never sees.
        eprintln!(
            "taskdeck: no task store was at {}: making a new one for this token (if Taskdeck \
             runs with another data dir, pass that --data-dir)",
            store.display()
        );
    }
    if let Err(e) = std::fs::create_dir_all(data_dir) {
        eprintln!("taskdeck: cannot create {}: {e}", data_dir.display());
        return ExitCode::from(1);
    }
    let tokens = match auth::TokenCommands::open(data_dir) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("taskdeck: {}", full_disk_or(&e, data_dir));
            return ExitCode::from(1);
        }
    };
    let result = match cmd {
        TokenCommand::Create { name, human, json } => {
            let role = if human { Role::Human } else { Role::Agent };
            tokens.create_with_role(&name, role).map(|token| {
                if json {
                    println!("{}", serde_json::json!({"name": name, "role": role.as_str(), "token": token}));
                } else {
                    println!("{token}");
                    if human {
                        eprintln!("Token for human {name:?} created. It is shown only once; open the UI with it, or send it as `Authorization: Bearer <token>`.");
                    } else {
                        eprintln!("Token for principal {name:?} created. It is shown only once; agents send it as `Authorization: Bearer <token>`.");
                    }
                }
            })
        }
        TokenCommand::List { json } => tokens.list().map(|tokens| {
            if json {
                println!("{}", serde_json::to_string(&tokens).unwrap_or_default());
            } else {
                // Tab-separated under a header, as `cut -f` reads it.
                println!("NAME\tROLE\tCREATED\tSTATE");
                for t in tokens {
                    println!(
                        "{}\t{}\t{}\t{}",
                        t.name,
                        t.role.as_str(),
                        t.created_at,
                        if t.revoked { "revoked" } else { "active" }
                    );
                }
            }
        }),
        TokenCommand::Revoke { name } => tokens.revoke(&name).map(|()| println!("revoked {name}")),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // Revoking is idempotent: the token is revoked, as asked.
        Err(e @ auth::AuthError::AlreadyRevoked(_)) => {
            println!("{e}");
            ExitCode::SUCCESS
        }
        Err(
            e @ (auth::AuthError::Exists(_)
            | auth::AuthError::CaseOf(..)
            | auth::AuthError::Unknown(_)
            | auth::AuthError::BadName(_)
            | auth::AuthError::Reserved(_)
            | auth::AuthError::AdminRole
            | auth::AuthError::AdminRevoke),
        ) => {
            eprintln!("taskdeck: {e}");
            ExitCode::from(3)
        }
        Err(e) => {
            eprintln!("taskdeck: {}", full_disk_or(&e, data_dir));
            ExitCode::from(1)
        }
    }
}

/// What a one-shot command says of `e`, a store failure in `data_dir`: when the disk has no room
/// for writes, that it is full and to run the command again once there is room, with `e` (SQLite
/// reports a store whose log files cannot be made as a "disk I/O error", and the store's own
/// "writes resume by themselves" holds for a running Taskdeck, not for a command that exits);
/// else `e`.
fn full_disk_or(e: &auth::AuthError, data_dir: &std::path::Path) -> String {
    let full = taskdeck_engine::store::disk_space::full(data_dir);
    match (full, e) {
        (Some(free), auth::AuthError::Store(taskdeck_engine::EngineError::DiskFull(_))) => {
            format!(
                "the disk holding the task store is full ({} KiB free); free some space, then \
                 run this again",
                free / 1024
            )
        }
        (Some(free), e) => format!(
            "{e} (the disk holding the task store is full, {} KiB free: free some space, then \
             run this again)",
            free / 1024
        ),
        (None, e) => e.to_string(),
    }
}

fn run_mcp_config(
    (data_dir, config_dir): (&std::path::Path, &std::path::Path),
    client: &str,
    name: Option<String>,
    token: Option<String>,
    port: u16,
    json: bool,
) -> ExitCode {
    use taskdeck_server::adapters::mcp_config::{CLIENTS, client_config};
    if !CLIENTS.contains(&client) {
        eprintln!(
            "taskdeck: unknown client {client:?}; one of: {}",
            CLIENTS.join(", ")
        );
        return ExitCode::from(2);
    }
    let token = match token {
        Some(t) => {
            taskdeck::cli::agent_token::warn_unless_live(data_dir, &t);
            t
        }
        None => {
            if let Err(e) = std::fs::create_dir_all(data_dir) {
                eprintln!("taskdeck: cannot create {}: {e}", data_dir.display());
                return ExitCode::from(1);
            }
            let name = name.unwrap_or_else(|| client.to_string());
            let client_token = auth::TokenCommands::open(data_dir).and_then(|tokens| {
                taskdeck::cli::agent_token::for_client(&tokens, config_dir, &name)
            });
            match client_token {
                Ok((t, made)) => {
                    taskdeck::cli::agent_token::say_which(&name, made, config_dir);
                    t
                }
                Err(
                    e @ (auth::AuthError::Exists(_)
                    | auth::AuthError::CaseOf(..)
                    | auth::AuthError::BadName(_)
                    | auth::AuthError::Reserved(_)),
                ) => {
                    eprintln!("taskdeck: {e} (pass --name NEW-NAME or --token TOKEN)");
                    return ExitCode::from(3);
                }
                Err(e) => {
                    eprintln!("taskdeck: {}", full_disk_or(&e, data_dir));
                    return ExitCode::from(1);
                }
            }
        }
    };
    let mut cfg = client_config(client, &format!("http://127.0.0.1:{port}/mcp"), &token)
        .expect("known client");
    // Codex reads its config.toml from $CODEX_HOME when that is set.
    if client == "codex"
        && let Some(home) = std::env::var_os("CODEX_HOME").filter(|h| !h.is_empty())
    {
        cfg.target = PathBuf::from(home)
            .join("config.toml")
            .display()
            .to_string();
    }
    if json {
        println!("{}", serde_json::to_string(&cfg).unwrap_or_default());
    } else {
        eprintln!("{} — {}:", cfg.title, cfg.target);
        println!("{}", cfg.text);
    }
    ExitCode::SUCCESS
}
