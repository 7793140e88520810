//! An experiment's report (`runlog experiment show`, `GET /v1/experiments/NAME`): what each
//! suite task did in the recording and in each rerun, made into the figures of
//! `runlog_core::experiment::report`. The list of experiments (`runlog experiments`) too.

use super::register;
use super::{plan, ExperimentError};
use runlog_core::experiment::report::{figures, Figures, Observed, Outcome};
use runlog_core::experiment::{Skipped, BASE};
use runlog_core::model_call::CallEnd;
use runlog_core::{EventKind, GateOutcome, RunId, RunState, RunStatus, TaskId};
use runlog_replay::{Replay, ReplayError};
use runlog_store::EventLog;
use serde::Serialize;
use std::collections::HashMap;

/// An experiment's report.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct ExperimentView {
    /// Its name.
    pub name: String,
    /// When it was defined (ms since the epoch).
    pub defined_ms: u64,
    /// The suite, each run as pinned and whether it is still in the store.
    pub suite: Vec<SuiteStatus>,
    /// The variants (`base` first: the recording).
    pub variants: Vec<VariantInfo>,
    /// Repeats.
    pub repeat: u32,
    /// Where the reruns' answers come from.
    pub answers: runlog_core::rerun::Answers,
    /// The budget for live calls, in USD.
    pub max_cost_usd: Option<f64>,
    /// How far it has gone.
    pub progress: Progress,
    /// Runs a variant was not applied to, with why.
    pub skipped: Vec<Skipped>,
    /// The figures.
    pub figures: Figures,
}

/// A suite run in the report.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct SuiteStatus {
    /// The run.
    pub run: String,
    /// Its head when pinned.
    pub head_seq: u64,
    /// Its chain hash then.
    pub head_hash: String,
    /// The tasks executed again (empty: all).
    pub tasks: Vec<String>,
    /// The run was forgotten (or removed) since: its base figures are missing.
    pub gone: bool,
}

/// A variant in the report.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct VariantInfo {
    /// Its name.
    pub name: String,
    /// Its file (none for `base`).
    pub file: Option<String>,
    /// Its model map, asked → answering.
    pub models: Vec<(String, String)>,
}

/// Reruns done of all.
#[derive(Debug, Clone, Copy, Default, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct Progress {
    /// Reruns planned (of the suite runs still in the store).
    pub total: u32,
    /// Ended.
    pub ended: u32,
    /// Started and not ended.
    pub started: u32,
    /// What the live calls cost, in USD.
    pub live_usd: f64,
    /// What the calls answered from the recording had cost, in USD.
    pub saved_usd: f64,
}

/// An experiment defined and under way (`POST /v1/experiments`).
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct ExperimentStarted {
    /// Its name: `GET /v1/experiments/NAME` follows it.
    pub experiment: String,
    /// The reruns planned.
    pub reruns: u32,
    /// Runs a variant was not applied to, with why.
    pub skipped: Vec<Skipped>,
    /// Always true: the server executes it.
    pub executing: bool,
}

/// One experiment in the list.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct ExperimentRow {
    /// Its name.
    pub name: String,
    /// When it was defined.
    pub defined_ms: u64,
    /// Suite runs.
    pub runs: u32,
    /// Its variants' names.
    pub variants: Vec<String>,
    /// How far it has gone.
    pub progress: Progress,
}

/// Every experiment, by name.
pub fn list(log: &dyn EventLog) -> Result<Vec<ExperimentRow>, ExperimentError> {
    register::names(log)?
        .into_iter()
        .map(|name| {
            let v = view(log, &name)?;
            Ok(ExperimentRow {
                name,
                defined_ms: v.defined_ms,
                runs: count(v.suite.len()),
                variants: v.variants.into_iter().skip(1).map(|v| v.name).collect(),
                progress: v.progress,
            })
        })
        .collect()
}

fn count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// Experiment `name`'s report.
pub fn view(log: &dyn EventLog, name: &str) -> Result<ExperimentView, ExperimentError> {
    let reg = register::read(log, name)?;
    let x = &reg.experiment;
    let replay = Replay::new(log);
    let mut observed = Vec::new();
    let mut suite = Vec::new();
    // The reruns of a suite run forgotten since (a fork goes with its run) are not counted.
    let mut progress = Progress::default();
    let planned = plan(x);
    for (index, s) in x.suite.iter().enumerate() {
        let run = s.run.as_str();
        let base = match replay.state_at_or_head(run, Some(s.head_seq)) {
            Ok(state) => Some(state),
            Err(ReplayError::UnknownRun { .. } | ReplayError::Forgotten { .. }) => None,
            Err(e) => return Err(e.into()),
        };
        suite.push(SuiteStatus {
            run: run.to_owned(),
            head_seq: s.head_seq,
            head_hash: s.head_hash.clone(),
            tasks: s.tasks.iter().map(ToString::to_string).collect(),
            gone: base.is_none(),
        });
        let Some(base) = base else { continue };
        let recorded = calls_of(log, run, s.head_seq)?;
        let tasks: Vec<TaskId> = if s.tasks.is_empty() {
            base.tasks_in_order()
                .filter(|t| t.spec.run.is_some())
                .map(|t| t.spec.id.clone())
                .collect()
        } else {
            s.tasks.clone()
        };
        let own = measured(log, run, s.head_seq, &recorded)?;
        for t in &tasks {
            observed.push(Observed {
                run: s.run.clone(),
                task: t.clone(),
                variant: BASE.to_owned(),
                rerun: None,
                outcome: Some(outcome(&base, t, own.get(t))),
            });
        }
        for p in planned.iter().filter(|p| p.index == index) {
            progress.total += 1;
            let ended = match log.head(&p.rerun)? {
                Some(head) => {
                    let state = replay.head_state(&p.rerun)?;
                    let used = measured(log, &p.rerun, head.seq, &recorded)?;
                    for m in used.values() {
                        progress.live_usd += m.cost_usd - m.saved_usd;
                        progress.saved_usd += m.saved_usd;
                    }
                    if matches!(state.status, RunStatus::Finished(_)) {
                        progress.ended += 1;
                        Some((state, used))
                    } else {
                        progress.started += 1;
                        None
                    }
                }
                None => None,
            };
            for t in &tasks {
                observed.push(Observed {
                    run: s.run.clone(),
                    task: t.clone(),
                    variant: p.variant.clone(),
                    rerun: Some(RunId::from(p.rerun.as_str())),
                    outcome: ended
                        .as_ref()
                        .map(|(state, used)| outcome(state, t, used.get(t))),
                });
            }
        }
    }
    let mut names = vec![BASE.to_owned()];
    names.extend(x.variants.iter().map(|v| v.name.clone()));
    let mut variants = vec![VariantInfo {
        name: BASE.into(),
        file: None,
        models: Vec::new(),
    }];
    variants.extend(x.variants.iter().map(|v| VariantInfo {
        name: v.name.clone(),
        file: Some(v.file.clone()),
        models: v.models.clone(),
    }));
    Ok(ExperimentView {
        name: x.name.clone(),
        defined_ms: reg.defined_at.0,
        suite,
        variants,
        repeat: x.repeat,
        answers: x.answers,
        max_cost_usd: x.max_cost_usd,
        progress,
        skipped: x.skipped.clone(),
        figures: figures(&names, &observed, x.seed),
    })
}

/// What rerun `p` of `x` spent: (USD live, USD its calls answered from the recording had cost),
/// read from it and its suite run alone, so an experiment's progress is kept up rerun by rerun.
pub fn spent_by(
    log: &dyn EventLog,
    x: &runlog_core::experiment::Experiment,
    p: &super::Planned,
) -> Result<(f64, f64), ExperimentError> {
    let (Some(s), Some(head)) = (x.suite.get(p.index), log.head(&p.rerun)?) else {
        return Ok((0.0, 0.0));
    };
    let recorded = calls_of(log, s.run.as_str(), s.head_seq)?;
    Ok(measured(log, &p.rerun, head.seq, &recorded)?
        .values()
        .fold((0.0, 0.0), |(live, saved), m| {
            (live + m.cost_usd - m.saved_usd, saved + m.saved_usd)
        }))
}

/// The recorded calls of `run` up to `head`, by seq: their cost and tokens.
fn calls_of(
    log: &dyn EventLog,
    run: &str,
    head: u64,
) -> Result<HashMap<u64, (f64, u64)>, ReplayError> {
    let mut calls = HashMap::new();
    runlog_replay::events::for_each(log, run, 1, head, &mut |seq, e| {
        if let EventKind::ModelCalled(call) = e.kind {
            calls.insert(seq, (call.cost_usd.unwrap_or(0.0), call.tokens.total()));
        }
        Ok(true)
    })?;
    Ok(calls)
}

/// What each task's calls used in `run`'s own events up to `head`, and how long it ran.
fn measured(
    log: &dyn EventLog,
    run: &str,
    head: u64,
    recorded: &HashMap<u64, (f64, u64)>,
) -> Result<HashMap<TaskId, Outcome>, ReplayError> {
    let mut by: HashMap<TaskId, Outcome> = HashMap::new();
    let mut span: HashMap<TaskId, (u64, u64)> = HashMap::new();
    runlog_replay::events::for_each(log, run, 1, head, &mut |_, e| {
        if let EventKind::TaskStarted { task, .. } = &e.kind {
            span.entry(task.clone()).or_insert((e.at.0, e.at.0));
        }
        if let Some(task) = e.kind.task() {
            if let Some(s) = span.get_mut(task) {
                s.1 = s.1.max(e.at.0);
            }
        }
        if let EventKind::ModelCalled(call) = e.kind {
            let m = by.entry(call.task.clone()).or_default();
            m.calls += 1;
            match call.end {
                CallEnd::Replayed { seq } => {
                    let (cost, tokens) = recorded.get(&seq).copied().unwrap_or_default();
                    m.recorded_calls += 1;
                    m.cost_usd += cost;
                    m.saved_usd += cost;
                    m.tokens = m.tokens.saturating_add(tokens);
                }
                _ => {
                    m.cost_usd += call.cost_usd.unwrap_or(0.0);
                    m.tokens = m.tokens.saturating_add(call.tokens.total());
                }
            }
        }
        Ok(true)
    })?;
    for (task, (from, to)) in span {
        by.entry(task).or_default().wall_ms = to.saturating_sub(from);
    }
    Ok(by)
}

/// What task `t` did, from the state it ended in and what its calls used.
fn outcome(state: &RunState, t: &TaskId, used: Option<&Outcome>) -> Outcome {
    let mut o = used.cloned().unwrap_or_default();
    if let Some(task) = state.task(t) {
        o.done = task.status == runlog_core::TaskStatus::Done;
        o.tests = if task.spec.is_tested() {
            task.last_tests_passed
        } else {
            None
        };
        o.judged = if task.spec.is_evaluated() {
            task.last_gate
                .as_ref()
                .map(|g| matches!(g, GateOutcome::Pass))
        } else {
            None
        };
        o.score = task.last_score;
    }
    o
}
