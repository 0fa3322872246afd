//! `taskdeck autostart on|off|status`: start Taskdeck at login, hidden in the tray, through
//! the XDG autostart entry of [`super::autostart`].

use std::{path::PathBuf, process::ExitCode};

use clap::Subcommand;

use super::autostart;

/// The subcommands of `taskdeck autostart`.
#[derive(Subcommand)]
pub enum AutostartCommand {
    /// Start Taskdeck at login, hidden in the tray (writes ~/.config/autostart/taskdeck.desktop,
    /// under XDG_CONFIG_HOME when set); prints the entry's path
    On,
    /// Do not start Taskdeck at login (removes that entry)
    Off,
    /// Print "on PATH" or "off"
    Status,
}

/// Runs one subcommand. `explicit_dirs` are the `--data-dir` / `--config-dir` given to this
/// command (flag or environment); `on` passes them on to the started Taskdeck. Exit codes: 0,
/// or 1 when the entry cannot be written or removed.
pub fn run(cmd: AutostartCommand, explicit_dirs: (Option<PathBuf>, Option<PathBuf>)) -> ExitCode {
    let result = match cmd {
        AutostartCommand::On => {
            let mut args = Vec::new();
            for (flag, dir) in [
                ("--data-dir", explicit_dirs.0),
                ("--config-dir", explicit_dirs.1),
            ] {
                if let Some(dir) = dir {
                    let dir = std::path::absolute(&dir).unwrap_or(dir);
                    args.push(flag.to_string());
                    args.push(dir.to_string_lossy().into_owned());
                }
            }
            autostart::enable(&args).map(|path| {
                println!("on {}", path.display());
                eprintln!("Taskdeck will start at login, hidden in the tray.");
            })
        }
        AutostartCommand::Off => autostart::disable().map(|removed| {
            println!("off");
            if !removed {
                eprintln!("(there was no autostart entry)");
            }
        }),
        AutostartCommand::Status => {
            match autostart::entry_path().filter(|_| autostart::enabled()) {
                Some(path) => println!("on {}", path.display()),
                None => println!("off"),
            }
            Ok(())
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("taskdeck: autostart: {e}");
            ExitCode::from(1)
        }
    }
}
