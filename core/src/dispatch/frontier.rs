//! The tasks a dispatch has to look at, kept as the run goes so that each decision costs what
//! can move now, not the whole plan: a 10,000-task run dispatches about 20,000 times.
//!
//! A task is a candidate unless the dispatch would certainly pass it over: a group, a task done,
//! failed or cancelled, or an open task one of whose own `after` is not done. What the dispatch
//! decides over the candidates is what it decides over the whole plan (a property test checks
//! it). Events that only touch their own task (nearly all of a run) update it in place; any
//! other event (a new task, a plan revision, a rollback, a fork, a resume), or a gap in the seqs
//! it was shown, has it found again from the state before the next decision.

use super::{dispatch_over, Capacity, Dispatch};
use crate::event::EventKind;
use crate::ids::{IdMap, TaskId, Timestamp};
use crate::state::{RunState, TaskStatus};
use std::collections::BTreeSet;

/// The candidates of a run's dispatch.
#[derive(Debug, Clone, Default)]
pub struct Frontier {
    /// The seq of the last event taken in; `None`: find everything again.
    seq: Option<u64>,
    /// Plan position of each task.
    position: IdMap<TaskId, usize>,
    /// By plan position: whether the task (a group: as derived from its children) is done.
    done: Vec<bool>,
    /// By plan position: how many of the task's own `after` are not done.
    not_done_deps: Vec<u32>,
    /// Plan positions of the candidates, in plan order.
    candidates: BTreeSet<usize>,
}

impl Frontier {
    /// A frontier to be found from the state at the first decision.
    pub fn new() -> Self {
        Self::default()
    }

    /// Takes in the event recorded at `seq`; `state` has folded it (and possibly later ones
    /// of the same append, shown next).
    pub fn observe(&mut self, seq: u64, kind: &EventKind, state: &RunState) {
        let follows = self.seq.is_some_and(|last| last + 1 == seq);
        self.seq = Some(seq);
        let task = match kind {
            EventKind::TaskAdded { .. } => None,
            other => other.task(),
        };
        match task {
            Some(task) if follows => {
                if !self.touch(state, task) {
                    self.seq = None;
                }
            }
            _ => self.seq = None,
        }
    }

    /// Brings the frontier to `state` after it was shown events `state` does not hold, or
    /// others out of order: a writer's staged events undone when its append lost a race, and
    /// the events it then took in and decided again. `events` are every one of them (those
    /// undone, taken in and recorded); each task they name is found again, and an event that
    /// is not about one task has everything found again at the next decision.
    pub fn retouch<'e>(
        &mut self,
        state: &RunState,
        events: impl IntoIterator<Item = &'e EventKind>,
    ) {
        if self.seq.is_none() {
            return;
        }
        for kind in events {
            let task = match kind {
                EventKind::TaskAdded { .. } => None,
                other => other.task(),
            };
            if !task.is_some_and(|t| self.touch(state, t)) {
                self.seq = None;
                return;
            }
        }
        self.seq = Some(state.seq);
    }

    /// The dispatch decision for `state` at `now`: [`super::dispatch`]'s, over the candidates.
    pub fn dispatch(&mut self, state: &RunState, now: Timestamp, cap: &Capacity<'_>) -> Dispatch {
        if self.seq != Some(state.seq) {
            self.rebuild(state);
        }
        let ids = self
            .candidates
            .iter()
            .filter_map(|pos| state.order.get(*pos));
        dispatch_over(state, now, cap, ids)
    }

    /// How many tasks the next dispatch looks at.
    pub fn len(&self) -> usize {
        self.candidates.len()
    }

    /// Whether the next dispatch looks at no task.
    pub fn is_empty(&self) -> bool {
        self.candidates.is_empty()
    }

    fn rebuild(&mut self, state: &RunState) {
        let n = state.order.len();
        self.position = state
            .order
            .iter()
            .enumerate()
            .map(|(pos, id)| (id.clone(), pos))
            .collect();
        self.done = state.order.iter().map(|id| state.delivered(id)).collect();
        self.not_done_deps = state
            .order
            .iter()
            .map(|id| {
                let after = state.task(id).map(|t| t.spec.after.as_slice());
                let not_done = after
                    .unwrap_or_default()
                    .iter()
                    .filter(|dep| !self.position.get(*dep).is_some_and(|p| self.is_done(*p)))
                    .count();
                u32::try_from(not_done).unwrap_or(u32::MAX)
            })
            .collect();
        self.candidates.clear();
        for pos in 0..n {
            self.recheck(state, pos);
        }
        self.seq = Some(state.seq);
    }

    /// The task and its ancestors (whose derived status it may have moved) after an event on
    /// it. `false`: the task is unknown here, so find everything again.
    fn touch(&mut self, state: &RunState, task: &TaskId) -> bool {
        let mut current = Some(task);
        let mut hops = 0;
        while let Some(id) = current {
            let Some(&pos) = self.position.get(id) else {
                return false;
            };
            let done = state.delivered(id);
            if done != self.is_done(pos) {
                if let Some(flag) = self.done.get_mut(pos) {
                    *flag = done;
                }
                for dependent in state.dependents.get(id).into_iter().flatten() {
                    let Some(&dpos) = self.position.get(dependent) else {
                        return false;
                    };
                    if let Some(count) = self.not_done_deps.get_mut(dpos) {
                        *count = if done {
                            count.saturating_sub(1)
                        } else {
                            count.saturating_add(1)
                        };
                    }
                    self.recheck(state, dpos);
                }
            }
            self.recheck(state, pos);
            current = state.task(id).and_then(|t| t.spec.parent.as_ref());
            hops += 1;
            if hops > crate::settings::MAX_NESTING {
                break;
            }
        }
        true
    }

    fn is_done(&self, pos: usize) -> bool {
        self.done.get(pos).copied().unwrap_or(false)
    }

    /// Whether the task at `pos` is a candidate now.
    fn recheck(&mut self, state: &RunState, pos: usize) {
        let Some(id) = state.order.get(pos) else {
            return;
        };
        let candidate = !state.is_group(id)
            && state.task(id).is_some_and(|t| match t.status {
                TaskStatus::Done | TaskStatus::Failed | TaskStatus::Cancelled => false,
                TaskStatus::Open => self.not_done_deps.get(pos) == Some(&0),
                _ => true,
            });
        if candidate {
            self.candidates.insert(pos);
        } else {
            self.candidates.remove(&pos);
        }
    }
}
