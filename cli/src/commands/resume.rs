//! `runlog resume RUN`: continue an interrupted, crashed or paused run from its log.

use super::run::{drive_serving, finish, jobs, work_dir};
use super::Ctx;
use crate::error::{ExitKind, Result};
use crate::runner::{Context, Engine, RunOptions, RunnerSettings, Workflow};
use runlog_replay::Replay;
use std::path::Path;

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
    let path = state
        .run
        .as_ref()
        .map(|r| r.workflow.clone())
        .unwrap_or_default();
    let (dir, runner) = match Workflow::load(Path::new(&path)) {
        Ok(wf) => {
            if state
                .run
                .as_ref()
                .is_some_and(|r| r.workflow_hash != wf.hash)
            {
                eprintln!("note: {path} changed since the run started; the run keeps its recorded plan and commands");
            }
            (wf.dir, wf.runner)
        }
        Err(_) => {
            let dir = Path::new(&path)
                .parent()
                .map(Path::to_path_buf)
                .unwrap_or_else(|| ".".into());
            eprintln!("note: cannot read the workflow {path}; resuming with the recorded plan and no replan command");
            (dir, RunnerSettings::default())
        }
    };
    let context = Context {
        dir,
        runner,
        work: work_dir(&ctx.store, run),
    };
    let opts = RunOptions {
        quiet: a.quiet,
        jobs,
    };
    let notes = super::children::on_resume(&state, &|task, child| {
        crate::runner::is_child_of(&log, child.as_str(), run, task).unwrap_or(false)
    });
    let mut engine = Engine::new(&log, run, state, context, &opts);
    if engine.succeeded() {
        println!("run {run} already succeeded; nothing to resume");
        return Ok(None);
    }
    for note in notes {
        eprintln!("note: {note}");
    }
    engine.prepare_resume()?;
    let ended = drive_serving(&log, &ctx.store, run, engine)?;
    finish(&log, ctx, run, &ended)
}
