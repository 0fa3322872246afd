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

use serde_json::Value;

/// A string longer than this many characters (Unicode scalar values) is cut.
pub const STRING_MAX_CHARS: usize = 2048;

/// Characters a cut string keeps from each end: its first and last lines stay readable (a
/// command's last output line is at the end of its `tail`).
const STRING_END_CHARS: usize = STRING_MAX_CHARS / 2;

/// An array or object with more members than this keeps its first this many.
pub const MEMBERS_MAX: usize = 100;

/// What stands where a string was cut.
pub const CUT_MARK: &str = "…";

/// Cuts `value` in place, at any depth: each string longer than [`STRING_MAX_CHARS`] characters
/// to its first and last 1,024 with [`CUT_MARK`] between, each array and object to its first
/// [`MEMBERS_MAX`] members. Returns whether anything was cut. The result is never larger than
/// `value` was.
pub fn abridge(value: &mut Value) -> bool {
    match value {
        Value::String(s) => abridge_string(s),
        Value::Array(items) => {
            let cut = items.len() > MEMBERS_MAX;
            items.truncate(MEMBERS_MAX);
            items.iter_mut().fold(cut, |cut, v| abridge(v) | cut)
        }
        Value::Object(members) => {
            let cut = members.len() > MEMBERS_MAX;
            if cut {
                // The keys past the first MEMBERS_MAX, in the object's order.
                let extra: Vec<String> = members.keys().skip(MEMBERS_MAX).cloned().collect();
                for k in extra {
                    members.shift_remove(&k);
                }
            }
            members.values_mut().fold(cut, |cut, v| abridge(v) | cut)
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => false,
    }
}

/// Cuts `s` to its first and last [`STRING_END_CHARS`] characters when it is longer than
/// [`STRING_MAX_CHARS`].
fn abridge_string(s: &mut String) -> bool {
    // No more bytes than the most characters kept: not too long (the common case, at once).
    if s.len() <= STRING_MAX_CHARS {
        return false;
    }
    let chars = s.chars().count();
    if chars <= STRING_MAX_CHARS {
        return false;
    }
    let at = |n: usize| s.char_indices().nth(n).map_or(s.len(), |(i, _)| i);
    let (head_end, tail_start) = (at(STRING_END_CHARS), at(chars - STRING_END_CHARS));
    s.replace_range(head_end..tail_start, CUT_MARK);
    true
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

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
        assert_eq!(
            cut.chars().count(),
            STRING_MAX_CHARS + CUT_MARK.chars().count()
        );
        assert!(cut.starts_with("first line\n"), "{cut}");
        assert!(cut.ends_with("\nlast line"), "{cut}");
        assert_eq!(cut.matches(CUT_MARK).count(), 1);
        // One character over the most kept is cut too.
        let mut over = json!("y".repeat(STRING_MAX_CHARS + 1));
        assert!(abridge(&mut over));
        assert_eq!(
            over.as_str().unwrap().len(),
            STRING_MAX_CHARS + CUT_MARK.len()
        );
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
