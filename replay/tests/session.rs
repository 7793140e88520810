//! The one write path: a session decides on the state its own rollbacks produced, and two
//! sessions writing one run never lose or double an event: the loser of a race catches up and
//! decides again.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use runlog_core::script::{start, task, T0};
use runlog_core::{
    Command, CommandKind, EventKind, Hash, Rejection, RunId, Settings, TaskStatus, Timestamp,
};
use runlog_replay::{Replay, Session};
use runlog_store::{EventLog, Log};

fn cmd(kind: CommandKind) -> Command {
    Command::new(Timestamp(T0), kind)
}

fn started(log: &Log) -> Session<'_> {
    let mut s = Session::open(log, "run-1").unwrap();
    s.execute(cmd(CommandKind::StartRun {
        run: RunId::from("run-1"),
        workflow: "test".into(),
        workflow_hash: Hash::of(b"test"),
        settings: Settings::default(),
        tasks: vec![task("a"), task("b")],
        cost: Default::default(),
    }))
    .unwrap()
    .unwrap();
    s
}

#[test]
fn a_command_after_a_rollback_is_decided_on_the_rolled_back_state() {
    let log = Log::memory().unwrap();
    let mut s = started(&log);
    let before = s.state().seq;
    s.execute(cmd(start("a"))).unwrap().unwrap();
    s.execute(cmd(CommandKind::Rollback {
        to_seq: before,
        reason: "undo the start".into(),
        by: "test".into(),
    }))
    .unwrap()
    .unwrap();
    assert_eq!(
        s.state().task(&"a".into()).unwrap().status,
        TaskStatus::Open
    );
    // Before the one write path, this was refused: "task a already has attempt 1 running".
    let again = s.execute(cmd(start("a"))).unwrap().unwrap();
    assert!(matches!(
        again.events[0].1.kind,
        EventKind::TaskStarted { attempt: 1, .. }
    ));
    let head = Replay::new(&log).head_state("run-1").unwrap();
    assert_eq!(
        s.state(),
        &head,
        "the session's state is the log's head state"
    );
}

#[test]
fn the_loser_of_a_race_catches_up_and_decides_again() {
    let log = Log::memory().unwrap();
    started(&log);
    let mut first = Session::existing(&log, "run-1").unwrap();
    let mut second = Session::existing(&log, "run-1").unwrap();
    first.execute(cmd(start("a"))).unwrap().unwrap();
    // `second` still believes the head is before a started: its append conflicts, it folds
    // a's start and decides b's on the new head.
    let seen_before = second.state().seq;
    let recorded = second.execute(cmd(start("b"))).unwrap().unwrap();
    assert_eq!(
        recorded.events[0].0,
        seen_before + 3,
        "after a's two events"
    );
    let head = Replay::new(&log).head_state("run-1").unwrap();
    assert_eq!(second.state(), &head);
    assert!(head.task(&"a".into()).unwrap().running);
    assert!(head.task(&"b".into()).unwrap().running);
}

#[test]
fn a_race_for_the_same_attempt_starts_it_once() {
    let log = Log::memory().unwrap();
    started(&log);
    let mut first = Session::existing(&log, "run-1").unwrap();
    let mut second = Session::existing(&log, "run-1").unwrap();
    first.execute(cmd(start("a"))).unwrap().unwrap();
    let lost = second.execute(cmd(start("a"))).unwrap();
    assert!(
        matches!(lost, Err(Rejection::AlreadyRunning { .. })),
        "decided again on the new head: {lost:?}"
    );
    let starts = Replay::new(&log)
        .events("run-1", 1, log.head("run-1").unwrap().unwrap().seq)
        .unwrap()
        .into_iter()
        .filter(|(_, e)| matches!(e.kind, EventKind::TaskStarted { .. }))
        .count();
    assert_eq!(starts, 1);
}

#[test]
fn catch_up_returns_what_others_appended() {
    let log = Log::memory().unwrap();
    started(&log);
    let mut reader = Session::existing(&log, "run-1").unwrap();
    let mut writer = Session::existing(&log, "run-1").unwrap();
    assert!(reader.catch_up().unwrap().is_empty());
    writer.execute(cmd(start("b"))).unwrap().unwrap();
    let theirs = reader.catch_up().unwrap();
    assert_eq!(theirs.len(), 2);
    assert_eq!(reader.state(), writer.state());
}
