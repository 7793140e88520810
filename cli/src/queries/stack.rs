//! The supervisor state stack as `runlog stack --json` and `GET /v1/runs/{run}/stack` show it.

use runlog_core::projections::stack::StackEntry;
use runlog_core::StageId;
use std::collections::BTreeMap;

/// The stack, newest first, and the latest result per stage.
#[derive(Debug, serde::Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct StackView<'a> {
    /// The run.
    pub run: &'a str,
    /// The seq it stands at.
    pub seq: u64,
    /// Its entries, newest first.
    pub stack: Vec<StackEntry>,
    /// Each stage's latest result.
    #[cfg_attr(feature = "ts", ts(type = "Record<string, unknown>"))]
    pub latest_results: BTreeMap<&'a StageId, &'a runlog_core::Value>,
}

impl<'a> StackView<'a> {
    /// The stack of `run`, projected as `p`.
    pub fn of(run: &'a str, p: &'a runlog_core::projections::Projections) -> Self {
        Self {
            run,
            seq: p.state.seq,
            stack: p.stack.newest_first().collect(),
            latest_results: p.stack.all_latest_results(),
        }
    }
}
