//! The digest an approval is bound to: which call exactly it lets through. Two pending calls
//! with the same digest are the same call (the inbox groups them); an edited call has a digest
//! of its own.

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

/// `"sha256:"` and the lowercase hex SHA-256 of the canonical JSON ([`canonical_json`]) of
/// `{"arguments", "server", "tool"}`.
pub fn digest(server: &str, tool: &str, arguments: &Value) -> String {
    let call = json!({"server": server, "tool": tool, "arguments": arguments});
    format!(
        "sha256:{}",
        hex::encode(Sha256::digest(canonical_json(&call).as_bytes()))
    )
}

/// `value` as JSON text with object keys sorted (by their UTF-8 bytes) at every depth and no
/// insignificant whitespace, so equal values always give equal text (this build's serde_json
/// keeps insertion order, so `to_string` alone would not).
pub fn canonical_json(value: &Value) -> String {
    let mut out = String::new();
    write_canonical(value, &mut out);
    out
}

fn write_canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
            out.push('{');
            for (i, (key, v)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                write_canonical(v, out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(v, out);
            }
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digest_is_canonical() {
        let a: Value = serde_json::from_str(r#"{"b": 1, "a": {"y": [1, 2], "x": null}}"#).unwrap();
        let b: Value = serde_json::from_str(r#"{"a":{"x":null,"y":[1,2]},"b":1}"#).unwrap();
        assert_eq!(digest("fs", "write", &a), digest("fs", "write", &b));
        assert_ne!(digest("fs", "write", &a), digest("fs", "read", &a));
        let text =
            canonical_json(&json!({"server": "s", "tool": "t", "arguments": {"b": 1, "a": 2}}));
        assert_eq!(
            text, r#"{"arguments":{"a":2,"b":1},"server":"s","tool":"t"}"#,
            "keys sorted, no spaces"
        );
        let d = digest("s", "t", &json!({}));
        assert!(d.starts_with("sha256:") && d.len() == 7 + 64, "{d}");
    }
}
