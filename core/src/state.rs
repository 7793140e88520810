//! The state a run folds to: what `decide` reads and `evolve` builds.

use crate::event::{GateOutcome, RunOutcome};
use crate::ids::{AgentId, Hash, IdMap, RunId, StageId, TaskId, Timestamp};
use crate::settings::{RetryStrategy, Settings};
use crate::spec::{TaskClass, TaskSpec};
use crate::usage::{BudgetKind, BudgetStop, Limits, Prices, Spend, UsageRecord};
use bincode::{Decode, Encode};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::sync::Arc;

/// A task's status. `blocked` is not a status: it is derived readiness of an open task.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Encode, Decode, Serialize, Deserialize,
)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
pub enum TaskStatus {
    /// Not started.
    Open,
    /// An attempt is running or due (a retry or rescue).
    InProgress,
    /// Submitted; tests running.
    Testing,
    /// Tests failed; a retry is due.
    TestFailed,
    /// Submitted (and tested); waiting for the eval gate.
    PendingEval,
    /// Done: dependents may start.
    Done,
    /// Failed.
    Failed,
    /// Cancelled (superseded by a replan, or by hand).
    Cancelled,
}

impl TaskStatus {
    /// Every status, in the order a task usually moves through them.
    pub const ALL: [TaskStatus; 8] = [
        TaskStatus::Open,
        TaskStatus::InProgress,
        TaskStatus::Testing,
        TaskStatus::TestFailed,
        TaskStatus::PendingEval,
        TaskStatus::Done,
        TaskStatus::Failed,
        TaskStatus::Cancelled,
    ];

    /// The kebab-case name used in JSON and on screen.
    pub fn name(self) -> &'static str {
        match self {
            TaskStatus::Open => "open",
            TaskStatus::InProgress => "in-progress",
            TaskStatus::Testing => "testing",
            TaskStatus::TestFailed => "test-failed",
            TaskStatus::PendingEval => "pending-eval",
            TaskStatus::Done => "done",
            TaskStatus::Failed => "failed",
            TaskStatus::Cancelled => "cancelled",
        }
    }

    /// Done, failed or cancelled.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            TaskStatus::Done | TaskStatus::Failed | TaskStatus::Cancelled
        )
    }
}

impl fmt::Display for TaskStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Where a run is in its life.
#[derive(Debug, Clone, Default, PartialEq, Encode, Decode, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
pub enum RunStatus {
    /// No `RunStarted` or `Forked` yet.
    #[default]
    NotStarted,
    /// Running.
    Running,
    /// Stopped by an interruption; `Resume` continues it.
    Interrupted,
    /// Finished.
    Finished(RunOutcome),
}

impl RunStatus {
    /// The status word people and scripts see (`finished`, not the outcome: see
    /// [`RunOutcome::name`]).
    pub fn name(&self) -> &'static str {
        match self {
            RunStatus::NotStarted => "not-started",
            RunStatus::Running => "running",
            RunStatus::Interrupted => "interrupted",
            RunStatus::Finished(_) => "finished",
        }
    }
}

/// Identity of the run.
#[derive(Debug, Clone, PartialEq, Encode, Decode, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct RunInfo {
    /// Run id.
    pub id: RunId,
    /// Workflow name.
    pub workflow: String,
    /// Workflow hash.
    pub workflow_hash: Hash,
    /// When it started.
    pub started_at: Timestamp,
}

/// A fork's origin.
#[derive(Debug, Clone, PartialEq, Eq, Encode, Decode, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct ForkOrigin {
    /// Parent run.
    pub from_run: RunId,
    /// Parent seq.
    pub at_seq: u64,
    /// Parent chain hash at that seq.
    pub from_hash: Hash,
}

/// Everything known about one task. Its encoding (in snapshots) leaves out the fields that
/// hold their default: `state_codec`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct TaskState {
    /// The spec as planned.
    pub spec: TaskSpec,
    /// Own status (for a group, see [`RunState::status_of`]).
    pub status: TaskStatus,
    /// Attempts started over the task's life.
    pub attempt: u32,
    /// An attempt is running right now.
    pub running: bool,
    /// Agent identity of the attempts (kept across retries and rescues).
    pub agent: Option<AgentId>,
    /// Worktree of the attempts (kept across retries and rescues).
    pub worktree: Option<String>,
    /// Eval rescues since the task was last opened.
    pub rescues: u32,
    /// Test failures since the task was last opened.
    pub test_failures: u32,
    /// Stage failures in a row of this task (reset by a submit).
    pub stage_retries: u32,
    /// When the first attempt started (for time budgets).
    pub first_started_at: Option<Timestamp>,
    /// When the scheduled retry is due.
    pub retry_due: Option<Timestamp>,
    /// Checkpoints reached.
    pub checkpoints: BTreeSet<String>,
    /// Latest classification.
    pub class: Option<TaskClass>,
    /// Feedback for the next attempt: the last test failure or eval notes.
    pub feedback: Option<String>,
    /// Whether the last tests passed.
    pub last_tests_passed: Option<bool>,
    /// The last eval score.
    pub last_score: Option<f64>,
    /// The last eval's dimensions.
    pub last_dimensions: BTreeMap<String, f64>,
    /// The last gate decision.
    pub last_gate: Option<GateOutcome>,
    /// The last evaluator error, while the task waits for a decision.
    pub eval_error: Option<String>,
    /// Why it failed or was cancelled.
    pub reason: Option<String>,
    /// Tasks that replace this one (after a replan).
    pub replaced_by: Vec<TaskId>,
    /// For a sub-project task: its workflow, child run and whether it waits on a failed child.
    pub sub_project: Option<SubProject>,
    /// On the shared store: the worker that took the task on last.
    pub worker: Option<String>,
    /// That worker was lost (its lease expired): any worker may take the task on.
    pub abandoned: bool,
    /// Its code, in a git workspace.
    pub code: TaskCode,
    /// Its own budget.
    pub budget: Limits,
    /// What its commands used.
    pub spend: Spend,
    /// The budget that stopped it (it failed with `budget-spent`), until it is reopened.
    pub budget_stop: Option<BudgetStop>,
    /// The gate's decision on its last score, held for a person (the review queue): the task
    /// waits in pending-eval until a person approves or rejects it.
    pub held: Option<GateOutcome>,
    /// What its attempts wrote outside its worktree, attempt by attempt (a git workspace);
    /// left out of JSON when nothing was.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(
        feature = "ts",
        ts(as = "Option<Vec<crate::outside::OutsideWrites>>", optional)
    )]
    pub outside: Vec<crate::outside::OutsideWrites>,
    /// Its last call whose worst case did not fit a budget with nothing in flight, until a
    /// budget is changed: no attempt starts while it still would not fit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub did_not_fit: Option<crate::reservation::DidNotFit>,
}

/// A task whose work is another workflow, run as a child run.
#[derive(Debug, Clone, PartialEq, Eq, Encode, Decode, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct SubProject {
    /// The child workflow file, as the parent's workflow names it.
    pub workflow: String,
    /// The child run, once started.
    pub child: Option<RunId>,
    /// The child finished with failures: what failed. The task waits, in progress, until the
    /// parent is resumed.
    pub waiting: Option<String>,
}

/// The task of another run this run is the sub-project of.
#[derive(Debug, Clone, PartialEq, Eq, Encode, Decode, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct ParentLink {
    /// The parent run.
    pub run: RunId,
    /// The parent's task.
    pub task: TaskId,
}

impl TaskState {
    /// A task just added.
    pub fn new(spec: TaskSpec) -> Self {
        Self {
            spec,
            status: TaskStatus::Open,
            attempt: 0,
            running: false,
            agent: None,
            worktree: None,
            rescues: 0,
            test_failures: 0,
            stage_retries: 0,
            first_started_at: None,
            retry_due: None,
            checkpoints: BTreeSet::new(),
            class: None,
            feedback: None,
            last_tests_passed: None,
            last_score: None,
            last_dimensions: BTreeMap::new(),
            last_gate: None,
            eval_error: None,
            reason: None,
            replaced_by: Vec::new(),
            sub_project: None,
            worker: None,
            abandoned: false,
            code: TaskCode::default(),
            budget: Limits::default(),
            spend: Spend::default(),
            budget_stop: None,
            held: None,
            outside: Vec::new(),
            did_not_fit: None,
        }
    }

    /// The worker holding the task now, if one does (not one that was lost).
    pub fn held_by(&self) -> Option<&str> {
        self.worker.as_deref().filter(|_| !self.abandoned)
    }

    /// For a sub-project task: its child run, once started.
    pub fn child_run(&self) -> Option<&RunId> {
        self.sub_project.as_ref()?.child.as_ref()
    }

    /// Required checkpoints not reached yet, in spec order.
    pub fn missing_checkpoints(&self) -> Vec<String> {
        self.spec
            .checkpoints
            .iter()
            .filter(|c| !self.checkpoints.contains(*c))
            .cloned()
            .collect()
    }
}

/// Circuit breaker state of a stage.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Encode, Decode, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
pub enum Circuit {
    /// Attempts allowed.
    #[default]
    Closed,
    /// Too many failures in a row: no new attempts.
    Open,
}

/// A stage's health, as the supervisor keeps it.
#[derive(Debug, Clone, Default, PartialEq, Encode, Decode, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct StageHealth {
    /// Attempts started.
    pub executions: u32,
    /// Attempts completed.
    pub completions: u32,
    /// Attempts failed.
    pub failures: u32,
    /// Total duration of finished attempts.
    pub total_duration_ms: u64,
    /// Failures since the last success.
    pub consecutive_failures: u32,
    /// Circuit breaker.
    pub circuit: Circuit,
    /// Strategy set for the stage, overriding its tasks' own.
    pub strategy: Option<RetryStrategy>,
}

/// A replan that was asked for and not yet answered.
#[derive(Debug, Clone, PartialEq, Encode, Decode, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct PendingReplan {
    /// The finished task that triggered it.
    pub after_task: TaskId,
    /// Why.
    pub reason: String,
    /// Files shared with pending tasks.
    pub touched_files: Vec<String>,
    /// The pending tasks that share them.
    pub affected: Vec<TaskId>,
    /// Set when the replanner answered with a plan seen before.
    pub loop_detected: bool,
    /// Each request merged into this one, with its seq: a revision made from an earlier state
    /// answers only the requests it saw.
    pub requests: Vec<ReplanRequest>,
}

/// One `ReplanRequested`, as recorded.
#[derive(Debug, Clone, PartialEq, Encode, Decode, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct ReplanRequest {
    /// The seq of its event.
    pub seq: u64,
    /// The finished task that triggered it.
    pub after_task: TaskId,
    /// Why.
    pub reason: String,
    /// Files shared with pending tasks.
    pub touched_files: Vec<String>,
    /// The pending tasks that shared them.
    pub affected: Vec<TaskId>,
}

/// Whether an open task may start.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(tag = "readiness", rename_all = "kebab-case")]
pub enum Readiness {
    /// Every dependency is done.
    Ready,
    /// Some dependencies are not done yet.
    Waiting {
        /// Those dependencies.
        on: Vec<TaskId>,
    },
    /// Some dependencies failed or were cancelled: it cannot start until they are reopened.
    Blocked {
        /// Those dependencies.
        by: Vec<TaskId>,
    },
    /// Every dependency is done, but its stage's circuit is open: the engine starts nothing of
    /// that stage until the circuit is closed (`close-circuit`).
    CircuitOpen {
        /// The stage.
        stage: StageId,
    },
    /// Every dependency is done, but the budget that bounds it is spent: the engine fails it
    /// (`budget-spent`) instead of starting it, until the budget is raised.
    BudgetSpent {
        /// Which budget, its limit and the spend, in words.
        spent: String,
    },
}

/// The state of one run: the fold of its events. Its encoding (snapshots) is `state_codec`'s.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct RunState {
    /// Seq of the last event folded (its position in the log, not part of the domain state).
    pub seq: u64,
    /// Identity, once started.
    pub run: Option<RunInfo>,
    /// The fork origin, for a fork.
    pub fork: Option<ForkOrigin>,
    /// Settings in force.
    pub settings: Settings,
    /// Life cycle.
    pub status: RunStatus,
    /// Tasks by id (hashed: looked up for nearly every event; ordered views use `order`).
    /// Shared between copies of the state, each task copied when one copy changes it
    /// (`Arc::make_mut`): a writer that keeps the run's head beside what it has decided, and
    /// starts again from the head when another writer appended first, copies a run of
    /// thousands of tasks in pointers.
    pub tasks: IdMap<TaskId, Arc<TaskState>>,
    /// Task ids in the order they were added. This and the two maps below change only when
    /// tasks are added or the plan is revised, so copies of the state share them until then
    /// (`Arc::make_mut`).
    pub order: Arc<Vec<TaskId>>,
    /// Children of each group.
    pub children: Arc<BTreeMap<TaskId, Vec<TaskId>>>,
    /// Tasks that list each task in their `after` (reverse dependencies).
    pub dependents: Arc<BTreeMap<TaskId, Vec<TaskId>>>,
    /// Stage health by stage (hashed; `projections::health` sorts).
    pub stages: IdMap<StageId, StageHealth>,
    /// The replan being waited for.
    pub replan: Option<PendingReplan>,
    /// Hashes of every revised plan, in order (regeneration-loop detection).
    pub plan_hashes: Vec<Hash>,
    /// The parent task, for a sub-project's run.
    pub parent: Option<ParentLink>,
    /// The git repository the run works in, if it does.
    pub workspace: Option<Workspace>,
    /// The prices usage is priced with, by model.
    pub prices: Prices,
    /// The run's budget.
    pub budget: Limits,
    /// What the run's commands used.
    pub spend: Spend,
    /// Every usage record of the run as it stands (a rollback takes back what it undid).
    pub usage: Vec<UsageRecord>,
    /// The verdicts a person reviews before the gate's decision takes effect.
    pub review: crate::review::ReviewPolicy,
    /// The model calls in flight, each holding its worst case against the budgets until its
    /// record settles it.
    #[serde(default)]
    pub in_flight: Vec<crate::reservation::Reservation>,
    /// The idempotency keys commands were sent with, and what each recorded (a rollback to
    /// before a key's command takes the key back with it).
    #[serde(default)]
    pub keys: BTreeMap<String, KeyedCommand>,
}

/// What a command sent with an idempotency key recorded (its `command-keyed` event).
#[derive(Debug, Clone, PartialEq, Eq, Encode, Decode, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct KeyedCommand {
    /// blake3 of the command as decided.
    pub command: Hash,
    /// The seq of its first event.
    pub first: u64,
    /// The seq of its last event (the `command-keyed` one).
    pub last: u64,
}

/// A run's git workspace: its integration branch and where it stands.
#[derive(Debug, Clone, PartialEq, Eq, Encode, Decode, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct Workspace {
    /// The repository.
    pub repo: String,
    /// The integration branch.
    pub branch: String,
    /// The commit the run began from.
    pub base: String,
    /// The integration branch's tip as recorded: the last merge, or the base.
    pub tip: String,
}

/// A task's code in a git workspace.
#[derive(Debug, Clone, Default, PartialEq, Eq, Encode, Decode, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct TaskCode {
    /// The last commit recorded in the task's branch.
    pub commit: Option<String>,
    /// The merge commit of the task's branch into the integration branch, once merged.
    pub merged: Option<String>,
    /// The files of the last merge that conflicted, until it merges.
    pub conflict: Option<Vec<String>>,
}

impl RunState {
    /// The budget `task` has spent, its own first, then the run's; `None` while both have
    /// something left.
    pub fn overspent(&self, task: &TaskState) -> Option<BudgetStop> {
        let stop = |budget: Option<TaskId>, (kind, limit, spent)| BudgetStop {
            budget,
            kind,
            limit,
            spent,
        };
        task.budget
            .spent_by(&task.spend)
            .map(|s| stop(Some(task.spec.id.clone()), s))
            .or_else(|| self.run_overspent())
            .or_else(|| self.short_of(task))
    }

    /// The budget `task`'s last refused call still does not fit (as it stands now), if any.
    fn short_of(&self, task: &TaskState) -> Option<BudgetStop> {
        let d = task.did_not_fit.as_ref()?;
        let (limits, spend) = match &d.budget.budget {
            Some(_) => (&task.budget, &task.spend),
            None => (&self.budget, &self.spend),
        };
        let (limit, spent) = match d.budget.kind {
            BudgetKind::CostUsd => (limits.max_cost_usd?, spend.cost_usd),
            BudgetKind::Tokens => (limits.max_tokens? as f64, spend.tokens.total() as f64),
        };
        (spent + d.worst() > limit).then(|| BudgetStop {
            budget: d.budget.budget.clone(),
            kind: d.budget.kind,
            limit,
            spent,
        })
    }

    /// `stop` (what [`RunState::overspent`] found for `task`) in words, with the call that did
    /// not fit when that is what stops it.
    pub fn stop_words(&self, task: &TaskState, stop: &BudgetStop) -> String {
        match &task.did_not_fit {
            Some(d) if d.budget.budget == stop.budget && d.budget.kind == stop.kind => format!(
                "{} left of {} could not cover its last call (up to {})",
                stop.kind.show((stop.limit - stop.spent).max(0.0)),
                match &stop.budget {
                    Some(t) => format!("task {t}'s budget"),
                    None => "the run's budget".to_owned(),
                },
                stop.kind.show(d.worst())
            ),
            _ => stop.describe(),
        }
    }

    /// The run's budget, when it is spent.
    pub fn run_overspent(&self) -> Option<BudgetStop> {
        self.budget
            .spent_by(&self.spend)
            .map(|(kind, limit, spent)| BudgetStop {
                budget: None,
                kind,
                limit,
                spent,
            })
    }

    /// Whether `id`'s work counts for what waits on it: done and, in a git workspace, merged
    /// (for a group, every task below it).
    pub fn delivered(&self, id: &TaskId) -> bool {
        if self.status_of(id) != Some(TaskStatus::Done) {
            return false;
        }
        if self.workspace.is_none() {
            return true;
        }
        let merged = |t: &TaskState| self.is_group(&t.spec.id) || t.code.merged.is_some();
        match self.tasks.get(id) {
            Some(_) if self.is_group(id) => self
                .descendants(id)
                .iter()
                .filter_map(|d| self.task(d))
                .all(merged),
            Some(t) => merged(t),
            None => false,
        }
    }

    /// Every task below a group, at any depth.
    fn descendants(&self, id: &TaskId) -> Vec<TaskId> {
        let mut out = Vec::new();
        let mut stack = vec![id.clone()];
        while let Some(at) = stack.pop() {
            for child in self.children.get(&at).into_iter().flatten() {
                out.push(child.clone());
                stack.push(child.clone());
            }
        }
        out
    }

    /// Tasks done without a test to pass (no `test` command): the run's "untested" work.
    pub fn done_untested(&self) -> Vec<TaskId> {
        self.tasks_in_order()
            .filter(|t| !self.is_group(&t.spec.id) && t.sub_project.is_none())
            .filter(|t| t.status == TaskStatus::Done && t.spec.test.is_none())
            .map(|t| t.spec.id.clone())
            .collect()
    }

    /// Done tasks of a git workspace whose branch is not merged yet (and did not conflict).
    pub fn merges_due(&self) -> Vec<TaskId> {
        if self.workspace.is_none() {
            return Vec::new();
        }
        self.tasks_in_order()
            .filter(|t| !self.is_group(&t.spec.id))
            .filter(|t| t.status == TaskStatus::Done && t.code.merged.is_none())
            .map(|t| t.spec.id.clone())
            .collect()
    }

    /// The task with this id.
    pub fn task(&self, id: &TaskId) -> Option<&TaskState> {
        self.tasks.get(id).map(|t| &**t)
    }

    /// Tasks in the order they were added.
    pub fn tasks_in_order(&self) -> impl Iterator<Item = &TaskState> {
        self.order.iter().filter_map(|id| self.task(id))
    }

    /// Whether a task has children (is a group).
    pub fn is_group(&self, id: &TaskId) -> bool {
        self.children.get(id).is_some_and(|c| !c.is_empty())
    }

    /// A task's status; for a group, derived from its children: all done (or cancelled, with
    /// at least one done) is done; all cancelled is cancelled; untouched is open; otherwise in
    /// progress, with failures bubbling up through [`RunState::failed_descendants`].
    pub fn status_of(&self, id: &TaskId) -> Option<TaskStatus> {
        self.status_at_depth(id, 0)
    }

    fn status_at_depth(&self, id: &TaskId, depth: u32) -> Option<TaskStatus> {
        let task = self.tasks.get(id)?;
        let children = match self.children.get(id) {
            Some(c) if !c.is_empty() && depth <= crate::settings::MAX_NESTING => c,
            _ => return Some(task.status),
        };
        if task.status == TaskStatus::Cancelled {
            return Some(TaskStatus::Cancelled);
        }
        let statuses: Vec<TaskStatus> = children
            .iter()
            .filter_map(|c| self.status_at_depth(c, depth + 1))
            .collect();
        let all = |f: fn(TaskStatus) -> bool| statuses.iter().all(|s| f(*s));
        Some(if all(|s| s == TaskStatus::Cancelled) {
            TaskStatus::Cancelled
        } else if all(|s| matches!(s, TaskStatus::Done | TaskStatus::Cancelled)) {
            TaskStatus::Done
        } else if all(|s| s == TaskStatus::Open) {
            TaskStatus::Open
        } else {
            TaskStatus::InProgress
        })
    }

    /// Failed tasks under a group, at any depth (failures bubble up into the group's view).
    pub fn failed_descendants(&self, id: &TaskId) -> Vec<TaskId> {
        let mut out = Vec::new();
        let mut stack: Vec<(TaskId, u32)> = vec![(id.clone(), 0)];
        while let Some((current, depth)) = stack.pop() {
            if depth > crate::settings::MAX_NESTING {
                continue;
            }
            for child in self.children.get(&current).into_iter().flatten() {
                if self
                    .tasks
                    .get(child)
                    .is_some_and(|t| t.status == TaskStatus::Failed)
                {
                    out.push(child.clone());
                }
                stack.push((child.clone(), depth + 1));
            }
        }
        out.sort();
        out
    }

    /// The dependencies a task waits for: its own `after` and those of its ancestors.
    pub fn effective_deps(&self, id: &TaskId) -> Vec<TaskId> {
        let mut deps = BTreeSet::new();
        let mut current = Some(id.clone());
        let mut hops = 0;
        while let Some(cur) = current {
            let Some(task) = self.tasks.get(&cur) else {
                break;
            };
            deps.extend(task.spec.after.iter().cloned());
            current = task.spec.parent.clone();
            hops += 1;
            if hops > crate::settings::MAX_NESTING {
                break;
            }
        }
        deps.into_iter().collect()
    }

    /// Readiness of a task, as the engine acts on it: ready when every effective dependency is
    /// done and its stage's circuit is not open.
    pub fn readiness(&self, id: &TaskId) -> Readiness {
        let mut waiting = Vec::new();
        let mut blocked = Vec::new();
        for dep in self.effective_deps(id) {
            match self.status_of(&dep) {
                Some(TaskStatus::Done) if self.delivered(&dep) => {}
                Some(TaskStatus::Failed | TaskStatus::Cancelled) | None => blocked.push(dep),
                Some(_) => waiting.push(dep),
            }
        }
        if !blocked.is_empty() {
            return Readiness::Blocked { by: blocked };
        }
        if !waiting.is_empty() {
            return Readiness::Waiting { on: waiting };
        }
        let stage = self.tasks.get(id).map(|t| t.spec.stage_id());
        match stage {
            Some(stage)
                if self
                    .stages
                    .get(&stage)
                    .is_some_and(|s| s.circuit == Circuit::Open) =>
            {
                Readiness::CircuitOpen { stage }
            }
            _ => match self
                .tasks
                .get(id)
                .and_then(|t| Some(self.stop_words(t, &self.overspent(t)?)))
            {
                Some(spent) => Readiness::BudgetSpent { spent },
                None => Readiness::Ready,
            },
        }
    }

    /// The retry strategy in force for a task: its stage's override, else its own.
    pub fn strategy_for(&self, task: &TaskState) -> RetryStrategy {
        self.stages
            .get(&task.spec.stage_id())
            .and_then(|s| s.strategy.clone())
            .unwrap_or_else(|| task.spec.retry.clone())
    }

    /// Tasks with an attempt running.
    pub fn running_tasks(&self) -> Vec<TaskId> {
        self.tasks_in_order()
            .filter(|t| t.running)
            .map(|t| t.spec.id.clone())
            .collect()
    }

    /// Open, non-group tasks that just became ready because `task` is done: dependents of the
    /// task or of any of its ancestors (a group completes with its last child), and their
    /// descendants. Sorted by id.
    pub fn ready_because_of(&self, task: &TaskId) -> Vec<TaskId> {
        let mut roots = vec![task.clone()];
        let mut current = self.tasks.get(task).and_then(|t| t.spec.parent.clone());
        while let Some(p) = current {
            if roots.len() as u32 > crate::settings::MAX_NESTING {
                break;
            }
            current = self.tasks.get(&p).and_then(|t| t.spec.parent.clone());
            roots.push(p);
        }
        let mut candidates: Vec<TaskId> = Vec::new();
        for root in &roots {
            for d in self.dependents.get(root).into_iter().flatten() {
                let mut stack = vec![(d.clone(), 0u32)];
                while let Some((id, depth)) = stack.pop() {
                    if depth <= crate::settings::MAX_NESTING {
                        stack.extend(
                            self.children
                                .get(&id)
                                .into_iter()
                                .flatten()
                                .map(|c| (c.clone(), depth + 1)),
                        );
                    }
                    candidates.push(id);
                }
            }
        }
        candidates.sort();
        candidates.dedup();
        candidates.retain(|id| {
            self.tasks
                .get(id)
                .is_some_and(|t| t.status == TaskStatus::Open)
                && !self.is_group(id)
                && self.readiness(id) == Readiness::Ready
        });
        candidates
    }

    /// Open, non-group tasks that may start now (dispatch order: the order they were added).
    pub fn ready_tasks(&self) -> Vec<TaskId> {
        self.tasks_in_order()
            .filter(|t| t.status == TaskStatus::Open && !self.is_group(&t.spec.id))
            .filter(|t| self.readiness(&t.spec.id) == Readiness::Ready)
            .map(|t| t.spec.id.clone())
            .collect()
    }
}

impl RunState {
    /// Whether `r`'s worst case fits `task`'s budget and the run's beside what is spent and
    /// held; the first budget it does not fit, when it does not.
    pub fn room_for(
        &self,
        task: &TaskState,
        r: &crate::reservation::Reservation,
    ) -> Result<(), crate::reservation::Shortfall> {
        let own = self.in_flight.iter().filter(|h| h.task == task.spec.id);
        crate::reservation::fits(
            &task.budget,
            &task.spend,
            crate::reservation::Held::of(own),
            r,
            Some(&task.spec.id),
        )?;
        crate::reservation::fits(
            &self.budget,
            &self.spend,
            crate::reservation::Held::of(&self.in_flight),
            r,
            None,
        )
    }

    /// What calls in flight hold of the run's budgets.
    pub fn held(&self) -> crate::reservation::Held {
        crate::reservation::Held::of(&self.in_flight)
    }
}
