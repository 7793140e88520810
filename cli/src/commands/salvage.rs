//! `runlog salvage --into NEW`: when sled cannot open its database and the store has no archive
//! to repair from, copies every run whose frames still verify into a new store.

use crate::ctx::Ctx;
use crate::error::{CliError, Result};
use crate::render;
use serde::Serialize;
use std::path::PathBuf;

/// Arguments of `runlog salvage`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The new store to write the salvaged runs into (a new or empty directory)
    #[arg(long, value_name = "DIR")]
    into: PathBuf,
    /// Read this copy of sled's file instead of STORE/db/db
    #[arg(long, value_name = "FILE")]
    from: Option<PathBuf>,
    /// A run id to look for besides those found in the store (repeatable)
    #[arg(long = "run", value_name = "RUN")]
    runs: Vec<String>,
}

#[derive(Debug, Serialize)]
struct Report {
    frames: usize,
    into: String,
    runs: Vec<RunReport>,
    unnamed: Vec<Unnamed>,
}

#[derive(Debug, Serialize)]
struct RunReport {
    run: String,
    head_seq: u64,
    head_hash: String,
    remembered_seq: Option<u64>,
}

#[derive(Debug, Serialize)]
struct Unnamed {
    genesis: String,
    events: u64,
}

/// Salvages, then reports each run (exit 1 if a run is shorter than the store remembered, or
/// nothing was found).
pub fn run(a: Args, ctx: &Ctx) -> Result<()> {
    ctx.directory_only("salvage")?;
    let found = runlog_store::salvage(&ctx.store, a.from.as_deref(), &a.into, &a.runs)
        .map_err(|e| crate::store::explain(&ctx.store, e))?;
    let report = Report {
        frames: found.frames,
        into: a.into.display().to_string(),
        runs: found
            .runs
            .iter()
            .map(|r| RunReport {
                run: r.run.clone(),
                head_seq: r.head.seq,
                head_hash: r.head.hash.iter().map(|b| format!("{b:02x}")).collect(),
                remembered_seq: r.remembered,
            })
            .collect(),
        unnamed: found
            .unnamed
            .iter()
            .map(|(genesis, events)| Unnamed {
                genesis: genesis.clone(),
                events: *events,
            })
            .collect(),
    };
    let short: Vec<&RunReport> = report
        .runs
        .iter()
        .filter(|r| r.remembered_seq.is_some_and(|s| s > r.head_seq))
        .collect();
    if ctx.json {
        render::json(&report)?;
    } else {
        outln!("{} verified frames found", report.frames);
        for r in &report.runs {
            match r.remembered_seq {
                Some(s) if s > r.head_seq => outln!(
                    "{}: {} events salvaged; seqs {}..={s} are lost",
                    r.run,
                    r.head_seq,
                    r.head_seq + 1
                ),
                _ => outln!("{}: {} events salvaged, whole", r.run, r.head_seq),
            }
        }
        for u in &report.unnamed {
            outln!(
                "a run of {} events whose id was not found (genesis {}): name it with --run ID",
                u.events,
                u.genesis
            );
        }
        outln!("written to {}", report.into);
    }
    if report.runs.is_empty() {
        return Err(CliError::failed("no run could be salvaged").with_hint(
            "sled zeroes its log from the first bad byte when it opens it: salvage from a copy of STORE/db/db taken before any runlog opened the damaged store (--from FILE)",
        ));
    }
    if !short.is_empty() {
        return Err(
            CliError::failed(format!("{} run(s) salvaged only in part", short.len()))
                .with_hint("what was lost is named above; the new store holds the rest"),
        );
    }
    Ok(())
}
