//! The digest an approval is bound to: which call exactly it lets through. Two pending calls
//! with the same digest are the same call (the inbox groups them); an edited call has a digest
//! of its own.

use serde_json::{Value, json};
use sha2::{Digest, Sha256};
pub use taskdeck_engine::audit::canonical_json;

/// `"sha256:"` and the lowercase hex SHA-256 of the canonical JSON ([`canonical_json`]: keys
/// sorted at every depth, no whitespace; the audit log hashes the same way) of
/// `{"arguments", "server", "tool"}`.
pub fn digest(server: &str, tool: &str, arguments: &Value) -> String {
    let call = json!({"server": server, "tool": tool, "arguments": arguments});
    format!(
        "sha256:{}",
        hex::encode(Sha256::digest(canonical_json(&call).as_bytes()))
    )
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
