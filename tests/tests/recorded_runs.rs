//! The runs recorded by the runner under `fixtures/runs/` (JSON-lines exports) must keep
//! importing to the same head hash and replaying to the same projections, whatever changes in
//! the code. A difference here means old logs would replay differently: review it.

use runlog_core::projections::{health, Board, EvalAudit, RunSummary};
use runlog_replay::export::{import, Header};
use runlog_replay::Replay;
use runlog_store::{EventLog, Log};
use serde::Serialize;
use std::path::Path;

#[derive(Serialize)]
struct Replayed {
    head_hash: String,
    board: Board,
    stack_len: usize,
    stage_health: Vec<health::StageHealthRow>,
    audit: EvalAudit,
    summary: RunSummary,
}

fn replay(name: &str) -> Replayed {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures/runs")
        .join(format!("{name}.jsonl"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let header: Header = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    let log = Log::memory().unwrap();
    let imported = import(&log, &mut text.as_bytes(), None).unwrap();
    assert!(
        imported.same_head_hash,
        "{name}: import reproduces the recorded head hash"
    );
    assert_eq!(imported.head_hash, header.head_hash);
    assert!(log.verify(&header.run).unwrap().is_ok());
    let p = Replay::new(&log).project(&header.run, None, None).unwrap();
    Replayed {
        head_hash: imported.head_hash,
        board: Board::of(&p.state),
        stack_len: p.stack.len(),
        stage_health: health::stage_health(&p.state),
        audit: p.audit,
        summary: p.summary,
    }
}

macro_rules! recorded {
    ($($test:ident => $file:literal),* $(,)?) => {
        $(
            #[test]
            fn $test() {
                insta::assert_yaml_snapshot!($file, replay($file));
            }
        )*
    };
}

recorded! {
    quickstart_replays_to_its_snapshot => "quickstart",
    seed_000_replays_to_its_snapshot => "seed-000-reevaluation",
    seed_001_replays_to_its_snapshot => "seed-001-eval-gate",
    seed_002_replays_to_its_snapshot => "seed-002-supervisor",
    seed_003_replays_to_its_snapshot => "seed-003-never-give-up",
    seed_004_replays_to_its_snapshot => "seed-004-phases",
    planner_replays_to_its_snapshot => "planner-adds-tasks",
    pytest_convention_replays_to_its_snapshot => "pytest-convention",
    sub_project_replays_to_its_snapshot => "sub-project",
    sub_project_child_replays_to_its_snapshot => "sub-project.buffer",
    workspace_replays_to_its_snapshot => "fix-the-test",
    agent_costs_replay_to_their_snapshot => "agent-costs",
    model_calls_replay_to_their_snapshot => "release-notes",
}
