//! The run summary: what happened over the whole history, and where the run stands.

use crate::event::{Event, EventKind, GateOutcome, RunOutcome};
use crate::ids::{RunId, Timestamp};
use crate::state::{ForkOrigin, RunState, RunStatus};
use serde::Serialize;
use std::collections::BTreeMap;

/// Counts over a run's history plus its current standing.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct RunSummary {
    /// Run id.
    pub run: Option<RunId>,
    /// Workflow name.
    pub workflow: Option<String>,
    /// `not-started`, `running`, `interrupted` or `finished`.
    pub status: String,
    /// The outcome, once finished.
    pub outcome: Option<RunOutcome>,
    /// Fork origin.
    pub fork: Option<ForkOrigin>,
    /// Time of the first event.
    pub started_at: Option<Timestamp>,
    /// Time of the last event.
    pub last_at: Option<Timestamp>,
    /// Events in the history.
    pub events: u64,
    /// Tasks by status name (current state).
    pub tasks: BTreeMap<String, u32>,
    /// Attempts started.
    pub attempts: u32,
    /// Eval rescues.
    pub rescues: u32,
    /// Test failures that led to a retry or failure.
    pub test_failures: u32,
    /// Stage failures.
    pub stage_failures: u32,
    /// Evals scored.
    pub evals: u32,
    /// Evaluator errors.
    pub eval_errors: u32,
    /// Replans requested.
    pub replans_requested: u32,
    /// Plans revised.
    pub replans: u32,
    /// Regeneration loops detected.
    pub replan_loops: u32,
    /// Circuits opened.
    pub circuits_opened: u32,
    /// Rollbacks.
    pub rollbacks: u32,
    /// Interruptions.
    pub interruptions: u32,
    /// Messages.
    pub messages: u32,
    /// In a git workspace: each merge into the integration branch that conflicted, in order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    pub merge_conflicts: Vec<MergeConflict>,
}

/// A task's merge that conflicted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct MergeConflict {
    /// The seq of the conflict.
    pub seq: u64,
    /// The task.
    pub task: crate::ids::TaskId,
    /// The files in conflict.
    pub files: Vec<String>,
    /// The rescue that was to resolve it; none: a person.
    pub rescue: Option<u32>,
}

impl RunSummary {
    /// Milliseconds from the first event to the last.
    pub fn duration_ms(&self) -> u64 {
        match (self.started_at, self.last_at) {
            (Some(a), Some(b)) => b.since(a),
            _ => 0,
        }
    }

    /// Folds one event (call [`RunSummary::settle`] once done).
    pub fn observe(&mut self, seq: u64, event: &Event) {
        self.events = seq;
        self.started_at.get_or_insert(event.at);
        self.last_at = Some(event.at);
        match &event.kind {
            EventKind::TaskStarted { .. } => self.attempts += 1,
            EventKind::GateDecided {
                outcome: GateOutcome::Rescue { .. },
                ..
            } => self.rescues += 1,
            EventKind::TestsFailed { .. } => self.test_failures += 1,
            EventKind::StageFailed { .. } => self.stage_failures += 1,
            EventKind::EvalScored { .. } => self.evals += 1,
            EventKind::EvalErrored { .. } => self.eval_errors += 1,
            EventKind::ReplanRequested { .. } => self.replans_requested += 1,
            EventKind::PlanRevised { .. } => self.replans += 1,
            EventKind::ReplanLoopDetected { .. } => self.replan_loops += 1,
            EventKind::CircuitOpened { .. } => self.circuits_opened += 1,
            EventKind::RolledBack { .. } => self.rollbacks += 1,
            EventKind::RunInterrupted { .. } => self.interruptions += 1,
            EventKind::MessagePosted { .. } => self.messages += 1,
            EventKind::MergeConflicted {
                task,
                files,
                rescue,
            } => self.merge_conflicts.push(MergeConflict {
                seq,
                task: task.clone(),
                files: files.clone(),
                rescue: *rescue,
            }),
            _ => {}
        }
    }

    /// Fills in where the run stands now (identity, status, tasks by status) from its state.
    pub fn settle(&mut self, state: &RunState) {
        self.run = state.run.as_ref().map(|r| r.id.clone());
        self.workflow = state.run.as_ref().map(|r| r.workflow.clone());
        self.fork = state.fork.clone();
        (self.status, self.outcome) = match &state.status {
            RunStatus::NotStarted => ("not-started".into(), None),
            RunStatus::Running => ("running".into(), None),
            RunStatus::Interrupted => ("interrupted".into(), None),
            RunStatus::Finished(o) => ("finished".into(), Some(o.clone())),
        };
        self.tasks.clear();
        for id in state.order.iter() {
            if let Some(status) = state.status_of(id) {
                *self.tasks.entry(status.name().to_owned()).or_default() += 1;
            }
        }
    }
}
