//! `taskdeck servers import` with the real binary on the client-configuration fixtures
//! (`tests/fixtures/client-configs/`, written from each client's documented format): the
//! servers land in servers.json, each entry is reported, the printed file reaches Taskdeck
//! through one `taskdeck` entry in the client's own syntax, `--write` keeps a backup and
//! every other key of the file, and without `--write` or `--print` nothing changes.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::harness::BIN;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/client-configs")
        .join(name)
}

struct Imported {
    ok: bool,
    stdout: Value,
    stderr: String,
    servers: Value,
}

fn import(dir: &Path, client: &str, file: &Path, extra: &[&str]) -> Imported {
    let out = std::process::Command::new(BIN)
        .arg("--data-dir")
        .arg(dir.join("data"))
        .arg("--config-dir")
        .arg(dir.join("cfg"))
        .args(["servers", "import", client, "--port", "4747", "--file"])
        .arg(file)
        .args(extra)
        .env_remove("TASKDECK_TOKEN")
        .output()
        .unwrap();
    let servers = std::fs::read_to_string(dir.join("cfg/servers.json"))
        .map(|t| serde_json::from_str(&t).unwrap())
        .unwrap_or(Value::Null);
    Imported {
        ok: out.status.success(),
        stdout: serde_json::from_slice(&out.stdout).unwrap_or(Value::Null),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        servers: servers["servers"].clone(),
    }
}

fn keys(v: &Value) -> Vec<String> {
    v.as_object().unwrap().keys().cloned().collect()
}

/// Fixture `name` copied into `dir` under its own name: its path and its text.
fn copied(dir: &Path, name: &str) -> (PathBuf, String) {
    let file = dir.join(name);
    std::fs::copy(fixture(name), &file).unwrap();
    let text = std::fs::read_to_string(&file).unwrap();
    (file, text)
}

/// The names of the backups of file `name` that an import made in `dir`.
fn backups(dir: &Path, name: &str) -> Vec<String> {
    let prefix = format!("{name}.taskdeck-backup-");
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with(&prefix))
        .collect()
}

#[test]
fn claude_desktop_is_rewritten_with_a_backup() {
    let tmp = tempfile::tempdir().unwrap();
    let (file, original) = copied(tmp.path(), "claude_desktop_config.json");
    let r = import(tmp.path(), "claude-desktop", &file, &["--write"]);
    assert!(r.ok, "{}", r.stderr);
    assert_eq!(keys(&r.servers), ["filesystem", "github"]);
    assert_eq!(
        r.servers["github"]["env"]["GITHUB_PERSONAL_ACCESS_TOKEN"],
        "ghp_fixture_secret_value"
    );
    assert!(
        r.stderr.contains("\"filesystem\": added as filesystem"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains("\"taskdeck\": is Taskdeck itself"),
        "{}",
        r.stderr
    );

    // The file now reaches Taskdeck only, through mcp-remote (Claude Desktop speaks stdio).
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    // Written, it is not printed too: it holds the token.
    assert_eq!(r.stdout, Value::Null, "nothing on stdout");
    assert_eq!(written["globalShortcut"], "Ctrl+Space");
    assert_eq!(keys(&written["mcpServers"]), ["taskdeck"]);
    let args = written["mcpServers"]["taskdeck"]["args"]
        .as_array()
        .unwrap();
    assert_eq!(args[2], "http://127.0.0.1:4747/mcp");
    assert!(
        args[4]
            .as_str()
            .unwrap()
            .starts_with("Authorization:Bearer ")
    );
    assert_ne!(args[4], "Authorization:Bearer td_old");

    let backups = backups(tmp.path(), "claude_desktop_config.json");
    assert_eq!(backups.len(), 1, "{backups:?}");
    assert_eq!(
        std::fs::read_to_string(tmp.path().join(&backups[0])).unwrap(),
        original
    );

    // Again: nothing left to import, and the token name is taken: --token reuses one.
    let r = import(
        tmp.path(),
        "claude-desktop",
        &file,
        &["--print", "--token", "td_given"],
    );
    assert!(r.ok, "{}", r.stderr);
    assert!(r.stderr.contains("is Taskdeck itself"), "{}", r.stderr);
    assert_eq!(
        r.stdout["mcpServers"]["taskdeck"]["args"][4],
        "Authorization:Bearer td_given"
    );
}

#[test]
fn claude_code_scopes_and_skips() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join(".claude.json");
    std::fs::copy(fixture("claude.json"), &file).unwrap();
    let r = import(tmp.path(), "claude-code", &file, &["--write"]);
    assert!(r.ok, "{}", r.stderr);
    assert_eq!(keys(&r.servers), ["postgres-db", "sentry"]);
    assert_eq!(r.servers["sentry"]["url"], "https://mcp.sentry.example/mcp");
    // A project's stdio server runs in the project's directory, as Claude Code runs it.
    assert_eq!(r.servers["postgres-db"]["cwd"], "/home/me/app");
    assert!(
        r.stderr.contains("\"legacy-events\": not imported"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr
            .contains("\"airtable\" (project /home/me/app): not imported"),
        "{}",
        r.stderr
    );
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(written["numStartups"], 12);
    assert_eq!(keys(&written["mcpServers"]), ["legacy-events", "taskdeck"]);
    let taskdeck = &written["mcpServers"]["taskdeck"];
    assert_eq!(taskdeck["type"], "http");
    assert_eq!(taskdeck["url"], "http://127.0.0.1:4747/mcp");
    assert!(
        taskdeck["headers"]["Authorization"]
            .as_str()
            .unwrap()
            .starts_with("Bearer ")
    );
    let project = &written["projects"]["/home/me/app"];
    assert_eq!(keys(&project["mcpServers"]), ["airtable"]);
    assert_eq!(project["hasTrustDialogAccepted"], true);

    // Again (the agent's token is used again): nothing changes, so nothing is written and no
    // other backup holding the token is made.
    let before = backups(tmp.path(), ".claude.json");
    let again = import(tmp.path(), "claude-code", &file, &["--write"]);
    assert!(again.ok, "{}", again.stderr);
    assert!(
        again.stderr.contains("nothing to write"),
        "{}",
        again.stderr
    );
    assert_eq!(backups(tmp.path(), ".claude.json"), before);
}

/// Imported and written before, the client's file holds its live token: a second import (its
/// preview too) takes that token, where it used to be refused for the name's existing token.
#[test]
fn a_second_import_keeps_the_token_its_file_holds() {
    let tmp = tempfile::tempdir().unwrap();
    let (file, _) = copied(tmp.path(), "claude_desktop_config.json");
    let first = import(tmp.path(), "claude-desktop", &file, &["--write"]);
    assert!(first.ok, "{}", first.stderr);
    let written = std::fs::read_to_string(&file).unwrap();
    let said = "Using principal \"claude-desktop\"'s token from";
    let preview = import(tmp.path(), "claude-desktop", &file, &[]);
    assert!(
        preview.ok && preview.stderr.contains(said),
        "{}",
        preview.stderr
    );
    assert_eq!(
        preview.stdout["mcpServers"]["taskdeck"]["args"][4], "Authorization:Bearer TOKEN",
        "a preview writes no token out"
    );
    let again = import(tmp.path(), "claude-desktop", &file, &["--write"]);
    assert!(again.ok, "{}", again.stderr);
    assert!(
        again.stderr.contains(said) && again.stderr.contains("nothing to write"),
        "{}",
        again.stderr
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), written);
}

/// A project's own `.mcp.json`: its stdio servers run in the project's directory, as Claude
/// Code runs them, and the person is told the rewritten file holds the token.
#[test]
fn a_projects_mcp_json_keeps_its_servers_in_the_project() {
    let tmp = tempfile::tempdir().unwrap();
    let project = tmp.path().join("shop");
    std::fs::create_dir_all(&project).unwrap();
    let file = project.join(".mcp.json");
    std::fs::write(
        &file,
        json!({"mcpServers": {"cfs": {"command": "fs-server", "args": ["."]}}}).to_string(),
    )
    .unwrap();
    let r = import(tmp.path(), "claude-code", &file, &["--print"]);
    assert!(r.ok, "{}", r.stderr);
    assert_eq!(r.servers["cfs"]["cwd"], project.to_str().unwrap());
    assert!(
        r.stderr.contains("keep it out of version control"),
        "{}",
        r.stderr
    );
}

#[test]
fn vscode_and_cursor_with_print_change_only_servers_json() {
    let tmp = tempfile::tempdir().unwrap();
    for (client, name) in [("vscode", "vscode-mcp.json"), ("cursor", "cursor-mcp.json")] {
        let file = tmp.path().join(name);
        std::fs::copy(fixture(name), &file).unwrap();
        let r = import(tmp.path(), client, &file, &["--print"]);
        assert!(r.ok, "{client}: {}", r.stderr);
        assert_eq!(
            std::fs::read_to_string(&file).unwrap(),
            std::fs::read_to_string(fixture(name)).unwrap(),
            "{client}: with --print the file stays"
        );
        match client {
            "vscode" => {
                // Its comments are read, and the rewrite says it has none.
                assert!(
                    r.stderr.contains("has comments or trailing commas; the rewritten file is plain JSON without them\n"),
                    "{}",
                    r.stderr
                );
                assert_eq!(keys(&r.stdout["servers"]), ["perplexity", "taskdeck"]);
                assert_eq!(r.stdout["inputs"][0]["id"], "perplexity-key");
                assert_eq!(r.stdout["servers"]["taskdeck"]["type"], "http");
            }
            _ => {
                assert!(!r.stderr.contains("comments"), "{}", r.stderr);
                assert_eq!(keys(&r.stdout["mcpServers"]), ["linear", "taskdeck"]);
                assert_eq!(
                    r.stdout["mcpServers"]["taskdeck"]["url"],
                    "http://127.0.0.1:4747/mcp"
                );
            }
        }
    }
    let servers = std::fs::read_to_string(tmp.path().join("cfg/servers.json")).unwrap();
    let servers: Value = serde_json::from_str(&servers).unwrap();
    assert_eq!(
        keys(&servers["servers"]),
        ["fetch", "github", "notes", "web-search"]
    );
    assert_eq!(
        servers["servers"]["notes"],
        json!({"url": "http://localhost:8931/mcp"})
    );
}

/// Without `--write` or `--print`, an import is a preview: the report and the file as it would
/// be, with no servers.json, no store and no token made; and it fails as the import would when
/// the client's token would be refused.
#[test]
fn without_write_or_print_it_is_a_preview_that_changes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let (file, original) = copied(tmp.path(), "claude_desktop_config.json");
    let r = import(tmp.path(), "claude-desktop", &file, &[]);
    assert!(r.ok, "{}", r.stderr);
    for said in [
        "Would create a token for principal \"claude-desktop\"",
        "\"filesystem\": would be added as filesystem",
        "\"taskdeck\": is Taskdeck itself; would be replaced",
        "Nothing changed: this is a preview",
    ] {
        assert!(r.stderr.contains(said), "{said:?} in {}", r.stderr);
    }
    assert_eq!(keys(&r.stdout["mcpServers"]), ["taskdeck"]);
    assert_eq!(
        r.stdout["mcpServers"]["taskdeck"]["args"][4],
        "Authorization:Bearer TOKEN"
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), original);
    assert!(!tmp.path().join("cfg").exists(), "no servers.json");
    assert!(!tmp.path().join("data").exists(), "no store, no token");

    // Imported for real, a second preview says the servers are there, and that the import
    // would be refused: the client's name has a token.
    assert!(import(tmp.path(), "claude-desktop", &file, &["--print"]).ok);
    let servers = std::fs::read_to_string(tmp.path().join("cfg/servers.json")).unwrap();
    std::fs::write(&file, &original).unwrap();
    let r = import(tmp.path(), "claude-desktop", &file, &[]);
    assert!(!r.ok);
    assert!(
        r.stderr.contains("would be refused its token")
            && r.stderr
                .contains("the client's file does not hold it: pass it with --token to keep using it, or --name NEW-NAME"),
        "{}",
        r.stderr
    );
    let r = import(tmp.path(), "claude-desktop", &file, &["--name", "desk2"]);
    assert!(r.ok, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("\"filesystem\": already in servers.json as filesystem"),
        "{}",
        r.stderr
    );
    assert_eq!(
        std::fs::read_to_string(tmp.path().join("cfg/servers.json")).unwrap(),
        servers
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), original);
}

/// A client file kept as a symlink (a dotfile manager's) stays one: `--write` replaces the file
/// it points to, with the backup beside that file. `--port 0` reaches nothing: refused.
#[test]
fn write_follows_a_symlinked_file_and_port_zero_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let real = tmp.path().join("dotfiles/mcp.json");
    std::fs::create_dir_all(real.parent().unwrap()).unwrap();
    std::fs::copy(fixture("cursor-mcp.json"), &real).unwrap();
    let link = tmp.path().join("mcp.json");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let r = import(tmp.path(), "cursor", &link, &["--write"]);
    assert!(r.ok, "{}", r.stderr);
    assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&real).unwrap()).unwrap();
    assert_eq!(keys(&written["mcpServers"]), ["linear", "taskdeck"]);
    assert_eq!(backups(real.parent().unwrap(), "mcp.json").len(), 1);

    let out = std::process::Command::new(BIN)
        .arg("--data-dir")
        .arg(tmp.path().join("data0"))
        .arg("--config-dir")
        .arg(tmp.path().join("cfg0"))
        .args(["servers", "import", "cursor", "--port", "0", "--file"])
        .arg(fixture("cursor-mcp.json"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--port 0 is no port a client can reach")
    );
}

#[test]
fn a_malformed_client_file_changes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("mcp.json");
    std::fs::write(&file, "{\"mcpServers\": [1]}").unwrap();
    let r = import(tmp.path(), "cursor", &file, &["--write"]);
    assert!(!r.ok);
    assert!(
        r.stderr.contains("\"mcpServers\" is not an object"),
        "{}",
        r.stderr
    );
    assert_eq!(r.servers, Value::Null, "servers.json was not written");
    std::fs::write(&file, "{").unwrap();
    let r = import(tmp.path(), "cursor", &file, &[]);
    assert!(!r.ok);
    assert!(r.stderr.contains("is not valid JSON"), "{}", r.stderr);
}
