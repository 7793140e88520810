//! `runlog run WORKFLOW`, and what `resume` shares with it: driving an engine while its store's
//! socket serves live followers, and the closing summary.

use super::Ctx;
use crate::error::{CliError, ExitKind, Result};
use crate::render;
use crate::runner::{Context, Ended, Engine, RunOptions, Workflow};
use runlog_core::RunId;
use runlog_store::EventLog;
use std::path::{Path, PathBuf};

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
    let wf = Workflow::load(&a.workflow)?;
    let opts = RunOptions {
        quiet: a.quiet,
        jobs: jobs(a.jobs)?,
    };
    if let Some(server) = crate::serve::client::Server::find(&ctx.store) {
        let submit = crate::serve::follow::Submit {
            workflow: &a.workflow,
            run: a.run_id,
            jobs: opts.jobs,
            quiet: a.quiet,
            detach: a.detach,
        };
        return crate::serve::follow::submit_and_follow(&server, submit, ctx);
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
    let log = ctx.open_or_create()?;
    let (run, engine) = start(&log, &ctx.store, &wf, a.run_id, &opts)?;
    if a.submit_only {
        if ctx.json {
            render::json(&serde_json::json!({ "run": run, "submitted": true }));
        } else {
            println!("{run}");
        }
        return Ok(None);
    }
    drive_to_end(&log, ctx, &run, engine, |_| Ok(()))
}

/// `runlog run CHILD.toml --parent RUN/TASK`: the child run of a sub-project task, nested
/// under what the parent's depth leaves, linked to the parent right after it starts.
fn run_child(a: Args, parent: &str, ctx: &Ctx) -> Result<Option<ExitKind>> {
    let bad = || {
        CliError::input(format!("--parent {parent:?} is not RUN/TASK"))
            .with_hint("name the parent run and its sub-project task: --parent editor/buffer")
    };
    let (parent_run, task) = parent.split_once('/').ok_or_else(bad)?;
    let log = ctx.open()?;
    let state = runlog_replay::Replay::new(&log).head_state(parent_run)?;
    let task = runlog_core::TaskId::from(task);
    let Some(t) = state.task(&task).filter(|t| t.sub_project.is_some()) else {
        return Err(
            CliError::input(format!("run {parent_run} has no sub-project task {task}")).with_hint(
                "a sub-project task names a workflow file: workflow = \"phases/x.toml\"",
            ),
        );
    };
    let left = state
        .settings
        .max_depth
        .saturating_sub(state.depth(&t.spec.id));
    let wf = Workflow::load_within(&a.workflow, Some(left))?;
    let opts = RunOptions {
        quiet: a.quiet,
        jobs: jobs(a.jobs)?,
    };
    let (run, mut engine) = start(&log, &ctx.store, &wf, a.run_id, &opts)?;
    engine.link_parent(RunId::from(parent_run), task)?;
    drive_to_end(&log, ctx, &run, engine, |_| Ok(()))
}

/// Starts a run of `wf` in the store (`runlog run`, and `POST /v1/runs` of `runlog serve`):
/// its id (`run_id`, which must be new, or the workflow's name plus a counter) and the engine
/// that drives it.
pub(crate) fn start<'l>(
    log: &'l runlog_store::Store,
    store_dir: &Path,
    wf: &Workflow,
    run_id: Option<String>,
    opts: &RunOptions,
) -> Result<(String, Engine<'l>)> {
    let run = match run_id {
        Some(id) => {
            runlog_core::check_name("run", &id)?;
            if log.head(&id)?.is_some() {
                return Err(
                    CliError::input(format!("run {id} already exists in this store")).with_hint(
                        format!("resume it with `runlog resume {id}`, or choose another --run-id"),
                    ),
                );
            }
            id
        }
        None => crate::store::free_run_id(log, &crate::paths::name_from(&wf.name))?,
    };
    let context = Context {
        dir: wf.dir.clone(),
        runner: wf.runner.clone(),
        work: work_dir(store_dir, &run),
        shared: log.postgres().map(|p| p.url().to_owned()),
    };
    let mut engine = Engine::new(log, &run, runlog_core::RunState::default(), context, opts);
    engine.start(wf.start_commands(RunId::from(run.as_str())))?;
    Ok((run, engine))
}

/// How a recorded run's commands run on this host: in its workflow file's directory, with the
/// runner settings of that file (read again when it can be; the run keeps its recorded plan
/// either way), its worktrees under `work`. With notes for the user on what differs.
pub(crate) fn workflow_context(
    state: &runlog_core::RunState,
    work: PathBuf,
    log: &runlog_store::Store,
) -> (Context, Vec<String>) {
    let path = state
        .run
        .as_ref()
        .map(|r| r.workflow.clone())
        .unwrap_or_default();
    let mut notes = Vec::new();
    let (dir, runner) = match Workflow::load(Path::new(&path)) {
        Ok(wf) => {
            if state
                .run
                .as_ref()
                .is_some_and(|r| r.workflow_hash != wf.hash)
            {
                notes.push(format!("{path} changed since the run started; the run keeps its recorded plan and commands"));
            }
            (wf.dir, wf.runner)
        }
        Err(_) => {
            let dir = Path::new(&path)
                .parent()
                .map(Path::to_path_buf)
                .unwrap_or_else(|| ".".into());
            notes.push(format!("cannot read the workflow {path}; going on with the recorded plan and no replan command"));
            (dir, crate::runner::RunnerSettings::default())
        }
    };
    let context = Context {
        dir,
        runner,
        work,
        shared: log.postgres().map(|p| p.url().to_owned()),
    };
    (context, notes)
}

/// `--jobs`, checked by the same rule as the workflow's `jobs`.
pub(crate) fn jobs(jobs: Option<u32>) -> Result<Option<u32>> {
    if let Some(n) = jobs {
        runlog_core::validate_settings(&runlog_core::Settings {
            jobs: n,
            ..runlog_core::Settings::default()
        })
        .map_err(|r| {
            CliError::from(r)
                .with_hint("pass --jobs 1 or more, or leave it out for the workflow's jobs")
        })?;
    }
    Ok(jobs)
}

/// Where a run's worktrees and feedback files live: `STORE/worktrees/RUN`, absolute, because
/// commands run in the workflow's directory and must not depend on the current one.
pub(super) fn work_dir(store: &Path, run: &str) -> PathBuf {
    let worktrees = std::path::absolute(store)
        .unwrap_or_else(|_| store.to_path_buf())
        .join("worktrees");
    crate::paths::within(&worktrees, run)
}

/// Drives the run to its end, then prints the closing summary. On the shared store this
/// process holds a lease of its own and works on the run as one worker among many (see
/// `worker`); `prepare` runs once the engine is enlisted, before it drives.
pub(super) fn drive_to_end(
    log: &runlog_store::Store,
    ctx: &Ctx,
    run: &str,
    mut engine: Engine<'_>,
    prepare: impl FnOnce(&mut Engine<'_>) -> Result<()>,
) -> Result<Option<ExitKind>> {
    let member = super::worker::join_for_run(log)?;
    if let Some(m) = &member {
        m.enlist(&mut engine, true);
    }
    prepare(&mut engine)?;
    let ended = drive_serving(log, &ctx.store, run, engine)?;
    drop(member);
    finish(log, ctx, run, &ended)
}

/// Runs the engine while serving live followers from the store's socket.
pub(super) fn drive_serving(
    log: &runlog_store::Store,
    store_dir: &Path,
    run: &str,
    engine: Engine<'_>,
) -> Result<Ended> {
    let stop = std::sync::atomic::AtomicBool::new(false);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| CliError::failed(format!("cannot start the async runtime: {e}")))?;
    std::thread::scope(|scope| {
        scope.spawn(|| crate::live::serve(log, store_dir, run, &stop));
        let ended = rt.block_on(engine.drive());
        stop.store(true, std::sync::atomic::Ordering::Release);
        Ok(ended?)
    })
}

/// Prints the closing summary; the exit code says how the run ended.
pub(crate) fn finish(
    log: &dyn EventLog,
    ctx: &Ctx,
    run: &str,
    ended: &Ended,
) -> Result<Option<ExitKind>> {
    let p = runlog_replay::Replay::new(log).project(run, None, None)?;
    render::summary::print(
        &p.summary,
        &ended.state,
        ended.elapsed,
        run,
        &ctx.command(),
        ctx.json,
    );
    Ok(if ended.interrupted {
        Some(ExitKind::Interrupted)
    } else if ended.succeeded() {
        None
    } else {
        Some(ExitKind::Failed)
    })
}
