//! Each stage's health (`stages --json`, `GET /v1/runs/{run}/stages`).

use runlog_core::projections::health::{stage_health, StageHealthRow};
use runlog_core::RunState;

/// One row per stage that has run, at a seq.
#[derive(Debug, serde::Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct StagesView {
    /// The run.
    pub run: String,
    /// The seq the rows stand at.
    pub seq: u64,
    /// The stages, by name.
    pub stages: Vec<StageHealthRow>,
}

impl StagesView {
    /// The stages of `run` in `state`.
    pub fn of(run: &str, state: &RunState) -> Self {
        Self {
            run: run.to_owned(),
            seq: state.seq,
            stages: stage_health(state),
        }
    }
}
