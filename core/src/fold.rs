//! Folding events into state, with the two control events that need history: a rollback
//! restores the state after an earlier seq, and a fork starts from another run's state.

use crate::event::{Event, EventKind};
use crate::evolve::evolve_in_place;
use crate::ids::RunId;
use crate::state::RunState;
use std::collections::{BTreeMap, BTreeSet};

/// The historical state a control event starts from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Base<'a> {
    /// This run's state after this seq (always before the event being applied).
    This(u64),
    /// Another run's state after this seq.
    Parent(&'a RunId, u64),
}

/// Applies one event, asking `resolve` for the base state of a rollback or fork.
///
/// A rollback to a seq at or past the current one, or a base `resolve` cannot supply, leaves
/// the state as it is (a fork with an unknown parent starts empty): a fold never fails.
pub fn apply(
    mut state: RunState,
    event: &Event,
    resolve: &mut dyn FnMut(Base<'_>) -> Option<RunState>,
) -> RunState {
    apply_in_place(&mut state, event, resolve);
    state
}

/// [`apply`] on a state borrowed mutably (no moves of the state on the hot path).
pub fn apply_in_place(
    state: &mut RunState,
    event: &Event,
    resolve: &mut dyn FnMut(Base<'_>) -> Option<RunState>,
) {
    let seq = state.seq;
    let base = match &event.kind {
        EventKind::RolledBack { to_seq, .. } if *to_seq < seq => resolve(Base::This(*to_seq)),
        EventKind::Forked {
            from_run, at_seq, ..
        } => Some(resolve(Base::Parent(from_run, *at_seq)).unwrap_or_default()),
        _ => None,
    };
    if let Some(mut base) = base {
        base.seq = seq;
        *state = base;
    }
    evolve_in_place(state, event);
}

/// The states a single forward pass must keep to resolve the rollbacks in its events: a
/// rollback's target always precedes it, so one clone per target suffices and nested rollbacks
/// stay linear.
#[derive(Debug, Default)]
pub struct RollbackTargets {
    targets: BTreeSet<u64>,
    saved: BTreeMap<u64, RunState>,
}

impl RollbackTargets {
    /// The targets of every rollback in `events`.
    pub fn of(events: &[Event]) -> Self {
        let targets = events
            .iter()
            .filter_map(|e| match e.kind {
                EventKind::RolledBack { to_seq, .. } => Some(to_seq),
                _ => None,
            })
            .collect();
        Self {
            targets,
            saved: BTreeMap::new(),
        }
    }

    /// The state saved after `seq`, for a rollback to it.
    pub fn state_after(&self, seq: u64) -> Option<RunState> {
        self.saved.get(&seq).cloned()
    }

    /// Keeps `state` if a rollback will need it.
    pub fn passed(&mut self, state: &RunState) {
        if self.targets.contains(&state.seq) {
            self.saved.insert(state.seq, state.clone());
        }
    }
}

/// Folds a run's events from the start. Forks start from `parent(run, seq)`.
pub fn fold_with(
    events: &[Event],
    parent: &mut dyn FnMut(&RunId, u64) -> Option<RunState>,
) -> RunState {
    let mut rollbacks = RollbackTargets::of(events);
    let mut state = RunState::default();
    for event in events {
        apply_in_place(&mut state, event, &mut |base| match base {
            Base::This(seq) => rollbacks.state_after(seq),
            Base::Parent(run, seq) => parent(run, seq),
        });
        rollbacks.passed(&state);
    }
    state
}

/// Folds a run's events from the start; a fork's parent is unknown here and starts empty.
pub fn fold(events: &[Event]) -> RunState {
    fold_with(events, &mut |_, _| None)
}

/// The state after the first `seq` events.
pub fn state_at(events: &[Event], seq: u64) -> RunState {
    let n = usize::try_from(seq).unwrap_or(usize::MAX).min(events.len());
    fold(events.get(..n).unwrap_or(events))
}
