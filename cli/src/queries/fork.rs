//! Forking a run (`runlog fork`, `POST /v1/runs/{run}/fork`).

use runlog_replay::{Replay, Result};

/// A fork recorded: the new run, the run and seq it started from, and its head (`fork --json`,
/// the API's answer to a fork).
#[derive(Debug, Clone, serde::Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct Forked {
    /// The new run.
    #[serde(rename = "run")]
    pub new: String,
    /// The run it was forked from.
    pub from_run: String,
    /// The seq of the run it was forked from.
    #[serde(rename = "at_seq")]
    pub at: u64,
    /// The new run's head.
    pub seq: u64,
}

/// Starts run `new` (default RUN-fork-N) from the state of `run` after `at` (default its head):
/// what `runlog fork` and the API's fork do.
pub fn fork(
    log: &dyn runlog_store::EventLog,
    run: &str,
    at: Option<u64>,
    new: Option<String>,
    now: runlog_core::Timestamp,
) -> Result<Forked> {
    let replay = Replay::new(log);
    let at = match at {
        Some(at) => at,
        None => replay.head_seq(run)?,
    };
    let new = match new {
        Some(n) => n,
        None => runlog_runner::free_run_id(
            log,
            &runlog_runner::paths::name_from(&format!("{run}-fork")),
        )?,
    };
    let head = replay.fork(run, at, &new, now)?;
    Ok(Forked {
        new,
        from_run: run.to_owned(),
        at,
        seq: head.seq,
    })
}
