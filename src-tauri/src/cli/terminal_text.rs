//! Text others wrote (an agent's question, a job's result, an upstream's error) as the CLI
//! prints it on a terminal: every character that would act on the terminal or hide what the
//! text says is written out, as the window does (docs/ui.md, "A call reads as what would run").
//! An escape sequence (`ESC [2K`) could erase the line a person reads before answering, a
//! carriage return overwrite it, and a bidi override (U+202E) make `rm -rf ~` read as another
//! command; written out (`\u{1b}`, `\u{d}`, `\u{202e}`), the text reads as what it is.

use serde_json::Value;
use taskdeck_server::tools::process::{hidden, shown_script};

/// Multi-line `text` for the terminal: its line breaks and tabs kept, every other control,
/// invisible or reordering character written out as `\u{...}`.
pub fn shown(text: &str) -> String {
    shown_script(text)
}

/// `value` as compact JSON whose strings hold no character the terminal would act on or hide:
/// those serde_json leaves as they are (bidi overrides, zero-width and line-separator
/// characters) are written as JSON escapes (`\u202e`), so the text is the same JSON value.
pub fn plain_json(value: &Value) -> String {
    let text = value.to_string();
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        // serde_json has escaped the control characters already; these are all in the BMP.
        if hidden(c) && !c.is_control() {
            out.push_str(&format!("\\u{:04x}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn nothing_reaches_the_terminal_that_acts_on_it_or_hides_text() {
        let question =
            "Approve report\u{202e}fdp.exe? Also\rOVERWRITTEN \u{1b}[2K\u{1b}[1Gline\nnext";
        assert_eq!(
            shown(question),
            "Approve report\\u{202e}fdp.exe? Also\\u{d}OVERWRITTEN \\u{1b}[2K\\u{1b}[1Gline\nnext"
        );
        let v = json!({"command": "echo safe \u{202e}; rm -rf ~ #\u{202c}", "cr": "a\rb"});
        let text = plain_json(&v);
        assert!(!text.chars().any(hidden), "{text}");
        assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), v);
    }
}
