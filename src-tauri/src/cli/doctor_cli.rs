//! `taskdeck doctor`: prints one line per check of the data dir and config dir
//! ([`taskdeck_server::doctor`] does the checks), `ok` or `problem` with what to do.
//!
//! Exit codes: 0 every check passed; 1 at least one problem. `--json` prints
//! `{"ok": bool, "checks": [{check, ok, detail, fix?}]}` instead.

use std::process::ExitCode;

use taskdeck_server::doctor::{DoctorOptions, diagnose};

/// Runs the checks on `opts` and prints them (`json`: one JSON document).
pub fn run(opts: DoctorOptions, json: bool) -> ExitCode {
    let findings = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt.block_on(diagnose(&opts)),
        Err(e) => {
            eprintln!("taskdeck: cannot start the async runtime: {e}");
            return ExitCode::from(1);
        }
    };
    let all_ok = findings.iter().all(|f| f.ok);
    if json {
        println!("{}", serde_json::json!({"ok": all_ok, "checks": findings}));
    } else {
        for f in &findings {
            match &f.fix {
                None => println!("ok       {}: {}", f.check, f.detail),
                Some(fix) => println!("problem  {}: {} -> {fix}", f.check, f.detail),
            }
        }
    }
    if all_ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
