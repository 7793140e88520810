//! Seed 004's sub-projects: a task whose work is another workflow, run as a child run. The
//! links both ways, and the child's outcome bubbling up: all done submits the task; a failure
//! leaves it in progress, waiting, with the failure named, until the parent is resumed.

mod support;
use runlog_core::*;
use support::*;

fn declare() -> CommandKind {
    CommandKind::DeclareSubProject {
        task: id("buffer"),
        workflow: "phases/buffer.toml".into(),
    }
}

fn link() -> CommandKind {
    CommandKind::LinkChildRun {
        task: id("buffer"),
        child_run: RunId::from("p.buffer"),
    }
}

fn ended(succeeded: bool) -> CommandKind {
    CommandKind::EndChildRun {
        task: id("buffer"),
        child_run: RunId::from("p.buffer"),
        succeeded,
        failures: "failed: gap (tests failed)".into(),
    }
}

fn tasks() -> Vec<TaskSpec> {
    let mut buffer = task("buffer");
    buffer.run = None;
    vec![buffer, task("commands").after(&["buffer"]), task("docs")]
}

#[test]
fn a_declared_sub_project_links_its_child_run_when_its_attempt_starts() {
    let g = given_run(tasks())
        .when(declare())
        .then(vec![EventKind::SubProjectDeclared {
            task: id("buffer"),
            workflow: "phases/buffer.toml".into(),
        }])
        .and(start("buffer"))
        .when(link())
        .then(vec![EventKind::ChildRunStarted {
            task: id("buffer"),
            child_run: RunId::from("p.buffer"),
        }]);
    let sub = g.task("buffer").sub_project.clone().unwrap();
    assert_eq!(sub.child, Some(RunId::from("p.buffer")));
    // A task that is not a sub-project has no child run to link.
    g.and(start("docs"))
        .when(CommandKind::LinkChildRun {
            task: id("docs"),
            child_run: RunId::from("x"),
        })
        .then_rejected_where(|r| matches!(r, Rejection::InvalidRevision { reason } if reason.contains("not a sub-project")));
}

#[test]
fn a_child_that_succeeded_leaves_the_task_running_to_be_submitted() {
    let g = given_run(tasks())
        .and(declare())
        .and(start("buffer"))
        .and(link())
        .when(ended(true))
        .then(vec![EventKind::ChildRunEnded {
            task: id("buffer"),
            child_run: RunId::from("p.buffer"),
            succeeded: true,
            failures: String::new(),
        }])
        .and(submit("buffer"));
    assert_eq!(g.status("buffer"), TaskStatus::Done);
}

#[test]
fn a_failed_child_leaves_the_task_in_progress_waiting_and_the_run_paused_with_the_failure_named() {
    let g = given_run(tasks())
        .and(declare())
        .and(start("buffer"))
        .and(link())
        .when(ended(false))
        .then_ok();
    assert_eq!(g.status("buffer"), TaskStatus::InProgress);
    assert!(!g.task("buffer").running);
    // Not started again while it waits: nothing would change in the child.
    g.when(start("buffer"))
        .then_rejected_where(|r| matches!(r, Rejection::ChildRunFailed { failures, .. } if failures == "failed: gap (tests failed)"));
    let g = given_run(tasks())
        .and(declare())
        .and(start("buffer"))
        .and(link())
        .and(ended(false));
    let finished = g.when(CommandKind::Finish).then_ok();
    match &finished.state.status {
        RunStatus::Finished(RunOutcome::Paused { reason }) => assert!(
            reason.contains(
                "task buffer waits for its sub-project run p.buffer: failed: gap (tests failed)"
            ),
            "{reason}"
        ),
        other => panic!("expected paused, got {other:?}"),
    }
    // A resume takes it on again: startable, and its next attempt links the same child.
    finished
        .and(CommandKind::Resume {
            reason: "fixed in the child".into(),
        })
        .and(start("buffer"))
        .when(link())
        .then_ok();
}

#[test]
fn a_child_run_is_linked_to_one_parent_unless_it_is_a_fork() {
    let parent = || CommandKind::LinkParentRun {
        parent_run: RunId::from("p"),
        task: id("buffer"),
    };
    let g = given_run(vec![task("gap")])
        .when(parent())
        .then(vec![EventKind::ParentLinked {
            parent_run: RunId::from("p"),
            task: id("buffer"),
        }]);
    assert_eq!(
        g.state.parent,
        Some(ParentLink {
            run: RunId::from("p"),
            task: id("buffer"),
        })
    );
    g.when(CommandKind::LinkParentRun {
        parent_run: RunId::from("other"),
        task: id("buffer"),
    })
    .then_rejected_where(|r| matches!(r, Rejection::InvalidRevision { reason } if reason.contains("already the sub-project of task buffer of run p")));
}
