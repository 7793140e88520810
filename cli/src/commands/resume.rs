//! `runlog resume RUN`: continue an interrupted, crashed or paused run from its log.

use super::run::drive_to_end;
use crate::ctx::Ctx;
use crate::error::{ExitKind, Result};
use runlog_runner::{Launcher, RunOptions};
use std::sync::Arc;

/// Arguments of `runlog resume`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The run.
    run: String,
    #[command(flatten)]
    driving: Driving,
}

/// How a recorded run is driven on (`resume`, `rerun`).
#[derive(Debug, clap::Args)]
pub(super) struct Driving {
    /// Tasks at once [default: the run's settings.jobs]
    #[arg(long)]
    jobs: Option<u32>,
    /// Plain lines, no live view.
    #[arg(long)]
    quiet: bool,
    /// Live export of the run's trace.
    #[command(flatten)]
    trace: crate::otlp::TraceArgs,
}

impl Driving {
    /// The options, checked.
    pub(super) fn options(&self) -> Result<RunOptions> {
        RunOptions::with_jobs(self.jobs).map_err(super::run::jobs_refused)
    }

    /// Drives `engine` to its end in this process.
    pub(super) fn drive(
        &self,
        launcher: &Launcher,
        ctx: &Ctx,
        engine: runlog_runner::Engine,
    ) -> Result<Option<ExitKind>> {
        drive_to_end(launcher, ctx, engine, self.quiet, &self.trace)
    }
}

/// Replays the run, records how the last runner stopped if nothing did, and drives it on.
pub fn run(a: Args, ctx: &Ctx) -> Result<Option<ExitKind>> {
    let run = a.run.as_str();
    let opts = a.driving.options()?;
    let launcher = Launcher::new(Arc::new(ctx.open()?), &ctx.store, &ctx.host);
    let (engine, notes) = launcher.resume(run, opts)?;
    for note in notes {
        errln!("note: {note}");
    }
    if engine.succeeded() {
        outln!("run {run} already succeeded; nothing to resume");
        return Ok(None);
    }
    let log = launcher.log().as_ref();
    let notes = super::children::on_resume(engine.state(), &|task, child| {
        runlog_runner::is_child_of(log, child.as_str(), run, task).unwrap_or(false)
    });
    for note in notes {
        errln!("note: {note}");
    }
    a.driving.drive(&launcher, ctx, engine)
}
