//! How one `wait_for_http_job` run reaches the network: every request's destination checked
//! first ([`super::destination`]) and cleared with the policy ([`super::http_permission`]), redirects
//! followed hop by hop, the agent's credentials sent only to the origin they were given for,
//! and every answer read whole but bounded: at most [`MAX_BODY_BYTES`] of body, each request
//! (each redirect hop) within [`REQUEST_TIMEOUT`] from connecting to the last byte of its
//! answer. A body that stops before its announced end is a failure, never an answer.
//!
//! A URL's password never leaves this module in text meant for people: every URL a message,
//! status, result or log line names goes through [`shown`] (`http://bob:****@host/x`).

use std::time::Duration;

use reqwest::{Method, StatusCode, Url, header};
use serde_json::{Value, json};

use super::{
    destination::{Destinations, Lookup},
    http_job::tool_error,
    http_permission::Permission,
};
use taskdeck_engine::Outcome;

/// Redirects followed for one request, at most.
pub const MAX_REDIRECTS: usize = 10;
/// The most of a response's body that is read, in bytes (1 MiB): a longer body ends the run
/// with an error, and the rest of it is never read.
pub const MAX_BODY_BYTES: usize = 1 << 20;
/// Longest time one request may take, from connecting to the last byte of its answer
/// (each redirect hop is a request of its own). A slower one is a transient failure.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// Longest time to open a connection (within [`REQUEST_TIMEOUT`]).
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// What a URL's password is shown as.
pub const MASKED_PASSWORD: &str = "****";
/// Headers only the HTTP client may set: the agent's `Host` would reach another virtual host
/// of an allowed destination, and the framing headers would desynchronise the connection.
pub const RESERVED_HEADERS: [&str; 7] = [
    "host",
    "content-length",
    "transfer-encoding",
    "connection",
    "upgrade",
    "te",
    "trailer",
];
/// Longest time the `DELETE` sent on a cancel may take, resolving its host included: it must
/// end well within the engine's cancel grace (10 s by default).
pub const DELETE_TIMEOUT: Duration = Duration::from_secs(5);

/// Where a request goes, and whether the agent's credentials may go with it: only while every
/// URL that led there (the agent's own, each redirect, each `Location` of a monitor) was on the
/// agent's origin.
#[derive(Debug, Clone, PartialEq)]
pub struct Target {
    /// An `http` or `https` URL.
    pub url: Url,
    /// False once anything on the way was another origin: then `Authorization`, `Cookie` and
    /// `Proxy-Authorization` are not sent, even back on the agent's origin.
    pub credentials: bool,
}

impl Target {
    /// Where a `Location` header's `location` leads from here: resolved against this URL, the
    /// credentials going along only if they came here and it is the same origin. Errors: the
    /// text of a `location` that is not an HTTP URL.
    pub fn follow(&self, location: &str) -> Result<Target, String> {
        self.url
            .join(location)
            .ok()
            .filter(|u| matches!(u.scheme(), "http" | "https"))
            .map(|url| Target {
                credentials: self.credentials && same_origin(&url, &self.url),
                url,
            })
            .ok_or_else(|| {
                let location = self
                    .url
                    .join(location)
                    .map_or(location.to_string(), |u| shown(&u));
                format!("{location:?}, which is not an HTTP URL")
            })
    }
}

/// `url` as people may see it: its password, if any, replaced by [`MASKED_PASSWORD`]
/// (`http://bob:****@host/x`; the user name stays, it says which account is used), and the
/// credentials in its query or fragment masked as in the stored arguments
/// (`?api_key=[redacted]`, `?next=http://u:****@x/`: [`super::secrets::mask_string`]).
pub fn shown(url: &Url) -> String {
    let mut masked = url.clone();
    if url.password().is_some() {
        // An http(s) URL with a password has a host, so the password can be set.
        let _ = masked.set_password(Some(MASKED_PASSWORD));
    }
    let text = masked.to_string();
    super::secrets::mask_string(&text).unwrap_or(text)
}

/// `url` without its user name and password.
pub fn without_userinfo(url: &Url) -> Url {
    let mut url = url.clone();
    // Only URLs that cannot have a user name refuse these (`mailto:`); HTTP ones never do.
    let _ = url.set_username("");
    let _ = url.set_password(None);
    url
}

/// `text` with every spelling of `url` in it shown without its credentials ([`shown`]): for
/// error texts written by others (a resolver, reqwest) that may quote the URL.
fn scrub(text: String, url: &Url) -> String {
    let text = text.replace(url.as_str(), &shown(url));
    super::secrets::mask_string(&text).unwrap_or(text)
}

/// Checks one agent-given header: `name` must be a valid header name and not one only the
/// client sets ([`RESERVED_HEADERS`]), `value` a valid header value (no CR, LF or other control
/// character). Errors: why, for the agent (never quoting the value: it may be a secret).
pub fn check_header(name: &str, value: &str) -> Result<(), String> {
    if header::HeaderName::from_bytes(name.as_bytes()).is_err() {
        return Err(format!("headers: {name:?} is not a valid header name"));
    }
    if RESERVED_HEADERS.contains(&name.to_ascii_lowercase().as_str()) {
        return Err(format!(
            "headers: {name} is set by Taskdeck's HTTP client, not by the caller"
        ));
    }
    if header::HeaderValue::from_str(value).is_err() {
        return Err(format!(
            "headers: the value of {name} is not a valid header value (line breaks and other control characters are not allowed)"
        ));
    }
    Ok(())
}

/// A response read whole.
#[derive(Debug)]
pub struct Answer {
    /// Its status (never a redirect that was followed).
    pub status: StatusCode,
    /// Its headers.
    pub headers: header::HeaderMap,
    /// What answered: the last hop of the redirects, with the credentials that went there.
    pub from: Target,
    /// Its body, at most [`MAX_BODY_BYTES`].
    pub body: Vec<u8>,
}

impl Answer {
    /// The body as JSON, or as a JSON string (invalid UTF-8 replaced) when it is not JSON.
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&self.body).into_owned()))
    }

    /// The target its `Location` header names ([`Target::follow`] from what answered); `None`
    /// without a `Location`. Errors: the text of a `Location` that is not an HTTP URL.
    pub fn location(&self) -> Option<Result<Target, String>> {
        location(&self.from, &self.headers)
    }
}

/// The target the `Location` among `headers` names, from `from` ([`Target::follow`]).
fn location(from: &Target, headers: &header::HeaderMap) -> Option<Result<Target, String>> {
    let location = headers.get(header::LOCATION)?;
    Some(from.follow(&String::from_utf8_lossy(location.as_bytes())))
}

/// True when `a` and `b` have the same origin: scheme, host and port (the scheme's default
/// when none is written).
pub fn same_origin(a: &Url, b: &Url) -> bool {
    a.origin() == b.origin()
}

/// Why a request brought no answer.
#[derive(Debug)]
pub enum Failure {
    /// The request never reached the server: the name did not resolve or the connection could
    /// not be opened. Worth retrying, whatever the method.
    Unsent(String),
    /// The request was (or may have been) sent but nothing answered: no answer within
    /// [`REQUEST_TIMEOUT`], or the connection broke. Worth retrying, but the server may have
    /// received it.
    Unanswered(String),
    /// An answer began but its body broke off (the connection closed or timed out before its
    /// end); worth retrying, but the server did receive the request.
    Cut(String),
    /// The run ends with this outcome: the human did not allow a destination, the task was
    /// cancelled while they were asked, a redirect led nowhere, or the body was too large.
    End(Outcome),
}

/// One run's way out: its HTTP client, the names it pinned, and what the policy and the human
/// allowed it.
pub struct Reach {
    permission: Permission,
    dests: Destinations,
    http: reqwest::Client,
    /// The agent's `headers`, sent with every request (the credentials among them only as
    /// [`Target::credentials`] says).
    headers: Vec<(String, String)>,
    /// How long one request may take ([`REQUEST_TIMEOUT`] but in tests).
    timeout: Duration,
    /// The request being sent ("POST url"), from the moment it goes on the wire until its
    /// answer is read; still set when its future was dropped mid-flight (a cancel).
    in_flight: Option<String>,
}

impl Reach {
    /// A way out for a run allowed what `permission` says, sending `headers` with every
    /// request, each request within `timeout`. Errors: the HTTP client cannot be built.
    pub fn new(
        permission: Permission,
        lookup: Lookup,
        headers: Vec<(String, String)>,
        timeout: Duration,
    ) -> reqwest::Result<Reach> {
        let dests = Destinations::new(lookup);
        let http = dests.client(
            reqwest::Client::builder()
                .connect_timeout(CONNECT_TIMEOUT.min(timeout))
                .timeout(timeout),
        )?;
        Ok(Reach {
            permission,
            dests,
            http,
            headers,
            timeout,
            in_flight: None,
        })
    }

    /// Makes sure the request may be sent to `url` ([`Permission::clear`]: the human may be
    /// asked; `what` says which request it is), and pins the address it resolved to for the
    /// connection. A host name is looked up only once the call is allowed
    /// ([`Permission::clear_before_lookup`]).
    async fn check(&mut self, url: &Url, what: &str) -> Result<(), Failure> {
        let host = url.host_str().unwrap_or_default();
        let literal = host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<std::net::IpAddr>()
            .is_ok();
        if !literal && !super::destination::is_localhost_name(host) {
            self.permission.clear_before_lookup(url, what).await?;
        }
        let dest = self
            .dests
            .resolve(url)
            .await
            .map_err(|e| Failure::Unsent(scrub(e, url)))?;
        self.permission.clear(&dest, url, what).await?;
        self.dests.pin(&dest);
        Ok(())
    }

    /// The agent's headers for a request, without the credentials unless `credentials`: the
    /// headers whose names say they carry one (`Authorization`, `Cookie`, `X-Api-Key`, ...:
    /// [`super::secrets::is_secret_name`]) go only to the origin the agent gave them for, as browsers
    /// and reqwest do on redirects.
    fn headers_for(&self, credentials: bool) -> impl Iterator<Item = &(String, String)> {
        self.headers
            .iter()
            .filter(move |(k, _)| credentials || !super::secrets::is_secret_name(k))
    }

    /// The request that was on the wire when the last [`Reach::send`] stopped, if it stopped
    /// mid-flight (its future dropped on a cancel): "POST url" (or "POST url (where ...
    /// redirected)"), the URL shown without its password.
    pub fn in_flight(&self) -> Option<&str> {
        self.in_flight.as_deref()
    }

    /// `target`'s URL as it is sent: without its user name and password when the agent's own
    /// `Authorization` header goes with it. The header is the credential the agent chose; the
    /// URL's would be sent as a second `Authorization`.
    fn sent_url(&self, target: &Target) -> Url {
        let authorizes = self
            .headers_for(target.credentials)
            .any(|(k, _)| k.eq_ignore_ascii_case("authorization"));
        match authorizes {
            true => without_userinfo(&target.url),
            false => target.url.clone(),
        }
    }

    /// Sends `method target` with the agent's headers and JSON `body`, following redirects
    /// ([`MAX_REDIRECTS`] at most; 301/302 turn a POST, 303 anything but HEAD, into a GET
    /// without body), each hop's destination checked before it is sent, and reads the answer
    /// ([`read`]). A redirect status without a `Location` ends the run with an error.
    pub async fn send(
        &mut self,
        method: Method,
        target: &Target,
        body: Option<&Value>,
    ) -> Result<Answer, Failure> {
        self.in_flight = None;
        let mut hop = target.clone();
        let end = |text: String| Failure::End(tool_error(text, json!({"url": shown(&target.url)})));
        if !matches!(hop.url.scheme(), "http" | "https") {
            return Err(end(format!("{} is not an HTTP URL", shown(&hop.url))));
        }
        let (mut method, mut body) = (method, body.cloned());
        let mut what = format!("{method} {}", shown(&hop.url));
        for _ in 0..=MAX_REDIRECTS {
            self.check(&hop.url, &what).await?;
            let mut req = self.http.request(method.clone(), self.sent_url(&hop));
            for (k, v) in self.headers_for(hop.credentials) {
                req = req.header(k, v);
            }
            if let Some(b) = &body {
                req = req.json(b);
            }
            self.in_flight = Some(what.clone());
            let sent = req.send().await;
            let resp = match sent {
                Ok(resp) => resp,
                Err(e) => {
                    self.in_flight = None;
                    let why = scrub(why(&e, self.timeout), &hop.url);
                    // A connection that could not be opened carried nothing; any later failure
                    // may come after the server got the request.
                    return Err(if e.is_connect() {
                        Failure::Unsent(why)
                    } else {
                        Failure::Unanswered(why)
                    });
                }
            };
            let status = resp.status();
            let next = match location(&hop, resp.headers()) {
                Some(next) if is_redirect(status) => next,
                None if is_redirect(status) => {
                    self.in_flight = None;
                    return Err(end(format!(
                        "{} answered HTTP {} without a Location to follow",
                        shown(&hop.url),
                        status.as_u16()
                    )));
                }
                _ => {
                    let answer = read(resp, hop, self.timeout).await;
                    self.in_flight = None;
                    return answer;
                }
            };
            self.in_flight = None;
            let next = next.map_err(|to| end(format!("{} redirected to {to}", shown(&hop.url))))?;
            if status == StatusCode::SEE_OTHER && method != Method::HEAD
                || matches!(status, StatusCode::MOVED_PERMANENTLY | StatusCode::FOUND)
                    && method == Method::POST
            {
                method = Method::GET;
                body = None;
            }
            what = format!(
                "{method} {} (where {} redirected)",
                shown(&next.url),
                shown(&hop.url)
            );
            hop = next;
        }
        Err(end(format!("{what}: more than {MAX_REDIRECTS} redirects")))
    }

    /// Sends `DELETE target` once, with the headers a request there carries, without asking
    /// anyone (a destination that would need the human's allowance is skipped) and within
    /// [`DELETE_TIMEOUT`]. Returns how it went, for the task's timeline: "answered 204",
    /// "failed: ...", "not sent: ...".
    pub async fn delete(&mut self, target: &Target) -> String {
        let attempt = async {
            let dest = self
                .dests
                .resolve(&target.url)
                .await
                .map_err(|e| format!("not sent: {}", scrub(e, &target.url)))?;
            if !self.permission.may_reach(&dest, &target.url) {
                return Err(match dest.near {
                    Some((ip, how)) => format!(
                        "not sent: {} ({ip}, {how}) was not allowed",
                        dest.authority()
                    ),
                    None => "not sent: the job was not allowed".to_string(),
                });
            }
            self.dests.pin(&dest);
            let mut req = self.http.delete(self.sent_url(target));
            for (k, v) in self.headers_for(target.credentials) {
                req = req.header(k, v);
            }
            let resp =
                req.timeout(DELETE_TIMEOUT).send().await.map_err(|e| {
                    format!("failed: {}", scrub(why(&e, DELETE_TIMEOUT), &target.url))
                })?;
            Ok(format!("answered {}", resp.status().as_u16()))
        };
        match tokio::time::timeout(DELETE_TIMEOUT, attempt).await {
            Ok(Ok(answered)) => answered,
            Ok(Err(failed)) => failed,
            Err(_) => format!("failed: no answer within {} s", DELETE_TIMEOUT.as_secs()),
        }
    }
}

/// Reads the body of `resp` (which came from `from` and had `limit` to arrive whole), at most
/// [`MAX_BODY_BYTES`]: a `Content-Length` over that ends the run before anything is read, and
/// so does a body that grows over it (what is left is never read). Errors: [`Failure::Cut`]
/// when the body breaks off before its end (the connection closed early, or the time ran
/// out); [`Failure::End`] when it is too large.
async fn read(
    mut resp: reqwest::Response,
    from: Target,
    limit: Duration,
) -> Result<Answer, Failure> {
    let status = resp.status();
    let too_large = |from: &Target| {
        Failure::End(tool_error(
            format!(
                "{} answered HTTP {}, but the response body is over 1 MiB (Taskdeck reads at most {MAX_BODY_BYTES} bytes of it)",
                shown(&from.url),
                status.as_u16()
            ),
            json!({"url": shown(&from.url), "httpStatus": status.as_u16(), "error": "the response body is over 1 MiB"}),
        ))
    };
    if resp
        .content_length()
        .is_some_and(|n| n > MAX_BODY_BYTES as u64)
    {
        return Err(too_large(&from));
    }
    let mut body = Vec::new();
    while let Some(chunk) = resp.chunk().await.map_err(|e| {
        let why = scrub(why(&e, limit), &from.url);
        Failure::Cut(format!("the response body broke off: {why}"))
    })? {
        if body.len() + chunk.len() > MAX_BODY_BYTES {
            return Err(too_large(&from));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(Answer {
        status,
        headers: resp.headers().clone(),
        from,
        body,
    })
}

/// What went wrong with a request that had `limit` to complete, in a few words: "timed out
/// after 30 s", or the innermost cause (e.g. "cannot connect: Connection refused (os error
/// 111)", "end of file before message length reached"), which says more than reqwest's own
/// "error sending request".
fn why(e: &reqwest::Error, limit: Duration) -> String {
    if e.is_timeout() {
        return format!("timed out after {} s", limit.as_secs_f64());
    }
    let mut cause: &dyn std::error::Error = e;
    while let Some(inner) = cause.source() {
        cause = inner;
    }
    let prefix = if e.is_connect() {
        "cannot connect: "
    } else {
        ""
    };
    format!("{prefix}{cause}")
}

/// 301, 302, 303, 307 and 308: the statuses whose `Location` is followed.
fn is_redirect(status: StatusCode) -> bool {
    matches!(status.as_u16(), 301 | 302 | 303 | 307 | 308)
}
