//! For each seed scenario, replayed from a stored log: the board at a past seq (halfway), the
//! diff from there to the head, and the eval audit. Reviewed with `cargo insta review`.

use runlog_core::projections::Board;
use runlog_core::scenarios;
use runlog_replay::control::append;
use runlog_replay::diff::{diff, Side};
use runlog_replay::Replay;
use runlog_store::Log;
use serde::Serialize;

#[derive(Serialize)]
struct View {
    halfway_seq: u64,
    board_halfway: Board,
    diff_halfway_to_head: runlog_replay::diff::Diff,
    audit: runlog_core::projections::EvalAudit,
}

fn view(events: &[runlog_core::Event]) -> View {
    let log = Log::memory().unwrap();
    append(&log, "run-1", 0, events).unwrap();
    let replay = Replay::new(&log).snapshot_every(5);
    let head = replay.head_seq("run-1").unwrap();
    let half = head / 2;
    let then = replay.project("run-1", Some(half), None).unwrap();
    let now = replay.project("run-1", None, None).unwrap();
    assert_eq!(
        then.state,
        replay.state_at("run-1", half).unwrap(),
        "snapshot path and full projection agree"
    );
    View {
        halfway_seq: half,
        board_halfway: Board::of(&then.state),
        diff_halfway_to_head: diff(
            Side {
                state: &then.state,
                stack: &then.stack,
            },
            Side {
                state: &now.state,
                stack: &now.stack,
            },
        ),
        audit: now.audit,
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
