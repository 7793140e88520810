//! What a run cost: its usage records (as the run stands: a rollback takes back what it
//! undid) summed by task, model, stage, attempt or call, beside its budgets and what is left.

use crate::state::RunState;
use crate::usage::{spend_by, Limits, Spend, UsageRecord};
use serde::Serialize;

/// What the rows of a cost report are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
pub enum CostBy {
    /// One row per task.
    #[default]
    Task,
    /// One row per model (`unknown` when a report named none).
    Model,
    /// One row per stage: agent, tests, evaluator, replanner.
    Stage,
    /// One row per task attempt (`TASK#N`).
    Attempt,
    /// One row per model call (`TASK#N STAGE call K`): each call through the gateway, or,
    /// where a command reported its own usage, each report.
    Call,
}

impl CostBy {
    /// Every grouping, for parsing and help.
    pub const ALL: [CostBy; 5] = [
        CostBy::Task,
        CostBy::Model,
        CostBy::Stage,
        CostBy::Attempt,
        CostBy::Call,
    ];

    /// The kebab-case name.
    pub fn name(self) -> &'static str {
        match self {
            CostBy::Task => "task",
            CostBy::Model => "model",
            CostBy::Stage => "stage",
            CostBy::Attempt => "attempt",
            CostBy::Call => "call",
        }
    }

    /// The row a record counts in.
    pub fn key(self, r: &UsageRecord) -> String {
        match self {
            CostBy::Task => r.task.0.clone(),
            CostBy::Model => r.model.clone().unwrap_or_else(|| "unknown".into()),
            CostBy::Stage => r.stage.name().into(),
            CostBy::Attempt => format!("{}#{}", r.task, r.attempt),
            // The command's; `CostReport::of` numbers its calls.
            CostBy::Call => format!("{}#{} {}", r.task, r.attempt, r.stage.name()),
        }
    }
}

/// One row: what one key spent.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct CostRow {
    /// The task, model, stage or `TASK#ATTEMPT`.
    pub key: String,
    /// Tokens, dollars, and how many records had no price.
    #[serde(flatten)]
    pub spend: Spend,
}

/// A budget and what is left of it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct BudgetLeft {
    /// The task whose budget it is, or none for the run's.
    pub task: Option<String>,
    /// The bounds.
    pub limits: Limits,
    /// Dollars left (0 once spent), when bounded.
    pub usd_left: Option<f64>,
    /// Tokens left (0 once spent), when bounded.
    pub tokens_left: Option<u64>,
    /// Calls in flight holding their worst case against it (`model-call-reserved` not yet
    /// settled by their `model-called`); left out of JSON, with what they hold, when none is.
    #[serde(skip_serializing_if = "is_default")]
    #[cfg_attr(feature = "ts", ts(as = "Option<u32>", optional))]
    pub in_flight: u32,
    /// Dollars those calls hold at most (of the priced ones).
    #[serde(skip_serializing_if = "is_default")]
    #[cfg_attr(feature = "ts", ts(as = "Option<f64>", optional))]
    pub held_usd: f64,
    /// Tokens those calls hold at most.
    #[serde(skip_serializing_if = "is_default")]
    #[cfg_attr(feature = "ts", ts(as = "Option<u64>", optional))]
    pub held_tokens: u64,
}

impl BudgetLeft {
    /// The run's budget and each task's, where set.
    pub fn all(state: &RunState) -> Vec<BudgetLeft> {
        let run = (!state.budget.is_unbounded())
            .then(|| Self::of(None, state.budget, &state.spend, state.held()));
        run.into_iter()
            .chain(
                state
                    .tasks_in_order()
                    .filter(|t| !t.budget.is_unbounded())
                    .map(|t| {
                        let own = state.in_flight.iter().filter(|r| r.task == t.spec.id);
                        let held = crate::reservation::Held::of(own);
                        Self::of(Some(t.spec.id.0.clone()), t.budget, &t.spend, held)
                    }),
            )
            .collect()
    }

    fn of(
        task: Option<String>,
        limits: Limits,
        spend: &Spend,
        held: crate::reservation::Held,
    ) -> Self {
        Self {
            task,
            limits,
            usd_left: limits.max_cost_usd.map(|m| (m - spend.cost_usd).max(0.0)),
            tokens_left: limits
                .max_tokens
                .map(|m| m.saturating_sub(spend.tokens.total())),
            in_flight: held.calls,
            held_usd: held.cost_usd,
            held_tokens: held.tokens,
        }
    }
}

/// The cost of a run.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct CostReport {
    /// The run as a whole.
    pub total: Spend,
    /// How the rows are grouped.
    pub by: CostBy,
    /// The rows, in first-recorded order.
    pub rows: Vec<CostRow>,
    /// The run's budget and each task's, where set.
    pub budgets: Vec<BudgetLeft>,
}

impl CostReport {
    /// The report of `state`, rows grouped `by`.
    pub fn of(state: &RunState, by: CostBy) -> Self {
        let rows = match by {
            CostBy::Call => {
                let mut made: std::collections::HashMap<String, u32> =
                    std::collections::HashMap::new();
                state
                    .usage
                    .iter()
                    .map(|r| {
                        let command = by.key(r);
                        let n = made.entry(command.clone()).or_default();
                        *n += 1;
                        let mut spend = Spend::default();
                        spend.add(&r.tokens, r.cost_usd);
                        CostRow {
                            key: format!("{command} call {n}"),
                            spend,
                        }
                    })
                    .collect()
            }
            _ => spend_by(&state.usage, |r| by.key(r))
                .into_iter()
                .map(|(key, spend)| CostRow { key, spend })
                .collect(),
        };
        Self {
            total: state.spend,
            by,
            rows,
            budgets: BudgetLeft::all(state),
        }
    }
}

// What calls hold is left out with the calls in flight: a budget with none holds nothing.
fn is_default<T: Default + PartialEq>(v: &T) -> bool {
    *v == T::default()
}
