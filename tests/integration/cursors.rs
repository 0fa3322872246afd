//! `GET /v1/tasks` cursors: `nextCursor` is opaque and bound to the caller and to the query
//! that produced it; an invented, empty, altered, another principal's or another query's cursor
//! is a 400 problem document saying which, and cursors outlive a restart.

use serde_json::Value;

use crate::harness::{Server, read_answer};

/// GET `path` as `token`; returns the status, the content type and the JSON body.
async fn get(s: &Server, token: &str, path: &str) -> (u16, String, Value) {
    read_answer(
        s.http
            .get(s.url(path))
            .bearer_auth(token)
            .send()
            .await
            .unwrap(),
    )
    .await
}

fn ids(page: &Value) -> Vec<String> {
    page["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["taskId"].as_str().unwrap().to_string())
        .collect()
}

/// Asserts a 400 problem document whose detail contains `word`.
async fn refused(s: &Server, token: &str, path: &str, word: &str) {
    let (status, content_type, problem) = get(s, token, path).await;
    assert_eq!(status, 400, "{path}: {problem}");
    assert_eq!(content_type, "application/problem+json");
    let detail = problem["detail"].as_str().unwrap();
    assert!(
        detail.contains("cursor") && detail.contains(word),
        "{path}: {detail}"
    );
}

#[tokio::test]
async fn task_list_cursors_are_opaque_and_bound_to_caller_and_query() {
    let tmp = tempfile::tempdir().unwrap();
    let mut s = Server::start_in(tmp.path(), &["--conformance-fixtures"]).await;
    let t = s.admin.clone();
    let agent = s.token("pager");
    let mut all = Vec::new();
    for i in 0..7 {
        let who = if i % 2 == 0 { &t } else { &agent };
        all.push(s.completed_task(who, &format!("page-{i}")).await);
    }
    all.reverse();

    // Walking the pages gives every task once, newest first; the page size may change.
    let (status, _, page) = get(&s, &t, "/v1/tasks?limit=2").await;
    assert_eq!(status, 200);
    let cursor = page["nextCursor"].as_str().unwrap().to_string();
    assert!(
        cursor.parse::<i64>().is_err(),
        "opaque, not a number: {cursor}"
    );
    let mut walked = ids(&page);
    let mut next = Some(cursor.clone());
    let mut limit = 3;
    while let Some(c) = next {
        let (status, _, page) = get(&s, &t, &format!("/v1/tasks?limit={limit}&cursor={c}")).await;
        assert_eq!(status, 200, "{page}");
        walked.extend(ids(&page));
        next = page["nextCursor"].as_str().map(String::from);
        limit = 1;
    }
    assert_eq!(walked, all);

    // Filters: the cursor continues the same filtered list.
    let q = "tool=slow_compute&status=completed,working";
    let (_, _, page) = get(&s, &t, &format!("/v1/tasks?{q}&limit=3")).await;
    let filtered = page["nextCursor"].as_str().unwrap().to_string();
    let (status, _, page2) = get(&s, &t, &format!("/v1/tasks?{q}&limit=3&cursor={filtered}")).await;
    assert_eq!(status, 200, "{page2}");
    assert_eq!(ids(&page2), all[3..6]);
    // The same statuses in another order are the same query.
    let (status, _, _) = get(
        &s,
        &t,
        &format!("/v1/tasks?status=working,completed&tool=slow_compute&cursor={filtered}"),
    )
    .await;
    assert_eq!(status, 200);

    // Cursors nobody was given.
    refused(&s, &t, "/v1/tasks?cursor=", "empty").await;
    refused(&s, &t, "/v1/tasks?cursor=12345", "").await;
    refused(&s, &t, "/v1/tasks?cursor=banana", "").await;
    let mut altered = cursor.clone().into_bytes();
    let i = altered.len() / 3;
    altered[i] = if altered[i] == b'A' { b'B' } else { b'A' };
    let altered = String::from_utf8(altered).unwrap();
    refused(
        &s,
        &t,
        &format!("/v1/tasks?limit=2&cursor={altered}"),
        "altered",
    )
    .await;
    // Someone else's cursor, or this one with another query.
    refused(
        &s,
        &agent,
        &format!("/v1/tasks?limit=2&cursor={cursor}"),
        "principal",
    )
    .await;
    refused(
        &s,
        &t,
        &format!("/v1/tasks?q=page&cursor={cursor}"),
        "query",
    )
    .await;
    refused(
        &s,
        &t,
        &format!("/v1/tasks?status=completed&cursor={cursor}"),
        "query",
    )
    .await;
    refused(
        &s,
        &t,
        &format!("/v1/tasks?principal=pager&cursor={cursor}"),
        "query",
    )
    .await;
    refused(
        &s,
        &t,
        &format!("/v1/tasks?tool=slow_compute&cursor={filtered}"),
        "query",
    )
    .await;

    // An agent's own cursor works for it (its list is its own tasks).
    let (_, _, mine) = get(&s, &agent, "/v1/tasks?limit=1").await;
    let theirs = mine["nextCursor"].as_str().unwrap().to_string();
    let (status, _, mine2) = get(&s, &agent, &format!("/v1/tasks?cursor={theirs}")).await;
    assert_eq!(status, 200, "{mine2}");
    assert_eq!(ids(&mine2).len(), 2);
    refused(&s, &t, &format!("/v1/tasks?cursor={theirs}"), "principal").await;

    // The key is kept in the store: a cursor given before a restart still works after it.
    s.kill().await;
    let s = Server::start_in(tmp.path(), &["--conformance-fixtures"]).await;
    let (status, _, page) = get(&s, &t, &format!("/v1/tasks?limit=2&cursor={cursor}")).await;
    assert_eq!(status, 200, "{page}");
    assert_eq!(ids(&page), all[2..4]);
}
