//! Seed 001: the eval gate. Submit waits in pending-eval; only a passing score makes a task
//! done and lets dependents start; failing scores rescue the same agent in the same worktree,
//! capped, then fail; people may approve or reject; legacy `PendingValidation` is upcast.

mod support;
use runlog_core::*;
use support::*;

fn gated_pair() -> Given {
    given_run(vec![task("a").evaluated(), task("b").after(&["a"])])
}

// --- the eval gate's six validation rules, in runlog's words ---

#[test]
fn submit_of_an_evaluated_task_waits_in_pending_eval_not_done() {
    let g = gated_pair().and(start("a")).when(submit("a")).then_ok();
    assert_eq!(g.status("a"), TaskStatus::PendingEval);
}

#[test]
fn dependent_becomes_ready_only_after_the_eval_passes() {
    let g = gated_pair().and(start("a")).and(submit("a"));
    assert_eq!(
        g.state.ready_tasks(),
        Vec::<TaskId>::new(),
        "b must not be ready while a is pending-eval"
    );
    g.clone()
        .when(start("b"))
        .then_rejected(Rejection::NotReady {
            task: id("b"),
            waiting_on: vec![id("a")],
        });
    let g = g.when(score("a", 0.75)).then_ok();
    assert_eq!(g.status("a"), TaskStatus::Done);
    assert_eq!(g.state.ready_tasks(), vec![id("b")]);
}

#[test]
fn failing_eval_keeps_the_dependent_waiting_and_rescues_the_task() {
    let g = gated_pair()
        .and(start_as("a", "agent-7", "wt-a"))
        .and(submit("a"))
        .when(score("a", 0.4))
        .then_ok();
    assert_eq!(g.status("a"), TaskStatus::InProgress);
    assert_eq!(g.task("a").rescues, 1);
    assert_eq!(g.status("b"), TaskStatus::Open);
    assert_eq!(g.state.ready_tasks(), Vec::<TaskId>::new());
    // The rescue re-spawns the same agent identity in the same worktree.
    g.when(start("a")).then(vec![
        EventKind::TaskStarted {
            task: id("a"),
            agent: AgentId::from("agent-7"),
            worktree: "wt-a".into(),
            attempt: 2,
        },
        EventKind::StageStarted {
            stage: StageId::from("a"),
            task: id("a"),
            attempt: 2,
        },
    ]);
}

#[test]
fn rescues_are_capped_by_max_eval_rescues_then_the_task_fails() {
    let mut g = gated_pair();
    for n in 1..=3 {
        g = g.and(start("a")).and(submit("a"));
        g = g.when(score("a", 0.2)).then_ok();
        assert_eq!(g.task("a").last_gate, Some(GateOutcome::Rescue { n }));
    }
    let g = g.and(start("a")).and(submit("a"));
    g.when(score("a", 0.2)).then(vec![
        EventKind::EvalScored {
            task: id("a"),
            evaluator: "judge".into(),
            score: 0.2,
            dimensions: [("correctness".to_owned(), 0.2)].into(),
            notes: "notes for a".into(),
        },
        EventKind::GateDecided {
            task: id("a"),
            score: 0.2,
            threshold: 0.7,
            outcome: GateOutcome::Fail,
        },
    ]);
}

#[test]
fn tasks_done_before_the_gate_existed_stay_done() {
    let g = given([
        EventKind::RunStarted {
            run: RunId::from("legacy"),
            workflow: "old".into(),
            workflow_hash: Hash::of(b"old"),
            settings: Settings::default(),
        },
        EventKind::TaskAdded {
            spec: Box::new(task("a").evaluated()),
        },
        EventKind::TaskAdded {
            spec: Box::new(task("b").evaluated()),
        },
        EventKind::TaskStarted {
            task: id("a"),
            agent: AgentId::from("x"),
            worktree: "a".into(),
            attempt: 1,
        },
        EventKind::TaskApproved {
            task: id("a"),
            by: "migration".into(),
        },
        EventKind::PendingValidation { task: id("a") },
        EventKind::TaskStarted {
            task: id("b"),
            agent: AgentId::from("x"),
            worktree: "b".into(),
            attempt: 1,
        },
        EventKind::PendingValidation { task: id("b") },
    ]);
    assert_eq!(
        g.status("a"),
        TaskStatus::Done,
        "already resolved: stays done"
    );
    assert_eq!(
        g.status("b"),
        TaskStatus::PendingEval,
        "legacy pending-validation goes through the gate"
    );
    g.when(score("b", 0.9)).then_ok();
}

// --- the rest of the gate's rules ---

#[test]
fn gate_records_the_threshold_in_force_not_a_default() {
    let settings = Settings {
        eval_threshold: 0.85,
        ..Settings::default()
    };
    let g = given_run_with(settings, vec![task("a").evaluated()])
        .and(start("a"))
        .and(submit("a"));
    let g = g.when(score("a", 0.8)).then_ok();
    assert!(matches!(
        g.events.last().map(|e| &e.kind),
        Some(EventKind::GateDecided { threshold, outcome: GateOutcome::Rescue { n: 1 }, .. }) if *threshold == 0.85
    ));
}

#[test]
fn score_exactly_at_the_threshold_passes() {
    let g = gated_pair()
        .and(start("a"))
        .and(submit("a"))
        .when(score("a", 0.7))
        .then_ok();
    assert_eq!(g.status("a"), TaskStatus::Done);
}

#[test]
fn rescue_with_another_agent_or_worktree_is_rejected() {
    let g = gated_pair()
        .and(start_as("a", "agent-7", "wt-a"))
        .and(submit("a"))
        .and(score("a", 0.1));
    g.clone()
        .when(start_as("a", "agent-8", "wt-a"))
        .then_rejected(Rejection::IdentityChanged {
            task: id("a"),
            field: "agent".into(),
            expected: "agent-7".into(),
            given: "agent-8".into(),
        });
    g.when(start_as("a", "agent-7", "wt-other"))
        .then_rejected_where(
            |r| matches!(r, Rejection::IdentityChanged { field, .. } if field == "worktree"),
        );
}

#[test]
fn rescue_carries_the_eval_feedback_to_the_next_attempt() {
    let g = gated_pair()
        .and(start("a"))
        .and(submit("a"))
        .and(score_dims(
            "a",
            0.5,
            &[("correctness", 0.3), ("style", 0.9)],
        ));
    let feedback = g.task("a").feedback.clone().unwrap();
    assert!(feedback.contains("score 0.5"), "{feedback}");
    assert!(feedback.contains("correctness: 0.3"), "{feedback}");
    assert!(feedback.contains("notes for a"), "{feedback}");
    assert!(
        feedback.find("correctness").unwrap() < feedback.find("style").unwrap(),
        "weakest first"
    );
}

#[test]
fn with_auto_rescue_off_a_failing_score_fails_the_task() {
    let settings = Settings {
        auto_rescue: false,
        ..Settings::default()
    };
    let g = given_run_with(
        settings,
        vec![task("a").evaluated(), task("b").after(&["a"])],
    )
    .and(start("a"))
    .and(submit("a"))
    .when(score("a", 0.3))
    .then_ok();
    assert_eq!(g.status("a"), TaskStatus::Failed);
    assert_eq!(
        g.state.readiness(&id("b")),
        Readiness::Blocked { by: vec![id("a")] }
    );
}

#[test]
fn approve_bypasses_the_gate_and_unblocks_dependents() {
    let g = gated_pair()
        .and(start("a"))
        .and(submit("a"))
        .when(approve("a"))
        .then_ok();
    assert_eq!(g.status("a"), TaskStatus::Done);
    assert_eq!(g.state.ready_tasks(), vec![id("b")]);
}

#[test]
fn approve_may_overrule_a_gate_that_failed_the_task() {
    let settings = Settings {
        auto_rescue: false,
        ..Settings::default()
    };
    let g = given_run_with(settings, vec![task("a").evaluated()])
        .and(start("a"))
        .and(submit("a"))
        .and(score("a", 0.3))
        .when(approve("a"))
        .then_ok();
    assert_eq!(g.status("a"), TaskStatus::Done);
}

#[test]
fn approve_is_rejected_for_a_task_not_waiting_for_the_gate() {
    gated_pair()
        .and(start("a"))
        .when(approve("a"))
        .then_rejected(Rejection::WrongStatus {
            task: id("a"),
            action: "approve".into(),
            status: TaskStatus::InProgress,
            allowed: vec![TaskStatus::PendingEval],
        });
}

#[test]
fn reject_fails_the_task_or_reopens_it() {
    let g = gated_pair().and(start("a")).and(submit("a"));
    let failed = g.clone().when(reject("a", false)).then_ok();
    assert_eq!(failed.status("a"), TaskStatus::Failed);
    let reopened = g.when(reject("a", true)).then_ok();
    assert_eq!(reopened.status("a"), TaskStatus::Open);
    assert!(reopened
        .task("a")
        .feedback
        .as_deref()
        .unwrap()
        .contains("not good enough"));
}

#[test]
fn scores_outside_zero_to_one_or_not_numbers_are_rejected() {
    let g = gated_pair().and(start("a")).and(submit("a"));
    g.clone()
        .when(score("a", 1.2))
        .then_rejected(Rejection::InvalidScore {
            task: id("a"),
            what: "score".into(),
            value: "1.2".into(),
        });
    g.clone()
        .when(score("a", f64::NAN))
        .then_rejected_where(|r| matches!(r, Rejection::InvalidScore { .. }));
    g.when(score_dims("a", 0.8, &[("style", -0.1)]))
        .then_rejected(Rejection::InvalidScore {
            task: id("a"),
            what: "dimension style".into(),
            value: "-0.1".into(),
        });
}

#[test]
fn an_evaluator_error_is_recorded_and_the_task_keeps_waiting_for_a_decision() {
    let g = gated_pair()
        .and(start("a"))
        .and(submit("a"))
        .when(CommandKind::RecordEvalError {
            task: id("a"),
            evaluator: "judge".into(),
            error: "no JSON object in evaluator output".into(),
        })
        .then_ok();
    assert_eq!(g.status("a"), TaskStatus::PendingEval);
    assert!(g.task("a").eval_error.is_some());
    let g = g.when(score("a", 0.9)).then_ok();
    assert_eq!(g.status("a"), TaskStatus::Done);
    assert_eq!(g.task("a").eval_error, None);
}

#[test]
fn task_without_evaluator_or_tests_is_done_on_submit() {
    let g = given_run(vec![task("a"), task("b").after(&["a"])])
        .and(start("a"))
        .when(submit("a"))
        .then_ok();
    assert_eq!(g.status("a"), TaskStatus::Done);
    assert_eq!(g.state.ready_tasks(), vec![id("b")]);
}
