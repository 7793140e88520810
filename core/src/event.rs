//! The event catalogue: every fact a run can record.
//!
//! On-disk format rule: bincode is positional. Never reorder, remove or change a variant or a
//! field; add new variants at the end. `tests/golden_bytes.rs` pins the encoding of each one.

use crate::ids::{AgentId, Hash, RunId, StageId, TaskId, Timestamp};
use crate::settings::{RetryStrategy, Settings};
use crate::spec::{TaskClass, TaskSpec};
use crate::usage::{BudgetKind, Limits, Prices, UsageRecord};
use crate::value::Value;
use bincode::{Decode, Encode};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One recorded fact with the time it happened. Time enters the core only here and in commands.
#[derive(Debug, Clone, PartialEq, Encode, Decode, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct Event {
    /// When it happened (from the command that caused it).
    pub at: Timestamp,
    /// What happened.
    pub kind: EventKind,
}

/// How a finished run ended.
#[derive(Debug, Clone, PartialEq, Eq, Encode, Decode, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
pub enum RunOutcome {
    /// Every task done (or cancelled by a replan).
    Succeeded,
    /// Some tasks failed or are blocked by failures.
    Failed {
        /// Tasks that failed.
        failed: Vec<TaskId>,
        /// Open tasks that can never become ready.
        blocked: Vec<TaskId>,
    },
    /// The run stopped waiting for a person (a replan without a replan command, an eval error).
    Paused {
        /// Why, and what would unblock it.
        reason: String,
    },
}

impl RunOutcome {
    /// The outcome word: `succeeded`, `failed` or `paused`.
    pub fn name(&self) -> &'static str {
        match self {
            RunOutcome::Succeeded => "succeeded",
            RunOutcome::Failed { .. } => "failed",
            RunOutcome::Paused { .. } => "paused",
        }
    }
}

/// What the eval gate decided for one score.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Encode, Decode, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
pub enum GateOutcome {
    /// Score at or above the threshold: the task is done and its dependents may start.
    Pass,
    /// Below the threshold: rescue number `n` with the same agent, worktree and the eval feedback.
    Rescue {
        /// 1-based rescue number.
        n: u32,
    },
    /// Below the threshold with no rescue left (or auto-rescue off): the task failed.
    Fail,
}

/// A new task standing in for a cancelled one; dependents of `old` wait on `new` instead.
#[derive(Debug, Clone, PartialEq, Eq, Encode, Decode, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct Replacement {
    /// The superseded task.
    pub old: TaskId,
    /// The task that replaces it.
    pub new: TaskId,
}

/// Every kind of event. See the module docs for the format rule.
#[derive(Debug, Clone, PartialEq, Encode, Decode, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum EventKind {
    /// The run began with this workflow and these settings.
    RunStarted {
        /// The run's id.
        run: RunId,
        /// Workflow name (or path).
        workflow: String,
        /// blake3 of the workflow file, to tell if a resume reads the same file.
        workflow_hash: Hash,
        /// Settings in force.
        settings: Settings,
    },
    /// The run ended.
    RunFinished {
        /// How.
        outcome: RunOutcome,
    },
    /// The run was stopped (Ctrl-C, crash detected on resume); running attempts were abandoned.
    RunInterrupted {
        /// Why.
        reason: String,
    },
    /// This run is a fork: its state starts as `from_run`'s state after `at_seq`.
    Forked {
        /// This (new) run.
        run: RunId,
        /// The parent run.
        from_run: RunId,
        /// The parent's seq the fork starts from.
        at_seq: u64,
        /// The parent's chain hash at that seq, so the lineage can be verified.
        from_hash: Hash,
    },
    /// The state went back to what it was after `to_seq`. Nothing is deleted.
    RolledBack {
        /// The seq whose state is restored.
        to_seq: u64,
        /// Why.
        reason: String,
        /// Who asked.
        by: String,
    },
    /// A task joined the plan.
    TaskAdded {
        /// The task (boxed to keep every event small; encoded exactly like the spec itself).
        spec: Box<TaskSpec>,
    },
    /// A destructive task touched files that pending tasks need: dispatch pauses (re-evaluation after a destructive task).
    ReplanRequested {
        /// The task whose completion triggered it.
        after_task: TaskId,
        /// Why, in words.
        reason: String,
        /// Files both the finished task and a pending task touch.
        touched_files: Vec<String>,
        /// Pending tasks that touch them.
        affected: Vec<TaskId>,
    },
    /// The plan was revised: tasks cancelled, added, and which replaces which.
    PlanRevised {
        /// Pending tasks superseded by the revision.
        cancelled: Vec<TaskId>,
        /// New tasks.
        added: Vec<TaskSpec>,
        /// Which new task replaces which cancelled one.
        replaces: Vec<Replacement>,
        /// Why.
        reason: String,
        /// Hash of the remaining plan's content, to detect regeneration loops.
        plan_hash: Hash,
    },
    /// An attempt of a task began.
    TaskStarted {
        /// The task.
        task: TaskId,
        /// The agent identity (kept across rescues).
        agent: AgentId,
        /// The worktree (kept across rescues).
        worktree: String,
        /// 1-based attempt number over the task's life.
        attempt: u32,
    },
    /// The agent said it is done (exit 0); testing or the eval gate decide the rest.
    TaskSubmitted {
        /// The task.
        task: TaskId,
        /// What the agent said it did.
        summary: String,
    },
    /// The task's tests began.
    TestsStarted {
        /// The task.
        task: TaskId,
        /// Attempt under test.
        attempt: u32,
    },
    /// The tests passed.
    TestsPassed {
        /// The task.
        task: TaskId,
        /// Attempt under test.
        attempt: u32,
    },
    /// The tests failed; the details are the next attempt's feedback.
    TestsFailed {
        /// The task.
        task: TaskId,
        /// Attempt under test.
        attempt: u32,
        /// Failure output.
        details: String,
    },
    /// An evaluator scored the task.
    EvalScored {
        /// The task.
        task: TaskId,
        /// Which evaluator.
        evaluator: String,
        /// Overall score in [0, 1].
        score: f64,
        /// Per-dimension scores in [0, 1].
        dimensions: BTreeMap<String, f64>,
        /// The evaluator's notes (feedback for a rescue).
        notes: String,
    },
    /// The eval gate decided, with the threshold in force recorded for the audit.
    GateDecided {
        /// The task.
        task: TaskId,
        /// The score decided on.
        score: f64,
        /// The threshold in force.
        threshold: f64,
        /// The decision.
        outcome: GateOutcome,
    },
    /// A person approved the task, bypassing the gate.
    TaskApproved {
        /// The task.
        task: TaskId,
        /// Who.
        by: String,
    },
    /// A person rejected the task.
    TaskRejected {
        /// The task.
        task: TaskId,
        /// Who.
        by: String,
        /// Back to open for another try instead of failed.
        reopen: bool,
        /// Why.
        reason: String,
    },
    /// The task failed.
    TaskFailed {
        /// The task.
        task: TaskId,
        /// Why.
        reason: String,
    },
    /// The task was cancelled (superseded by a replan, or by hand).
    TaskCancelled {
        /// The task.
        task: TaskId,
        /// Why.
        reason: String,
    },
    /// A failed task was put back to open (triage).
    TaskReopened {
        /// The task.
        task: TaskId,
        /// Who.
        by: String,
    },
    /// The agent reached a named checkpoint.
    CheckpointReached {
        /// The task.
        task: TaskId,
        /// The checkpoint.
        name: String,
    },
    /// The agent classified the task (a refactoring's verdict).
    TaskClassified {
        /// The task.
        task: TaskId,
        /// The class.
        class: TaskClass,
    },
    /// A message about the run or a task.
    MessagePosted {
        /// The task it concerns, if any.
        task: Option<TaskId>,
        /// Who wrote it.
        from: String,
        /// The text.
        text: String,
    },
    /// A supervised stage attempt began.
    StageStarted {
        /// The stage.
        stage: StageId,
        /// The task running in it.
        task: TaskId,
        /// Attempt number.
        attempt: u32,
    },
    /// A stage attempt succeeded; its result goes on the supervisor stack.
    StageCompleted {
        /// The stage.
        stage: StageId,
        /// The task.
        task: TaskId,
        /// The stage's result.
        result: Value,
        /// How long the attempt took.
        duration_ms: u64,
        /// Retries it took.
        retry_count: u32,
    },
    /// A stage attempt failed; the error goes on the supervisor stack.
    StageFailed {
        /// The stage.
        stage: StageId,
        /// The task.
        task: TaskId,
        /// Error message.
        error: String,
        /// Error class (exit-code, timeout, spawn, checkpoints...).
        error_type: crate::ErrorType,
        /// Retries so far, this failure included.
        retry_count: u32,
        /// How long the attempt took.
        duration_ms: u64,
    },
    /// Another attempt is due after `delay_ms`.
    RetryScheduled {
        /// The stage.
        stage: StageId,
        /// The task.
        task: TaskId,
        /// The attempt that will run.
        attempt: u32,
        /// Backoff delay.
        delay_ms: u64,
    },
    /// The stage failed too often in a row; its tasks are not started until it closes.
    CircuitOpened {
        /// The stage.
        stage: StageId,
        /// Consecutive failures seen.
        failures: u32,
    },
    /// The stage's circuit closed again.
    CircuitClosed {
        /// The stage.
        stage: StageId,
    },
    /// The stage's retry strategy changed (the supervisor's `set_recovery_strategy`).
    StrategySet {
        /// The stage.
        stage: StageId,
        /// The new strategy.
        strategy: RetryStrategy,
    },
    /// Legacy: written by versions before the eval gate. Upcast on read into the gate:
    /// the task waits in pending-eval, unless it is already done.
    PendingValidation {
        /// The task.
        task: TaskId,
    },
    /// The evaluator could not score (no JSON, score out of range...). The task stays in
    /// pending-eval for a person to approve, reject, or run the evaluator again.
    EvalErrored {
        /// The task.
        task: TaskId,
        /// Which evaluator.
        evaluator: String,
        /// What was wrong.
        error: String,
    },
    /// An interrupted run continues.
    RunResumed {
        /// Why or by whom.
        reason: String,
    },
    /// A revised plan equals an earlier one: a regeneration loop, reported instead of retried.
    ReplanLoopDetected {
        /// Hash shared by the two plans.
        plan_hash: Hash,
        /// 1-based number of the earlier revision with that hash.
        same_as_revision: u32,
        /// The reason the replanner gave this time.
        reason: String,
    },
    /// Output of an agent, test or evaluator: kept inline when small, in the blob area (by
    /// blake3 hash) when large, with the start of it inline.
    OutputRecorded {
        /// The task.
        task: TaskId,
        /// The attempt.
        attempt: u32,
        /// `agent`, `test` or `eval`, then `.stdout` or `.stderr`.
        stream: String,
        /// The text, or its beginning when it is in the blob area.
        text: String,
        /// The blob holding all of it, when it is large.
        blob: Option<Hash>,
        /// Its full size.
        bytes: u64,
    },
    /// Who issued the command whose events follow in the same append, as the process that
    /// recorded it established: a token's name over TCP, the user of a Unix socket's peer, the
    /// OS user of a process writing the store. Those events' own `by` is what the caller claimed.
    Attributed {
        /// The authenticated name.
        principal: String,
        /// How it was established: `token`, `unix-socket` or `os-user`.
        via: String,
    },
    /// A task that requires testing and named no test command got one by a convention (seed
    /// 004's test discovery), before the run started.
    TestsDiscovered {
        /// The task.
        task: TaskId,
        /// Which convention: `test_file`, `pytest tests/test_{id}.py`, `make test-{id}`,
        /// `{id}_test.py` or `test_{id}.py`.
        convention: String,
        /// The test command it gave the task.
        test: String,
    },
    /// A task runs another workflow as a child run of its own (a sub-project),
    /// declared before the run's first attempt.
    SubProjectDeclared {
        /// The task.
        task: TaskId,
        /// The child workflow file, as the parent's workflow names it.
        workflow: String,
    },
    /// A sub-project task's child run started (or was taken on again): the parent's side of
    /// the link.
    ChildRunStarted {
        /// The task.
        task: TaskId,
        /// The child run.
        child_run: RunId,
    },
    /// This run is a sub-project of a task of another run: the child's side of the link.
    ParentLinked {
        /// The parent run.
        parent_run: RunId,
        /// The parent's task this run is the work of.
        task: TaskId,
    },
    /// A sub-project task's child run finished. Succeeded: the task is submitted next. Not: the
    /// task stays in progress, waiting, with the child's failures named, until the parent is
    /// resumed.
    ChildRunEnded {
        /// The task.
        task: TaskId,
        /// The child run.
        child_run: RunId,
        /// Whether every task of the child is done.
        succeeded: bool,
        /// What failed or is blocked in the child (empty when it succeeded).
        failures: String,
    },
    /// A worker of the shared store took a task on: recorded with the attempt's start (or, for
    /// a task whose worker was lost, before its tests or eval go on elsewhere). Exactly one per
    /// start, decided by the log's expected-seq check.
    WorkerClaimed {
        /// The task.
        task: TaskId,
        /// The attempt.
        attempt: u32,
        /// The worker.
        worker: String,
        /// The worker has no worktree of the task's (its previous worker is gone): it starts in
        /// a fresh one, with the recorded feedback.
        fresh_worktree: bool,
        /// The task's worker before, when another.
        previous: Option<String>,
    },
    /// A worker's lease expired while it held a task: its attempt is abandoned and the task is
    /// taken on elsewhere. Recorded only once the worker can no longer record anything.
    AttemptAbandoned {
        /// The task.
        task: TaskId,
        /// The attempt.
        attempt: u32,
        /// The worker that was lost.
        worker: String,
        /// Why, in words.
        reason: String,
    },
    /// The run works in a git repository: each task in a worktree on a branch of its own, merged
    /// into the run's integration branch when done. Recorded once the run starts (and when a
    /// fork is first driven, for its own branch).
    WorkspaceOpened {
        /// The repository (its top directory, or a shared repository's path or URL).
        repo: String,
        /// The integration branch (`runlog/RUN`).
        branch: String,
        /// The commit the run began from.
        base: String,
    },
    /// What one attempt changed, committed in the task's branch (failed attempts too).
    ChangesRecorded {
        /// The task.
        task: TaskId,
        /// The attempt.
        attempt: u32,
        /// The commit runlog made (the parent itself when the attempt changed nothing).
        commit: String,
        /// The commit it was made on.
        parent: String,
        /// The files changed.
        files: Vec<String>,
        /// Lines added.
        insertions: u64,
        /// Lines removed.
        deletions: u64,
        /// The patch: whole when small, else its beginning.
        patch: String,
        /// The whole patch in the blob area, when larger than the event holds.
        blob: Option<Hash>,
        /// The patch's size.
        patch_bytes: u64,
    },
    /// A done task's branch merged into the integration branch.
    TaskMerged {
        /// The task.
        task: TaskId,
        /// The merge commit, the integration branch's tip after it.
        commit: String,
    },
    /// Merging a done task's branch into the integration branch conflicted: the task is done no
    /// more. With a rescue left, a rescue resolves it in the task's worktree; without, it waits
    /// for a person (resolve in the worktree, then approve).
    MergeConflicted {
        /// The task.
        task: TaskId,
        /// The files in conflict.
        files: Vec<String>,
        /// The rescue it goes to (its number), or none: it waits for a person.
        rescue: Option<u32>,
    },
    /// What one of an attempt's commands reported it used (tokens, model, cost), added up per
    /// model and per whether the cost was reported or priced by runlog.
    UsageRecorded {
        /// The record.
        usage: UsageRecord,
    },
    /// The prices runlog prices usage with (the workflow's `[prices]`), in USD per million
    /// tokens by model. Recorded when the run starts.
    PricesSet {
        /// By model.
        prices: Prices,
    },
    /// A budget was set or changed: the run's (no task) or a task's. The limits are the whole
    /// budget after the change.
    BudgetSet {
        /// The task, or none for the run.
        task: Option<TaskId>,
        /// The budget now.
        limits: Limits,
        /// Who set it (`workflow` when the workflow did).
        by: String,
    },
    /// A task would have started another attempt (a first one, a retry, a rescue) with its
    /// budget spent: it fails (`task-failed` follows) until the budget is raised.
    BudgetSpent {
        /// The task.
        task: TaskId,
        /// Whose budget: the task's own, or none for the run's.
        budget: Option<TaskId>,
        /// Dollars or tokens.
        kind: BudgetKind,
        /// The limit in force.
        limit: f64,
        /// What was spent.
        spent: f64,
    },
    /// Secrets were replaced with `[redacted:NAME]` in what the events after it record (a
    /// command's output, result, feedback, a message): by name and how many, never the value.
    SecretsRedacted {
        /// The task whose record they were in, if any.
        task: Option<TaskId>,
        /// What was replaced, by name.
        redactions: Vec<crate::redact::Redaction>,
    },
    /// A run was forgotten: its records, outputs, snapshots and files removed from the store
    /// for good. Recorded in the store's register of forgotten runs ([`FORGOTTEN_RUNS`]),
    /// chained like any record, so what the run was stays provable: an export kept of it checks
    /// against this head. (Boxed: the tombstone is rare and large, every other event small.)
    RunForgotten(Box<Forgotten>),
    /// A call one of a task's commands made to a model, as the gateway saw it pass: its
    /// usage (measured, not as the command printed it) is the attempt's, priced as usage is.
    /// (Boxed: a call holds more than most events.)
    ModelCalled(Box<crate::model_call::ModelCall>),
    /// What a command printed it used for calls the gateway measured: kept as its claim,
    /// beside the measure, and never counted (the calls' own records are).
    UsageClaimed {
        /// The claim, as a usage record.
        usage: crate::usage::UsageRecord,
    },
    /// This run is a rerun of a recorded one (right after its fork): where its model calls'
    /// answers come from, the tasks it runs again, the specs a workflow file changed.
    RerunStarted(Box<crate::rerun::Rerun>),
    /// A call of a rerun asked something the recording did not: recorded before the call.
    CallDiverged(Box<crate::rerun::Divergence>),
    /// The verdicts a person reviews before the gate's decision on them takes effect (the
    /// workflow's `review`, `review_sample`). Recorded as the run starts, when any are.
    ReviewSet {
        /// The policy.
        policy: crate::review::ReviewPolicy,
    },
    /// The gate's decision on a score, held for a person: the task waits in pending-eval
    /// until a person approves or rejects it (the decision is a label the evaluator is
    /// measured against).
    ReviewHeld {
        /// The task.
        task: TaskId,
        /// The score.
        score: f64,
        /// The threshold in force.
        threshold: f64,
        /// What the gate decided.
        outcome: GateOutcome,
    },
    /// Who the evaluator said it was beside its score (`"model"`, `"version"`): recorded
    /// right before the score, so that an evaluator's versions can be told apart.
    EvaluatorNamed {
        /// The task.
        task: TaskId,
        /// The model it asked, or empty.
        model: String,
        /// Its own version (a prompt's, a rubric's), or empty.
        version: String,
    },
    /// A rerun's call was answered from the recording with the recorded run's places (its
    /// worktrees, branches, store) given as the rerun's; recorded right before the call.
    AnswerMapped(Box<crate::relocate::AnswerMapped>),
    /// An attempt changed files outside its own worktree, in places runlog watches; with the
    /// policy in force (whether the attempt fails for it).
    WroteOutside(Box<crate::outside::OutsideWrites>),
    /// An experiment was defined: its suite pinned, its variants, repeats and budget. First in
    /// the experiment's register ([`crate::experiment::register_of`]).
    ExperimentDefined(Box<crate::experiment::Experiment>),
    /// A rerun of an experiment was started: in the register, and in the rerun itself (third,
    /// after its `rerun-started`) as its lineage.
    ExperimentRerun(Box<crate::experiment::ExperimentRerun>),
    /// An experiment's budget was changed (`experiment resume --max-cost-usd`), in its register.
    ExperimentBudgetSet {
        /// The most its live calls may cost now, in USD.
        max_cost_usd: Option<f64>,
    },
    /// A model call's worst case was reserved against its task's and the run's budgets before
    /// it left; its `model-called` settles it to what the provider counted.
    ModelCallReserved(Box<crate::reservation::Reservation>),
    /// A model call's worst case did not fit what a budget had left, with no call in flight to
    /// free room: refused before it left (its `model-called` follows, `over-budget`), and its
    /// task starts no other attempt until a budget is changed.
    ModelCallDidNotFit(Box<crate::reservation::DidNotFit>),
    /// An alert was sent to a receiver of the workflow's `[[alerts]]`: delivered, or given up
    /// after its tries (the run goes on either way).
    AlertSent(Box<crate::alerts::AlertSent>),
    /// The `events` events just before this one record the command its sender gave this
    /// idempotency key; the same command sent again with the key is answered with them, not
    /// recorded twice, and another command with it is refused.
    CommandKeyed {
        /// The sender's key.
        key: String,
        /// blake3 of the command as decided (its JSON), to tell the same command from another.
        command: Hash,
        /// How many events before this one the command recorded.
        events: u64,
    },
}

/// What a run's tombstone keeps.
#[derive(Debug, Clone, PartialEq, Encode, Decode, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct Forgotten {
    /// The run.
    pub run: RunId,
    /// Its chain's first hash (from its id).
    pub genesis: Hash,
    /// Its last seq.
    pub head_seq: u64,
    /// Its chain hash at that seq: with `head_seq`, its digest.
    pub head_hash: Hash,
    /// How it stood: `succeeded`, `failed`, `interrupted`...
    pub outcome: String,
    /// Who forgot it (the authenticated name).
    pub principal: String,
    /// How that was established: `token`, `unix-socket` or `os-user`.
    pub via: String,
    /// Why, as given (`--reason`, or the retention that applied).
    pub reason: String,
}

/// The run that records every forgotten run's tombstone (a name no run can take: ids never
/// start with '.').
pub const FORGOTTEN_RUNS: &str = ".forgotten";

/// Writes [`EventKind::name`] and [`EventKind::NAMES`] from one table, so a new variant needs
/// one line here (the exhaustive match refuses to compile without it) for its name to work
/// everywhere: `--kind` filters, JSON, the web view.
macro_rules! event_names {
    ($($variant:ident => $name:literal,)*) => {
        impl EventKind {
            /// Every variant's kebab-case name, in declaration order.
            pub const NAMES: &'static [&'static str] = &[$($name),*];

            /// The kebab-case name of the variant, as used by `--kind` filters and JSON.
            pub fn name(&self) -> &'static str {
                match self {
                    $(EventKind::$variant { .. } => $name,)*
                }
            }
        }
    };
}

event_names! {
    RunStarted => "run-started",
    RunFinished => "run-finished",
    RunInterrupted => "run-interrupted",
    Forked => "forked",
    RolledBack => "rolled-back",
    TaskAdded => "task-added",
    ReplanRequested => "replan-requested",
    PlanRevised => "plan-revised",
    TaskStarted => "task-started",
    TaskSubmitted => "task-submitted",
    TestsStarted => "tests-started",
    TestsPassed => "tests-passed",
    TestsFailed => "tests-failed",
    EvalScored => "eval-scored",
    GateDecided => "gate-decided",
    TaskApproved => "task-approved",
    TaskRejected => "task-rejected",
    TaskFailed => "task-failed",
    TaskCancelled => "task-cancelled",
    TaskReopened => "task-reopened",
    CheckpointReached => "checkpoint-reached",
    TaskClassified => "task-classified",
    MessagePosted => "message-posted",
    StageStarted => "stage-started",
    StageCompleted => "stage-completed",
    StageFailed => "stage-failed",
    RetryScheduled => "retry-scheduled",
    CircuitOpened => "circuit-opened",
    CircuitClosed => "circuit-closed",
    StrategySet => "strategy-set",
    PendingValidation => "pending-validation",
    EvalErrored => "eval-errored",
    RunResumed => "run-resumed",
    ReplanLoopDetected => "replan-loop-detected",
    OutputRecorded => "output-recorded",
    Attributed => "attributed",
    TestsDiscovered => "tests-discovered",
    SubProjectDeclared => "sub-project-declared",
    ChildRunStarted => "child-run-started",
    ParentLinked => "parent-linked",
    ChildRunEnded => "child-run-ended",
    WorkerClaimed => "worker-claimed",
    AttemptAbandoned => "attempt-abandoned",
    WorkspaceOpened => "workspace-opened",
    ChangesRecorded => "changes-recorded",
    TaskMerged => "task-merged",
    MergeConflicted => "merge-conflicted",
    UsageRecorded => "usage-recorded",
    PricesSet => "prices-set",
    BudgetSet => "budget-set",
    BudgetSpent => "budget-spent",
    SecretsRedacted => "secrets-redacted",
    RunForgotten => "run-forgotten",
    ModelCalled => "model-called",
    UsageClaimed => "usage-claimed",
    RerunStarted => "rerun-started",
    CallDiverged => "call-diverged",
    ReviewSet => "review-set",
    ReviewHeld => "review-held",
    EvaluatorNamed => "evaluator-named",
    AnswerMapped => "answer-mapped",
    WroteOutside => "wrote-outside",
    ExperimentDefined => "experiment-defined",
    ExperimentRerun => "experiment-rerun",
    ExperimentBudgetSet => "experiment-budget-set",
    ModelCallReserved => "model-call-reserved",
    ModelCallDidNotFit => "model-call-did-not-fit",
    AlertSent => "alert-sent",
    CommandKeyed => "command-keyed",
}

impl EventKind {
    /// The blobs the event names: an output or a patch larger than an event holds, a model
    /// call's request, answer and assembled message. What `du` counts, `forget` removes and
    /// `export` carries.
    pub fn blobs_named(&self) -> Vec<Hash> {
        match self {
            EventKind::OutputRecorded { blob: Some(h), .. }
            | EventKind::ChangesRecorded { blob: Some(h), .. } => vec![*h],
            EventKind::ModelCalled(call) => [call.request, call.response, call.assembled]
                .into_iter()
                .flatten()
                .map(|b| b.blob)
                .collect(),
            _ => Vec::new(),
        }
    }

    /// The budget a `budget-spent` event records as spent.
    pub fn budget_stop(&self) -> Option<crate::usage::BudgetStop> {
        match self {
            EventKind::BudgetSpent {
                budget,
                kind,
                limit,
                spent,
                ..
            } => Some(crate::usage::BudgetStop {
                budget: budget.clone(),
                kind: *kind,
                limit: *limit,
                spent: *spent,
            }),
            _ => None,
        }
    }

    /// The task this event is about, if it is about one.
    pub fn task(&self) -> Option<&TaskId> {
        match self {
            EventKind::TaskAdded { spec } => Some(&spec.id),
            EventKind::ReplanRequested { after_task, .. } => Some(after_task),
            EventKind::TaskStarted { task, .. }
            | EventKind::TaskSubmitted { task, .. }
            | EventKind::TestsStarted { task, .. }
            | EventKind::TestsPassed { task, .. }
            | EventKind::TestsFailed { task, .. }
            | EventKind::EvalScored { task, .. }
            | EventKind::GateDecided { task, .. }
            | EventKind::TaskApproved { task, .. }
            | EventKind::TaskRejected { task, .. }
            | EventKind::TaskFailed { task, .. }
            | EventKind::TaskCancelled { task, .. }
            | EventKind::TaskReopened { task, .. }
            | EventKind::CheckpointReached { task, .. }
            | EventKind::TaskClassified { task, .. }
            | EventKind::StageStarted { task, .. }
            | EventKind::StageCompleted { task, .. }
            | EventKind::StageFailed { task, .. }
            | EventKind::RetryScheduled { task, .. }
            | EventKind::PendingValidation { task }
            | EventKind::EvalErrored { task, .. }
            | EventKind::OutputRecorded { task, .. }
            | EventKind::TestsDiscovered { task, .. }
            | EventKind::SubProjectDeclared { task, .. }
            | EventKind::ChildRunStarted { task, .. }
            | EventKind::ChildRunEnded { task, .. }
            | EventKind::WorkerClaimed { task, .. }
            | EventKind::AttemptAbandoned { task, .. }
            | EventKind::ChangesRecorded { task, .. }
            | EventKind::TaskMerged { task, .. }
            | EventKind::MergeConflicted { task, .. }
            | EventKind::BudgetSpent { task, .. }
            | EventKind::ReviewHeld { task, .. }
            | EventKind::EvaluatorNamed { task, .. } => Some(task),
            EventKind::UsageRecorded { usage } => Some(&usage.task),
            EventKind::ModelCalled(call) => Some(&call.task),
            EventKind::UsageClaimed { usage } => Some(&usage.task),
            EventKind::CallDiverged(d) => Some(&d.task),
            EventKind::AnswerMapped(m) => Some(&m.task),
            EventKind::WroteOutside(w) => Some(&w.task),
            EventKind::ModelCallReserved(r) => Some(&r.task),
            EventKind::ModelCallDidNotFit(d) => Some(&d.reservation.task),
            EventKind::MessagePosted { task, .. }
            | EventKind::BudgetSet { task, .. }
            | EventKind::SecretsRedacted { task, .. } => task.as_ref(),
            EventKind::RunStarted { .. }
            | EventKind::RunFinished { .. }
            | EventKind::RunInterrupted { .. }
            | EventKind::Forked { .. }
            | EventKind::RolledBack { .. }
            | EventKind::PlanRevised { .. }
            | EventKind::CircuitOpened { .. }
            | EventKind::CircuitClosed { .. }
            | EventKind::StrategySet { .. }
            | EventKind::RunResumed { .. }
            | EventKind::ReplanLoopDetected { .. }
            | EventKind::Attributed { .. }
            | EventKind::ParentLinked { .. }
            | EventKind::WorkspaceOpened { .. }
            | EventKind::PricesSet { .. }
            | EventKind::RunForgotten { .. }
            | EventKind::RerunStarted(_)
            | EventKind::ReviewSet { .. }
            | EventKind::ExperimentDefined(_)
            | EventKind::ExperimentRerun(_)
            | EventKind::ExperimentBudgetSet { .. }
            | EventKind::AlertSent(_)
            | EventKind::CommandKeyed { .. } => None,
        }
    }
}
