//! Auditing the judges: every verdict of a run with what people and the run's later history
//! said of it (`Verdicts`, folded with the run), and across runs, how far each evaluator
//! agrees with them (`report`).
//!
//! A verdict is *labelled* by the first approve, reject or reopen a person made on its task
//! after it. It is *contradicted* by what happened next: a pass when its work was rolled back,
//! reopened or rejected, or a dependent's tests then failed; a fail (or rescue) when a person
//! approved the work, or a later attempt passed without touching the files judged.

mod agreement;
mod report;

pub use agreement::Agreement;
pub use report::{
    decision_word, Drift, EvaluatorReport, Filter, Flip, JudgesReport, Rate, Retest, VerdictRef,
    VersionSeen, Week, WhatIf,
};

use crate::event::{Event, EventKind, GateOutcome};
use crate::ids::{Hash, TaskId, Timestamp};
use crate::state::RunState;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One score an evaluator gave, and what became of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct Verdict {
    /// The run.
    pub run: String,
    /// The run's workflow, as recorded.
    pub workflow: String,
    /// Seq of its `eval-scored` event.
    pub seq: u64,
    /// When.
    pub at: Timestamp,
    /// The task.
    pub task: TaskId,
    /// The attempt judged.
    pub attempt: u32,
    /// The eval command.
    pub evaluator: String,
    /// The model it said it asked, or empty.
    pub model: String,
    /// The version it said it was, or empty.
    pub version: String,
    /// The score.
    pub score: f64,
    /// Per-dimension scores.
    pub dimensions: BTreeMap<String, f64>,
    /// The threshold in force.
    pub threshold: f64,
    /// The gate's decision (none: the run ended before it was recorded).
    pub decision: Option<GateOutcome>,
    /// The decision waited for a person (the review queue).
    pub held: bool,
    /// The first decision a person made on the task after it.
    pub label: Option<Label>,
    /// What happened to the work afterwards, in order.
    pub later: Vec<Later>,
    /// The change judged, by its hash (the recorded patch's; an attempt that changed nothing
    /// keeps the work before it): the same work judged again has the same one, in any run.
    pub work: Option<String>,
    /// The files of the change judged.
    pub files: Vec<String>,
    /// A later rollback undid it.
    pub rolled_back: bool,
    /// Its task's previous verdict was a rescue with a lower score, and the attempt between
    /// changed nothing but whitespace: that score.
    pub rose_unchanged_from: Option<f64>,
}

/// A person's decision on the work a verdict judged.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct Label {
    /// Who.
    pub by: String,
    /// `approved`, `rejected` or `reopened`.
    pub decision: String,
    /// The seq of the decision.
    pub seq: u64,
}

impl Label {
    /// The person would have passed the work.
    pub fn passes(&self) -> bool {
        self.decision == "approved"
    }
}

/// Something that happened to the judged work after the verdict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(tag = "what", rename_all = "kebab-case")]
pub enum Later {
    /// A rollback went back before the verdict.
    RolledBack {
        /// The seq of the rollback.
        seq: u64,
    },
    /// A person approved the work.
    Approved {
        /// Who.
        by: String,
        /// Seq.
        seq: u64,
    },
    /// A person rejected the work (reopened or not).
    Rejected {
        /// Who.
        by: String,
        /// Reopened for another try.
        reopen: bool,
        /// Seq.
        seq: u64,
    },
    /// A person reopened the task.
    Reopened {
        /// Who.
        by: String,
        /// Seq.
        seq: u64,
    },
    /// A task waiting on this one then failed its tests.
    DependentTestsFailed {
        /// The dependent.
        task: TaskId,
        /// Seq.
        seq: u64,
    },
    /// A later attempt passed the gate without touching the files judged.
    PassedUnchanged {
        /// Seq of that gate decision.
        seq: u64,
    },
}

impl Later {
    /// Whether this contradicts a verdict that passed (`passed`) or did not.
    pub fn contradicts(&self, passed: bool) -> bool {
        match self {
            Later::RolledBack { .. }
            | Later::Rejected { .. }
            | Later::Reopened { .. }
            | Later::DependentTestsFailed { .. } => passed,
            Later::Approved { .. } | Later::PassedUnchanged { .. } => !passed,
        }
    }

    /// The label a person's decision gives the verdict before it; none for what no person
    /// decided.
    pub fn label(&self) -> Option<Label> {
        let (by, decision, seq) = match self {
            Later::Approved { by, seq } => (by, "approved", seq),
            Later::Rejected { by, reopen, seq } => {
                (by, if *reopen { "reopened" } else { "rejected" }, seq)
            }
            Later::Reopened { by, seq } => (by, "reopened", seq),
            Later::RolledBack { .. }
            | Later::DependentTestsFailed { .. }
            | Later::PassedUnchanged { .. } => return None,
        };
        Some(Label {
            by: by.clone(),
            decision: decision.into(),
            seq: *seq,
        })
    }

    /// In words.
    pub fn describe(&self) -> String {
        match self {
            Later::RolledBack { seq } => format!("rolled back at seq {seq}"),
            Later::Approved { by, seq } => format!("approved by {by} at seq {seq}"),
            Later::Rejected { by, reopen, seq } => format!(
                "rejected{} by {by} at seq {seq}",
                if *reopen { " and reopened" } else { "" }
            ),
            Later::Reopened { by, seq } => format!("reopened by {by} at seq {seq}"),
            Later::DependentTestsFailed { task, seq } => {
                format!("{task}, which waited on it, failed its tests at seq {seq}")
            }
            Later::PassedUnchanged { seq } => {
                format!("a later attempt passed at seq {seq} without touching the files judged")
            }
        }
    }
}

impl Verdict {
    /// The gate passed it.
    pub fn passed(&self) -> bool {
        self.decision == Some(GateOutcome::Pass)
    }

    /// What happened afterwards that says the decision was wrong, first of all.
    pub fn contradiction(&self) -> Option<&Later> {
        let passed = self.passed();
        self.later.iter().find(|l| l.contradicts(passed))
    }

    /// What became of the work, in words: what contradicted the decision, else the person's
    /// decision, else that nothing did.
    pub fn afterwards(&self) -> String {
        match (self.contradiction(), &self.label, self.later.first()) {
            (Some(c), _, _) => c.describe(),
            (None, Some(l), _) => format!("{} by {} at seq {}", l.decision, l.by, l.seq),
            (None, None, Some(l)) => l.describe(),
            (None, None, None) => "no person looked; nothing contradicted it".into(),
        }
    }

    /// The score a weighting of its dimensions gives (its own score where it has none of
    /// them).
    pub fn weighted(&self, weights: &BTreeMap<String, f64>) -> f64 {
        // Weights are relative: taken over the largest, so that huge ones cannot overflow
        // (1e308 and 1e308 weigh as 1 and 1).
        let top = weights
            .values()
            .copied()
            .filter(|w| w.is_finite())
            .fold(0.0, f64::max);
        if top <= 0.0 {
            return self.score;
        }
        let (sum, total) = weights
            .iter()
            .filter(|(_, w)| w.is_finite())
            .filter_map(|(d, w)| self.dimensions.get(d).map(|v| (v * (w / top), w / top)))
            .fold((0.0, 0.0), |(s, t), (v, w)| (s + v, t + w));
        if total > 0.0 {
            sum / total
        } else {
            self.score
        }
    }
}

/// The change a task's attempt made, as the verdict on it sees it.
#[derive(Debug, Clone, Default)]
struct Change {
    attempt: u32,
    work: Option<String>,
    files: Vec<String>,
    blank: bool,
}

/// A run's verdicts, folded with its events (rolled-back history included: a verdict a
/// rollback undid was still given).
#[derive(Debug, Clone, Default)]
pub struct Verdicts {
    /// Every verdict, in order.
    pub verdicts: Vec<Verdict>,
    run: String,
    workflow: String,
    judge: BTreeMap<TaskId, (String, String)>,
    changes: BTreeMap<TaskId, Change>,
    /// Each task's verdicts that did not pass since it last passed, and whether a change since
    /// touched the files they judged.
    unsettled: BTreeMap<TaskId, Vec<(usize, bool)>>,
}

impl Verdicts {
    /// Folds one event; `after` is the run's state once it is applied.
    pub fn observe(&mut self, seq: u64, event: &Event, after: &RunState) {
        match &event.kind {
            EventKind::RunStarted { run, workflow, .. } => {
                self.run = run.to_string();
                self.workflow = workflow.clone();
            }
            EventKind::Forked { run, .. } => {
                self.run = run.to_string();
                if let Some(info) = &after.run {
                    self.workflow = info.workflow.clone();
                }
            }
            EventKind::EvaluatorNamed {
                task,
                model,
                version,
            } => {
                self.judge
                    .insert(task.clone(), (model.clone(), version.clone()));
            }
            EventKind::ChangesRecorded {
                task,
                attempt,
                commit,
                parent,
                files,
                insertions,
                deletions,
                patch,
                blob,
                ..
            } => self.changed(
                task,
                *attempt,
                commit == parent || *insertions + *deletions == 0,
                {
                    let kept = blob.map_or_else(|| Hash::of(patch.as_bytes()), |h| h);
                    (kept, parent, files, patch, blob.is_some())
                },
            ),
            EventKind::EvalScored {
                task,
                evaluator,
                score,
                dimensions,
                ..
            } => self.scored(seq, event.at, task, evaluator, *score, dimensions, after),
            EventKind::GateDecided {
                task,
                threshold,
                outcome,
                ..
            } => self.decided(seq, task, *threshold, *outcome, false),
            EventKind::ReviewHeld {
                task,
                threshold,
                outcome,
                ..
            } => self.decided(seq, task, *threshold, *outcome, true),
            EventKind::TaskApproved { task, by } => self.person(
                task,
                Later::Approved {
                    by: by.clone(),
                    seq,
                },
            ),
            EventKind::TaskRejected {
                task, by, reopen, ..
            } => self.person(
                task,
                Later::Rejected {
                    by: by.clone(),
                    reopen: *reopen,
                    seq,
                },
            ),
            EventKind::TaskReopened { task, by } => self.person(
                task,
                Later::Reopened {
                    by: by.clone(),
                    seq,
                },
            ),
            EventKind::TestsFailed { task, .. } => {
                let waited_on = after
                    .tasks
                    .get(task)
                    .map(|t| t.spec.after.clone())
                    .unwrap_or_default();
                for dep in &waited_on {
                    if let Some(v) = self.latest_mut(dep).filter(|v| v.passed()) {
                        let told = v.later.iter().any(|l| {
                            matches!(l, Later::DependentTestsFailed { task: d, .. } if d == task)
                        });
                        if !told {
                            v.later.push(Later::DependentTestsFailed {
                                task: task.clone(),
                                seq,
                            });
                        }
                    }
                }
            }
            EventKind::RolledBack { to_seq, .. } => {
                for v in self
                    .verdicts
                    .iter_mut()
                    .filter(|v| v.seq > *to_seq && !v.rolled_back)
                {
                    v.rolled_back = true;
                    v.later.push(Later::RolledBack { seq });
                }
            }
            _ => {}
        }
    }

    fn changed(
        &mut self,
        task: &TaskId,
        attempt: u32,
        empty: bool,
        (kept, parent, files, patch, cut): (Hash, &str, &[String], &str, bool),
    ) {
        let before = self.changes.get(task).and_then(|c| c.work.clone());
        let work = match (empty, before) {
            // Nothing changed: the work judged next is the work judged before.
            (true, Some(w)) => Some(w),
            (true, None) => Some(Hash::of(format!("unchanged {parent}").as_bytes()).to_hex()),
            (false, _) => Some(kept.to_hex()),
        };
        let blank = empty || (!cut && only_whitespace(patch));
        if !empty {
            for (i, touched) in self.unsettled.get_mut(task).into_iter().flatten() {
                let judged = &self
                    .verdicts
                    .get(*i)
                    .map(|v| v.files.clone())
                    .unwrap_or_default();
                if files.iter().any(|f| judged.contains(f)) {
                    *touched = true;
                }
            }
        }
        self.changes.insert(
            task.clone(),
            Change {
                attempt,
                work,
                files: files.to_vec(),
                blank,
            },
        );
    }

    #[allow(clippy::too_many_arguments)]
    fn scored(
        &mut self,
        seq: u64,
        at: Timestamp,
        task: &TaskId,
        evaluator: &str,
        score: f64,
        dimensions: &BTreeMap<String, f64>,
        after: &RunState,
    ) {
        let attempt = after.tasks.get(task).map_or(0, |t| t.attempt);
        let change = self.changes.get(task).cloned().unwrap_or_default();
        let rose_unchanged_from = self
            .latest_mut(task)
            .filter(|v| matches!(v.decision, Some(GateOutcome::Rescue { .. })))
            .map(|v| v.score)
            .filter(|before| change.attempt == attempt && change.blank && score > *before);
        let (model, version) = self.judge.remove(task).unwrap_or_default();
        self.verdicts.push(Verdict {
            run: self.run.clone(),
            workflow: self.workflow.clone(),
            seq,
            at,
            task: task.clone(),
            attempt,
            evaluator: evaluator.to_owned(),
            model,
            version,
            score,
            dimensions: dimensions.clone(),
            threshold: after.settings.eval_threshold,
            decision: None,
            held: false,
            label: None,
            later: Vec::new(),
            work: change.work,
            files: change.files,
            rolled_back: false,
            rose_unchanged_from,
        });
    }

    fn decided(
        &mut self,
        seq: u64,
        task: &TaskId,
        threshold: f64,
        outcome: GateOutcome,
        held: bool,
    ) {
        let Some(index) = self.latest_index(task) else {
            return;
        };
        if let Some(v) = self.verdicts.get_mut(index) {
            v.threshold = threshold;
            v.decision = Some(outcome);
            v.held = held;
        }
        // A held pass has not passed yet: its person decides.
        if outcome == GateOutcome::Pass && !held {
            self.passed(task, seq);
        } else if outcome != GateOutcome::Pass {
            self.unsettled
                .entry(task.clone())
                .or_default()
                .push((index, false));
        }
    }

    /// The task passed at `seq`: its verdicts that did not, with the files they judged left
    /// as they were, were contradicted.
    fn passed(&mut self, task: &TaskId, seq: u64) {
        for (i, touched) in self.unsettled.remove(task).unwrap_or_default() {
            if let Some(v) = self.verdicts.get_mut(i) {
                if !touched && !v.files.is_empty() && !v.rolled_back {
                    v.later.push(Later::PassedUnchanged { seq });
                }
            }
        }
    }

    /// A person's decision on the task: the label of its latest verdict if it has none yet.
    fn person(&mut self, task: &TaskId, later: Later) {
        let label = later.label();
        if let Some(v) = self.latest_mut(task) {
            if v.label.is_none() {
                v.label = label.clone();
            }
            v.later.push(later);
        }
        if let Some(l) = label.filter(Label::passes) {
            self.passed(task, l.seq);
        }
    }

    fn latest_index(&self, task: &TaskId) -> Option<usize> {
        self.verdicts
            .iter()
            .rposition(|v| &v.task == task && !v.rolled_back)
    }

    fn latest_mut(&mut self, task: &TaskId) -> Option<&mut Verdict> {
        let i = self.latest_index(task)?;
        self.verdicts.get_mut(i)
    }
}

/// A patch whose added lines are its removed lines once whitespace is taken out.
fn only_whitespace(patch: &str) -> bool {
    let squeeze = |l: &str| l.chars().filter(|c| !c.is_whitespace()).collect::<String>();
    let mut added = Vec::new();
    let mut removed = Vec::new();
    for line in patch.lines() {
        if line.starts_with("+++") || line.starts_with("---") {
            continue;
        }
        if let Some(l) = line.strip_prefix('+') {
            added.push(squeeze(l));
        } else if let Some(l) = line.strip_prefix('-') {
            removed.push(squeeze(l));
        }
    }
    added.retain(|l| !l.is_empty());
    removed.retain(|l| !l.is_empty());
    added.sort();
    removed.sort();
    added == removed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_patch_of_whitespace_is_blank_and_one_of_words_is_not() {
        let ws = "--- a/x.py\n+++ b/x.py\n@@ -1,2 +1,2 @@\n-def f(a,b):\n+def f(a, b):\n+\n";
        assert!(only_whitespace(ws));
        let words = "--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-return 1\n+return 2\n";
        assert!(!only_whitespace(words));
    }
}
