//! `runlog run WORKFLOW`, and what `resume` shares with it: driving an engine in this process
//! until its run ends, and the closing summary.

mod submit;

use crate::ctx::Ctx;
use crate::error::{CliError, ExitKind, Result};
use crate::otlp;
use crate::render;
use crate::signals::Signals;
use crate::view::View;
use runlog_runner::lease::Member;
use runlog_runner::{Ended, Engine, Launcher, RunOptions, RunnerError, Workflow};
use runlog_store::EventLog;
use std::path::PathBuf;
use std::sync::Arc;

/// Arguments of `runlog run`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The workflow file (TOML).
    workflow: PathBuf,
    /// The run's id [default: the workflow name plus a counter]
    #[arg(long, value_name = "ID")]
    run_id: Option<String>,
    /// Tasks at once [default: the workflow's settings.jobs]
    #[arg(long)]
    jobs: Option<u32>,
    /// Plain lines, no live view.
    #[arg(long)]
    quiet: bool,
    /// With a `runlog serve` serving the store: print the run's id and return at once (the
    /// server executes the run).
    #[arg(long)]
    detach: bool,
    /// On the shared store: record the run's start, print its id and return; `runlog worker`s
    /// execute it. Without it, this process works on the run as one worker among them.
    #[arg(long)]
    submit_only: bool,
    /// Live export of the run's trace.
    #[command(flatten)]
    trace: otlp::TraceArgs,
    /// A server on another host to submit the run to.
    #[command(flatten)]
    remote: crate::client::RemoteArgs,
    /// Run as the sub-project of TASK of RUN, in the same store: how a task with
    /// `workflow = "..."` starts its child run. The two runs are linked both ways, and the
    /// child's nesting counts under the parent's max_depth. Never handed to a server.
    #[arg(long, value_name = "RUN/TASK")]
    parent: Option<String>,
}

/// Validates the workflow (nothing runs if it is wrong), starts the run and drives it.
pub fn run(a: Args, ctx: &Ctx) -> Result<Option<ExitKind>> {
    if let Some(parent) = a.parent.clone() {
        return run_child(a, &parent, ctx);
    }
    let opts = RunOptions::with_jobs(a.jobs).map_err(jobs_refused)?;
    let submit_to = |server: crate::client::Server| {
        let submit = submit::Submit {
            workflow: &a.workflow,
            run: a.run_id.clone(),
            jobs: opts.jobs(),
            quiet: a.quiet,
            detach: a.detach,
        };
        submit::submit_and_follow(&server, submit, ctx)
    };
    // A remote server checks the workflow itself: the path is on its host.
    if let Some(server) = crate::client::Server::remote(&a.remote)? {
        return submit_to(server);
    }
    let wf = Workflow::load(&a.workflow)?;
    if let Some(server) = crate::client::Server::find(&ctx.store) {
        return submit_to(server);
    }
    if a.detach {
        return Err(CliError::input(
            "--detach needs a `runlog serve` to execute the run, and none serves this store",
        )
        .with_hint("start one (`runlog serve &`), or run without --detach"));
    }
    if a.submit_only && ctx.shared.is_none() {
        return Err(CliError::input(
            "--submit-only hands the run to `runlog worker`s, which work on the shared store only",
        )
        .with_hint("use --store postgres://…, or --detach with a `runlog serve` on this store"));
    }
    let launcher = Launcher::new(Arc::new(ctx.open_or_create()?), &ctx.store, &ctx.host);
    let engine = launcher.start(&wf, a.run_id, opts)?;
    if a.submit_only {
        let run = engine.run_id();
        if ctx.json {
            render::json(&serde_json::json!({ "run": run, "submitted": true }))?;
        } else {
            outln!("{run}");
        }
        return Ok(None);
    }
    drive_to_end(&launcher, ctx, engine, a.quiet, &a.trace)
}

/// `runlog run CHILD.toml --parent RUN/TASK`: the child run of a sub-project task, nested
/// under what the parent's depth leaves, linked to the parent right after it starts.
fn run_child(a: Args, parent: &str, ctx: &Ctx) -> Result<Option<ExitKind>> {
    let Some((parent_run, task)) = parent.split_once('/') else {
        return Err(
            CliError::input(format!("--parent {parent:?} is not RUN/TASK"))
                .with_hint("name the parent run and its sub-project task: --parent editor/buffer"),
        );
    };
    let launcher = Launcher::new(Arc::new(ctx.open()?), &ctx.store, &ctx.host);
    let task = runlog_core::TaskId::from(task);
    let opts = RunOptions::with_jobs(a.jobs).map_err(jobs_refused)?;
    let engine = launcher.start_child(&a.workflow, parent_run, &task, a.run_id, opts)?;
    drive_to_end(&launcher, ctx, engine, a.quiet, &a.trace)
}

/// `--jobs` refused by the rules, with the flag's hint.
pub(super) fn jobs_refused(e: RunnerError) -> CliError {
    CliError::from(e).with_hint("pass --jobs 1 or more, or leave it out for the workflow's jobs")
}

/// Drives the run to its end in this process, then prints the closing summary: Ctrl-C, SIGTERM
/// or a closed terminal interrupts it, the live view shows it (plain lines with `quiet`). On
/// the shared store this process holds a lease of its own and works on the run as one worker
/// among many (see `worker`).
pub(super) fn drive_to_end(
    launcher: &Launcher,
    ctx: &Ctx,
    mut engine: Engine,
    quiet: bool,
    trace: &otlp::TraceArgs,
) -> Result<Option<ExitKind>> {
    let member = Member::join(launcher.store(), None, ctx.host.lease(), &ctx.host)?;
    if let Some(m) = &member {
        m.enlist(&mut engine, true);
    }
    let run = engine.run_id().to_owned();
    let target = trace.target()?;
    let (observer, exporting) = otlp::traced(
        launcher.log().clone(),
        &run,
        target.as_ref(),
        View::new(quiet),
    )?;
    let rt = crate::runtime::for_command("run")?;
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let ended = rt.block_on(async {
        tokio::spawn(Signals::new()?.stop_on_any(stop));
        let engine = engine.observed_by(observer).stop_when(stopped);
        Ok::<_, CliError>(engine.drive().await?)
    })?;
    drop(member);
    let exit = finish(launcher.log().as_ref(), ctx, &ctx.command(), &run, &ended);
    if let Some(exporting) = exporting {
        errln!("{}", exporting.finish_report().said(&run));
    }
    exit
}

/// Prints the closing summary; the exit code says how the run ended.
pub(super) fn finish(
    log: &dyn EventLog,
    ctx: &Ctx,
    cmd: &str,
    run: &str,
    ended: &Ended,
) -> Result<Option<ExitKind>> {
    let p = runlog_replay::Replay::new(log).project(run, None, None)?;
    render::summary::print(&p.summary, &ended.state, ended.elapsed, run, cmd, ctx.json);
    Ok(if ended.interrupted {
        Some(ExitKind::Interrupted)
    } else if ended.succeeded() {
        None
    } else {
        Some(ExitKind::Failed)
    })
}
