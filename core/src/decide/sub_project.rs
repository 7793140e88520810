//! Sub-projects: a task whose work is a whole other workflow, run as a child run
//! linked both ways. The child's outcome bubbles up: all done submits the task; a failure
//! leaves it in progress, waiting, with the failures named, until the parent is resumed.

use super::{find, require_running, require_running_attempt, require_started};
use crate::event::EventKind;
use crate::ids::{RunId, TaskId};
use crate::rejection::Rejection;
use crate::state::RunState;

pub(super) fn declare(
    state: &RunState,
    task: TaskId,
    workflow: String,
) -> Result<Vec<EventKind>, Rejection> {
    require_started(state)?;
    let t = find(state, &task)?;
    if state.is_group(&task) {
        return Err(Rejection::IsGroup { task });
    }
    if t.attempt > 0 || t.spec.run.is_some() {
        return Err(Rejection::InvalidRevision {
            reason: format!(
                "task {task} has its own `run` command or attempts already; only a task with neither can be a sub-project"
            ),
        });
    }
    Ok(vec![EventKind::SubProjectDeclared { task, workflow }])
}

pub(super) fn link_child(
    state: &RunState,
    task: TaskId,
    child_run: RunId,
) -> Result<Vec<EventKind>, Rejection> {
    require_running(state)?;
    let t = find(state, &task)?;
    require_running_attempt(t, "link a child run to")?;
    if t.sub_project.is_none() {
        return Err(not_a_sub_project(&task));
    }
    if state.run.as_ref().is_some_and(|r| r.id == child_run) {
        return Err(Rejection::InvalidRevision {
            reason: format!("run {child_run} cannot be its own sub-project"),
        });
    }
    Ok(vec![EventKind::ChildRunStarted { task, child_run }])
}

pub(super) fn link_parent(
    state: &RunState,
    parent_run: RunId,
    task: TaskId,
) -> Result<Vec<EventKind>, Rejection> {
    require_started(state)?;
    // A fork of a child run inherits the original's link; it is linked to its own parent then.
    if let Some(link) = state.parent.as_ref().filter(|_| state.fork.is_none()) {
        if link.run != parent_run || link.task != task {
            return Err(Rejection::InvalidRevision {
                reason: format!(
                    "this run is already the sub-project of task {} of run {}",
                    link.task, link.run
                ),
            });
        }
    }
    if state.run.as_ref().is_some_and(|r| r.id == parent_run) {
        return Err(Rejection::InvalidRevision {
            reason: format!("run {parent_run} cannot be its own parent"),
        });
    }
    Ok(vec![EventKind::ParentLinked { parent_run, task }])
}

pub(super) fn end_child(
    state: &RunState,
    task: TaskId,
    child_run: RunId,
    succeeded: bool,
    failures: String,
) -> Result<Vec<EventKind>, Rejection> {
    require_running(state)?;
    let t = find(state, &task)?;
    require_running_attempt(t, "end the child run of")?;
    let linked = t.child_run();
    if linked != Some(&child_run) {
        return Err(Rejection::InvalidRevision {
            reason: format!(
                "task {task}'s child run is {}, not {child_run}",
                linked.map_or("none", RunId::as_str)
            ),
        });
    }
    Ok(vec![EventKind::ChildRunEnded {
        task,
        child_run,
        succeeded,
        failures: if succeeded { String::new() } else { failures },
    }])
}

fn not_a_sub_project(task: &TaskId) -> Rejection {
    Rejection::InvalidRevision {
        reason: format!("task {task} is not a sub-project (its workflow file names no `workflow`)"),
    }
}
