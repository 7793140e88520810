//! Workers of the shared store (issue 12): a start by a worker claims the task in the same
//! append, so one worker starts each attempt; a task stays with its worker until that worker is
//! lost, and then its attempt is abandoned and another worker takes it on.

mod support;
use runlog_core::*;
use support::*;

fn start_as(task: &str, worker: &str, fresh: bool) -> CommandKind {
    CommandKind::StartTaskAs {
        task: id(task),
        worker: worker.into(),
        fresh_worktree: fresh,
    }
}

fn abandon(task: &str, worker: &str) -> CommandKind {
    CommandKind::AbandonAttempt {
        task: id(task),
        worker: worker.into(),
        reason: "its lease expired".into(),
    }
}

#[test]
fn a_worker_start_claims_the_task_with_the_attempt() {
    let g = given_run(vec![task("build")])
        .when(start_as("build", "w1", false))
        .then(vec![
            EventKind::TaskStarted {
                task: id("build"),
                agent: AgentId("agent-build".into()),
                worktree: "build".into(),
                attempt: 1,
            },
            EventKind::StageStarted {
                stage: StageId("build".into()),
                task: id("build"),
                attempt: 1,
            },
            EventKind::WorkerClaimed {
                task: id("build"),
                attempt: 1,
                worker: "w1".into(),
                fresh_worktree: false,
                previous: None,
            },
        ]);
    let t = g.task("build");
    assert_eq!((t.attempt, t.running), (1, true));
    assert_eq!(t.held_by(), Some("w1"));
}

#[test]
fn a_second_worker_cannot_start_the_same_attempt() {
    given_run(vec![task("build")])
        .and(start_as("build", "w1", false))
        .when(start_as("build", "w2", false))
        .then_rejected_where(
            |r| matches!(r, Rejection::HeldByWorker { worker, .. } if worker == "w1"),
        );
}

#[test]
fn a_retry_stays_with_the_worker_that_has_the_worktree() {
    let failed = given_run(vec![task("build")])
        .and(start_as("build", "w1", false))
        .and(CommandKind::FailStage {
            task: id("build"),
            error: "exit 1".into(),
            error_type: "exit".into(),
            duration_ms: 5,
        })
        .wait_ms(600_000);
    failed
        .clone()
        .when(start_as("build", "w2", false))
        .then_rejected_where(|r| matches!(r, Rejection::HeldByWorker { .. }));
    let again = failed.when(start_as("build", "w1", false)).then_ok();
    assert_eq!(again.task("build").attempt, 2);
}

#[test]
fn a_lost_workers_attempt_is_abandoned_and_taken_on_elsewhere_in_a_fresh_worktree() {
    let g = given_run(vec![task("build")])
        .and(start_as("build", "w1", false))
        .when(abandon("build", "w1"))
        .then(vec![EventKind::AttemptAbandoned {
            task: id("build"),
            attempt: 1,
            worker: "w1".into(),
            reason: "its lease expired".into(),
        }]);
    assert!(!g.task("build").running);
    assert_eq!(g.task("build").held_by(), None);
    let g = g.when(start_as("build", "w2", true)).then_ok();
    let t = g.task("build");
    assert_eq!((t.attempt, t.held_by()), (2, Some("w2")));
    // Abandoning again, or in the name of a worker that does not hold it, records nothing.
    g.when(abandon("build", "w1"))
        .then_rejected_where(|r| matches!(r, Rejection::NotHeld { .. }));
}

#[test]
fn a_task_between_attempts_is_claimed_once_its_worker_is_lost() {
    let mut tested = task("build");
    tested.test = Some("true".into());
    let g = given_run(vec![tested])
        .and(start_as("build", "w1", false))
        .and(CommandKind::SubmitTask {
            task: id("build"),
            summary: "done".into(),
            result: Value::Null,
            duration_ms: 5,
        });
    let claim = |w: &str| CommandKind::ClaimTask {
        task: id("build"),
        worker: w.into(),
        fresh_worktree: true,
    };
    g.clone()
        .when(claim("w2"))
        .then_rejected_where(|r| matches!(r, Rejection::HeldByWorker { .. }));
    let g = g
        .and(abandon("build", "w1"))
        .when(claim("w2"))
        .then(vec![EventKind::WorkerClaimed {
            task: id("build"),
            attempt: 1,
            worker: "w2".into(),
            fresh_worktree: true,
            previous: Some("w1".into()),
        }]);
    assert_eq!(g.task("build").held_by(), Some("w2"));
}
