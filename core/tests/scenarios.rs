//! One scenario per seed, snapshotted (insta, YAML) through every projection: board,
//! supervisor stack, latest results, stage health, eval audit, run summary. A snapshot change
//! is a reviewed change: `cargo insta review`.

use runlog_core::projections::stack::StackEntry;
use runlog_core::projections::{health, project, Board};
use runlog_core::*;
use serde::Serialize;

#[derive(Serialize)]
struct View {
    board: Board,
    stack: Vec<StackEntry>,
    latest_results: std::collections::BTreeMap<String, Value>,
    stage_health: Vec<health::StageHealthRow>,
    audit: projections::EvalAudit,
    summary: projections::RunSummary,
}

fn view(events: &[Event]) -> View {
    let p = project(events);
    assert_eq!(
        p.state,
        fold(events),
        "projection fold and plain fold disagree"
    );
    View {
        board: Board::of(&p.state),
        stack: p.stack.entries(),
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

#[test]
fn per_task_reevaluation() {
    insta::assert_yaml_snapshot!(view(&scenarios::per_task_reevaluation().unwrap()));
}

#[test]
fn eval_gate() {
    insta::assert_yaml_snapshot!(view(&scenarios::eval_gate().unwrap()));
}

#[test]
fn supervised_review_pipeline() {
    insta::assert_yaml_snapshot!(view(&scenarios::supervised_review_pipeline().unwrap()));
}

#[test]
fn continuous_refactoring() {
    insta::assert_yaml_snapshot!(view(&scenarios::continuous_refactoring().unwrap()));
}

#[test]
fn hierarchical_verification_loop() {
    insta::assert_yaml_snapshot!(view(&scenarios::hierarchical_verification_loop().unwrap()));
}
