//! Properties of replay: snapshots never change an answer, rollback and fork start exactly
//! where they say, export/import reproduces the chain, corrupt snapshots are ignored.

use proptest::prelude::*;
use runlog_core::codec::encode_event;
use runlog_core::script::T0;
use runlog_core::{fold, scenarios, state_at, synthetic, Event, RunState, Timestamp};
use runlog_replay::control::append;
use runlog_replay::export::{export, import};
use runlog_replay::{snapshot, Replay};
use runlog_store::{EventLog, Log};

fn stored(events: &[Event]) -> Log {
    let log = Log::memory().unwrap();
    append(&log, "run-1", 0, events).unwrap();
    log
}

/// A run with history worth replaying: a seed scenario or a small synthetic run.
fn runs() -> Vec<Vec<Event>> {
    let mut all: Vec<Vec<Event>> = scenarios::all()
        .unwrap()
        .into_iter()
        .map(|(_, e)| e)
        .collect();
    all.push(synthetic::synthetic_run("run-1", 400, 20).unwrap());
    all
}

fn same_domain(a: &RunState, b: &RunState) -> bool {
    let mut a = a.clone();
    a.seq = b.seq;
    &a == b
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn state_at_through_snapshots_equals_the_plain_fold(which in 0usize..6, every in 1u64..40) {
        let events = &runs()[which];
        let log = stored(events);
        let replay = Replay::new(&log).snapshot_every(every);
        // A first full pass writes the snapshots; the second reads through them.
        replay.head_state("run-1").unwrap();
        for n in 1..=events.len() as u64 {
            prop_assert_eq!(&replay.state_at("run-1", n).unwrap(), &state_at(events, n), "at seq {}", n);
        }
    }

    #[test]
    fn after_a_rollback_to_n_the_state_equals_state_at_n(which in 0usize..6, pick in any::<u16>(), every in 1u64..40) {
        let events = &runs()[which];
        let log = stored(events);
        let replay = Replay::new(&log).snapshot_every(every);
        let head = events.len() as u64;
        let to = 1 + u64::from(pick) % (head - 1);
        replay.rollback("run-1", to, "prop", "prop", Timestamp(T0 + 10_000_000)).unwrap();
        let after = replay.head_state("run-1").unwrap();
        prop_assert!(same_domain(&replay.state_at("run-1", to).unwrap(), &after));
        prop_assert!(same_domain(&state_at(events, to), &after));
        // The rollback is history too: rolling it back restores the head before it.
        replay.rollback("run-1", head, "undo", "prop", Timestamp(T0 + 10_000_001)).unwrap();
        prop_assert!(same_domain(&fold(events), &replay.head_state("run-1").unwrap()));
    }

    #[test]
    fn advancing_a_state_to_the_head_equals_the_head_state(which in 0usize..6, pick in any::<u16>(), rolled in any::<bool>()) {
        // A live reader's case: it holds the state at some seq while the log moves on, a
        // rollback included.
        let events = &runs()[which];
        let log = stored(events);
        let replay = Replay::new(&log).snapshot_every(7);
        let head = events.len() as u64;
        let held = 1 + u64::from(pick) % head;
        let state = replay.state_at("run-1", held).unwrap();
        if rolled {
            replay.rollback("run-1", 1 + held / 2, "prop", "prop", Timestamp(T0 + 10_000_000)).unwrap();
        }
        let to = replay.head_seq("run-1").unwrap();
        prop_assert_eq!(&replay.advance("run-1", state, to).unwrap(), &replay.head_state("run-1").unwrap());
    }

    #[test]
    fn a_fork_at_n_starts_equal_to_state_at_n(which in 0usize..6, pick in any::<u16>()) {
        let events = &runs()[which];
        let log = stored(events);
        let replay = Replay::new(&log).snapshot_every(7);
        let at = 1 + u64::from(pick) % events.len() as u64;
        replay.fork("run-1", at, "fork-1", Timestamp(T0 + 9_000_000)).unwrap();
        let fork = replay.head_state("fork-1").unwrap();
        // Equal, except that nothing runs in a new fork: the parent's running attempts belong
        // to the parent's processes, and resuming the fork retries them.
        let mut parent = state_at(events, at);
        parent.tasks.values_mut().for_each(|t| std::sync::Arc::make_mut(t).running = false);
        prop_assert_eq!(&fork.tasks, &parent.tasks);
        prop_assert_eq!(&fork.stages, &parent.stages);
        prop_assert_eq!(fork.fork.as_ref().map(|f| (f.from_run.as_str(), f.at_seq)), Some(("run-1", at)));
        let lineage = replay.lineage("run-1").unwrap();
        prop_assert_eq!(lineage.children.len(), 1);
        prop_assert_eq!(replay.lineage("fork-1").unwrap().parent.map(|p| p.at_seq), Some(at));
    }

    #[test]
    fn export_then_import_gives_the_same_head_hash(which in 0usize..6) {
        let events = &runs()[which];
        let source = stored(events);
        let mut file = Vec::new();
        let header = export(&source, "run-1", &mut file).unwrap();
        let target = Log::memory().unwrap();
        let imported = import(&target, &mut file.as_slice(), None).unwrap();
        prop_assert!(imported.same_head_hash);
        prop_assert_eq!(&imported.head_hash, &header.head_hash);
        prop_assert_eq!(target.head("run-1").unwrap(), source.head("run-1").unwrap());
    }
}

#[test]
fn a_corrupt_or_foreign_snapshot_is_ignored() {
    let events = synthetic::synthetic_run("run-1", 300, 10).unwrap();
    let log = stored(&events);
    let replay = Replay::new(&log).snapshot_every(50);
    replay.head_state("run-1").unwrap();
    assert!(snapshot::list(&log, "run-1").contains(&100));
    // Garbage bytes at seq 100, and the state at seq 150 filed under seq 200.
    log.cache_put(&snapshot::key("run-1", 100), b"RLS1 garbage")
        .unwrap();
    let mut value = log
        .cache_get(&snapshot::key("run-1", 150))
        .unwrap()
        .unwrap();
    value[8..16].copy_from_slice(&200u64.to_be_bytes());
    log.cache_put(&snapshot::key("run-1", 200), &value).unwrap();
    let fresh = Replay::new(&log).snapshot_every(50);
    for n in [100, 120, 200, 230] {
        assert_eq!(
            fresh.state_at("run-1", n).unwrap(),
            state_at(&events, n),
            "seq {n}"
        );
    }
}

#[test]
fn a_snapshot_that_does_not_load_is_written_again() {
    let events = synthetic::synthetic_run("run-1", 300, 10).unwrap();
    let log = stored(&events);
    Replay::new(&log)
        .snapshot_every(50)
        .head_state("run-1")
        .unwrap();
    let listed = snapshot::list(&log, "run-1");
    assert!(listed.len() >= 3, "{listed:?}");
    // Every snapshot but the first unreadable: the fold goes on from the first.
    for &seq in listed.iter().skip(1) {
        log.cache_put(&snapshot::key("run-1", seq), b"RLS1 garbage")
            .unwrap();
    }
    let head = events.len() as u64;
    let fresh = Replay::new(&log).snapshot_every(50);
    assert_eq!(
        fresh.state_at("run-1", head).unwrap(),
        state_at(&events, head)
    );
    assert_eq!(snapshot::list(&log, "run-1"), listed);
    for seq in listed {
        let (state, hash) = snapshot::read(&log, "run-1", seq).expect("written again");
        assert_eq!(state, state_at(&events, seq), "seq {seq}");
        assert_eq!(Some(hash), log.hash_at("run-1", seq).unwrap(), "seq {seq}");
    }
}

#[test]
fn a_snapshot_from_a_different_history_is_ignored() {
    // Same run id, same seq, different chain: a snapshot copied from another store.
    let a = synthetic::synthetic_run("run-1", 200, 10).unwrap();
    let mut b = a.clone();
    b.truncate(100);
    b.extend(
        synthetic::synthetic_run("run-1", 200, 5)
            .unwrap()
            .into_iter()
            .skip(1)
            .take(100),
    );
    let log_a = stored(&a);
    Replay::new(&log_a)
        .snapshot_every(150)
        .head_state("run-1")
        .unwrap();
    let foreign = log_a
        .cache_get(&snapshot::key("run-1", 150))
        .unwrap()
        .unwrap();
    let log_b = Log::memory().unwrap();
    log_b
        .append(
            "run-1",
            Some(0),
            b.iter().map(|e| encode_event(e).unwrap()).collect(),
        )
        .unwrap();
    log_b
        .cache_put(&snapshot::key("run-1", 150), &foreign)
        .unwrap();
    assert_eq!(
        Replay::new(&log_b).state_at("run-1", 160).unwrap(),
        state_at(&b, 160)
    );
}

#[test]
fn errors_name_the_runs_and_the_head() {
    let log = stored(&scenarios::eval_gate().unwrap());
    let replay = Replay::new(&log);
    let err = replay.state_at("nope", 1).unwrap_err();
    assert_eq!(err.to_string(), "no run nope; runs: run-1");
    let head = replay.head_seq("run-1").unwrap();
    let err = replay.state_at("run-1", head + 5).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "run run-1 has no seq {} : its history ends at seq {head}",
            head + 5
        )
        .replace(" :", ":")
    );
}

#[test]
fn importing_an_edited_export_is_refused_and_writes_nothing() {
    let source = stored(&scenarios::supervised_review_pipeline().unwrap());
    let mut file = Vec::new();
    export(&source, "run-1", &mut file).unwrap();
    let text = String::from_utf8(file)
        .unwrap()
        .replace("registry unreachable", "registry fine");
    let target = Log::memory().unwrap();
    let err = import(&target, &mut text.as_bytes(), None).unwrap_err();
    assert!(
        err.to_string().contains("does not match its recorded hash"),
        "{err}"
    );
    assert!(target.runs().unwrap().is_empty());
}

#[test]
fn history_stats_warn_past_the_threshold() {
    let events = synthetic::synthetic_run("run-1", 2_000, 50).unwrap();
    let log = stored(&events);
    let stats = Replay::new(&log).stats("run-1").unwrap();
    assert_eq!(stats.events, events.len() as u64);
    assert!(stats.bytes > 0);
    assert!(stats.warning.is_none(), "default threshold is 100,000");
    let mut small = synthetic::synthetic_run("run-1", 2_000, 50).unwrap();
    if let runlog_core::EventKind::RunStarted { settings, .. } = &mut small[0].kind {
        settings.history_warn_events = 1_000;
    }
    let log = stored(&small);
    let stats = Replay::new(&log).stats("run-1").unwrap();
    assert!(stats
        .warning
        .unwrap()
        .contains("past its warning threshold of 1000"));
}

#[test]
fn a_full_projection_stores_snapshots_that_state_at_then_reads_through() {
    for events in &runs() {
        let log = stored(events);
        let replay = Replay::new(&log).snapshot_every(7);
        replay.project("run-1", None, None).unwrap();
        assert!(
            !snapshot::list(&log, "run-1").is_empty(),
            "no snapshot of {} events",
            events.len()
        );
        // A new reader finds them in the store, not in the memory of the one that wrote them.
        let again = Replay::new(&log).snapshot_every(7);
        for n in 1..=events.len() as u64 {
            assert_eq!(
                again.state_at("run-1", n).unwrap(),
                state_at(events, n),
                "at {n}"
            );
        }
    }
}

/// A run of `len` events whose record `bad + 1` is not an event: projecting it fails with that
/// seq, and up to the record before, the projection stands.
fn a_bad_record_ends_the_projection(len: usize, bad: usize) {
    let mut events = synthetic::synthetic_run("run-1", len, 50).unwrap();
    events.truncate(len);
    let log = stored(&events[..bad]);
    log.append("run-1", Some(bad as u64), vec![b"not an event".to_vec()])
        .unwrap();
    let bodies: Vec<Vec<u8>> = events[bad..]
        .iter()
        .map(|e| encode_event(e).unwrap())
        .collect();
    log.append("run-1", Some(bad as u64 + 1), bodies).unwrap();
    for every in [0, runlog_replay::DEFAULT_SNAPSHOT_EVERY] {
        let replay = Replay::new(&log).snapshot_every(every);
        let err = replay.project("run-1", None, None).unwrap_err().to_string();
        assert!(err.contains(&(bad + 1).to_string()), "{err}");
        let p = replay.project("run-1", Some(bad as u64), None).unwrap();
        assert_eq!(p.state.seq, bad as u64);
        assert_eq!(
            replay.state_at("run-1", bad as u64).unwrap(),
            state_at(&events[..bad], bad as u64)
        );
        let err = replay
            .state_at("run-1", bad as u64 + 10)
            .unwrap_err()
            .to_string();
        assert!(err.contains(&(bad + 1).to_string()), "{err}");
    }
}

#[test]
fn a_record_that_does_not_decode_ends_a_long_projection_with_its_seq() {
    // Past several of the reader's batches, so the error meets batches in flight both ways.
    a_bad_record_ends_the_projection(5_000, 3_500);
    // Long: the reading thread and the folding one each decode some of its batches.
    a_bad_record_ends_the_projection(80_000, 70_000);
}
