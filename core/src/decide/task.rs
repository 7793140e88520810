//! The task life cycle: start, submit, tests, checkpoints, classification, reopen, cancel.

use super::{find, require_running, require_running_attempt, require_started, require_status};
use crate::event::EventKind;
use crate::ids::{AgentId, TaskId, Timestamp};
use crate::plan::check_name;
use crate::rejection::Rejection;
use crate::spec::TaskClass;
use crate::state::{Circuit, Readiness, RunState, TaskState, TaskStatus};
use crate::value::Value;

pub(super) fn start(
    state: &RunState,
    id: TaskId,
    agent: Option<AgentId>,
    worktree: Option<String>,
    at: Timestamp,
) -> Result<Vec<EventKind>, Rejection> {
    let task = startable(state, &id, at)?;
    if let Some(agent) = &agent {
        check_name("agent", agent.as_str())?;
    }
    if let Some(worktree) = &worktree {
        check_name("worktree", worktree)?;
    }
    let stage = task.spec.stage_id();
    let continuing = task.status != TaskStatus::Open;
    let agent = keep_identity(
        task,
        continuing,
        "agent",
        task.agent.as_ref().map(|a| a.0.clone()),
        agent.map(|a| a.0),
    )?
    .unwrap_or_else(|| format!("agent-{id}"));
    let worktree = keep_identity(
        task,
        continuing,
        "worktree",
        task.worktree.clone(),
        worktree,
    )?
    .unwrap_or_else(|| id.0.clone());
    let attempt = task.attempt + 1;
    Ok(vec![
        EventKind::TaskStarted {
            task: id.clone(),
            agent: AgentId(agent),
            worktree,
            attempt,
        },
        EventKind::StageStarted {
            stage,
            task: id,
            attempt,
        },
    ])
}

/// Whether an attempt of `id` may start at `at` (a first attempt, a retry, a rescue or a test
/// retry): every rule of starting but the agent's and worktree's identity. The dispatch policy
/// asks this same question, so what it proposes is what `decide` accepts.
pub fn startable<'s>(
    state: &'s RunState,
    id: &TaskId,
    at: Timestamp,
) -> Result<&'s TaskState, Rejection> {
    require_running(state)?;
    let task = find(state, id)?;
    if state.is_group(id) {
        return Err(Rejection::IsGroup { task: id.clone() });
    }
    if let Some(replan) = &state.replan {
        return Err(Rejection::ReplanPending {
            after_task: replan.after_task.clone(),
        });
    }
    let stage = task.spec.stage_id();
    if state
        .stages
        .get(&stage)
        .is_some_and(|s| s.circuit == Circuit::Open)
    {
        return Err(Rejection::CircuitOpen { stage });
    }
    require_status(
        task,
        "start",
        &[
            TaskStatus::Open,
            TaskStatus::InProgress,
            TaskStatus::TestFailed,
        ],
    )?;
    if let Some(rejection) = test_retries_exhausted(state, task) {
        return Err(rejection);
    }
    if task.status == TaskStatus::Open {
        match state.readiness(id) {
            Readiness::Ready => {}
            Readiness::Waiting { on } => {
                return Err(Rejection::NotReady {
                    task: id.clone(),
                    waiting_on: on,
                })
            }
            Readiness::Blocked { by } => {
                return Err(Rejection::Blocked {
                    task: id.clone(),
                    blocked_by: by,
                })
            }
            Readiness::CircuitOpen { stage } => return Err(Rejection::CircuitOpen { stage }),
            Readiness::BudgetSpent { spent } => {
                return Err(Rejection::BudgetSpent {
                    task: id.clone(),
                    spent,
                })
            }
        }
    }
    if let Some(failures) = task.sub_project.as_ref().and_then(|s| s.waiting.clone()) {
        return Err(Rejection::ChildRunFailed {
            task: id.clone(),
            failures,
        });
    }
    if task.running {
        return Err(Rejection::AlreadyRunning {
            task: id.clone(),
            attempt: task.attempt,
        });
    }
    if let Some(stop) = state.overspent(task) {
        return Err(Rejection::BudgetSpent {
            task: id.clone(),
            spent: state.stop_words(task, &stop),
        });
    }
    if let Some(due) = task.retry_due {
        if at < due {
            return Err(Rejection::RetryNotDue {
                task: id.clone(),
                due_ms: due.0,
                now_ms: at.0,
            });
        }
    }
    Ok(task)
}

/// A test-failed task with no test retry left: `record_tests` fails such a task in the same
/// append, so only a rollback to between the two leaves one standing.
pub(super) fn test_retries_exhausted(state: &RunState, task: &TaskState) -> Option<Rejection> {
    let max = state.settings.max_test_retries;
    (task.status == TaskStatus::TestFailed && task.test_failures > max).then(|| {
        Rejection::TestRetriesExhausted {
            task: task.spec.id.clone(),
            failures: task.test_failures,
            max,
        }
    })
}

/// Continuity of an attempt: a retry or rescue continues the same agent in the same worktree. A fresh start
/// (from open) may name new ones; `None` reuses the recorded value.
fn keep_identity(
    task: &TaskState,
    continuing: bool,
    field: &str,
    recorded: Option<String>,
    given: Option<String>,
) -> Result<Option<String>, Rejection> {
    match (recorded, given) {
        (Some(rec), Some(giv)) if continuing && rec != giv => Err(Rejection::IdentityChanged {
            task: task.spec.id.clone(),
            field: field.into(),
            expected: rec,
            given: giv,
        }),
        (_, Some(giv)) => Ok(Some(giv)),
        (rec, None) => Ok(rec),
    }
}

pub(super) fn submit(
    state: &RunState,
    id: TaskId,
    summary: String,
    result: Value,
    duration_ms: u64,
) -> Result<Vec<EventKind>, Rejection> {
    require_running(state)?;
    let task = find(state, &id)?;
    require_running_attempt(task, "submit")?;
    if !result.fits() {
        return Err(Rejection::ValueTooDeep {
            task: id,
            depth: result.depth(),
            max: crate::value::MAX_DEPTH,
        });
    }
    let missing = task.missing_checkpoints();
    if !missing.is_empty() {
        return Err(Rejection::CheckpointsMissing { task: id, missing });
    }
    let mut events = vec![
        EventKind::StageCompleted {
            stage: task.spec.stage_id(),
            task: id.clone(),
            result,
            duration_ms,
            retry_count: task.stage_retries,
        },
        EventKind::TaskSubmitted {
            task: id.clone(),
            summary,
        },
    ];
    if task.spec.is_tested() {
        events.push(EventKind::TestsStarted {
            task: id,
            attempt: task.attempt,
        });
    }
    Ok(events)
}

pub(super) fn record_tests(
    state: &RunState,
    id: TaskId,
    passed: bool,
    details: String,
) -> Result<Vec<EventKind>, Rejection> {
    require_running(state)?;
    let task = find(state, &id)?;
    require_status(task, "record tests for", &[TaskStatus::Testing])?;
    let attempt = task.attempt;
    if passed {
        return Ok(vec![EventKind::TestsPassed { task: id, attempt }]);
    }
    let failures = task.test_failures + 1;
    let max = state.settings.max_test_retries;
    let mut events = vec![EventKind::TestsFailed {
        task: id.clone(),
        attempt,
        details,
    }];
    if failures > max {
        events.push(EventKind::TaskFailed {
            task: id,
            reason: format!("tests failed {failures} times (max_test_retries = {max})"),
        });
    }
    Ok(events)
}

pub(super) fn checkpoint(
    state: &RunState,
    id: TaskId,
    name: String,
) -> Result<Vec<EventKind>, Rejection> {
    require_running(state)?;
    let task = find(state, &id)?;
    require_running_attempt(task, "record a checkpoint for")?;
    Ok(vec![EventKind::CheckpointReached { task: id, name }])
}

pub(super) fn classify(
    state: &RunState,
    id: TaskId,
    class: TaskClass,
) -> Result<Vec<EventKind>, Rejection> {
    require_running(state)?;
    let task = find(state, &id)?;
    require_running_attempt(task, "classify")?;
    // Exhaustive analysis: "new code" is only a verdict after exhaustive analysis, i.e. every checkpoint.
    if class == TaskClass::NewCode {
        let missing = task.missing_checkpoints();
        if !missing.is_empty() {
            return Err(Rejection::CheckpointsMissing { task: id, missing });
        }
    }
    Ok(vec![EventKind::TaskClassified { task: id, class }])
}

pub(super) fn reopen(
    state: &RunState,
    id: TaskId,
    by: String,
) -> Result<Vec<EventKind>, Rejection> {
    require_started(state)?;
    let task = find(state, &id)?;
    // A task with no test retry left has failed in all but its event.
    if test_retries_exhausted(state, task).is_none() {
        require_status(task, "reopen", &[TaskStatus::Failed])?;
    }
    Ok(vec![EventKind::TaskReopened { task: id, by }])
}

pub(super) fn cancel(
    state: &RunState,
    id: TaskId,
    reason: String,
) -> Result<Vec<EventKind>, Rejection> {
    require_started(state)?;
    let task = find(state, &id)?;
    if task.status.is_terminal() {
        return Err(Rejection::WrongStatus {
            task: id,
            action: "cancel".into(),
            status: task.status,
            allowed: vec![
                TaskStatus::Open,
                TaskStatus::InProgress,
                TaskStatus::Testing,
                TaskStatus::TestFailed,
                TaskStatus::PendingEval,
            ],
        });
    }
    Ok(with_descendants(state, &id)
        .into_iter()
        .filter(|t| state.tasks.get(t).is_some_and(|t| !t.status.is_terminal()))
        .map(|task| EventKind::TaskCancelled {
            task,
            reason: reason.clone(),
        })
        .collect())
}

/// A task followed by all its descendants (cancelling a group cancels what is under it).
pub(super) fn with_descendants(state: &RunState, id: &TaskId) -> Vec<TaskId> {
    let mut out = vec![id.clone()];
    let mut i = 0;
    while let Some(current) = out.get(i).cloned() {
        i += 1;
        if out.len() > state.tasks.len() {
            break;
        }
        for child in state.children.get(&current).into_iter().flatten() {
            if !out.contains(child) {
                out.push(child.clone());
            }
        }
    }
    out
}
