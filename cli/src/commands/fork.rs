//! `runlog fork RUN --at SEQ [--as NEW]`.

use crate::ctx::Ctx;
use crate::error::Result;
use crate::queries::fork::{fork, Forked};
use crate::render;
use runlog_replay::Replay;

/// Arguments of `runlog fork`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The run to fork.
    run: String,
    /// The seq to start from [default: the head]
    #[arg(long, value_name = "SEQ")]
    at: Option<u64>,
    /// The new run's id [default: RUN-fork-N]
    #[arg(long = "as", value_name = "NEW")]
    new: Option<String>,
}

/// Starts a new run from the state of `run` after `--at`.
pub fn run(a: Args, ctx: &Ctx) -> Result<()> {
    let log = ctx.open()?;
    let run = a.run.as_str();
    let forked = fork(&log, run, a.at, a.new, ctx.host.clock().now())?;
    let Forked { new, at, .. } = forked.clone();
    let state_at = Replay::new(&log).state_at_or_head(run, Some(at))?;
    for note in super::children::after_fork(&state_at, &new) {
        errln!("note: {note}");
    }
    if ctx.json {
        render::json(&forked)?;
    } else {
        outln!("forked {run}@{at} as {new}; continue it with `runlog resume {new}`");
    }
    Ok(())
}
