//! The eval audit: every score with its dimensions, the threshold in force, the decision and
//! its consequence, flagged where a person should look twice.

use crate::event::{Event, EventKind, GateOutcome};
use crate::ids::{TaskId, Timestamp};
use crate::state::RunState;
use crate::usage::{Spend, UsageStage};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// Who recorded a decision, as its `attributed` event says (any log's words, so a string).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct Recorder {
    /// The name: a token's, a user's, an agent's.
    pub name: String,
    /// How the recording process knew them (`token`, `os-user`...).
    pub via: String,
}

/// Scores this close to the threshold are flagged.
pub const NEAR_THRESHOLD: f64 = 0.05;

/// What a gate decision led to.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(tag = "consequence", rename_all = "kebab-case")]
pub enum Consequence {
    /// The task was done; these dependents became ready at that seq.
    Done {
        /// Dependents that became ready.
        ready: Vec<TaskId>,
        /// The seq of the decision.
        at_seq: u64,
        /// In a git workspace: the seq of the merge into the integration branch, where the
        /// dependents in `ready` became ready.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "ts", ts(optional))]
        merged_at: Option<u64>,
    },
    /// The task was sent back to its agent.
    Rescue {
        /// Rescue number.
        n: u32,
    },
    /// The task failed.
    Failed,
    /// The gate passed the work, and its merge into the integration branch then conflicted:
    /// it did not count as done.
    MergeConflicted {
        /// The files in conflict.
        files: Vec<String>,
        /// The rescue the task was sent back for; none: it waits for a person.
        rescue: Option<u32>,
        /// The seq of the conflict.
        at_seq: u64,
    },
    /// The gate's decision was held for a person's review, who has not decided yet.
    Held,
    /// A person decided a held verdict.
    Reviewed {
        /// Who.
        by: String,
        /// Approved (done), else rejected.
        approved: bool,
        /// Rejected and reopened for another try.
        reopen: bool,
        /// The seq of the decision.
        at_seq: u64,
    },
}

/// Why an audit entry deserves a second look.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(tag = "flag", rename_all = "kebab-case")]
pub enum AuditFlag {
    /// Within 0.05 of the threshold, either side.
    NearThreshold {
        /// Score minus threshold.
        margin: f64,
    },
    /// Dimensions the same evaluator reported before are missing (or none were given).
    MissingDimensions {
        /// The missing names; empty when the evaluator gave no dimensions at all.
        missing: Vec<String>,
    },
    /// A person approved the task after this failing score.
    ApprovedOverFailingScore {
        /// Who.
        by: String,
        /// The seq of the approval.
        seq: u64,
    },
}

/// One eval decision.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct AuditEntry {
    /// Seq of the `EvalScored` event.
    pub seq: u64,
    /// When.
    pub at: Timestamp,
    /// The task.
    pub task: TaskId,
    /// The attempt that was scored.
    pub attempt: u32,
    /// Rescues the task had before this score.
    pub rescues_before: u32,
    /// Evaluator.
    pub evaluator: String,
    /// Score.
    pub score: f64,
    /// Per-dimension scores.
    pub dimensions: BTreeMap<String, f64>,
    /// Notes.
    pub notes: String,
    /// Threshold in force.
    pub threshold: Option<f64>,
    /// The decision.
    pub decision: Option<GateOutcome>,
    /// What it led to.
    pub consequence: Option<Consequence>,
    /// Flags.
    pub flags: Vec<AuditFlag>,
    /// A later rollback went back before this decision (it stays in the audit).
    pub rolled_back: bool,
    /// In a git workspace: what the scored attempt had changed, as recorded before the score.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub judged: Option<Judged>,
    /// What the evaluator reported it used for this score, when it reported usage.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub cost: Option<Spend>,
}

/// The changes an evaluator judged: the commit and its counts (`runlog show RUN TASK --diff
/// --attempt N` prints the patch).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct Judged {
    /// The attempt whose changes they are.
    pub attempt: u32,
    /// The commit.
    pub commit: String,
    /// The files changed.
    pub files: Vec<String>,
    /// Lines added.
    pub insertions: u64,
    /// Lines removed.
    pub deletions: u64,
}

/// A decision a person or an evaluator error made outside the gate, or secrets kept out of
/// the record.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum OutOfGate {
    /// Approved by hand.
    Approved {
        /// Seq.
        seq: u64,
        /// Task.
        task: TaskId,
        /// Who, as claimed.
        by: String,
        /// Dependents that became ready.
        ready: Vec<TaskId>,
        /// Who, as the recording process established it (logs before it was recorded: none).
        #[serde(skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "ts", ts(optional))]
        principal: Option<Recorder>,
        /// The claim names someone else than the principal.
        #[serde(skip_serializing_if = "is_false")]
        #[cfg_attr(feature = "ts", ts(optional = nullable))]
        claim_differs: bool,
    },
    /// Rejected by hand.
    Rejected {
        /// Seq.
        seq: u64,
        /// Task.
        task: TaskId,
        /// Who, as claimed.
        by: String,
        /// Reopened instead of failed.
        reopen: bool,
        /// Why.
        reason: String,
        /// Who, as the recording process established it (logs before it was recorded: none).
        #[serde(skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "ts", ts(optional))]
        principal: Option<Recorder>,
        /// The claim names someone else than the principal.
        #[serde(skip_serializing_if = "is_false")]
        #[cfg_attr(feature = "ts", ts(optional = nullable))]
        claim_differs: bool,
    },
    /// The evaluator could not score.
    EvalError {
        /// Seq.
        seq: u64,
        /// Task.
        task: TaskId,
        /// Evaluator.
        evaluator: String,
        /// What was wrong.
        error: String,
    },
    /// Secrets replaced with `[redacted:NAME]` before a record was kept.
    SecretsRedacted {
        /// Seq.
        seq: u64,
        /// The task whose record held them, if any.
        task: Option<TaskId>,
        /// By name, how many.
        redactions: Vec<crate::redact::Redaction>,
    },
}

/// The audit of a run.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct EvalAudit {
    /// Every eval, in order.
    pub entries: Vec<AuditEntry>,
    /// Manual decisions and evaluator errors, in order.
    pub out_of_gate: Vec<OutOfGate>,
    #[serde(skip)]
    seen_dimensions: BTreeMap<String, BTreeSet<String>>,
    /// The last `Attributed` event: it names who issued the event right after it.
    #[serde(skip)]
    attributed: Option<(u64, Recorder)>,
    /// Each task's last recorded changes.
    #[serde(skip)]
    changes: BTreeMap<TaskId, Judged>,
    /// Evaluator usage recorded since each task's last score (it comes right before it).
    #[serde(skip)]
    eval_usage: BTreeMap<TaskId, Spend>,
}

#[allow(clippy::trivially_copy_pass_by_ref)]
fn is_false(b: &bool) -> bool {
    !b
}

impl EvalAudit {
    /// Folds one event; `after` is the run's state once it is applied.
    pub fn observe(&mut self, seq: u64, event: &Event, after: &RunState) {
        match &event.kind {
            EventKind::EvalScored {
                task,
                evaluator,
                score,
                dimensions,
                notes,
            } => {
                let seen = self.seen_dimensions.entry(evaluator.clone()).or_default();
                let missing: Vec<String> = seen
                    .iter()
                    .filter(|d| !dimensions.contains_key(*d))
                    .cloned()
                    .collect();
                let mut flags = Vec::new();
                if dimensions.is_empty() || !missing.is_empty() {
                    flags.push(AuditFlag::MissingDimensions { missing });
                }
                seen.extend(dimensions.keys().cloned());
                let t = after.tasks.get(task);
                self.entries.push(AuditEntry {
                    seq,
                    at: event.at,
                    task: task.clone(),
                    attempt: t.map_or(0, |t| t.attempt),
                    rescues_before: t.map_or(0, |t| t.rescues),
                    evaluator: evaluator.clone(),
                    score: *score,
                    dimensions: dimensions.clone(),
                    notes: notes.clone(),
                    threshold: None,
                    decision: None,
                    consequence: None,
                    flags,
                    rolled_back: false,
                    judged: self.changes.get(task).cloned(),
                    cost: self.eval_usage.remove(task),
                });
            }
            EventKind::UsageRecorded { usage } if usage.stage == UsageStage::Evaluator => {
                self.eval_usage
                    .entry(usage.task.clone())
                    .or_default()
                    .add(&usage.tokens, usage.cost_usd);
            }
            EventKind::ModelCalled(call) if call.stage == UsageStage::Evaluator => {
                self.eval_usage
                    .entry(call.task.clone())
                    .or_default()
                    .add(&call.tokens, call.cost_usd);
            }
            EventKind::EvalErrored { task, .. } => {
                self.eval_usage.remove(task);
                self.observe_stream(seq, event);
            }
            EventKind::ChangesRecorded {
                task,
                attempt,
                commit,
                files,
                insertions,
                deletions,
                ..
            } => {
                self.changes.insert(
                    task.clone(),
                    Judged {
                        attempt: *attempt,
                        commit: commit.clone(),
                        files: files.clone(),
                        insertions: *insertions,
                        deletions: *deletions,
                    },
                );
            }
            EventKind::ReviewHeld {
                task,
                threshold,
                outcome,
                ..
            } => {
                if let Some(entry) = self.latest_mut(task) {
                    entry.threshold = Some(*threshold);
                    entry.decision = Some(*outcome);
                    entry.consequence = Some(Consequence::Held);
                }
            }
            EventKind::GateDecided {
                task,
                score,
                threshold,
                outcome,
            } => {
                let Some(entry) = self.latest_mut(task) else {
                    return;
                };
                entry.threshold = Some(*threshold);
                entry.decision = Some(*outcome);
                // Rounded so that 0.72 - 0.7 reads 0.02, not 0.020000000000000018.
                let margin = ((score - threshold) * 1e6).round() / 1e6;
                if margin.abs() <= NEAR_THRESHOLD {
                    entry.flags.push(AuditFlag::NearThreshold { margin });
                }
                entry.consequence = Some(match outcome {
                    GateOutcome::Pass => Consequence::Done {
                        ready: after.ready_because_of(task),
                        at_seq: seq,
                        merged_at: None,
                    },
                    GateOutcome::Rescue { n } => Consequence::Rescue { n: *n },
                    GateOutcome::Fail => Consequence::Failed,
                });
            }
            EventKind::TaskApproved { task, by } => {
                self.reviewed(task, by, true, false, seq);
                // Approval keeps the gate's last decision: a `Fail` there was overruled.
                let failed_by_gate = after
                    .tasks
                    .get(task)
                    .is_some_and(|t| t.last_gate == Some(GateOutcome::Fail));
                if failed_by_gate {
                    if let Some(entry) = self.latest_mut(task) {
                        entry.flags.push(AuditFlag::ApprovedOverFailingScore {
                            by: by.clone(),
                            seq,
                        });
                    }
                }
                let (principal, claim_differs) = self.principal_of(seq, by);
                self.out_of_gate.push(OutOfGate::Approved {
                    seq,
                    task: task.clone(),
                    by: by.clone(),
                    ready: after.ready_because_of(task),
                    principal,
                    claim_differs,
                });
            }
            EventKind::TaskMerged { task, .. } => {
                if let Some(Consequence::Done {
                    ready, merged_at, ..
                }) = self.passed_mut(task)
                {
                    // In a git workspace the dependents wait for the merge, not the gate.
                    *ready = after.ready_because_of(task);
                    *merged_at = Some(seq);
                }
            }
            EventKind::MergeConflicted {
                task,
                files,
                rescue,
            } => {
                if let Some(consequence) = self.passed_mut(task) {
                    *consequence = Consequence::MergeConflicted {
                        files: files.clone(),
                        rescue: *rescue,
                        at_seq: seq,
                    };
                }
            }
            _ => self.observe_stream(seq, event),
        }
    }

    /// The consequence of the task's latest verdict when the gate passed it and nothing
    /// merged it yet.
    fn passed_mut(&mut self, task: &TaskId) -> Option<&mut Consequence> {
        self.latest_mut(task)?.consequence.as_mut().filter(|c| {
            matches!(
                c,
                Consequence::Done {
                    merged_at: None,
                    ..
                }
            )
        })
    }

    /// Folds an event that needs no state.
    pub fn observe_stream(&mut self, seq: u64, event: &Event) {
        match &event.kind {
            EventKind::TaskRejected {
                task,
                by,
                reopen,
                reason,
            } => {
                self.reviewed(task, by, false, *reopen, seq);
                let (principal, claim_differs) = self.principal_of(seq, by);
                self.out_of_gate.push(OutOfGate::Rejected {
                    seq,
                    task: task.clone(),
                    by: by.clone(),
                    reopen: *reopen,
                    reason: reason.clone(),
                    principal,
                    claim_differs,
                });
            }
            EventKind::SecretsRedacted { task, redactions } => {
                self.out_of_gate.push(OutOfGate::SecretsRedacted {
                    seq,
                    task: task.clone(),
                    redactions: redactions.clone(),
                });
            }
            EventKind::Attributed { principal, via } => {
                self.attributed = Some((
                    seq,
                    Recorder {
                        name: principal.clone(),
                        via: via.clone(),
                    },
                ));
            }
            EventKind::EvalErrored {
                task,
                evaluator,
                error,
            } => self.out_of_gate.push(OutOfGate::EvalError {
                seq,
                task: task.clone(),
                evaluator: evaluator.clone(),
                error: error.clone(),
            }),
            EventKind::RolledBack { to_seq, .. } => {
                for e in self.entries.iter_mut().filter(|e| e.seq > *to_seq) {
                    e.rolled_back = true;
                }
            }
            _ => {}
        }
    }

    /// Who recorded the event at `seq` (the `Attributed` event right before it), and whether
    /// the claimed `by` names someone else.
    fn principal_of(&mut self, seq: u64, by: &str) -> (Option<Recorder>, bool) {
        let principal = self
            .attributed
            .take()
            .filter(|(at, _)| at + 1 == seq)
            .map(|(_, p)| p);
        let differs = principal.as_ref().is_some_and(|p| p.name != by);
        (principal, differs)
    }

    /// A person's decision on the task's held verdict, if it waits for one.
    fn reviewed(&mut self, task: &TaskId, by: &str, approved: bool, reopen: bool, seq: u64) {
        if let Some(c) = self
            .latest_mut(task)
            .and_then(|e| e.consequence.as_mut())
            .filter(|c| **c == Consequence::Held)
        {
            *c = Consequence::Reviewed {
                by: by.to_owned(),
                approved,
                reopen,
                at_seq: seq,
            };
        }
    }

    fn latest_mut(&mut self, task: &TaskId) -> Option<&mut AuditEntry> {
        self.entries
            .iter_mut()
            .rev()
            .find(|e| &e.task == task && !e.rolled_back)
    }

    /// Entries carrying at least one flag.
    pub fn flagged(&self) -> impl Iterator<Item = &AuditEntry> {
        self.entries.iter().filter(|e| !e.flags.is_empty())
    }
}
