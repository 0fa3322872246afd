//! `taskdeck servers import CLIENT [--file PATH] [--write]`: the file side of
//! `taskdeck_server::gateway::import`. Reads the client's file, adds its servers to
//! servers.json (reporting each entry on stderr), gets a token for the client, and prints the
//! client's file rewritten to reach those servers through Taskdeck; with `--write`, writes it
//! back after copying the original to `FILE.taskdeck-backup-<unix ms>`.

use std::{io::Write, path::PathBuf, process::ExitCode};

use serde_json::Value;
use taskdeck_server::{
    adapters::{auth, mcp_config},
    gateway::{
        import::{self, Client, ImportPlan, Scope, Verdict},
        servers_file::{self, ServersConfig, ServersFileError},
    },
    serve,
};

use super::{
    agent_token,
    servers_cli::{ServersContext, file_error},
};

/// `taskdeck servers import`'s arguments.
#[derive(clap::Args)]
pub struct ImportArgs {
    /// claude-desktop, claude-code, vscode or cursor
    #[arg(value_parser = ["claude-desktop", "claude-code", "vscode", "cursor"])]
    client: String,
    /// The client's configuration file [default: the user's own file of that client, e.g.
    /// ~/.config/Claude/claude_desktop_config.json, ~/.claude.json, ~/.config/Code/User/mcp.json,
    /// ~/.cursor/mcp.json]
    #[arg(long)]
    file: Option<PathBuf>,
    /// Write the rewritten file back (after a backup next to it) instead of only printing it
    #[arg(long)]
    write: bool,
    /// Principal name for the client's new token [default: the client's name]
    #[arg(long)]
    name: Option<String>,
    /// Use this token instead of creating one
    #[arg(long, env = "TASKDECK_TOKEN", hide_env_values = true)]
    token: Option<String>,
    /// Port Taskdeck listens on [default: the one serving the data dir, else 4747]
    #[arg(long, env = "TASKDECK_PORT")]
    port: Option<u16>,
}

/// Runs the import.
pub fn run(args: ImportArgs, ctx: &ServersContext) -> ExitCode {
    let client = Client::from_id(&args.client).expect("clap checked the client");
    let Some(file_path) = args.file.clone().or_else(|| client.default_file()) else {
        eprintln!(
            "taskdeck: cannot tell where {} keeps its file; pass --file",
            args.client
        );
        return ExitCode::from(2);
    };
    // VS Code's mcp.json is JSON with comments and trailing commas (JSONC), which JSON5 covers;
    // the others are plain JSON. A file written back (`--write`) is plain JSON, its comments
    // kept only in the backup.
    // `jsonc`: it parsed only as JSONC (comments or trailing commas), which the rewrite loses.
    let (file, jsonc): (Value, bool) = match std::fs::read_to_string(&file_path) {
        Ok(text) => match serde_json::from_str(&text) {
            Ok(v) => (v, false),
            Err(e) => match json5::from_str(&text) {
                Ok(v) => (v, true),
                Err(_) => {
                    eprintln!("taskdeck: {} is not valid JSON: {e}", file_path.display());
                    return ExitCode::from(1);
                }
            },
        },
        Err(e) => {
            eprintln!("taskdeck: cannot read {}: {e}", file_path.display());
            return ExitCode::from(1);
        }
    };
    let port = args
        .port
        .or_else(|| serve::running_port(&ctx.data_dir))
        .unwrap_or(serve::DEFAULT_PORT);
    let servers_path = servers_file::servers_path(&ctx.config_dir);
    // Plan once before anything changes, so a malformed file changes nothing.
    let existing = match ServersConfig::load(&servers_path) {
        Ok(c) => c,
        Err(e) => return file_error(e),
    };
    // A project's own file: its stdio servers run in the project, as the client runs them.
    let project_dir = import::project_dir_of(client, &file_path);
    let project = project_dir.as_deref().and_then(|d| d.to_str());
    if let Err(e) = import::plan(client, &file, &existing, (port, project)) {
        eprintln!("taskdeck: {}: {e}", file_path.display());
        return ExitCode::from(1);
    }
    let given_token = args.token.is_some();
    let token = match args.token {
        Some(t) => {
            agent_token::warn_unless_live(&ctx.data_dir, &t);
            t
        }
        None => match create_token(ctx, args.name.as_deref().unwrap_or(client.id())) {
            Ok(t) => t,
            Err(code) => return code,
        },
    };
    let mut plan = ImportPlan::default();
    let applied = servers_file::change(&servers_path, |config| {
        plan = import::plan(client, &file, config, (port, project)).map_err(|problem| {
            ServersFileError::Malformed {
                path: file_path.clone(),
                problem,
            }
        })?;
        for (name, spec) in &plan.to_add {
            config.servers.insert(name.clone(), spec.clone());
        }
        Ok(())
    });
    if let Err(e) = applied {
        return file_error(e);
    }
    report(&plan, &file_path);
    let mcp_url = format!("http://127.0.0.1:{port}/mcp");
    let entry = mcp_config::server_entry(client.id(), &mcp_url, &token).expect("known client");
    let rewritten = import::rewrite(client, &file, &plan, entry);
    let text = serde_json::to_string_pretty(&rewritten).expect("JSON") + "\n";
    // Written back, the file (which holds the token) is not also printed; printed only when it
    // could not be written, for the person to save it themselves.
    if !args.write {
        print!("{text}");
    }
    if let Some(dir) = &project_dir {
        eprintln!(
            "note: {} belongs to the project in {}: the rewritten file holds the token; keep it \
             out of version control (or give each person their own token there)",
            file_path.display(),
            dir.display()
        );
    }
    if jsonc && rewritten != file {
        eprintln!(
            "note: {} has comments or trailing commas; the rewritten file is plain JSON without \
             them{}",
            file_path.display(),
            if args.write {
                " (the backup keeps them)"
            } else {
                ""
            }
        );
    }
    if args.write && rewritten == file {
        eprintln!(
            "{} already reaches them through Taskdeck: nothing to write.",
            file_path.display()
        );
    } else if args.write {
        match write_back(&file_path, &text) {
            Ok(backup) => eprintln!(
                "Wrote {} (the original is in {}). Restart {} to connect through Taskdeck.",
                file_path.display(),
                backup.display(),
                args.client
            ),
            Err(e) => {
                print!("{text}");
                eprintln!(
                    "taskdeck: cannot write {}: {e} (the file as it would be is on stdout)",
                    file_path.display()
                );
                return ExitCode::from(1);
            }
        }
    } else {
        // The token this run gave is in the file printed: writing it needs that one again (a
        // client's token is not kept, and a second one of the same name is refused).
        let again = if given_token {
            "--write"
        } else {
            "--write --token TOKEN (the token in the file above)"
        };
        eprintln!(
            "This is {} rewritten to reach them through Taskdeck (its servers are in Taskdeck \
             now); to write it, after a backup next to it, run this again with {again}.",
            file_path.display()
        );
    }
    ExitCode::SUCCESS
}

fn create_token(ctx: &ServersContext, name: &str) -> Result<String, ExitCode> {
    if let Err(e) = std::fs::create_dir_all(&ctx.data_dir) {
        eprintln!("taskdeck: cannot create {}: {e}", ctx.data_dir.display());
        return Err(ExitCode::from(1));
    }
    let client_token = auth::TokenCommands::open(&ctx.data_dir)
        .and_then(|tokens| agent_token::for_client(&tokens, &ctx.config_dir, name));
    match client_token {
        Ok((t, made)) => {
            agent_token::say_which(name, made, &ctx.config_dir);
            Ok(t)
        }
        Err(e) => {
            eprintln!("taskdeck: {e} (pass --name NEW-NAME or --token TOKEN)");
            Err(ExitCode::from(3))
        }
    }
}

/// One line per entry of the client's file, on stderr.
fn report(plan: &ImportPlan, file: &std::path::Path) {
    eprintln!("From {}:", file.display());
    if plan.entries.is_empty() {
        eprintln!("  (no servers)");
    }
    for e in &plan.entries {
        let scope = match &e.scope {
            Scope::TopLevel => String::new(),
            Scope::Project(p) => format!(" (project {p})"),
        };
        let what = match &e.verdict {
            Verdict::Added { name } => format!("added as {name}"),
            Verdict::AlreadyThere { name } => format!("already in servers.json as {name}"),
            Verdict::Taskdeck => "is Taskdeck itself; replaced by the new taskdeck entry".into(),
            Verdict::Skipped { reason } => format!("not imported, kept in the file: {reason}"),
        };
        eprintln!("  {:?}{scope}: {what}", e.client_name);
    }
}

/// Copies `path` to `path.taskdeck-backup-<unix ms>`, then replaces it with `text` through a
/// temp file renamed over it; both end up readable by their owner only (mode 0600: they hold
/// secrets). Returns the backup's path.
fn write_back(path: &std::path::Path, text: &str) -> std::io::Result<PathBuf> {
    let ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    let mut backup = path.as_os_str().to_owned();
    backup.push(format!(".taskdeck-backup-{ms}"));
    let backup = PathBuf::from(backup);
    std::fs::copy(path, &backup)?;
    let mut permissions = std::fs::metadata(path)?.permissions();
    // Both files hold secrets (the backup the servers' env and headers, the new file a token):
    // for their owner only.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        permissions.set_mode(0o600);
        std::fs::set_permissions(&backup, permissions.clone())?;
    }
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
    let mut tmp = tempfile::NamedTempFile::new_in(dir.unwrap_or(std::path::Path::new(".")))?;
    tmp.write_all(text.as_bytes())?;
    tmp.as_file().set_permissions(permissions)?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(backup)
}
