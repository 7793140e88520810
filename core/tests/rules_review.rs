//! The review queue and the verdicts' record: a held verdict waits in pending-eval whatever
//! its score, nothing starts its dependents until a person decides, and each person's decision
//! labels the verdict before it; what happened afterwards contradicts it or not.

use runlog_core::projections::judges::{Later, Verdicts};
use runlog_core::review::{ReviewMode, ReviewPolicy};
use runlog_core::script::{self, Script};
use runlog_core::*;

fn judged(id: &str) -> TaskSpec {
    let mut s = script::task(id);
    s.eval = Some("./judge.sh".into());
    s
}

fn start(mode: ReviewMode, tasks: Vec<TaskSpec>) -> Script {
    let settings = Settings {
        auto_rescue: false,
        ..Settings::default()
    };
    Script::default().and(CommandKind::StartRun {
        run: RunId::from("r"),
        workflow: "w".into(),
        workflow_hash: Hash::of(b"w"),
        settings,
        tasks,
        cost: Default::default(),
        review: ReviewPolicy { mode, sample: 0.0 },
    })
}

fn verdicts(events: &[Event]) -> Verdicts {
    let mut p = runlog_core::projections::Projections::default();
    for e in events {
        p.observe(e, &mut |_| None);
    }
    p.verdicts
}

#[test]
fn a_held_pass_waits_for_a_person_and_its_dependents_with_it() {
    let mut downstream = script::task("down");
    downstream.after = vec![TaskId::from("a")];
    let b = start(ReviewMode::All, vec![judged("a"), downstream])
        .and(script::start("a"))
        .and(script::submit("a"))
        .and(script::score("a", 0.9));
    let a = b.state.task(&TaskId::from("a")).unwrap();
    assert_eq!(a.status, TaskStatus::PendingEval, "held whatever the score");
    assert_eq!(a.held, Some(GateOutcome::Pass));
    assert!(
        !matches!(
            b.state.readiness(&TaskId::from("down")),
            runlog_core::Readiness::Ready
        ),
        "its dependent waits"
    );
    let kinds: Vec<&str> = b.events.iter().map(|e| e.kind.name()).collect();
    assert!(
        kinds.ends_with(&["eval-scored", "review-held"]),
        "{kinds:?}"
    );
    // The dispatch starts no evaluator again for a held verdict, nor its dependent.
    let idle = |_: &TaskId| false;
    let cap = dispatch::Capacity {
        busy: &idle,
        free: 4,
        replanning: false,
        replan_stopped: false,
    };
    assert!(dispatch::dispatch(&b.state, Timestamp(u64::MAX / 2), &cap)
        .starts
        .is_empty());
    let b = b.and(script::approve("a"));
    assert_eq!(
        b.state.task(&TaskId::from("a")).unwrap().status,
        TaskStatus::Done
    );
    assert_eq!(b.state.task(&TaskId::from("a")).unwrap().held, None);
    let v = verdicts(&b.events);
    let label = v.verdicts[0].label.as_ref().unwrap();
    assert_eq!(
        (label.decision.as_str(), label.by.as_str()),
        ("approved", "alice")
    );
}

#[test]
fn failing_review_holds_fails_only_and_a_reopen_labels_the_fail() {
    let b = start(ReviewMode::Failing, vec![judged("a"), judged("b")])
        .and(script::start("a"))
        .and(script::submit("a"))
        .and(script::score("a", 0.9))
        .and(script::start("b"))
        .and(script::submit("b"))
        .and(script::score("b", 0.3));
    assert_eq!(
        b.state.task(&TaskId::from("a")).unwrap().status,
        TaskStatus::Done,
        "a pass goes on"
    );
    assert_eq!(
        b.state.task(&TaskId::from("b")).unwrap().held,
        Some(GateOutcome::Fail)
    );
    let b = b
        .and(script::reject("b", true))
        .and(script::start("b"))
        .and(script::submit("b"))
        .and(script::score("b", 0.8));
    let v = verdicts(&b.events);
    let first_b = &v.verdicts[1];
    assert_eq!(first_b.label.as_ref().unwrap().decision, "reopened");
    assert!(first_b.held);
    // A person agreed with the fail: no contradiction; without a workspace no files were
    // judged, so the later pass says nothing of them.
    assert_eq!(first_b.contradiction(), None);
    assert!(first_b
        .later
        .iter()
        .all(|l| !matches!(l, Later::PassedUnchanged { .. })));
    assert!(v.verdicts[2].passed() && !v.verdicts[2].held);
}
