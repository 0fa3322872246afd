//! What went wrong between Taskdeck and an upstream, in words for the people who read a task's
//! error or a server's `lastError`: the cause's own messages down to the root (rmcp's
//! transport type names left out, a URL's credentials masked as in
//! [`redact_url`](super::server_target::redact_url) masks them), and whether a request can have reached
//! the server at all.

use std::error::Error;

use rmcp::{
    ServiceError,
    service::ClientInitializeError,
    transport::{DynamicTransportError, streamable_http_client::StreamableHttpError},
};

use super::server_target::redact_url;

/// `e`'s message followed by those of its sources, joined with ": ", each left out when the
/// text so far already holds it (many errors repeat their source's message). A URL an HTTP
/// error names is shown as [`redact_url`] shows it: its query values, fragment and password
/// can be credentials.
pub fn said(e: &(dyn Error + 'static)) -> String {
    let mut text = String::new();
    for error in chain(e) {
        // rmcp's "Client error: <the HTTP library's message>": the message follows.
        if matches!(
            error.downcast_ref::<StreamableHttpError<reqwest_rmcp::Error>>(),
            Some(StreamableHttpError::Client(_))
        ) {
            continue;
        }
        let message = error.to_string();
        if !text.contains(&message) {
            if !text.is_empty() {
                text.push_str(": ");
            }
            text.push_str(&message);
        }
    }
    masked_urls(&text)
}

/// `e` and its sources, outermost first. rmcp's HTTP client error does not name the HTTP
/// library's error it wraps as its source: that one is followed too.
fn chain<'a>(e: &'a (dyn Error + 'static)) -> impl Iterator<Item = &'a (dyn Error + 'static)> {
    std::iter::successors(Some(e), |&error| inner(error))
}

/// What `error` wraps: its source, or the HTTP library's error rmcp's client error holds.
fn inner<'a>(error: &'a (dyn Error + 'static)) -> Option<&'a (dyn Error + 'static)> {
    match error.downcast_ref::<StreamableHttpError<reqwest_rmcp::Error>>() {
        Some(StreamableHttpError::Client(wrapped)) => Some(wrapped),
        _ => error.source(),
    }
}

/// `text` with each `http://` or `https://` URL in it (up to a space, a quote or a closing
/// bracket) as [`redact_url`] shows it.
fn masked_urls(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = ["http://", "https://"]
        .iter()
        .filter_map(|scheme| rest.find(scheme))
        .min()
    {
        out.push_str(&rest[..start]);
        let url = &rest[start..];
        let end = url
            .find(|c: char| c.is_whitespace() || matches!(c, ')' | ']' | '>' | '"' | '\''))
            .unwrap_or(url.len());
        out.push_str(&redact_url(&url[..end]));
        rest = &url[end..];
    }
    out.push_str(rest);
    out
}

/// A transport's error without rmcp's `Transport [<type name>] error:` prefix. A connection
/// nothing accepted is said as such, with the system's words (`nothing accepts connections at
/// URL: Connection refused (os error 111)`), not the HTTP library's four layers of them.
fn transport(e: &DynamicTransportError) -> String {
    let refused = chain(e.error.as_ref()).find_map(|error| {
        error
            .downcast_ref::<std::io::Error>()
            .filter(|io| io.kind() == std::io::ErrorKind::ConnectionRefused)
    });
    let url = chain(e.error.as_ref()).find_map(|error| {
        error
            .downcast_ref::<reqwest_rmcp::Error>()
            .and_then(|e| e.url())
            .map(|u| redact_url(u.as_str()))
    });
    match (refused, url) {
        (Some(io), Some(url)) => format!("nothing accepts connections at {url}: {io}"),
        (Some(io), None) => format!("nothing accepts the connection: {io}"),
        _ => said(e.error.as_ref()),
    }
}

/// Why a request to an upstream failed (not an answer of the upstream's: a JSON-RPC error it
/// sent is shown as its message).
pub fn of_request(e: &ServiceError) -> String {
    match e {
        ServiceError::TransportSend(t) => transport(t),
        ServiceError::TransportClosed => "the connection closed".into(),
        ServiceError::McpError(e) => e.message.to_string(),
        other => said(other),
    }
}

/// Why the MCP handshake (`initialize`) with an upstream failed.
pub fn of_handshake(e: &ClientInitializeError) -> String {
    match e {
        ClientInitializeError::TransportError { error, context } => {
            format!("{} (while it sent {})", transport(error), sent(context))
        }
        ClientInitializeError::ConnectionClosed(context) => {
            format!("the connection closed (while it waited for the {context})")
        }
        ClientInitializeError::LegacyFallbackFailed { discover, fallback } => format!(
            "{}, and then {}",
            of_handshake(discover),
            of_handshake(fallback)
        ),
        other => said(other),
    }
}

/// rmcp's "send discover request" as "the discover request".
fn sent(context: &str) -> String {
    match context.strip_prefix("send ") {
        Some(what) => format!("the {what}"),
        None => context.to_string(),
    }
}

/// True when `e` proves the request never reached the upstream: nothing accepted the
/// connection it was to be sent on (`ECONNREFUSED`). A request whose connection broke later
/// may have run.
pub fn never_reached(e: &ServiceError) -> bool {
    let ServiceError::TransportSend(t) = e else {
        return false;
    };
    chain(t.error.as_ref()).any(|error| {
        error
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::ConnectionRefused)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A real connection refused by a port nothing listens on, through the HTTP client rmcp
    /// uses.
    async fn refused(url_tail: &str) -> reqwest_rmcp::Error {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        reqwest_rmcp::Client::new()
            .get(format!("http://u:sekrit@127.0.0.1:{port}/mcp{url_tail}"))
            .send()
            .await
            .unwrap_err()
    }

    #[tokio::test]
    async fn the_root_cause_is_said_and_credentials_are_not() {
        let e = refused("?api_key=sekrit#sekrit").await;
        let text = said(&e);
        assert!(text.to_lowercase().contains("connection refused"), "{text}");
        assert!(!text.contains("sekrit"), "{text}");
        assert!(text.contains("api_key=[redacted]"), "{text}");
    }

    #[tokio::test]
    async fn a_refused_connection_never_reached_the_server() {
        // Wrapped as rmcp's HTTP client wraps it.
        let e = StreamableHttpError::Client(refused("").await);
        let dynamic =
            DynamicTransportError::from_parts("http", std::any::TypeId::of::<()>(), Box::new(e));
        let e = ServiceError::TransportSend(dynamic);
        assert!(never_reached(&e));
        let text = of_request(&e);
        assert!(!text.contains("Transport ["), "{text}");
        assert!(text.to_lowercase().contains("connection refused"), "{text}");
        // Said once, in the system's words, with where: not the HTTP library's four layers.
        assert!(
            text.starts_with("nothing accepts connections at http://127.0.0.1:"),
            "{text}"
        );
        assert!(!text.contains("client error (Connect)"), "{text}");
        assert!(!never_reached(&ServiceError::TransportClosed));
    }

    #[test]
    fn urls_in_a_message_are_masked() {
        assert_eq!(
            masked_urls("for url (https://u:pw@h/mcp?key=v) and http://h/x, done"),
            "for url (https://u:****@h/mcp?key=[redacted]) and http://h/x, done"
        );
    }

    #[test]
    fn a_message_repeated_by_its_source_is_said_once() {
        #[derive(Debug)]
        struct Outer(std::io::Error);
        impl std::fmt::Display for Outer {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "Io error: {}", self.0)
            }
        }
        impl Error for Outer {
            fn source(&self) -> Option<&(dyn Error + 'static)> {
                Some(&self.0)
            }
        }
        let e = Outer(std::io::Error::other("broken pipe"));
        assert_eq!(said(&e), "Io error: broken pipe");
    }
}
