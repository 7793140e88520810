//! The family each event belongs to, decided once: `evolve` takes in each family with a
//! function of its own, and the words of `runlog log` are written family by family.

use crate::event::EventKind;

/// The part of a run an event is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Family {
    /// The run as a whole: started, ended, stopped, resumed, forked, rolled back, rerun, linked to a parent.
    Run,
    /// The plan: tasks added, a replan asked for, the plan revised.
    Plan,
    /// A task's attempts: started, submitted, tested, ended, reopened, claimed, abandoned.
    Attempt,
    /// A task's evaluation, the gate's decision and people's reviews.
    Judgement,
    /// A task that is a sub-project: its child run declared, started, ended.
    SubProject,
    /// The run's git workspace and what tasks wrote.
    Code,
    /// Usage, model calls, prices and budgets.
    Spend,
    /// Each stage's health, its retries and its circuit.
    Stage,
    /// What is said for people, audits and comparisons and changes no state: messages, outputs, who acted, redactions, a forgotten run, tests found, usage claimed, a rerun's divergences and mapped answers, an evaluator named, experiments.
    Said,
}

impl EventKind {
    /// The family of this event. Every variant is named here, so a new one is given its family
    /// before the crate compiles.
    pub fn family(&self) -> Family {
        match self {
            EventKind::RunStarted { .. }
            | EventKind::RunFinished { .. }
            | EventKind::RunInterrupted { .. }
            | EventKind::RunResumed { .. }
            | EventKind::Forked { .. }
            | EventKind::RolledBack { .. }
            | EventKind::ParentLinked { .. }
            | EventKind::RerunStarted { .. }
            | EventKind::CommandKeyed { .. } => Family::Run,
            EventKind::TaskAdded { .. }
            | EventKind::ReplanRequested { .. }
            | EventKind::PlanRevised { .. }
            | EventKind::ReplanLoopDetected { .. } => Family::Plan,
            EventKind::TaskStarted { .. }
            | EventKind::TaskSubmitted { .. }
            | EventKind::TestsStarted { .. }
            | EventKind::TestsPassed { .. }
            | EventKind::TestsFailed { .. }
            | EventKind::TaskFailed { .. }
            | EventKind::TaskCancelled { .. }
            | EventKind::TaskReopened { .. }
            | EventKind::CheckpointReached { .. }
            | EventKind::TaskClassified { .. }
            | EventKind::WorkerClaimed { .. }
            | EventKind::AttemptAbandoned { .. } => Family::Attempt,
            EventKind::EvalScored { .. }
            | EventKind::GateDecided { .. }
            | EventKind::TaskApproved { .. }
            | EventKind::TaskRejected { .. }
            | EventKind::ReviewSet { .. }
            | EventKind::ReviewHeld { .. }
            | EventKind::PendingValidation { .. }
            | EventKind::EvalErrored { .. } => Family::Judgement,
            EventKind::SubProjectDeclared { .. }
            | EventKind::ChildRunStarted { .. }
            | EventKind::ChildRunEnded { .. } => Family::SubProject,
            EventKind::WorkspaceOpened { .. }
            | EventKind::ChangesRecorded { .. }
            | EventKind::TaskMerged { .. }
            | EventKind::MergeConflicted { .. }
            | EventKind::WroteOutside { .. } => Family::Code,
            EventKind::UsageRecorded { .. }
            | EventKind::ModelCalled { .. }
            | EventKind::PricesSet { .. }
            | EventKind::BudgetSet { .. }
            | EventKind::BudgetSpent { .. }
            | EventKind::ModelCallReserved { .. }
            | EventKind::ModelCallDidNotFit { .. } => Family::Spend,
            EventKind::StageStarted { .. }
            | EventKind::StageCompleted { .. }
            | EventKind::StageFailed { .. }
            | EventKind::RetryScheduled { .. }
            | EventKind::CircuitOpened { .. }
            | EventKind::CircuitClosed { .. }
            | EventKind::StrategySet { .. } => Family::Stage,
            EventKind::MessagePosted { .. }
            | EventKind::OutputRecorded { .. }
            | EventKind::Attributed { .. }
            | EventKind::SecretsRedacted { .. }
            | EventKind::RunForgotten { .. }
            | EventKind::TestsDiscovered { .. }
            | EventKind::UsageClaimed { .. }
            | EventKind::CallDiverged { .. }
            | EventKind::AnswerMapped { .. }
            | EventKind::EvaluatorNamed { .. }
            | EventKind::ExperimentDefined { .. }
            | EventKind::ExperimentRerun { .. }
            | EventKind::ExperimentBudgetSet { .. }
            | EventKind::AlertSent { .. } => Family::Said,
        }
    }
}
