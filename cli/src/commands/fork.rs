//! `runlog fork RUN --at SEQ [--as NEW]`.

use super::Ctx;
use crate::error::Result;
use crate::render;
use crate::runner::clock::Clock;
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

/// A fork recorded: the new run, the seq it started from, and its head.
pub(crate) struct Forked {
    pub new: String,
    pub at: u64,
    pub seq: u64,
}

/// Starts run `new` (default RUN-fork-N) from the state of `run` after `at` (default its head):
/// what `runlog fork` and the API's fork do.
pub(crate) fn fork(
    log: &runlog_store::Store,
    run: &str,
    at: Option<u64>,
    new: Option<String>,
) -> Result<Forked> {
    let replay = Replay::new(log);
    let at = match at {
        Some(at) => at,
        None => replay.head_seq(run)?,
    };
    let new = match new {
        Some(n) => n,
        None => crate::store::free_run_id(log, &crate::paths::name_from(&format!("{run}-fork")))?,
    };
    let head = replay.fork(run, at, &new, Clock::from_env().now())?;
    Ok(Forked {
        new,
        at,
        seq: head.seq,
    })
}

/// Starts a new run from the state of `run` after `--at`.
pub fn run(a: Args, ctx: &Ctx) -> Result<()> {
    let log = ctx.open()?;
    let run = a.run.as_str();
    let Forked { new, at, seq } = fork(&log, run, a.at, a.new)?;
    let state_at = Replay::new(&log).state_at_or_head(run, Some(at))?;
    for note in super::children::after_fork(&state_at, &new) {
        eprintln!("note: {note}");
    }
    if ctx.json {
        render::json(&serde_json::json!({"run": new, "from_run": run, "at_seq": at, "seq": seq}));
    } else {
        println!("forked {run}@{at} as {new}; continue it with `runlog resume {new}`");
    }
    Ok(())
}
