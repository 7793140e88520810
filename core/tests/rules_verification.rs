//! Seed 004: the verification loop (testing, test-failed, retries with the failure as
//! feedback, never done with failing tests) and hierarchical plans (parents, depth limit,
//! status derived from children, failures bubbling up).

mod support;
use runlog_core::*;
use support::*;

#[test]
fn submit_of_a_tested_task_goes_to_testing() {
    given_run(vec![task("a").tested()])
        .and(start("a"))
        .when(submit("a"))
        .then(vec![
            EventKind::StageCompleted {
                stage: StageId::from("a"),
                task: id("a"),
                result: Value::Null,
                duration_ms: 100,
                retry_count: 0,
            },
            EventKind::TaskSubmitted {
                task: id("a"),
                summary: "a done".into(),
            },
            EventKind::TestsStarted {
                task: id("a"),
                attempt: 1,
            },
        ]);
}

#[test]
fn passing_tests_make_an_unevaluated_task_done() {
    let g = given_run(vec![task("a").tested()])
        .and(start("a"))
        .and(submit("a"))
        .when(tests("a", true))
        .then_ok();
    assert_eq!(g.status("a"), TaskStatus::Done);
}

#[test]
fn passing_tests_lead_an_evaluated_task_to_pending_eval() {
    let g = given_run(vec![task("a").tested().evaluated()])
        .and(start("a"))
        .and(submit("a"))
        .when(tests("a", true))
        .then_ok();
    assert_eq!(g.status("a"), TaskStatus::PendingEval);
}

#[test]
fn failing_tests_go_to_test_failed_with_the_details_as_feedback() {
    let g = given_run(vec![task("a").tested()])
        .and(start("a"))
        .and(submit("a"))
        .when(tests("a", false))
        .then_ok();
    assert_eq!(g.status("a"), TaskStatus::TestFailed);
    assert!(g
        .task("a")
        .feedback
        .as_deref()
        .unwrap()
        .contains("a: assertion failed"));
    // The retry continues the same agent and worktree.
    let g = g.when(start("a")).then_ok();
    assert_eq!(g.status("a"), TaskStatus::InProgress);
    assert_eq!(g.task("a").attempt, 2);
    assert_eq!(g.task("a").agent, Some(AgentId::from("agent-a")));
}

#[test]
fn test_retries_are_capped_by_max_test_retries_then_the_task_fails() {
    let mut g = given_run(vec![task("a").tested()]);
    for _ in 0..3 {
        g = g.and(start("a")).and(submit("a")).and(tests("a", false));
        assert_eq!(g.status("a"), TaskStatus::TestFailed);
    }
    let g = g
        .and(start("a"))
        .and(submit("a"))
        .when(tests("a", false))
        .then_ok();
    assert_eq!(g.status("a"), TaskStatus::Failed);
    assert_eq!(g.task("a").test_failures, 4);
}

#[test]
fn a_rollback_between_the_last_tests_failed_and_task_failed_retries_nothing() {
    let mut g = given_run(vec![task("a").tested(), task("b")]);
    for _ in 0..4 {
        g = g.and(start("a")).and(submit("a")).and(tests("a", false));
    }
    assert_eq!(g.status("a"), TaskStatus::Failed);
    // `TestsFailed` and `TaskFailed` went in together; roll back to the first of them.
    let to_seq = g.state.seq - 1;
    let g = g.and(CommandKind::Rollback {
        to_seq,
        reason: "look again".into(),
        by: "me".into(),
    });
    assert_eq!(g.status("a"), TaskStatus::TestFailed);
    assert_eq!(g.task("a").test_failures, 4);
    g.clone()
        .when(start("a"))
        .then_rejected(Rejection::TestRetriesExhausted {
            task: id("a"),
            failures: 4,
            max: 3,
        });
    let g = complete(g, "b");
    assert_eq!(
        outcome(&g.state),
        RunOutcome::Failed {
            failed: vec![id("a")],
            blocked: vec![],
        },
        "the run ends as the append it was rolled into would have ended it"
    );
    let g = g
        .when(CommandKind::Reopen {
            task: id("a"),
            by: "me".into(),
        })
        .then_ok();
    g.when(start("a")).then_ok();
}

#[test]
fn a_task_with_failing_last_tests_cannot_be_done_or_scored() {
    let g = given_run(vec![task("a").tested().evaluated()])
        .and(start("a"))
        .and(submit("a"))
        .and(tests("a", false));
    g.clone()
        .when(score("a", 0.9))
        .then_rejected_where(|r| matches!(r, Rejection::WrongStatus { .. }));
    g.when(approve("a"))
        .then_rejected_where(|r| matches!(r, Rejection::WrongStatus { .. }));
}

#[test]
fn requires_testing_false_skips_testing_even_with_a_test_command() {
    let mut spec = task("docs").tested().evaluated();
    spec.requires_testing = false;
    let g = given_run(vec![spec])
        .and(start("docs"))
        .when(submit("docs"))
        .then_ok();
    assert_eq!(g.status("docs"), TaskStatus::PendingEval);
}

#[test]
fn tests_are_only_recorded_while_testing() {
    given_run(vec![task("a").tested()])
        .and(start("a"))
        .when(tests("a", true))
        .then_rejected(Rejection::WrongStatus {
            task: id("a"),
            action: "record tests for".into(),
            status: TaskStatus::InProgress,
            allowed: vec![TaskStatus::Testing],
        });
}

// --- hierarchy ---

fn phases() -> Vec<TaskSpec> {
    vec![
        task("p1"),
        task("a").parent("p1"),
        task("b").parent("p1").tested(),
        task("p2").after(&["p1"]),
        task("c").parent("p2"),
    ]
}

#[test]
fn a_group_status_follows_its_children() {
    let g = given_run(phases());
    assert_eq!(g.status("p1"), TaskStatus::Open);
    let g = g.and(start("a"));
    assert_eq!(g.status("p1"), TaskStatus::InProgress);
    let g = complete(g.and(submit("a")), "b");
    assert_eq!(g.status("p1"), TaskStatus::Done);
}

#[test]
fn children_of_a_later_phase_wait_for_the_earlier_phase() {
    let g = given_run(phases());
    assert_eq!(g.state.ready_tasks(), vec![id("a"), id("b")]);
    g.clone()
        .when(start("c"))
        .then_rejected(Rejection::NotReady {
            task: id("c"),
            waiting_on: vec![id("p1")],
        });
    let g = complete(complete(g, "a"), "b");
    assert_eq!(g.state.ready_tasks(), vec![id("c")]);
}

#[test]
fn a_failed_child_bubbles_up_and_the_group_stays_in_progress() {
    let settings = Settings {
        max_test_retries: 0,
        ..Settings::default()
    };
    let g = given_run_with(settings, phases())
        .and(start("b"))
        .and(submit("b"))
        .and(tests("b", false));
    assert_eq!(g.status("b"), TaskStatus::Failed);
    assert_eq!(g.status("p1"), TaskStatus::InProgress);
    assert_eq!(g.state.failed_descendants(&id("p1")), vec![id("b")]);
    let board = projections::Board::of(&g.state);
    assert_eq!(board.row(&id("p1")).unwrap().failed_children, vec![id("b")]);
    assert_eq!(
        g.state.readiness(&id("c")),
        Readiness::Waiting { on: vec![id("p1")] }
    );
}

#[test]
fn a_group_is_never_started_itself() {
    given_run(phases())
        .when(start("p1"))
        .then_rejected(Rejection::IsGroup { task: id("p1") });
}

#[test]
fn nesting_deeper_than_max_depth_is_rejected() {
    let tasks = vec![
        task("l1"),
        task("l2").parent("l1"),
        task("l3").parent("l2"),
        task("l4").parent("l3"),
    ];
    given([])
        .when(CommandKind::StartRun {
            run: RunId::from("r"),
            workflow: "w".into(),
            workflow_hash: Hash::of(b"w"),
            settings: Settings::default(),
            tasks,
            cost: Default::default(),
            review: Default::default(),
        })
        .then_rejected(Rejection::TooDeep {
            task: id("l4"),
            depth: 4,
            max: 3,
        });
}

#[test]
fn depending_on_your_own_group_is_a_cycle() {
    let tasks = vec![task("g"), task("a").parent("g").after(&["g"])];
    given([])
        .when(CommandKind::StartRun {
            run: RunId::from("r"),
            workflow: "w".into(),
            workflow_hash: Hash::of(b"w"),
            settings: Settings::default(),
            tasks,
            cost: Default::default(),
            review: Default::default(),
        })
        .then_rejected_where(|r| matches!(r, Rejection::DependencyCycle { .. }));
}

#[test]
fn cancelling_a_group_cancels_its_unfinished_children() {
    let g = complete(given_run(phases()), "a")
        .when(CommandKind::Cancel {
            task: id("p1"),
            reason: "descoped".into(),
        })
        .then_ok();
    assert_eq!(g.status("a"), TaskStatus::Done);
    assert_eq!(g.status("b"), TaskStatus::Cancelled);
    assert_eq!(g.status("p1"), TaskStatus::Cancelled);
}

#[test]
fn a_test_found_by_a_convention_is_recorded_with_the_convention_that_chose_it() {
    let found = || CommandKind::RecordTestsDiscovered {
        task: id("a"),
        convention: "pytest tests/test_{id}.py".into(),
        test: "pytest tests/test_a.py -v".into(),
    };
    let mut spec = task("a");
    spec.test = Some("pytest tests/test_a.py -v".into());
    let g = given_run(vec![spec.clone()])
        .when(found())
        .then(vec![EventKind::TestsDiscovered {
            task: id("a"),
            convention: "pytest tests/test_{id}.py".into(),
            test: "pytest tests/test_a.py -v".into(),
        }]);
    // It changes nothing but the record: the task still runs the test its spec names.
    assert_eq!(g.status("a"), TaskStatus::Open);
    // A discovery that is not the task's own test command is refused: the record cannot lie.
    given_run(vec![task("a").tested()])
        .when(found())
        .then_rejected_where(|r| matches!(r, Rejection::InvalidRevision { reason } if reason.contains("not the discovered")));
    given_run(vec![spec])
        .when(CommandKind::RecordTestsDiscovered {
            task: id("ghost"),
            convention: "test_file".into(),
            test: "pytest ghost.py -v".into(),
        })
        .then_rejected_where(|r| matches!(r, Rejection::UnknownTask { .. }));
}
