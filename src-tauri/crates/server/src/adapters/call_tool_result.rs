//! The check of a CallToolResult a runner reports (`POST /v1/jobs/{taskId}/report`): the shape
//! the API document gives it ([`job_schemas::call_tool_result`]), whose `image` and `audio`
//! blocks' `data` is base64 ([`job_schemas::BASE64_PATTERN`]).
//!
//! The TypeScript SDK parses a block's `data` with `atob` and refuses the whole result when
//! that throws, so a block it cannot decode would leave its agents unable to read the task's
//! result at all. What is taken is standard base64 with its padding optional, which `atob`
//! decodes; a bad block is named before the schema's general refusal.

use std::sync::LazyLock;

use serde_json::Value;

use super::job_schemas;

/// Checks `result` (a report's `result` member).
///
/// Errors: why it is not a CallToolResult an agent can read, with the JSON pointer of the
/// offending member (`result/content/1/data`) and a long value quoted by its start only
/// (`taskdeck_engine::schema_error_message`), for a 400.
pub fn check(result: &Value) -> Result<(), String> {
    static SCHEMA: LazyLock<jsonschema::Validator> = LazyLock::new(|| {
        jsonschema::validator_for(&job_schemas::call_tool_result())
            .expect("the CallToolResult schema compiles")
    });
    // A bad block's data is named first: the schema's refusal of it would be one of `oneOf`.
    let blocks = result["content"].as_array().map_or(&[][..], Vec::as_slice);
    for (i, block) in blocks.iter().enumerate() {
        if let Some(data) = block["data"].as_str()
            && let Err(why) = base64_problem(data)
        {
            return Err(format!(
                "at result/content/{i}/data: an {} block's data must be base64 (RFC 4648): {why}",
                block["type"].as_str().unwrap_or("image")
            ));
        }
    }
    if let Some(e) = SCHEMA.iter_errors(result).next() {
        return Err(format!(
            "result must be a CallToolResult {{content: [content blocks such as {{\"type\": \"text\", \"text\": ...}}], structuredContent?: object, isError?: boolean}}: at result{}: {}",
            e.instance_path(),
            taskdeck_engine::schema_error_message(&e)
        ));
    }
    Ok(())
}

/// Whether `data` is base64 as [`job_schemas::BASE64_PATTERN`] says: the alphabet of RFC 4648
/// §4, in groups of four, the last one padded with `=` or not, and nothing else (no
/// whitespace).
///
/// Errors: what is wrong, in words.
fn base64_problem(data: &str) -> Result<(), String> {
    let mut length = 0usize;
    let mut padding = 0usize;
    for (at, byte) in data.bytes().enumerate() {
        match byte {
            b'=' => padding += 1,
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'+' | b'/' if padding == 0 => {}
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'+' | b'/' => {
                return Err(format!("a character after the padding, at byte {at}"));
            }
            _ => {
                let c = data[at..].chars().next().unwrap_or('?');
                return Err(format!("{c:?} at byte {at} is not a base64 character"));
            }
        }
        length += 1;
    }
    if padding > 2 || (padding > 0 && !length.is_multiple_of(4)) {
        return Err("the padding ('=') is wrong".into());
    }
    if (length - padding) % 4 == 1 {
        return Err(format!(
            "{} characters cannot be base64: one is left over",
            length - padding
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn base64_is_what_the_schema_says_and_atob_takes() {
        let pattern = regex::Regex::new(job_schemas::BASE64_PATTERN).unwrap();
        // Node 20's `atob` takes all of these, and so do the check and the pattern.
        for ok in ["", "aGVsbG8=", "aGVsbG8", "YQ==", "YQ", "+/+/"] {
            assert_eq!(base64_problem(ok), Ok(()), "{ok:?}");
            assert!(pattern.is_match(ok), "{ok:?}");
        }
        // `atob` throws on these; whitespace, which it skips, is refused here too.
        for bad in [
            "not base64!",
            "aGVsb",
            "YQ===",
            "YQ=a",
            "Y=Q=",
            "aGVsbG8-",
            "aé",
            "aGVs\nbG8=",
            " YQ==",
        ] {
            assert!(base64_problem(bad).is_err(), "{bad:?}");
            assert!(!pattern.is_match(bad), "{bad:?}");
        }
    }

    #[test]
    fn a_refusal_names_the_block_and_quotes_little() {
        let bad = json!({"content": [{"type": "text", "text": "x"},
            {"type": "audio", "data": "YQ===", "mimeType": "audio/wav"}]});
        let why = check(&bad).unwrap_err();
        assert!(
            why.starts_with("at result/content/1/data: an audio block"),
            "{why}"
        );
        let big = json!({"content": [{"type": "image", "data": "QUFB".repeat(100_000),
            "mimeType": "image/png", "extra": 1}]});
        assert!(check(&big).unwrap_err().len() < 1000);
        assert_eq!(
            check(&json!({"content": [{"type": "image", "data": "YQ", "mimeType": "image/png"}]})),
            Ok(())
        );
    }
}
