//! Which event raises which alert, from the event and the state it leaves: a run failed; a task
//! waits for a person (a verdict held for review, a merge conflict left to a person); a budget
//! crossed half, four fifths or all of itself; a rerun's call asked something its recording
//! did not.

use crate::alerts::AlertOn;
use crate::event::{EventKind, RunOutcome};
use crate::ids::TaskId;
use crate::state::RunState;
use crate::usage::{BudgetKind, Limits, Spend, Tokens};
use serde::Serialize;

/// An alert an event raised.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Raised {
    /// What about.
    pub on: AlertOn,
    /// The task, when it is about one.
    pub task: Option<TaskId>,
    /// In words, for a person.
    pub text: String,
}

/// The shares of a budget whose crossing raises an alert.
pub const BUDGET_SHARES: [f64; 3] = [0.5, 0.8, 1.0];

/// The alerts `event` raises, `state` being the run as it left it.
pub fn raised(event: &EventKind, state: &RunState) -> Vec<Raised> {
    let run = state.run.as_ref().map_or("the run", |r| r.id.as_str());
    let one = |on, task: Option<&TaskId>, text: String| {
        vec![Raised {
            on,
            task: task.cloned(),
            text,
        }]
    };
    match event {
        EventKind::RunFinished {
            outcome: RunOutcome::Failed { failed, blocked },
        } => one(
            AlertOn::RunFailed,
            None,
            format!(
                "run {run} failed: {} failed{}",
                join(failed),
                if blocked.is_empty() {
                    String::new()
                } else {
                    format!(", {} blocked", join(blocked))
                }
            ),
        ),
        EventKind::ReviewHeld {
            task,
            score,
            threshold,
            ..
        } => one(
            AlertOn::Waiting,
            Some(task),
            format!(
                "run {run}: task {task} waits for a person's review (score {score:.2}, threshold {threshold:.2}): runlog review {run}"
            ),
        ),
        EventKind::MergeConflicted {
            task,
            files,
            rescue: None,
        } => one(
            AlertOn::Waiting,
            Some(task),
            format!(
                "run {run}: task {task} waits for a person: its merge conflicts in {} (resolve in its worktree, then approve)",
                files.join(", ")
            ),
        ),
        EventKind::CallDiverged(d) => one(
            AlertOn::Diverged,
            Some(&d.task),
            format!("run {run}: {}", d.describe()),
        ),
        EventKind::ModelCalled(call) => crossed(state, &call.task, &call.tokens, call.cost_usd),
        EventKind::UsageRecorded { usage } => {
            crossed(state, &usage.task, &usage.tokens, usage.cost_usd)
        }
        _ => Vec::new(),
    }
}

/// The budget alerts of usage (`tokens`, `cost_usd`) of `task` just added to `state`: each
/// budget (the task's, the run's) whose highest share crossed is new.
fn crossed(state: &RunState, task: &TaskId, tokens: &Tokens, cost_usd: Option<f64>) -> Vec<Raised> {
    let run = state.run.as_ref().map_or("the run", |r| r.id.as_str());
    let mut out = Vec::new();
    let own = state.task(task).map(|t| (t.budget, t.spend));
    let scopes = [
        own.map(|(limits, spend)| (Some(task), limits, spend)),
        Some((None, state.budget, state.spend)),
    ];
    for (whose, limits, spend) in scopes.into_iter().flatten() {
        for (kind, limit, now, added) in bounds(&limits, &spend, tokens, cost_usd) {
            let before = now - added;
            let Some(share) = BUDGET_SHARES
                .into_iter()
                .rev()
                .find(|s| before < s * limit && now >= s * limit)
            else {
                continue;
            };
            let name = match whose {
                Some(t) => format!("task {t}'s"),
                None => "the run's".to_owned(),
            };
            let what = match kind {
                BudgetKind::CostUsd => "cost",
                BudgetKind::Tokens => "token",
            };
            out.push(Raised {
                on: AlertOn::Budget,
                task: whose.cloned(),
                text: format!(
                    "run {run}: {name} {what} budget of {} is {:.0}% spent ({})",
                    kind.show(limit),
                    share * 100.0,
                    kind.show(now)
                ),
            });
        }
    }
    out
}

/// Each bound of `limits`: its kind, limit, what `spend` has used of it, and what the usage
/// just added.
fn bounds(
    limits: &Limits,
    spend: &Spend,
    tokens: &Tokens,
    cost_usd: Option<f64>,
) -> Vec<(BudgetKind, f64, f64, f64)> {
    let mut out = Vec::new();
    if let (Some(max), Some(added)) = (limits.max_cost_usd, cost_usd) {
        out.push((BudgetKind::CostUsd, max, spend.cost_usd, added));
    }
    if let Some(max) = limits.max_tokens {
        out.push((
            BudgetKind::Tokens,
            max as f64,
            spend.tokens.total() as f64,
            tokens.total() as f64,
        ));
    }
    out.retain(|(_, limit, _, _)| *limit > 0.0);
    out
}

fn join(ids: &[TaskId]) -> String {
    if ids.is_empty() {
        return "none".to_owned();
    }
    ids.iter()
        .map(TaskId::as_str)
        .collect::<Vec<_>>()
        .join(", ")
}
