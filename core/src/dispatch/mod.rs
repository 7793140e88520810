//! The dispatch policy: given a run's state, what is running and the time, which commands
//! should start now, whether the replan command should run, and when the next retry comes due.
//! The runner only executes what this returns. Every attempt it proposes passes
//! [`startable`], the check `decide` itself applies, so a proposal is never refused.

mod frontier;
pub use frontier::Frontier;

use crate::decide::startable;
use crate::ids::{TaskId, Timestamp};
use crate::rejection::Rejection;
use crate::state::{RunState, TaskStatus};

/// What the runner has in hand besides the recorded state.
#[derive(Clone, Copy)]
pub struct Capacity<'a> {
    /// Whether a command of this task (agent, tests or evaluator) is running now.
    pub busy: &'a dyn Fn(&TaskId) -> bool,
    /// How many more commands may start.
    pub free: usize,
    /// The replan command is running.
    pub replanning: bool,
    /// The replan command cannot be run (there is none, or its last answer was refused) until
    /// somebody revises the plan.
    pub replan_stopped: bool,
}

impl std::fmt::Debug for Capacity<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Capacity")
            .field("free", &self.free)
            .field("replanning", &self.replanning)
            .field("replan_stopped", &self.replan_stopped)
            .finish_non_exhaustive()
    }
}

/// Which of a task's commands to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Job {
    /// A new attempt: record `StartTask`, then run the agent.
    Attempt,
    /// The task is in testing: run its tests.
    Tests,
    /// The task waits for its evaluator: run it.
    Eval,
}

/// What to do now.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Dispatch {
    /// Commands to start, in plan order, no more than the free slots.
    pub starts: Vec<(TaskId, Job)>,
    /// Tasks that would start an attempt and whose budget is spent: record `StopForBudget`.
    pub over_budget: Vec<TaskId>,
    /// Run the replan command now.
    pub replan: bool,
    /// The earliest time a retry waiting for its backoff may start. Not looked for once every
    /// free slot is taken: nothing could start before a slot frees, which asks again.
    pub next_due: Option<Timestamp>,
}

impl Dispatch {
    /// Nothing to start, nothing running and nothing coming due: the run has gone as far as it
    /// can and should be finished (succeeded, failed or paused, as `decide` will say).
    pub fn settled(&self, cap: &Capacity<'_>, running: usize) -> bool {
        self.starts.is_empty()
            && self.over_budget.is_empty()
            && !self.replan
            && self.next_due.is_none()
            && running == 0
            && !cap.replanning
    }
}

/// The dispatch decision for `state` at `now`. A runner asks its [`Frontier`] instead, which
/// decides the same looking only at the tasks that can move.
pub fn dispatch(state: &RunState, now: Timestamp, cap: &Capacity<'_>) -> Dispatch {
    dispatch_over(state, now, cap, state.order.iter())
}

/// The same decision over `ids`, in plan order: equal to [`dispatch`] when every task left out
/// is one it would pass over.
fn dispatch_over<'s>(
    state: &'s RunState,
    now: Timestamp,
    cap: &Capacity<'_>,
    ids: impl Iterator<Item = &'s TaskId>,
) -> Dispatch {
    let mut out = Dispatch {
        replan: replan_due(state, cap),
        ..Dispatch::default()
    };
    for id in ids {
        // Every free slot is taken: the rest of the plan cannot change this decision.
        if out.starts.len() >= cap.free {
            break;
        }
        let Some(task) = state.task(id) else {
            continue;
        };
        if (cap.busy)(id) || state.is_group(id) {
            continue;
        }
        let job = match task.status {
            TaskStatus::Testing => Some(Job::Tests),
            TaskStatus::PendingEval
                if task.spec.eval.is_some() && task.eval_error.is_none() && task.held.is_none() =>
            {
                Some(Job::Eval)
            }
            TaskStatus::Open | TaskStatus::InProgress | TaskStatus::TestFailed => {
                match startable(state, id, now) {
                    Ok(_) => Some(Job::Attempt),
                    Err(Rejection::BudgetSpent { .. }) => {
                        out.over_budget.push(id.clone());
                        None
                    }
                    Err(_) => {
                        // Waiting for its backoff: due later if nothing else stands in the way.
                        if let Some(due) = task.retry_due.filter(|due| *due > now) {
                            if startable(state, id, due).is_ok() {
                                out.next_due = Some(out.next_due.map_or(due, |d| d.min(due)));
                            }
                        }
                        None
                    }
                }
            }
            _ => None,
        };
        if let Some(job) = job {
            if out.starts.len() < cap.free {
                out.starts.push((id.clone(), job));
            }
        }
    }
    out
}

/// The replan command runs once a replan is pending, no agent is still working (its result
/// may change what the replanner sees) and nothing stops it.
fn replan_due(state: &RunState, cap: &Capacity<'_>) -> bool {
    let Some(replan) = &state.replan else {
        return false;
    };
    let agents_busy = state
        .order
        .iter()
        .any(|id| (cap.busy)(id) && state.task(id).is_some_and(|t| t.running));
    !replan.loop_detected
        && !agents_busy
        && !cap.replanning
        && !cap.replan_stopped
        && state.run_overspent().is_none()
}
