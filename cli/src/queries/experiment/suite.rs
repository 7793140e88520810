//! Choosing an experiment's suite: runs by id, by date, by workflow, by outcome, or listed in a
//! suite file (`[[run]] id = "R" tasks = ["T"]`). Each is pinned at its head.

use super::ExperimentError;
use runlog_core::experiment::SuiteRun;
use runlog_core::{RunId, TaskId, Timestamp};
use runlog_replay::Replay;
use runlog_store::EventLog;
use serde::Deserialize;
use std::path::PathBuf;

/// How the suite is chosen.
#[derive(Debug, Clone, Default)]
pub struct Choice {
    /// Runs by id.
    pub runs: Vec<String>,
    /// Runs started on or after this date.
    pub since: Option<Timestamp>,
    /// Runs of this workflow (its name, or its file as recorded).
    pub workflow: Option<String>,
    /// Runs that ended so (`succeeded`, `failed`...).
    pub outcome: Option<String>,
    /// A suite file.
    pub file: Option<PathBuf>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SuiteFile {
    #[serde(default)]
    run: Vec<Entry>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    id: String,
    #[serde(default)]
    tasks: Vec<String>,
}

/// The suite `choice` names, each run pinned at its head; a run named that cannot be executed
/// again (unknown, not ended) is refused by name.
pub fn choose(log: &dyn EventLog, choice: &Choice) -> Result<Vec<SuiteRun>, ExperimentError> {
    let mut named: Vec<(String, Vec<String>)> = choice
        .runs
        .iter()
        .map(|r| (r.clone(), Vec::new()))
        .collect();
    if let Some(path) = &choice.file {
        let text = std::fs::read_to_string(path).map_err(|e| ExperimentError::Suite {
            why: format!("cannot read {}: {e}", path.display()),
        })?;
        let file: SuiteFile = toml::from_str(&text).map_err(|e| ExperimentError::Suite {
            why: format!("{}: {}", path.display(), e.message()),
        })?;
        named.extend(file.run.into_iter().map(|e| (e.id, e.tasks)));
    }
    let filtered = choice.since.is_some() || choice.workflow.is_some() || choice.outcome.is_some();
    if filtered {
        for row in crate::queries::runs::rows(log)? {
            let Some(outcome) = &row.outcome else {
                continue;
            };
            let is_rerun = runlog_replay::control::rerun_of(log, &row.run)?.is_some();
            let since = choice
                .since
                .is_none_or(|d| row.started_ms.is_some_and(|s| s >= d.0));
            let workflow = choice.workflow.as_deref().is_none_or(|w| {
                row.workflow.as_deref().is_some_and(|f| {
                    f == w || std::path::Path::new(f).file_stem().is_some_and(|s| s == w)
                }) || workflow_name(log, &row.run).is_some_and(|n| n == w)
            });
            let ended = choice
                .outcome
                .as_deref()
                .is_none_or(|o| outcome.name() == o);
            if !is_rerun && since && workflow && ended && !named.iter().any(|(r, _)| *r == row.run)
            {
                named.push((row.run, Vec::new()));
            }
        }
    }
    if named.is_empty() {
        return Err(ExperimentError::Suite {
            why: if filtered || choice.file.is_some() {
                "no recorded run that has ended matches".into()
            } else {
                "no run was named: give --runs, --since, --workflow, --outcome or --suite".into()
            },
        });
    }
    let replay = Replay::new(log);
    named
        .into_iter()
        .map(|(run, tasks)| pin(log, &replay, &run, tasks))
        .collect()
}

fn pin(
    log: &dyn EventLog,
    replay: &Replay<'_>,
    run: &str,
    tasks: Vec<String>,
) -> Result<SuiteRun, ExperimentError> {
    let state = replay.head_state(run)?;
    if !matches!(state.status, runlog_core::RunStatus::Finished(_)) {
        return Err(ExperimentError::Suite {
            why: format!(
                "run {run} has not ended ({}): only ended runs are executed again",
                state.status.name()
            ),
        });
    }
    for t in &tasks {
        if state.task(&TaskId::from(t.as_str())).is_none() {
            return Err(ExperimentError::Suite {
                why: format!("run {run} has no task {t}"),
            });
        }
    }
    let head = log.head(run)?.ok_or_else(|| ExperimentError::Suite {
        why: format!("run {run} has no head"),
    })?;
    Ok(SuiteRun {
        run: RunId::from(run),
        head_seq: head.seq,
        head_hash: runlog_core::Hash(head.hash).to_hex(),
        tasks: tasks.into_iter().map(TaskId::from).collect(),
    })
}

/// The workflow's own name, as its run recorded it.
fn workflow_name(log: &dyn EventLog, run: &str) -> Option<String> {
    runlog_replay::events::read(log, run, 1, 1)
        .ok()?
        .into_iter()
        .find_map(|(_, e)| match e.kind {
            runlog_core::EventKind::RunStarted { workflow, .. } => Some(workflow),
            _ => None,
        })
}
