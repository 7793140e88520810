//! A run's eval audit with its words and its summary (`audit --json`, `GET
//! /v1/runs/{run}/audit`).

use crate::render::WordedAudit;
use runlog_core::projections::{Projections, RunSummary};

/// Every eval decision with its words, the decisions taken outside the gate, and the run's
/// summary.
#[derive(Debug, serde::Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct AuditView {
    /// The run.
    pub run: String,
    /// Its decisions.
    pub audit: WordedAudit,
    /// What happened over the whole run.
    pub summary: RunSummary,
}

impl AuditView {
    /// The audit of `run`, projected as `p`.
    pub fn of(run: &str, p: Projections) -> Self {
        Self {
            run: run.to_owned(),
            audit: WordedAudit::of(p.audit),
            summary: p.summary,
        }
    }
}
