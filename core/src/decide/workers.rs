//! Workers of the shared store: who runs a task's commands. A start by a worker claims the task
//! in the same append as the attempt, so the log's expected-seq check lets exactly one worker
//! start each attempt; a task stays with its worker (which has its worktree) until that worker
//! is lost, when its attempt is abandoned and any worker may take the task on.

use super::{find, require_running};
use crate::event::EventKind;
use crate::ids::{TaskId, Timestamp};
use crate::plan::check_name;
use crate::rejection::Rejection;
use crate::state::{RunState, TaskState};

pub(super) fn start_as(
    state: &RunState,
    task: TaskId,
    worker: String,
    fresh_worktree: bool,
    at: Timestamp,
) -> Result<Vec<EventKind>, Rejection> {
    check_name("worker", &worker)?;
    let previous = free_for(find(state, &task)?, &task, &worker)?;
    let mut events = super::task::start(state, task.clone(), None, None, at)?;
    let attempt = find(state, &task)?.attempt + 1;
    events.push(EventKind::WorkerClaimed {
        task,
        attempt,
        worker,
        fresh_worktree,
        previous,
    });
    Ok(events)
}

pub(super) fn claim(
    state: &RunState,
    task: TaskId,
    worker: String,
    fresh_worktree: bool,
) -> Result<Vec<EventKind>, Rejection> {
    check_name("worker", &worker)?;
    require_running(state)?;
    let t = find(state, &task)?;
    if t.running {
        return Err(Rejection::AlreadyRunning {
            attempt: t.attempt,
            task,
        });
    }
    if t.held_by() == Some(worker.as_str()) {
        return Err(Rejection::HeldByWorker { task, worker });
    }
    let previous = free_for(t, &task, &worker)?;
    Ok(vec![EventKind::WorkerClaimed {
        attempt: t.attempt,
        task,
        worker,
        fresh_worktree,
        previous,
    }])
}

pub(super) fn abandon(
    state: &RunState,
    task: TaskId,
    worker: String,
    reason: String,
) -> Result<Vec<EventKind>, Rejection> {
    require_running(state)?;
    let t = find(state, &task)?;
    if t.held_by() != Some(worker.as_str()) || t.status.is_terminal() {
        return Err(Rejection::NotHeld { task, worker });
    }
    Ok(vec![EventKind::AttemptAbandoned {
        attempt: t.attempt,
        task,
        worker,
        reason,
    }])
}

/// Refuses a task another worker holds; else the worker it had before, if another.
fn free_for(t: &TaskState, task: &TaskId, worker: &str) -> Result<Option<String>, Rejection> {
    if let Some(holder) = t.held_by().filter(|h| *h != worker) {
        return Err(Rejection::HeldByWorker {
            task: task.clone(),
            worker: holder.to_owned(),
        });
    }
    Ok(t.worker.clone().filter(|w| w != worker))
}
