//! Secrets in tool arguments: the values of request headers and environment variables whose
//! names say they carry credentials (`Authorization`, `Cookie`, `GITHUB_TOKEN`, `API_KEY`, ...).
//! A tool gives the engine its arguments with these values replaced by [`REDACTED`]
//! (`TaskTool::redact_arguments`): that is what the store keeps and what the window, `/v1`,
//! search and approval questions show. The run itself gets the values as given.

use serde_json::{Map, Value};

/// What a secret value is shown as.
pub const REDACTED: &str = "[redacted]";

/// True when a header or variable named `name` carries a credential: `Authorization`,
/// `Proxy-Authorization`, `Cookie`, or a name that contains (case-insensitively) `token`,
/// `secret`, `password`, `passwd`, `credential`, `api-key`/`api_key`/`apikey`, `auth` or
/// `session`, or ends in `key`/`_KEY`/`-key`.
pub fn is_secret_name(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    matches!(
        n.as_str(),
        "authorization" | "proxy-authorization" | "cookie"
    ) || [
        "token",
        "secret",
        "password",
        "passwd",
        "credential",
        "api-key",
        "api_key",
        "apikey",
        "auth",
        "session",
    ]
    .iter()
    .any(|w| n.contains(w))
        || n.ends_with("key")
}

/// `map` with the values of secret-named members replaced by [`REDACTED`], or `None` when it
/// has none.
pub fn redact_map(map: &Map<String, Value>) -> Option<Map<String, Value>> {
    if !map.keys().any(|k| is_secret_name(k)) {
        return None;
    }
    Some(
        map.iter()
            .map(|(k, v)| {
                let shown = if is_secret_name(k) {
                    Value::String(REDACTED.into())
                } else {
                    v.clone()
                };
                (k.clone(), shown)
            })
            .collect(),
    )
}

/// `arguments` with the object member `field` (e.g. `headers`, `env`) redacted by
/// [`redact_map`], or `None` when it holds no secret.
pub fn redact_field(arguments: &Value, field: &str) -> Option<Value> {
    let redacted = redact_map(arguments.get(field)?.as_object()?)?;
    let mut shown = arguments.clone();
    shown[field] = Value::Object(redacted);
    Some(shown)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn credentials_are_named_as_such() {
        for secret in [
            "Authorization",
            "cookie",
            "X-Api-Key",
            "GITHUB_TOKEN",
            "AWS_SECRET_ACCESS_KEY",
            "DB_PASSWORD",
            "OPENAI_API_KEY",
            "X-Auth-Token",
            "ssh_key",
        ] {
            assert!(is_secret_name(secret), "{secret}");
        }
        for plain in ["Accept", "Content-Type", "PATH", "RUST_LOG", "HOME", "LANG"] {
            assert!(!is_secret_name(plain), "{plain}");
        }
    }

    #[test]
    fn only_secret_values_are_replaced() {
        let args = json!({"url": "http://x", "headers": {"Authorization": "Bearer s3cr3t", "Accept": "application/json"}});
        let shown = redact_field(&args, "headers").unwrap();
        assert_eq!(shown["headers"]["Authorization"], REDACTED);
        assert_eq!(shown["headers"]["Accept"], "application/json");
        assert_eq!(shown["url"], "http://x");
        assert_eq!(
            redact_field(&json!({"headers": {"Accept": "*/*"}}), "headers"),
            None
        );
        assert_eq!(redact_field(&json!({"url": "http://x"}), "headers"), None);
    }
}
