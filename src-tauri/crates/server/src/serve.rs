//! `taskdeck serve`: the headless server. Opens the store, gives unsettled tasks their fate,
//! and serves `/mcp` (MCP Streamable HTTP) and `/v1` (HTTP API + events) on 127.0.0.1.

use std::{net::SocketAddr, path::PathBuf, sync::Arc, time::Duration};

use axum::{Router, extract::DefaultBodyLimit, middleware, routing::any};
use rmcp::transport::streamable_http_server::{
    StreamableHttpServerConfig, StreamableHttpService, session::local::LocalSessionManager,
};
use tokio_util::sync::CancellationToken;

use crate::{
    adapters::{
        approvals_api, audit_api,
        auth::{self, Authenticator},
        guard::{Guard, guard, loopback_origins},
        hooks_api, http_api, jobs_api, logs_api,
        mcp::{McpCore, McpHandler},
        mcp_endpoint::{self, McpEndpoint, TaskRouting},
        policy_api, servers_api, ui_assets, wire,
    },
    gateway::{
        Gateway, GatewayOptions,
        servers_watch::{self, ServersWatch},
    },
    hooks::Hooks,
    policy::Policy,
    tools,
};
use taskdeck_engine::{
    Engine, EngineConfig, EngineError,
    feed::ChangeFeed,
    store::{
        Durability, Store,
        integrity::{self as store_check, StartCheckError},
    },
};

use crate::data_dir_lock;

/// The default port of the local endpoint (`--port`, `TASKDECK_PORT`).
pub const DEFAULT_PORT: u16 = 4747;

/// Everything `serve` needs.
#[derive(Debug, Clone)]
pub struct ServeConfig {
    /// Port on 127.0.0.1; 0 picks a free one (printed at start).
    pub port: u16,
    /// Where the store, its search index, the logs and the lock live.
    pub data_dir: PathBuf,
    /// Where the admin-token file, servers.json and policy.json live.
    pub config_dir: PathBuf,
    /// Requests without a token act as principal `anonymous` (warned loudly).
    pub allow_anonymous: bool,
    /// Serve the MCP conformance suite's fixture tools.
    pub conformance_fixtures: bool,
    /// Where 2026-07-28 `tasks/get` and task creation are answered (see
    /// `adapters::mcp_endpoint`).
    pub task_routing: TaskRouting,
    /// How hard each commit of the store is pushed to disk.
    pub durability: Durability,
    /// The engine's settings: default ttl, poll interval, limits.
    pub engine: EngineConfig,
    /// How the gateway to upstream MCP servers treats calls.
    pub gateway: GatewayOptions,
}

/// Errors that stop the server from starting, worded for the person who started it.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The port is taken (by another Taskdeck, or another program).
    #[error(
        "port {0} on 127.0.0.1 is already in use (is Taskdeck already running? choose another with --port)"
    )]
    PortBusy(u16),
    /// Another Taskdeck process holds the data dir (the path).
    #[error(
        "another Taskdeck is already using the data dir {} (stop it first, or use --data-dir)",
        .0.display()
    )]
    DataDirBusy(PathBuf),
    /// The store failed its start check: the one paragraph that names the file and the way out.
    #[error("{0}")]
    DamagedStore(String),
    /// Anything else, as its message says (e.g. the port cannot be bound, a full disk).
    #[error("{0}")]
    Other(String),
}

/// A running server: where it listens and how to stop it.
pub struct Running {
    /// The address it listens on (127.0.0.1 and the port, chosen when `port` was 0).
    pub addr: SocketAddr,
    /// The engine it serves.
    pub engine: Engine,
    /// The file holding the admin token, `<config dir>/admin-token`.
    pub admin_token_file: PathBuf,
    /// Cancel to stop: the server shuts down gracefully.
    pub shutdown: CancellationToken,
    /// Ends once the server has stopped, the engine and the gateway are shut down and the
    /// store's WAL is emptied.
    pub done: tokio::task::JoinHandle<()>,
    /// Held for the process's life (an exclusive lock on `<data dir>/taskdeck.lock`).
    _data_dir_lock: data_dir_lock::DataDirLock,
    /// Applies edits of servers.json while running (dropped: no longer watched).
    _servers_watch: Option<ServersWatch>,
}

/// Starts the server and returns once it listens.
pub async fn start(cfg: ServeConfig) -> Result<Running, ServeError> {
    let other = |e: &dyn std::fmt::Display| ServeError::Other(e.to_string());
    let listener = match tokio::net::TcpListener::bind(("127.0.0.1", cfg.port)).await {
        Ok(l) => l,
        Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => {
            return Err(ServeError::PortBusy(cfg.port));
        }
        Err(e) => {
            return Err(ServeError::Other(format!(
                "cannot listen on 127.0.0.1:{}: {e}",
                cfg.port
            )));
        }
    };
    let addr = listener.local_addr().map_err(|e| other(&e))?;

    // One process per data dir: a second one would "recover" the first one's running tasks.
    std::fs::create_dir_all(&cfg.data_dir).map_err(|e| {
        ServeError::Other(format!(
            "cannot use {} as the data dir: {e} (a file of that name is in the way, or its \
             parent cannot be written); pass another --data-dir",
            cfg.data_dir.display()
        ))
    })?;
    // What the lock file said before this start (read under the lock): a start refused before
    // the engine has started (the store check, opening the store, recording the last run's
    // unsettled tasks) is no run of Taskdeck, so it puts that back (the next start and `taskdeck
    // doctor` would take the refusal for a crash, and a crash turns off the check for an
    // emptied store).
    let data_dir_lock::Acquired {
        lock,
        unclean,
        last_run: before,
    } = data_dir_lock::acquire(&cfg.data_dir).map_err(|e| match e {
        data_dir_lock::LockError::Busy(dir) => ServeError::DataDirBusy(dir),
        e => other(&e),
    })?;
    // The last run's port is not this one's: until this start records its own, client tools
    // must not take the old one (another program may hold it now) for this Taskdeck's.
    let _ = std::fs::remove_file(port_path(&cfg.data_dir));
    // A damaged store is refused before anything reads or writes it (docs/operations.md).
    let checked = store_check::check_at_start(&cfg.data_dir, before.as_deref()).map_err(|e| {
        data_dir_lock::restore_state(&cfg.data_dir, before.as_deref());
        match e {
            StartCheckError::Damaged { .. } => ServeError::DamagedStore(e.to_string()),
            StartCheckError::Unreadable(_) => full_disk_or(&e, &cfg.data_dir),
        }
    })?;
    tracing::info!(
        bytes = checked.bytes,
        ms = checked.elapsed.as_millis() as u64,
        after_unclean_stop = unclean,
        "store checked"
    );
    let feed = ChangeFeed::new(4096);
    let refused = |e: ServeError| {
        data_dir_lock::restore_state(&cfg.data_dir, before.as_deref());
        e
    };
    let store = Store::open(&cfg.data_dir, cfg.durability, feed)
        .map_err(|e| refused(full_disk_or(&e, &cfg.data_dir)))?;
    let admin_token_file = auth::ensure_admin_token(&store, &cfg.config_dir)
        .await
        .map_err(|e| refused(full_disk_or(&e, &cfg.data_dir)))?;
    let engine = Engine::new(store, cfg.engine.clone(), wire::task_error_object);
    let policy = Arc::new(Policy::new(&cfg.config_dir).keeping_to_itself(&cfg.data_dir));
    let gateway = Gateway::new(
        engine.clone(),
        policy.clone(),
        &cfg.config_dir,
        GatewayOptions {
            log_dir: Some(tools::output::log_dir(&cfg.data_dir)),
            ..cfg.gateway.clone()
        },
        addr.port(),
    );
    let external = tools::register_all(
        &engine,
        cfg.conformance_fixtures,
        policy.clone(),
        &cfg.data_dir,
    );
    let hooks = Hooks::register(&engine, policy.clone(), addr.port());
    // Taskdeck's own tools, before the gateway registers any upstream's.
    let core = Arc::new(McpCore::new(
        engine.clone(),
        cfg.conformance_fixtures,
        Some(gateway.clone()),
    ));
    // Before the engine starts: the upstreams' unsettled calls must find their tools.
    gateway.reload().await;
    let servers_watch = {
        let (path, gateway) = (gateway.servers_path().to_path_buf(), gateway.clone());
        let runtime = tokio::runtime::Handle::current();
        servers_watch::watch(&path, move || {
            let gateway = gateway.clone();
            runtime.spawn(async move { gateway.reload().await });
        })
    };
    let servers_watch = servers_watch
        .inspect_err(|e| {
            tracing::warn!("servers.json is not watched ({e}); changes apply at the next start")
        })
        .ok();
    // Recording what the last run left unsettled needs writes: a full disk stops the start, and
    // the engine error's "writes resume by themselves" would not hold for a process that exits.
    let recovery = engine.start().await.map_err(|e| {
        refused(match e {
            EngineError::DiskFull(why) => ServeError::Other(format!(
                "cannot start: the disk holding the task store is full ({why}), and the tasks \
                 the last run left unsettled must be recorded first; free some space, then \
                 start Taskdeck again"
            )),
            e => other(&e),
        })
    })?;
    // The store's writer logs a full disk when a write finds it, not when it was full already;
    // said once the start can no longer be refused for it.
    if engine.store().disk_full().borrow().is_some() {
        tracing::warn!(
            "the disk holding the task store is full: writes are refused until there is room \
             (they resume by themselves)"
        );
    }
    if recovery.resumed + recovery.failed > 0 {
        tracing::info!(
            resumed = recovery.resumed,
            failed = recovery.failed,
            "recovered tasks left unsettled by the previous run"
        );
    }
    if cfg.allow_anonymous {
        tracing::warn!(
            "--allow-anonymous: requests without a token act as principal \"anonymous\"; use only for local test runs"
        );
    }

    let shutdown = CancellationToken::new();
    tools::log_removal::spawn(
        &engine,
        tools::output::log_dir(&cfg.data_dir),
        shutdown.child_token(),
    );
    let rmcp_config = StreamableHttpServerConfig::default()
        .with_json_response(true)
        .with_allowed_hosts(["localhost", "127.0.0.1", "::1"])
        .with_allowed_origins(loopback_origins(addr.port()))
        .with_sse_keep_alive(Some(Duration::from_secs(15)))
        .with_cancellation_token(shutdown.child_token());
    core.sessions
        .spawn_tool_list_notifier(gateway.watch_tools(), shutdown.child_token());
    let factory_core = core.clone();
    let sessions = Arc::new(LocalSessionManager::default());
    let rmcp = StreamableHttpService::new(
        move || {
            Ok(McpHandler {
                core: factory_core.clone(),
            })
        },
        sessions.clone(),
        rmcp_config,
    );
    let mcp_endpoint_state = Arc::new(McpEndpoint {
        engine: engine.clone(),
        core: core.clone(),
        rmcp,
        sessions,
        task_routing: cfg.task_routing,
        max_body_bytes: 4 * 1024 * 1024,
    });
    let guard_state = Arc::new(Guard {
        authenticator: Authenticator::new(engine.store().clone()),
        port: addr.port(),
        allow_anonymous: cfg.allow_anonymous,
        stopping: shutdown.child_token(),
    });
    // The /v1 routes only: `/mcp` (where agents poll) passes through one layer, the guard.
    let v1 = Router::new()
        .merge(http_api::router(engine.clone()))
        .merge(jobs_api::router(jobs_api::JobsState {
            engine: engine.clone(),
            external,
        }))
        .merge(policy_api::router(policy.clone()))
        .merge(approvals_api::router(engine.clone()))
        .merge(logs_api::router(logs_api::LogsState {
            engine: engine.clone(),
            log_dir: crate::tools::output::log_dir(&cfg.data_dir),
        }))
        .merge(servers_api::router(gateway.clone()))
        .merge(hooks_api::router(hooks.clone()))
        .merge(audit_api::router(engine.clone()))
        .layer(middleware::from_fn(http_api::problem_for_405))
        // Every /v1 body is read (and a too large one refused with 413) before its handler;
        // the extractors then take what passed.
        .layer(DefaultBodyLimit::max(http_api::MAX_BODY_BYTES))
        .layer(middleware::from_fn(http_api::limit_body));
    // `/mcp/` is the same endpoint (and `/mcp/SERVER/` the same as `/mcp/SERVER`): clients
    // configured with a trailing slash (FastMCP's servers live at `/mcp/`) reach Taskdeck
    // instead of a 404.
    let app = Router::new()
        .route(
            "/mcp",
            any(mcp_endpoint::handle).with_state(mcp_endpoint_state.clone()),
        )
        .route(
            "/mcp/",
            any(mcp_endpoint::handle).with_state(mcp_endpoint_state.clone()),
        )
        .route(
            "/mcp/{server}",
            any(mcp_endpoint::handle_upstream).with_state(mcp_endpoint_state.clone()),
        )
        .route(
            "/mcp/{server}/",
            any(mcp_endpoint::handle_upstream).with_state(mcp_endpoint_state),
        )
        .merge(v1)
        .fallback(ui_assets::serve)
        .layer(middleware::from_fn_with_state(guard_state, guard));

    // Where command-line tools (`taskdeck tasks`, `run`, `mcp-config`) find this server when
    // they are given the data dir but no port; written once the admin token exists, so a tool
    // that finds the port also finds the token.
    record_port(&cfg.data_dir, addr.port(), shutdown.clone());
    // The upstream servers stop at once, not after the last client's connection has closed.
    let upstreams = gateway.clone();
    let upstreams_stop = shutdown.clone();
    tokio::spawn(async move {
        upstreams_stop.cancelled().await;
        upstreams.shutdown();
    });
    let stop = shutdown.clone();
    let engine_for_stop = engine.clone();
    let gateway_for_stop = gateway.clone();
    let data_dir = cfg.data_dir.clone();
    let done = tokio::spawn(async move {
        crate::listen::serve(listener, app, stop).await;
        // The hooks' decisions answered but not yet in the audit log are written first.
        hooks.records.flush().await;
        engine_for_stop.shutdown();
        gateway_for_stop.shutdown();
        empty_wal(&engine_for_stop).await;
        data_dir_lock::mark_stopped(&data_dir);
    });
    Ok(Running {
        addr,
        engine,
        admin_token_file,
        shutdown,
        done,
        _data_dir_lock: lock,
        _servers_watch: servers_watch,
    })
}

/// Prints where everything is; the first line is `Taskdeck is running headless on URL` or
/// `Taskdeck is running with its window on URL`. `ui_link` (headless): also print the browser
/// link to the UI, with the admin token in the URL fragment (browsers never send it to a server).
pub fn print_banner(running: &Running, cfg: &ServeConfig, ui_link: bool) {
    use std::io::Write;
    let mode = if ui_link {
        "headless"
    } else {
        "with its window"
    };
    println!("Taskdeck is running {mode} on http://{}", running.addr);
    println!("  MCP endpoint:  http://{}/mcp", running.addr);
    println!("  HTTP API:      http://{}/v1/tasks", running.addr);
    println!(
        "  Task store:    {}",
        super::paths::database(&cfg.data_dir).display()
    );
    println!("  Admin token:   {}", running.admin_token_file.display());
    if ui_link && let Ok(token) = std::fs::read_to_string(&running.admin_token_file) {
        println!(
            "  Open the UI:   http://{}/#token={}",
            running.addr,
            token.trim()
        );
    }
    let _ = std::io::stdout().flush();
}

/// Writes `port` to [`port_path`] in `data_dir`. When that fails (a full disk leaves the file
/// empty or missing, and command-line tools then look on the default port) it is tried again
/// every 2 s, in the background, until it succeeds or `stop` is cancelled; the failure is
/// logged once.
fn record_port(data_dir: &std::path::Path, port: u16, stop: CancellationToken) {
    let path = port_path(data_dir);
    let text = format!("{port}\n");
    let Err(e) = std::fs::write(&path, &text) else {
        return;
    };
    tracing::warn!("cannot record the port in the data dir ({e}); trying again every 2 s");
    tokio::spawn(async move {
        loop {
            tokio::select! {
                _ = stop.cancelled() => return,
                _ = tokio::time::sleep(Duration::from_secs(2)) => {}
            }
            if std::fs::write(&path, &text).is_ok() {
                tracing::info!("recorded the port in {}", path.display());
                return;
            }
        }
    });
}

/// The start error for `e`, a failure to open, check or first write the store in `data_dir`
/// (its admin token): when the disk has no room for writes it says so and what to do (SQLite
/// reports a store whose log files cannot be made as a "disk I/O error"), else `e` as it is.
fn full_disk_or(e: &dyn std::fmt::Display, data_dir: &std::path::Path) -> ServeError {
    use taskdeck_engine::store::disk_space;
    match disk_space::full(data_dir) {
        Some(free) => ServeError::Other(format!(
            "cannot start: the disk holding the task store is full ({} KiB free), and opening \
             the store needs a little room ({e}); free some space, then start Taskdeck again",
            free / 1024
        )),
        None => ServeError::Other(e.to_string()),
    }
}

/// The file in `data_dir` where the running Taskdeck records its port.
pub fn port_path(data_dir: &std::path::Path) -> PathBuf {
    data_dir.join("taskdeck.port")
}

/// The port of the Taskdeck serving `data_dir`, when one is running there (it holds the data
/// dir's lock and recorded its port in `<data dir>/taskdeck.port`); `None` otherwise.
pub fn running_port(data_dir: &std::path::Path) -> Option<u16> {
    if !data_dir_in_use(data_dir) {
        return None;
    }
    std::fs::read_to_string(port_path(data_dir))
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// The port command-line tools talk to: `explicit` (`--port` or `TASKDECK_PORT`), else the port
/// of the Taskdeck running on `data_dir`, else [`DEFAULT_PORT`].
pub fn client_port(explicit: Option<u16>, data_dir: &std::path::Path) -> u16 {
    explicit
        .or_else(|| running_port(data_dir))
        .unwrap_or(DEFAULT_PORT)
}

/// True when another Taskdeck process holds `data_dir` (its lock file is locked).
pub fn data_dir_in_use(data_dir: &std::path::Path) -> bool {
    data_dir_lock::in_use(data_dir)
}

/// Runs the server until Ctrl-C or SIGTERM (`taskdeck serve`, and the desktop shell's fallback
/// when there is no display). Exit code 1 when it cannot start.
pub fn run_headless(cfg: ServeConfig, ui_link: bool) -> std::process::ExitCode {
    let rt = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("taskdeck: cannot start the async runtime: {e}");
            return std::process::ExitCode::from(1);
        }
    };
    rt.block_on(async move {
        let running = match start(cfg.clone()).await {
            Ok(r) => r,
            Err(e) => {
                match already_running(&e, &cfg) {
                    Some(port) => say_already_running(port, &cfg, ui_link),
                    None => match (&e, data_dir_lock::holder(&cfg.data_dir)) {
                        // Starting (its port not yet recorded), or its port file is gone.
                        (ServeError::DataDirBusy(dir), Some(pid)) => eprintln!(
                            "taskdeck: another Taskdeck (pid {pid}) is already using the data dir \
                             {} (stop it first, or use --data-dir)",
                            dir.display()
                        ),
                        _ => eprintln!("taskdeck: {e}"),
                    },
                }
                return std::process::ExitCode::from(1);
            }
        };
        print_banner(&running, &cfg, ui_link);
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = sigterm() => {}
        }
        eprintln!("taskdeck: stopping");
        // As the window's Quit does: the running tools and the upstream servers stop now, open
        // connections get up to 5 s, then the store's log is emptied and the stop recorded.
        let engine = running.engine.clone();
        engine.shutdown();
        running.shutdown.cancel();
        let stopped = tokio::time::timeout(Duration::from_secs(5), running.done).await;
        if stopped.is_err() {
            empty_wal(&engine).await;
            data_dir_lock::mark_stopped(&cfg.data_dir);
        }
        std::process::ExitCode::SUCCESS
    })
}

/// The port of the Taskdeck already running on `cfg`'s data dir when that is why `e` refused
/// this start (its port or its data dir taken); `None` for any other refusal, or when no
/// Taskdeck holds the data dir or its port file is missing.
fn already_running(e: &ServeError, cfg: &ServeConfig) -> Option<u16> {
    match e {
        ServeError::PortBusy(_) | ServeError::DataDirBusy(_) => running_port(&cfg.data_dir),
        _ => None,
    }
}

/// What a start refused because Taskdeck already runs on its data dir prints on stderr: where
/// it runs and, with `ui_link`, the link that opens its UI signed in as the admin (as the
/// banner of [`print_banner`] gives it), so that a second `taskdeck serve` leads to the first.
fn say_already_running(port: u16, cfg: &ServeConfig, ui_link: bool) {
    let pid = data_dir_lock::holder(&cfg.data_dir)
        .map(|p| format!(" (pid {p})"))
        .unwrap_or_default();
    eprintln!(
        "taskdeck: Taskdeck is already running on this data dir ({}) at http://127.0.0.1:{port}{pid}; \
         stop it first, or pass another --data-dir.",
        cfg.data_dir.display()
    );
    if !ui_link {
        return;
    }
    // The admin token of this config dir signs in only when the running one was started with
    // it: another config dir's (or none) is said, not given as a link that fails.
    use crate::adapters::auth;
    let token = auth::read_admin_token(&cfg.config_dir).filter(|token| {
        // TokenCommands runs its own runtime: not on this one's worker.
        tokio::task::block_in_place(|| {
            auth::TokenCommands::open(&cfg.data_dir)
                .and_then(|tokens| tokens.is_admin(token))
                .unwrap_or(false)
        })
    });
    match token {
        Some(token) => eprintln!("  Open its UI:   http://127.0.0.1:{port}/#token={token}"),
        None => eprintln!(
            "  Its UI:        http://127.0.0.1:{port}/ ({} does not hold its admin token: sign \
             in with the one of the config dir it was started with)",
            auth::admin_token_path(&cfg.config_dir).display()
        ),
    }
}

/// At a clean stop, empties the store's write-ahead log into the store file
/// ([`taskdeck_engine::store::Store::truncate_wal`]); a failure is logged (the log stays).
async fn empty_wal(engine: &Engine) {
    // Commits what the writer may still hold back (running tools' progress) before the log
    // is copied and emptied.
    if let Err(e) = engine.store().flush().await {
        tracing::warn!("cannot commit the last writes at stop: {e}");
    }
    match engine.store().truncate_wal() {
        Ok(true) => {}
        Ok(false) => {
            tracing::info!("the store's log is still in use; it is kept until the next start")
        }
        Err(e) => tracing::warn!("cannot empty the store's log at stop: {e}"),
    }
}

async fn sigterm() {
    #[cfg(unix)]
    {
        if let Ok(mut s) = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        {
            s.recv().await;
            return;
        }
    }
    std::future::pending::<()>().await
}
