//! The five seed scenarios as event streams, built through `decide`: the runs every
//! projection, diff and audit snapshot test replays. One per seed document.

use crate::command::CommandKind;
use crate::event::{Event, Replacement};
use crate::ids::StageId;
use crate::rejection::Rejection;
use crate::script::*;
use crate::settings::{Budget, RetryLimit, RetryStrategy};
use crate::spec::{TaskClass, TaskSpec};
use crate::value::Value;

fn spec(id: &str, description: &str) -> TaskSpec {
    TaskSpec {
        run: Some("./agent.sh".into()),
        ..TaskSpec::new(id, description)
    }
}

/// Re-evaluation: a destructive split triggers a replan that replaces a pending task.
pub fn per_task_reevaluation() -> Result<Vec<Event>, Rejection> {
    let g = Script::run(vec![
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
        answers: None,
    })
    .and(start("api"))
    .and(submit("api"))
    .and(start("volume2"))
    .and(submit("volume2"))
    .and(start("delete"))
    .and(submit("delete"))
    .and(CommandKind::Finish);
    g.finish()
}

/// The eval gate with a rescue, a near-threshold pass, a capped failure and an approval.
pub fn eval_gate() -> Result<Vec<Event>, Rejection> {
    let g = Script::run(vec![
        task("a").evaluated(),
        task("b").after(&["a"]).evaluated(),
        task("c").evaluated(),
        task("d").after(&["c"]),
    ])
    .and(start_as("a", "agent-685", "wt-a"))
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
    g.finish()
}

/// The supervisor: a supervised review pipeline with retries, a strategy change and an open circuit.
pub fn supervised_review_pipeline() -> Result<Vec<Event>, Rejection> {
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
    let g = Script::run(vec![
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
    g.finish()
}

/// Refactoring loops: unlimited retries with required checkpoints and classifications.
pub fn continuous_refactoring() -> Result<Vec<Event>, Rejection> {
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
    let g = Script::run(vec![
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
    g.finish()
}

/// Phases with a failing then passing verification loop, and a rollback.
pub fn hierarchical_verification_loop() -> Result<Vec<Event>, Rejection> {
    let g = Script::run(vec![
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
    g.finish()
}

/// Every scenario with the name its recorded run has.
pub fn all() -> Result<Vec<(&'static str, Vec<Event>)>, Rejection> {
    Ok(vec![
        ("seed_000_per_task_reevaluation", per_task_reevaluation()?),
        ("seed_001_eval_gate", eval_gate()?),
        (
            "seed_002_supervised_review_pipeline",
            supervised_review_pipeline()?,
        ),
        ("seed_003_continuous_refactoring", continuous_refactoring()?),
        (
            "seed_004_hierarchical_verification_loop",
            hierarchical_verification_loop()?,
        ),
    ])
}
