//! `/v1/servers` and `taskdeck servers` against the real binary: add, list and delete through
//! the API and the CLI, the file as the truth, admin only, the 400/404/409 answers, and no
//! secret value (env, headers, URL query, URL password) in any answer or output.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::harness::{BIN, Server};

const SECRET: &str = "s3cret-value-42";

async fn delete(s: &Server, token: &str, name: &str) -> (StatusCode, String) {
    let resp = s
        .http
        .delete(s.url(&format!("/v1/servers/{name}")))
        .bearer_auth(token)
        .send()
        .await
        .unwrap();
    (resp.status(), resp.text().await.unwrap())
}

fn assert_no_secret(what: &str, text: &str) {
    assert!(!text.contains(SECRET), "{what} shows a secret: {text}");
}

fn cli(s: &Server, args: &[&str]) -> std::process::Output {
    // The directories first: after `--` everything is the server's command line.
    std::process::Command::new(BIN)
        .arg("--data-dir")
        .arg(s.dir.join("data"))
        .arg("--config-dir")
        .arg(s.dir.join("cfg"))
        .args(args)
        .output()
        .unwrap()
}

/// `servers add NAME` with neither a URL nor a command names both ways to give one.
#[tokio::test]
async fn servers_add_without_a_target_names_both_forms() {
    let s = Server::start(&[]).await;
    let out = cli(&s, &["servers", "add", "v"]);
    assert_eq!(out.status.code(), Some(2));
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("--url") && said.contains("COMMAND"), "{said}");
}

/// `servers add` refuses what it would drop or loop: `--header` for a command (headers go
/// with `--url` only), and this Taskdeck's own endpoint as an upstream. Neither is written.
#[tokio::test]
async fn servers_add_refuses_a_header_for_a_command_and_taskdeck_itself() {
    let s = Server::start(&[]).await;
    let out = cli(
        &s,
        &["servers", "add", "x", "--header", "A: b", "--", "/bin/true"],
    );
    assert_eq!(out.status.code(), Some(2));
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("--header"), "{said}");
    let own = format!("http://127.0.0.1:{}/mcp/fs", s.port);
    let out = cli(&s, &["servers", "add", "loop", "--url", &own]);
    assert_eq!(out.status.code(), Some(2));
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("this Taskdeck's own MCP endpoint"), "{said}");
    let (_, list) = s.v1_get(Some(&s.admin), "/v1/servers").await;
    assert_eq!(list["servers"], json!([]), "{list}");
}

/// Taskdeck's own endpoint is never an upstream, however it is spelt or reached: `/v1/servers`
/// refuses it (400, saying why), and an entry written into servers.json by hand is `failed`
/// with the reason and never started, so no agent's call runs again as the upstream token's
/// principal.
#[tokio::test]
async fn taskdeck_itself_is_never_an_upstream() {
    let s = Server::start(&[]).await;
    let port = s.port;
    let agent = s.token("agent2");
    let own = [
        format!("http://127.0.0.1:{port}/mcp"),
        format!("http://localhost:{port}/mcp/time"),
        format!("http://LOCALHOST.:{port}/mcp/"),
        format!("http://[::1]:{port}/mcp"),
        format!("http://0.0.0.0:{port}/mcp"),
        format!("http://127.0.0.9:{port}/mcp"),
    ];
    for url in &own {
        let body = json!({"name": "loop", "url": url,
                          "headers": {"Authorization": format!("Bearer {agent}")}});
        let (status, problem) = s.v1_post(Some(&s.admin), "/v1/servers", body).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{url}: {problem}");
        let detail = problem["detail"].as_str().unwrap();
        assert!(
            detail.contains("this Taskdeck's own MCP endpoint"),
            "{detail}"
        );
        assert!(!detail.contains(&agent), "the token is not shown: {detail}");
    }
    let remote = json!({"name": "remote", "command": "npx",
                        "args": ["mcp-remote", format!("http://localhost:{port}/mcp")]});
    let (status, _) = s.v1_post(Some(&s.admin), "/v1/servers", remote).await;
    assert_eq!(
        status,
        StatusCode::BAD_REQUEST,
        "a proxy to it is refused too"
    );
    // Another port of this machine is someone else's server.
    let other = json!({"name": "other", "url": format!("http://127.0.0.1:{}/mcp", port + 1)});
    let (status, body) = s.v1_post(Some(&s.admin), "/v1/servers", other).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");

    let file = json!({"servers": {"loop": {"url": own[1],
        "headers": {"Authorization": format!("Bearer {agent}")}}}});
    std::fs::write(s.dir.join("cfg/servers.json"), file.to_string()).unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let entry = loop {
        let (_, list) = s.v1_get(Some(&s.admin), "/v1/servers").await;
        let entry = list["servers"][0].clone();
        if entry["state"] == "failed" || std::time::Instant::now() > deadline {
            break entry;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    };
    assert_eq!(entry["name"], "loop", "{entry}");
    assert_eq!(entry["state"], "failed", "{entry}");
    let why = entry["lastError"].as_str().unwrap();
    assert!(why.contains("this Taskdeck's own MCP endpoint"), "{why}");
    let tools = s
        .rpc(Some(&s.token("agent1")), "tools/list", json!({}), true)
        .await;
    let tools = tools.result().to_string();
    assert!(tools.contains("run_command"), "{tools}");
    assert!(
        !tools.contains("loop__"),
        "its tools are not served: {tools}"
    );
}

/// An HTTP server nothing answers for is `failed`, and `lastError` says why in words (the
/// refused connection, not the client library's type names) with the URL shown without its
/// credentials.
#[tokio::test]
async fn an_unreachable_http_server_says_why_without_its_credentials() {
    let s = Server::start(&[]).await;
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://user:{SECRET}@127.0.0.1:{port}/mcp?key={SECRET}");
    let (status, body) = s
        .v1_post(
            Some(&s.admin),
            "/v1/servers",
            json!({"name": "down", "url": url}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let start = std::time::Instant::now();
    let (down, list) = loop {
        let (_, list) = s.v1_get(Some(&s.admin), "/v1/servers").await;
        let down = list["servers"][0].clone();
        if down["state"] == "failed" && down["lastError"].is_string() {
            break (down, list);
        }
        assert!(
            start.elapsed() < std::time::Duration::from_secs(15),
            "{list}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    };
    let why = down["lastError"].as_str().unwrap();
    assert!(why.to_lowercase().contains("connection refused"), "{why}");
    assert!(!why.contains("Transport ["), "{why}");
    assert!(why.contains("while it sent the"), "{why}");
    assert_no_secret("lastError", &list.to_string());
}

#[tokio::test]
async fn add_list_and_delete_never_showing_secrets() {
    let s = Server::start(&[]).await;
    let (status, fs) = s
        .v1_post(
            Some(&s.admin),
            "/v1/servers",
            json!({"name": "fs", "command": "npx", "args": ["-y", "server-fs", "/my dir"],
                   "env": {"API_KEY": SECRET}, "cwd": "/tmp"}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{fs}");
    assert_eq!(fs["name"], "fs");
    assert_eq!(fs["transport"], "stdio");
    assert_eq!(fs["target"], "npx -y server-fs '/my dir'");
    assert_eq!(fs["envKeys"], json!(["API_KEY"]));
    assert_eq!(fs["cwd"], "/tmp");
    assert_no_secret("POST stdio", &fs.to_string());

    let url = format!("https://user:{SECRET}@mcp.example.com/mcp?key={SECRET}&region=eu");
    let (status, docs) = s
        .v1_post(
            Some(&s.admin),
            "/v1/servers",
            json!({"name": "docs", "url": url, "headers": {"X-Api-Key": SECRET},
                   "disabled": true}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{docs}");
    assert_eq!(
        docs["target"],
        "https://user:****@mcp.example.com/mcp?key=[redacted]&region=[redacted]"
    );
    assert_eq!(docs["headerNames"], json!(["X-Api-Key"]));
    // A password in the URL is sent as Authorization: a header of that name too is refused.
    let (status, problem) = s
        .v1_post(
            Some(&s.admin),
            "/v1/servers",
            json!({"name": "two", "url": url, "headers": {"authorization": format!("Bearer {SECRET}")}}),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{problem}");
    assert_no_secret("POST refused", &problem.to_string());
    assert_eq!(docs["state"], "disabled");
    assert_no_secret("POST http", &docs.to_string());

    let (status, list) = s.v1_get(Some(&s.admin), "/v1/servers").await;
    assert_eq!(status, StatusCode::OK);
    let names: Vec<_> = list["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(names, ["docs", "fs"]);
    assert_no_secret("GET", &list.to_string());

    // The file is the truth, and holds the values (0600).
    let file = s.dir.join("cfg/servers.json");
    let on_disk: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(on_disk["servers"]["fs"]["env"]["API_KEY"], SECRET);
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(&file).unwrap().permissions().mode() & 0o777,
        0o600
    );

    // The CLI sees the running Taskdeck's live list, and shows no secret either.
    let out = cli(&s, &["servers", "list"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.starts_with("NAME"), "{text}");
    assert!(text.contains("docs") && text.contains("disabled"), "{text}");
    assert_no_secret("servers list", &text);
    let out = cli(&s, &["servers", "list", "--json"]);
    let listed: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(listed["servers"].as_array().unwrap().len(), 2);
    assert_no_secret("servers list --json", &listed.to_string());

    // A CLI change reaches the running Taskdeck's answers.
    let out = cli(
        &s,
        &["servers", "add", "git", "--", "uvx", "mcp-server-git"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (_, list) = s.v1_get(Some(&s.admin), "/v1/servers").await;
    assert_eq!(list["servers"].as_array().unwrap().len(), 3, "{list}");

    assert_eq!(delete(&s, &s.admin, "fs").await.0, StatusCode::NO_CONTENT);
    let (status, body) = delete(&s, &s.admin, "fs").await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    let (_, list) = s.v1_get(Some(&s.admin), "/v1/servers").await;
    let names: Vec<_> = list["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(names, ["docs", "git"]);
    let out = cli(&s, &["servers", "remove", "git"]);
    assert!(out.status.success());
}

#[tokio::test]
async fn refusals() {
    let s = Server::start(&[]).await;
    let agent = s.token("claude-code");
    let (status, body) = s.v1_get(Some(&agent), "/v1/servers").await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    let (status, _) = s
        .v1_post(
            Some(&agent),
            "/v1/servers",
            json!({"name": "fs", "command": "x"}),
        )
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert_eq!(delete(&s, &agent, "fs").await.0, StatusCode::FORBIDDEN);

    for (body, why) in [
        (json!({"name": "Bad Name", "command": "x"}), "name"),
        (json!({"name": "a__b", "command": "x"}), "'__'"),
        (json!({"name": "taskdeck", "command": "x"}), "taskdeck"),
        (
            json!({"name": "both", "command": "x", "url": "https://x.example/"}),
            "either",
        ),
        (json!({"name": "neither"}), "either"),
        (json!({"name": "ftp", "url": "ftp://x.example/"}), "scheme"),
        (
            json!({"name": "hdr", "url": "https://x.example/", "headers": {"A": format!("{SECRET}\n")}}),
            "header",
        ),
        (
            json!({"name": "extra", "command": "x", "colour": "red"}),
            "unknown field",
        ),
    ] {
        let (status, problem) = s.v1_post(Some(&s.admin), "/v1/servers", body.clone()).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}: {problem}");
        let detail = problem["detail"].as_str().unwrap();
        assert!(detail.contains(why), "{body}: {detail}");
        assert_no_secret("a 400", detail);
    }
    let (status, _) = s
        .v1_post(
            Some(&s.admin),
            "/v1/servers",
            json!({"name": "fs", "command": "x"}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED);
    let (status, problem) = s
        .v1_post(
            Some(&s.admin),
            "/v1/servers",
            json!({"name": "fs", "command": "y"}),
        )
        .await;
    assert_eq!(status, StatusCode::CONFLICT, "{problem}");
    assert_eq!(delete(&s, &s.admin, "nope").await.0, StatusCode::NOT_FOUND);

    // A malformed file is named in the answer, not taken for an empty one.
    std::fs::write(s.dir.join("cfg/servers.json"), "{\"servers\": [}").unwrap();
    let (status, problem) = s.v1_get(Some(&s.admin), "/v1/servers").await;
    assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
    assert!(
        problem["detail"].as_str().unwrap().contains("servers.json"),
        "{problem}"
    );
}
