//! Every run in the store with its status, size and lineage (`runlog runs`, `GET /v1/runs`).

use runlog_replay::{Replay, Result};
use runlog_store::EventLog;
use serde::Serialize;

/// One run as `runs` lists it (and the API's `GET /v1/runs`).
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct Row {
    /// The run.
    pub run: String,
    /// Its status word, or `damaged`.
    pub status: String,
    /// How it finished, once it has.
    pub outcome: Option<runlog_core::RunOutcome>,
    /// Events recorded.
    pub events: u64,
    /// When it started.
    pub started_ms: Option<u64>,
    /// When its latest event happened (with `started_ms`, how long it has run).
    pub last_ms: Option<u64>,
    /// The run it was forked from.
    pub fork_of: Option<String>,
    /// The seq of that run it was forked at.
    pub fork_at: Option<u64>,
    /// The workflow file it was started from.
    pub workflow: Option<String>,
    /// For a sub-project's child run: `RUN/TASK` of its parent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sub_project_of: Option<String>,
}

/// Every run in the store; a run whose head cannot be read is listed as damaged.
pub fn rows(log: &dyn EventLog) -> Result<Vec<Row>> {
    let replay = Replay::new(log);
    let mut rows = Vec::new();
    let mut parents = std::collections::HashMap::new();
    for meta in log.runs()? {
        if runlog_replay::forgotten::is_register(&meta.run) {
            // A register is no run: `verify`, `forget` and `experiment` read them.
            continue;
        }
        if meta.head.is_none() {
            // No readable head: an empty run (skipped) or a damaged one (listed as such).
            let report = log.verify(&meta.run)?;
            if report.damage.is_some() {
                rows.push(Row {
                    run: meta.run,
                    status: "damaged".into(),
                    outcome: None,
                    events: report.verified,
                    started_ms: None,
                    last_ms: None,
                    fork_of: None,
                    fork_at: None,
                    workflow: None,
                    sub_project_of: None,
                });
            }
            continue;
        }
        let state = replay.head_state(&meta.run)?;
        let outcome = match &state.status {
            runlog_core::RunStatus::Finished(o) => Some(o.clone()),
            _ => None,
        };
        let status = state.status.name().to_owned();
        let mut last_ms = None;
        runlog_replay::events::for_each(log, &meta.run, state.seq, state.seq, &mut |_, e| {
            last_ms = Some(e.at.0);
            Ok(false)
        })?;
        let sub_project_of = state.parent.as_ref().map(|p| {
            // A rollback of the parent may have left this child behind. Each parent is
            // replayed once, however many children it has.
            let parent = parents
                .entry(p.run.0.clone())
                .or_insert_with(|| replay.head_state(p.run.as_str()).ok());
            let linked = parent.as_ref().is_some_and(|parent| {
                parent
                    .child_run_of(&p.task)
                    .is_some_and(|c| c.as_str() == meta.run)
            });
            let left = if linked { "" } else { " (no longer linked)" };
            format!("{}/{}{left}", p.run, p.task)
        });
        rows.push(Row {
            run: meta.run,
            status,
            outcome,
            events: state.seq,
            started_ms: state.run.as_ref().map(|r| r.started_at.0),
            last_ms,
            fork_of: state.fork.as_ref().map(|f| f.from_run.0.clone()),
            fork_at: state.fork.as_ref().map(|f| f.at_seq),
            workflow: state.run.as_ref().map(|r| r.workflow.clone()),
            sub_project_of,
        });
    }
    Ok(rows)
}

/// Which runs a listing keeps (`GET /v1/runs?status=…&outcome=…&workflow=…&limit=N`); every
/// one when nothing is asked.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Only {
    /// Its status word.
    pub status: Option<String>,
    /// How it finished: `succeeded`, `failed` or `paused`.
    pub outcome: Option<String>,
    /// The workflow file it was started from, as recorded.
    pub workflow: Option<String>,
    /// The newest this many (by when they started), in the listing's order.
    pub limit: Option<usize>,
}

impl Only {
    /// The rows kept, in their order.
    pub fn of(&self, rows: Vec<Row>) -> Vec<Row> {
        let mut kept: Vec<Row> = rows
            .into_iter()
            .filter(|r| self.status.as_ref().is_none_or(|s| *s == r.status))
            .filter(|r| {
                self.outcome
                    .as_ref()
                    .is_none_or(|o| r.outcome.as_ref().is_some_and(|x| x.name() == o))
            })
            .filter(|r| {
                self.workflow
                    .as_ref()
                    .is_none_or(|w| r.workflow.as_ref() == Some(w))
            })
            .collect();
        if let Some(n) = self.limit {
            let mut newest: Vec<(Option<u64>, usize)> = kept
                .iter()
                .enumerate()
                .map(|(i, r)| (r.started_ms, i))
                .collect();
            newest.sort_by(|a, b| b.cmp(a));
            let keep: std::collections::HashSet<usize> =
                newest.into_iter().take(n).map(|(_, i)| i).collect();
            kept = kept
                .into_iter()
                .enumerate()
                .filter(|(i, _)| keep.contains(i))
                .map(|(_, r)| r)
                .collect();
        }
        kept
    }
}
