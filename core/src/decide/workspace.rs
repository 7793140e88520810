//! A run's git workspace: the integration branch opened, what each attempt changed, a done
//! task's merge, or its conflict (a rescue resolves it, or a person does and approves).

use super::{find, require_running};
use crate::command::Changes;
use crate::event::EventKind;
use crate::ids::TaskId;
use crate::rejection::Rejection;
use crate::state::{RunState, TaskStatus};

pub(super) fn open(
    state: &RunState,
    repo: String,
    branch: String,
    base: String,
) -> Result<Vec<EventKind>, Rejection> {
    require_running(state)?;
    if state.workspace.as_ref().is_some_and(|w| w.branch == branch) {
        return Err(Rejection::WorkspaceOpen { branch });
    }
    Ok(vec![EventKind::WorkspaceOpened { repo, branch, base }])
}

pub(super) fn record_changes(
    state: &RunState,
    task: TaskId,
    c: Changes,
) -> Result<Vec<EventKind>, Rejection> {
    require_running(state)?;
    require_workspace(state)?;
    let t = find(state, &task)?;
    if t.attempt == 0 {
        return Err(Rejection::NotRunning { task });
    }
    Ok(vec![EventKind::ChangesRecorded {
        attempt: t.attempt,
        task,
        commit: c.commit,
        parent: c.parent,
        files: c.files,
        insertions: c.insertions,
        deletions: c.deletions,
        patch: c.patch,
        blob: c.blob,
        patch_bytes: c.patch_bytes,
    }])
}

pub(super) fn record_merge(
    state: &RunState,
    task: TaskId,
    commit: Option<String>,
    conflicts: Vec<String>,
) -> Result<Vec<EventKind>, Rejection> {
    require_running(state)?;
    require_workspace(state)?;
    let t = find(state, &task)?;
    super::require_status(t, "merge", &[TaskStatus::Done])?;
    if t.code.merged.is_some() {
        return Err(Rejection::AlreadyMerged { task });
    }
    Ok(vec![match commit {
        Some(commit) => EventKind::TaskMerged { task, commit },
        None => {
            let rescue = (state.settings.auto_rescue
                && t.rescues < state.settings.max_eval_rescues)
                .then_some(t.rescues + 1);
            EventKind::MergeConflicted {
                task,
                files: conflicts,
                rescue,
            }
        }
    }])
}

fn require_workspace(state: &RunState) -> Result<(), Rejection> {
    match state.workspace {
        Some(_) => Ok(()),
        None => Err(Rejection::NoWorkspace),
    }
}
