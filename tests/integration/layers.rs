//! The layer rule of ARCHITECTURE.md, checked on the resolved dependency graph: the engine
//! crate reaches no web, MCP-transport, CLI or desktop crate, and the server crate reaches no
//! CLI or desktop crate, even through another dependency, an optional feature or a dependency
//! of another platform; the server opens no SQLite of its own; and `taskdeck-tower` reaches
//! the engine but never the server.

use std::collections::{BTreeSet, HashMap};

use serde_json::Value;

/// Crate families a layer must not depend on, directly or transitively: a family is the crate
/// of that name and every crate named `NAME-…` or `NAME_…` (`clap` covers `clap_builder`,
/// `tauri` covers `tauri-runtime`, `tower` covers `tower-http`).
const ENGINE_FORBIDDEN: &[&str] = &[
    // web and MCP transports
    "axum",
    "hyper",
    "tower",
    "http",
    "rmcp",
    "reqwest",
    "utoipa",
    "rust-embed",
    // command line and desktop
    "clap",
    "tauri",
    "tao",
    "wry",
    "webkit2gtk",
    "gtk",
    "notify-rust",
];
const SERVER_FORBIDDEN: &[&str] = &[
    "clap",
    "tauri",
    "tao",
    "wry",
    "webkit2gtk",
    "gtk",
    "notify-rust",
    "tracing-subscriber",
];
/// Crates the server must not name itself: the store's file is the engine's (tokens included).
const SERVER_NOT_DIRECT: &[&str] = &["rusqlite", "libsqlite3-sys", "sqlite", "sqlx"];

/// Whether crate `name` is in `family` (see [`ENGINE_FORBIDDEN`]).
fn in_family(name: &str, family: &str) -> bool {
    name.strip_prefix(family)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with(['-', '_']))
}

/// `cargo metadata` for this machine's platform with every feature on, so optional
/// dependencies count too.
fn metadata() -> Value {
    let rustc = std::process::Command::new("rustc")
        .arg("-vV")
        .output()
        .expect("rustc runs");
    let host = String::from_utf8_lossy(&rustc.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: ").map(str::to_string))
        .expect("rustc -vV names the host");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = std::process::Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--all-features",
            "--locked",
        ])
        .args(["--filter-platform", &host])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "cargo metadata: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("cargo metadata prints JSON")
}

/// The names of every crate `package` needs to build and run (normal dependencies, followed
/// transitively; build scripts' and tests' dependencies do not ship in the layer).
fn reachable(meta: &Value, package: &str) -> BTreeSet<String> {
    let names: HashMap<&str, &str> = meta["packages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["id"].as_str().unwrap(), p["name"].as_str().unwrap()))
        .collect();
    let nodes: HashMap<&str, &Value> = meta["resolve"]["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| (n["id"].as_str().unwrap(), n))
        .collect();
    let root = names
        .iter()
        .find(|(_, name)| **name == package)
        .map(|(id, _)| *id)
        .unwrap_or_else(|| panic!("{package} is a workspace member"));
    let mut seen = BTreeSet::new();
    let mut stack = vec![root];
    while let Some(id) = stack.pop() {
        for dep in nodes[id]["deps"].as_array().unwrap() {
            let normal = dep["dep_kinds"]
                .as_array()
                .unwrap()
                .iter()
                .any(|k| k["kind"].is_null());
            let dep_id = dep["pkg"].as_str().unwrap();
            if normal && seen.insert(names[dep_id].to_string()) {
                stack.push(dep_id);
            }
        }
    }
    seen
}

fn assert_free_of(meta: &Value, package: &str, forbidden: &[&str], upper: &[&str]) {
    let deps = reachable(meta, package);
    // Target-specific dependencies of other platforms are not in this platform's graph: the
    // crate's own declarations are checked for every target.
    let declared = direct(meta, package);
    let found: BTreeSet<&String> = deps
        .iter()
        .chain(&declared)
        .filter(|d| forbidden.iter().any(|f| in_family(d, f)) || upper.contains(&d.as_str()))
        .collect();
    assert!(
        found.is_empty(),
        "{package} must not depend on {found:?} (ARCHITECTURE.md, layers)"
    );
}

#[test]
fn engine_depends_on_no_web_cli_or_desktop_crate() {
    let meta = metadata();
    assert_free_of(
        &meta,
        "taskdeck-engine",
        ENGINE_FORBIDDEN,
        &["taskdeck-server", "taskdeck"],
    );
    // The check sees the graph: the same walk finds what the server does use.
    let server = reachable(&meta, "taskdeck-server");
    for used in ["axum", "rmcp", "taskdeck-engine"] {
        assert!(server.contains(used), "the server crate depends on {used}");
    }
}

/// The crates `package` names itself as normal dependencies (not dev or build ones), for
/// every target platform.
fn direct(meta: &Value, package: &str) -> BTreeSet<String> {
    let pkg = meta["packages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == package)
        .unwrap_or_else(|| panic!("{package} is a workspace member"));
    pkg["dependencies"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["kind"].is_null())
        .map(|d| d["name"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn server_depends_on_no_cli_or_desktop_crate() {
    let meta = metadata();
    assert_free_of(&meta, "taskdeck-server", SERVER_FORBIDDEN, &["taskdeck"]);
    // The store's file has one owner: the server reaches SQLite only through the engine.
    let server = direct(&meta, "taskdeck-server");
    let own_sqlite: Vec<&&str> = SERVER_NOT_DIRECT
        .iter()
        .filter(|c| server.contains(**c))
        .collect();
    assert!(
        own_sqlite.is_empty(),
        "taskdeck-server must use the engine's store, not {own_sqlite:?}"
    );
    assert!(server.contains("taskdeck-engine"));
    let binary = reachable(&meta, "taskdeck");
    for used in ["clap_builder", "tauri-runtime", "wry", "taskdeck-server"] {
        assert!(
            binary.contains(used),
            "the taskdeck package depends on {used}"
        );
    }
}

/// `taskdeck-tower` (the engine's store as a tower-mcp `TaskStore`) is an adapter beside the
/// server: it reaches the engine and tower-mcp, never the server, the binary, a CLI or desktop
/// crate, or SQLite of its own.
#[test]
fn tower_store_depends_on_the_engine_only() {
    let meta = metadata();
    assert_free_of(
        &meta,
        "taskdeck-tower",
        SERVER_FORBIDDEN,
        &["taskdeck-server", "taskdeck"],
    );
    let own = direct(&meta, "taskdeck-tower");
    let own_sqlite: Vec<&&str> = SERVER_NOT_DIRECT
        .iter()
        .filter(|c| own.contains(**c))
        .collect();
    assert!(
        own_sqlite.is_empty(),
        "taskdeck-tower must use the engine's store, not {own_sqlite:?}"
    );
    for used in ["taskdeck-engine", "tower-mcp"] {
        assert!(own.contains(used), "taskdeck-tower depends on {used}");
    }
    assert!(
        !reachable(&meta, "taskdeck-engine").contains("tower-mcp"),
        "the engine knows nothing of tower-mcp"
    );
}
