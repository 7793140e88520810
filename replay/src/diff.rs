//! Differences between two states of runs (two runs, or two seqs of one), by stable task id.

use runlog_core::projections::SupervisorStack;
use runlog_core::{RunState, TaskStatus, Value};
use serde::Serialize;
use std::collections::BTreeMap;

/// One side of a diff: a state and the supervisor stack beside it.
#[derive(Debug, Clone, Copy)]
pub struct Side<'a> {
    /// The state.
    pub state: &'a RunState,
    /// Its supervisor stack (for stage results).
    pub stack: &'a SupervisorStack,
}

/// How one task differs.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct TaskDiff {
    /// The task.
    pub task: String,
    /// Present only on the right (added, e.g. by a replan), only on the left, or both.
    pub presence: Presence,
    /// Status left → right, when it changed.
    pub status: Option<(Option<TaskStatus>, Option<TaskStatus>)>,
    /// Attempts left → right, when they changed.
    pub attempts: Option<(u32, u32)>,
    /// Rescues left → right, when they changed.
    pub rescues: Option<(u32, u32)>,
    /// Test failures left → right, when they changed.
    pub test_failures: Option<(u32, u32)>,
    /// Eval score left → right, when it changed.
    pub score: Option<(Option<f64>, Option<f64>)>,
    /// Per-dimension score deltas (right − left; a side without it counts as absent).
    pub dimensions: BTreeMap<String, DimensionDelta>,
    /// Tasks replacing it on the right that did not on the left.
    pub replaced_by: Vec<String>,
}

/// A dimension on both sides.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct DimensionDelta {
    /// Left value.
    pub left: Option<f64>,
    /// Right value.
    pub right: Option<f64>,
    /// Right − left, when both exist.
    pub delta: Option<f64>,
}

/// Which sides a task is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub enum Presence {
    /// Both.
    Both,
    /// Only the left.
    LeftOnly,
    /// Only the right.
    RightOnly,
}

/// A stage whose latest result differs.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct StageDiff {
    /// The stage.
    pub stage: String,
    /// Left result.
    pub left: Option<Value>,
    /// Right result.
    pub right: Option<Value>,
}

/// Everything that differs.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct Diff {
    /// Tasks that differ, in plan order (left's order, then right-only tasks).
    pub tasks: Vec<TaskDiff>,
    /// Stage results that differ.
    pub stages: Vec<StageDiff>,
}

impl Diff {
    /// No difference.
    pub fn is_empty(&self) -> bool {
        self.tasks.is_empty() && self.stages.is_empty()
    }
}

fn changed<T: PartialEq + Copy>(a: T, b: T) -> Option<(T, T)> {
    (a != b).then_some((a, b))
}

fn round(x: f64) -> f64 {
    (x * 1e6).round() / 1e6
}

/// Compares two sides.
pub fn diff(left: Side<'_>, right: Side<'_>) -> Diff {
    let mut order: Vec<&runlog_core::TaskId> = left.state.order.iter().collect();
    order.extend(
        right
            .state
            .order
            .iter()
            .filter(|id| !left.state.tasks.contains_key(*id)),
    );
    let mut tasks = Vec::new();
    for id in order {
        let (l, r) = (left.state.task(id), right.state.task(id));
        let presence = match (l, r) {
            (Some(_), Some(_)) => Presence::Both,
            (Some(_), None) => Presence::LeftOnly,
            _ => Presence::RightOnly,
        };
        let num = |f: fn(&runlog_core::TaskState) -> u32| (l.map_or(0, f), r.map_or(0, f));
        let (la, ra) = num(|t| t.attempt);
        let (lr, rr) = num(|t| t.rescues);
        let (lt, rt) = num(|t| t.test_failures);
        let mut dimensions = BTreeMap::new();
        let empty = BTreeMap::new();
        let (ld, rd) = (
            l.map_or(&empty, |t| &t.last_dimensions),
            r.map_or(&empty, |t| &t.last_dimensions),
        );
        for name in ld.keys().chain(rd.keys()) {
            let (a, b) = (ld.get(name).copied(), rd.get(name).copied());
            if a != b {
                let delta = a.zip(b).map(|(a, b)| round(b - a));
                dimensions.insert(
                    name.clone(),
                    DimensionDelta {
                        left: a,
                        right: b,
                        delta,
                    },
                );
            }
        }
        let replaced_by = r
            .map(|t| {
                t.replaced_by
                    .iter()
                    .filter(|n| l.is_none_or(|l| !l.replaced_by.contains(n)))
                    .map(|n| n.0.clone())
                    .collect()
            })
            .unwrap_or_default();
        let d = TaskDiff {
            task: id.0.clone(),
            presence,
            status: changed(left.state.status_of(id), right.state.status_of(id)),
            attempts: changed(la, ra),
            rescues: changed(lr, rr),
            test_failures: changed(lt, rt),
            score: changed(l.and_then(|t| t.last_score), r.and_then(|t| t.last_score)),
            dimensions,
            replaced_by,
        };
        let same = presence == Presence::Both
            && d.status.is_none()
            && d.attempts.is_none()
            && d.rescues.is_none()
            && d.test_failures.is_none()
            && d.score.is_none()
            && d.dimensions.is_empty()
            && d.replaced_by.is_empty();
        if !same {
            tasks.push(d);
        }
    }
    let (ls, rs) = (
        left.stack.all_latest_results(),
        right.stack.all_latest_results(),
    );
    let mut stages = Vec::new();
    let names: std::collections::BTreeSet<_> = ls.keys().chain(rs.keys()).collect();
    for stage in names {
        let (a, b) = (ls.get(*stage).copied(), rs.get(*stage).copied());
        if a != b {
            stages.push(StageDiff {
                stage: stage.0.clone(),
                left: a.cloned(),
                right: b.cloned(),
            });
        }
    }
    Diff { tasks, stages }
}
