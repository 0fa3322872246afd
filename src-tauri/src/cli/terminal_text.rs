//! Text others wrote (an agent's question, a job's result, an upstream's error) as the CLI
//! prints it on a terminal: every character that would act on the terminal or hide what the
//! text says is written out, as the window does (docs/ui.md, "A call reads as what would run").
//! An escape sequence (`ESC [2K`) could erase the line a person reads before answering, a
//! carriage return overwrite it, and a bidi override (U+202E) make `rm -rf ~` read as another
//! command; written out (`\u{1b}`, `\u{d}`, `\u{202e}`), the text reads as what it is.

use serde_json::Value;
use taskdeck_server::tools::process::hidden;

/// Multi-line text for the terminal: its line breaks and tabs kept, every other control,
/// invisible or reordering character written out as `\u{...}` (what the window shows a
/// command as).
pub use taskdeck_server::tools::process::shown_script as shown;

/// `value` as compact JSON whose strings hold no character the terminal would act on or hide:
/// those serde_json leaves as they are (DEL and the C1 controls, among them U+009B, a CSI to
/// some terminals; bidi overrides, zero-width and line-separator characters) are written as
/// JSON escapes (`\u009b`, `\u202e`), so the text is the same JSON value.
pub fn plain_json(value: &Value) -> String {
    written_out_as_json(&value.to_string())
}

/// `text` (JSON or JSON Lines, or CSV, as `taskdeck audit export` prints it) with every
/// character the terminal would act on or hide written as a JSON escape (`\u009b`), but its
/// line breaks (LF, CR LF) and tabs: JSON text stays the same JSON value, line for line.
pub fn written_out_as_json(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        let line_break = c == '\n' || (c == '\r' && chars.peek() == Some(&'\n'));
        // One `\uXXXX` each, a character past the BMP (a tag character) as its UTF-16 pair.
        if hidden(c) && !line_break && c != '\t' {
            for unit in c.encode_utf16(&mut [0; 2]) {
                out.push_str(&format!("\\u{:04x}", unit));
            }
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
        let v = json!({"command": "echo safe \u{202e}; rm -rf ~ #\u{202c}", "cr": "a\rb",
            "c1": "st \u{9b}2J\u{9d}0;t\u{9c} del\u{7f}",
            "blank": "x\u{E0041}\u{E0042}y \u{3164}\u{180E}"});
        let text = plain_json(&v);
        assert!(!text.chars().any(hidden), "{text}");
        assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), v);
        let lines = format!("{text}\r\n{text}\n");
        let written = written_out_as_json(&lines);
        assert_eq!(written, lines, "nothing left to write out, lines kept");
        assert_eq!(written_out_as_json("a\rb\u{9b}\n"), "a\\u000db\\u009b\n");
        // A tag character (invisible ASCII) as its UTF-16 pair; an emoji's selector stays.
        assert_eq!(
            written_out_as_json("x\u{E0041}\u{2764}\u{FE0F}"),
            "x\\udb40\\udc41\u{2764}\u{FE0F}"
        );
        assert_eq!(
            shown("echo x\u{E0041}y\u{3164}"),
            "echo x\\u{e0041}y\\u{3164}"
        );
    }
}
