//! The `Idempotency-Key` request header of `POST /v1/jobs` (IETF httpapi
//! draft-ietf-httpapi-idempotency-key-header): what a valid key is. What the server does with
//! one is the engine's ([`Engine::create_task_once`](taskdeck_engine::Engine::create_task_once)).
//!
//! A key is 1 to [`MAX_KEY_LEN`] visible ASCII characters (`!` to `~`), sent bare
//! (`Idempotency-Key: 8e03978e-40d5-43e8-bc93-6894a57f9324`) or as the draft's structured-field
//! string (`Idempotency-Key: "8e03978e-..."`, with RFC 8941's `\"` and `\\` escapes); both spell
//! the same key. A
//! random UUID per operation, reused for its retries, is the intended use.

use axum::http::HeaderMap;

/// The header's name.
pub const HEADER: &str = "idempotency-key";

/// The longest key, in characters (bytes: they are ASCII).
pub const MAX_KEY_LEN: usize = 255;

/// The key `headers` carry: `Ok(None)` without the header.
/// Errors: what is wrong with it, for a 400 problem document (more than one header, empty,
/// too long, a character that is not visible ASCII).
pub fn from_headers(headers: &HeaderMap) -> Result<Option<String>, String> {
    let mut values = headers.get_all(HEADER).iter();
    let Some(value) = values.next() else {
        return Ok(None);
    };
    if values.next().is_some() {
        return Err("give one Idempotency-Key header, not several".into());
    }
    let bad = |why: &str| {
        format!(
            "Idempotency-Key {why}: a key is 1 to {MAX_KEY_LEN} visible ASCII characters, bare or \"quoted\""
        )
    };
    let text = value
        .to_str()
        .map_err(|_| bad("has a character that is not visible ASCII"))?;
    let key = match text.strip_prefix('"') {
        Some(rest) => sf_string(rest).ok_or_else(|| bad("is not a well-formed quoted string"))?,
        None => text.to_string(),
    };
    if key.is_empty() {
        return Err(bad("is empty"));
    }
    if key.len() > MAX_KEY_LEN {
        return Err(bad(&format!("is {} characters long", key.len())));
    }
    if !key.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(bad("has a character that is not visible ASCII"));
    }
    Ok(Some(key))
}

/// The content of a structured-field string (RFC 8941 §3.3.3) whose opening quote is already
/// consumed: `\"` and `\\` are the escapes, the closing quote ends it; `None` for any other
/// backslash, a quote inside, or no closing quote.
fn sf_string(rest: &str) -> Option<String> {
    let mut out = String::with_capacity(rest.len());
    let mut chars = rest.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next()? {
                e @ ('"' | '\\') => out.push(e),
                _ => return None,
            },
            '"' => return chars.next().is_none().then_some(out),
            c => out.push(c),
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;

    use super::*;

    fn key(values: &[&[u8]]) -> Result<Option<String>, String> {
        let mut headers = HeaderMap::new();
        for v in values {
            headers.append(HEADER, HeaderValue::from_bytes(v).unwrap());
        }
        from_headers(&headers)
    }

    #[test]
    fn keys_are_visible_ascii_bare_or_quoted() {
        assert_eq!(key(&[]), Ok(None));
        assert_eq!(key(&[b"abc-123"]), Ok(Some("abc-123".into())));
        assert_eq!(key(&[b"\"abc-123\""]), Ok(Some("abc-123".into())));
        // RFC 8941 escapes: `\"` and `\\` inside a quoted key.
        assert_eq!(key(&[b"\"a\\\"b\""]), Ok(Some("a\"b".into())));
        assert_eq!(key(&[b"\"a\\\\b\""]), Ok(Some("a\\b".into())));
        let longest = "k".repeat(MAX_KEY_LEN);
        assert_eq!(key(&[longest.as_bytes()]), Ok(Some(longest.clone())));
        for bad in [
            &b""[..],
            b"\"\"",
            b"\"abc",
            b"\"a\\xb\"",
            b"\"a\"b\"",
            b"a b",
            b"tab\there",
            b"caf\xe9",
            "k".repeat(MAX_KEY_LEN + 1).as_bytes(),
        ] {
            let e = key(&[bad]).unwrap_err();
            assert!(e.starts_with("Idempotency-Key "), "{bad:?}: {e}");
        }
        assert!(
            key(&[b"a", b"b"])
                .unwrap_err()
                .contains("one Idempotency-Key")
        );
    }
}
