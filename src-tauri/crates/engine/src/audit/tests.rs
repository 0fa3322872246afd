//! The chain's definition pinned (canonical JSON, one entry's hash computed independently with
//! Python's `json.dumps(sort_keys=True, separators=(",", ":"), ensure_ascii=False)` and
//! `hashlib.sha256`, as docs/audit.md tells a verifier to), and [`verify_chain`] against each
//! kind of tampering.

use serde_json::json;

use super::*;

fn record(n: u64) -> DecisionRecord {
    DecisionRecord {
        task_id: Some(format!("t-{n}")),
        principal: "claude-code".into(),
        server: "claude-code".into(),
        tool: "Bash".into(),
        digest: format!("sha256:{}", "ab".repeat(32)),
        decision: "allow".into(),
        decided_by: "rule".into(),
        human: None,
        rule: Some("r-1a2b3c4d".into()),
        reason: None,
        arguments: json!({"command": format!("echo {n}")}),
        edited_arguments: None,
    }
}

fn chain(n: u64) -> Vec<AuditEntry> {
    let mut prev = GENESIS_HASH.to_string();
    (1..=n)
        .map(|seq| {
            let e = AuditEntry::chained(
                record(seq),
                seq,
                1_764_600_000_000 + seq as i64,
                prev.clone(),
            );
            prev = e.hash.clone();
            e
        })
        .collect()
}

fn head(entries: &[AuditEntry]) -> Option<ChainLink> {
    entries.last().map(|e| ChainLink {
        seq: e.seq,
        hash: e.hash.clone(),
    })
}

#[test]
fn canonical_json_sorts_keys_at_every_depth_without_spaces() {
    // Built in reverse order: with serde_json's `preserve_order` (enabled in this workspace) a
    // plain `to_string` would keep it.
    let v = json!({"b": 1, "a": {"d": [{"f": 1, "e": "x y"}], "c": null}, "é": true, "Z": 2});
    assert_eq!(
        v.to_string(),
        r#"{"b":1,"a":{"d":[{"f":1,"e":"x y"}],"c":null},"é":true,"Z":2}"#
    );
    assert_eq!(
        canonical_json(&v),
        r#"{"Z":2,"a":{"c":null,"d":[{"e":"x y","f":1}]},"b":1,"é":true}"#
    );
}

#[test]
fn an_entry_hash_is_the_documented_one() {
    let entry = AuditEntry::chained(
        DecisionRecord {
            task_id: Some("t-1".into()),
            principal: "claude-code".into(),
            server: "claude-code".into(),
            tool: "Bash".into(),
            digest: format!("sha256:{}", "ab".repeat(32)),
            decision: "allow".into(),
            decided_by: "human".into(),
            human: Some("alice".into()),
            rule: None,
            reason: Some("ok \u{2713}\n\"q\"\u{1}".into()),
            arguments: json!({"z": 1, "command": "ls -l", "cwd": "/tmp", "n": [{"b": 2, "a": 1.5}]}),
            edited_arguments: Some(json!({"command": "ls"})),
        },
        1,
        1_764_600_000_000,
        GENESIS_HASH.into(),
    );
    assert_eq!(
        entry.hash,
        "2071c0a6632a0cb90f40348adc8e643d5fb85e04576bc0643033d0428ad5e077"
    );
    // Its JSON names every field, nulls included.
    let v = serde_json::to_value(&entry).unwrap();
    assert_eq!(v.as_object().unwrap().len(), 16);
    assert_eq!(v["rule"], Value::Null);
    assert_eq!(v["decidedBy"], "human");
}

#[test]
fn an_intact_chain_verifies_from_genesis_from_an_anchor_and_as_a_file() {
    let entries = chain(5);
    let report = verify_chain(
        entries.clone().into_iter(),
        Some(ChainLink::genesis()),
        head(&entries),
    );
    assert_eq!(
        report,
        AuditVerification {
            ok: true,
            entries: 5,
            first_seq: Some(1),
            last_seq: Some(5),
            head_hash: Some(entries[4].hash.clone()),
            problem: None,
        }
    );
    // After pruning 1..=2: the anchor is entry 2.
    let anchor = ChainLink {
        seq: 2,
        hash: entries[1].hash.clone(),
    };
    let report = verify_chain(entries[2..].iter().cloned(), Some(anchor), head(&entries));
    assert!(report.ok, "{report:?}");
    assert_eq!((report.entries, report.first_seq), (3, Some(3)));
    // An exported part (no anchor, no head).
    assert!(verify_chain(entries[3..].iter().cloned(), None, None).ok);
    // An empty log.
    let empty = verify_chain(
        std::iter::empty(),
        Some(ChainLink::genesis()),
        Some(ChainLink::genesis()),
    );
    assert!(empty.ok && empty.entries == 0 && empty.first_seq.is_none());
}

fn problem(report: AuditVerification) -> (u64, String) {
    assert!(!report.ok, "expected a problem: {report:?}");
    let p = report.problem.unwrap();
    (p.seq, p.what)
}

#[test]
fn each_kind_of_tampering_is_named_at_its_seq() {
    let entries = chain(5);
    let verify = |e: Vec<AuditEntry>| {
        problem(verify_chain(
            e.into_iter(),
            Some(ChainLink::genesis()),
            head(&entries),
        ))
    };

    let mut changed = entries.clone();
    changed[2].reason = Some("edited".into());
    let (seq, what) = verify(changed);
    assert_eq!(seq, 3);
    assert!(what.contains("a field was changed"), "{what}");

    let mut changed = entries.clone();
    changed[4].arguments = json!({"command": "rm -rf /"});
    let (seq, what) = verify(changed);
    assert_eq!(seq, 5);
    assert!(what.contains("a field was changed"), "{what}");

    let mut rehashed = entries.clone();
    rehashed[1].hash = "f".repeat(64);
    let (seq, what) = verify(rehashed);
    assert_eq!(seq, 2);
    assert!(what.contains("the hash was changed"), "{what}");

    let mut gap = entries.clone();
    gap.remove(2);
    let (seq, what) = verify(gap);
    assert_eq!(seq, 3);
    assert!(what.contains("missing"), "{what}");

    let (seq, what) = verify(entries[1..].to_vec());
    assert_eq!(seq, 1);
    assert!(what.contains("missing"), "{what}");

    let (seq, what) = verify(entries[..3].to_vec());
    assert_eq!(seq, 4);
    assert!(what.contains("newest entries were deleted"), "{what}");

    // An entry rewritten with a fresh hash of its own still breaks the next link.
    let mut forged = entries.clone();
    forged[2].reason = Some("forged".into());
    forged[2].hash = entry_hash(&forged[2]);
    let (seq, what) = verify(forged);
    assert_eq!(seq, 4);
    assert!(what.contains("prevHash"), "{what}");

    // A file that starts at seq 1 must start from the genesis hash.
    let mut first = entries.clone();
    first[0].prev_hash = "1".repeat(64);
    first[0].hash = entry_hash(&first[0]);
    let (seq, _) = problem(verify_chain(first.into_iter(), None, None));
    assert_eq!(seq, 1);
}

#[test]
fn an_entry_round_trips_through_its_json_line() {
    let e = chain(1).remove(0);
    let line = serde_json::to_string(&e).unwrap();
    let back: AuditEntry = serde_json::from_str(&line).unwrap();
    assert_eq!(back, e);
    assert_eq!(entry_hash(&back), e.hash);
}
