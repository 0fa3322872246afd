//! Secrets in tool arguments: the values of members whose names say they carry credentials
//! (`Authorization`, `Cookie`, `GITHUB_TOKEN`, `API_KEY`, ...) and the passwords of URLs
//! (`postgres://app:hunter2@db/prod`), at any depth of the arguments. A tool gives the engine
//! its arguments with the former replaced by [`REDACTED`] and the latter by `****`
//! (`TaskTool::redact_arguments`): that is what the store keeps and what the window, `/v1`,
//! search, the audit log and approval questions show. The run itself gets the values as given.

use serde_json::{Map, Value};

/// What a secret value is shown as.
pub const REDACTED: &str = "[redacted]";

/// True when a header or variable named `name` carries a credential: `Authorization`,
/// `Proxy-Authorization`, or a name that contains (case-insensitively) `token`, `secret`,
/// `pass` (`PASSWORD`, `PGPASS`, `GPG_PASSPHRASE`), `credential`, `auth`, `session`, `jwt`,
/// `dsn`, `cookie` or `private`, or ends in `key` or `pwd` (but not the working directory
/// variables `PWD` and `OLDPWD`).
pub fn is_secret_name(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    if matches!(n.as_str(), "pwd" | "oldpwd") {
        return false;
    }
    matches!(n.as_str(), "authorization" | "proxy-authorization")
        || [
            "token",
            "secret",
            "pass",
            "credential",
            "auth",
            "session",
            "jwt",
            "dsn",
            "cookie",
            "private",
        ]
        .iter()
        .any(|w| n.contains(w))
        || n.ends_with("key")
        || n.ends_with("pwd")
}

/// `value` with the password of every `scheme://user:password@host` in it replaced by `****`
/// (`DATABASE_URL`, `REDIS_URL`, a webhook URL); `None` when it holds none.
pub fn mask_url_passwords(value: &str) -> Option<String> {
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    let mut masked = false;
    while let Some(at) = rest.find("://") {
        let (head, tail) = rest.split_at(at + 3);
        out.push_str(head);
        // The authority ends at the first '/', '?', '#' or whitespace.
        let end = tail
            .find(|c: char| matches!(c, '/' | '?' | '#') || c.is_whitespace())
            .unwrap_or(tail.len());
        let authority = &tail[..end];
        let userinfo = authority
            .rfind('@')
            .and_then(|at_sign| authority[..at_sign].find(':').map(|colon| (colon, at_sign)));
        match userinfo {
            Some((colon, at_sign)) if colon + 1 < at_sign => {
                out.push_str(&authority[..=colon]);
                out.push_str("****");
                out.push_str(&authority[at_sign..]);
                masked = true;
            }
            _ => out.push_str(authority),
        }
        rest = &tail[end..];
    }
    out.push_str(rest);
    masked.then_some(out)
}

/// `value` as it may be stored and shown, or `None` when it holds no secret: at any depth,
/// the value of a secret-named member ([`is_secret_name`]) replaced by [`REDACTED`] (a string,
/// or an object or array, which may hold anything; numbers, booleans, null and `""` are no
/// credentials and stay), and the password of every URL in a string masked
/// ([`mask_url_passwords`]).
///
/// Arguments stored this way are themselves redacted again (`Some`): that is how a view of the
/// store tells that the run had values the store does not.
pub fn redact_value(value: &Value) -> Option<Value> {
    match value {
        Value::String(s) => mask_url_passwords(s).map(Value::String),
        Value::Array(items) => {
            let shown: Vec<Option<Value>> = items.iter().map(redact_value).collect();
            shown.iter().any(Option::is_some).then(|| {
                Value::Array(
                    shown
                        .into_iter()
                        .zip(items)
                        .map(|(shown, item)| shown.unwrap_or_else(|| item.clone()))
                        .collect(),
                )
            })
        }
        Value::Object(map) => redact_map(map).map(Value::Object),
        Value::Null | Value::Bool(_) | Value::Number(_) => None,
    }
}

/// `map` redacted as [`redact_value`] says, or `None` when it holds no secret.
pub fn redact_map(map: &Map<String, Value>) -> Option<Map<String, Value>> {
    let mut changed = false;
    let shown = map
        .iter()
        .map(|(k, v)| {
            let credential = is_secret_name(k)
                && !matches!(v, Value::Null | Value::Bool(_) | Value::Number(_))
                && v.as_str() != Some("");
            let shown = if credential {
                Some(Value::String(REDACTED.into()))
            } else {
                redact_value(v)
            };
            changed |= shown.is_some();
            (k.clone(), shown.unwrap_or_else(|| v.clone()))
        })
        .collect();
    changed.then_some(shown)
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
            "PGPASS",
            "MYSQL_PWD",
            "GPG_PASSPHRASE",
            "CI_JOB_JWT",
            "SENTRY_DSN",
            "X-Pass",
        ] {
            assert!(is_secret_name(secret), "{secret}");
        }
        for plain in [
            "Accept",
            "Content-Type",
            "PATH",
            "RUST_LOG",
            "HOME",
            "LANG",
            "PWD",
        ] {
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

    #[test]
    fn passwords_in_urls_are_masked() {
        assert_eq!(
            mask_url_passwords("postgres://app:hunter2@db:5432/prod").as_deref(),
            Some("postgres://app:****@db:5432/prod")
        );
        assert_eq!(
            mask_url_passwords("a https://u:p@x/ and redis://:pw@r:6379").as_deref(),
            Some("a https://u:****@x/ and redis://:****@r:6379")
        );
        assert_eq!(mask_url_passwords("https://user@host/x"), None);
        assert_eq!(mask_url_passwords("no url here"), None);
        let env = json!({"env": {"DATABASE_URL": "postgres://app:hunter2@db/prod", "MODE": "ci"}});
        let shown = redact_field(&env, "env").unwrap();
        assert_eq!(shown["env"]["DATABASE_URL"], "postgres://app:****@db/prod");
        assert_eq!(shown["env"]["MODE"], "ci");
    }

    #[test]
    fn secrets_are_found_at_any_depth() {
        let args = json!({
            "argv": ["psql", "postgres://app:hunter2@db/prod", "-c", "select 1"],
            "options": {"connection": {"dsn": "host=db password=x", "retries": 3}},
            "max_tokens": 512,
            "session": "",
            "name": "plain",
        });
        let shown = redact_value(&args).unwrap();
        assert_eq!(shown["argv"][1], "postgres://app:****@db/prod");
        assert_eq!(shown["argv"][3], "select 1");
        assert_eq!(shown["options"]["connection"]["dsn"], REDACTED);
        assert_eq!(shown["options"]["connection"]["retries"], 3);
        // Numbers and empty strings are no credentials, whatever their names.
        assert_eq!(shown["max_tokens"], 512);
        assert_eq!(shown["session"], "");
        assert_eq!(shown["name"], "plain");
        assert_eq!(
            redact_value(&json!({"argv": ["ls", "-l"], "max_tokens": 5})),
            None
        );
        // What was stored redacted is redacted again: a view can tell values were held back.
        assert!(redact_value(&shown).is_some());
    }
}
