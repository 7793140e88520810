//! Projections: what people look at, each a fold of the run.
//!
//! The board and stage health read the [`RunState`](crate::RunState), so a rollback restores
//! them. The supervisor stack folds the stream and honours rollbacks itself (see
//! [`stack`]). The eval audit and the run summary fold the whole stream, rolled-back history
//! included, because an audit must show every decision ever made.

pub mod alerts;
pub mod audit;
pub mod board;
pub mod cost;
pub mod health;
pub mod judges;
pub mod metrics;
pub mod stack;
pub mod summary;
pub mod timeline;
pub mod trace;

use crate::event::Event;
use crate::fold::{apply_in_place, Base, RollbackTargets};
use crate::state::RunState;

pub use audit::{EvalAudit, Recorder};
pub use board::Board;
pub use cost::{CostBy, CostReport};
pub use metrics::RunMetrics;
pub use stack::SupervisorStack;
pub use summary::{MergeConflict, RunSummary};

/// The state and the stream projections of a run, built in one forward pass.
#[derive(Debug, Clone, Default)]
pub struct Projections {
    /// The folded state.
    pub state: RunState,
    /// The eval audit.
    pub audit: EvalAudit,
    /// The run summary.
    pub summary: RunSummary,
    /// The supervisor state stack.
    pub stack: SupervisorStack,
    /// The seeds' success metrics.
    pub metrics: RunMetrics,
    /// Every verdict with what became of it (`runlog judges`).
    pub verdicts: judges::Verdicts,
}

impl Projections {
    /// Applies one event to the state and both stream projections.
    pub fn observe(
        &mut self,
        event: &Event,
        resolve: &mut dyn FnMut(Base<'_>) -> Option<RunState>,
    ) {
        apply_in_place(&mut self.state, event, resolve);
        let seq = self.state.seq;
        self.audit.observe(seq, event, &self.state);
        self.summary.observe(seq, event);
        self.stack.observe(seq, event);
        self.metrics.observe(seq, event, &self.state);
        self.verdicts.observe(seq, event, &self.state);
    }

    /// Settles the summary on the current state; call once all events are observed.
    pub fn finish(mut self) -> Self {
        self.summary.settle(&self.state);
        self.metrics.settle(&self.state);
        self
    }
}

/// Projects a run's events from the start (a fork's parent is unknown here and starts empty).
pub fn project(events: &[Event]) -> Projections {
    let mut rollbacks = RollbackTargets::of(events);
    let mut p = Projections::default();
    for event in events {
        p.observe(event, &mut |base| match base {
            Base::This(seq) => rollbacks.state_after(seq),
            Base::Parent(..) => None,
        });
        rollbacks.passed(&p.state);
    }
    p.finish()
}
