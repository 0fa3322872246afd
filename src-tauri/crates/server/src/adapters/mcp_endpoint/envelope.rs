//! JSON-RPC 2.0 envelope checks of a POSTed `/mcp` body. rmcp answers a body it cannot take as
//! a client message with a bare HTTP `415`; the endpoint answers the JSON-RPC error instead
//! (JSON-RPC 2.0 §5.1): `-32700` for a body that is not JSON, `-32600` for one that is not a
//! JSON-RPC 2.0 message, `-32602` for a known method whose params have the wrong shape. An
//! object member given twice (which RFC 8259 §4 leaves to each parser, and rmcp's typed parse
//! refuses while a generic one keeps the last) is refused by name: `-32600` in the envelope,
//! `-32602` in `params`.

use axum::{http::StatusCode, response::Response};
use rmcp::model::{ClientJsonRpcMessage, ClientRequest};
use serde::de::{DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::{Value, value::RawValue};

use super::responses::{error_response, null_id};
use crate::adapters::wire::{INVALID_PARAMS, INVALID_REQUEST, PARSE_ERROR};

/// Checks that `bytes` is one JSON-RPC 2.0 message rmcp can take. `Err` is the rejection to
/// send: HTTP 400 with a JSON-RPC error body echoing the message's id when it is a string or an
/// integer (else `null`). Errors: `-32700` not JSON; `-32600` not an object with
/// `jsonrpc: "2.0"` and a string `method` (or a `result`/`error`), a string or `i64` integer `id`
/// (rmcp's id type; MCP: never null) and object `params`; `-32602` params rmcp cannot read for a method it knows.
// The `Err` is the response to send; it is built only on the rejection path.
#[allow(clippy::result_large_err)]
pub(crate) fn check_envelope(bytes: &[u8]) -> Result<(), Response> {
    let value: Value = match serde_json::from_slice(bytes) {
        Ok(v) => v,
        Err(e) => {
            return Err(error_response(
                StatusCode::BAD_REQUEST,
                &null_id(),
                PARSE_ERROR,
                &format!("Parse error: {e}"),
                None,
            ));
        }
    };
    let id = value
        .get("id")
        .filter(|id| id.is_string() || id.is_i64())
        .and_then(|id| RawValue::from_string(id.to_string()).ok())
        .unwrap_or_else(null_id);
    let obj = value.as_object();
    let valid = obj.is_some_and(|o| {
        o.get("jsonrpc").and_then(Value::as_str) == Some("2.0")
            && (o.contains_key("method") && o["method"].is_string()
                || o.contains_key("result")
                || o.contains_key("error"))
            && o.get("id").is_none_or(|id| id.is_string() || id.is_i64())
            && o.get("params").is_none_or(Value::is_object)
            // One kind of message: a request or notification, a result, or an error.
            && [o.contains_key("method"), o.contains_key("result"), o.contains_key("error")]
                .iter()
                .filter(|&&has| has)
                .count()
                == 1
    });
    if !valid {
        let message = match value.is_array() {
            true => {
                "Invalid Request: batches (JSON arrays) are not supported; send one JSON-RPC 2.0 object per request"
            }
            false => {
                "Invalid Request: expected one JSON-RPC 2.0 object with a string method (or a result, or an error: one of the three), an optional object params and a string or integer id"
            }
        };
        return Err(error_response(
            StatusCode::BAD_REQUEST,
            &id,
            INVALID_REQUEST,
            message,
            None,
        ));
    }
    if let Some(member) = first_duplicate(bytes) {
        let (code, what) = match member.starts_with("/params/") {
            true => (INVALID_PARAMS, "Invalid params"),
            false => (INVALID_REQUEST, "Invalid Request"),
        };
        return Err(error_response(
            StatusCode::BAD_REQUEST,
            &id,
            code,
            &format!(
                "{what}: the member {member} is given twice; give each member of an object once"
            ),
            None,
        ));
    }
    let method = value
        .get("method")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    match serde_json::from_value::<ClientJsonRpcMessage>(value) {
        Err(e) => Err(error_response(
            StatusCode::BAD_REQUEST,
            &id,
            INVALID_PARAMS,
            &format!("Invalid params: {e}"),
            None,
        )),
        // rmcp falls back to a custom request when a known method's params do not fit its type.
        Ok(ClientJsonRpcMessage::Request(r))
            if matches!(r.request, ClientRequest::CustomRequest(_)) && is_known_method(&method) =>
        {
            Err(error_response(
                StatusCode::BAD_REQUEST,
                &id,
                INVALID_PARAMS,
                &format!("Invalid params for {method}"),
                None,
            ))
        }
        Ok(_) => Ok(()),
    }
}

/// Methods rmcp has a typed request for, whose params not fitting that type is `-32602` rather
/// than an unknown method.
fn is_known_method(method: &str) -> bool {
    matches!(
        method,
        "server/discover"
            | "tools/call"
            | "tools/list"
            | "tasks/get"
            | "tasks/update"
            | "tasks/cancel"
            | "subscriptions/listen"
            | "prompts/get"
            | "resources/read"
    )
}

/// The JSON Pointer (RFC 6901) of the first object member that `bytes`, a JSON text, gives
/// twice in one object (`/params/name`), if any; `None` also for text that is not JSON.
fn first_duplicate(bytes: &[u8]) -> Option<String> {
    let mut found = None;
    let mut reader = serde_json::Deserializer::from_slice(bytes);
    Scan {
        path: String::new(),
        found: &mut found,
    }
    .deserialize(&mut reader)
    .ok()?;
    found
}

/// One value of [`first_duplicate`]'s walk, at `path`.
struct Scan<'a> {
    path: String,
    found: &'a mut Option<String>,
}

impl<'de> DeserializeSeed<'de> for Scan<'_> {
    type Value = ();

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Scan<'_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("JSON")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let found = self.found;
        for i in 0.. {
            let path = format!("{}/{i}", self.path);
            if seq
                .next_element_seed(Scan {
                    path,
                    found: &mut *found,
                })?
                .is_none()
            {
                break;
            }
        }
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let found = self.found;
        let mut seen = std::collections::HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            let path = format!(
                "{}/{}",
                self.path,
                key.replace('~', "~0").replace('/', "~1")
            );
            if !seen.insert(key) && found.is_none() {
                *found = Some(path.clone());
            }
            map.next_value_seed(Scan {
                path,
                found: &mut *found,
            })?;
        }
        Ok(())
    }
}
