//! `runlog export RUN [-o FILE]`: a run as JSON lines (a header, then one event per line).

use crate::ctx::Ctx;
use crate::error::{bad_file, CliError, Result};
use crate::render;
use runlog_replay::export::export as export_run;
use std::path::PathBuf;

/// Arguments of `runlog export`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The run.
    run: String,
    /// Write to this file (with --json, a summary of what was written goes to stdout).
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
}

/// Writes the export to stdout or to `-o FILE`.
pub fn run(a: Args, ctx: &Ctx) -> Result<()> {
    let log = ctx.open()?;
    let run = a.run.as_str();
    let Some(path) = a.output else {
        export_run(&log, run, &mut std::io::stdout().lock())?;
        return Ok(());
    };
    let file = std::fs::File::create(&path).map_err(|e| {
        bad_file(
            format!("cannot create: {e}"),
            &path,
            "-o takes a file in a directory that exists and that you may write",
        )
    })?;
    let mut out = std::io::BufWriter::new(file);
    let h = export_run(&log, run, &mut out)?;
    std::io::Write::flush(&mut out)
        .map_err(|e| CliError::failed(format!("cannot write {}: {e}", path.display())))?;
    if ctx.json {
        render::json(&serde_json::json!({
            "run": run,
            "file": path.display().to_string(),
            "events": h.events,
            "head_hash": h.head_hash,
        }));
    } else {
        eprintln!(
            "exported {} events of {run} to {} (head {})",
            h.events,
            path.display(),
            h.head_hash
        );
    }
    Ok(())
}
