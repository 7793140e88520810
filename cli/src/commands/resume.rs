//! `runlog resume RUN`: continue an interrupted, crashed or paused run from its log.

use super::run::{drive_to_end, jobs, work_dir, workflow_context};
use super::Ctx;
use crate::error::{ExitKind, Result};
use crate::runner::{Engine, RunOptions};
use runlog_replay::Replay;

/// Arguments of `runlog resume`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The run.
    run: String,
    /// Tasks at once [default: the run's settings.jobs]
    #[arg(long)]
    jobs: Option<u32>,
    /// Plain lines, no live view.
    #[arg(long)]
    quiet: bool,
}

/// Replays the run, records how the last runner stopped if nothing did, and drives it on.
pub fn run(a: Args, ctx: &Ctx) -> Result<Option<ExitKind>> {
    let run = a.run.as_str();
    let jobs = jobs(a.jobs)?;
    let log = ctx.open()?;
    let state = Replay::new(&log).head_state(run)?;
    let (context, notes) = workflow_context(&state, work_dir(&ctx.store, run), &log);
    for note in notes {
        eprintln!("note: {note}");
    }
    let opts = RunOptions {
        quiet: a.quiet,
        jobs,
    };
    let notes = super::children::on_resume(&state, &|task, child| {
        crate::runner::is_child_of(&log, child.as_str(), run, task).unwrap_or(false)
    });
    let engine = Engine::new(&log, run, state, context, &opts);
    if engine.succeeded() {
        println!("run {run} already succeeded; nothing to resume");
        return Ok(None);
    }
    for note in notes {
        eprintln!("note: {note}");
    }
    drive_to_end(&log, ctx, run, engine, |e| Ok(e.prepare_resume()?))
}
