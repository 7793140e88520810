//! `runlog digest RUN [--check FILE]`: a run's head (seq and chain hash) to keep elsewhere, or
//! a check that the run still matches one. The digest itself is a JSON object with or without
//! `--json`: it is the file `--check` reads back.

use crate::ctx::Ctx;
use crate::error::{bad_file, CliError, Result};
use crate::render;
use runlog_replay::digest::{check, digest as make_digest, Digest, DigestCheck};
use std::path::PathBuf;

/// Arguments of `runlog digest`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The run.
    run: String,
    /// Check a saved digest instead of printing one.
    #[arg(long, value_name = "FILE")]
    check: Option<PathBuf>,
}

const DIGEST_FILE: &str = "pass a file written by `runlog digest RUN > FILE`";

/// Prints the digest, or checks one (exit 1 when the history differs or is shorter).
pub fn run(a: Args, ctx: &Ctx) -> Result<()> {
    let log = ctx.open()?;
    let run = a.run.as_str();
    let Some(file) = a.check else {
        render::json(&make_digest(&log, run)?);
        return Ok(());
    };
    let text = std::fs::read_to_string(&file)
        .map_err(|e| bad_file(format!("cannot read: {e}"), &file, DIGEST_FILE))?;
    let d: Digest = serde_json::from_str(text.trim())
        .map_err(|e| bad_file(format!("not a runlog digest: {e}"), &file, DIGEST_FILE))?;
    if d.run != run {
        return Err(CliError::input(format!(
            "the digest is for run {}, not {run}",
            d.run
        )));
    }
    let outcome = check(&log, &d)?;
    if ctx.json {
        let (ok, found) = match &outcome {
            DigestCheck::Matches => (true, serde_json::Value::Null),
            DigestCheck::Differs { found } => (false, serde_json::json!({ "hash": found })),
            DigestCheck::Missing { head } => (false, serde_json::json!({ "head_seq": head })),
        };
        render::json(
            &serde_json::json!({"run": run, "head_seq": d.head_seq, "matches": ok, "found": found}),
        );
    }
    match outcome {
        DigestCheck::Matches => {
            if !ctx.json {
                println!("{run}: matches the digest up to seq {}", d.head_seq);
            }
            Ok(())
        }
        DigestCheck::Differs { found } => Err(CliError::failed(format!(
            "{run}: history up to seq {} differs from the digest (found {found})",
            d.head_seq
        ))),
        DigestCheck::Missing { head } => Err(CliError::failed(format!(
            "{run}: the log ends at seq {head}, before the digest's seq {}",
            d.head_seq
        ))),
    }
}
