//! Caps on what agents and runners store in a task, applied by the engine so that every
//! adapter (MCP, `/v1`, external job reports) and every tool gets the same ones:
//!
//! | what | cap | over it |
//! |---|---|---|
//! | a statusMessage (set by a tool, an external job's report, a progress message) | [`STATUS_MESSAGE_MAX_BYTES`] (4 KiB) | cut, ending with `… [truncated 1.9 MiB]` ([`truncate`]) |
//! | an input request's message (`request_approval`'s `message`, an external job's question) | [`INPUT_MESSAGE_MAX_BYTES`] (64 KiB) | refused ([`check_input_message`]) |
//! | a call's arguments, as JSON text | [`ARGUMENTS_MAX_BYTES`] (256 KiB) | refused ([`check_arguments_size`]) |
//! | one answer to an input request, as JSON text | [`ANSWER_MAX_BYTES`] (64 KiB) | refused ([`check_answer_size`]) |
//! | a hosted task's input request, `_meta`, or failure (JSON text) | [`HOSTED_VALUE_MAX_BYTES`] (64 KiB) | refused ([`check_value_size`]) |
//! | a hosted task's owner name | [`OWNER_MAX_BYTES`] (1 KiB) | refused ([`check_value_size`]) |
//! | an audit entry's `arguments` and `editedArguments`, as JSON text | [`ARGUMENTS_MAX_BYTES`] (256 KiB) | longest strings cut ([`cut_to_size`]); the entry's digest is of the whole call |
//!
//! A status message is cut rather than refused: it is a progress line, and a runner should not
//! fail over a long one. So is the copy of a call the audit log keeps: a hook's event is judged
//! however large it is (up to the 4 MiB a `/v1` body may be), and its record must not keep
//! megabytes for a year. What a human approves or a tool runs on is never cut: it is refused,
//! and the caller can shorten it.

use serde_json::Value;

use super::EngineError;

/// The most bytes (UTF-8) a task's statusMessage, or a progress message, keeps: 4 KiB.
pub const STATUS_MESSAGE_MAX_BYTES: usize = 4 * 1024;

/// The most bytes (UTF-8) of an input request's message: 64 KiB.
pub const INPUT_MESSAGE_MAX_BYTES: usize = 64 * 1024;

/// The most bytes of a call's arguments, serialized as compact JSON: 256 KiB.
pub const ARGUMENTS_MAX_BYTES: usize = 256 * 1024;

/// The most bytes of one answer to an input request, serialized as compact JSON: 64 KiB.
pub const ANSWER_MAX_BYTES: usize = 64 * 1024;

/// The most bytes of one value a host stores with a hosted task, serialized as compact JSON:
/// an input request, the task's `_meta`, a failure's error object: 64 KiB.
pub const HOSTED_VALUE_MAX_BYTES: usize = 64 * 1024;

/// The most bytes (UTF-8) of a hosted task's owner name: 1 KiB.
pub const OWNER_MAX_BYTES: usize = 1024;

/// Bytes [`truncate`] keeps free for its marker (`… [truncated 1023.9 KiB]` is 26).
const MARKER_ROOM: usize = 32;

/// `text` when it has at most `max` bytes; otherwise its start, cut at a character boundary,
/// followed by a marker that says how much was cut (`… [truncated 1.9 MiB]`), `max` bytes in
/// all (`max` should leave room for the marker: 64 bytes or more).
pub fn truncate(text: String, max: usize) -> String {
    if text.len() <= max {
        return text;
    }
    let mut keep = max.saturating_sub(MARKER_ROOM);
    while !text.is_char_boundary(keep) {
        keep -= 1;
    }
    let cut = text.len() - keep;
    let mut out = text;
    out.truncate(keep);
    out.push_str(&format!("… [truncated {}]", human_bytes(cut)));
    out
}

/// A byte count for people: `512 bytes`, `12.5 KiB`, `1.9 MiB`, `2.0 GiB`.
pub fn human_bytes(n: usize) -> String {
    const KIB: f64 = 1024.0;
    let n_f = n as f64;
    if n < 1024 {
        format!("{n} bytes")
    } else if n_f < KIB * KIB {
        format!("{:.1} KiB", n_f / KIB)
    } else if n_f < KIB * KIB * KIB {
        format!("{:.1} MiB", n_f / (KIB * KIB))
    } else {
        format!("{:.1} GiB", n_f / (KIB * KIB * KIB))
    }
}

/// Checks an input request's message (`what` names it in the error, e.g.
/// `request_approval's message`) against [`INPUT_MESSAGE_MAX_BYTES`].
/// Errors: a message for the caller, e.g. `request_approval's message is 70.0 KiB; at most
/// 64 KiB are allowed`.
pub fn check_input_message(what: &str, message: &str) -> Result<(), String> {
    if message.len() <= INPUT_MESSAGE_MAX_BYTES {
        return Ok(());
    }
    Err(format!(
        "{what} is {}; at most {} KiB are allowed",
        human_bytes(message.len()),
        INPUT_MESSAGE_MAX_BYTES / 1024
    ))
}

/// The size of `value` as compact JSON text, in bytes, counted without building the text.
pub fn json_size(value: &Value) -> usize {
    /// Counts the bytes written to it.
    struct Counter(usize);
    impl std::io::Write for Counter {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut counter = Counter(0);
    // Writing a `Value` to a counter cannot fail.
    let _ = serde_json::to_writer(&mut counter, value);
    counter.0
}

/// The shortest a string is cut to by [`cut_to_size`], in bytes (its marker included).
pub const SHORTEST_CUT: usize = 64;

/// `value` when it is at most `max` bytes as compact JSON text; otherwise the same shape with
/// its longest strings cut ([`truncate`]: each ends `… [truncated 1.9 MiB]`) to the greatest
/// length at which the whole fits. When even strings cut to [`SHORTEST_CUT`] bytes leave it
/// over `max` (a value of very many members), the string `… [truncated 4.0 MiB]` instead,
/// giving the size of the whole. Object keys are kept as they are.
pub fn cut_to_size(value: Value, max: usize) -> Value {
    let size = json_size(&value);
    if size <= max {
        return value;
    }
    let mut lengths = Vec::new();
    string_lengths(&value, &mut lengths);
    lengths.sort_unstable_by(|a, b| b.cmp(a));
    // About how many bytes cutting every string to `keep` bytes saves (escapes aside: the
    // result is measured again below).
    let saved = |keep: usize| -> usize {
        let longer = lengths.iter().take_while(|&&l| l > keep);
        longer.map(|l| l - keep).sum()
    };
    let (mut low, mut high) = (SHORTEST_CUT, lengths.first().copied().unwrap_or(0));
    while low < high {
        let mid = low + (high - low).div_ceil(2);
        match size - saved(mid) <= max {
            true => low = mid,
            false => high = mid - 1,
        }
    }
    let mut keep = low;
    loop {
        let cut = cut_strings(&value, keep);
        if json_size(&cut) <= max {
            return cut;
        }
        if keep == SHORTEST_CUT {
            return Value::String(format!("… [truncated {}]", human_bytes(size)));
        }
        keep = (keep / 2).max(SHORTEST_CUT);
    }
}

/// Pushes the byte length of every string in `value` (not object keys) onto `out`.
fn string_lengths(value: &Value, out: &mut Vec<usize>) {
    match value {
        Value::String(s) => out.push(s.len()),
        Value::Array(items) => items.iter().for_each(|v| string_lengths(v, out)),
        Value::Object(members) => members.values().for_each(|v| string_lengths(v, out)),
        _ => {}
    }
}

/// `value` with every string longer than `keep` bytes [`truncate`]d to `keep`.
fn cut_strings(value: &Value, keep: usize) -> Value {
    match value {
        Value::String(s) if s.len() > keep => Value::String(truncate(s.clone(), keep)),
        Value::Array(items) => Value::Array(items.iter().map(|v| cut_strings(v, keep)).collect()),
        Value::Object(members) => Value::Object(
            members
                .iter()
                .map(|(k, v)| (k.clone(), cut_strings(v, keep)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Checks the size of `tool`'s `arguments` as compact JSON text against
/// [`ARGUMENTS_MAX_BYTES`].
/// Errors: [`EngineError::TooLarge`] saying the size and the cap.
pub fn check_arguments_size(tool: &str, arguments: &Value) -> Result<(), EngineError> {
    let size = json_size(arguments);
    if size <= ARGUMENTS_MAX_BYTES {
        return Ok(());
    }
    Err(EngineError::TooLarge {
        message: format!(
            "arguments for {tool} are {} as JSON; at most {} KiB are allowed (send less, e.g. \
             a file's path instead of its content)",
            human_bytes(size),
            ARGUMENTS_MAX_BYTES / 1024
        ),
        limit: ARGUMENTS_MAX_BYTES,
    })
}

/// Checks the answer to input request `key` as compact JSON text against
/// [`ANSWER_MAX_BYTES`] (a form's answer is a few fields; a larger one is refused whole).
/// Errors: [`EngineError::TooLarge`] saying the size and the cap.
pub fn check_answer_size(key: &str, answer: &Value) -> Result<(), EngineError> {
    let size = json_size(answer);
    if size <= ANSWER_MAX_BYTES {
        return Ok(());
    }
    Err(EngineError::TooLarge {
        message: format!(
            "the answer to {key:?} is {size} bytes as JSON; at most {ANSWER_MAX_BYTES} bytes (64 KiB) are allowed"
        ),
        limit: ANSWER_MAX_BYTES,
    })
}

/// Checks `value` (`what` names it in the error, e.g. `the input request "name"`) as compact
/// JSON text against `max` bytes; a string counts its UTF-8 bytes, without quotes.
/// Errors: [`EngineError::TooLarge`] saying the size and the cap.
pub fn check_value_size(what: &str, value: &Value, max: usize) -> Result<(), EngineError> {
    let size = match value {
        Value::String(s) => s.len(),
        other => json_size(other),
    };
    if size <= max {
        return Ok(());
    }
    Err(EngineError::TooLarge {
        message: format!(
            "{what} is {size} bytes; at most {max} bytes ({}) are allowed",
            human_bytes(max)
        ),
        limit: max,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncate_keeps_short_text_and_cuts_long_text_at_a_character_with_a_marker() {
        assert_eq!(truncate("short".into(), 64), "short");
        let long = "é".repeat(3000); // 6,000 bytes
        let cut = truncate(long, STATUS_MESSAGE_MAX_BYTES);
        assert!(cut.len() <= STATUS_MESSAGE_MAX_BYTES, "{}", cut.len());
        assert!(cut.starts_with("éé"));
        assert!(cut.ends_with("… [truncated 1.9 KiB]"), "{cut}");
        let huge = "x".repeat(2 * 1024 * 1024);
        let cut = truncate(huge, STATUS_MESSAGE_MAX_BYTES);
        assert!(cut.ends_with("x… [truncated 2.0 MiB]"), "{}", &cut[4000..]);
        assert!(cut.len() <= STATUS_MESSAGE_MAX_BYTES);
    }

    #[test]
    fn values_over_the_cap_keep_their_shape_with_their_longest_strings_cut() {
        use serde_json::json;
        let small = json!({"command": "ls", "n": 3});
        assert_eq!(cut_to_size(small.clone(), 1024), small);
        // One huge string and several short ones: only the huge one is cut, to what fits.
        let big = json!({"content": "x".repeat(1 << 20), "file_path": "/etc/a", "n": [1, 2]});
        let cut = cut_to_size(big, 4096);
        let size = json_size(&cut);
        assert!((4000..=4096).contains(&size), "{size}");
        assert_eq!(cut["file_path"], "/etc/a");
        assert_eq!(cut["n"], json!([1, 2]));
        let content = cut["content"].as_str().unwrap();
        assert!(
            content.ends_with("… [truncated 1020.1 KiB]"),
            "{}",
            &content[3900..]
        );
        // Strings that need escapes still end up under the cap.
        let quotes = json!({"a": "\"".repeat(100_000), "b": "\n".repeat(100_000)});
        assert!(json_size(&cut_to_size(quotes, 8192)) <= 8192);
        // Too many members to fit even cut: a marker giving the whole size.
        let many = json!((0..10_000).map(|i| format!("item {i}")).collect::<Vec<_>>());
        assert_eq!(cut_to_size(many, 1024), json!("… [truncated 116.1 KiB]"));
    }

    #[test]
    fn sizes_read_as_people_say_them() {
        assert_eq!(human_bytes(17), "17 bytes");
        assert_eq!(human_bytes(1536), "1.5 KiB");
        assert_eq!(human_bytes(1_992_294), "1.9 MiB");
        assert_eq!(human_bytes(3 << 30), "3.0 GiB");
    }

    #[test]
    fn input_messages_and_arguments_over_their_caps_are_refused() {
        assert!(check_input_message("m", &"a".repeat(INPUT_MESSAGE_MAX_BYTES)).is_ok());
        let e = check_input_message("m", &"a".repeat(INPUT_MESSAGE_MAX_BYTES + 1)).unwrap_err();
        assert_eq!(e, "m is 64.0 KiB; at most 64 KiB are allowed");
        // `{"b":"..."}` is 8 bytes more than the string.
        let fits = serde_json::json!({"b": "x".repeat(ARGUMENTS_MAX_BYTES - 8)});
        assert!(check_arguments_size("t", &fits).is_ok());
        let over = serde_json::json!({"b": "x".repeat(ARGUMENTS_MAX_BYTES - 7)});
        let e = check_arguments_size("t", &over).unwrap_err().to_string();
        assert!(
            e.starts_with("arguments for t are 256.0 KiB as JSON; at most 256 KiB are allowed"),
            "{e}"
        );
    }

    #[test]
    fn values_over_their_cap_are_refused_with_the_cap() {
        let name = serde_json::json!("é".repeat(512)); // 1,024 bytes
        assert!(check_value_size("the owner", &name, OWNER_MAX_BYTES).is_ok());
        let over = serde_json::json!("é".repeat(513));
        match check_value_size("the owner", &over, OWNER_MAX_BYTES) {
            Err(EngineError::TooLarge { message, limit }) => {
                assert_eq!(limit, OWNER_MAX_BYTES);
                assert_eq!(
                    message,
                    "the owner is 1026 bytes; at most 1024 bytes (1.0 KiB) are allowed"
                );
            }
            other => panic!("{other:?}"),
        }
        let meta = serde_json::json!({"k": "x".repeat(HOSTED_VALUE_MAX_BYTES)});
        assert!(check_value_size("_meta", &meta, HOSTED_VALUE_MAX_BYTES).is_err());
    }
}
