//! The state of a run at any seq, and every projection of it, from the log and its snapshots.

use crate::error::{ReplayError, Result};
use crate::events;
use crate::read_ahead::read_ahead;
use crate::snapshot;
use runlog_core::fold::{apply_in_place, Base};
use runlog_core::projections::{Projections, SupervisorStack};
use runlog_core::{Event, EventKind, RunId, RunState};
use runlog_store::EventLog;
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};

/// What [`Replay::walk`] calls with each event: its seq, its chain hash, the event and the
/// state right after it.
pub type Walk<'a> = &'a mut dyn FnMut(u64, &[u8; 32], &Event, &RunState);

/// Snapshot interval by default: the state is cached every this many events.
pub const DEFAULT_SNAPSHOT_EVERY: u64 = 2_000;

/// Events between snapshots for each task of the state. A task takes about 200 bytes of
/// snapshot and an event about 50 of log, so snapshots take about a third more room than the
/// log they summarise. At four, as much room, a `state_at` on a large run spent its tail
/// reading the events past its snapshot.
const EVENTS_PER_TASK: u64 = 3;

/// When the next snapshot is due: at least `every` events after the last one, and at least
/// three events (`EVENTS_PER_TASK`) for each of the state's tasks. A small state is snapshotted
/// often; a large one less often, so snapshots take room in proportion to the log they
/// summarise. It depends only on the states the run went through, so every replay finds the
/// snapshots that the run's writer (see [`Replay::recorded`]) or an earlier replay wrote
/// instead of writing new ones.
#[derive(Debug, Clone, Copy)]
pub struct SnapshotSchedule {
    last: u64,
}

impl SnapshotSchedule {
    fn start(from: u64) -> Self {
        Self { last: from }
    }

    fn due(&self, state: &RunState, every: u64) -> bool {
        let interval = every.max(state.tasks.len() as u64 * EVENTS_PER_TASK);
        every > 0 && state.seq >= self.last + interval
    }
}

/// Reads a run's history. Replay only reads and folds recorded events: it never re-runs an
/// agent, a test or an evaluator.
#[derive(Debug)]
pub struct Replay<'l> {
    log: Reader<'l>,
    every: u64,
    known: RefCell<BTreeMap<String, BTreeSet<u64>>>,
}

/// Progress of a long fold: (events done, events in total).
pub type Progress<'p> = &'p mut dyn FnMut(u64, u64);

/// The log a replay reads: borrowed for a question, or shared with the replay for as long as
/// it lives (an engine that outlives the call that made it).
#[derive(Debug)]
enum Reader<'l> {
    Borrowed(&'l dyn EventLog),
    Shared(std::sync::Arc<dyn EventLog>),
}

impl Replay<'static> {
    /// Replays from a log the replay holds a share of.
    pub fn shared(log: std::sync::Arc<dyn EventLog>) -> Self {
        Self::from_reader(Reader::Shared(log))
    }
}

impl<'l> Replay<'l> {
    /// Replays from `log` with the default snapshot interval.
    pub fn new(log: &'l dyn EventLog) -> Self {
        Self::from_reader(Reader::Borrowed(log))
    }

    fn from_reader(log: Reader<'l>) -> Self {
        Self {
            log,
            every: DEFAULT_SNAPSHOT_EVERY,
            known: RefCell::new(BTreeMap::new()),
        }
    }

    /// Sets the snapshot interval (0 turns snapshot writing off).
    pub fn snapshot_every(mut self, every: u64) -> Self {
        self.every = every;
        self
    }

    /// The log being replayed.
    pub fn log(&self) -> &dyn EventLog {
        match &self.log {
            Reader::Borrowed(log) => *log,
            Reader::Shared(log) => log.as_ref(),
        }
    }

    /// `f` of the run's snapshots as this replay knows them, listed from the log once.
    fn with_known<T>(&self, run: &str, f: impl FnOnce(&BTreeSet<u64>) -> T) -> T {
        let mut known = self.known.borrow_mut();
        let set = known
            .entry(run.to_owned())
            .or_insert_with(|| snapshot::list(self.log(), run).into_iter().collect());
        f(set)
    }

    fn known_snapshots(&self, run: &str) -> BTreeSet<u64> {
        self.with_known(run, BTreeSet::clone)
    }

    fn remember(&self, run: &str, seq: u64, valid: bool) {
        let mut known = self.known.borrow_mut();
        let set = known.entry(run.to_owned()).or_default();
        if valid {
            set.insert(seq);
        } else {
            set.remove(&seq);
        }
    }

    /// The run's head seq.
    pub fn head_seq(&self, run: &str) -> Result<u64> {
        Ok(events::head(self.log(), run)?.seq)
    }

    fn check_seq(&self, run: &str, seq: u64) -> Result<u64> {
        let head = self.head_seq(run)?;
        if seq > head {
            return Err(ReplayError::SeqPastHead {
                run: run.to_owned(),
                seq,
                head,
            });
        }
        Ok(head)
    }

    /// The state after `seq`: the nearest valid snapshot at or before it, plus the fold of the
    /// events after the snapshot. A snapshot that does not load (torn, rotten, of an older
    /// format or another history) is written again by the fold that passes its seq: it stays
    /// listed in the cache, and a fold only writes the snapshots it does not find listed.
    pub fn state_at(&self, run: &str, seq: u64) -> Result<RunState> {
        self.check_seq(run, seq)?;
        let mut known = self.known_snapshots(run);
        while let Some(snap) = known.range(..=seq).next_back().copied() {
            if let Some(state) = self.fold_on(run, snap, seq, &known)? {
                return Ok(state);
            }
            self.remember(run, snap, false);
            known.remove(&snap);
        }
        self.fold(run, RunState::default(), 1, seq, SnapshotSchedule::start(0))
    }

    /// The state after `to` from the snapshot at `at`: `None` when that snapshot does not load
    /// or its chain hash is not the log's at `at` (a snapshot of another history, never
    /// trusted). The log's hash at `at` is worked out on this thread after the snapshot is
    /// decoded (a fold's read leaves each record's own hash unworked), while the events from
    /// `at` on are read ahead on another; the snapshot's own record is passed over.
    fn fold_on(
        &self,
        run: &str,
        at: u64,
        to: u64,
        known: &BTreeSet<u64>,
    ) -> Result<Option<RunState>> {
        let mut schedule = SnapshotSchedule::start(at);
        let mut nested: Option<ReplayError> = None;
        // Whether the log's record at `at` was read and has the snapshot's chain hash.
        let mut anchored = false;
        let folded = read_ahead(
            self.log(),
            run,
            (at, to),
            || {
                let snapshot = snapshot::read(self.log(), run, at)?;
                anchored = self.log().hash_at(run, at).ok()?.as_ref() == Some(&snapshot.1);
                anchored.then_some(snapshot)
            },
            |snapshot, seq, event| {
                let Some((state, _)) = snapshot.as_mut() else {
                    return false;
                };
                if seq == at {
                    return true;
                }
                if let Err(e) = self.apply(run, state, event) {
                    nested.get_or_insert(e);
                    return false;
                }
                self.maybe_snapshot(run, state, known, &mut schedule);
                true
            },
        )?;
        match nested {
            Some(e) => Err(e),
            None => Ok(folded.filter(|_| anchored).map(|(state, _)| state)),
        }
    }

    /// The state after `at`, or at the head when `at` is `None` (a `--at SEQ` option).
    pub fn state_at_or_head(&self, run: &str, at: Option<u64>) -> Result<RunState> {
        match at {
            Some(seq) => self.state_at(run, seq),
            None => self.head_state(run),
        }
    }

    /// The state at the head.
    pub fn head_state(&self, run: &str) -> Result<RunState> {
        let head = self.head_seq(run)?;
        self.state_at(run, head)
    }

    /// Brings `state`, a state of `run` at some seq, forward to `to`: what a reader holding a
    /// live state (a server's running engine) needs when the log has moved on, without
    /// folding from the start.
    pub fn advance(&self, run: &str, state: RunState, to: u64) -> Result<RunState> {
        if to <= state.seq {
            return Ok(state);
        }
        let from = state.seq + 1;
        let schedule = self.snapshot_schedule(run, state.seq);
        self.fold(run, state, from, to, schedule)
    }

    /// Resolves the base state of a rollback or fork.
    fn resolve(&self, run: &str, base: Base<'_>) -> Result<RunState> {
        match base {
            Base::This(seq) => self.state_at(run, seq),
            Base::Parent(parent, seq) => self.state_at(parent.as_str(), seq),
        }
    }

    /// Folds events `from..=to` onto `state`, writing snapshots on the way.
    fn fold(
        &self,
        run: &str,
        state: RunState,
        from: u64,
        to: u64,
        mut schedule: SnapshotSchedule,
    ) -> Result<RunState> {
        let mut state = state;
        let mut nested: Option<ReplayError> = None;
        let known = self.known_snapshots(run);
        events::for_each(self.log(), run, from, to, &mut |_seq, event| {
            if let Err(e) = self.apply(run, &mut state, &event) {
                nested.get_or_insert(e);
                return Ok(false);
            }
            self.maybe_snapshot(run, &state, &known, &mut schedule);
            Ok(true)
        })?;
        match nested {
            Some(e) => Err(e),
            None => Ok(state),
        }
    }

    /// Applies one event of `run` to `state`, resolving a rollback or fork from the log.
    pub fn apply(&self, run: &str, state: &mut RunState, event: &Event) -> Result<()> {
        let mut nested: Option<ReplayError> = None;
        apply_in_place(state, event, &mut |base| match self.resolve(run, base) {
            Ok(s) => Some(s),
            Err(e) => {
                nested.get_or_insert(e);
                None
            }
        });
        nested.map_or(Ok(()), Err)
    }

    /// Writes a snapshot when one is due (see [`SnapshotSchedule`]) and not already stored.
    fn maybe_snapshot(
        &self,
        run: &str,
        state: &RunState,
        known: &BTreeSet<u64>,
        schedule: &mut SnapshotSchedule,
    ) {
        if !schedule.due(state, self.every) {
            return;
        }
        schedule.last = state.seq;
        if known.contains(&state.seq) {
            return;
        }
        // The chain hash the snapshot is taken at, read for it alone: a fold's reads leave
        // each record's own hash unworked.
        let Ok(Some(hash)) = self.log().hash_at(run, state.seq) else {
            return;
        };
        if snapshot::store(self.log(), run, state, &hash).is_some() {
            self.remember(run, state.seq, true);
        }
    }

    /// The schedule of a fold, or of a writer, that goes on from `seq`: from the last snapshot
    /// at or before it, where a replay folding the run from its start would have it.
    pub fn snapshot_schedule(&self, run: &str, seq: u64) -> SnapshotSchedule {
        let last = self.with_known(run, |set| set.range(..=seq).next_back().copied());
        SnapshotSchedule::start(last.unwrap_or(0))
    }

    /// For the run's writer: `state` is the run's state right after the event at
    /// `state.seq`, which is in the log. Writes the snapshot due there, the one a replay would
    /// write, so that the run's first replay and first `state_at` find it: `appended` says the
    /// event is the writer's own (a snapshot due on another writer's event is that writer's
    /// to write, and this schedule only moves on), `hash` is the chain hash after it if the
    /// writer has it (it is read from the log otherwise). A snapshot that cannot be written
    /// is left out: snapshots only save work.
    pub fn recorded(
        &self,
        run: &str,
        state: &RunState,
        appended: bool,
        hash: Option<&[u8; 32]>,
        schedule: &mut SnapshotSchedule,
    ) {
        if !schedule.due(state, self.every) {
            return;
        }
        schedule.last = state.seq;
        if !appended || self.with_known(run, |set| set.contains(&state.seq)) {
            return;
        }
        let hash = match hash {
            Some(h) => Some(*h),
            None => self.log().hash_at(run, state.seq).ok().flatten(),
        };
        if let Some(hash) = hash {
            if snapshot::store(self.log(), run, state, &hash).is_some() {
                self.remember(run, state.seq, true);
            }
        }
    }

    /// Every projection of the run up to `to` (the head if `None`): state, eval audit, run
    /// summary, supervisor stack. The audit and summary need the whole stream, so this folds
    /// from the first event; `progress` hears about it.
    pub fn project(
        &self,
        run: &str,
        to: Option<u64>,
        progress: Option<Progress<'_>>,
    ) -> Result<Projections> {
        let head = self.head_seq(run)?;
        let to = match to {
            Some(seq) => {
                self.check_seq(run, seq)?;
                seq
            }
            None => head,
        };
        let mut p = Projections::default();
        let mut nested: Option<ReplayError> = None;
        let known = self.known_snapshots(run);
        let mut schedule = SnapshotSchedule::start(0);
        let mut progress = progress;
        let step = (to / 100).max(1);
        // This thread folds while another scans, verifies and decodes the next batch.
        let read = read_ahead(
            self.log(),
            run,
            (1, to),
            || (),
            |(), seq, event| {
                if let EventKind::Forked {
                    from_run, at_seq, ..
                } = &event.kind
                {
                    match self.parent_stack(from_run, *at_seq) {
                        Ok(stack) => p.stack = stack,
                        Err(e) => {
                            nested.get_or_insert(e);
                        }
                    }
                }
                p.observe(event, &mut |base| match self.resolve(run, base) {
                    Ok(s) => Some(s),
                    Err(e) => {
                        nested.get_or_insert(e);
                        None
                    }
                });
                self.maybe_snapshot(run, &p.state, &known, &mut schedule);
                if let Some(f) = progress.as_mut() {
                    if seq % step == 0 || seq == to {
                        f(seq, to);
                    }
                }
                nested.is_none()
            },
        );
        match (nested, read) {
            (Some(e), _) | (None, Err(e)) => Err(e),
            (None, Ok(())) => Ok(p.finish()),
        }
    }

    /// Walks the run from its first event to `to` (the head if `None`), calling `visit` with
    /// each event's seq, its chain hash, the event and the state right after it.
    pub fn walk(&self, run: &str, to: Option<u64>, visit: Walk<'_>) -> Result<()> {
        let to = match to {
            Some(seq) => {
                self.check_seq(run, seq)?;
                seq
            }
            None => self.head_seq(run)?,
        };
        let mut state = RunState::default();
        let mut nested: Option<ReplayError> = None;
        events::for_each_hashed(self.log(), run, 1, to, &mut |seq, hash, event| {
            if let Err(e) = self.apply(run, &mut state, &event) {
                nested.get_or_insert(e);
                return Ok(false);
            }
            visit(seq, hash, &event, &state);
            Ok(true)
        })?;
        nested.map_or(Ok(()), Err)
    }

    /// A fork inherits its parent's supervisor stack at the fork point.
    fn parent_stack(&self, parent: &RunId, at_seq: u64) -> Result<SupervisorStack> {
        let p = self.project(parent.as_str(), Some(at_seq), None)?;
        Ok(SupervisorStack::seeded(p.stack.entries()))
    }

    /// The events with seq in `from..=to`.
    pub fn events(&self, run: &str, from: u64, to: u64) -> Result<Vec<(u64, Event)>> {
        events::read(self.log(), run, from, to)
    }
}
