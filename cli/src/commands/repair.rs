//! `runlog repair`: rebuilds the store's sled database from its archive when sled lost events
//! or cannot be opened; the damaged database is kept aside, and every run is verified after.

use crate::ctx::Ctx;
use crate::error::{CliError, Result};
use crate::render;
use serde::Serialize;

/// Arguments of `runlog repair`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// What a repair did (`--json`).
#[derive(Debug, Serialize)]
struct Report {
    /// Where the damaged database was moved.
    aside: Option<String>,
    /// Entries of the archive and the write-ahead log replayed into the new database.
    entries: u64,
    /// Stretches of the archive that could not be read.
    unreadable: Vec<String>,
    /// Every run as `runlog verify --json` reports it, with the head the store remembered.
    runs: Vec<RunReport>,
}

#[derive(Debug, Serialize)]
struct RunReport {
    #[serde(flatten)]
    checked: crate::queries::verify::Checked,
    remembered_seq: Option<u64>,
}

/// Rebuilds, then verifies every run; exit 1 if any is still damaged (what is lost is named).
pub fn run(_a: Args, ctx: &Ctx) -> Result<()> {
    ctx.directory_only("repair")?;
    if !ctx.json {
        errln!(
            "rebuilding the sled database of {} from its archive ...",
            ctx.store.display()
        );
    }
    let repaired =
        runlog_store::repair(&ctx.store).map_err(|e| crate::store::explain(&ctx.store, e))?;
    let log = ctx.open()?;
    let mut runs = Vec::new();
    for r in &repaired.runs {
        runs.push(RunReport {
            checked: crate::queries::verify::check(&log, &r.run)?,
            remembered_seq: r.remembered,
        });
    }
    let report = Report {
        aside: repaired.aside.as_ref().map(|p| p.display().to_string()),
        entries: repaired.entries,
        unreadable: repaired
            .unreadable
            .iter()
            .map(ToString::to_string)
            .collect(),
        runs,
    };
    let damaged = report.runs.iter().filter(|r| !r.checked.is_ok()).count();
    if ctx.json {
        render::json(&report)?;
    } else {
        if let Some(aside) = &report.aside {
            outln!("the damaged database was moved to {aside}");
        }
        outln!("{} archived entries replayed", report.entries);
        for u in &report.unreadable {
            outln!("archive: {u}");
        }
        for r in &report.runs {
            super::verify::print(&r.checked)?;
        }
    }
    if damaged > 0 {
        return Err(CliError::failed(format!(
            "{damaged} run(s) could not be rebuilt in full (the archive lacks what is named above)"
        ))
        .with_hint("export what is left with `runlog export`, or fork each run from a seq before its damage"));
    }
    Ok(())
}
