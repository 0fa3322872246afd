//! `taskdeck-hook`: the `taskdeck hook ...` commands in a binary of their own. An agent starts
//! a hook process for every tool call, so its start counts: this binary links no GUI library,
//! while the desktop build of `taskdeck` loads GTK and WebKit at every start (~55 ms, see
//! BENCHMARKS.md "Hooks"). `taskdeck hook install` writes this binary's path into the agents'
//! settings when it lies beside the running `taskdeck`.

use std::process::ExitCode;

use clap::Parser;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    // A closed stdout ends the hook quietly.
    // SAFETY: restoring the default disposition of SIGPIPE before any other thread exists.
    unsafe {
        let _ = nix::sys::signal::signal(
            nix::sys::signal::Signal::SIGPIPE,
            nix::sys::signal::SigHandler::SigDfl,
        );
    }
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    match taskdeck::cli::hook_cli::HookBinary::try_parse_from(&args) {
        Ok(hook) => hook.run(),
        Err(e) => taskdeck::cli::hook_cli::step_aside(&e, &args).unwrap_or_else(|| e.exit()),
    }
}
