//! `runlog log RUN`: the event history; with `--follow`, tails a run being executed (through
//! its runner's socket).

use super::Ctx;
use crate::error::{CliError, Result};
use crate::render::event::print_event;
use runlog_core::{Event, EventKind};
use runlog_replay::Replay;

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
    /// Keep printing events as a running `runlog run` appends them, until it exits.
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
    if a.follow && ctx.shared.is_some() {
        return follow_shared(&a, &log, ctx.json);
    }
    if a.follow {
        let followed = crate::live::connect(&ctx.store, run, a.from.max(1), &mut |seq, e| {
            if a.keeps(seq, &e) {
                print_event(seq, &e, ctx.json);
            }
        })?;
        if followed {
            return Ok(());
        }
        eprintln!(
            "note: run {run} is not being executed (no runner serves it); showing its history"
        );
    }
    let replay = Replay::new(&log);
    let head = replay.head_seq(run)?;
    if a.from > head {
        return Err(runlog_replay::ReplayError::SeqPastHead {
            run: run.to_owned(),
            seq: a.from,
            head,
        }
        .into());
    }
    let to = a.to.unwrap_or(head).min(head);
    runlog_replay::events::for_each(&log, run, a.from.max(1), to, &mut |seq, _, e| {
        if a.keeps(seq, &e) {
            print_event(seq, &e, ctx.json);
        }
        Ok(true)
    })?;
    Ok(())
}

/// `--follow` on the shared store: the workers of a run may be on any hosts, so the history is
/// read, then the store's own subscription followed until the run stops running.
fn follow_shared(a: &Args, log: &runlog_store::Store, json: bool) -> Result<()> {
    use runlog_store::EventLog;
    let run = a.run.as_str();
    let appended = log.subscribe(Some(run));
    let mut next = a.from.max(1);
    let mut running = true;
    let show = |seq: u64, e: Event, running: &mut bool| {
        *running = match e.kind {
            EventKind::RunFinished { .. } | EventKind::RunInterrupted { .. } => false,
            EventKind::RunStarted { .. } | EventKind::RunResumed { .. } => true,
            _ => *running,
        };
        if a.keeps(seq, &e) {
            print_event(seq, &e, json);
        }
    };
    runlog_replay::events::for_each(log, run, next, u64::MAX, &mut |seq, _, e| {
        next = seq + 1;
        show(seq, e, &mut running);
        Ok(true)
    })?;
    if next == a.from.max(1) || !running {
        return Ok(());
    }
    for record in appended.iter() {
        if record.seq < next {
            continue;
        }
        next = record.seq + 1;
        let e = runlog_replay::events::decode(run, record.seq, &record.body)?;
        show(record.seq, e, &mut running);
        if !running {
            break;
        }
    }
    Ok(())
}
