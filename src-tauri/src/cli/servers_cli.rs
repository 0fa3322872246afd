//! `taskdeck servers add|remove|list|import`: the gateway's upstream MCP servers from the
//! command line. `add` and `remove` edit `<config dir>/servers.json` directly, so they work
//! whether Taskdeck runs or not (a running one applies the change when it sees the file
//! change). `list` asks the running Taskdeck for live state (`GET /v1/servers`), and shows the
//! file's entries as `not running` when none runs. `import` is [`super::servers_import`].
//! No secret value (`env`, `headers`) is ever printed, only names.
//!
//! Exit codes: 0 success; 1 the file cannot be read or written, or Taskdeck answered with an
//! error; 2 a bad name or spec (usage); 3 `add` of a name taken, `remove` of an unknown name.

use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
    process::ExitCode,
};

use serde_json::Value;
use taskdeck_server::{
    adapters::auth,
    gateway::{
        ServerState,
        servers_file::{self, ServerSpec, ServersConfig, ServersFileError, Transport},
    },
    serve,
};

use super::servers_import::{self, ImportArgs};

/// One `taskdeck servers` command (its clap definition: `taskdeck servers --help`).
#[derive(clap::Subcommand)]
pub enum ServersCommand {
    /// Add a server: `add NAME -- COMMAND [ARGS...]` (stdio) or `add NAME --url URL` (Streamable HTTP)
    #[command(group(clap::ArgGroup::new("target").required(true).args(["url", "command"])))]
    Add {
        /// 1-64 of a-z 0-9 _ -, starting with a letter or digit (no "__"; not "taskdeck")
        name: String,
        /// The server's Streamable HTTP endpoint
        #[arg(long, conflicts_with_all = ["command", "env", "cwd"])]
        url: Option<String>,
        /// A header sent with every request, 'Name: value' (repeatable; with --url)
        #[arg(
            long = "header",
            value_name = "NAME: VALUE",
            requires = "url",
            conflicts_with = "command"
        )]
        headers: Vec<String>,
        /// An environment variable for the command, K=V (repeatable)
        #[arg(long = "env", value_name = "K=V")]
        env: Vec<String>,
        /// The command's working directory
        #[arg(long)]
        cwd: Option<PathBuf>,
        /// Keep it in the file without starting it
        #[arg(long)]
        disabled: bool,
        /// How long one call may take before Taskdeck gives up on it, in ms [default: 10 minutes]
        #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
        timeout_ms: Option<u64>,
        /// The command and its arguments (after --)
        #[arg(last = true)]
        command: Vec<String>,
    },
    /// Remove server NAME
    Remove {
        /// The server's name in servers.json
        name: String,
    },
    /// Every server with its state, tool count and target (live when Taskdeck runs)
    List {
        /// Print {"servers": [...]} as /v1/servers answers it
        #[arg(long)]
        json: bool,
        /// [default: TASKDECK_TOKEN, else the admin token file]
        #[arg(long, env = "TASKDECK_TOKEN", hide_env_values = true)]
        token: Option<String>,
    },
    /// Add a client's MCP servers to Taskdeck and rewrite its configuration to reach them
    /// through Taskdeck (--write: write it, after a backup; --print: print it; neither: a
    /// preview that changes nothing)
    Import(ImportArgs),
}

/// Where the command works: the directories `taskdeck` was given.
pub struct ServersContext {
    /// The config dir, with servers.json.
    pub config_dir: PathBuf,
    /// The data dir, where the running Taskdeck's port is looked up.
    pub data_dir: PathBuf,
}

/// Runs `cmd`.
pub fn run(cmd: ServersCommand, ctx: &ServersContext) -> ExitCode {
    let path = servers_file::servers_path(&ctx.config_dir);
    match cmd {
        ServersCommand::Add {
            name,
            url,
            headers,
            env,
            cwd,
            disabled,
            timeout_ms,
            command,
        } => {
            let spec = match spec_from_args(url, headers, env, cwd, command) {
                Ok(transport) => ServerSpec {
                    transport,
                    disabled,
                    timeout_ms,
                },
                Err(e) => {
                    eprintln!("taskdeck: {e}");
                    return ExitCode::from(2);
                }
            };
            if let Some(port) = serve::running_port(&ctx.data_dir)
                && let Some(why) = servers_file::own_endpoint(&spec, port)
            {
                eprintln!("taskdeck: {why}");
                return ExitCode::from(2);
            }
            let target = spec.target();
            match servers_file::add_server(&path, &name, spec) {
                Ok(()) => {
                    println!("added {name}: {target}");
                    note_running(ctx);
                    ExitCode::SUCCESS
                }
                Err(e) => file_error(e),
            }
        }
        ServersCommand::Remove { name } => match servers_file::remove_server(&path, &name) {
            Ok(_) => {
                println!("removed {name}");
                note_running(ctx);
                ExitCode::SUCCESS
            }
            Err(e) => file_error(e),
        },
        ServersCommand::List { json, token } => list(ctx, &path, token, json),
        ServersCommand::Import(args) => servers_import::run(args, ctx),
    }
}

/// The exit code of a servers.json error, after printing it.
pub fn file_error(e: ServersFileError) -> ExitCode {
    eprintln!("taskdeck: {e}");
    ExitCode::from(match e {
        ServersFileError::BadName(_) | ServersFileError::BadSpec(_) => 2,
        ServersFileError::Exists(_) | ServersFileError::Unknown(_) => 3,
        _ => 1,
    })
}

fn note_running(ctx: &ServersContext) {
    match serve::running_port(&ctx.data_dir) {
        Some(port) => eprintln!("The Taskdeck running on port {port} applies it now."),
        None => eprintln!("Taskdeck applies it when it starts."),
    }
}

/// The transport `add`'s flags describe. Errors: a malformed `--env` or `--header`, or no
/// command (clap already refuses both and neither of `--url` and a command).
fn spec_from_args(
    url: Option<String>,
    headers: Vec<String>,
    env: Vec<String>,
    cwd: Option<PathBuf>,
    command: Vec<String>,
) -> Result<Transport, String> {
    if let Some(url) = url {
        let headers = headers
            .iter()
            .map(|h| match h.split_once(':') {
                Some((k, v)) if !k.trim().is_empty() => {
                    Ok((k.trim().to_string(), v.trim().to_string()))
                }
                // Name only the part before any value: the value may be a secret.
                _ => Err("--header takes 'Name: value'".to_string()),
            })
            .collect::<Result<BTreeMap<_, _>, _>>()?;
        return Ok(Transport::Http { url, headers });
    }
    let mut words = command.into_iter();
    let command = words
        .next()
        .ok_or("give the server's command after --, or --url URL")?;
    let env = env
        .iter()
        .map(|kv| match kv.split_once('=') {
            Some((k, v)) if !k.is_empty() => Ok((k.to_string(), v.to_string())),
            _ => Err("--env takes K=V".to_string()),
        })
        .collect::<Result<BTreeMap<_, _>, _>>()?;
    Ok(Transport::Stdio {
        command,
        args: words.collect(),
        env,
        cwd,
    })
}

fn list(ctx: &ServersContext, path: &Path, token: Option<String>, as_json: bool) -> ExitCode {
    let servers = match serve::running_port(&ctx.data_dir) {
        Some(port) => {
            let Some(token) = token.or_else(|| auth::read_admin_token(&ctx.config_dir)) else {
                eprintln!(
                    "taskdeck: no token: {} does not exist (pass --token or TASKDECK_TOKEN)",
                    auth::admin_token_path(&ctx.config_dir).display()
                );
                return ExitCode::from(2);
            };
            match fetch_live(port, &token) {
                Ok(servers) => servers,
                Err(e) => {
                    eprintln!("taskdeck: {e}");
                    return ExitCode::from(1);
                }
            }
        }
        None => match ServersConfig::load(path) {
            Ok(config) => not_running(config),
            Err(e) => return file_error(e),
        },
    };
    if as_json {
        println!("{}", serde_json::json!({"servers": servers}));
    } else {
        print!("{}", table(&servers));
    }
    ExitCode::SUCCESS
}

/// `GET /v1/servers` of the Taskdeck on `port`.
fn fetch_live(port: u16, token: &str) -> Result<Vec<Value>, String> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    rt.block_on(async {
        let base = format!("http://127.0.0.1:{port}");
        let resp = super::endpoint::http_client()
            .get(format!("{base}/v1/servers"))
            .bearer_auth(token)
            .send()
            .await
            .map_err(|e| match e.is_timeout() {
                true => format!(
                    "Taskdeck at {base} did not answer within {} s; it may be hung \
                     (`taskdeck doctor` checks it)",
                    super::endpoint::ANSWER_TIMEOUT.as_secs()
                ),
                false => format!("Taskdeck is not answering at {base}"),
            })?;
        let status = resp.status();
        let body: Value = resp.json().await.unwrap_or(Value::Null);
        if !status.is_success() {
            return Err(format!(
                "{} ({status})",
                body["detail"].as_str().unwrap_or("request refused")
            ));
        }
        Ok(body["servers"].as_array().cloned().unwrap_or_default())
    })
}

/// The file's servers as `/v1/servers` would show them, with state `not running` (an entry
/// that is not a spec: `failed`, saying why).
fn not_running(config: ServersConfig) -> Vec<Value> {
    let unreadable: Vec<Value> = config
        .unreadable
        .iter()
        .map(|(name, entry)| {
            let status = taskdeck_server::gateway::server_target::unreadable_status(name, entry, 0);
            let mut v = serde_json::to_value(status).unwrap_or_default();
            v["sinceMs"] = Value::Null;
            v
        })
        .collect();
    let mut all: Vec<Value> = config
        .servers
        .into_iter()
        .map(|(name, spec)| {
            let disabled = spec.disabled;
            let refusal = servers_file::refusal(&name, &spec);
            // As the running Taskdeck shows one it refuses: failed, saying why.
            let state = match refusal {
                Some(_) => ServerState::Failed,
                None => ServerState::Starting,
            };
            let mut status = spec.public().status(&name, state, 0);
            status.last_error = refusal;
            let mut v = serde_json::to_value(&status).unwrap_or_default();
            if !disabled && status.state != ServerState::Failed {
                v["state"] = "not running".into();
            }
            v["sinceMs"] = Value::Null;
            v
        })
        .collect();
    all.extend(unreadable);
    all.sort_by(|a, b| a["name"].as_str().cmp(&b["name"].as_str()));
    all
}

/// NAME STATE TOOLS PROTOCOL TARGET, one row per server (PROTOCOL: the version negotiated with
/// a connected one, `-` before; TOOLS: those served); on the next lines a failed one's last
/// error, and each tool it lists that is not served, with why.
fn table(servers: &[Value]) -> String {
    if servers.is_empty() {
        return "no servers (add one with `taskdeck servers add`)\n".to_string();
    }
    let text = |v: &Value, k: &str| v[k].as_str().unwrap_or("").to_string();
    let name_w = servers
        .iter()
        .map(|s| text(s, "name").len())
        .max()
        .unwrap_or(0)
        .max(4);
    let state_w = servers
        .iter()
        .map(|s| text(s, "state").len())
        .max()
        .unwrap_or(0)
        .max(5);
    let mut out = format!(
        "{:<name_w$}  {:<state_w$}  {:>5}  {:<10}  TARGET\n",
        "NAME", "STATE", "TOOLS", "PROTOCOL"
    );
    for s in servers {
        out.push_str(&format!(
            "{:<name_w$}  {:<state_w$}  {:>5}  {:<10}  {}\n",
            text(s, "name"),
            text(s, "state"),
            s["toolCount"].as_u64().unwrap_or(0),
            s["protocolVersion"].as_str().unwrap_or("-"),
            text(s, "target")
        ));
        if let Some(error) = s["lastError"].as_str() {
            // The upstream's own words: nothing in them may act on the terminal.
            let error = super::terminal_text::shown(error);
            out.push_str(&format!("{:name_w$}  last error: {error}\n", ""));
        }
        for tool in s["unservedTools"].as_array().into_iter().flatten() {
            let name = super::terminal_text::shown(tool["name"].as_str().unwrap_or(""));
            let why = super::terminal_text::shown(tool["reason"].as_str().unwrap_or(""));
            out.push_str(&format!("{:name_w$}  not served: {name}: {why}\n", ""));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn flags_become_specs() {
        let http = spec_from_args(
            Some("https://x.example/mcp".into()),
            vec!["Authorization: Bearer a:b".into()],
            vec![],
            None,
            vec![],
        )
        .unwrap();
        assert!(
            matches!(&http, Transport::Http { headers, .. } if headers["Authorization"] == "Bearer a:b")
        );
        let stdio = spec_from_args(
            None,
            vec![],
            vec!["A=1=2".into()],
            None,
            vec!["npx".into(), "-y".into(), "pkg".into()],
        )
        .unwrap();
        assert!(
            matches!(&stdio, Transport::Stdio { command, args, env, .. } if command == "npx" && args == &["-y", "pkg"] && env["A"] == "1=2")
        );
        let bad = spec_from_args(
            Some("https://x".into()),
            vec!["s3cret".into()],
            vec![],
            None,
            vec![],
        )
        .unwrap_err();
        assert!(!bad.contains("s3cret"));
        assert!(spec_from_args(None, vec![], vec!["=v".into()], None, vec!["x".into()]).is_err());
        assert!(spec_from_args(None, vec![], vec![], None, vec![]).is_err());
    }

    #[test]
    fn the_table_shows_failures_with_their_error() {
        let rows = [
            json!({"name": "fs", "state": "connected", "toolCount": 14, "target": "npx fs",
                   "protocolVersion": "2025-11-25", "unservedTools": [
                       {"name": "bad\u{1b}name", "reason": "its name is not 1-128 of A-Z a-z 0-9 _ - ."}]}),
            json!({"name": "docs", "state": "failed", "toolCount": 0,
                   "target": "https://x.example/mcp", "lastError": "connection refused"}),
        ];
        let t = table(&rows);
        let lines: Vec<_> = t.lines().collect();
        assert_eq!(lines[0], "NAME  STATE      TOOLS  PROTOCOL    TARGET");
        assert_eq!(lines[1], "fs    connected     14  2025-11-25  npx fs");
        assert_eq!(
            lines[2],
            "      not served: bad\\u{1b}name: its name is not 1-128 of A-Z a-z 0-9 _ - ."
        );
        assert_eq!(
            lines[3],
            "docs  failed         0  -           https://x.example/mcp"
        );
        assert_eq!(lines[4], "      last error: connection refused");
        assert!(table(&[]).starts_with("no servers"));
    }

    #[test]
    fn not_running_keeps_disabled_and_names_only() {
        let mut config = ServersConfig::default();
        config.servers.insert(
            "a".into(),
            ServerSpec {
                transport: Transport::Stdio {
                    command: "x".into(),
                    args: vec![],
                    env: BTreeMap::from([("KEY".into(), "s3cret".into())]),
                    cwd: None,
                },
                disabled: false,
                timeout_ms: None,
            },
        );
        config.servers.insert(
            "b".into(),
            ServerSpec {
                transport: Transport::Http {
                    url: "https://x.example/".into(),
                    headers: BTreeMap::new(),
                },
                disabled: true,
                timeout_ms: None,
            },
        );
        // Written by hand with a name the CLI refuses: failed, saying why, as when running.
        config.servers.insert(
            "co_".into(),
            ServerSpec {
                transport: Transport::Stdio {
                    command: "x".into(),
                    args: vec![],
                    env: BTreeMap::new(),
                    cwd: None,
                },
                disabled: false,
                timeout_ms: None,
            },
        );
        let rows = not_running(config);
        assert_eq!(rows[0]["state"], "not running");
        assert_eq!(rows[0]["envKeys"], json!(["KEY"]));
        assert_eq!(rows[1]["state"], "disabled");
        assert_eq!(rows[2]["state"], "failed");
        assert!(
            rows[2]["lastError"]
                .as_str()
                .is_some_and(|e| e.starts_with("not started: bad server name \"co_\"")),
            "{}",
            rows[2]
        );
        assert!(!Value::Array(rows).to_string().contains("s3cret"));
    }
}
