//! The supervisor's stage health, one row per stage.

use crate::ids::StageId;
use crate::state::{Circuit, RunState};
use serde::Serialize;

/// Health of one stage.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct StageHealthRow {
    /// The stage.
    pub stage: StageId,
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
    /// Whether a strategy was set for the stage at run time.
    pub strategy_overridden: bool,
}

/// Health of every stage that has run, sorted by stage name.
pub fn stage_health(state: &RunState) -> Vec<StageHealthRow> {
    let mut rows: Vec<StageHealthRow> = state
        .stages
        .iter()
        .map(|(stage, h)| StageHealthRow {
            stage: stage.clone(),
            executions: h.executions,
            completions: h.completions,
            failures: h.failures,
            total_duration_ms: h.total_duration_ms,
            consecutive_failures: h.consecutive_failures,
            circuit: h.circuit,
            strategy_overridden: h.strategy.is_some(),
        })
        .collect();
    rows.sort_by(|a, b| a.stage.cmp(&b.stage));
    rows
}
