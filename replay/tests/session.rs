//! The one write path: a session decides on the state its own rollbacks produced, and two
//! sessions writing one run never lose or double an event: the loser of a race catches up and
//! decides again. The writer leaves the snapshots a replay would write, so the run's first
//! replay writes none.

use runlog_core::script::{checkpoint, start, task, T0};
use runlog_core::{
    Command, CommandKind, EventKind, Hash, Rejection, RunId, Settings, TaskStatus, Timestamp,
};
use runlog_replay::{snapshot, Replay, Session};
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
        review: Default::default(),
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

#[test]
fn staged_commands_are_decided_in_turn_and_appended_as_one() {
    let log = Log::memory().unwrap();
    let mut s = started(&log);
    s.batching();
    let head = s.state().seq;
    // The second start is decided on the state the first left: both are staged.
    s.stage(cmd(start("a")), &mut |_, _, _| {})
        .unwrap()
        .unwrap();
    s.stage(cmd(start("b")), &mut |_, _, _| {})
        .unwrap()
        .unwrap();
    let refused = s.stage(cmd(start("a")), &mut |_, _, _| {}).unwrap();
    assert!(refused.is_err(), "a's attempt is already running, staged");
    assert_eq!(
        log.head("run-1").unwrap().unwrap().seq,
        head,
        "nothing appended yet"
    );
    let mut seen = Vec::new();
    let commit = s
        .commit_observed(&mut |seq, e, state| {
            seen.push((seq, e.kind.name(), state.seq));
        })
        .unwrap();
    assert!(!commit.redecided() && commit.dropped.is_empty());
    let now = log.head("run-1").unwrap().unwrap().seq;
    assert_eq!(now, s.state().seq);
    assert!(
        seen.iter().all(|(seq, _, at)| seq == at),
        "each event with the state after it: {seen:?}"
    );
    assert_eq!(seen.len() as u64, now - head);
    assert_eq!(s.state(), &Replay::new(&log).head_state("run-1").unwrap());
}

#[test]
fn a_staged_batch_that_lost_a_race_is_decided_again_and_drops_what_is_now_refused() {
    let log = Log::memory().unwrap();
    started(&log);
    let mut mine = Session::existing(&log, "run-1").unwrap();
    mine.batching();
    mine.stage(cmd(start("a")), &mut |_, _, _| {})
        .unwrap()
        .unwrap();
    mine.stage(cmd(start("b")), &mut |_, _, _| {})
        .unwrap()
        .unwrap();
    // Someone else starts a first: the batch's append conflicts.
    let mut other = Session::existing(&log, "run-1").unwrap();
    let theirs = other.execute(cmd(start("a"))).unwrap().unwrap();
    let mut seen = Vec::new();
    let commit = mine
        .commit_observed(&mut |seq, e, _| seen.push((seq, e.kind.name())))
        .unwrap();
    assert!(commit.redecided());
    assert_eq!(commit.foreign, theirs.events.len());
    assert_eq!(
        commit.dropped.len(),
        1,
        "a's start is refused now: {:?}",
        commit.dropped
    );
    assert!(matches!(
        commit.dropped[0].1,
        Rejection::AlreadyRunning { .. }
    ));
    // Their events, then b's start, each once and in the log's order.
    let seqs: Vec<u64> = seen.iter().map(|(s, _)| *s).collect();
    let head = log.head("run-1").unwrap().unwrap().seq;
    assert_eq!(
        seqs,
        ((head + 1 - seqs.len() as u64)..=head).collect::<Vec<_>>()
    );
    let state = Replay::new(&log).head_state("run-1").unwrap();
    assert_eq!(mine.state(), &state);
    assert_eq!(
        state.task(&"a".into()).unwrap().attempt,
        1,
        "a started once"
    );
    assert!(state.task(&"b".into()).unwrap().running);
}

#[test]
fn the_writer_leaves_the_snapshots_a_replay_would_write() {
    let log = Log::memory().unwrap();
    started(&log);
    let every = 5;
    let session = |log| {
        let replay = Replay::new(log).snapshot_every(every);
        let state = replay.head_state("run-1").unwrap();
        Session::at(replay, "run-1", state)
    };
    let mut mine = session(&log);
    let mut other = session(&log);
    mine.execute(cmd(start("a"))).unwrap().unwrap();
    other.execute(cmd(start("b"))).unwrap().unwrap();
    for i in 0..40 {
        // One command at a time, then several as one append, then another writer's.
        mine.execute(cmd(checkpoint("a", &format!("one-{i}"))))
            .unwrap()
            .unwrap();
        mine.batching();
        for j in 0..3 {
            mine.stage(
                cmd(checkpoint("a", &format!("batch-{i}-{j}"))),
                &mut |_, _, _| {},
            )
            .unwrap()
            .unwrap();
        }
        mine.commit_observed(&mut |_, _, _| {}).unwrap();
        mine.stop_batching();
        other.catch_up().unwrap();
        other
            .execute(cmd(checkpoint("b", &format!("theirs-{i}"))))
            .unwrap()
            .unwrap();
        mine.catch_up().unwrap();
    }
    let head = log.head("run-1").unwrap().unwrap();
    let recorded = snapshot::list(&log, "run-1");
    assert!(
        recorded.len() >= 10,
        "{} events, snapshots at {recorded:?}",
        head.seq
    );
    let folded = Replay::new(&log).snapshot_every(0);
    for &seq in &recorded {
        let (state, hash) = snapshot::read(&log, "run-1", seq).unwrap();
        assert_eq!(state, folded.state_at("run-1", seq).unwrap(), "seq {seq}");
        assert_eq!(Some(hash), log.hash_at("run-1", seq).unwrap(), "seq {seq}");
    }
    // The same history in a store without snapshots: a replay writes the same ones.
    let copy = Log::memory().unwrap();
    let bodies = log
        .read("run-1", 1, head.seq, runlog_store::Direction::Forward)
        .unwrap()
        .into_iter()
        .map(|r| r.body)
        .collect();
    copy.append("run-1", Some(0), bodies).unwrap();
    Replay::new(&copy)
        .snapshot_every(every)
        .project("run-1", None, None)
        .unwrap();
    assert_eq!(snapshot::list(&copy, "run-1"), recorded);
    // The first replay of the recorded run finds them all and writes nothing.
    Replay::new(&log)
        .snapshot_every(every)
        .project("run-1", None, None)
        .unwrap();
    assert_eq!(snapshot::list(&log, "run-1"), recorded);
}
