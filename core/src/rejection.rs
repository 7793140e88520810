//! Typed rejections: a command that is not allowed now says which rule, which state, and
//! what is allowed instead.

use crate::ids::{StageId, TaskId};
use crate::state::TaskStatus;
use serde::Serialize;
use thiserror::Error;

/// Why `decide` refused a command. Nothing was recorded.
#[derive(Debug, Clone, PartialEq, Error, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(tag = "rule", rename_all = "kebab-case")]
pub enum Rejection {
    /// Only `StartRun` or `StartFork` may begin a run.
    #[error("the run has not started")]
    RunNotStarted,
    /// `StartRun`/`StartFork` on a run that has events.
    #[error("the run has already started")]
    RunAlreadyStarted,
    /// The run finished; nothing more may happen but a rollback.
    #[error("the run has finished")]
    RunFinished,
    /// The run is interrupted; resume it first.
    #[error("the run is interrupted")]
    RunInterrupted,
    /// `Resume` on a run that is not interrupted.
    #[error("the run is not interrupted")]
    NotInterrupted,
    /// No such task.
    #[error("no task {task}")]
    UnknownTask {
        /// The id given.
        task: TaskId,
    },
    /// A task with this id exists.
    #[error("task {task} already exists")]
    DuplicateTask {
        /// The id.
        task: TaskId,
    },
    /// A dependency names no task.
    #[error("task {task} depends on {missing}, which does not exist")]
    UnknownDependency {
        /// The task.
        task: TaskId,
        /// The missing dependency.
        missing: TaskId,
    },
    /// A parent names no task.
    #[error("task {task} has parent {parent}, which does not exist")]
    UnknownParent {
        /// The task.
        task: TaskId,
        /// The missing parent.
        parent: TaskId,
    },
    /// Dependencies (with parents' dependencies) form a cycle.
    #[error("dependency cycle: {}", join(cycle))]
    DependencyCycle {
        /// The tasks on the cycle, first repeated at the end.
        cycle: Vec<TaskId>,
    },
    /// Nesting deeper than `max_depth`.
    #[error("task {task} is nested {depth} deep; max_depth is {max}")]
    TooDeep {
        /// The task.
        task: TaskId,
        /// Its depth.
        depth: u32,
        /// The limit.
        max: u32,
    },
    /// A setting or strategy value is out of range.
    #[error("invalid {field}: {reason}")]
    InvalidSetting {
        /// Which field.
        field: String,
        /// What is wrong.
        reason: String,
    },
    /// The command does not apply to a task in this status.
    #[error("cannot {action} task {task}: it is {status}")]
    WrongStatus {
        /// The task.
        task: TaskId,
        /// What was asked.
        action: String,
        /// The status it is in.
        status: TaskStatus,
        /// Statuses in which the action is allowed.
        allowed: Vec<TaskStatus>,
    },
    /// Dependencies are not done yet.
    #[error("task {task} is not ready: waiting on {}", join(waiting_on))]
    NotReady {
        /// The task.
        task: TaskId,
        /// Dependencies not yet done.
        waiting_on: Vec<TaskId>,
    },
    /// A dependency failed or was cancelled.
    #[error("task {task} is blocked by {}", join(blocked_by))]
    Blocked {
        /// The task.
        task: TaskId,
        /// Failed or cancelled dependencies.
        blocked_by: Vec<TaskId>,
    },
    /// Dispatch is paused until the plan is revised (re-evaluation after a destructive task).
    #[error("dispatch is paused: a replan was requested after task {after_task}")]
    ReplanPending {
        /// The task that triggered it.
        after_task: TaskId,
    },
    /// The stage failed too often in a row; its tasks wait until the circuit closes.
    #[error("the stage {stage} circuit is open")]
    CircuitOpen {
        /// The stage.
        stage: StageId,
    },
    /// A group's status follows its children; it is never started itself.
    #[error("task {task} is a group; its status follows its children")]
    IsGroup {
        /// The task.
        task: TaskId,
    },
    /// The task has an attempt running.
    #[error("task {task} already has attempt {attempt} running")]
    AlreadyRunning {
        /// The task.
        task: TaskId,
        /// The running attempt.
        attempt: u32,
    },
    /// A retry or rescue must reuse the agent identity and worktree (continuity of an attempt).
    #[error("task {task} must continue with {field} {expected:?}, not {given:?}")]
    IdentityChanged {
        /// The task.
        task: TaskId,
        /// `agent` or `worktree`.
        field: String,
        /// The recorded value.
        expected: String,
        /// The value given.
        given: String,
    },
    /// Required checkpoints not reached (exhaustive analysis).
    #[error("task {task} has not reached checkpoints {}", missing.join(", "))]
    CheckpointsMissing {
        /// The task.
        task: TaskId,
        /// The checkpoints still missing.
        missing: Vec<String>,
    },
    /// A score or dimension outside [0, 1] or not a number.
    #[error("task {task}: {what} is {value}, expected a number in [0, 1]")]
    InvalidScore {
        /// The task.
        task: TaskId,
        /// `score` or `dimension NAME`.
        what: String,
        /// The value as given.
        value: String,
    },
    /// The plan revision does not apply.
    #[error("invalid plan revision: {reason}")]
    InvalidRevision {
        /// What is wrong.
        reason: String,
    },
    /// Rollback to a seq that is not in the run's history.
    #[error("cannot roll back to seq {to_seq}: the run's history has seqs 1..={head}")]
    SeqOutOfRange {
        /// The seq asked.
        to_seq: u64,
        /// The head.
        head: u64,
    },
    /// The run cannot finish while attempts are running.
    #[error("cannot finish: tasks still running: {}", join(running))]
    StillRunning {
        /// Running tasks.
        running: Vec<TaskId>,
    },
    /// The task has no attempt running.
    #[error("task {task} has no attempt running")]
    NotRunning {
        /// The task.
        task: TaskId,
    },
    /// The backoff delay of a scheduled retry has not passed.
    #[error("the retry of task {task} is due at {due_ms} ms; it is {now_ms} ms")]
    RetryNotDue {
        /// The task.
        task: TaskId,
        /// When it is due.
        due_ms: u64,
        /// The command's time.
        now_ms: u64,
    },
    /// No task runs in this stage.
    #[error("no task runs in stage {stage}")]
    UnknownStage {
        /// The stage.
        stage: StageId,
    },
    /// The circuit is not open.
    #[error("the stage {stage} circuit is not open")]
    CircuitNotOpen {
        /// The stage.
        stage: StageId,
    },
    /// An id that is not a name ([`crate::NAME_RULE`]).
    #[error("the {what} {id:?} is not a name: {why}")]
    NotAName {
        /// Which kind of id: run, task, stage, agent, worktree.
        what: String,
        /// The id as given.
        id: String,
        /// What is wrong with it.
        why: String,
    },
    /// A sub-project task waits on its child run, which finished with failures.
    #[error("task {task} waits for its child run: {failures}")]
    ChildRunFailed {
        /// The task.
        task: TaskId,
        /// What failed in the child.
        failures: String,
    },
    /// Another worker of the shared store holds the task.
    #[error("task {task} is held by worker {worker}")]
    HeldByWorker {
        /// The task.
        task: TaskId,
        /// The worker holding it.
        worker: String,
    },
    /// The worker does not hold the task (another took it, or its attempt was abandoned).
    #[error("worker {worker} does not hold task {task}")]
    NotHeld {
        /// The task.
        task: TaskId,
        /// The worker named.
        worker: String,
    },
    /// A value nests deeper than the log can read back.
    #[error("the result of task {task} nests {depth} levels deep; at most {max} can be recorded")]
    ValueTooDeep {
        /// The task.
        task: TaskId,
        /// How deep it is.
        depth: usize,
        /// The limit.
        max: usize,
    },
    /// A task whose tests already failed more often than `max_test_retries` allows. Its
    /// `TaskFailed` is missing only when a rollback landed between it and the last
    /// `TestsFailed`, which were recorded together.
    #[error("the tests of task {task} failed {failures} times (max_test_retries = {max})")]
    TestRetriesExhausted {
        /// The task.
        task: TaskId,
        /// How often its tests failed.
        failures: u32,
        /// The limit.
        max: u32,
    },
    /// The run's git workspace is open on that branch already.
    #[error("the run works on branch {branch} already")]
    WorkspaceOpen {
        /// The branch.
        branch: String,
    },
    /// The run has no git workspace.
    #[error("the run has no git workspace")]
    NoWorkspace,
    /// The task's branch is merged already.
    #[error("task {task} is merged already")]
    AlreadyMerged {
        /// The task.
        task: TaskId,
    },
    /// The budget bounding the task is spent: no attempt of it starts.
    #[error("task {task} cannot start: {spent}")]
    BudgetSpent {
        /// The task.
        task: TaskId,
        /// Which budget, the limit and the spend, in words.
        spent: String,
    },
    /// `StopForBudget` on a task whose budgets have something left, or that is not waiting to
    /// start.
    #[error("task {task} is not stopped by a budget: {why}")]
    BudgetNotSpent {
        /// The task.
        task: TaskId,
        /// Why not.
        why: String,
    },
    /// A usage report that cannot be recorded.
    #[error("usage of task {task} cannot be recorded: {reason}")]
    InvalidUsage {
        /// The task.
        task: TaskId,
        /// What is wrong.
        reason: String,
    },
    /// A redaction record that names nothing.
    #[error("a redaction cannot be recorded: {reason}")]
    InvalidRedaction {
        /// What is wrong.
        reason: String,
    },
    /// A rerun that does not fit the run it was forked from.
    #[error("not a rerun of this run: {reason}")]
    InvalidRerun {
        /// What is wrong.
        reason: String,
    },
    /// A model call whose worst case does not fit a budget beside what is spent and held.
    #[error("a model call of task {task} does not fit: {}", shortfall.describe())]
    CallDoesNotFit {
        /// The task.
        task: TaskId,
        /// Which budget, and by how much.
        shortfall: Box<crate::reservation::Shortfall>,
    },
    /// A command sent again with the idempotency key it was recorded with: nothing more is
    /// recorded, and what it recorded then is its answer.
    #[error("the command sent with key {key:?} was recorded at seq {first}..{last}")]
    AlreadyRecorded {
        /// The key.
        key: String,
        /// The seq of its first event.
        first: u64,
        /// The seq of its last event.
        last: u64,
    },
    /// An idempotency key already given to another command.
    #[error("the key {key:?} was given to another command (recorded at seq {first}..{last})")]
    KeyReused {
        /// The key.
        key: String,
        /// The seq of that command's first event.
        first: u64,
        /// The seq of its last event.
        last: u64,
    },
}

fn join(ids: &[TaskId]) -> String {
    ids.iter()
        .map(TaskId::as_str)
        .collect::<Vec<_>>()
        .join(", ")
}

impl Rejection {
    /// What the caller may do instead, in one sentence that names no interface's syntax (a
    /// front end adds its own, e.g. the CLI's command line).
    pub fn hint(&self) -> String {
        match self {
            Rejection::RunNotStarted => "start the run first".into(),
            Rejection::RunAlreadyStarted => "choose another run id, or fork this run".into(),
            Rejection::RunFinished => "roll the run back or fork it to continue from an earlier point".into(),
            Rejection::RunInterrupted => "resume the run first".into(),
            Rejection::NotInterrupted => "only an interrupted run can be resumed".into(),
            Rejection::UnknownTask { .. } => "list the run's tasks".into(),
            Rejection::DuplicateTask { .. } => "give the new task another id".into(),
            Rejection::UnknownDependency { .. } | Rejection::UnknownParent { .. } => {
                "add the missing task first or fix the id".into()
            }
            Rejection::DependencyCycle { .. } => "remove one of the `after` edges on the cycle".into(),
            Rejection::TooDeep { .. } => "flatten the hierarchy or raise settings.max_depth".into(),
            Rejection::InvalidSetting { .. } => "fix the value in the workflow file".into(),
            Rejection::ValueTooDeep { .. } => "flatten the result, or submit it as text".into(),
            Rejection::TestRetriesExhausted { .. } => {
                "reopen the task to try it again from the start".into()
            }
            Rejection::NotAName { what, .. } => format!("a {what} id is {}", crate::ids::NAME_RULE),
            Rejection::WrongStatus { allowed, .. } => format!(
                "this is allowed when the task is {}",
                allowed.iter().map(|s| s.name()).collect::<Vec<_>>().join(" or ")
            ),
            Rejection::NotReady { .. } => "wait until its dependencies are done".into(),
            Rejection::Blocked { .. } => "reopen or replace the failed dependencies".into(),
            Rejection::ReplanPending { .. } => "revise the plan".into(),
            Rejection::CircuitOpen { .. } => "close the circuit once the cause is fixed".into(),
            Rejection::IsGroup { .. } => "start its children instead".into(),
            Rejection::AlreadyRunning { .. } => "wait for the attempt to finish, or interrupt the run".into(),
            Rejection::IdentityChanged { .. } => {
                "a retry or rescue continues the same agent in the same worktree; omit them to reuse".into()
            }
            Rejection::CheckpointsMissing { .. } => "the agent must report each checkpoint (`::checkpoint NAME`)".into(),
            Rejection::InvalidScore { .. } => "evaluators print scores between 0 and 1".into(),
            Rejection::InvalidRevision { .. } => "cancel only unfinished tasks and add tasks with new ids".into(),
            Rejection::SeqOutOfRange { head, .. } => format!("pick a seq between 1 and {head}"),
            Rejection::StillRunning { .. } => "wait for running attempts or interrupt the run".into(),
            Rejection::CircuitNotOpen { .. } => "nothing to do".into(),
            Rejection::NotRunning { .. } => "start an attempt first".into(),
            Rejection::RetryNotDue { .. } => "wait for the backoff delay".into(),
            Rejection::UnknownStage { .. } => "stages are named by tasks' `stage` (default: the task id)".into(),
            Rejection::ChildRunFailed { .. } => {
                "fix the child run (`runlog reopen CHILD TASK`), then `runlog resume` the parent".into()
            }
            Rejection::HeldByWorker { .. } => {
                "its worker goes on with it; once that worker's lease expires, any worker may".into()
            }
            Rejection::NotHeld { .. } => "nothing to abandon: the task moved on".into(),
            Rejection::WorkspaceOpen { .. } => "nothing to do: the run works there".into(),
            Rejection::NoWorkspace => {
                "a run works in a git repository when its workflow is in one (or workspace = \"git\")".into()
            }
            Rejection::AlreadyMerged { .. } => "nothing to do: its work is in the integration branch".into(),
            Rejection::BudgetSpent { .. } => {
                "raise the budget (it reopens the tasks it stopped), then resume the run".into()
            }
            Rejection::BudgetNotSpent { .. } => "nothing to do: the task may go on".into(),
            Rejection::InvalidUsage { .. } => {
                "counts are whole numbers of tokens up to 10^12, costs are USD ≥ 0".into()
            }
            Rejection::InvalidRedaction { .. } => {
                "name each secret replaced and how many times, at least once".into()
            }
            Rejection::InvalidRerun { .. } => {
                "a rerun names the run's own tasks, each spec with the dependencies it had".into()
            }
            Rejection::CallDoesNotFit { shortfall, .. } if shortfall.in_flight > 0 => {
                "it may fit once the calls in flight settle; or raise the budget".into()
            }
            Rejection::CallDoesNotFit { .. } => {
                "raise the budget, or ask for fewer tokens (a lower max_tokens)".into()
            }
            Rejection::AlreadyRecorded { .. } => "nothing to do: it was recorded".into(),
            Rejection::KeyReused { .. } => "give each command a key of its own".into(),
        }
    }
}
