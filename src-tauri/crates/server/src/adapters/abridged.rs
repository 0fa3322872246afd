//! A task's large members cut to size for the answers that carry many tasks or the same task
//! many times: `GET /v1/tasks` pages and `/v1/events` change frames ([`super::api_types::TaskView::listed`]).
//!
//! A gateway call that writes a file carries the file in its `arguments`, one that reads it
//! carries it in its `result`: sent whole, a page of 50 such tasks was megabytes, and a running
//! call's every progress report sent its arguments again to each open event stream. A list
//! needs a task's shape, its first and last lines, its flags and marks; the task read alone
//! (`GET /v1/tasks/{taskId}`) has everything.
//!
//! What a person answers is never cut: `inputRequests` (an approval's call is in their `_meta`)
//! stay whole, and `/v1/approvals` shows every call whole.

use serde_json::{Map, Value};
use unicode_segmentation::GraphemeCursor;

/// A string longer than this many characters (Unicode scalar values) is cut, in the first pass.
pub const STRING_MAX_CHARS: usize = 2048;

/// An array or object with more members than this keeps its first this many, in the first pass.
pub const MEMBERS_MAX: usize = 100;

/// About the most bytes one member (`arguments`, `result`, `error`, an event's `data`) keeps:
/// while over it, the next pass cuts shorter.
pub const BUDGET_BYTES: usize = 64 * 1024;

/// What stands where a string was cut.
pub const CUT_MARK: &str = "…";

/// The passes, each cutting strings to (at most) `.0` characters and arrays and objects to
/// `.1` members: the first always, each next one while the value is still over
/// [`BUDGET_BYTES`] (many strings just under the first pass's length).
const PASSES: [(usize, usize); 4] = [
    (STRING_MAX_CHARS, MEMBERS_MAX),
    (512, 40),
    (128, 16),
    (32, 5),
];

/// The depth below which the last resort ([`abridge`]) replaces every array and object by
/// [`CUT_MARK`]: a task's `result.content[0].text` is at depth 3 and stays.
const DEPTH_KEPT: usize = 4;

/// Cuts `value` in place, at any depth: each string (an object's keys too) longer than
/// [`STRING_MAX_CHARS`] characters to that many, its first 1,024 and last 1,023 with
/// [`CUT_MARK`] between, each array and object to its first [`MEMBERS_MAX`] members; then,
/// while it is still over [`BUDGET_BYTES`], again with 512 characters and 40 members, then 128
/// and 16, then 32 and 5; as a last resort, every array and object deeper than 4 levels becomes
/// [`CUT_MARK`]. A cut string keeps both ends: its first and last lines stay readable (a
/// command's last output line is at the end of its `tail`). Returns whether anything was cut.
/// What is cut only shrinks, but a cut key that collides gets a number (" (2)") and an empty
/// array replaced by the mark grows by a byte: a few bytes over the input at most.
pub fn abridge(value: &mut Value) -> bool {
    let mut cut = false;
    for (chars, members) in PASSES {
        let (this_cut, size) = cut_to(value, chars, members);
        cut |= this_cut;
        if size <= BUDGET_BYTES {
            return cut;
        }
    }
    // Still over (small values nested deep, a few to each level): what lies deeper than
    // DEPTH_KEPT goes.
    flatten_below(value, DEPTH_KEPT) | cut
}

/// Replaces every array and object deeper than `depth` levels in `value` by [`CUT_MARK`].
/// Returns whether it replaced any.
fn flatten_below(value: &mut Value, depth: usize) -> bool {
    if !(value.is_array() || value.is_object()) {
        return false;
    }
    if depth == 0 {
        *value = Value::String(CUT_MARK.to_string());
        return true;
    }
    let children: Box<dyn Iterator<Item = &mut Value>> = match value {
        Value::Array(items) => Box::new(items.iter_mut()),
        Value::Object(object) => Box::new(object.values_mut()),
        _ => return false,
    };
    children.fold(false, |cut, v| flatten_below(v, depth - 1) | cut)
}

/// One pass of [`abridge`]: strings to `chars` characters, arrays and objects to `members`
/// members. Returns whether anything was cut, and about how many bytes `value` then has as
/// JSON (its strings' and keys' bytes, a few for each other value and separator).
fn cut_to(value: &mut Value, chars: usize, members: usize) -> (bool, usize) {
    match value {
        Value::String(s) => (cut_string(s, chars), s.len() + 2),
        Value::Array(items) => {
            let mut cut = items.len() > members;
            items.truncate(members);
            let mut size = 2;
            for item in items.iter_mut() {
                let (c, n) = cut_to(item, chars, members);
                cut |= c;
                size += n + 1;
            }
            (cut, size)
        }
        Value::Object(object) => {
            let mut cut = object.len() > members
                || object
                    .keys()
                    .any(|k| k.len() > chars && k.chars().count() > chars);
            if cut {
                let mut kept = Map::new();
                for (mut k, v) in std::mem::take(object).into_iter().take(members) {
                    // Two long keys that differ only where they are cut stay two members.
                    if cut_string(&mut k, chars) && kept.contains_key(&k) {
                        k = format!("{k} ({})", kept.len() + 1);
                    }
                    kept.insert(k, v);
                }
                *object = kept;
            }
            let mut size = 2;
            for (k, v) in object.iter_mut() {
                let (c, n) = cut_to(v, chars, members);
                cut |= c;
                size += k.len() + 4 + n;
            }
            (cut, size)
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => (false, 8),
    }
}

/// Cuts `s` to `max` characters when it has more: its first `max / 2` and its last ones, with
/// [`CUT_MARK`] between, moved out to the nearest grapheme-cluster boundary (so a flag or a
/// family emoji is kept whole or left out, never split into another; then a few characters
/// fewer are kept). Returns whether it did.
fn cut_string(s: &mut String, max: usize) -> bool {
    // No more bytes than the most characters kept: not too long (the common case, at once).
    if s.len() <= max {
        return false;
    }
    let chars = s.chars().count();
    if chars <= max {
        return false;
    }
    let (head, tail) = (max / 2, max - max / 2 - 1);
    let at = |n: usize| s.char_indices().nth(n).map_or(s.len(), |(i, _)| i);
    let (head_end, tail_start) = (at(head), at(chars - tail));
    let (head_end, tail_start) = (
        cluster_edge(s, head_end, false),
        cluster_edge(s, tail_start, true),
    );
    s.replace_range(head_end..tail_start, CUT_MARK);
    true
}

/// The grapheme-cluster boundary of `s` nearest to byte `i` (a char boundary) backwards, or
/// forwards with `forward`: `i` itself when it is one. A cluster longer than
/// [`CLUSTER_MAX_BYTES`] (a letter under hundreds of combining marks) is cut at `i` after all,
/// so that a cut keeps about what it says.
fn cluster_edge(s: &str, i: usize, forward: bool) -> usize {
    let mut cursor = GraphemeCursor::new(i, s.len(), true);
    if cursor.is_boundary(s, 0).unwrap_or(true) {
        return i;
    }
    let edge = match forward {
        true => cursor.next_boundary(s, 0),
        false => cursor.prev_boundary(s, 0),
    };
    match edge {
        Ok(Some(edge)) if edge.abs_diff(i) <= CLUSTER_MAX_BYTES => edge,
        _ => i,
    }
}

/// How far [`cluster_edge`] moves a cut, in bytes: the longest emoji sequences (a family of
/// four with skin tones) are under 64.
const CLUSTER_MAX_BYTES: usize = 64;

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_cut_never_splits_a_flag_or_a_joined_emoji() {
        use unicode_segmentation::UnicodeSegmentation;
        // An odd start puts the plain cut inside a flag (two regional indicators) at both ends.
        for (lead, unit) in [("x", "🇫🇷"), ("xy", "👨‍👩‍👧"), ("x", "e\u{301}")] {
            let mut v = json!(format!("{lead}{}", unit.repeat(3000)));
            assert!(abridge(&mut v));
            let cut = v.as_str().unwrap();
            let (head, tail) = cut.split_once(CUT_MARK).unwrap();
            let head = head.strip_prefix(lead).unwrap();
            for part in [head, tail] {
                assert!(part.graphemes(true).all(|g| g == unit), "{unit}: {part:?}");
                assert!(!part.is_empty());
            }
            assert!(cut.chars().count() <= STRING_MAX_CHARS, "{unit}");
        }
    }

    #[test]
    fn long_strings_keep_both_ends_and_short_ones_stay() {
        let mut short = json!({"a": "x".repeat(STRING_MAX_CHARS), "n": 3, "e": "é".repeat(2000)});
        let before = short.clone();
        assert!(!abridge(&mut short));
        assert_eq!(short, before);

        let text = format!("first line\n{}\nlast line", "é".repeat(5000));
        let mut long = json!({"content": [{"type": "text", "text": text}]});
        assert!(abridge(&mut long));
        let cut = long["content"][0]["text"].as_str().unwrap();
        assert_eq!(cut.chars().count(), STRING_MAX_CHARS);
        assert!(cut.starts_with("first line\n"), "{cut}");
        assert!(cut.ends_with("\nlast line"), "{cut}");
        assert_eq!(cut.matches(CUT_MARK).count(), 1);
        // One character over the most kept is cut too, to the most kept.
        let mut over = json!("y".repeat(STRING_MAX_CHARS + 1));
        assert!(abridge(&mut over));
        assert_eq!(over.as_str().unwrap().chars().count(), STRING_MAX_CHARS);
    }

    #[test]
    fn a_value_over_the_budget_is_cut_shorter_and_long_keys_are_cut() {
        // 100 rows of 19 strings just under the first pass's length: 3.8 MB.
        let row: Vec<String> = (0..19)
            .map(|i| format!("{i}{}", "r".repeat(1999)))
            .collect();
        let mut rows = json!({"rows": vec![row; 100]});
        assert!(abridge(&mut rows));
        let size = rows.to_string().len();
        assert!(size <= BUDGET_BYTES, "{size} bytes");
        assert!(rows["rows"].as_array().unwrap().len() >= 5);
        assert!(rows["rows"][0][0].as_str().unwrap().starts_with("0rrr"));
        // Under the budget after the first pass: cut no further.
        let mut fits = json!({"rows": vec![vec!["s".repeat(3000); 2]; 10]});
        assert!(abridge(&mut fits));
        assert_eq!(
            fits["rows"][9][1].as_str().unwrap().chars().count(),
            STRING_MAX_CHARS
        );
        // A long key is cut as a string is.
        let mut keyed = json!({"K".repeat(200_000): 1, "small": 2});
        assert!(abridge(&mut keyed));
        let keys: Vec<&String> = keyed.as_object().unwrap().keys().collect();
        assert_eq!(keys[0].chars().count(), STRING_MAX_CHARS);
        assert_eq!(keys[1], "small");
        assert!(keyed.to_string().len() < 3000);
        // Two long keys that differ only in their cut middle stay two members.
        let (a, b) = (
            format!("{}A{}", "k".repeat(1500), "k".repeat(1500)),
            format!("{}B{}", "k".repeat(1500), "k".repeat(1500)),
        );
        let mut twins = json!({a: "first", b: "second"});
        assert!(abridge(&mut twins));
        let values: Vec<&Value> = twins.as_object().unwrap().values().collect();
        assert_eq!(values, [&json!("first"), &json!("second")]);
    }

    #[test]
    fn small_values_nested_deep_are_cut_below_a_depth() {
        // 5 wide and 8 deep: 390,625 numbers, under every pass's member count.
        let mut nested = json!(0);
        for _ in 0..8 {
            nested = Value::Array(vec![nested; 5]);
        }
        let mut result = json!({"content": [{"type": "text", "text": "kept"}], "structuredContent": {"rows": nested}});
        assert!(abridge(&mut result));
        assert!(
            result.to_string().len() < BUDGET_BYTES,
            "{} bytes",
            result.to_string().len()
        );
        assert_eq!(result["content"][0]["text"], "kept");
        assert_eq!(result["structuredContent"]["rows"][0][0], json!(CUT_MARK));
        // Small enough after the passes: no level is replaced.
        let mut shallow = json!({"a": [[1, 2], [3, 4]]});
        assert!(!abridge(&mut shallow));
    }

    #[test]
    fn long_arrays_and_objects_keep_their_first_members() {
        let mut many = json!({
            "items": (0..250).collect::<Vec<_>>(),
            "deep": [{"s": "z".repeat(10_000)}],
        });
        let object: serde_json::Map<String, Value> =
            (0..150).map(|i| (format!("k{i:03}"), json!(i))).collect();
        many["object"] = Value::Object(object);
        let size = many.to_string().len();
        assert!(abridge(&mut many));
        assert_eq!(many["items"].as_array().unwrap().len(), MEMBERS_MAX);
        assert_eq!(many["items"][99], json!(99));
        let kept = many["object"].as_object().unwrap();
        assert_eq!(kept.len(), MEMBERS_MAX);
        assert!(
            kept.contains_key("k000") && kept.contains_key("k099") && !kept.contains_key("k100")
        );
        assert!(many["deep"][0]["s"].as_str().unwrap().len() < 3000);
        assert!(many.to_string().len() < size);
    }
}
