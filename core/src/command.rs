//! Commands: what someone asks the run to do. `decide` turns one into events or a rejection.

use crate::event::Replacement;
use crate::ids::{AgentId, Hash, RunId, StageId, TaskId, Timestamp};
use crate::settings::{RetryStrategy, Settings};
use crate::spec::{TaskClass, TaskSpec};
use crate::usage::{Limits, Prices, UsageReport, UsageStage};
use crate::value::Value;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What one attempt changed in its task's worktree, committed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct Changes {
    /// The commit made (the parent when nothing changed).
    pub commit: String,
    /// The commit it was made on.
    pub parent: String,
    /// The files changed.
    pub files: Vec<String>,
    /// Lines added.
    pub insertions: u64,
    /// Lines removed.
    pub deletions: u64,
    /// The patch: whole when small, else its beginning.
    pub patch: String,
    /// The whole patch in the blob area, when larger.
    pub blob: Option<Hash>,
    /// The patch's size.
    pub patch_bytes: u64,
}

/// A command with the time it was issued (the caller's clock; the core reads none).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct Command {
    /// When it was issued; becomes the `at` of the events it produces.
    pub at: Timestamp,
    /// What is asked.
    pub kind: CommandKind,
    /// Who issued it, as the recording process established (never read from the command's
    /// own text): a person's decision is recorded with an `Attributed` event before it.
    #[serde(skip)]
    pub principal: Option<Principal>,
    /// The secrets the recording process replaced in the command's text before deciding it:
    /// recorded with its events (`secrets-redacted`), by name and count.
    #[serde(skip)]
    pub redacted: Vec<crate::redact::Redaction>,
    /// The idempotency key its sender gave (`Idempotency-Key`): recorded with its events
    /// (`command-keyed`), so that the command sent again with it is answered with those events
    /// instead of being decided twice.
    #[serde(skip)]
    pub key: Option<String>,
}

/// Who issued a command, as the process recording it knows them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct Principal {
    /// The name: a token's, or a user's.
    pub name: String,
    /// How it was established.
    pub via: Via,
}

/// How the recording process knows who issued a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
pub enum Via {
    /// A named API token.
    Token,
    /// The peer's user on the API's Unix socket.
    UnixSocket,
    /// The user running the command line.
    OsUser,
    /// A client certificate's subject (mutual TLS).
    ClientCertificate,
    /// The client's address, on a TCP API that asks for no token.
    TcpWithoutToken,
    /// What an agent printed (tasks it added to the plan).
    AgentOutput,
    /// A tool of runlog's MCP server: the token's name over HTTP, the user who started
    /// `runlog mcp` over stdio.
    Mcp,
}

impl Via {
    /// Its name, as recorded in an `attributed` event.
    pub fn as_str(self) -> &'static str {
        match self {
            Via::Token => "token",
            Via::UnixSocket => "unix-socket",
            Via::OsUser => "os-user",
            Via::ClientCertificate => "client-certificate",
            Via::TcpWithoutToken => "tcp-without-token",
            Via::AgentOutput => "agent-output",
            Via::Mcp => "mcp",
        }
    }
}

impl std::fmt::Display for Via {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Command {
    /// A command issued at `at`.
    pub fn new(at: Timestamp, kind: CommandKind) -> Self {
        Self {
            at,
            kind,
            principal: None,
            redacted: Vec::new(),
            key: None,
        }
    }

    /// The same command, sent with an idempotency key.
    pub fn keyed(mut self, key: String) -> Self {
        self.key = Some(key);
        self
    }

    /// The same command, issued by `principal`.
    pub fn issued_by(mut self, principal: Principal) -> Self {
        self.principal = Some(principal);
        self
    }
}

impl CommandKind {
    /// A person's decision about the run (who made it is recorded with it), as opposed to the
    /// engine's bookkeeping and the start of a run or fork.
    pub fn is_decision(&self) -> bool {
        matches!(
            self,
            CommandKind::Approve { .. }
                | CommandKind::Reject { .. }
                | CommandKind::Reopen { .. }
                | CommandKind::Cancel { .. }
                | CommandKind::RevisePlan { .. }
                | CommandKind::SetStrategy { .. }
                | CommandKind::CloseCircuit { .. }
                | CommandKind::Rollback { .. }
                | CommandKind::SetBudget { .. }
        )
    }
}

/// Every command. Field meanings match the events they produce.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(tag = "command", rename_all = "kebab-case")]
pub enum CommandKind {
    /// Start a run with its initial plan.
    StartRun {
        /// Run id.
        run: RunId,
        /// Workflow name.
        workflow: String,
        /// Workflow file hash.
        workflow_hash: Hash,
        /// Settings.
        settings: Settings,
        /// The initial tasks.
        tasks: Vec<TaskSpec>,
        /// Prices and budgets (recorded right after the tasks).
        #[serde(default)]
        cost: CostPolicy,
        /// The verdicts a person reviews (recorded after the budgets).
        #[serde(default)]
        review: crate::review::ReviewPolicy,
    },
    /// Start a fork of another run (the caller supplies the parent's chain hash at `at_seq`).
    StartFork {
        /// The new run.
        run: RunId,
        /// Parent run.
        from_run: RunId,
        /// Parent seq.
        at_seq: u64,
        /// Parent chain hash at that seq.
        from_hash: Hash,
    },
    /// Add a task to a running plan.
    AddTask {
        /// The task.
        spec: TaskSpec,
    },
    /// Start (or restart, for a retry or rescue) an attempt of a task.
    StartTask {
        /// The task.
        task: TaskId,
        /// Agent identity; a retry or rescue must reuse the recorded one (`None` reuses it).
        agent: Option<AgentId>,
        /// Worktree; a retry or rescue must reuse the recorded one (`None` reuses it).
        worktree: Option<String>,
    },
    /// The agent finished its attempt successfully (exit 0).
    SubmitTask {
        /// The task.
        task: TaskId,
        /// What the agent said.
        summary: String,
        /// The stage result (a JSON object the agent printed).
        result: Value,
        /// Attempt duration.
        duration_ms: u64,
    },
    /// The agent's attempt failed (non-zero exit, timeout, could not spawn).
    FailStage {
        /// The task.
        task: TaskId,
        /// Error message.
        error: String,
        /// Error class.
        error_type: crate::ErrorType,
        /// Attempt duration.
        duration_ms: u64,
    },
    /// Record the outcome of the task's tests.
    RecordTests {
        /// The task.
        task: TaskId,
        /// Whether they passed.
        passed: bool,
        /// Output (the feedback for a retry when they failed).
        details: String,
    },
    /// Record an evaluator's score; the gate decides.
    ScoreEval {
        /// The task.
        task: TaskId,
        /// Which evaluator.
        evaluator: String,
        /// Overall score, must be in [0, 1].
        score: f64,
        /// Per-dimension scores, each in [0, 1].
        dimensions: BTreeMap<String, f64>,
        /// Notes.
        notes: String,
        /// Who the evaluator said it was (model, version), when it said.
        #[serde(default)]
        judge: crate::review::Judge,
    },
    /// Record that an evaluator could not produce a score.
    RecordEvalError {
        /// The task.
        task: TaskId,
        /// Which evaluator.
        evaluator: String,
        /// What was wrong.
        error: String,
    },
    /// Approve a task waiting in pending-eval (or one the gate failed), bypassing the gate.
    Approve {
        /// The task.
        task: TaskId,
        /// Who.
        by: String,
    },
    /// Reject a task waiting in pending-eval: failed, or open again with `reopen`.
    Reject {
        /// The task.
        task: TaskId,
        /// Who.
        by: String,
        /// Back to open instead of failed.
        reopen: bool,
        /// Why.
        reason: String,
    },
    /// Put a failed task back to open (triage).
    Reopen {
        /// The task.
        task: TaskId,
        /// Who.
        by: String,
    },
    /// Cancel a task that has not finished.
    Cancel {
        /// The task.
        task: TaskId,
        /// Why.
        reason: String,
    },
    /// Record a checkpoint the agent reached.
    ReachCheckpoint {
        /// The task.
        task: TaskId,
        /// Checkpoint name.
        name: String,
    },
    /// Record the task's classification.
    Classify {
        /// The task.
        task: TaskId,
        /// The class.
        class: TaskClass,
    },
    /// Post a message.
    PostMessage {
        /// The task, if any.
        task: Option<TaskId>,
        /// Who.
        from: String,
        /// Text.
        text: String,
    },
    /// Revise the plan while a replan is pending (or at any time, by hand).
    RevisePlan {
        /// Tasks to cancel.
        cancel: Vec<TaskId>,
        /// Tasks to add.
        add: Vec<TaskSpec>,
        /// Which new task replaces which cancelled one.
        replaces: Vec<Replacement>,
        /// Why.
        reason: String,
        /// The seq of the state the revision was made from (the board the replan command
        /// read): replan requests raised after it stay pending, for another revision. `None`:
        /// it answers every pending request.
        #[serde(default)]
        answers: Option<u64>,
    },
    /// Change a stage's retry strategy.
    SetStrategy {
        /// The stage.
        stage: StageId,
        /// The strategy.
        strategy: RetryStrategy,
    },
    /// Close an open circuit by hand.
    CloseCircuit {
        /// The stage.
        stage: StageId,
    },
    /// Restore the state after `to_seq`.
    Rollback {
        /// The seq to return to.
        to_seq: u64,
        /// Why.
        reason: String,
        /// Who.
        by: String,
    },
    /// Record that the run was interrupted.
    Interrupt {
        /// Why.
        reason: String,
    },
    /// Continue an interrupted run.
    Resume {
        /// Why or who.
        reason: String,
    },
    /// Finish the run; the outcome is computed from the board.
    Finish,
    /// Keep a command's output (see `EventKind::OutputRecorded`).
    RecordOutput {
        /// The task.
        task: TaskId,
        /// `agent.stdout`, `test.stderr`...
        stream: String,
        /// The text or its beginning.
        text: String,
        /// The blob with all of it.
        blob: Option<Hash>,
        /// Full size.
        bytes: u64,
    },
    /// Record which test discovery convention gave a task its test command.
    RecordTestsDiscovered {
        /// The task.
        task: TaskId,
        /// The convention.
        convention: String,
        /// The test command it gave.
        test: String,
    },
    /// Declare that a task runs another workflow as a child run.
    DeclareSubProject {
        /// The task.
        task: TaskId,
        /// The child workflow file.
        workflow: String,
    },
    /// Link a running sub-project task to its child run.
    LinkChildRun {
        /// The task.
        task: TaskId,
        /// The child run.
        child_run: RunId,
    },
    /// Link this run to the parent task it is the work of.
    LinkParentRun {
        /// The parent run.
        parent_run: RunId,
        /// The parent's task.
        task: TaskId,
    },
    /// Record how a sub-project task's child run finished.
    EndChildRun {
        /// The task.
        task: TaskId,
        /// The child run.
        child_run: RunId,
        /// Whether every task of the child is done.
        succeeded: bool,
        /// What failed or is blocked in it.
        failures: String,
    },
    /// Start an attempt as a worker of the shared store, claiming the task (see
    /// [`CommandKind::StartTask`]; the agent and worktree are the recorded ones).
    StartTaskAs {
        /// The task.
        task: TaskId,
        /// The worker.
        worker: String,
        /// The worker starts without the task's worktree.
        fresh_worktree: bool,
    },
    /// Take on a task whose worker was lost, between attempts (its tests or eval go on here).
    ClaimTask {
        /// The task.
        task: TaskId,
        /// The worker.
        worker: String,
        /// The worker starts without the task's worktree.
        fresh_worktree: bool,
    },
    /// Abandon the attempt of a worker whose lease expired.
    AbandonAttempt {
        /// The task.
        task: TaskId,
        /// The worker that was lost.
        worker: String,
        /// Why.
        reason: String,
    },
    /// Work in a git repository, from the integration branch `branch` at `base`.
    OpenWorkspace {
        /// The repository.
        repo: String,
        /// The run's integration branch.
        branch: String,
        /// The commit it starts at.
        base: String,
    },
    /// Record what the task's current (or last) attempt changed.
    RecordChanges {
        /// The task.
        task: TaskId,
        /// What changed.
        changes: Changes,
    },
    /// Record the merge of a done task into the integration branch: its merge commit, or the
    /// files that conflicted.
    RecordMerge {
        /// The task.
        task: TaskId,
        /// The merge commit, when it merged.
        commit: Option<String>,
        /// The files in conflict, when it did not.
        conflicts: Vec<String>,
    },
    /// Record what one of a task's commands reported it used (several reports add up).
    RecordUsage {
        /// The task (for the replanner, the task whose completion asked for it).
        task: TaskId,
        /// Which command.
        stage: UsageStage,
        /// The reports, normalised.
        reports: Vec<UsageReport>,
    },
    /// Set or change the run's budget (no task) or a task's; tasks the old budget stopped and
    /// the new one allows are reopened.
    SetBudget {
        /// The task, or none for the run.
        task: Option<TaskId>,
        /// The dollar bound.
        max_cost_usd: Change<f64>,
        /// The token bound.
        max_tokens: Change<u64>,
        /// Who.
        by: String,
    },
    /// Fail a task that would start another attempt with its budget spent.
    StopForBudget {
        /// The task.
        task: TaskId,
    },
    /// Record that secrets were replaced in what is about to be recorded (see
    /// `EventKind::SecretsRedacted`).
    RecordRedaction {
        /// The task whose record held them, if any.
        task: Option<TaskId>,
        /// What was replaced, by name.
        redactions: Vec<crate::redact::Redaction>,
    },
    /// Record a call a task's command made to a model (runlog's gateway records each one; an
    /// orchestrator with a gateway of its own may too). A cost it does not carry is priced
    /// with the run's prices.
    RecordModelCall {
        /// The call.
        call: Box<crate::model_call::ModelCall>,
    },
    /// Record what a command reported it used for calls the gateway measured: its claim, kept
    /// beside the measure and not counted.
    RecordUsageClaim {
        /// The task.
        task: TaskId,
        /// Which command.
        stage: UsageStage,
        /// The reports, normalised.
        reports: Vec<UsageReport>,
    },
    /// Make this fork a rerun of the run it was forked from (`runlog rerun`).
    StartRerun {
        /// What the rerun is.
        rerun: Box<crate::rerun::Rerun>,
    },
    /// Record that a rerun's call asked something the recording did not.
    RecordDivergence {
        /// Which call, and how.
        divergence: Box<crate::rerun::Divergence>,
    },
    /// Record that a rerun's call was answered with the recording's places mapped.
    RecordAnswerMapped {
        /// Which call, and what was mapped.
        mapped: Box<crate::relocate::AnswerMapped>,
    },
    /// Record what an attempt wrote outside its worktree.
    RecordOutsideWrites {
        /// Where, what, and the policy in force.
        writes: Box<crate::outside::OutsideWrites>,
    },
    /// Record that this rerun is one of an experiment's (right after its `rerun-started`).
    JoinExperiment {
        /// The experiment, the variant and repeat, the model map.
        lineage: Box<crate::experiment::ExperimentRerun>,
    },
    /// Hold a model call's worst case against its task's and the run's budgets while it is in
    /// flight (refused when it does not fit: see [`crate::reservation`]).
    ReserveModelCall {
        /// The call and its worst case (priced by the decision).
        reservation: Box<crate::reservation::Reservation>,
    },
    /// Record how an alert's delivery ended.
    RecordAlert {
        /// Where, how many tries, how it ended.
        sent: Box<crate::alerts::AlertSent>,
    },
}

/// What a run's usage is priced with and bounded by, as its workflow says.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct CostPolicy {
    /// Prices by model, in USD per million tokens.
    #[serde(default)]
    pub prices: Prices,
    /// The run's budget.
    #[serde(default)]
    pub budget: Limits,
    /// Each task's own budget.
    #[serde(default)]
    pub task_budgets: BTreeMap<TaskId, Limits>,
}

/// How a command changes one bound of a budget.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
pub enum Change<T> {
    /// Leave it as it is.
    #[default]
    Keep,
    /// Set it to this.
    Set(T),
    /// No bound any more.
    Remove,
}

impl<T: Copy> Change<T> {
    /// The change a pair of options asks for: a value sets, `remove` removes, neither keeps.
    pub fn from_options(set: Option<T>, remove: bool) -> Self {
        match (set, remove) {
            (Some(v), _) => Change::Set(v),
            (None, true) => Change::Remove,
            (None, false) => Change::Keep,
        }
    }

    /// The bound after the change, from the bound before.
    pub fn apply(self, before: Option<T>) -> Option<T> {
        match self {
            Change::Keep => before,
            Change::Set(v) => Some(v),
            Change::Remove => None,
        }
    }
}
