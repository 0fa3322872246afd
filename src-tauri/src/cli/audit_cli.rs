//! `taskdeck audit export|verify`: the audit log of approval decisions from the command line.
//! `export` streams `GET /v1/audit?format=jsonl|csv` to stdout or a file (written whole or
//! not at all); `verify` prints the running Taskdeck's `GET /v1/audit/verify`, or checks an
//! exported JSON Lines file offline with the same [`verify_chain`] the server uses.
//!
//! Exit codes: 0 success (the chain is intact); 1 the chain is broken (the seq and what is
//! wrong are printed), the file cannot be read, or Taskdeck is unreachable; 2 no token, or a
//! malformed `--since`; 4 the API refused (e.g. a token that is not the admin's).

use std::{
    io::{BufRead, IsTerminal, Write},
    path::{Path, PathBuf},
    process::ExitCode,
};

use taskdeck_engine::{AuditEntry, AuditVerification, verify_chain};

use super::endpoint::{Endpoint, Target, block_on};

/// One `taskdeck audit` command (its clap definition: `taskdeck audit --help`).
#[derive(clap::Subcommand)]
pub enum AuditCommand {
    /// Write the audit log (or the entries since T) as JSON Lines or CSV
    Export {
        /// Only entries recorded at or after T: Unix ms, RFC 3339 (2026-12-01T09:00:00Z) or a
        /// date (2026-12-01, midnight UTC)
        #[arg(long, value_name = "T", value_parser = since_arg)]
        since: Option<String>,
        /// jsonl: one entry per line, verifiable with `taskdeck audit verify --file`; csv: a
        /// header row, object columns as JSON text
        #[arg(long, value_enum, default_value_t = ExportFormat::Jsonl)]
        format: ExportFormat,
        /// Write to FILE instead of stdout (replaced only once the export is complete)
        #[arg(long, short, value_name = "FILE")]
        output: Option<PathBuf>,
    },
    /// Check the hash chain of the running Taskdeck's log, or of an exported JSON Lines file
    Verify {
        /// Verify this `taskdeck audit export` output offline instead of asking Taskdeck
        #[arg(long, value_name = "EXPORT.jsonl")]
        file: Option<PathBuf>,
        /// Print the verification as JSON ({ok, entries, firstSeq, lastSeq, headHash, problem?})
        #[arg(long)]
        json: bool,
    },
}

/// `--format` of `taskdeck audit export`.
#[derive(Clone, Copy, clap::ValueEnum)]
pub enum ExportFormat {
    /// One JSON object per line
    Jsonl,
    /// CSV: a header row, then one row per entry
    Csv,
}

/// Runs `cmd`.
/// Runs `cmd`; the commands that ask Taskdeck ask the one `target` names.
pub fn run(cmd: AuditCommand, target: &Target) -> ExitCode {
    match cmd {
        AuditCommand::Verify {
            file: Some(file),
            json,
        } => match verify_file(&file) {
            Ok(report) => print_verification(&report, json),
            Err(e) => {
                eprintln!("taskdeck: {}: {e}", file.display());
                ExitCode::from(1)
            }
        },
        cmd => match target.locate_with_token() {
            Ok(endpoint) => block_on(remote(cmd, target, endpoint)),
            Err(code) => code,
        },
    }
}

/// `--since T` checked as the server reads it ([`parse_since`]), so that a malformed one is a
/// usage error (exit 2) saying which forms are taken, before anything is asked.
///
/// [`parse_since`]: taskdeck_server::adapters::audit_api::parse_since
fn since_arg(s: &str) -> Result<String, String> {
    taskdeck_server::adapters::audit_api::parse_since(s)
        .map(|_| s.to_string())
        .map_err(|e| e.detail)
}

/// The commands that ask the Taskdeck at `endpoint`.
async fn remote(cmd: AuditCommand, target: &Target, endpoint: Endpoint) -> ExitCode {
    let base = endpoint.base.as_str();
    let http = super::endpoint::http_client();
    let request = match &cmd {
        AuditCommand::Export { since, format, .. } => {
            let mut q = vec![(
                "format",
                match format {
                    ExportFormat::Jsonl => "jsonl",
                    ExportFormat::Csv => "csv",
                }
                .to_string(),
            )];
            if let Some(s) = since {
                q.push(("since", s.clone()));
            }
            http.get(format!("{base}/v1/audit")).query(&q)
        }
        AuditCommand::Verify { .. } => http.get(format!("{base}/v1/audit/verify")),
    };
    let resp = match target.send(&endpoint, request).await {
        Ok(resp) => resp,
        Err(code) => return code,
    };
    match cmd {
        AuditCommand::Export { output, .. } => match export(resp, output.as_deref()).await {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("taskdeck: the export failed: {e}");
                ExitCode::from(1)
            }
        },
        AuditCommand::Verify { json, .. } => match resp.json::<AuditVerification>().await {
            Ok(report) => print_verification(&report, json),
            Err(e) => {
                eprintln!("taskdeck: an unexpected answer from {base}: {e}");
                ExitCode::from(1)
            }
        },
    }
}

/// Copies the body of `resp` as it arrives to `output` (a temp file in its directory, renamed
/// over it at the end, so a failed export leaves no partial file) or to stdout.
async fn export(mut resp: reqwest::Response, output: Option<&Path>) -> Result<(), String> {
    let (mut out, temp): (Box<dyn Write>, _) = match output {
        Some(path) => {
            let dir = path
                .parent()
                .filter(|d| !d.as_os_str().is_empty())
                .unwrap_or(Path::new("."));
            let temp = tempfile::NamedTempFile::new_in(dir)
                .map_err(|e| format!("cannot write in {}: {e}", dir.display()))?;
            let file = temp.reopen().map_err(|e| e.to_string())?;
            (Box::new(std::io::BufWriter::new(file)), Some(temp))
        }
        None => (Box::new(std::io::stdout().lock()), None),
    };
    if output.is_none() && std::io::stdout().is_terminal() {
        // A person reads it: what would act on the terminal or hide text (a reason that
        // reorders itself, an escape sequence) is written out, the JSON the same value.
        let body = resp.text().await.map_err(|e| e.to_string())?;
        let shown = super::terminal_text::written_out_as_json(&body);
        out.write_all(shown.as_bytes()).map_err(|e| e.to_string())?;
    } else {
        while let Some(chunk) = resp.chunk().await.map_err(|e| e.to_string())? {
            out.write_all(&chunk).map_err(|e| e.to_string())?;
        }
    }
    out.flush().map_err(|e| e.to_string())?;
    drop(out);
    if let (Some(temp), Some(path)) = (temp, output) {
        temp.persist(path)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    Ok(())
}

/// Verifies an exported JSON Lines file, reading it line by line. Errors: the file cannot be
/// read, or a line is not an audit entry (its number is named).
fn verify_file(path: &Path) -> Result<AuditVerification, String> {
    let file = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let mut failed = None;
    let entries = std::io::BufReader::new(file)
        .lines()
        .enumerate()
        .filter(|(_, line)| line.as_ref().map_or(true, |l| !l.trim().is_empty()))
        .map_while(|(i, line)| {
            let entry = line
                .map_err(|e| e.to_string())
                .and_then(|l| AuditEntry::from_exported(&l));
            match entry {
                Ok(e) => Some(e),
                Err(e) => {
                    failed = Some(format!("line {} is not an audit entry: {e}", i + 1));
                    None
                }
            }
        });
    let report = verify_chain(entries, None, None);
    match failed {
        Some(e) => Err(e),
        None => Ok(report),
    }
}

/// Prints `report` ("ok: N entries, seq A..B, head H" or where the chain breaks); exit 1 when
/// it is broken.
fn print_verification(report: &AuditVerification, json: bool) -> ExitCode {
    if json {
        println!("{}", serde_json::to_string(report).unwrap_or_default());
    } else if let Some(p) = &report.problem {
        println!("broken at seq {}: {}", p.seq, p.what);
    } else {
        match (report.first_seq, report.last_seq, &report.head_hash) {
            (Some(a), Some(b), Some(h)) => {
                println!("ok: {} entries, seq {a}..{b}, head {h}", report.entries)
            }
            _ => println!("ok: 0 entries"),
        }
    }
    if report.ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
