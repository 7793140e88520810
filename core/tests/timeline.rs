//! A run over wall-clock time: a task's attempts, its evaluation and the wait for a person as
//! bars from the events' own times, a person's decision and a rollback as marks.

mod support;
use runlog_core::projections::timeline::{BarKind, Timeline, TimelineBuilder};
use runlog_core::*;
use support::*;

fn timeline(events: &[Event]) -> Timeline {
    let mut b = TimelineBuilder::new("run-1", &[7; 32]);
    for (i, e) in events.iter().enumerate() {
        let seq = i as u64 + 1;
        b.observe(seq, e, &state_at(events, seq));
    }
    b.finish()
}

fn judged(id_: &str) -> TaskSpec {
    let mut s = task(id_);
    s.requires_testing = false;
    s.eval = Some("./judge.sh".into());
    s
}

#[test]
fn a_rescued_attempt_an_evaluator_that_failed_and_a_persons_approval_are_bars_and_marks() {
    let g = given_run(vec![judged("a"), task("b")])
        .and(start("a"))
        .wait_ms(5_000)
        .and(submit("a"))
        .wait_ms(2_000)
        .and(score("a", 0.3))
        .and(start("a"))
        .and(submit("a"))
        .wait_ms(1_000)
        .and(CommandKind::RecordEvalError {
            task: "a".into(),
            evaluator: "./judge.sh".into(),
            error: "no JSON".into(),
        })
        .wait_ms(60_000)
        .and(CommandKind::Approve {
            task: "a".into(),
            by: "ana".into(),
        });
    let t = timeline(&g.events);
    let rows: Vec<&str> = t.rows.iter().map(|r| r.task.as_str()).collect();
    assert_eq!(rows, ["a", "b"], "a row per task, in the plan's order");
    let a = &t.rows[0];
    let bars: Vec<(BarKind, u32, u64)> = a
        .bars
        .iter()
        .map(|b| (b.kind, b.attempt, b.to.0 - b.from.0))
        .collect();
    // Each bar lasts as long as its events say (each event is stamped a second after the one
    // before, plus the waits): the first attempt 5 s of work and 2 s of evaluation, the second
    // 1 s of evaluation and a minute waiting for a person.
    assert_eq!(
        bars,
        [
            (BarKind::Attempt, 1, 9_000),
            (BarKind::Eval, 1, 3_000),
            (BarKind::Attempt, 2, 64_000),
            (BarKind::Eval, 2, 2_000),
            (BarKind::Wait, 2, 61_000),
        ],
        "{:#?}",
        a.bars
    );
    assert!(a.bars[0].failed.is_some(), "the rescued attempt failed");
    let marks: Vec<(&str, &str)> = a
        .marks
        .iter()
        .map(|m| (m.kind.as_str(), m.label.as_str()))
        .collect();
    assert_eq!(marks, [("task-approved", "by ana")]);
    assert!(t.rows[1].bars.is_empty(), "b never started");
}

/// A judged task whose evaluator failed, left 30 s to a person, then `then`.
fn waiting_then(then: CommandKind) -> Timeline {
    let g = given_run(vec![judged("a")])
        .and(start("a"))
        .and(submit("a"))
        .and(CommandKind::RecordEvalError {
            task: "a".into(),
            evaluator: "./judge.sh".into(),
            error: "no JSON".into(),
        })
        .wait_ms(30_000)
        .and(then);
    timeline(&g.events)
}

fn wait_of(t: &Timeline) -> runlog_core::projections::timeline::Bar {
    t.rows[0]
        .bars
        .iter()
        .find(|b| b.kind == BarKind::Wait)
        .cloned()
        .unwrap()
}

#[test]
fn a_wait_still_going_reaches_the_last_event_and_a_rollback_marks_the_run() {
    let t = waiting_then(CommandKind::Rollback {
        to_seq: 3,
        reason: "try again".into(),
        by: "ana".into(),
    });
    // The rollback ended the wait: the task is back before its attempt.
    let wait = wait_of(&t);
    assert!(!wait.open);
    assert_eq!(wait.to, t.end);
    assert_eq!(t.marks.len(), 1);
    assert_eq!(t.marks[0].kind, "rolled-back");
    assert_eq!(t.marks[0].label, "to seq 3, by ana");
    let t = waiting_then(CommandKind::Interrupt {
        reason: "stopped".into(),
    });
    let wait = wait_of(&t);
    assert!(wait.open && wait.to == t.end, "{wait:?}");
}

#[test]
fn a_merge_runs_from_the_task_being_done_to_its_branch_merged_or_conflicting() {
    let mut plain = task("a");
    plain.requires_testing = false;
    let mut other = task("b");
    other.requires_testing = false;
    let g = given_run(vec![plain, other])
        .and(start("a"))
        .and(submit("a"))
        .and(start("b"))
        .and(submit("b"));
    // As the runner records them, in a run with a git workspace.
    let mut events = g.events.clone();
    let done = events
        .iter()
        .rposition(|e| matches!(e.kind, EventKind::TaskSubmitted { .. }))
        .unwrap();
    let at = |ms: u64| Timestamp(events[done].at.0 + ms);
    let merged = [
        Event {
            at: at(2_000),
            kind: EventKind::TaskMerged {
                task: "a".into(),
                commit: "abc".into(),
            },
        },
        Event {
            at: at(3_000),
            kind: EventKind::MergeConflicted {
                task: "b".into(),
                files: vec!["README.md".into()],
                rescue: None,
            },
        },
    ];
    events.extend(merged);
    let t = timeline(&events);
    let merge = |row: usize| {
        t.rows[row]
            .bars
            .iter()
            .find(|b| b.kind == BarKind::Merge)
            .cloned()
            .unwrap()
    };
    let (a, b) = (merge(0), merge(1));
    // a was done at its submit, two events (2 s) before b's, and merged 2 s after b's.
    assert_eq!(a.to.0 - a.from.0, 4_000, "{a:?}");
    assert_eq!(a.failed, None);
    assert_eq!(b.to.0 - b.from.0, 3_000, "{b:?}");
    assert_eq!(b.failed.as_deref(), Some("conflict in README.md"), "{b:?}");
}
