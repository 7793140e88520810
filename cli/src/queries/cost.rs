//! A run's cost as `runlog cost --json` and `GET /v1/runs/{run}/cost` answer it.

use runlog_core::projections::{CostBy, CostReport};
use runlog_core::RunState;
use serde::Serialize;

/// The cost of a run at a seq.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct CostView {
    /// The run.
    pub run: String,
    /// The seq it is at.
    pub seq: u64,
    /// Totals, rows and budgets.
    #[serde(flatten)]
    pub report: CostReport,
}

impl CostView {
    /// The cost of `state`, a state of `run`, grouped `by`.
    pub fn of(run: &str, state: &RunState, by: CostBy) -> Self {
        Self {
            run: run.to_owned(),
            seq: state.seq,
            report: CostReport::of(state, by),
        }
    }
}

/// `by=task, model, stage, attempt or call`: the groupings, as a hint.
pub fn groupings() -> String {
    let names = CostBy::ALL.map(CostBy::name);
    match names.split_last() {
        Some((last, rest)) => format!("by={} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

/// Reads a grouping's name (`task`, `model`, `stage`, `attempt`, `call`).
pub fn parse_by(s: &str) -> Result<CostBy, UnknownGrouping> {
    CostBy::ALL
        .into_iter()
        .find(|b| b.name() == s)
        .ok_or_else(|| UnknownGrouping { name: s.to_owned() })
}

/// A grouping of costs runlog does not have.
#[derive(Debug, thiserror::Error)]
#[error("{name:?} is not a grouping: {}", CostBy::ALL.map(CostBy::name).join(", "))]
pub struct UnknownGrouping {
    name: String,
}
