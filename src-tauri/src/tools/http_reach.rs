//! How one `wait_for_http_job` run reaches the network: every request's destination checked
//! first ([`super::destination`]; a private one only once the human allowed it), redirects
//! followed hop by hop, the agent's credentials sent only to the origin they were given for,
//! and every answer read whole but bounded: at most [`MAX_BODY_BYTES`] of body, each request
//! (each redirect hop) within [`REQUEST_TIMEOUT`] from connecting to the last byte of its
//! answer. A body that stops before its announced end is a failure, never an answer.

use std::{collections::HashSet, sync::Arc, time::Duration};

use reqwest::{Method, StatusCode, Url, header};
use serde_json::{Value, json};

use super::{
    destination::{Destination, Destinations, Lookup},
    http_job::{ALLOW_PRIVATE_KEY, tool_error},
    http_policy::HttpPolicy,
};
use crate::engine::{Outcome, TaskContext};

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
            .ok_or_else(|| format!("{location:?}, which is not an HTTP URL"))
    }
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
    /// Nothing answered; worth retrying: the name did not resolve, the connection failed, or
    /// no answer came within [`REQUEST_TIMEOUT`].
    Unanswered(String),
    /// An answer began but its body broke off (the connection closed or timed out before its
    /// end); worth retrying, but the server did receive the request.
    Cut(String),
    /// The run ends with this outcome: the human did not allow a destination, the task was
    /// cancelled while they were asked, a redirect led nowhere, or the body was too large.
    End(Outcome),
}

/// One run's way out: its HTTP client, the names it pinned, and the private destinations the
/// human allowed during the run.
pub struct Reach {
    ctx: TaskContext,
    policy: Arc<HttpPolicy>,
    dests: Destinations,
    http: reqwest::Client,
    /// The agent's `headers`, sent with every request (the credentials among them only as
    /// [`Target::credentials`] says).
    headers: Vec<(String, String)>,
    /// Private authorities (`host:port`) allowed for this run.
    allowed: HashSet<String>,
    /// Questions asked so far (each needs a key of its own).
    asked: u32,
    /// How long one request may take ([`REQUEST_TIMEOUT`] but in tests).
    timeout: Duration,
}

impl Reach {
    /// A way out for the run of `ctx`, sending `headers` with every request, each request
    /// within `timeout`. Errors: the HTTP client cannot be built.
    pub fn new(
        ctx: TaskContext,
        policy: Arc<HttpPolicy>,
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
            ctx,
            policy,
            dests,
            http,
            headers,
            allowed: HashSet::new(),
            asked: 0,
            timeout,
        })
    }

    /// True when `dest` may be reached without asking: it is public, or this run or the
    /// policy allowed its authority.
    fn may_reach(&self, dest: &Destination) -> bool {
        if dest.near.is_none() {
            return true;
        }
        let authority = dest.authority();
        self.allowed.contains(&authority) || self.policy.allows(self.ctx.principal(), &authority)
    }

    /// Resolves `url`, makes sure its destination may be reached (asking the human about a
    /// private one: `what` says which request it is for), and pins it for the connection.
    async fn check(&mut self, url: &Url, what: &str) -> Result<(), Failure> {
        let dest = self.dests.resolve(url).await.map_err(Failure::Unanswered)?;
        if !self.may_reach(&dest) {
            self.ask(&dest, what).await?;
        }
        self.dests.pin(&dest);
        Ok(())
    }

    /// Asks the human whether this task may reach the near destination `dest`; an accept
    /// allows it for the rest of the run ("always allow": for the principal, in the policy).
    async fn ask(&mut self, dest: &Destination, what: &str) -> Result<(), Failure> {
        let (authority, principal) = (dest.authority(), self.ctx.principal().to_string());
        let Some((ip, nearness)) = dest.near else {
            return Ok(());
        };
        self.asked += 1;
        let key = match self.asked {
            1 => ALLOW_PRIVATE_KEY.to_string(),
            n => format!("{ALLOW_PRIVATE_KEY}-{n}"),
        };
        let question = format!(
            "Allow this task to reach {authority} ({ip}, {nearness})?\n\n\
             {principal} asked wait_for_http_job to send {what}. The response goes back to {principal}."
        );
        let schema = json!({"type": "object", "properties": {
            "alwaysAllow": {"type": "boolean", "title": format!("Always allow {principal} to reach {authority}"), "default": false}
        }});
        let answer = self
            .ctx
            .elicit_human(&key, &question, schema)
            .await
            .map_err(|e| Failure::End(e.into()))?;
        if answer.get("action").and_then(Value::as_str) != Some("accept") {
            return Err(Failure::End(tool_error(
                format!(
                    "The human did not allow this task to reach {authority} ({ip}, {nearness}): {what} was not sent."
                ),
                json!({"refused": authority, "ip": ip, "request": what}),
            )));
        }
        if answer
            .pointer("/content/alwaysAllow")
            .and_then(Value::as_bool)
            == Some(true)
            && let Err(e) = self.policy.allow(&principal, &authority)
        {
            tracing::warn!("cannot save the HTTP policy: {e}");
        }
        self.allowed.insert(authority);
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

    /// Sends `method target` with the agent's headers and JSON `body`, following redirects
    /// ([`MAX_REDIRECTS`] at most; 301/302 turn a POST, 303 anything but HEAD, into a GET
    /// without body), each hop's destination checked before it is sent, and reads the answer
    /// ([`read`]).
    pub async fn send(
        &mut self,
        method: Method,
        target: &Target,
        body: Option<&Value>,
    ) -> Result<Answer, Failure> {
        let mut hop = target.clone();
        let end =
            |text: String| Failure::End(tool_error(text, json!({"url": target.url.as_str()})));
        if !matches!(hop.url.scheme(), "http" | "https") {
            return Err(end(format!("{} is not an HTTP URL", hop.url)));
        }
        let (mut method, mut body) = (method, body.cloned());
        let mut what = format!("{method} {}", hop.url);
        for _ in 0..=MAX_REDIRECTS {
            self.check(&hop.url, &what).await?;
            let mut req = self.http.request(method.clone(), hop.url.clone());
            for (k, v) in self.headers_for(hop.credentials) {
                req = req.header(k, v);
            }
            if let Some(b) = &body {
                req = req.json(b);
            }
            let resp = req
                .send()
                .await
                .map_err(|e| Failure::Unanswered(why(&e, self.timeout)))?;
            let status = resp.status();
            let next = match location(&hop, resp.headers()) {
                Some(next) if is_redirect(status) => next,
                _ => return read(resp, hop, self.timeout).await,
            };
            let next = next.map_err(|to| end(format!("{} redirected to {to}", hop.url)))?;
            if status == StatusCode::SEE_OTHER && method != Method::HEAD
                || matches!(status, StatusCode::MOVED_PERMANENTLY | StatusCode::FOUND)
                    && method == Method::POST
            {
                method = Method::GET;
                body = None;
            }
            what = format!("{method} {} (where {} redirected)", next.url, hop.url);
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
                .map_err(|e| format!("not sent: {e}"))?;
            if let (false, Some((ip, how))) = (self.may_reach(&dest), dest.near) {
                return Err(format!(
                    "not sent: {} ({ip}, {how}) was not allowed",
                    dest.authority()
                ));
            }
            self.dests.pin(&dest);
            let mut req = self.http.delete(target.url.clone());
            for (k, v) in self.headers_for(target.credentials) {
                req = req.header(k, v);
            }
            let resp = req
                .timeout(DELETE_TIMEOUT)
                .send()
                .await
                .map_err(|e| format!("failed: {}", why(&e, DELETE_TIMEOUT)))?;
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
                from.url,
                status.as_u16()
            ),
            json!({"url": from.url.as_str(), "httpStatus": status.as_u16(), "error": "the response body is over 1 MiB"}),
        ))
    };
    if resp
        .content_length()
        .is_some_and(|n| n > MAX_BODY_BYTES as u64)
    {
        return Err(too_large(&from));
    }
    let mut body = Vec::new();
    while let Some(chunk) = resp
        .chunk()
        .await
        .map_err(|e| Failure::Cut(format!("the response body broke off: {}", why(&e, limit))))?
    {
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
