//! `runlog digest RUN [--check FILE] [--export FILE]`: a run's head (seq and chain hash) to keep
//! elsewhere, or a check that the run still matches one. The digest itself is a JSON object
//! with or without `--json`: it is the file `--check` reads back. A forgotten run's digest is
//! its tombstone's; `--export` checks an export of the run (every line against the chain) and
//! compares its digest with the run's, or the tombstone's.

use crate::ctx::Ctx;
use crate::error::{bad_file, CliError, Result};
use crate::render;
use runlog_replay::digest::{check, digest as make_digest, Digest, DigestCheck};
use runlog_store::EventLog;
use std::path::PathBuf;

/// Arguments of `runlog digest`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The run.
    run: String,
    /// Check a saved digest instead of printing one.
    #[arg(long, value_name = "FILE")]
    check: Option<PathBuf>,
    /// Check an export of the run (`runlog export`, or `forget --keep-export`): its chain line
    /// by line, and its digest against the run's history, or a forgotten run's tombstone (or
    /// against --check FILE)
    #[arg(long, value_name = "FILE")]
    export: Option<PathBuf>,
}

const DIGEST_FILE: &str = "pass a file written by `runlog digest RUN > FILE`";

/// Prints the digest, or checks one (exit 1 when the history differs or is shorter).
pub fn run(a: Args, ctx: &Ctx) -> Result<()> {
    let log = ctx.open()?;
    let run = a.run.as_str();
    let in_store = log.head(run)?.is_some();
    let tombstone = match in_store {
        true => None,
        false => crate::queries::forget::tombstone_of(&log, run)?,
    };
    let saved = match &a.check {
        Some(file) => Some(read_digest(file, run)?),
        None => None,
    };
    let d = match (&a.export, saved) {
        (Some(export), _) => {
            let file = std::fs::File::open(export)
                .map_err(|e| bad_file(format!("cannot read: {e}"), export, EXPORT_FILE))?;
            let d = runlog_replay::export::digest_of(&mut std::io::BufReader::new(file))
                .map_err(|e| bad_file(e.to_string(), export, EXPORT_FILE))?;
            if d.run != run {
                return Err(CliError::input(format!(
                    "the export is of run {}, not {run}",
                    d.run
                )));
            }
            d
        }
        (None, Some(d)) => d,
        (None, None) => {
            match &tombstone {
                Some(t) => render::json(&Digest {
                    run: run.to_owned(),
                    head_seq: t.head_seq,
                    head_hash: t.head_hash.clone(),
                }),
                None => render::json(&make_digest(&log, run)?),
            }?;
            return Ok(());
        }
    };
    let outcome = match (&a.export, &a.check, &tombstone) {
        // An export checked against a saved digest: the two must be the same head.
        (Some(_), Some(file), _) => same(&d, &read_digest(file, run)?),
        (_, _, Some(t)) => same(
            &d,
            &Digest {
                run: run.to_owned(),
                head_seq: t.head_seq,
                head_hash: t.head_hash.clone(),
            },
        ),
        _ => check(&log, &d)?,
    };
    let against = match (&a.export, &a.check, &tombstone) {
        (Some(_), Some(_), _) => "the saved digest",
        (_, _, Some(_)) => "the digest its tombstone keeps (the run was forgotten)",
        _ => "the digest",
    };
    if ctx.json {
        let (ok, found) = match &outcome {
            DigestCheck::Matches => (true, serde_json::Value::Null),
            DigestCheck::Differs { found } => (false, serde_json::json!({ "hash": found })),
            DigestCheck::Missing { head } => (false, serde_json::json!({ "head_seq": head })),
        };
        render::json(
            &serde_json::json!({"run": run, "head_seq": d.head_seq, "matches": ok, "found": found}),
        )?;
    }
    match outcome {
        DigestCheck::Matches => {
            if !ctx.json {
                let what = if a.export.is_some() {
                    "the export checks out and matches"
                } else {
                    "matches"
                };
                outln!("{run}: {what} {against} up to seq {}", d.head_seq);
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

const EXPORT_FILE: &str =
    "pass a file written by `runlog export RUN` or `runlog forget --keep-export`";

/// A saved digest of `run`.
fn read_digest(file: &std::path::Path, run: &str) -> Result<Digest> {
    let text = std::fs::read_to_string(file)
        .map_err(|e| bad_file(format!("cannot read: {e}"), file, DIGEST_FILE))?;
    let d: Digest = serde_json::from_str(text.trim())
        .map_err(|e| bad_file(format!("not a runlog digest: {e}"), file, DIGEST_FILE))?;
    if d.run != run {
        return Err(CliError::input(format!(
            "the digest is for run {}, not {run}",
            d.run
        )));
    }
    Ok(d)
}

/// Two digests of one history compared whole: the same seq and hash.
fn same(found: &Digest, expected: &Digest) -> DigestCheck {
    if found.head_seq < expected.head_seq {
        DigestCheck::Missing {
            head: found.head_seq,
        }
    } else if found.head_seq == expected.head_seq && found.head_hash == expected.head_hash {
        DigestCheck::Matches
    } else {
        DigestCheck::Differs {
            found: found.head_hash.clone(),
        }
    }
}
