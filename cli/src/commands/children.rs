//! What a resume, a rollback or a fork of a parent run does to its sub-projects' child runs,
//! said to the person who asked. The engine does it (`runner::sub_project`); this says it.

use runlog_core::{RunId, RunState, TaskId};

/// On `resume`: each unfinished sub-project task takes its child run on again, or, in a fork
/// whose child is still the original's (`own` says which are this run's), gets its own.
pub fn on_resume(state: &RunState, own: &dyn Fn(&TaskId, &RunId) -> bool) -> Vec<String> {
    state.child_runs()
        .into_iter()
        .filter(|(task, _)| {
            state
                .task(task)
                .is_some_and(|t| t.status == runlog_core::TaskStatus::InProgress)
        })
        .map(|(task, child)| {
            if own(task, child) {
                format!("task {task}'s next attempt resumes its child run {child} (`runlog resume {child}`)")
            } else {
                format!("task {task}'s child run {child} is another run's: its next attempt forks it at its head as this run's own")
            }
        })
        .collect()
}

/// After a rollback from `before` to `after`: a child the parent no longer links is left as it
/// is, and the task's next attempt starts a new one; a child still linked is not rolled back.
pub fn after_rollback(before: &RunState, after: &RunState) -> Vec<String> {
    let linked = after.child_runs();
    before.child_runs()
        .into_iter()
        .map(|(task, child)| {
            if linked.contains(&(task, child)) {
                format!("child run {child} of task {task} stays linked and is not rolled back with its parent; roll it back itself with `runlog rollback {child} --to SEQ`")
            } else {
                format!("child run {child} of task {task} is no longer linked: it stays in the store as it is, and the next attempt of {task} starts a new child run")
            }
        })
        .collect()
}

/// After forking a run whose state at the fork point is `at`: the fork shares no child.
pub fn after_fork(at: &RunState, fork: &str) -> Vec<String> {
    at.child_runs()
        .into_iter()
        .map(|(task, child)| {
            format!("child run {child} of task {task} stays the original's; when {task} runs in {fork}, the fork gets its own child run, forked from {child} at its head")
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use runlog_core::{decide, evolve, Command, CommandKind, Settings, TaskSpec, Timestamp};

    fn apply(state: RunState, kind: CommandKind) -> RunState {
        decide(&state, Command::new(Timestamp(1), kind))
            .unwrap()
            .iter()
            .fold(state, evolve)
    }

    fn parent_with_child() -> (RunState, RunState) {
        let mut spec = TaskSpec::new("buffer", "the buffer");
        spec.requires_testing = false;
        let mut s = apply(
            RunState::default(),
            CommandKind::StartRun {
                run: RunId::from("p"),
                workflow: "p.toml".into(),
                workflow_hash: runlog_core::Hash::default(),
                settings: Settings::default(),
                tasks: vec![spec],
                cost: Default::default(),
                review: Default::default(),
            },
        );
        s = apply(
            s,
            CommandKind::DeclareSubProject {
                task: TaskId::from("buffer"),
                workflow: "phases/buffer.toml".into(),
            },
        );
        let before_child = apply(
            s,
            CommandKind::StartTask {
                task: TaskId::from("buffer"),
                agent: None,
                worktree: None,
            },
        );
        let with_child = apply(
            before_child.clone(),
            CommandKind::LinkChildRun {
                task: TaskId::from("buffer"),
                child_run: RunId::from("p.buffer"),
            },
        );
        (before_child, with_child)
    }

    #[test]
    fn a_rollback_says_which_children_it_detaches_and_which_stay() {
        let (before_child, with_child) = parent_with_child();
        let detached = after_rollback(&with_child, &before_child);
        assert_eq!(detached.len(), 1);
        assert!(
            detached[0].contains("p.buffer of task buffer is no longer linked"),
            "{detached:?}"
        );
        let kept = after_rollback(&with_child, &with_child);
        assert!(
            kept[0].contains("stays linked and is not rolled back"),
            "{kept:?}"
        );
        assert!(after_rollback(&before_child, &before_child).is_empty());
    }

    #[test]
    fn a_fork_and_a_resume_say_what_becomes_of_the_child() {
        let (_, with_child) = parent_with_child();
        let forked = after_fork(&with_child, "p2");
        assert!(
            forked[0].contains("when buffer runs in p2, the fork gets its own child run"),
            "{forked:?}"
        );
        let resumed = on_resume(&with_child, &|_, _| true);
        assert!(
            resumed[0].contains("resumes its child run p.buffer"),
            "{resumed:?}"
        );
        let inherited = on_resume(&with_child, &|_, _| false);
        assert!(
            inherited[0].contains("forks it at its head"),
            "{inherited:?}"
        );
    }
}
