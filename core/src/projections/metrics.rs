//! The seeds' own success metrics, computed from a run's history: final test pass rate,
//! autonomous recovery from test failures, no task done with failing tests, eval
//! pass rate at the first try, rescue success, human interventions and by whom,
//! attempts per task, and the time tasks spent in each state.
//!
//! Like the audit, it folds the whole stream, rolled-back history included: an intervention
//! that was later rolled back still happened.

use crate::event::{Event, EventKind, GateOutcome};
use crate::ids::{IdMap, TaskId, Timestamp};
use crate::state::{RunState, TaskStatus};
use crate::usage::Spend;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// A share: how many of how many, and their ratio (none of none has no rate).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct Rate {
    /// The ones that count.
    pub of: u32,
    /// Out of.
    pub total: u32,
    /// `of / total`, when `total` is not 0.
    pub rate: Option<f64>,
}

impl Rate {
    fn new(of: u32, total: u32) -> Self {
        Self {
            of,
            total,
            rate: (total > 0).then(|| f64::from(of) / f64::from(total)),
        }
    }

    /// The sum of two shares (the store-wide figure from per-run ones).
    pub fn plus(self, other: Rate) -> Rate {
        Rate::new(self.of + other.of, self.total + other.total)
    }
}

/// A decision a person (or a script acting for one) made about the run.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct Intervention {
    /// Seq of the decision's event.
    pub seq: u64,
    /// `approve`, `reject`, `reopen`, `replan` or `rollback`.
    pub kind: &'static str,
    /// The task it was about, if one.
    pub task: Option<TaskId>,
    /// Who: the principal the recording process established, else who the command said.
    pub by: String,
}

/// The metrics of one run (or, summed, of many).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct RunMetrics {
    /// Tasks in the plan (groups aside).
    pub tasks: u32,
    /// Of the tasks with tests, those whose last tests passed (the final test pass rate).
    pub final_test_pass_rate: Rate,
    /// Test runs that failed.
    pub test_failures: u32,
    /// Of the tasks whose tests failed at least once, those done with passing tests and no
    /// human decision about them (recovery without a person).
    pub autonomous_recovery: Rate,
    /// Tasks done while their last tests failed (there must be none).
    pub done_with_failing_tests: Vec<TaskId>,
    /// Of the tasks evaluated, those whose first gate decision was a pass.
    pub eval_pass_at_first_try: Rate,
    /// Of the tasks rescued at least once, those that then passed the gate (rescue success).
    pub rescue_success: Rate,
    /// Every human decision, in order.
    pub interventions: Vec<Intervention>,
    /// Decisions by kind.
    pub interventions_by_kind: BTreeMap<String, u32>,
    /// Decisions by who made them.
    pub interventions_by_who: BTreeMap<String, u32>,
    /// Attempts started, over tasks that were started.
    pub attempts: u32,
    /// Tasks started at least once.
    pub tasks_started: u32,
    /// The most attempts of one task.
    pub max_attempts: u32,
    /// Milliseconds tasks spent in each status before they finished, summed over tasks (a task
    /// still open or running counts up to the last event; done, failed and cancelled are not
    /// counted: they last as long as the run is kept).
    pub time_in_state_ms: BTreeMap<String, u64>,
    /// What the run's commands used, as the run stands.
    pub cost: CostMetrics,
    #[serde(skip)]
    fold: Fold,
}

/// What agents cost, from the run's usage records as it stands.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct CostMetrics {
    /// Everything.
    pub total: Spend,
    /// Tasks done (groups aside): what the cost per task done is over.
    pub tasks_done: u32,
    /// Dollars per task done, when a task is done.
    pub usd_per_task_done: Option<f64>,
    /// Spent on attempts after a task's first: its retries and rescues.
    pub rescues_and_retries: Spend,
    /// By model (`unknown` when a report named none).
    pub by_model: BTreeMap<String, Spend>,
}

impl CostMetrics {
    fn of(state: &RunState, tasks_done: u32) -> Self {
        let mut m = CostMetrics {
            total: state.spend,
            tasks_done,
            ..CostMetrics::default()
        };
        for r in state.usage.iter().filter(|r| r.attempt > 1) {
            m.rescues_and_retries.add(&r.tokens, r.cost_usd);
        }
        m.by_model = crate::usage::spend_by(&state.usage, |r| super::cost::CostBy::Model.key(r))
            .into_iter()
            .collect();
        m.settle();
        m
    }

    fn settle(&mut self) {
        self.usd_per_task_done =
            (self.tasks_done > 0).then(|| self.total.cost_usd / f64::from(self.tasks_done));
    }

    fn plus(&mut self, other: &CostMetrics) {
        self.total.plus(&other.total);
        self.tasks_done += other.tasks_done;
        self.rescues_and_retries.plus(&other.rescues_and_retries);
        for (model, spend) in &other.by_model {
            self.by_model.entry(model.clone()).or_default().plus(spend);
        }
        self.settle();
    }
}

/// What the fold keeps between events.
#[derive(Debug, Clone, Default, PartialEq)]
struct Fold {
    /// Each task's status and since when.
    since: IdMap<TaskId, (TaskStatus, Timestamp)>,
    first_gate: IdMap<TaskId, GateOutcome>,
    rescued: BTreeSet<TaskId>,
    passed_after_rescue: BTreeSet<TaskId>,
    failed_tests: BTreeSet<TaskId>,
    decided_by_people: BTreeSet<TaskId>,
    /// The principal of the latest `Attributed` event and its seq: it names who made the
    /// decision recorded right after it.
    attributed: Option<(u64, String)>,
    last_at: Option<Timestamp>,
}

impl RunMetrics {
    /// Folds one event; `state` is the run's state after it.
    pub fn observe(&mut self, seq: u64, event: &Event, state: &RunState) {
        let f = &mut self.fold;
        f.last_at = Some(event.at);
        let by_people = |claimed: &str, f: &Fold| match &f.attributed {
            Some((at, principal)) if *at + 1 == seq => principal.clone(),
            _ => claimed.to_owned(),
        };
        let decision = match &event.kind {
            EventKind::Attributed { principal, .. } => {
                f.attributed = Some((seq, principal.clone()));
                None
            }
            EventKind::TaskApproved { task, by } => Some(("approve", Some(task), by_people(by, f))),
            EventKind::TaskRejected { task, by, .. } => {
                Some(("reject", Some(task), by_people(by, f)))
            }
            EventKind::TaskReopened { task, by } => Some(("reopen", Some(task), by_people(by, f))),
            EventKind::RolledBack { by, .. } => Some(("rollback", None, by_people(by, f))),
            // The engine's replanner revises plans too; a revision someone asked for is
            // attributed to them.
            EventKind::PlanRevised { .. } => match &f.attributed {
                Some((at, principal)) if *at + 1 == seq => {
                    Some(("replan", None, principal.clone()))
                }
                _ => None,
            },
            EventKind::TestsFailed { task, .. } => {
                self.test_failures += 1;
                f.failed_tests.insert(task.clone());
                None
            }
            EventKind::GateDecided { task, outcome, .. } => {
                f.first_gate.entry(task.clone()).or_insert(*outcome);
                match outcome {
                    GateOutcome::Rescue { .. } => {
                        f.rescued.insert(task.clone());
                    }
                    GateOutcome::Pass if f.rescued.contains(task) => {
                        f.passed_after_rescue.insert(task.clone());
                    }
                    _ => {}
                }
                None
            }
            _ => None,
        };
        if let Some((kind, task, by)) = decision {
            if let Some(task) = task {
                f.decided_by_people.insert(task.clone());
            }
            *self.interventions_by_kind.entry(kind.into()).or_default() += 1;
            *self.interventions_by_who.entry(by.clone()).or_default() += 1;
            self.interventions.push(Intervention {
                seq,
                kind,
                task: task.cloned(),
                by,
            });
        }
        // Time in each state: the task this event is about, or every task after a rollback or
        // a plan revision (they move many at once).
        let many = matches!(
            event.kind,
            EventKind::RolledBack { .. } | EventKind::PlanRevised { .. } | EventKind::Forked { .. }
        );
        if many {
            let ids: Vec<TaskId> = state.tasks.keys().cloned().collect();
            for id in ids {
                self.moved(&id, state, event.at);
            }
        } else if let Some(id) = event.kind.task().cloned() {
            self.moved(&id, state, event.at);
        } else if let EventKind::TaskAdded { spec } = &event.kind {
            self.moved(&spec.id, state, event.at);
        }
    }

    fn moved(&mut self, id: &TaskId, state: &RunState, at: Timestamp) {
        let Some(now) = state.tasks.get(id).map(|t| t.status) else {
            return;
        };
        if state.is_group(id) {
            return;
        }
        // Updated in place: a replay moves tasks hundreds of thousands of times, and each
        // move copied the task's id and the status's name.
        match self.fold.since.get_mut(id) {
            Some((was, _)) if *was == now => {}
            Some(since) => {
                let (was, from) = *since;
                *since = (now, at);
                if !was.is_terminal() {
                    add_time(&mut self.time_in_state_ms, was.name(), at.since(from));
                }
            }
            None => {
                self.fold.since.insert(id.clone(), (now, at));
            }
        }
    }

    /// Fills in the rates from where the run stands now; call once all events are observed.
    pub fn settle(&mut self, state: &RunState) {
        let f = &self.fold;
        let last = f.last_at.unwrap_or_default();
        for (id, (status, from)) in &f.since {
            if state.tasks.contains_key(id) && !status.is_terminal() {
                add_time(&mut self.time_in_state_ms, status.name(), last.since(*from));
            }
        }
        let tasks: Vec<_> = state
            .tasks_in_order()
            .filter(|t| !state.is_group(&t.spec.id))
            .collect();
        self.tasks = tasks.len() as u32;
        let tested: Vec<_> = tasks.iter().filter(|t| t.spec.is_tested()).collect();
        let passing = tested
            .iter()
            .filter(|t| t.last_tests_passed == Some(true))
            .count();
        self.final_test_pass_rate = Rate::new(passing as u32, tested.len() as u32);
        self.done_with_failing_tests = tasks
            .iter()
            .filter(|t| t.status == TaskStatus::Done && t.last_tests_passed == Some(false))
            .map(|t| t.spec.id.clone())
            .collect();
        let recovered = f
            .failed_tests
            .iter()
            .filter(|id| {
                state.tasks.get(*id).is_some_and(|t| {
                    t.status == TaskStatus::Done && t.last_tests_passed == Some(true)
                }) && !f.decided_by_people.contains(*id)
            })
            .count();
        self.autonomous_recovery = Rate::new(recovered as u32, f.failed_tests.len() as u32);
        let first_pass = f
            .first_gate
            .values()
            .filter(|o| **o == GateOutcome::Pass)
            .count();
        self.eval_pass_at_first_try = Rate::new(first_pass as u32, f.first_gate.len() as u32);
        self.rescue_success = Rate::new(f.passed_after_rescue.len() as u32, f.rescued.len() as u32);
        let started: Vec<u32> = tasks.iter().map(|t| t.attempt).filter(|a| *a > 0).collect();
        self.attempts = started.iter().sum();
        self.tasks_started = started.len() as u32;
        self.max_attempts = started.iter().copied().max().unwrap_or(0);
        let done = tasks
            .iter()
            .filter(|t| t.status == TaskStatus::Done)
            .count();
        self.cost = CostMetrics::of(state, u32::try_from(done).unwrap_or(u32::MAX));
    }

    /// Mean attempts per started task.
    pub fn attempts_per_task(&self) -> Option<f64> {
        (self.tasks_started > 0).then(|| f64::from(self.attempts) / f64::from(self.tasks_started))
    }

    /// These metrics and `other`'s together (over all runs of a store).
    pub fn plus(mut self, other: &RunMetrics) -> RunMetrics {
        self.tasks += other.tasks;
        self.final_test_pass_rate = self.final_test_pass_rate.plus(other.final_test_pass_rate);
        self.test_failures += other.test_failures;
        self.autonomous_recovery = self.autonomous_recovery.plus(other.autonomous_recovery);
        self.done_with_failing_tests
            .extend(other.done_with_failing_tests.iter().cloned());
        self.eval_pass_at_first_try = self
            .eval_pass_at_first_try
            .plus(other.eval_pass_at_first_try);
        self.rescue_success = self.rescue_success.plus(other.rescue_success);
        self.interventions
            .extend(other.interventions.iter().cloned());
        for (k, n) in &other.interventions_by_kind {
            *self.interventions_by_kind.entry(k.clone()).or_default() += n;
        }
        for (k, n) in &other.interventions_by_who {
            *self.interventions_by_who.entry(k.clone()).or_default() += n;
        }
        self.attempts += other.attempts;
        self.tasks_started += other.tasks_started;
        self.max_attempts = self.max_attempts.max(other.max_attempts);
        for (k, ms) in &other.time_in_state_ms {
            *self.time_in_state_ms.entry(k.clone()).or_default() += ms;
        }
        self.cost.plus(&other.cost);
        self
    }
}

/// Adds `ms` to a status's time, making its entry (and its name's copy) only the first time.
fn add_time(times: &mut BTreeMap<String, u64>, status: &str, ms: u64) {
    match times.get_mut(status) {
        Some(total) => *total = total.saturating_add(ms),
        None => {
            times.insert(status.to_owned(), ms);
        }
    }
}
