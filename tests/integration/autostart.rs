//! `taskdeck autostart on|off|status`: the XDG autostart entry, written under a temporary
//! XDG_CONFIG_HOME by the real binary, checked by content and by `desktop-file-validate`
//! (desktop-file-utils, installed by scripts/setup.sh).

use std::{path::Path, process::Command};

const BIN: &str = env!("CARGO_BIN_EXE_taskdeck");

fn taskdeck(xdg: &Path, args: &[&str]) -> (i32, String) {
    let out = Command::new(BIN)
        .args(args)
        .env("XDG_CONFIG_HOME", xdg)
        .env_remove("TASKDECK_DATA_DIR")
        .env_remove("TASKDECK_CONFIG_DIR")
        .output()
        .expect("run taskdeck");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn autostart_on_off_writes_a_valid_hidden_entry() {
    let tmp = tempfile::tempdir().unwrap();
    let xdg = tmp.path().join("config home");
    let entry = xdg.join("autostart/taskdeck.desktop");

    assert_eq!(
        taskdeck(&xdg, &["autostart", "status"]),
        (0, "off\n".into())
    );

    let data = tmp.path().join("my data");
    let (code, out) = taskdeck(
        &xdg,
        &["--data-dir", data.to_str().unwrap(), "autostart", "on"],
    );
    assert_eq!(code, 0);
    assert_eq!(out, format!("on {}\n", entry.display()));
    let text = std::fs::read_to_string(&entry).unwrap();
    let exec = text.lines().find(|l| l.starts_with("Exec=")).unwrap();
    let bin = std::fs::canonicalize(BIN).unwrap();
    assert_eq!(
        exec,
        format!(
            "Exec={} --data-dir \"{}\" --hidden",
            bin.display(),
            data.display()
        ),
        "the data dir has a space: quoted as the Desktop Entry spec says"
    );
    assert!(
        text.starts_with("[Desktop Entry]\nType=Application\n"),
        "{text}"
    );
    let validate = Command::new("desktop-file-validate")
        .arg(&entry)
        .output()
        .expect("desktop-file-validate (apt package desktop-file-utils; scripts/setup.sh)");
    assert!(
        validate.status.success() && validate.stdout.is_empty(),
        "desktop-file-validate: {}{}",
        String::from_utf8_lossy(&validate.stdout),
        String::from_utf8_lossy(&validate.stderr)
    );
    assert_eq!(
        taskdeck(&xdg, &["autostart", "status"]),
        (0, format!("on {}\n", entry.display()))
    );

    assert_eq!(taskdeck(&xdg, &["autostart", "off"]), (0, "off\n".into()));
    assert!(!entry.exists());
    assert_eq!(
        taskdeck(&xdg, &["autostart", "status"]),
        (0, "off\n".into())
    );
    assert_eq!(
        taskdeck(&xdg, &["autostart", "off"]),
        (0, "off\n".into()),
        "off twice is fine"
    );
}
