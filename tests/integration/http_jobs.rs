//! `wait_for_http_job` against what an agent may point it at: destinations that are this
//! machine in disguise.

use std::sync::{
    Arc,
    atomic::{AtomicUsize, Ordering},
};

use axum::Router;
use serde_json::{Value, json};

use crate::harness::Server;

/// Starts `wait_for_http_job` with `args` as `token`; its taskId.
async fn start(s: &Server, token: &str, args: Value) -> String {
    s.call(token, "wait_for_http_job", args).await["taskId"]
        .as_str()
        .unwrap()
        .to_string()
}

/// The task's result once it completed (as the admin sees it).
async fn completed(s: &Server, id: &str) -> Value {
    let v = s.wait_status(&s.admin, id, "completed").await;
    v["result"].clone()
}

/// A service bound to all interfaces, for the tests of this machine's addresses: answers
/// `{"status":"done"}` and counts requests. Returns its port and the count.
async fn service_on_all_interfaces() -> (u16, Arc<AtomicUsize>) {
    let hits = Arc::new(AtomicUsize::new(0));
    let counter = hits.clone();
    let app = Router::new().fallback(move || {
        counter.fetch_add(1, Ordering::SeqCst);
        async { r#"{"status":"done"}"# }
    });
    let listener = tokio::net::TcpListener::bind("0.0.0.0:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (port, hits)
}

/// Starts a task for `url` as `agent` and waits for its question about a private
/// destination; the taskId and the question's text.
async fn question(s: &Server, agent: &str, url: String) -> (String, String) {
    let id = start(s, agent, json!({"url": url})).await;
    let v = s.wait_status(&s.admin, &id, "input_required").await;
    let text = v["inputRequests"]["allow-private-network"]["params"]["message"]
        .as_str()
        .unwrap_or_else(|| panic!("{v}"))
        .to_string();
    (id, text)
}

/// This machine's own addresses are this machine, whatever range they are in: a service bound
/// to all interfaces, reached through the address of a network interface (say, a public one
/// on eth0), is asked about like loopback, and nothing is sent before the human's answer.
#[tokio::test]
async fn this_machines_own_interface_addresses_are_asked_about() {
    let s = Server::start(&[]).await;
    let agent = s.token("agent");
    let (port, hits) = service_on_all_interfaces().await;
    // The interface addresses, IPv4 (IPv6 ones are link-local or unique-local here).
    let own: Vec<std::net::Ipv4Addr> = nix::ifaddrs::getifaddrs()
        .unwrap()
        .filter_map(|i| Some(i.address?.as_sockaddr_in()?.ip()))
        .filter(|ip| !ip.is_loopback())
        .collect();
    if own.is_empty() {
        eprintln!("no network interface but loopback: nothing to check for interface addresses");
    }
    for ip in own {
        let (id, text) = question(&s, &agent, format!("http://{ip}:{port}/")).await;
        assert!(
            text.starts_with(&format!("Allow this task to reach {ip}:{port} ({ip}, ")),
            "{text}"
        );
        s.answer(&id, "allow-private-network", json!({"action": "decline"}))
            .await;
        assert_eq!(completed(&s, &id).await["isError"], true);
    }
    assert_eq!(hits.load(Ordering::SeqCst), 0, "nothing was sent");
}

/// A `.localhost` name that does not resolve is loopback all the same (RFC 6761): the human
/// is asked about it, and once allowed the request goes to 127.0.0.1; it is not retried as a
/// name that cannot be resolved.
#[tokio::test]
async fn a_localhost_name_that_does_not_resolve_is_asked_about_as_loopback() {
    let s = Server::start(&[]).await;
    let agent = s.token("agent");
    let (port, hits) = service_on_all_interfaces().await;
    let url = format!("http://no-such-name.localhost:{port}/");
    let (id, text) = question(&s, &agent, url).await;
    assert!(
        text.starts_with(&format!(
            "Allow this task to reach no-such-name.localhost:{port} (127.0.0.1, private network)?"
        )),
        "{text}"
    );
    assert_eq!(
        hits.load(Ordering::SeqCst),
        0,
        "nothing sent before the answer"
    );
    s.answer(&id, "allow-private-network", json!({"action": "accept"}))
        .await;
    let result = completed(&s, &id).await;
    assert_eq!(result["isError"], false, "{result}");
    assert_eq!(
        hits.load(Ordering::SeqCst),
        1,
        "sent to loopback once allowed"
    );
}
