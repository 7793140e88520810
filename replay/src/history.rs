//! The state of a run at any seq, and every projection of it, from the log and its snapshots.

use crate::error::{ReplayError, Result};
use crate::events;
use crate::snapshot;
use runlog_core::fold::{apply, Base};
use runlog_core::projections::{Projections, SupervisorStack};
use runlog_core::{Event, EventKind, RunId, RunState};
use runlog_store::EventLog;
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};

/// Snapshot interval by default: the state is cached every this many events.
pub const DEFAULT_SNAPSHOT_EVERY: u64 = 2_000;

/// Reads a run's history. Replay only reads and folds recorded events: it never re-runs an
/// agent, a test or an evaluator.
#[derive(Debug)]
pub struct Replay<'l> {
    log: &'l dyn EventLog,
    every: u64,
    known: RefCell<BTreeMap<String, BTreeSet<u64>>>,
}

/// Progress of a long fold: (events done, events in total).
pub type Progress<'p> = &'p mut dyn FnMut(u64, u64);

impl<'l> Replay<'l> {
    /// Replays from `log` with the default snapshot interval.
    pub fn new(log: &'l dyn EventLog) -> Self {
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
    pub fn log(&self) -> &'l dyn EventLog {
        self.log
    }

    fn known_snapshots(&self, run: &str) -> BTreeSet<u64> {
        self.known
            .borrow_mut()
            .entry(run.to_owned())
            .or_insert_with(|| snapshot::list(self.log, run).into_iter().collect())
            .clone()
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
        Ok(events::head(self.log, run)?.seq)
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
    /// events after the snapshot.
    pub fn state_at(&self, run: &str, seq: u64) -> Result<RunState> {
        self.check_seq(run, seq)?;
        let mut base = RunState::default();
        for snap in self.known_snapshots(run).range(..=seq).rev() {
            match snapshot::load(self.log, run, *snap) {
                Some(state) => {
                    base = state;
                    break;
                }
                None => self.remember(run, *snap, false),
            }
        }
        let from = base.seq + 1;
        self.fold(run, base, from, seq)
    }

    /// The state at the head.
    pub fn head_state(&self, run: &str) -> Result<RunState> {
        let head = self.head_seq(run)?;
        self.state_at(run, head)
    }

    /// Resolves the base state of a rollback or fork.
    fn resolve(&self, run: &str, base: Base<'_>) -> Result<RunState> {
        match base {
            Base::This(seq) => self.state_at(run, seq),
            Base::Parent(parent, seq) => self.state_at(parent.as_str(), seq),
        }
    }

    /// Folds events `from..=to` onto `state`, writing snapshots on the way.
    fn fold(&self, run: &str, state: RunState, from: u64, to: u64) -> Result<RunState> {
        let mut state = state;
        let mut nested: Option<ReplayError> = None;
        let known = self.known_snapshots(run);
        events::for_each(self.log, run, from, to, &mut |seq, hash, event| {
            state = apply(std::mem::take(&mut state), &event, &mut |base| match self
                .resolve(run, base)
            {
                Ok(s) => Some(s),
                Err(e) => {
                    nested.get_or_insert(e);
                    None
                }
            });
            self.maybe_snapshot(run, &state, seq, hash, &known);
            Ok(nested.is_none())
        })?;
        match nested {
            Some(e) => Err(e),
            None => Ok(state),
        }
    }

    fn maybe_snapshot(
        &self,
        run: &str,
        state: &RunState,
        seq: u64,
        hash: &[u8; 32],
        known: &BTreeSet<u64>,
    ) {
        if self.every > 0
            && seq % self.every == 0
            && !known.contains(&seq)
            && snapshot::store(self.log, run, state, hash)
        {
            self.remember(run, seq, true);
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
        let mut progress = progress;
        let step = (to / 100).max(1);
        events::for_each(self.log, run, 1, to, &mut |seq, hash, event| {
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
            p.observe(&event, &mut |base| match self.resolve(run, base) {
                Ok(s) => Some(s),
                Err(e) => {
                    nested.get_or_insert(e);
                    None
                }
            });
            self.maybe_snapshot(run, &p.state, seq, hash, &known);
            if let Some(f) = progress.as_mut() {
                if seq % step == 0 || seq == to {
                    f(seq, to);
                }
            }
            Ok(nested.is_none())
        })?;
        match nested {
            Some(e) => Err(e),
            None => Ok(p.finish()),
        }
    }

    /// A fork inherits its parent's supervisor stack at the fork point.
    fn parent_stack(&self, parent: &RunId, at_seq: u64) -> Result<SupervisorStack> {
        let p = self.project(parent.as_str(), Some(at_seq), None)?;
        Ok(SupervisorStack::seeded(
            p.stack.entries().into_iter().cloned().collect(),
        ))
    }

    /// The events with seq in `from..=to`.
    pub fn events(&self, run: &str, from: u64, to: u64) -> Result<Vec<(u64, Event)>> {
        events::read(self.log, run, from, to)
    }
}
