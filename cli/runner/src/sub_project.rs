//! Sub-projects as the runner sees them: a task whose work is another workflow runs
//! `runlog run CHILD.toml --parent RUN/TASK` (or `runlog resume CHILD`) as its command, in the
//! same store, so timeouts, interrupts, kill -9 and resume treat it like any agent. What the
//! child's log says, not its exit code, decides how the task goes on.

use super::error::RunnerError;
use runlog_core::{
    Command, CommandKind, RunId, RunOutcome, RunState, RunStatus, TaskId, Timestamp,
};
use runlog_replay::{Replay, Session};
use runlog_store::EventLog;
use std::path::Path;

type Result<T> = std::result::Result<T, RunnerError>;

/// How a child run finished, as its own log says.
pub enum ChildEnd {
    /// Every task done.
    Succeeded,
    /// Finished with failed or blocked tasks, or paused: what went wrong.
    Failed(String),
}

/// The end of `child`'s run, or `None` when it has not finished (interrupted, killed, never
/// started): the command's own failure then counts, like any agent's.
pub fn child_end(log: &dyn EventLog, child: &str) -> Result<Option<ChildEnd>> {
    if log
        .head(child)
        .map_err(runlog_replay::ReplayError::from)?
        .is_none()
    {
        return Ok(None);
    }
    let state = Replay::new(log).head_state(child)?;
    Ok(match &state.status {
        RunStatus::Finished(RunOutcome::Succeeded) => Some(ChildEnd::Succeeded),
        RunStatus::Finished(outcome) => Some(ChildEnd::Failed(failures(&state, outcome))),
        _ => None,
    })
}

/// `failed: gap (tests failed: ...); blocked: render` — each failed task with its reason.
fn failures(state: &RunState, outcome: &RunOutcome) -> String {
    match outcome {
        RunOutcome::Failed { failed, blocked } => {
            let mut parts = Vec::new();
            if !failed.is_empty() {
                let named: Vec<String> = failed
                    .iter()
                    .map(
                        |id| match state.task(id).and_then(|t| t.reason.as_deref()) {
                            Some(why) => {
                                format!("{id} ({})", crate::protocol::first_line(why, 160))
                            }
                            None => id.to_string(),
                        },
                    )
                    .collect();
                parts.push(format!("failed: {}", named.join(", ")));
            }
            if !blocked.is_empty() {
                let named: Vec<&str> = blocked.iter().map(TaskId::as_str).collect();
                parts.push(format!("blocked: {}", named.join(", ")));
            }
            parts.join("; ")
        }
        RunOutcome::Paused { reason } => format!("paused: {reason}"),
        RunOutcome::Succeeded => String::new(),
    }
}

/// Whether `child` is linked, on its side, to `task` of `run`.
pub fn is_child_of(log: &dyn EventLog, child: &str, run: &str, task: &TaskId) -> Result<bool> {
    if log
        .head(child)
        .map_err(runlog_replay::ReplayError::from)?
        .is_none()
    {
        return Ok(false);
    }
    let state = Replay::new(log).head_state(child)?;
    Ok(state
        .parent
        .is_some_and(|p| p.run.as_str() == run && &p.task == task))
}

/// A new child run id for `task` of `run`: `RUN.TASK`, or `RUN.TASK-2`... when taken (a
/// rollback or a fork left an earlier child behind).
pub fn new_child_id(log: &dyn EventLog, run: &str, task: &TaskId) -> Result<String> {
    let runs = log.runs().map_err(runlog_replay::ReplayError::from)?;
    let taken = |id: &str| runs.iter().any(|r| r.run == id);
    let base = format!("{run}.{task}");
    Ok(std::iter::once(base.clone())
        .chain((2..).map(|n| format!("{base}-{n}")))
        .find(|id| !taken(id))
        .unwrap_or(base))
}

/// A fork of the parent inherited a link to the original's child: the fork gets its own
/// child, forked from that one at its head and linked to the fork's task.
pub fn fork_child(
    log: &dyn EventLog,
    from: &str,
    new_child: &str,
    run: &str,
    task: &TaskId,
    at: Timestamp,
) -> Result<()> {
    let replay = Replay::new(log);
    let head = replay.head_seq(from)?;
    replay.fork(from, head, new_child, at)?;
    let mut session = Session::existing(log, new_child)?;
    session
        .execute(Command::new(
            at,
            CommandKind::LinkParentRun {
                parent_run: RunId::from(run),
                task: task.clone(),
            },
        ))?
        .map_err(|r| RunnerError::Refused(Box::new(r)))?;
    Ok(())
}

/// The shell command that runs (or resumes) the child in the same store, from the directory
/// the parent's runner was started in (where relative workflow paths are recorded from).
pub fn child_command(
    store: Option<&Path>,
    child: &str,
    start: Option<(&Path, &str, &TaskId)>,
) -> Result<String> {
    let exe = std::env::current_exe().map_err(|source| RunnerError::System {
        what: "find the runlog executable to run a sub-project",
        cause: source,
    })?;
    let cwd = std::env::current_dir().map_err(|source| RunnerError::System {
        what: "read the current directory to run a sub-project",
        cause: source,
    })?;
    let q = |p: &Path| quote(&p.display().to_string());
    // Without a directory the child finds the shared store in its environment.
    let store = store
        .map(|s| format!(" --store {}", q(s)))
        .unwrap_or_default();
    let prefix = format!("cd {} && exec {}{store}", q(&cwd), q(&exe));
    Ok(match start {
        Some((workflow, run, task)) => format!(
            "{prefix} run {} --run-id {} --parent {} --quiet",
            q(workflow),
            quote(child),
            quote(&format!("{run}/{task}"))
        ),
        None => format!("{prefix} resume {} --quiet", quote(child)),
    })
}

/// Single-quoted for `sh -c`.
fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}
