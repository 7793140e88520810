//! An experiment's figures from what each task did in each rerun: per variant against `base`,
//! the shares of tasks done, of tests passed and of the judge's passes with their intervals,
//! the mean score and its paired difference, tasks fixed and broken with a sign test, cost,
//! tokens, calls and time, and each task's spread across repeats. A pure function of the
//! observations: the same observations, the same report.

use super::stats::{bootstrap_mean, mean, sign_test, Share};
use super::BASE;
use crate::ids::{RunId, TaskId};
use serde::Serialize;
use std::collections::BTreeMap;

/// What one task did in one execution (the recording, or a rerun).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct Outcome {
    /// It ended done.
    pub done: bool,
    /// Whether its last tests passed (none when it has none or they did not run).
    pub tests: Option<bool>,
    /// Whether the gate passed its last score (none when it is not judged or was not).
    pub judged: Option<bool>,
    /// Its last score.
    pub score: Option<f64>,
    /// What its calls cost, answered live or from the recording (as the recording priced them).
    pub cost_usd: f64,
    /// The part of `cost_usd` answered from the recording, paid once in the recorded run.
    pub saved_usd: f64,
    /// Tokens its calls used (recorded answers count the recording's).
    pub tokens: u64,
    /// Calls its commands made.
    pub calls: u32,
    /// Of those, answered from the recording.
    pub recorded_calls: u32,
    /// From its first attempt's start to its end, in milliseconds.
    pub wall_ms: u64,
}

/// One execution of a suite run's task.
#[derive(Debug, Clone, PartialEq)]
pub struct Observed {
    /// The suite run.
    pub run: RunId,
    /// The task.
    pub task: TaskId,
    /// The variant (`base` for the recording and its live repeats).
    pub variant: String,
    /// The rerun, or none for the recording itself.
    pub rerun: Option<RunId>,
    /// What it did; none while its rerun has not ended.
    pub outcome: Option<Outcome>,
}

/// The report.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct Figures {
    /// Each variant, `base` first.
    pub variants: Vec<VariantFigures>,
    /// Each task of the suite, by run.
    pub tasks: Vec<TaskRow>,
}

/// One variant's figures.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct VariantFigures {
    /// The variant.
    pub name: String,
    /// Executions of a task that ended (repeats counted each).
    pub executions: u32,
    /// Executions not ended yet.
    pub unfinished: u32,
    /// The share of executions whose task was done.
    pub pass_rate: Share,
    /// Of the executions with tests, the share whose tests passed.
    pub tests_passed: Share,
    /// Of the judged executions, the share the gate passed.
    pub judge_passed: Share,
    /// The mean score of the scored executions.
    pub mean_score: Option<f64>,
    /// Against `base`, task by task: the mean of (this variant's mean score − base's).
    pub score_difference: Option<Difference>,
    /// Tasks base did not do and this variant did (by most of their executions).
    pub fixed: Vec<FlippedTask>,
    /// Tasks base did and this variant did not.
    pub broken: Vec<FlippedTask>,
    /// The exact sign test's p-value, fixed against broken.
    pub sign_test_p: f64,
    /// Cost, tokens, calls and time.
    pub totals: Totals,
    /// Tasks whose executions did not all end the same (with repeats: flaky, not changed).
    pub flaky: Vec<String>,
}

/// A paired difference with its seeded bootstrap interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct Difference {
    /// Tasks paired.
    pub pairs: u32,
    /// The mean difference.
    pub mean: f64,
    /// 95% interval, low end.
    pub low: f64,
    /// High end.
    pub high: f64,
}

/// A task whose outcome flipped.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct FlippedTask {
    /// The suite run.
    pub run: RunId,
    /// The task.
    pub task: TaskId,
    /// The rerun that shows it (the first of the variant's).
    pub rerun: Option<RunId>,
}

/// What a variant's executions used.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct Totals {
    /// USD in all, answered live or from the recording.
    pub cost_usd: f64,
    /// Per execution.
    pub cost_usd_mean: f64,
    /// USD of calls answered from the recording (not paid again).
    pub saved_usd: f64,
    /// USD of calls that went live.
    pub live_usd: f64,
    /// Tokens in all.
    pub tokens: u64,
    /// Per execution.
    pub tokens_mean: f64,
    /// Calls in all.
    pub calls: u32,
    /// Of those, answered from the recording.
    pub recorded_calls: u32,
    /// Milliseconds in all (tasks' own time, summed).
    pub wall_ms: u64,
    /// Per execution.
    pub wall_ms_mean: f64,
}

/// A task of the suite and what each variant made of it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct TaskRow {
    /// The suite run.
    pub run: RunId,
    /// The task.
    pub task: TaskId,
    /// One cell per variant, in the report's order.
    pub cells: Vec<Cell>,
}

/// One variant's executions of one task.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct Cell {
    /// The variant.
    pub variant: String,
    /// Executions ended done, of those ended.
    pub done: Share,
    /// The mean score of the scored ones.
    pub mean_score: Option<f64>,
    /// The scores' spread (highest − lowest) across repeats.
    pub score_spread: Option<f64>,
    /// The mean cost.
    pub cost_usd: f64,
    /// Whether most of its executions ended otherwise than base's: `fixed` or `broken`.
    pub flip: Option<String>,
    /// Each execution: its rerun (none for the recording) and its outcome, once ended.
    pub executions: Vec<Execution>,
}

/// One execution in a cell.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct Execution {
    /// The rerun, or none for the recording.
    pub rerun: Option<RunId>,
    /// What it did, once ended.
    pub outcome: Option<Outcome>,
}

/// The figures of `observed` for the variants `names` (`base` first), the bootstrap seeded
/// with `seed`.
pub fn figures(names: &[String], observed: &[Observed], seed: u64) -> Figures {
    // Suite tasks in order of first appearance, each variant's executions of each.
    let mut order: Vec<(RunId, TaskId)> = Vec::new();
    let mut by: BTreeMap<(RunId, TaskId), BTreeMap<&str, Vec<&Observed>>> = BTreeMap::new();
    for o in observed {
        let key = (o.run.clone(), o.task.clone());
        if !by.contains_key(&key) {
            order.push(key.clone());
        }
        by.entry(key)
            .or_default()
            .entry(o.variant.as_str())
            .or_default()
            .push(o);
    }
    let empty = BTreeMap::new();
    let rows: Vec<TaskRow> = order
        .iter()
        .map(|key| {
            let of = by.get(key).unwrap_or(&empty);
            let base = of.get(BASE).map(|v| majority(v)).unwrap_or(None);
            TaskRow {
                run: key.0.clone(),
                task: key.1.clone(),
                cells: names
                    .iter()
                    .map(|n| {
                        cell(
                            n,
                            of.get(n.as_str()).map(Vec::as_slice).unwrap_or(&[]),
                            base,
                        )
                    })
                    .collect(),
            }
        })
        .collect();
    let variants = names
        .iter()
        .enumerate()
        .map(|(i, name)| variant_figures(i, name, &rows, seed))
        .collect();
    Figures {
        variants,
        tasks: rows,
    }
}

/// Whether most of the ended executions were done (none when none ended).
fn majority(executions: &[&Observed]) -> Option<bool> {
    let ended: Vec<&Outcome> = executions
        .iter()
        .filter_map(|o| o.outcome.as_ref())
        .collect();
    if ended.is_empty() {
        return None;
    }
    let done = ended.iter().filter(|o| o.done).count();
    Some(2 * done > ended.len())
}

fn cell(variant: &str, executions: &[&Observed], base: Option<bool>) -> Cell {
    let ended: Vec<&Outcome> = executions
        .iter()
        .filter_map(|o| o.outcome.as_ref())
        .collect();
    let done = ended.iter().filter(|o| o.done).count();
    let scores: Vec<f64> = ended.iter().filter_map(|o| o.score).collect();
    let spread = scores
        .iter()
        .copied()
        .fold(None, |acc: Option<(f64, f64)>, s| {
            Some(acc.map_or((s, s), |(lo, hi)| (lo.min(s), hi.max(s))))
        })
        .map(|(lo, hi)| hi - lo);
    let costs: Vec<f64> = ended.iter().map(|o| o.cost_usd).collect();
    let flip = match (variant != BASE, base, majority(executions)) {
        (true, Some(false), Some(true)) => Some("fixed".to_owned()),
        (true, Some(true), Some(false)) => Some("broken".to_owned()),
        _ => None,
    };
    Cell {
        variant: variant.to_owned(),
        done: Share::of(count(done), count(ended.len())),
        mean_score: mean(&scores),
        score_spread: spread,
        cost_usd: mean(&costs).unwrap_or(0.0),
        flip,
        executions: executions
            .iter()
            .map(|o| Execution {
                rerun: o.rerun.clone(),
                outcome: o.outcome.clone(),
            })
            .collect(),
    }
}

fn count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

fn variant_figures(i: usize, name: &str, rows: &[TaskRow], seed: u64) -> VariantFigures {
    let cells: Vec<(&TaskRow, &Cell)> = rows
        .iter()
        .filter_map(|r| r.cells.get(i).map(|c| (r, c)))
        .collect();
    let outcomes: Vec<&Outcome> = cells
        .iter()
        .flat_map(|(_, c)| c.executions.iter().filter_map(|e| e.outcome.as_ref()))
        .collect();
    let unfinished = cells
        .iter()
        .flat_map(|(_, c)| &c.executions)
        .filter(|e| e.outcome.is_none())
        .count();
    let share = |of: &dyn Fn(&Outcome) -> Option<bool>| {
        let seen: Vec<bool> = outcomes.iter().filter_map(|o| of(o)).collect();
        Share::of(
            count(seen.iter().filter(|b| **b).count()),
            count(seen.len()),
        )
    };
    let flips = |word: &str| -> Vec<FlippedTask> {
        cells
            .iter()
            .filter(|(_, c)| c.flip.as_deref() == Some(word))
            .map(|(r, c)| FlippedTask {
                run: r.run.clone(),
                task: r.task.clone(),
                rerun: c.executions.iter().find_map(|e| e.rerun.clone()),
            })
            .collect()
    };
    let (fixed, broken) = (flips("fixed"), flips("broken"));
    let scores: Vec<f64> = outcomes.iter().filter_map(|o| o.score).collect();
    let diffs: Vec<f64> = cells
        .iter()
        .filter_map(|(r, c)| Some(c.mean_score? - r.cells.first()?.mean_score?))
        .collect();
    let score_difference = (i > 0)
        .then(|| {
            let (low, high) = bootstrap_mean(&diffs, seed)?;
            Some(Difference {
                pairs: count(diffs.len()),
                mean: mean(&diffs)?,
                low,
                high,
            })
        })
        .flatten();
    let flaky = cells
        .iter()
        .filter(|(_, c)| c.done.n > 1 && c.done.k > 0 && c.done.k < c.done.n)
        .map(|(r, _)| format!("{}/{}", r.run, r.task))
        .collect();
    VariantFigures {
        name: name.to_owned(),
        executions: count(outcomes.len()),
        unfinished: count(unfinished),
        pass_rate: share(&|o| Some(o.done)),
        tests_passed: share(&|o| o.tests),
        judge_passed: share(&|o| o.judged),
        mean_score: mean(&scores),
        score_difference,
        sign_test_p: sign_test(count(fixed.len()), count(broken.len())),
        fixed,
        broken,
        totals: totals(&outcomes),
        flaky,
    }
}

fn totals(outcomes: &[&Outcome]) -> Totals {
    let mut t = Totals::default();
    for o in outcomes {
        t.cost_usd += o.cost_usd;
        t.saved_usd += o.saved_usd;
        t.tokens = t.tokens.saturating_add(o.tokens);
        t.calls = t.calls.saturating_add(o.calls);
        t.recorded_calls = t.recorded_calls.saturating_add(o.recorded_calls);
        t.wall_ms = t.wall_ms.saturating_add(o.wall_ms);
    }
    t.live_usd = (t.cost_usd - t.saved_usd).max(0.0);
    let n = outcomes.len().max(1) as f64;
    t.cost_usd_mean = t.cost_usd / n;
    t.tokens_mean = t.tokens as f64 / n;
    t.wall_ms_mean = t.wall_ms as f64 / n;
    t
}
