//! Seed 003: never give up (unlimited retries bounded by a budget and the circuit breaker),
//! required checkpoints before a task may resolve, and the classification as an event.

mod support;
use runlog_core::*;
use support::*;

fn unlimited(budget: Budget) -> RetryStrategy {
    RetryStrategy {
        limit: RetryLimit::Unlimited,
        budget,
        delay_ms: 0,
        backoff: 1.0,
        timeout_ms: None,
        circuit_after: 0,
    }
}

#[test]
fn unlimited_retries_keep_going_past_any_fixed_count() {
    let mut g = given_run(vec![task("r").retry(unlimited(Budget {
        max_attempts: Some(50),
        max_elapsed_ms: None,
    }))]);
    for _ in 0..20 {
        g = g.and(start("r")).and(fail_stage("r", "not yet"));
    }
    assert_eq!(g.status("r"), TaskStatus::InProgress);
    assert_eq!(g.task("r").attempt, 20);
}

#[test]
fn an_attempt_budget_bounds_unlimited_retries() {
    let mut g = given_run(vec![task("r").retry(unlimited(Budget {
        max_attempts: Some(3),
        max_elapsed_ms: None,
    }))]);
    for _ in 0..2 {
        g = g.and(start("r")).and(fail_stage("r", "not yet"));
    }
    let g = g.and(start("r")).when(fail_stage("r", "not yet")).then_ok();
    assert_eq!(g.status("r"), TaskStatus::Failed);
    assert!(g
        .task("r")
        .reason
        .as_deref()
        .unwrap()
        .contains("attempt budget of 3"));
}

#[test]
fn a_time_budget_bounds_unlimited_retries() {
    let g = given_run(vec![task("r").retry(unlimited(Budget {
        max_attempts: None,
        max_elapsed_ms: Some(10_000),
    }))])
    .and(start("r"))
    .and(fail_stage("r", "not yet"));
    assert_eq!(g.status("r"), TaskStatus::InProgress);
    let g = g
        .and(start("r"))
        .wait_ms(20_000)
        .when(fail_stage("r", "not yet"))
        .then_ok();
    assert_eq!(g.status("r"), TaskStatus::Failed);
    assert!(g
        .task("r")
        .reason
        .as_deref()
        .unwrap()
        .contains("time budget"));
}

#[test]
fn unlimited_retries_without_any_bound_are_rejected() {
    given([])
        .when(CommandKind::StartRun {
            run: RunId::from("r"),
            workflow: "w".into(),
            workflow_hash: Hash::of(b"w"),
            settings: Settings::default(),
            tasks: vec![task("r").retry(unlimited(Budget::default()))],
            cost: Default::default(),
            review: Default::default(),
        })
        .then_rejected_where(
            |r| matches!(r, Rejection::InvalidSetting { field, .. } if field.contains("retry")),
        );
}

#[test]
fn a_task_cannot_resolve_before_its_required_checkpoints() {
    let g = given_run(vec![
        task("m").checkpoints(&["read_architecture", "map_relationships"])
    ])
    .and(start("m"))
    .and(checkpoint("m", "read_architecture"));
    g.clone()
        .when(submit("m"))
        .then_rejected(Rejection::CheckpointsMissing {
            task: id("m"),
            missing: vec!["map_relationships".into()],
        });
    let g = g
        .and(checkpoint("m", "map_relationships"))
        .when(submit("m"))
        .then_ok();
    assert_eq!(g.status("m"), TaskStatus::Done);
}

#[test]
fn the_classification_is_recorded_as_an_event() {
    let g = given_run(vec![task("m")]).and(start("m"));
    let g = g
        .when(CommandKind::Classify {
            task: id("m"),
            class: TaskClass::Merge,
        })
        .then(vec![EventKind::TaskClassified {
            task: id("m"),
            class: TaskClass::Merge,
        }]);
    assert_eq!(g.task("m").class, Some(TaskClass::Merge));
}

#[test]
fn new_code_is_only_a_verdict_after_every_checkpoint() {
    let g = given_run(vec![task("m").checkpoints(&["read_all_related_files"])]).and(start("m"));
    g.clone()
        .when(CommandKind::Classify {
            task: id("m"),
            class: TaskClass::NewCode,
        })
        .then_rejected_where(|r| matches!(r, Rejection::CheckpointsMissing { .. }));
    g.and(checkpoint("m", "read_all_related_files"))
        .when(CommandKind::Classify {
            task: id("m"),
            class: TaskClass::NewCode,
        })
        .then_ok();
}

#[test]
fn class_names_parse_as_agents_write_them() {
    assert_eq!(TaskClass::parse("NEW_CODE"), Some(TaskClass::NewCode));
    assert_eq!(
        TaskClass::parse("analyze-more"),
        Some(TaskClass::AnalyzeMore)
    );
    assert_eq!(TaskClass::parse("rewrite"), None);
    for c in TaskClass::ALL {
        assert_eq!(TaskClass::parse(c.name()), Some(c));
    }
}
