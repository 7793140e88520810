//! `runlog du [RUN…]`: where the store's space goes, per run and in total.

use crate::ctx::Ctx;
use crate::error::Result;
use crate::queries::du::{event_bytes, run_space, store_space, RunSpace};
use crate::render;
use crate::render::bytes;
use runlog_store::EventLog;

/// Arguments of `runlog du`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The runs [default: every run in the store]
    runs: Vec<String>,
}

/// Prints each run's events, blobs, snapshots and worktrees, then the store's files by kind.
pub fn run(a: Args, ctx: &Ctx) -> Result<()> {
    let log = ctx.open()?;
    let known: Vec<String> = log.runs()?.into_iter().map(|m| m.run).collect();
    let runs = if a.runs.is_empty() {
        known.clone()
    } else {
        for r in &a.runs {
            if !known.contains(r) || runlog_replay::forgotten::is_register(r) {
                return Err(runlog_replay::forgotten::unknown_run(&log, r).into());
            }
        }
        a.runs.clone()
    };
    let mut spaces = Vec::with_capacity(runs.len());
    for r in &runs {
        spaces.push(run_space(&log, &ctx.store, r)?);
    }
    // sled's overhead is over every run's events, whichever runs are shown: those shown are
    // counted already.
    let mut all_events: u64 = spaces.iter().map(|s| s.event_bytes).sum();
    for r in known.iter().filter(|r| !runs.contains(r)) {
        all_events += event_bytes(&log, r)?;
    }
    let store = ctx
        .shared
        .is_none()
        .then(|| store_space(&ctx.store, all_events));
    if ctx.json {
        spaces.iter().try_for_each(render::json)?;
        if let Some(s) = &store {
            render::json(&serde_json::json!({ "store": s }))?;
        }
        return Ok(());
    }
    outln!(
        "{:<28} {:>8} {:>10} {:>10} {:>10} {:>10} {:>10}",
        "RUN",
        "EVENTS",
        "EVENT B",
        "BLOBS",
        "SNAPSHOTS",
        "WORKTREES",
        "TOTAL"
    );
    for s in &spaces {
        line(s)?;
    }
    let start = RunSpace {
        run: format!("{} run(s)", spaces.len()),
        ..RunSpace::default()
    };
    let sum = spaces.iter().fold(start, |mut t, s| {
        t.events += s.events;
        t.event_bytes += s.event_bytes;
        t.blob_bytes += s.blob_bytes;
        t.snapshot_bytes += s.snapshot_bytes;
        t.worktree_bytes += s.worktree_bytes;
        t.total_bytes += s.total_bytes;
        t
    });
    if spaces.len() > 1 {
        line(&sum)?;
    }
    match store {
        Some(s) => {
            outln!(
                "store {}: {} on disk: sled {} ({} beyond the events it holds), archive {} in {} segment(s), WAL {}, blobs {}, snapshots {}, worktrees {}, other {}",
                ctx.store_name(),
                bytes(s.total_bytes),
                bytes(s.sled_bytes),
                bytes(s.sled_overhead_bytes),
                bytes(s.archive_bytes),
                s.archive_segments,
                bytes(s.wal_bytes),
                bytes(s.blob_bytes),
                bytes(s.snapshot_bytes),
                bytes(s.worktree_bytes),
                bytes(s.other_bytes),
            );
            if a.runs.is_empty() && sum.events > 0 {
                outln!(
                    "  {:.1} bytes on disk per event (sled, WAL and archive), {:.1} of them the event itself",
                    (s.sled_bytes + s.archive_bytes + s.wal_bytes) as f64 / sum.events as f64,
                    all_events as f64 / sum.events as f64
                );
            }
        }
        None => outln!(
            "store {}: in PostgreSQL (its size: `SELECT pg_size_pretty(pg_database_size(current_database()))`); worktrees here {}",
            ctx.store_name(),
            bytes(sum.worktree_bytes)
        ),
    }
    Ok(())
}

fn line(s: &RunSpace) -> Result<()> {
    outln!(
        "{:<28} {:>8} {:>10} {:>10} {:>10} {:>10} {:>10}",
        s.run,
        s.events,
        bytes(s.event_bytes),
        bytes(s.blob_bytes),
        bytes(s.snapshot_bytes),
        bytes(s.worktree_bytes),
        bytes(s.total_bytes)
    );
    Ok(())
}
