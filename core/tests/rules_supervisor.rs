//! Seed 002: the supervisor. Stage attempts push completed/failed entries on the state stack,
//! failures retry with backoff up to the strategy's limit, consecutive failures open the
//! stage's circuit, and the latest results are queryable.

mod support;
use runlog_core::projections::stack::StackState;
use runlog_core::projections::{health, project, SupervisorStack};
use runlog_core::Circuit;
use runlog_core::*;
use support::*;

fn strategy(max: u32) -> RetryStrategy {
    RetryStrategy {
        limit: RetryLimit::Max(max),
        delay_ms: 1_000,
        backoff: 2.0,
        circuit_after: 0,
        ..RetryStrategy::default()
    }
}

#[test]
fn a_failed_stage_schedules_a_retry_with_backoff() {
    let g = given_run(vec![task("dev").retry(strategy(3))])
        .and(start("dev"))
        .and(fail_stage("dev", "build failed"));
    let g = g.wait_ms(1_000).and(start("dev"));
    g.when(fail_stage("dev", "build failed again")).then(vec![
        EventKind::StageFailed {
            stage: StageId::from("dev"),
            task: id("dev"),
            error: "build failed again".into(),
            error_type: "exit-code".into(),
            retry_count: 2,
            duration_ms: 50,
        },
        EventKind::RetryScheduled {
            stage: StageId::from("dev"),
            task: id("dev"),
            attempt: 3,
            delay_ms: 2_000,
        },
    ]);
}

#[test]
fn a_retry_cannot_start_before_its_delay() {
    let g = given_run(vec![task("dev").retry(RetryStrategy {
        delay_ms: 5_000,
        ..strategy(3)
    })])
    .and(start("dev"))
    .and(fail_stage("dev", "boom"));
    g.clone()
        .when(start("dev"))
        .then_rejected_where(|r| matches!(r, Rejection::RetryNotDue { .. }));
    g.wait_ms(5_000).when(start("dev")).then_ok();
}

#[test]
fn retries_stop_at_max_retries_and_the_task_fails() {
    let mut g = given_run(vec![task("dev").retry(RetryStrategy {
        delay_ms: 0,
        ..strategy(2)
    })]);
    for _ in 0..2 {
        g = g.and(start("dev")).and(fail_stage("dev", "boom"));
        assert_eq!(g.status("dev"), TaskStatus::InProgress);
    }
    let g = g
        .and(start("dev"))
        .when(fail_stage("dev", "boom"))
        .then_ok();
    assert_eq!(g.status("dev"), TaskStatus::Failed);
    assert!(g
        .task("dev")
        .reason
        .as_deref()
        .unwrap()
        .contains("max 2 retries"));
}

#[test]
fn consecutive_failures_open_the_circuit_and_stop_the_stage() {
    let s = RetryStrategy {
        delay_ms: 0,
        circuit_after: 3,
        ..strategy(10)
    };
    let tasks = vec![
        task("a").stage("dev").retry(s.clone()),
        task("b").stage("dev").retry(s),
    ];
    let mut g = given_run(tasks);
    for _ in 0..2 {
        g = g.and(start("a")).and(fail_stage("a", "boom"));
    }
    let g = g.and(start("a")).when(fail_stage("a", "boom")).then_ok();
    assert_eq!(g.status("a"), TaskStatus::Failed);
    assert!(g.events.iter().any(|e| e.kind
        == EventKind::CircuitOpened {
            stage: StageId::from("dev"),
            failures: 3
        }));
    g.clone()
        .when(start("b"))
        .then_rejected(Rejection::CircuitOpen {
            stage: StageId::from("dev"),
        });
    assert!(
        matches!(outcome(&g.state), RunOutcome::Failed { failed, blocked } if failed == vec![id("a")] && blocked == vec![id("b")])
    );
    let g = g
        .when(CommandKind::CloseCircuit {
            stage: StageId::from("dev"),
        })
        .then_ok();
    g.when(start("b")).then_ok();
}

#[test]
fn a_task_of_a_stage_whose_circuit_is_open_shows_as_blocked_not_ready() {
    // Given b of stage dev, with nothing to wait for, and a's three failures opening dev's
    // circuit (a notify stage after deploy).
    let s = RetryStrategy {
        delay_ms: 0,
        circuit_after: 3,
        ..strategy(10)
    };
    let mut g = given_run(vec![
        task("a").stage("dev").retry(s.clone()),
        task("b").stage("dev").retry(s),
    ]);
    assert_eq!(g.state.readiness(&id("b")), Readiness::Ready);
    for _ in 0..3 {
        g = g.and(start("a")).and(fail_stage("a", "boom"));
    }
    // Then b is shown as the engine treats it: not ready, and why.
    let dev = StageId::from("dev");
    assert_eq!(
        g.state.readiness(&id("b")),
        Readiness::CircuitOpen { stage: dev.clone() }
    );
    assert!(g.state.ready_tasks().is_empty());
    let board = runlog_core::projections::Board::of(&g.state);
    assert_eq!(
        board.row(&id("b")).unwrap().readiness,
        Some(Readiness::CircuitOpen { stage: dev.clone() })
    );
    // When the circuit is closed, b is ready again.
    let g = g.when(CommandKind::CloseCircuit { stage: dev }).then_ok();
    assert_eq!(g.state.readiness(&id("b")), Readiness::Ready);
}

#[test]
fn a_success_resets_the_consecutive_failure_count() {
    let s = RetryStrategy {
        delay_ms: 0,
        circuit_after: 2,
        ..strategy(10)
    };
    let g = given_run(vec![
        task("a").stage("dev").retry(s.clone()),
        task("b").stage("dev").retry(s),
    ])
    .and(start("a"))
    .and(fail_stage("a", "boom"))
    .and(start("a"))
    .and(submit("a"))
    .and(start("b"))
    .when(fail_stage("b", "boom"))
    .then_ok();
    assert_eq!(
        g.status("b"),
        TaskStatus::InProgress,
        "one failure after a success does not open the circuit"
    );
    assert_eq!(
        g.state.stages[&StageId::from("dev")].circuit,
        Circuit::Closed
    );
}

fn stack_of(g: &Given) -> SupervisorStack {
    project(&g.events).stack
}

#[test]
fn every_completion_and_failure_is_pushed_on_the_state_stack() {
    let review = Value::from(serde_json::json!({"overall_score": 65, "total_critical_issues": 5}));
    let g = given_run(vec![
        task("code_review"),
        task("developer").after(&["code_review"]).retry(strategy(3)),
    ])
    .and(start("code_review"))
    .and(submit_with("code_review", review.clone()))
    .and(start("developer"))
    .and(fail_stage("developer", "Build failed: compilation errors"));
    let stack = stack_of(&g);
    let entries = stack.entries();
    let states: Vec<(StackState, &str, u32)> = entries
        .iter()
        .map(|e| (e.state, e.stage.as_str(), e.retry_count))
        .collect();
    assert_eq!(
        states,
        vec![
            (StackState::StageCompleted, "code_review", 0),
            (StackState::StageFailed, "developer", 1)
        ]
    );
    assert_eq!(
        stack.latest_result(&StageId::from("code_review")),
        Some(&review)
    );
    assert_eq!(stack.latest_result(&StageId::from("developer")), None);
}

#[test]
fn latest_results_prefer_the_most_recent_completion_per_stage() {
    let v = |n: i64| Value::Int(n);
    let s = RetryStrategy {
        delay_ms: 0,
        ..strategy(3)
    };
    let g = given_run(vec![
        task("a").stage("review").retry(s.clone()),
        task("b").stage("review").retry(s),
        task("c"),
    ])
    .and(start("a"))
    .and(submit_with("a", v(1)))
    .and(start("b"))
    .and(submit_with("b", v(2)))
    .and(start("c"))
    .and(submit_with("c", v(3)));
    let stack = stack_of(&g);
    let all = stack.all_latest_results();
    assert_eq!(all.get(&StageId::from("review")), Some(&&v(2)));
    assert_eq!(all.get(&StageId::from("c")), Some(&&v(3)));
    assert_eq!(all.len(), 2);
}

#[test]
fn stage_health_counts_executions_durations_and_failures() {
    let g = given_run(vec![task("dev").retry(RetryStrategy {
        delay_ms: 0,
        ..strategy(3)
    })])
    .and(start("dev"))
    .and(fail_stage("dev", "boom"))
    .and(start("dev"))
    .and(submit("dev"));
    let rows = health::stage_health(&g.state);
    assert_eq!(rows.len(), 1);
    let h = &rows[0];
    assert_eq!(
        (
            h.executions,
            h.completions,
            h.failures,
            h.total_duration_ms,
            h.consecutive_failures
        ),
        (2, 1, 1, 150, 0)
    );
}

#[test]
fn a_strategy_set_on_the_stage_overrides_the_tasks_own() {
    let g = given_run(vec![task("dev").retry(RetryStrategy {
        delay_ms: 0,
        ..strategy(0)
    })])
    .when(CommandKind::SetStrategy {
        stage: StageId::from("dev"),
        strategy: RetryStrategy {
            delay_ms: 0,
            ..strategy(5)
        },
    })
    .then_ok()
    .and(start("dev"))
    .when(fail_stage("dev", "boom"))
    .then_ok();
    assert_eq!(
        g.status("dev"),
        TaskStatus::InProgress,
        "the stage's strategy of 5 retries applies, not the task's 0"
    );
}

#[test]
fn backoff_grows_geometrically_and_is_capped() {
    let s = RetryStrategy {
        delay_ms: 100,
        backoff: 3.0,
        ..RetryStrategy::default()
    };
    assert_eq!(
        (s.delay_before(1), s.delay_before(2), s.delay_before(3)),
        (100, 300, 900)
    );
    assert_eq!(s.delay_before(200), MAX_RETRY_DELAY_MS);
}

#[test]
fn a_strategy_with_backoff_below_one_is_rejected() {
    given_run(vec![task("dev")])
        .when(CommandKind::SetStrategy {
            stage: StageId::from("dev"),
            strategy: RetryStrategy {
                backoff: 0.5,
                ..strategy(1)
            },
        })
        .then_rejected_where(|r| matches!(r, Rejection::InvalidSetting { .. }));
}

#[test]
fn popping_the_stack_is_a_rollback_and_it_can_be_undone() {
    let g = given_run(vec![
        task("review"),
        task("dev").after(&["review"]).retry(strategy(3)),
    ])
    .and(start("review"))
    .and(submit_with("review", Value::Int(65)));
    let one_entry = g.state.seq;
    let g = g.and(start("dev")).and(fail_stage("dev", "boom"));
    let two_entries = g.state.seq;
    assert_eq!(stack_of(&g).len(), 2);
    let g = g.and(CommandKind::Rollback {
        to_seq: one_entry,
        reason: "pop".into(),
        by: "me".into(),
    });
    assert_eq!(stack_of(&g).len(), 1, "the rollback popped the failure");
    let g = g.and(CommandKind::Rollback {
        to_seq: two_entries,
        reason: "undo the pop".into(),
        by: "me".into(),
    });
    let restored = stack_of(&g);
    assert_eq!(restored.len(), 2);
    assert_eq!(
        restored.entries()[1].error.as_ref().map(|e| e.0.as_str()),
        Some("boom")
    );
}

#[test]
fn a_long_history_keeps_every_entry_and_a_rollback_restores_any_of_them() {
    // More entries than the stack keeps in one of its blocks, so that a rollback lands in a
    // later block than the one the top is in.
    let entry = |seq: u64| runlog_core::projections::stack::StackEntry {
        seq,
        state: StackState::StageCompleted,
        stage: StageId::from(format!("stage-{}", seq % 7).as_str()),
        task: id(&format!("task-{}", seq % 13)),
        result: Some(Value::Int(seq as i64)),
        error: None,
        duration_ms: seq,
        retry_count: 0,
        at: Timestamp(seq),
    };
    let mut stack = SupervisorStack::seeded((1..=10_000).map(entry).collect());
    assert_eq!(stack.len(), 10_000);
    assert_eq!(stack.entries().last(), Some(&entry(10_000)));
    stack.observe(
        10_001,
        &Event {
            at: Timestamp(10_001),
            kind: EventKind::RolledBack {
                to_seq: 5_000,
                reason: "back".into(),
                by: "me".into(),
            },
        },
    );
    let entries = stack.entries();
    assert_eq!(entries.len(), 5_000);
    assert_eq!(entries.first(), Some(&entry(1)));
    assert_eq!(entries.last(), Some(&entry(5_000)));
    assert_eq!(
        stack.latest_result(&StageId::from("stage-1")),
        Some(&Value::Int(4_999)),
        "the newest completion of stage-1 at or before seq 5,000 (4,999 = 7 × 714 + 1)"
    );
}
