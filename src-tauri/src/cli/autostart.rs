//! The XDG autostart entry that starts Taskdeck at login, hidden in the tray: the file
//! `$XDG_CONFIG_HOME/autostart/taskdeck.desktop` (default `~/.config/autostart/`), written or
//! removed by `taskdeck autostart on|off` and by the window's settings dialog.
//!
//! Spec: the XDG Desktop Application Autostart Specification
//! (<https://specifications.freedesktop.org/autostart-spec/latest/>) and, for the file's
//! format and the quoting of `Exec`, the Desktop Entry Specification
//! (<https://specifications.freedesktop.org/desktop-entry-spec/latest/>). The entry declares
//! `Version=1.0`: it uses nothing newer, and older validators reject versions they do not know.
//!
//! Written here rather than with `tauri-plugin-autostart`: the plugin needs the Tauri app, so
//! the headless build's `taskdeck autostart` could not use it, and its Linux backend
//! (`auto-launch`) writes `Exec` unquoted (a path with a space breaks) under the product name.

use std::{
    io,
    path::{Path, PathBuf},
};

/// The flag that starts the desktop shell without showing its window (the tray icon, a second
/// launch or the tray's Show brings it up).
pub const HIDDEN_FLAG: &str = "--hidden";

/// File name of the entry inside the autostart directory.
pub const FILE_NAME: &str = "taskdeck.desktop";

/// The autostart directory: `$XDG_CONFIG_HOME/autostart` (an absolute XDG_CONFIG_HOME only, as
/// the XDG Base Directory spec says), else `$HOME/.config/autostart`. None without a home.
pub fn autostart_dir() -> Option<PathBuf> {
    directories::BaseDirs::new().map(|d| d.config_dir().join("autostart"))
}

/// The entry's path: `<autostart_dir>/taskdeck.desktop`.
pub fn entry_path() -> Option<PathBuf> {
    autostart_dir().map(|d| d.join(FILE_NAME))
}

/// The entry's text: a `[Desktop Entry]` of type Application whose `Exec` runs `program`
/// (absolute path) with `extra_args` (e.g. `--data-dir DIR`) and [`HIDDEN_FLAG`], each word
/// quoted as the Desktop Entry spec requires. `TryExec` names `program` too, so a session
/// skips the entry once the program is gone (the package removed) instead of failing at
/// every login.
pub fn entry_text(program: &Path, extra_args: &[String]) -> String {
    let program = program.to_string_lossy();
    let mut words = vec![exec_word(&program)];
    words.extend(extra_args.iter().map(|a| exec_word(a)));
    words.push(HIDDEN_FLAG.to_string());
    format!(
        "[Desktop Entry]\n\
         Type=Application\n\
         Version=1.0\n\
         Name=Taskdeck\n\
         Comment=Start Taskdeck hidden in the tray at login\n\
         TryExec={}\n\
         Exec={}\n\
         Icon=taskdeck\n\
         Terminal=false\n\
         StartupNotify=false\n\
         X-GNOME-Autostart-enabled=true\n",
        string_value(&program),
        words.join(" ")
    )
}

/// A string value of a desktop entry key: a backslash written `\\`, control characters as
/// `\n`, `\t`, `\r` (Desktop Entry Specification, "Possible value types").
fn string_value(text: &str) -> String {
    text.replace('\\', "\\\\")
        .replace('\n', "\\n")
        .replace('\t', "\\t")
        .replace('\r', "\\r")
}

/// One `Exec` argument: double-quoted when it holds a reserved character (inside the quotes
/// `"`, `` ` ``, `$` and `\` are escaped with a backslash), `%` doubled to `%%`; then the
/// string-value escaping of the whole key (a backslash written as `\\`).
fn exec_word(word: &str) -> String {
    const RESERVED: &[char] = &[
        ' ', '\t', '\n', '"', '\'', '\\', '>', '<', '~', '|', '&', ';', '$', '*', '?', '#', '(',
        ')', '`', '=',
    ];
    let word = word.replace('%', "%%");
    let quoted = if word.contains(RESERVED) || word.is_empty() {
        let mut q = String::from("\"");
        for c in word.chars() {
            if matches!(c, '"' | '`' | '$' | '\\') {
                q.push('\\');
            }
            q.push(c);
        }
        q.push('"');
        q
    } else {
        word
    };
    string_value(&quoted)
}

/// Writes the entry (creating the autostart directory) for this program and returns its path.
/// Errors: no home directory, the running program's path is unknown, or the file cannot be
/// written.
pub fn enable(extra_args: &[String]) -> io::Result<PathBuf> {
    let path = entry_path().ok_or_else(no_home)?;
    let program = std::env::current_exe()?;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(&path, entry_text(&program, extra_args))?;
    Ok(path)
}

/// Removes the entry; Ok(false) when there was none. Errors: no home directory, or the file
/// cannot be removed.
pub fn disable() -> io::Result<bool> {
    let path = entry_path().ok_or_else(no_home)?;
    match std::fs::remove_file(&path) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e),
    }
}

/// True when the entry exists (whatever its content: a user's edited entry still counts).
pub fn enabled() -> bool {
    entry_path().is_some_and(|p| p.is_file())
}

fn no_home() -> io::Error {
    io::Error::new(
        io::ErrorKind::NotFound,
        "no home directory (HOME is unset): cannot find the autostart directory",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exec_quotes_reserved_characters() {
        let text = entry_text(
            Path::new("/opt/My Apps/taskdeck"),
            &["--data-dir".into(), "/d/100%".into()],
        );
        let exec = text.lines().find(|l| l.starts_with("Exec=")).unwrap();
        assert_eq!(
            exec,
            r#"Exec="/opt/My Apps/taskdeck" --data-dir /d/100%% --hidden"#
        );
        assert_eq!(
            exec_word(r#"a"b\c"#),
            r#""a\\"b\\\\c""#,
            "quote escaped, then every backslash doubled by the string escaping"
        );
    }

    #[test]
    fn plain_path_is_not_quoted() {
        let text = entry_text(Path::new("/usr/bin/taskdeck"), &[]);
        assert!(
            text.contains("\nTryExec=/usr/bin/taskdeck\nExec=/usr/bin/taskdeck --hidden\n"),
            "{text}"
        );
    }
}
