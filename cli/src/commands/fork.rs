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

/// Starts a new run from the state of `run` after `--at`.
pub fn run(a: Args, ctx: &Ctx) -> Result<()> {
    let log = ctx.open()?;
    let replay = Replay::new(&log);
    let run = a.run.as_str();
    let at = match a.at {
        Some(at) => at,
        None => replay.head_seq(run)?,
    };
    let new = match a.new {
        Some(n) => n,
        None => crate::store::free_run_id(&log, &crate::paths::name_from(&format!("{run}-fork")))?,
    };
    let head = replay.fork(run, at, &new, Clock::from_env().now())?;
    if ctx.json {
        render::json(
            &serde_json::json!({"run": new, "from_run": run, "at_seq": at, "seq": head.seq}),
        );
    } else {
        println!("forked {run}@{at} as {new}; continue it with `runlog resume {new}`");
    }
    Ok(())
}
