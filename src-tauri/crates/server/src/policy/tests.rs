//! The policy as its callers see it: first match wins, defaults, a broken file, "always
//! allow", and the migration of the old per-tool files.

use serde_json::{Value, json};

use super::*;

fn call<'a>(principal: &'a str, server: &'a str, tool: &'a str, args: &'a Value) -> PolicyCall<'a> {
    PolicyCall {
        principal,
        server,
        tool,
        arguments: args,
        hints: ToolHints::default(),
    }
}

fn write(dir: &Path, policy: Value) {
    std::fs::write(dir.join(FILE_NAME), policy.to_string()).unwrap();
}

#[test]
fn the_first_matching_rule_wins_and_edits_apply_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let policy = Policy::new(dir.path());
    write(
        dir.path(),
        json!({"rules": [
            {"id": "r-1", "principal": "*", "server": "fs", "tool": "write_file",
             "arguments": {"path": "/etc/*"}, "decision": "deny"},
            {"id": "r-2", "principal": "claude-code", "server": "fs", "tool": "*", "decision": "allow"}
        ]}),
    );
    let etc = json!({"path": "/etc/passwd"});
    let home = json!({"path": "/home/me/x"});
    let v = policy.decide(&call("claude-code", "fs", "write_file", &etc));
    assert_eq!(
        (v.decision, v.rule_id.as_deref(), v.reason.as_str()),
        (Decision::Deny, Some("r-1"), "rule r-1")
    );
    let v = policy.decide(&call("claude-code", "fs", "write_file", &home));
    assert_eq!(
        (v.decision, v.rule_id.as_deref()),
        (Decision::Allow, Some("r-2"))
    );
    let v = policy.decide(&call("codex", "fs", "write_file", &home));
    assert_eq!((v.decision, v.rule_id), (Decision::Ask, None));

    write(
        dir.path(),
        json!({"rules": [
            {"id": "r-3", "principal": "codex", "server": "fs", "tool": "*", "decision": "allow", "note": "longer than before"}
        ]}),
    );
    let v = policy.decide(&call("codex", "fs", "write_file", &home));
    assert_eq!(
        v.rule_id.as_deref(),
        Some("r-3"),
        "the edit applies at once"
    );
}

#[test]
fn defaults_come_from_annotations_and_taskdecks_own_tools() {
    let dir = tempfile::tempdir().unwrap();
    let policy = Policy::new(dir.path());
    let args = json!({});
    let mut read = call("a", "fs", "read_file", &args);
    read.hints.read_only = Some(true);
    let v = policy.decide(&read);
    assert_eq!(
        (v.decision, v.reason.as_str()),
        (Decision::Allow, "default: readOnlyHint")
    );
    let mut write = call("a", "fs", "write_file", &args);
    write.hints.destructive = Some(true);
    assert_eq!(policy.decide(&write).decision, Decision::Ask);
    assert_eq!(
        policy.decide(&call("a", "fs", "x", &args)).decision,
        Decision::Ask
    );
    let mut run = call("a", TASKDECK_SERVER, "run_command", &args);
    run.hints.read_only = Some(true);
    assert_eq!(policy.decide(&run).decision, Decision::Ask);
    let http = call("a", TASKDECK_SERVER, "wait_for_http_job", &args);
    assert_eq!(policy.decide(&http).decision, Decision::Ask);
}

#[test]
fn a_malformed_file_allows_no_more_than_the_defaults_and_is_not_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    let policy = Policy::new(dir.path());
    // The first rule would allow everything, the second is broken: nothing of the file applies.
    write(
        dir.path(),
        json!({"rules": [
            {"id": "r-1", "principal": "*", "server": "*", "tool": "*", "decision": "allow"},
            {"id": "r-2", "principal": "*", "server": "*", "tool": "*", "decision": "maybe"}
        ]}),
    );
    let args = json!({});
    let v = policy.decide(&call("a", "fs", "write_file", &args));
    assert_eq!((v.decision, v.rule_id), (Decision::Ask, None));
    assert!(policy.rules().unwrap_err().contains("not a valid policy"));
    let before = std::fs::read_to_string(policy.path()).unwrap();
    assert!(
        policy
            .allow_always("a", "fs", "write_file", &args, "")
            .is_err()
    );
    assert_eq!(std::fs::read_to_string(policy.path()).unwrap(), before);
    std::fs::write(policy.path(), "{not json").unwrap();
    assert_eq!(
        policy.decide(&call("a", "fs", "x", &args)).decision,
        Decision::Ask
    );
}

/// A typo never lifts a deny rule: a file broken after it was valid keeps the rules it held;
/// one broken since the start knows none, and what would run by default is asked instead.
#[test]
fn a_broken_file_keeps_its_last_valid_rules_and_one_never_valid_asks() {
    let dir = tempfile::tempdir().unwrap();
    let policy = Policy::new(dir.path());
    let secret = json!({"path": "/home/me/secret.txt"});
    let mut read = call("a", "fs", "read_text_file", &secret);
    read.hints.read_only = Some(true);
    write(
        dir.path(),
        json!({"rules": [{"id": "r-no-secrets", "principal": "*", "server": "fs",
                          "tool": "read_*", "arguments": {"path": "*secret*"},
                          "decision": "deny"}]}),
    );
    assert_eq!(policy.decide(&read).decision, Decision::Deny);
    // A save cut short leaves the file empty: that is no valid policy either.
    std::fs::write(policy.path(), "  \n").unwrap();
    assert_eq!(policy.decide(&read).decision, Decision::Deny);
    assert!(policy.rules().unwrap_err().contains("is empty"));
    write(
        dir.path(),
        json!({"rules": [{"id": "r-no-secrets", "principal": "*", "server": "fs",
                          "tool": "read_*", "arguments": {"path": "*secret*"},
                          "decision": "deny"}]}),
    );
    let text = std::fs::read_to_string(policy.path()).unwrap();
    std::fs::write(policy.path(), text.replace("\"deny\"", "\"deny\",,")).unwrap();
    let v = policy.decide(&read);
    assert_eq!(
        (v.decision, v.rule_id.as_deref()),
        (Decision::Deny, Some("r-no-secrets"))
    );
    assert!(
        v.reason.contains("the rules it held when last valid apply"),
        "{}",
        v.reason
    );
    assert!(
        policy.rules().is_err(),
        "the file itself still reads as broken"
    );
    let fresh = Policy::new(dir.path());
    let v = fresh.decide(&read);
    assert_eq!((v.decision, v.rule_id), (Decision::Ask, None));
    assert!(
        v.reason.starts_with(
            "default: readOnlyHint (policy.json is not valid, and was not since Taskdeck started"
        ),
        "{}",
        v.reason
    );
}

/// A call an allow rule or a default would run goes to a person when it names Taskdeck's own
/// files: its config dir (the admin token) and its data dir; a deny stays a deny.
#[test]
fn a_call_naming_taskdecks_own_files_is_asked() {
    let dir = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let policy = Policy::new(dir.path()).keeping_to_itself(data.path());
    write(
        dir.path(),
        json!({"rules": [
            {"id": "r-cat", "principal": "*", "server": "taskdeck", "tool": "run_command",
             "arguments": {"command": "cat *"}, "decision": "allow"},
            {"id": "r-rm", "principal": "*", "server": "fs", "tool": "delete_*", "decision": "deny"}
        ]}),
    );
    let token = json!({"path": dir.path().join("admin-token")});
    let mut read = call("a", "fs", "read_text_file", &token);
    read.hints.read_only = Some(true);
    let v = policy.decide(&read);
    assert_eq!(v.decision, Decision::Ask, "{}", v.reason);
    assert!(
        v.reason.ends_with(&format!(
            "(it names Taskdeck's own files, {}: a person decides)",
            dir.path().display()
        )),
        "{}",
        v.reason
    );
    let store = json!({"command": format!("cat {}/taskdeck.sqlite3", data.path().display())});
    let v = policy.decide(&call("a", TASKDECK_SERVER, "run_command", &store));
    assert_eq!(
        (v.decision, v.rule_id.as_deref()),
        (Decision::Ask, Some("r-cat"))
    );
    let elsewhere = json!({"command": "cat /etc/hostname"});
    let v = policy.decide(&call("a", TASKDECK_SERVER, "run_command", &elsewhere));
    assert_eq!(v.decision, Decision::Allow);
    let v = policy.decide(&call("a", "fs", "delete_file", &token));
    assert_eq!(v.decision, Decision::Deny);
}

#[test]
fn always_allow_writes_one_narrow_rule() {
    let dir = tempfile::tempdir().unwrap();
    let policy = Policy::new(dir.path());
    let args = json!({"path": "/tmp/a[1].txt", "mode": 5});
    let id = policy
        .allow_always(
            "claude-code",
            "fs",
            "write_file",
            &args,
            "always allow, from task T",
        )
        .unwrap();
    assert!(id.starts_with("r-"), "{id}");
    assert_eq!(
        policy
            .allow_always("claude-code", "fs", "write_file", &args, "again")
            .unwrap(),
        id,
        "an equal rule is not added twice"
    );
    let v = policy.decide(&call("claude-code", "fs", "write_file", &args));
    assert_eq!(
        (v.decision, v.rule_id.as_deref()),
        (Decision::Allow, Some(id.as_str()))
    );
    let other = json!({"path": "/tmp/a1.txt", "mode": 5});
    assert_eq!(
        policy
            .decide(&call("claude-code", "fs", "write_file", &other))
            .decision,
        Decision::Ask
    );
    assert_eq!(
        policy
            .decide(&call("codex", "fs", "write_file", &args))
            .decision,
        Decision::Ask
    );
    let rules = policy.rules().unwrap();
    assert_eq!(rules.len(), 1);
    assert_eq!(rules[0].note.as_deref(), Some("always allow, from task T"));
    assert!(policy.remove(&id).unwrap());
    assert!(!policy.remove(&id).unwrap());
    assert!(policy.rules().unwrap().is_empty());
}

#[test]
fn replace_checks_every_rule() {
    let dir = tempfile::tempdir().unwrap();
    let policy = Policy::new(dir.path());
    let rule: Rule = serde_json::from_value(
        json!({"principal": "*", "server": "fs", "tool": "*", "decision": "deny"}),
    )
    .unwrap();
    let doc = |rules: Vec<Rule>| PolicyDocument {
        rules,
        approval: Default::default(),
    };
    let stored = policy.replace(doc(vec![rule.clone()])).unwrap().rules;
    assert!(stored[0].id.starts_with("r-"));
    let mut twice = stored.clone();
    twice.push(stored[0].clone());
    let e = policy.replace(doc(twice)).unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput);
    let no_humans: PolicyDocument =
        serde_json::from_value(json!({"rules": [], "approval": {"humans": 0}})).unwrap();
    let e = policy.replace(no_humans).unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput, "{e}");
    // publicOnly means something on an allow with a url pattern only.
    for meaningless in [
        json!({"principal": "*", "server": "*", "tool": "run_command", "decision": "allow", "publicOnly": true}),
        json!({"principal": "*", "server": "*", "tool": "*", "arguments": {"url": "http://x/*"}, "decision": "deny", "publicOnly": true}),
    ] {
        let rule: Rule = serde_json::from_value(meaningless).unwrap();
        let e = policy.replace(doc(vec![rule])).unwrap_err();
        assert!(
            e.to_string().contains("publicOnly is for an allow rule"),
            "{e}"
        );
    }
    let as_list = serde_json::from_value::<PolicyDocument>(json!({"rules": [], "approval": []}));
    assert!(
        as_list.is_err(),
        "terms are an object, not a list of values"
    );
    assert_eq!(policy.rules().unwrap(), stored, "nothing written");
}

#[test]
fn a_private_host_needs_a_rule_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let policy = Policy::new(dir.path());
    write(
        dir.path(),
        json!({"rules": [
            {"id": "r-1", "principal": "a", "server": "taskdeck", "tool": "wait_for_http_job",
             "arguments": {"url": "http://127.0.0.1:8080/*"}, "decision": "allow"},
            {"id": "r-2", "principal": "*", "server": "taskdeck", "tool": "wait_for_http_job", "decision": "allow"}
        ]}),
    );
    let named = json!({"url": "http://127.0.0.1:8080/ops"});
    let other = json!({"url": "http://127.0.0.1:9090/ops"});
    let tool = "wait_for_http_job";
    assert!(policy.allows_host(&call("a", TASKDECK_SERVER, tool, &named), "127.0.0.1"));
    assert!(
        !policy.allows_host(&call("a", TASKDECK_SERVER, tool, &other), "127.0.0.1"),
        "a broad rule does not do"
    );
    assert!(!policy.allows_host(&call("b", TASKDECK_SERVER, tool, &named), "127.0.0.1"));
    assert_eq!(
        policy
            .decide(&call("b", TASKDECK_SERVER, tool, &named))
            .decision,
        Decision::Allow
    );
    // A publicOnly rule naming the host allows the call, never the private destination.
    write(
        dir.path(),
        json!({"rules": [
            {"id": "r-1", "principal": "a", "server": "taskdeck", "tool": "wait_for_http_job",
             "arguments": {"url": "http://127.0.0.1:8080/*"}, "decision": "allow", "publicOnly": true}
        ]}),
    );
    assert!(!policy.allows_host(&call("a", TASKDECK_SERVER, tool, &named), "127.0.0.1"));
    assert_eq!(
        policy
            .decide(&call("a", TASKDECK_SERVER, tool, &named))
            .decision,
        Decision::Allow
    );
}

#[test]
fn the_old_files_are_migrated_once_after_the_rules_already_there() {
    let dir = tempfile::tempdir().unwrap();
    // Where the commands run: outside the config dir, which is Taskdeck's own (own_files.rs).
    let work = tempfile::tempdir().unwrap();
    let app = work.path().join("app");
    std::fs::create_dir_all(&app).unwrap();
    write(
        dir.path(),
        json!({"rules": [
            {"id": "r-kept", "principal": "*", "server": "fs", "tool": "*", "decision": "deny"}
        ]}),
    );
    let commands =
        json!({"allow": {"claude-code": ["cargo test *", {"command": "make", "cwd": app}]}});
    std::fs::write(dir.path().join("command-policy.json"), commands.to_string()).unwrap();
    let http = json!({"allowPrivate": {"agent": ["127.0.0.1:8080", "Build.LAN:80"]}});
    std::fs::write(dir.path().join("http-policy.json"), http.to_string()).unwrap();

    let policy = Policy::new(dir.path());
    let rules = policy.rules().unwrap();
    assert_eq!(rules[0].id, "r-kept");
    assert_eq!(rules.len(), 1 + 2 + 3, "{rules:#?}");
    assert!(!dir.path().join("command-policy.json").exists());
    assert!(dir.path().join("command-policy.json.migrated").exists());
    assert!(dir.path().join("http-policy.json.migrated").exists());

    let run = |line: &str, cwd: &Path| {
        let args =
            json!({"command": line, "cwd": cwd.canonicalize().unwrap().display().to_string()});
        policy
            .decide(&call("claude-code", TASKDECK_SERVER, "run_command", &args))
            .decision
    };
    assert_eq!(run("cargo test --all", work.path()), Decision::Allow);
    assert_eq!(run("make", &app), Decision::Allow);
    assert_eq!(
        run("make", work.path()),
        Decision::Ask,
        "the cwd-bound rule holds only there"
    );
    let http_call = |url: &str, host: &str| {
        let args = json!({"url": url});
        policy.allows_host(
            &call("agent", TASKDECK_SERVER, "wait_for_http_job", &args),
            host,
        )
    };
    assert!(http_call("http://127.0.0.1:8080/ops", "127.0.0.1"));
    assert!(http_call("http://build.lan/x", "build.lan"));
    assert!(!http_call("http://127.0.0.1:8081/ops", "127.0.0.1"));

    // Again (a restored old file): the same rules are not added twice.
    std::fs::write(dir.path().join("http-policy.json"), http.to_string()).unwrap();
    let again = Policy::new(dir.path());
    assert_eq!(again.rules().unwrap().len(), rules.len());
}

/// A rule's principal and server match in any case (a principal is one name in any case, a
/// server's name is lowercase): a deny written `Agent1` / `TIME` is not a rule for no one. The
/// tool matches as written.
#[test]
fn principal_and_server_match_in_any_case() {
    let dir = tempfile::tempdir().unwrap();
    let policy = Policy::new(dir.path());
    write(
        dir.path(),
        json!({"rules": [
            {"id": "r-1", "principal": "Agent1", "server": "time", "tool": "*", "decision": "deny"},
            {"id": "r-2", "principal": "*", "server": "TIME", "tool": "convert_time", "decision": "deny"},
            {"id": "r-3", "principal": "*", "server": "F[S]", "tool": "Write", "decision": "deny"}
        ]}),
    );
    let none = json!({});
    let v = policy.decide(&call("agent1", "time", "get_current_time", &none));
    assert_eq!(v.rule_id.as_deref(), Some("r-1"));
    let v = policy.decide(&call("agent2", "time", "convert_time", &none));
    assert_eq!(v.rule_id.as_deref(), Some("r-2"));
    assert!(policy.may_deny("agent2", "time", "convert_time"));
    let v = policy.decide(&call("agent2", "fs", "Write", &none));
    assert_eq!(v.rule_id.as_deref(), Some("r-3"));
    let v = policy.decide(&call("agent2", "fs", "write", &none));
    assert_eq!(v.rule_id, None, "the tool matches as written");
}

/// A rule for `run_command` on an argument its rules never see (`argv`) is refused when
/// written, naming the argument to use; the same on another server's tool is kept.
#[test]
fn a_run_command_rule_on_argv_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let policy = Policy::new(dir.path());
    let rule = |server: &str, key: &str| -> PolicyDocument {
        serde_json::from_value(json!({"rules": [{"principal": "*", "server": server,
            "tool": "run_command", "arguments": {key: "*deploy*"}, "decision": "ask"}]}))
        .unwrap()
    };
    let e = policy.replace(rule("taskdeck", "argv")).unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput);
    assert!(e.to_string().contains("arguments.argv") && e.to_string().contains("`command`"));
    policy.replace(rule("taskdeck", "command")).unwrap();
    policy.replace(rule("build-box", "argv")).unwrap();
    // Other rules no call of Taskdeck's own tools can match.
    let doc = |rule: Value| -> PolicyDocument {
        serde_json::from_value(json!({ "rules": [rule] })).unwrap()
    };
    for (rule, says) in [
        (
            json!({"principal": "*", "server": "taskdeck", "tool": "Run_Command", "decision": "deny"}),
            "write `run_command`",
        ),
        (
            json!({"principal": "*", "server": "taskdeck", "tool": "request_approval", "decision": "deny"}),
            "never applies",
        ),
        (
            json!({"principal": "*", "server": "TASKDECK", "tool": "wait_for_http_job",
                "arguments": {"headers": "*"}, "decision": "deny"}),
            "headers",
        ),
        (
            json!({"principal": "*", "server": "taskdeck", "tool": "wait_for_http_job",
                "arguments": {"URL": "*"}, "decision": "deny"}),
            "arguments.URL",
        ),
    ] {
        let e = policy.replace(doc(rule.clone())).unwrap_err().to_string();
        assert!(e.contains(says), "{rule}: {e}");
    }
    for rule in [
        json!({"principal": "*", "server": "taskdeck", "tool": "run_*", "decision": "deny"}),
        json!({"principal": "*", "server": "taskdeck", "tool": "wait_for_http_job",
               "arguments": {"url": "http://x/*", "method": "POST"}, "decision": "deny"}),
        json!({"principal": "*", "server": "*", "tool": "Run_Command", "decision": "deny"}),
    ] {
        policy
            .replace(doc(rule.clone()))
            .unwrap_or_else(|e| panic!("{rule}: {e}"));
    }
}

/// A never-matching rule written into policy.json by hand is read (it matches nothing) and
/// reported; a replacement that keeps it as it is may change the other rules, one that changes
/// it must fix it.
#[test]
fn a_hand_written_never_matching_rule_is_reported_and_kept_as_it_is() {
    let dir = tempfile::tempdir().unwrap();
    let policy = Policy::new(dir.path());
    std::fs::write(
        policy.path(),
        json!({"rules": [{"id": "r-argv", "principal": "*", "server": "taskdeck",
            "tool": "run_command", "arguments": {"argv": "*deploy*"}, "decision": "deny"}]})
        .to_string(),
    )
    .unwrap();
    let doc = policy.document().unwrap();
    let never = doc.never_matching();
    assert_eq!(
        (never.len(), never[0].rule.as_str(), never[0].position),
        (1, "r-argv", 1)
    );
    assert!(never[0].why.contains("`command`"), "{}", never[0].why);
    // Kept as it is, with a rule added after it: taken.
    let mut added = doc.clone();
    added.rules.push(
        serde_json::from_value(
            json!({"principal": "*", "server": "fs", "tool": "write", "decision": "ask"}),
        )
        .unwrap(),
    );
    let (stored, _) = policy.replace_if(added, None).unwrap();
    assert_eq!(stored.rules.len(), 2);
    // Changed (still on argv): refused, as a new one is.
    let mut changed = stored.clone();
    changed.rules[0].decision = Decision::Ask;
    let e = policy.replace(changed).unwrap_err();
    assert!(e.to_string().starts_with("rule 1:"), "{e}");
}

/// A rule's note is part of why it decided (what an agent reads when refused), on one line.
#[test]
fn a_rules_note_is_in_its_reason() {
    let dir = tempfile::tempdir().unwrap();
    let policy = Policy::new(dir.path());
    write(
        dir.path(),
        json!({"rules": [
            {"id": "r-fri", "principal": "*", "server": "fs", "tool": "write", "decision": "deny",
             "note": "no deploys on Fridays:\n  use the staging bucket"},
            {"id": "r-plain", "principal": "*", "server": "fs", "tool": "read", "decision": "allow"}
        ]}),
    );
    let none = json!({});
    let v = policy.decide(&call("agent", "fs", "write", &none));
    assert_eq!(
        v.reason,
        "rule r-fri (no deploys on Fridays: use the staging bucket)"
    );
    let v = policy.decide(&call("agent", "fs", "read", &none));
    assert_eq!(v.reason, "rule r-plain");
    // Control and bidi-override characters never reach what people and terminals show.
    write(
        dir.path(),
        json!({"rules": [{"id": "r-odd", "principal": "*", "server": "fs", "tool": "write",
            "decision": "deny", "note": "a\u{1b}[2Jb\u{7}c \u{202e}d"}]}),
    );
    let v = policy.decide(&call("agent", "fs", "write", &none));
    assert_eq!(v.reason, "rule r-odd (a [2Jb c d)");
}
