//! `wait_for_http_job`'s arguments: what the agent may give (their JSON Schema is the tool's
//! `inputSchema`), the checks beyond that schema made before a task exists, and the defaults a
//! run takes from them.

use std::time::Duration;

use indexmap::IndexMap;
use reqwest::Method;
use schemars::JsonSchema;
use serde::{Deserialize, Deserializer};
use serde_json::Value;

use super::{
    super::{arguments::WholeNumber, http_reach::check_header},
    MIN_POLL_MS,
};

/// `{url | monitor, method?, body?, headers?, pollIntervalMs?}`, nothing else. Exactly one of
/// `url` and `monitor` is given ([`WaitForHttpJobArguments::check`]; the schema allows
/// either). `headers` (no description in the schema) are sent with every request, the
/// credentials among them only to the origin of `url` or `monitor`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct WaitForHttpJobArguments {
    /// Operation to start.
    #[schemars(url)]
    pub url: Option<String>,
    /// Default: POST with a body, else GET.
    pub method: Option<StartMethod>,
    /// JSON body of the starting request.
    // `skip_serializing_if` keeps schemars from giving the field `"default": null`.
    #[serde(
        default,
        deserialize_with = "given",
        skip_serializing_if = "Option::is_none"
    )]
    pub body: Option<Value>,
    // Headers for every request; a plain comment, since the schema gives this field no description.
    #[allow(
        missing_docs,
        reason = "a doc comment would be the schema's description"
    )]
    pub headers: Option<IndexMap<String, String>>,
    /// Follow this status monitor instead of starting anything.
    #[schemars(url)]
    pub monitor: Option<String>,
    /// Poll interval in ms when the server gives no Retry-After, and the shortest wait between polls whatever it gives (default 1000; a smaller value is taken as 1000).
    #[schemars(range(min = 100))]
    pub poll_interval_ms: Option<WholeNumber>,
}

/// The method of the starting request: `GET`, `POST`, `PUT` or `PATCH` (the variants carry no
/// doc comments: the schema is a plain `enum` of these names).
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "UPPERCASE")]
#[allow(missing_docs, reason = "doc comments would make the schema a `oneOf`")]
pub enum StartMethod {
    Get,
    Post,
    Put,
    Patch,
}

impl From<StartMethod> for Method {
    fn from(method: StartMethod) -> Method {
        match method {
            StartMethod::Get => Method::GET,
            StartMethod::Post => Method::POST,
            StartMethod::Put => Method::PUT,
            StartMethod::Patch => Method::PATCH,
        }
    }
}

/// A `body` that is present is the body, `null` included (`Option`'s own `Deserialize` would
/// read `null` as no body, and the request would become a GET).
fn given<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(deserializer).map(Some)
}

impl WaitForHttpJobArguments {
    /// Exactly one of `url` and `monitor`, each an HTTP URL; `headers` valid on the wire and
    /// none that only the client sets (`Host`, `Content-Length`, ...: [`check_header`]).
    /// Errors: the message for the caller (`-32602`), e.g. `give exactly one of url (start an
    /// operation) or monitor (follow one)`.
    pub fn check(&self) -> Result<(), String> {
        for (name, value) in self.headers.iter().flatten() {
            check_header(name, value)?;
        }
        if self.url.is_some() == self.monitor.is_some() {
            return Err(
                "give exactly one of url (start an operation) or monitor (follow one)".into(),
            );
        }
        for (field, given) in [("url", &self.url), ("monitor", &self.monitor)] {
            if let Some(v) = given {
                match reqwest::Url::parse(v) {
                    Ok(u) if matches!(u.scheme(), "http" | "https") => {}
                    Ok(u) => {
                        return Err(format!(
                            "{field} must be an http or https URL, not {}:",
                            u.scheme()
                        ));
                    }
                    Err(e) => return Err(format!("{field} is not a URL ({e}): {v:?}")),
                }
            }
        }
        Ok(())
    }

    /// The URL the run begins with: `monitor` when following one, else `url`.
    pub fn first_url(&self) -> &str {
        self.monitor
            .as_deref()
            .or(self.url.as_deref())
            .unwrap_or_default()
    }

    /// The method of the starting request: `method`, else POST with a body and GET without.
    pub fn start_method(&self) -> Method {
        match (self.method, &self.body) {
            (Some(m), _) => m.into(),
            (None, Some(_)) => Method::POST,
            (None, None) => Method::GET,
        }
    }

    /// The task's poll interval: `pollIntervalMs` (default and at least [`MIN_POLL_MS`]).
    pub fn poll_interval(&self) -> Duration {
        Duration::from_millis(
            self.poll_interval_ms
                .map_or(MIN_POLL_MS, |ms| ms.0)
                .max(MIN_POLL_MS),
        )
    }

    /// The headers sent with every request, in the order given.
    pub fn header_pairs(&self) -> Vec<(String, String)> {
        self.headers
            .iter()
            .flatten()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    }
}
