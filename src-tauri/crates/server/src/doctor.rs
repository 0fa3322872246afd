//! `taskdeck doctor`: checks a data dir and its config dir, whether Taskdeck runs on them or
//! not, and says for each thing what is wrong and what to do. Only reads (a WAL reader blocks
//! no one), so it is safe while Taskdeck runs and writes.
//!
//! Checks, in order: `store` (SQLite `quick_check`, or `integrity_check` with `full`),
//! `schema` (tables, columns and `meta` keys of this Taskdeck), `search index` (SQLite
//! `integrity_check` of `search.sqlite3`, which runs FTS5's own integrity check), `disk` (the
//! data dir is writable and its file system has room for writes), `lock`
//! (who holds `taskdeck.lock`, whether the last run stopped cleanly), `port` (the running one
//! answers `GET /v1/me`; a stopped one's port is free), `admin token` (the file exists, is
//! 0600, and is the store's admin token), `policy` (`policy.json` is valid and each of its
//! rules can match a call), `servers` (`servers.json` is valid), `clients` (the MCP clients whose files name Taskdeck reach the
//! port it runs on: [`clients`]). See docs/operations.md.

mod clients;

use std::{
    os::unix::fs::PermissionsExt,
    path::{Path, PathBuf},
    time::Duration,
};

use serde::Serialize;
use taskdeck_engine::store::{
    StoreFile, disk_space,
    integrity::{self, CheckDepth},
};

use crate::{
    adapters::auth::{self, ADMIN},
    data_dir_lock, paths,
    policy::{self, file::PolicyFile},
    serve,
};

/// What doctor looks at.
#[derive(Debug, Clone)]
pub struct DoctorOptions {
    /// The data directory checked: the store, its search index, the disk and the lock.
    pub data_dir: PathBuf,
    /// The config directory, with the admin-token file.
    pub config_dir: PathBuf,
    /// `integrity_check` instead of `quick_check` for the store (about 10x slower: 10 s with
    /// 1,000,000 tasks here).
    pub full: bool,
}

/// One check's outcome, as printed (one line) and as `--json` gives it.
#[derive(Debug, Clone, Serialize)]
pub struct Finding {
    /// Which check: `store`, `schema`, `search index`, `disk`, `lock`, `port`, `admin token`,
    /// `policy`, `servers`, `clients`.
    pub check: &'static str,
    /// Passed.
    pub ok: bool,
    /// What was found, for a human.
    pub detail: String,
    /// What to do about a problem; `None` when `ok`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
}

impl Finding {
    fn ok(check: &'static str, detail: impl Into<String>) -> Finding {
        Finding {
            check,
            ok: true,
            detail: detail.into(),
            fix: None,
        }
    }

    fn problem(check: &'static str, detail: impl Into<String>, fix: impl Into<String>) -> Finding {
        Finding {
            check,
            ok: false,
            detail: detail.into(),
            fix: Some(fix.into()),
        }
    }
}

/// Runs every check on `opts`' dirs and returns one finding per check, in the order of the
/// module doc. Never fails: what cannot be read is a problem finding.
pub async fn diagnose(opts: &DoctorOptions) -> Vec<Finding> {
    let running = data_dir_lock::in_use(&opts.data_dir);
    let store = paths::database(&opts.data_dir);
    let depth = if opts.full {
        CheckDepth::Full
    } else {
        CheckDepth::Quick
    };
    let (store_found, store_sound) = match emptied(&opts.data_dir, running) {
        Some(found) => (found, false),
        None => check_store(&store, depth),
    };
    let mut findings = vec![store_found];
    let file = store_sound.then(|| StoreFile::open(&store).ok()).flatten();
    findings.push(check_schema(file.as_ref(), store_sound));
    findings.push(check_search(&opts.data_dir, running));
    findings.push(check_disk(&opts.data_dir, running));
    findings.push(check_lock(&opts.data_dir, running));
    findings.push(check_port(opts, running).await);
    findings.push(check_admin_token(opts, file.as_ref(), running));
    findings.push(check_policy(opts));
    findings.push(check_servers(opts));
    let port = running
        .then(|| std::fs::read_to_string(serve::port_path(&opts.data_dir)).ok())
        .flatten()
        .and_then(|s| s.trim().parse::<u16>().ok());
    findings.push(clients::check_clients(port));
    findings
}

/// `servers.json`, the upstream MCP servers Taskdeck serves: absent (none), not valid (no
/// upstream is served, and `taskdeck servers` and the Servers view refuse to change it), or with
/// entries that are not a server's spec (those are not served).
fn check_servers(opts: &DoctorOptions) -> Finding {
    const CHECK: &str = "servers";
    let path = crate::gateway::servers_file::servers_path(&opts.config_dir);
    let shown = path.display();
    if !path.exists() {
        return Finding::ok(
            CHECK,
            format!("{shown} does not exist: no upstream servers"),
        );
    }
    match crate::gateway::servers_file::ServersConfig::load(&path) {
        Err(e) => Finding::problem(
            CHECK,
            e.to_string(),
            format!(
                "fix {shown} (`taskdeck servers list` says the same), or move it aside to \
                 start with no upstream servers"
            ),
        ),
        Ok(config) if !config.unreadable.is_empty() => {
            let names: Vec<String> = config
                .unreadable
                .iter()
                .map(|(name, u)| format!("{name:?} ({})", u.problem))
                .collect();
            Finding::problem(
                CHECK,
                format!(
                    "{shown}: {} not a server's spec, so not served: {}",
                    if names.len() == 1 {
                        "an entry is"
                    } else {
                        "entries are"
                    },
                    names.join(", ")
                ),
                format!(
                    "fix or remove {} in {shown} (`taskdeck servers list` says why)",
                    names.join(", ")
                ),
            )
        }
        Ok(config) => Finding::ok(
            CHECK,
            format!(
                "{shown} is valid: {} upstream server(s)",
                config.servers.len()
            ),
        ),
    }
}

/// `policy.json`: absent (every call gets its default), not valid (then the running Taskdeck
/// keeps the rules it held when last valid, which a start only logs), or holding rules that
/// never match.
fn check_policy(opts: &DoctorOptions) -> Finding {
    const CHECK: &str = "policy";
    let file = PolicyFile::new(opts.config_dir.join(policy::FILE_NAME));
    let path = file.path().display();
    if !file.path().exists() {
        return Finding::ok(
            CHECK,
            format!("{path} does not exist: every call gets its default"),
        );
    }
    match file.read().as_ref() {
        Err(problem) => Finding::problem(
            CHECK,
            format!(
                "{path} {problem}: Taskdeck keeps the rules it held when last valid (none when \
                 it started with the file broken: then a call that would run by default is asked)"
            ),
            "fix the file (docs/approvals.md says its shape); Taskdeck reads it again at once",
        ),
        Ok(doc) => match doc.never_matching().as_slice() {
            [] => {
                let n = doc.rules.len();
                let rules = if n == 1 { "rule" } else { "rules" };
                Finding::ok(CHECK, format!("{path} is valid: {n} {rules}"))
            }
            never => Finding::problem(
                CHECK,
                format!(
                    "{path}: {}",
                    never
                        .iter()
                        .map(|w| format!(
                            "rule {} ({}) never matches: {}",
                            w.position, w.rule, w.why
                        ))
                        .collect::<Vec<_>>()
                        .join("; ")
                ),
                "fix or remove those rules in the file, or revoke them in the window's Policies \
                 dialog; until then they decide nothing",
            ),
        },
    }
}

/// The store check's finding when the store file was emptied although the last Taskdeck
/// stopped cleanly with tasks in it: what a start refuses ([`integrity::emptied_store`]), said
/// the same way here rather than as a sound, empty store.
fn emptied(data_dir: &Path, running: bool) -> Option<Finding> {
    if running {
        return None;
    }
    let last_run = data_dir_lock::recorded_state(data_dir);
    let why = integrity::emptied_store(data_dir, last_run.as_deref())?;
    Some(Finding::problem(
        "store",
        format!("{}: {why}", paths::database(data_dir).display()),
        "restore a backup (`taskdeck restore BACKUP`), or move the empty file aside to start \
         with an empty store (docs/operations.md)",
    ))
}

/// The store check and whether the store can be read further (exists and is sound).
fn check_store(store: &Path, depth: CheckDepth) -> (Finding, bool) {
    const CHECK: &str = "store";
    if !store.exists() {
        return (
            Finding::ok(
                CHECK,
                format!(
                    "{} does not exist yet (made at the first start)",
                    store.display()
                ),
            ),
            false,
        );
    }
    let pragma = match depth {
        CheckDepth::Full => "integrity_check",
        _ => "quick_check",
    };
    match integrity::check_file(store, depth) {
        Ok(report) if report.problems.is_empty() => (
            Finding::ok(
                CHECK,
                format!(
                    "{}: {pragma} ok ({}, {} ms)",
                    store.display(),
                    size_text(report.bytes),
                    report.elapsed.as_millis()
                ),
            ),
            true,
        ),
        Ok(report) => (
            Finding::problem(
                CHECK,
                format!(
                    "{} is damaged: {}",
                    store.display(),
                    report.problems.join("; ")
                ),
                "stop Taskdeck and restore a backup (`taskdeck restore BACKUP`), or move the \
                 file aside with its -wal and -shm to start with an empty store \
                 (docs/operations.md)",
            ),
            false,
        ),
        Err(e) => {
            // SQLite cannot make a store's missing -shm file on a full disk, and says "disk
            // I/O error" for it.
            let full = store.parent().and_then(disk_space::full).is_some();
            let advice = match full {
                true => {
                    "free some space on its file system: reading the store needs a little \
                         room when its log files are missing (see the disk check)"
                }
                false => {
                    "check the file's owner and permissions (it must be readable and \
                          writable by the user running Taskdeck)"
                }
            };
            (
                Finding::problem(
                    CHECK,
                    format!("cannot read {}: {e}", store.display()),
                    advice,
                ),
                false,
            )
        }
    }
}

fn check_schema(file: Option<&StoreFile>, store_sound: bool) -> Finding {
    const CHECK: &str = "schema";
    let Some(file) = file else {
        return match store_sound {
            true => Finding::problem(CHECK, "the store cannot be opened", "see the store check"),
            false => Finding::ok(CHECK, "not checked (no sound store)"),
        };
    };
    match file.schema_gaps() {
        Ok(gaps) if gaps.is_empty() => Finding::ok(CHECK, "current"),
        Ok(gaps) => Finding::problem(
            CHECK,
            format!("older than this Taskdeck: {}", gaps.join(", ")),
            "start this Taskdeck once on the data dir: it adds what is missing",
        ),
        Err(e) => Finding::problem(CHECK, e.to_string(), "see the store check"),
    }
}

fn check_search(data_dir: &Path, running: bool) -> Finding {
    const CHECK: &str = "search index";
    let path = data_dir.join(taskdeck_engine::search::FILE_NAME);
    if !path.exists() {
        return Finding::ok(CHECK, "absent (built from the store at the next start)");
    }
    let rebuild = format!(
        "{}remove {} (and its -wal and -shm): it is rebuilt from the store at the next start",
        if running { "stop Taskdeck, then " } else { "" },
        path.display()
    );
    match integrity::check_file(&path, CheckDepth::Full) {
        Ok(r) if r.problems.is_empty() => Finding::ok(
            CHECK,
            format!("integrity_check ok ({})", size_text(r.bytes)),
        ),
        Ok(r) => Finding::problem(
            CHECK,
            format!("damaged: {}", r.problems.join("; ")),
            rebuild,
        ),
        // A missing -shm cannot be made on a full disk ("disk I/O error"): the index is
        // sound, and a running Taskdeck opens it once there is room.
        Err(e) if disk_space::full(data_dir).is_some() => Finding::problem(
            CHECK,
            e.to_string(),
            "free some space on its file system (see the disk check): reading the index needs \
             a little room when its log files are missing",
        ),
        Err(e) => Finding::problem(CHECK, e.to_string(), rebuild),
    }
}

/// The data dir can be written, and its file system has room for this user's writes
/// ([`disk_space::SPACE_FOR_WRITES`], [`disk_space::free_bytes`]): a full disk refuses writes
/// with `disk_full`, a read-only one stops Taskdeck from starting. Under
/// [`SPACE_LEFT_TO_THE_STORE`](crate::tools::output::SPACE_LEFT_TO_THE_STORE) free, the store
/// still takes writes but command output logs stop: said, not a problem.
fn check_disk(data_dir: &Path, running: bool) -> Finding {
    const CHECK: &str = "disk";
    if !data_dir.exists() {
        return Finding::ok(
            CHECK,
            "the data dir does not exist yet (made at the first start)",
        );
    }
    let writable = match std::ffi::CString::new(data_dir.as_os_str().as_encoded_bytes()) {
        // SAFETY: `p` is a NUL-terminated path; access(2) only reads it.
        Ok(p) => match unsafe { libc::access(p.as_ptr(), libc::W_OK) } {
            0 => Ok(()),
            _ => Err(std::io::Error::last_os_error()),
        },
        Err(e) => Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, e)),
    };
    if let Err(why) = writable {
        return Finding::problem(
            CHECK,
            format!("{} cannot be written ({why})", data_dir.display()),
            "make the data dir writable by this user (or mount its file system read-write), or \
             start Taskdeck with another --data-dir",
        );
    }
    match disk_space::free_bytes(data_dir) {
        Some(free) if free < disk_space::SPACE_FOR_WRITES => Finding::problem(
            CHECK,
            format!(
                "full: {} KiB free on the file system holding {}; writes that need more room \
                 than the store's files already have are refused (disk_full)",
                free / 1024,
                data_dir.display()
            ),
            match running {
                true => {
                    "free some space on that file system (deleting tasks does not shrink the \
                     store file); writes resume by themselves"
                }
                false => {
                    "free some space on that file system (deleting tasks does not shrink the \
                     store file) before starting Taskdeck"
                }
            },
        ),
        Some(free) if free < crate::tools::output::SPACE_LEFT_TO_THE_STORE => Finding::ok(
            CHECK,
            format!(
                "writable, {} free: command output logs are not written now (they leave the \
                 store its last {} MiB to record tasks' ends)",
                size_text(free),
                crate::tools::output::SPACE_LEFT_TO_THE_STORE >> 20
            ),
        ),
        Some(free) => Finding::ok(CHECK, format!("writable, {} free", size_text(free))),
        None => Finding::problem(
            CHECK,
            format!("cannot read the free space of {}", data_dir.display()),
            "check that the data dir's file system is mounted",
        ),
    }
}

/// `bytes` for a person: in GiB from 10 GiB, MiB from 10 MiB, else KiB (whole units, rounded
/// down, so "0 MiB" never stands for a few hundred KiB).
fn size_text(bytes: u64) -> String {
    const KIB: u64 = 1024;
    match bytes {
        b if b >= 10 * KIB * KIB * KIB => format!("{} GiB", b / (KIB * KIB * KIB)),
        b if b >= 10 * KIB * KIB => format!("{} MiB", b / (KIB * KIB)),
        b => format!("{} KiB", b / KIB),
    }
}

fn check_lock(data_dir: &Path, running: bool) -> Finding {
    const CHECK: &str = "lock";
    let state = data_dir_lock::recorded_state(data_dir);
    if running {
        let pid = data_dir_lock::holder(data_dir)
            .map(|p| format!("pid {p}"))
            .unwrap_or_else(|| "a process /proc/locks does not name".into());
        return Finding::ok(CHECK, format!("Taskdeck is running ({pid} holds the lock)"));
    }
    match state.as_deref() {
        Some(s) if s.starts_with("running") => Finding::ok(
            CHECK,
            format!(
                "not running; the last run ({}) did not stop cleanly, so the next start checks \
                 the whole store",
                s.trim_start_matches("running").trim()
            ),
        ),
        Some(_) => Finding::ok(CHECK, "not running; the last run stopped cleanly"),
        None => Finding::ok(CHECK, "not running; never started on this data dir"),
    }
}

async fn check_port(opts: &DoctorOptions, running: bool) -> Finding {
    const CHECK: &str = "port";
    let recorded = std::fs::read_to_string(serve::port_path(&opts.data_dir))
        .ok()
        .and_then(|s| s.trim().parse::<u16>().ok());
    if !running {
        let port = recorded.unwrap_or(serve::DEFAULT_PORT);
        return match std::net::TcpListener::bind(("127.0.0.1", port)) {
            Ok(_) => Finding::ok(
                CHECK,
                format!("not running; port {port} is free for the next start"),
            ),
            Err(e) => Finding::problem(
                CHECK,
                format!("not running, but port {port} on 127.0.0.1 is taken ({e})"),
                format!(
                    "stop what listens on {port}, or start Taskdeck with another --port \
                     (0 picks a free one)"
                ),
            ),
        };
    }
    let Some(port) = recorded else {
        let advice = match disk_space::full(&opts.data_dir) {
            // It tries again every 2 s (`serve::record_port`).
            Some(_) => {
                "its disk is full, so it cannot record its port: it does so within \
                        seconds once there is room (see the disk check); meanwhile, client \
                        commands need --port with the port it printed at its start"
            }
            None => "it may still be starting; if this lasts, restart it",
        };
        return Finding::problem(
            CHECK,
            format!(
                "Taskdeck is running but {} has no port",
                serve::port_path(&opts.data_dir).display()
            ),
            advice,
        );
    };
    let token = auth::read_admin_token(&opts.config_dir).unwrap_or_default();
    let answer = reqwest::Client::builder()
        .timeout(Duration::from_secs(5))
        .build()
        .map(|c| {
            c.get(format!("http://127.0.0.1:{port}/v1/me"))
                .bearer_auth(token)
                .send()
        });
    let status = match answer {
        Ok(send) => send.await.map(|r| r.status()),
        Err(e) => Err(e),
    };
    let pid = data_dir_lock::holder(&opts.data_dir)
        .map(|p| format!(" (pid {p})"))
        .unwrap_or_default();
    match status {
        Ok(s) if s.is_success() => Finding::ok(CHECK, format!("{port} answers GET /v1/me")),
        Ok(s) if s.as_u16() == 401 => Finding::problem(
            CHECK,
            format!("{port} answers, but refuses the admin token file's token (401)"),
            "see the admin token check: the running Taskdeck was started with another \
             --config-dir",
        ),
        Ok(s) => Finding::problem(
            CHECK,
            format!("{port} answers GET /v1/me with {s}"),
            format!("is port {port} Taskdeck's? restart Taskdeck{pid}"),
        ),
        Err(e) => Finding::problem(
            CHECK,
            format!("Taskdeck{pid} holds the lock but port {port} does not answer: {e}"),
            format!("it may be hung: stop it{pid} and start it again"),
        ),
    }
}

fn check_admin_token(opts: &DoctorOptions, file: Option<&StoreFile>, running: bool) -> Finding {
    const CHECK: &str = "admin token";
    let path = auth::admin_token_path(&opts.config_dir);
    let meta = match std::fs::metadata(&path) {
        Ok(m) => m,
        Err(_) => {
            return Finding::ok(
                CHECK,
                format!(
                    "{} does not exist: the next start makes one{}",
                    path.display(),
                    if running {
                        " (the running Taskdeck was started with another --config-dir?)"
                    } else {
                        ""
                    }
                ),
            );
        }
    };
    let mode = meta.permissions().mode() & 0o777;
    if mode & 0o077 != 0 {
        return Finding::problem(
            CHECK,
            format!("{} can be read by others (mode {mode:03o})", path.display()),
            format!("chmod 600 {}", path.display()),
        );
    }
    let secret = auth::read_admin_token(&opts.config_dir).unwrap_or_default();
    // An empty file is a missing one: the next start writes a token into it.
    if let Some(why) = auth::weak_token(&secret).filter(|_| !secret.is_empty()) {
        return Finding::problem(
            CHECK,
            format!("{} holds no usable token ({why})", path.display()),
            format!(
                "delete {} and Taskdeck makes a new one at its next start (a start refuses this \
                 one)",
                path.display()
            ),
        );
    }
    let Some(file) = file else {
        return Finding::ok(CHECK, format!("{} is private (0600)", path.display()));
    };
    match file.live_token_hash(ADMIN) {
        Ok(Some(stored)) if stored == auth::token_hash(&secret) => Finding::ok(
            CHECK,
            format!("{} is private (0600) and is the store's", path.display()),
        ),
        Ok(_) if !running => Finding::ok(
            CHECK,
            format!(
                "{} is private (0600); the store has another admin token, replaced by the \
                 file's at the next start",
                path.display()
            ),
        ),
        Ok(_) => Finding::problem(
            CHECK,
            format!(
                "{} is not the running Taskdeck's admin token",
                path.display()
            ),
            "restart Taskdeck with this --config-dir (it then takes the file's token), or \
             pass the --config-dir it was started with",
        ),
        Err(e) => Finding::problem(CHECK, e.to_string(), "see the store check"),
    }
}

#[cfg(test)]
mod tests {
    use super::size_text;

    #[test]
    fn sizes_keep_their_scale() {
        assert_eq!(size_text(276 * 1024), "276 KiB");
        assert_eq!(size_text(9 * 1024 * 1024 + 5), "9216 KiB");
        assert_eq!(size_text(50 * 1024 * 1024), "50 MiB");
        assert_eq!(size_text(58 * 1024 * 1024 * 1024 + 1), "58 GiB");
    }
}
