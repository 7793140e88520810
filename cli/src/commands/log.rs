//! `runlog log RUN`: the event history; with `--follow`, tails a run being executed.

use crate::ctx::Ctx;
use crate::error::{CliError, Result};
use crate::follow::{Ends, FollowError, Followed, Follower};
use crate::render::event::write_event;
use runlog_core::{Event, EventKind};
use runlog_replay::Replay;
use runlog_runner::{marker, Layout};
use runlog_store::Store;
use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

/// Arguments of `runlog log`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The run.
    run: String,
    /// First seq.
    #[arg(long, default_value_t = 1)]
    from: u64,
    /// Last seq [default: the head]
    #[arg(long)]
    to: Option<u64>,
    /// Only events about this task.
    #[arg(long)]
    task: Option<String>,
    /// Only events of this kind (repeatable), e.g. gate-decided, stage-failed.
    #[arg(long = "kind", value_name = "KIND")]
    kinds: Vec<String>,
    /// Keep printing events as they are appended while the run is executed (by `runlog run`,
    /// `runlog serve` or workers), until it ends.
    #[arg(long)]
    follow: bool,
}

impl Args {
    /// Whether an event passes the filters.
    fn keeps(&self, seq: u64, e: &Event) -> bool {
        self.to.is_none_or(|to| seq <= to)
            && self
                .task
                .as_deref()
                .is_none_or(|t| e.kind.task().is_some_and(|id| id.as_str() == t))
            && (self.kinds.is_empty() || self.kinds.iter().any(|k| k == e.kind.name()))
    }
}

/// Prints the events that pass the filters.
pub fn run(a: Args, ctx: &Ctx) -> Result<()> {
    for k in &a.kinds {
        if !EventKind::NAMES.contains(&k.as_str()) {
            return Err(CliError::input(format!("unknown event kind {k:?}"))
                .with_hint(format!("kinds: {}", EventKind::NAMES.join(", "))));
        }
    }
    let run = a.run.as_str();
    let log = ctx.open()?;
    let replay = Replay::new(&log);
    let head = replay.head_seq(run)?;
    // A run of a store directory is executed while its runner holds its marker; on the shared
    // store any host's workers may execute it, and its own events say whether it runs.
    let marker = ctx
        .shared
        .is_none()
        .then(|| Layout::new(&ctx.store, run).marker());
    if a.follow {
        if marker.as_deref().is_none_or(marker::is_held) {
            return follow(&a, Arc::new(log), marker.as_deref(), ctx.json);
        }
        errln!(
            "note: run {run} is not being executed (no runner executes it); showing its history"
        );
    }
    if a.from > head {
        return Err(runlog_replay::ReplayError::SeqPastHead {
            run: run.to_owned(),
            seq: a.from,
            head,
        }
        .into());
    }
    let to = a.to.unwrap_or(head).min(head);
    let mut out = crate::render::listing();
    let mut written = Ok(());
    runlog_replay::events::for_each(&log, run, a.from.max(1), to, &mut |seq, e| {
        if a.keeps(seq, &e) {
            written = write_event(&mut out, seq, &e, ctx.json);
        }
        Ok(written.is_ok())
    })?;
    written.and_then(|()| out.flush()).map_err(CliError::stdout)
}

/// `--follow`: the history, then each event as it is appended, until the run ends. When the
/// run's runner goes (`marker` no longer held) before that, what the log holds is printed and
/// the error says how to go on.
fn follow(a: &Args, log: Arc<Store>, marker: Option<&std::path::Path>, json: bool) -> Result<()> {
    let run = a.run.as_str();
    let mut follower = Follower::new(log, run, a.from, Ends::AtRunEnd);
    let mut runner_gone = false;
    loop {
        let step = follower.next(WAIT).map_err(|e| followed_to(e, run))?;
        match step {
            Some(Followed::Event(seq, e)) => {
                if a.keeps(seq, &e) {
                    // Line by line: a follower shows each event as it comes.
                    write_event(&mut crate::render::stdout(), seq, &e, json)
                        .map_err(CliError::stdout)?;
                }
            }
            Some(Followed::Idle) => {
                if marker.is_some_and(|m| !marker::is_held(m)) && !runner_gone {
                    runner_gone = true;
                    follower.stop_at_head();
                }
            }
            None => break,
        }
    }
    if runner_gone && follower.running() {
        return Err(CliError::failed(format!(
            "the runner of run {run} stopped before the run ended (at seq {})",
            follower.next_seq() - 1
        ))
        .with_hint(format!("`runlog resume {run}` continues it")));
    }
    Ok(())
}

/// How often a follower looks whether the run's runner is still there.
const WAIT: Duration = Duration::from_millis(200);

/// A follower that had to stop, and where to continue from.
fn followed_to(e: FollowError, run: &str) -> CliError {
    match e {
        FollowError::Lagged { next, .. } | FollowError::Closed { next, .. } => {
            CliError::failed(e.to_string()).with_hint(format!(
                "continue with `runlog log {run} --from {next} --follow`"
            ))
        }
        FollowError::Replay(r) => r.into(),
    }
}
