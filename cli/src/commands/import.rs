//! `runlog import FILE [--as NEW]`.

use crate::ctx::Ctx;
use crate::error::{bad_file, Result};
use crate::render;
use runlog_replay::export::import as import_run;
use std::path::PathBuf;

/// Arguments of `runlog import`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The export file; `-` reads it from standard input (`runlog export RUN | runlog --store
    /// postgres://… import -`).
    file: PathBuf,
    /// Import under another id.
    #[arg(long = "as", value_name = "NEW")]
    new: Option<String>,
}

/// Imports a `runlog export` file: it is re-encoded and its chain recomputed.
pub fn run(a: Args, ctx: &Ctx) -> Result<()> {
    // The file first: a missing one must not leave a new empty store behind.
    let input: Box<dyn std::io::Read> = if a.file.as_os_str() == "-" {
        Box::new(std::io::stdin().lock())
    } else {
        Box::new(std::fs::File::open(&a.file).map_err(|e| {
            bad_file(
                format!("cannot read: {e}"),
                &a.file,
                "pass a file written by `runlog export RUN -o FILE`, or - for standard input",
            )
        })?)
    };
    let log = ctx.open_or_create()?;
    let imported = import_run(&log, &mut std::io::BufReader::new(input), a.new.as_deref())?;
    if ctx.json {
        render::json(&imported)?;
    } else {
        outln!(
            "imported {} events as run {} (head {}{})",
            imported.events,
            imported.run,
            imported.head_hash,
            if imported.same_head_hash {
                ", same as the export"
            } else {
                "; another id, another chain"
            }
        );
    }
    Ok(())
}
