//! `taskdeck servers import CLIENT [--file PATH] [--write | --print]`: the file side of
//! `taskdeck_server::gateway::import`. Reads the client's file and reports each of its servers
//! on stderr. Without `--write` or `--print` it is a preview and changes nothing: what would be
//! imported, and the client's file as it would be (on stdout, the token left as `TOKEN` unless
//! `--token` gives one). With either, it adds the servers to servers.json and gets a token for
//! the client; `--print` prints the client's file rewritten to reach those servers through
//! Taskdeck, `--write` writes it back after copying the original to
//! `FILE.taskdeck-backup-<unix ms>`.

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
    /// Import: add the servers, get the client's token, and write its file back rewritten
    /// (after a backup next to it). Without --write or --print nothing changes (a preview)
    #[arg(long, conflicts_with = "print")]
    write: bool,
    /// Import as --write does, but print the rewritten file (it holds the token) instead of
    /// writing it, for you to save it yourself
    #[arg(long)]
    print: bool,
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
    if port == 0 {
        eprintln!("taskdeck: --port 0 is no port a client can reach: give Taskdeck's own port");
        return ExitCode::from(2);
    }
    let servers_path = servers_file::servers_path(&ctx.config_dir);
    // Plan once before anything changes, so a malformed file changes nothing.
    let existing = match ServersConfig::load(&servers_path) {
        Ok(c) => c,
        Err(e) => return file_error(e),
    };
    // A project's own file: its stdio servers run in the project, as the client runs them.
    let project_dir = import::project_dir_of(client, &file_path);
    let project = project_dir.as_deref().and_then(|d| d.to_str());
    let preview_plan = match import::plan(client, &file, &existing, (port, project)) {
        Ok(plan) => plan,
        Err(e) => {
            eprintln!("taskdeck: {}: {e}", file_path.display());
            return ExitCode::from(1);
        }
    };
    let name = args.name.as_deref().unwrap_or(client.id());
    // Imported before: the client's file holds this principal's live token, which it keeps.
    let kept = match &args.token {
        None => token_in_file(ctx, &file, name),
        Some(_) => None,
    };
    if kept.is_some() {
        eprintln!(
            "Using principal {name:?}'s token from {}'s taskdeck entry.",
            file_path.display()
        );
    }
    if !args.write && !args.print {
        let file = (&file, file_path.as_path(), jsonc);
        let who = (client, name, args.token.as_deref(), kept.is_some());
        return preview(ctx, who, &preview_plan, file, port);
    }
    let given = args.token.clone().or(kept);
    let given_token = given.is_some();
    let token = match given {
        Some(t) => {
            agent_token::warn_unless_live(&ctx.data_dir, &t);
            t
        }
        None => match create_token(ctx, name) {
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
    report(&plan, &file_path, false);
    let (rewritten, text) = rewritten_file(client, &file, &plan, port, &token);
    // Written back, the file (which holds the token) is not also printed; printed only when it
    // could not be written, for the person to save it themselves.
    if args.print {
        print!("{text}");
    }
    let backup = if args.write {
        " (the backup keeps them)"
    } else {
        ""
    };
    notes(client, &file_path, (&file, jsonc), &rewritten, backup);
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
             now; the file holds the token, keep it private): save it there and restart {}, or \
             have Taskdeck write it, after a backup next to it, with {again}.",
            file_path.display(),
            args.client
        );
    }
    ExitCode::SUCCESS
}

/// The preview: the report and the client's file as an import would make them, on stderr and
/// stdout, with nothing written and no token made. `name` is the client's principal, `given`
/// the `--token` given, if any, `kept`: the client's file holds that principal's live token,
/// which the import keeps (written `TOKEN` here, as a token to be made is). Exits 3, saying
/// why, when the import would be refused its token.
fn preview(
    ctx: &ServersContext,
    (client, name, given, kept): (Client, &str, Option<&str>, bool),
    plan: &ImportPlan,
    (file, file_path, jsonc): (&Value, &std::path::Path, bool),
    port: u16,
) -> ExitCode {
    report(plan, file_path, true);
    let token = match given {
        Some(t) => {
            agent_token::warn_unless_live(&ctx.data_dir, t);
            t
        }
        None if kept => "TOKEN",
        None => match agent_token::would_make(&ctx.data_dir, &ctx.config_dir, name) {
            Ok(true) => {
                eprintln!("Would create a token for principal {name:?} (TOKEN below).");
                "TOKEN"
            }
            Ok(false) => {
                eprintln!(
                    "Would use principal {name:?}'s token from its token file (TOKEN below)."
                );
                "TOKEN"
            }
            Err(e) => {
                eprintln!(
                    "taskdeck: the import would be refused its token: {}",
                    token_refused(&e, name)
                );
                return ExitCode::from(3);
            }
        },
    };
    let (rewritten, text) = rewritten_file(client, file, plan, port, token);
    print!("{text}");
    let backup = " (--write's backup would keep them)";
    notes(client, file_path, (file, jsonc), &rewritten, backup);
    eprintln!(
        "Nothing changed: this is a preview of {} as the import would make it. To import, run \
         this again with --write (adds the servers to Taskdeck and writes the file, after a \
         backup next to it) or --print (adds them and prints the file with its token, for you \
         to save).",
        file_path.display()
    );
    ExitCode::SUCCESS
}

/// `file` with the imported servers replaced by Taskdeck's entry reaching port `port` with
/// `token`, and its text as written (pretty JSON, one newline at the end).
fn rewritten_file(
    client: Client,
    file: &Value,
    plan: &ImportPlan,
    port: u16,
    token: &str,
) -> (Value, String) {
    let mcp_url = format!("http://127.0.0.1:{port}/mcp");
    let entry = mcp_config::server_entry(client.id(), &mcp_url, token).expect("known client");
    let rewritten = import::rewrite(client, file, plan, entry);
    let text = serde_json::to_string_pretty(&rewritten).expect("JSON") + "\n";
    (rewritten, text)
}

/// The notes on stderr about the rewritten file of `client`: a project's file holds the token;
/// a JSONC file's comments are gone (`backup` says where they are kept, e.g. " (the backup
/// keeps them)", or is empty).
fn notes(
    client: Client,
    file_path: &std::path::Path,
    (file, jsonc): (&Value, bool),
    rewritten: &Value,
    backup: &str,
) {
    if let Some(dir) = import::project_dir_of(client, file_path) {
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
             them{backup}",
            file_path.display(),
        );
    }
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
            eprintln!("taskdeck: {}", token_refused(&e, name));
            Err(ExitCode::from(3))
        }
    }
}

/// The token of principal `name` that the client's `file` already holds (a `Bearer td_…` in
/// any of its strings: the taskdeck entry's Authorization, as an earlier import or
/// `mcp-config` wrote it), when it is live in the store of the data dir and that principal's;
/// else `None`. Reading only: no store is created.
fn token_in_file(ctx: &ServersContext, file: &Value, name: &str) -> Option<String> {
    fn bearers(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::String(s) => {
                if let Some(at) = s.find("Bearer ") {
                    let token = s[at + "Bearer ".len()..].trim();
                    if token.starts_with("td_") && !token.contains(char::is_whitespace) {
                        out.push(token.to_string());
                    }
                }
            }
            Value::Array(items) => items.iter().for_each(|i| bearers(i, out)),
            Value::Object(map) => map.values().for_each(|i| bearers(i, out)),
            _ => {}
        }
    }
    if !taskdeck_engine::store::Store::file_in(&ctx.data_dir).exists() {
        return None;
    }
    let mut found = Vec::new();
    bearers(file, &mut found);
    let tokens = auth::TokenCommands::open(&ctx.data_dir).ok()?;
    found
        .into_iter()
        .find(|t| tokens.live_principal(t).ok().flatten().as_deref() == Some(name))
}

/// Why the client's token for principal `name` cannot be made, and the way on. A name with a
/// token already whose client's file does not hold it (an earlier `mcp-config`, the Connect
/// dialog): `--token` keeps it; revoking it would cut off whatever uses it.
fn token_refused(e: &auth::AuthError, name: &str) -> String {
    match e {
        auth::AuthError::Exists(_) => format!(
            "principal {name:?} has a token already (made by `taskdeck mcp-config`, the Connect \
             dialog or an earlier import), and the client's file does not hold it: pass it with \
             --token to keep using it, or --name NEW-NAME for a new principal (or `taskdeck \
             token revoke {name}` first, which cuts off whatever uses it)"
        ),
        e => format!("{e} (pass --name NEW-NAME or --token TOKEN)"),
    }
}

/// One line per entry of the client's file, on stderr; `preview`: what an import would do.
fn report(plan: &ImportPlan, file: &std::path::Path, preview: bool) {
    eprintln!("From {}:", file.display());
    if plan.entries.is_empty() {
        eprintln!("  (no servers)");
    }
    let (added, replaced, kept) = match preview {
        true => (
            "would be added as",
            "would be replaced",
            "would not be imported",
        ),
        false => ("added as", "replaced", "not imported"),
    };
    for e in &plan.entries {
        let scope = match &e.scope {
            Scope::TopLevel => String::new(),
            Scope::Project(p) => format!(" (project {p})"),
        };
        let what = match &e.verdict {
            Verdict::Added { name } => format!("{added} {name}"),
            Verdict::AlreadyThere { name } => format!("already in servers.json as {name}"),
            Verdict::Taskdeck => {
                format!("is Taskdeck itself; {replaced} by the new taskdeck entry")
            }
            Verdict::Skipped { reason } => format!("{kept}, kept in the file: {reason}"),
        };
        eprintln!("  {:?}{scope}: {what}", e.client_name);
    }
}

/// Copies `path` to `path.taskdeck-backup-<unix ms>`, then replaces it with `text` through a
/// temp file renamed over it; both end up readable by their owner only (mode 0600: they hold
/// secrets). A symlink (a dotfile manager's) is followed: the file it points to is the one
/// backed up and replaced, and the link stays. Returns the backup's path.
fn write_back(path: &std::path::Path, text: &str) -> std::io::Result<PathBuf> {
    let path = &std::fs::canonicalize(path)?;
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
