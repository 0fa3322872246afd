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
//! | an audit entry's `arguments` and `editedArguments`, as JSON text | [`ARGUMENTS_MAX_BYTES`] (256 KiB) | longest strings cut, then, for very many values, the members of arrays and objects ([`cut_to_size`]); the entry's digest is of the whole call |
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
    // A unit is left once its number would read 1024.0.
    if n < 1024 {
        format!("{n} bytes")
    } else if n_f < KIB * KIB - KIB / 20.0 {
        format!("{:.1} KiB", n_f / KIB)
    } else if n_f < KIB * KIB * (KIB - 1.0 / 20.0) {
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

/// The shortest a string is cut to by [`cut_to_size`], in bytes of JSON text (its marker
/// included).
pub const SHORTEST_CUT: usize = 64;

/// What [`cut_to_size`] cuts strings to when it must also cut the members of arrays and
/// objects, in bytes of JSON text.
const CUT_WITH_MEMBERS: usize = 1024;

/// `value` when it is at most `max` bytes as compact JSON text; otherwise the same shape, cut:
/// its longest strings and object keys cut ([`truncate`]'s marker: `… [truncated 1.9 MiB]`,
/// the bytes left out) to the greatest length, counted as JSON text, at which the whole fits.
/// When even strings of [`SHORTEST_CUT`] bytes leave it over `max` (very many members), strings
/// are cut to 1 KiB and every array and object keeps its first members, as many as fit, then
/// says how many it left out (an array's last item `… [12345 more items]`, an object's last
/// member `"…": "[12345 more members]"`). Only when even one member each is too much (never
/// for `max` of a few KiB and JSON of at most 128 levels) the string `… [truncated 4.0 MiB]`,
/// the size of the whole.
pub fn cut_to_size(value: Value, max: usize) -> Value {
    let size = json_size(&value);
    if size <= max {
        return value;
    }
    let mut lengths = Vec::new();
    text_lengths(&value, &mut lengths);
    lengths.sort_unstable_by(|a, b| b.cmp(a));
    // How much cutting every string and key to `keep` bytes of JSON text saves, at least.
    let saved = |keep: usize| -> usize {
        let longer = lengths.iter().take_while(|&&l| l > keep);
        longer.map(|l| l - keep).sum()
    };
    if size - saved(SHORTEST_CUT) <= max {
        let (mut low, mut high) = (SHORTEST_CUT, lengths.first().copied().unwrap_or(0));
        while low < high {
            let mid = low + (high - low).div_ceil(2);
            match size - saved(mid) <= max {
                true => low = mid,
                false => high = mid - 1,
            }
        }
        return cut(&value, low, usize::MAX);
    }
    let mut widest = 0;
    widest_container(&value, &mut widest);
    for keep in [CUT_WITH_MEMBERS, SHORTEST_CUT] {
        let fits = |members: usize| json_size(&cut(&value, keep, members)) <= max;
        if !fits(1) {
            continue;
        }
        let (mut low, mut high) = (1, widest);
        while low < high {
            let mid = low + (high - low).div_ceil(2);
            match fits(mid) {
                true => low = mid,
                false => high = mid - 1,
            }
        }
        return cut(&value, keep, low);
    }
    Value::String(format!("… [truncated {}]", human_bytes(size)))
}

/// The bytes `c` takes in a JSON string (serde_json's escapes: `\"`, `\\`, `\n` and the
/// like, `\u001f` for the other control characters).
fn escaped_char_len(c: char) -> usize {
    match c {
        '"' | '\\' | '\n' | '\r' | '\t' | '\u{8}' | '\u{c}' => 2,
        c if (c as u32) < 0x20 => 6,
        c => c.len_utf8(),
    }
}

/// The bytes `text` takes inside a JSON string's quotes.
fn escaped_len(text: &str) -> usize {
    text.chars().map(escaped_char_len).sum()
}

/// `text` when it takes at most `keep` bytes inside a JSON string; otherwise its start, as
/// much as fits with [`truncate`]'s marker saying how many bytes (UTF-8) were left out.
fn cut_text(text: &str, keep: usize) -> String {
    if escaped_len(text) <= keep {
        return text.to_string();
    }
    let room = keep.saturating_sub(MARKER_ROOM);
    let (mut taken, mut end) = (0, 0);
    for (i, c) in text.char_indices() {
        taken += escaped_char_len(c);
        if taken > room {
            break;
        }
        end = i + c.len_utf8();
    }
    format!(
        "{}… [truncated {}]",
        &text[..end],
        human_bytes(text.len() - end)
    )
}

/// Pushes the JSON-text length of every string and object key in `value` onto `out`.
fn text_lengths(value: &Value, out: &mut Vec<usize>) {
    match value {
        Value::String(s) => out.push(escaped_len(s)),
        Value::Array(items) => items.iter().for_each(|v| text_lengths(v, out)),
        Value::Object(members) => members.iter().for_each(|(k, v)| {
            out.push(escaped_len(k));
            text_lengths(v, out)
        }),
        _ => {}
    }
}

/// Raises `widest` to the most members of an array or object in `value`.
fn widest_container(value: &Value, widest: &mut usize) {
    match value {
        Value::Array(items) => {
            *widest = (*widest).max(items.len());
            items.iter().for_each(|v| widest_container(v, widest));
        }
        Value::Object(members) => {
            *widest = (*widest).max(members.len());
            members.values().for_each(|v| widest_container(v, widest));
        }
        _ => {}
    }
}

/// `value` with every string and object key over `keep` bytes of JSON text cut
/// ([`cut_text`]), and every array and object cut to its first `members` members, with one
/// more saying how many were left out.
fn cut(value: &Value, keep: usize, members: usize) -> Value {
    match value {
        Value::String(s) => Value::String(cut_text(s, keep)),
        Value::Array(items) => {
            let mut kept: Vec<Value> = items
                .iter()
                .take(members)
                .map(|v| cut(v, keep, members))
                .collect();
            if items.len() > members {
                kept.push(Value::String(format!(
                    "… [{} more items]",
                    items.len() - members
                )));
            }
            Value::Array(kept)
        }
        Value::Object(all) => {
            let mut kept: serde_json::Map<String, Value> = all
                .iter()
                .take(members)
                .map(|(k, v)| (cut_text(k, keep), cut(v, keep, members)))
                .collect();
            if all.len() > members {
                kept.insert(
                    "…".into(),
                    Value::String(format!("[{} more members]", all.len() - members)),
                );
            }
            Value::Object(kept)
        }
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
        // Text JSON must escape is counted as written: what is kept still fills the cap.
        for unit in ["abcdefg\n", "abc\"", "ab\u{1}", "x = \"abc\" # it's fine\n"] {
            let text = unit.repeat((2 << 20) / unit.len());
            let cut = cut_to_size(json!({"file_path": "/etc/a", "content": text}), 8192);
            let size = json_size(&cut);
            assert!((8000..=8192).contains(&size), "{unit:?}: {size}");
            assert_eq!(cut["file_path"], "/etc/a");
        }
        // Very many members: strings of 1 KiB at most, and every array and object keeps its
        // first members, saying how many it left out; the call's other members stay.
        let many = json!({"file_path": "/etc/a", "items": (0..100_000).map(|i| format!("item {i}")).collect::<Vec<_>>()});
        let cut = cut_to_size(many, 4096);
        assert!(json_size(&cut) <= 4096, "{}", json_size(&cut));
        assert_eq!(cut["file_path"], "/etc/a");
        let items = cut["items"].as_array().unwrap();
        assert_eq!(items[0], "item 0");
        let last = items.last().unwrap().as_str().unwrap();
        assert_eq!(
            last,
            format!("… [{} more items]", 100_000 - (items.len() - 1))
        );
        // A huge key is cut as a string is.
        let key = json!({"file_path": "/etc/a", "k".repeat(1 << 20): 1});
        let cut = cut_to_size(key, 4096);
        assert!(json_size(&cut) <= 4096);
        assert_eq!(cut["file_path"], "/etc/a");
    }

    #[test]
    fn sizes_read_as_people_say_them() {
        assert_eq!(human_bytes(17), "17 bytes");
        assert_eq!(human_bytes(1536), "1.5 KiB");
        assert_eq!(human_bytes(1_992_294), "1.9 MiB");
        assert_eq!(human_bytes(3 << 30), "3.0 GiB");
        assert_eq!(human_bytes((1 << 20) - 1), "1.0 MiB");
        assert_eq!(human_bytes((1 << 20) - 52), "1023.9 KiB");
        assert_eq!(human_bytes((1 << 30) - 1), "1.0 GiB");
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
