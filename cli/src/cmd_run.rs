//! `runlog run` and `runlog resume`.

use crate::error::{CliError, ExitKind, Result};
use crate::runner::{Context, Ended, Engine, RunOptions};
use crate::workflow::Workflow;
use runlog_core::{RunId, RunOutcome, RunStatus};
use runlog_replay::Replay;
use runlog_store::EventLog;
use std::path::Path;

fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| CliError::failed(format!("cannot start the async runtime: {e}")))
}

/// `dir` made absolute: commands run in the workflow's directory, so every path handed to
/// them (RUNLOG_WORKTREE, RUNLOG_FEEDBACK) must not depend on the current directory.
fn absolute(dir: &Path) -> std::path::PathBuf {
    std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf())
}

/// Runs the engine while serving live followers from the store's socket.
fn drive_serving(log: &runlog_store::Log, store_dir: &Path, engine: Engine<'_>) -> Result<Ended> {
    let stop = std::sync::atomic::AtomicBool::new(false);
    let rt = runtime()?;
    std::thread::scope(|scope| {
        scope.spawn(|| crate::live::serve(log, store_dir, &stop));
        let ended = rt.block_on(engine.drive());
        stop.store(true, std::sync::atomic::Ordering::Release);
        ended
    })
}

/// `runlog run WORKFLOW`.
pub fn run(
    store_dir: &Path,
    workflow: &Path,
    run_id: Option<String>,
    opts: RunOptions,
    json: bool,
) -> Result<Option<ExitKind>> {
    let wf = Workflow::load(workflow)?;
    let log = crate::store::open(store_dir, true)?;
    let run = match run_id {
        Some(id) => {
            if log.head(&id)?.is_some() {
                return Err(CliError::input(format!(
                    "run {id} already exists in {}",
                    store_dir.display()
                ))
                .with_hint(format!(
                    "resume it with `runlog resume {id}`, or choose another --run-id"
                )));
            }
            id
        }
        None => crate::store::free_run_id(&log, &wf.name)?,
    };
    let ctx = Context {
        dir: wf.dir.clone(),
        replan: wf.replan.clone(),
        work: absolute(store_dir).join("worktrees").join(&run),
    };
    let mut engine = Engine::new(&log, &run, runlog_core::RunState::default(), ctx, &opts);
    engine.start(wf.start_command(RunId::from(run.as_str())))?;
    let ended = drive_serving(&log, store_dir, engine)?;
    report(&log, store_dir, &run, &ended, json)
}

/// `runlog resume RUN`.
pub fn resume(
    store_dir: &Path,
    run: &str,
    opts: RunOptions,
    json: bool,
) -> Result<Option<ExitKind>> {
    let log = crate::store::open(store_dir, false)?;
    let state = Replay::new(&log).head_state(run)?;
    let path = state
        .run
        .as_ref()
        .map(|r| r.workflow.clone())
        .unwrap_or_default();
    let (dir, replan) = match Workflow::load(Path::new(&path)) {
        Ok(wf) => {
            if state
                .run
                .as_ref()
                .is_some_and(|r| r.workflow_hash != wf.hash)
            {
                eprintln!("note: {path} changed since the run started; the run keeps its recorded plan and commands");
            }
            (wf.dir, wf.replan)
        }
        Err(_) => {
            let dir = Path::new(&path)
                .parent()
                .map(Path::to_path_buf)
                .unwrap_or_else(|| ".".into());
            eprintln!("note: cannot read the workflow {path}; resuming with the recorded plan and no replan command");
            (dir, None)
        }
    };
    let ctx = Context {
        dir,
        replan,
        work: absolute(store_dir).join("worktrees").join(run),
    };
    let mut engine = Engine::new(&log, run, state, ctx, &opts);
    if engine.succeeded() {
        println!("run {run} already succeeded; nothing to resume");
        return Ok(None);
    }
    engine.prepare_resume()?;
    let ended = drive_serving(&log, store_dir, engine)?;
    report(&log, store_dir, run, &ended, json)
}

fn report(
    log: &dyn EventLog,
    store_dir: &Path,
    run: &str,
    ended: &Ended,
    json: bool,
) -> Result<Option<ExitKind>> {
    let p = Replay::new(log).project(run, None, None)?;
    let s = &p.summary;
    let count = |name: &str| s.tasks.get(name).copied().unwrap_or(0);
    let (word, detail) = match &ended.state.status {
        RunStatus::Finished(RunOutcome::Succeeded) => ("succeeded".to_owned(), String::new()),
        RunStatus::Finished(RunOutcome::Failed { failed, blocked }) => (
            "failed".to_owned(),
            format!(
                "failed: {}{}",
                join(failed),
                if blocked.is_empty() {
                    String::new()
                } else {
                    format!("; blocked: {}", join(blocked))
                }
            ),
        ),
        RunStatus::Finished(RunOutcome::Paused { reason }) => ("paused".to_owned(), reason.clone()),
        RunStatus::Interrupted => (
            "interrupted".to_owned(),
            format!("resume it with `runlog resume {run}`"),
        ),
        other => (format!("{other:?}").to_lowercase(), String::new()),
    };
    let warn_at = ended.state.settings.history_warn_events;
    let history_warning = (s.events > warn_at).then(|| {
        format!(
            "run {run} has {} events, past its history_warn_events of {warn_at}: replays from the start slow down; fork from a recent seq or export and archive it",
            s.events
        )
    });
    let store_flag = if store_dir == Path::new(".runlog") {
        String::new()
    } else {
        format!(" --store {}", store_dir.display())
    };
    if json {
        let out = serde_json::json!({
            "run": run,
            "outcome": word,
            "detail": detail,
            "tasks": s.tasks,
            "rescues": s.rescues,
            "test_failures": s.test_failures,
            "replans": s.replans,
            "events": s.events,
            "history_warning": history_warning,
            "duration_ms": ended.elapsed.as_millis() as u64,
        });
        println!("{out}");
    } else {
        println!("run {run} {word} in {:.1}s", ended.elapsed.as_secs_f64());
        if !detail.is_empty() {
            println!("  {detail}");
        }
        println!(
            "  tasks: {} done, {} failed, {} cancelled, {} pending-eval",
            count("done"),
            count("failed"),
            count("cancelled"),
            count("pending-eval")
        );
        println!(
            "  rescues {}, test retries {}, stage failures {}, replans {}, events {}",
            s.rescues, s.test_failures, s.stage_failures, s.replans, s.events
        );
        if let Some(w) = &history_warning {
            println!("  warning: {w}");
        }
        println!("inspect it:");
        println!("  runlog{store_flag} status {run}");
        println!("  runlog{store_flag} log {run}");
        println!("  runlog{store_flag} audit {run}");
    }
    Ok(ended.exit)
}

fn join(ids: &[runlog_core::TaskId]) -> String {
    ids.iter()
        .map(|t| t.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}
