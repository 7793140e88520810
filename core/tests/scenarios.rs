//! One scenario per seed, snapshotted (insta, YAML) through every projection: board,
//! supervisor stack, latest results, stage health, eval audit, run summary. A snapshot change
//! is a reviewed change: `cargo insta review`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod support;
use runlog_core::projections::stack::StackEntry;
use runlog_core::projections::{health, project, Board};
use runlog_core::*;
use serde::Serialize;
use support::*;

#[derive(Serialize)]
struct View {
    board: Board,
    stack: Vec<StackEntry>,
    latest_results: std::collections::BTreeMap<String, Value>,
    stage_health: Vec<health::StageHealthRow>,
    audit: projections::EvalAudit,
    summary: projections::RunSummary,
}

fn view(g: &Given) -> View {
    let p = project(&g.events);
    assert_eq!(
        p.state, g.state,
        "projection fold and harness fold disagree"
    );
    View {
        board: Board::of(&p.state),
        stack: p.stack.entries().into_iter().cloned().collect(),
        latest_results: p
            .stack
            .all_latest_results()
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect(),
        stage_health: health::stage_health(&p.state),
        audit: p.audit,
        summary: p.summary,
    }
}

fn spec(id: &str, description: &str) -> TaskSpec {
    TaskSpec {
        run: Some("./agent.sh".into()),
        ..TaskSpec::new(id, description)
    }
}

#[test]
fn seed_000_per_task_reevaluation() {
    let g = given_run(vec![
        spec("breakout", "Extract BreakoutAnalyst from lib/analysts.py"),
        spec("volume", "Extract VolumeAnalyst from lib/analysts.py"),
        spec("delete", "Delete lib/analysts.py").after(&["volume"]),
        spec("api", "Add a feature to lib/api.py"),
    ])
    .and(start("breakout"))
    .and(submit("breakout"))
    .and(CommandKind::RevisePlan {
        cancel: vec![id("volume")],
        add: vec![spec(
            "volume2",
            "Extract VolumeAnalyst into lib/analysts/volume.py",
        )],
        replaces: vec![Replacement {
            old: id("volume"),
            new: id("volume2"),
        }],
        reason: "breakout already moved; plan from the current file state".into(),
    })
    .and(start("api"))
    .and(submit("api"))
    .and(start("volume2"))
    .and(submit("volume2"))
    .and(start("delete"))
    .and(submit("delete"))
    .and(CommandKind::Finish);
    insta::assert_yaml_snapshot!(view(&g));
}

#[test]
fn seed_001_eval_gate() {
    let g = given_run(vec![
        task("a").evaluated(),
        task("b").after(&["a"]).evaluated(),
        task("c").evaluated(),
        task("d").after(&["c"]),
    ])
    .and(start_as("a", "agent-685", "/wt/a"))
    .and(submit("a"))
    .and(score_dims(
        "a",
        0.55,
        &[("correctness", 0.5), ("completeness", 0.6)],
    ))
    .and(start("a"))
    .and(submit("a"))
    .and(score_dims(
        "a",
        0.75,
        &[("correctness", 0.8), ("completeness", 0.72)],
    ))
    .and(start("b"))
    .and(submit("b"))
    .and(score_dims("b", 0.72, &[("correctness", 0.72)]));
    let mut g = g;
    for _ in 0..4 {
        g = g.and(start("c")).and(submit("c")).and(score("c", 0.3));
    }
    let g = g
        .and(approve("c"))
        .and(start("d"))
        .and(submit("d"))
        .and(CommandKind::Finish);
    insta::assert_yaml_snapshot!(view(&g));
}

#[test]
fn seed_002_supervised_review_pipeline() {
    let review = Value::from(serde_json::json!({
        "overall_score": 65,
        "total_critical_issues": 5,
        "refactoring_suggestions": "Extract long methods"
    }));
    let retry = RetryStrategy {
        limit: RetryLimit::Max(5),
        delay_ms: 500,
        backoff: 1.5,
        circuit_after: 0,
        ..RetryStrategy::default()
    };
    let flaky = RetryStrategy {
        limit: RetryLimit::Max(10),
        delay_ms: 0,
        backoff: 1.0,
        circuit_after: 2,
        ..RetryStrategy::default()
    };
    let g = given_run(vec![
        task("project_analysis"),
        task("code_review").after(&["project_analysis"]),
        task("developer").after(&["code_review"]).retry(retry),
        task("deploy").after(&["developer"]).retry(flaky),
    ])
    .and(start("project_analysis"))
    .and(submit_with(
        "project_analysis",
        Value::from(serde_json::json!({"files": 12})),
    ))
    .and(start("code_review"))
    .and(submit_with("code_review", review))
    .and(start("developer"))
    .and(fail_stage(
        "developer",
        "Build failed: compilation errors in app.py",
    ))
    .and(CommandKind::SetStrategy {
        stage: StageId::from("developer"),
        strategy: RetryStrategy {
            limit: RetryLimit::Max(5),
            delay_ms: 0,
            backoff: 1.5,
            timeout_ms: Some(600_000),
            circuit_after: 0,
            budget: Budget::default(),
        },
    })
    .and(start("developer"))
    .and(fail_stage(
        "developer",
        "Build failed: tests did not compile",
    ))
    .and(start("developer"))
    .and(submit_with(
        "developer",
        Value::from(serde_json::json!({"build_status": "success", "tests_passed": 45})),
    ))
    .and(start("deploy"))
    .and(fail_stage("deploy", "registry unreachable"))
    .and(start("deploy"))
    .and(fail_stage("deploy", "registry unreachable"))
    .and(CommandKind::Finish);
    insta::assert_yaml_snapshot!(view(&g));
}

#[test]
fn seed_003_continuous_refactoring() {
    let never_give_up = RetryStrategy {
        limit: RetryLimit::Unlimited,
        budget: Budget {
            max_attempts: Some(10),
            max_elapsed_ms: None,
        },
        delay_ms: 0,
        backoff: 1.0,
        timeout_ms: None,
        circuit_after: 0,
    };
    let checkpoints = [
        "read_all_target_files",
        "read_architecture",
        "map_file_relationships",
    ];
    let g = given_run(vec![
        task("dedupe-utils")
            .retry(never_give_up.clone())
            .checkpoints(&checkpoints),
        task("missing-method")
            .retry(never_give_up)
            .checkpoints(&checkpoints[..1]),
    ])
    .and(start("dedupe-utils"))
    .and(checkpoint("dedupe-utils", "read_all_target_files"))
    .and(CommandKind::Classify {
        task: id("dedupe-utils"),
        class: TaskClass::AnalyzeMore,
    })
    .and(fail_stage("dedupe-utils", "merge conflict"))
    .and(start("dedupe-utils"))
    .and(checkpoint("dedupe-utils", "read_architecture"))
    .and(fail_stage("dedupe-utils", "tests broke after merge"))
    .and(start("dedupe-utils"))
    .and(checkpoint("dedupe-utils", "map_file_relationships"))
    .and(CommandKind::Classify {
        task: id("dedupe-utils"),
        class: TaskClass::Merge,
    })
    .and(submit("dedupe-utils"))
    .and(start("missing-method"))
    .and(checkpoint("missing-method", "read_all_target_files"))
    .and(CommandKind::Classify {
        task: id("missing-method"),
        class: TaskClass::NewCode,
    })
    .and(CommandKind::PostMessage {
        task: Some(id("missing-method")),
        from: "agent".into(),
        text: "needs a new exporter; reported".into(),
    })
    .and(submit("missing-method"))
    .and(CommandKind::Finish);
    insta::assert_yaml_snapshot!(view(&g));
}

#[test]
fn seed_004_hierarchical_verification_loop() {
    let g = given_run(vec![
        task("phase-1"),
        task("buffer-tests").parent("phase-1"),
        task("buffer-impl")
            .parent("phase-1")
            .after(&["buffer-tests"])
            .tested(),
        task("phase-2").after(&["phase-1"]),
        task("commands").parent("phase-2").tested().evaluated(),
        TaskSpec {
            requires_testing: false,
            ..task("docs").parent("phase-2").tested()
        },
    ])
    .and(start("buffer-tests"))
    .and(submit("buffer-tests"))
    .and(start("buffer-impl"))
    .and(submit("buffer-impl"))
    .and(tests("buffer-impl", false))
    .and(start("buffer-impl"))
    .and(submit("buffer-impl"))
    .and(tests("buffer-impl", true))
    .and(start("commands"))
    .and(start("docs"))
    .and(submit("docs"))
    .and(submit("commands"));
    let rollback_to = g.state.seq;
    let g = g
        .and(tests("commands", true))
        .and(score("commands", 0.9))
        .and(CommandKind::Rollback {
            to_seq: rollback_to,
            reason: "eval was run on a stale build".into(),
            by: "alice".into(),
        })
        .and(tests("commands", true))
        .and(score("commands", 0.8))
        .and(CommandKind::Finish);
    insta::assert_yaml_snapshot!(view(&g));
}
