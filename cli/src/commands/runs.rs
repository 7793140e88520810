//! `runlog runs`: every run in the store with its status, size (its events and the blobs they
//! point to; `runlog du` says more) and lineage.

use crate::ctx::Ctx;
use crate::error::Result;
use crate::queries::runs::rows;
use crate::render;

/// Arguments of `runlog runs`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Lists the runs.
pub fn run(_: Args, ctx: &Ctx) -> Result<()> {
    let log = ctx.open()?;
    let rows = rows(&log)?;
    if ctx.json {
        return render::json(&rows);
    }
    if rows.is_empty() {
        outln!("no runs in {}", ctx.store_name());
        return Ok(());
    }
    outln!(
        "{:<28} {:<12} {:<10} {:>7} {:>10}  lineage",
        "RUN",
        "STATUS",
        "OUTCOME",
        "EVENTS",
        "SIZE"
    );
    for r in rows {
        let size = crate::queries::du::history_bytes(&log, &ctx.store, &r.run)
            .map_or_else(|_| "?".to_owned(), render::bytes);
        let outcome = r.outcome.as_ref().map_or("", runlog_core::RunOutcome::name);
        let fork = match (&r.fork_of, r.fork_at) {
            (Some(p), Some(at)) => Some(format!("fork of {p}@{at}")),
            _ => None,
        };
        let parent = r
            .sub_project_of
            .as_ref()
            .map(|p| format!("sub-project of {p}"));
        let lineage = [fork, parent]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(", ");
        outln!(
            "{:<28} {:<12} {:<10} {:>7} {size:>10}  {lineage}",
            r.run,
            r.status,
            outcome,
            r.events
        );
    }
    Ok(())
}
