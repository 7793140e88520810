//! What each event does to the trace, by family: the run and its plan, an attempt, its
//! judgement, its spend.

use super::conventions::{self, add_spend_attrs, f, i, s};
use super::{clip, first_line, join, Span, SpanKind, SpanLink, TraceBuilder};
use crate::event::{EventKind, GateOutcome, RunOutcome};
use crate::ids::Timestamp;
use crate::state::RunState;

/// The event being taken in, with what its arms read.
pub(super) struct Seen<'a> {
    pub(super) seq: u64,
    pub(super) at: Timestamp,
    pub(super) kind: &'a EventKind,
    pub(super) state: &'a RunState,
    /// The principal an `attributed` event right before this one named.
    pub(super) by: &'a Option<String>,
}

impl TraceBuilder {
    /// The run and its plan: started, forked, revised, rolled back, stopped, ended.
    pub(super) fn run_seen(&mut self, seen: &Seen<'_>, ended: &mut Vec<Span>) {
        let Seen { seq, at, by, .. } = *seen;
        match seen.kind {
            EventKind::RunStarted { workflow, .. } => self.start_run(seq, at, workflow, None),
            EventKind::Forked {
                from_run, at_seq, ..
            } => {
                let link = self.fork_of.map(|p| SpanLink {
                    trace_id: p.trace_id,
                    span_id: p.run_span(),
                    attributes: vec![
                        s("runlog.fork.from_run", from_run.0.clone()),
                        i("runlog.fork.at_seq", *at_seq),
                    ],
                });
                self.start_run(seq, at, &format!("fork of {from_run}"), link);
            }
            EventKind::Attributed { principal, .. } => {
                self.attributed = Some((seq, principal.clone()))
            }
            EventKind::TaskAdded { spec } => self.add_task(&spec.id, seq, at),
            EventKind::PlanRevised {
                added,
                reason,
                cancelled,
                ..
            } => {
                for spec in added {
                    self.add_task(&spec.id, seq, at);
                }
                self.run_event(
                    "plan-revised",
                    at,
                    vec![
                        s("runlog.reason", reason.clone()),
                        i("runlog.cancelled", cancelled.len() as u64),
                        i("runlog.added", added.len() as u64),
                    ],
                );
                for spans in self.tasks.values_mut() {
                    if let Some(mut r) = spans.replan.take() {
                        r.end = at;
                        r.seqs.1 = seq;
                        ended.push(r);
                    }
                }
            }
            EventKind::ReplanRequested {
                after_task, reason, ..
            } => {
                let parent = self.task_span_id(after_task);
                let span = self.open(
                    &["replan", after_task.as_str(), &seq.to_string()],
                    parent,
                    format!("replan after {after_task}"),
                    SpanKind::Chain,
                    seq,
                    at,
                );
                let entry = self.tasks.entry(after_task.clone()).or_default();
                if entry.replan.is_none() {
                    let mut span = span;
                    span.attributes.push(s("runlog.reason", reason.clone()));
                    entry.replan = Some(span);
                }
            }
            EventKind::ReplanLoopDetected { reason, .. } => {
                self.run_event(
                    "replan-loop-detected",
                    at,
                    vec![s("runlog.reason", reason.clone())],
                );
            }
            EventKind::RolledBack {
                to_seq,
                reason,
                by: claimed,
            } => {
                let who = by.clone().unwrap_or_else(|| claimed.clone());
                self.run_event(
                    "rolled-back",
                    at,
                    vec![
                        i("runlog.to_seq", *to_seq),
                        s("runlog.reason", reason.clone()),
                        s("runlog.by", who),
                    ],
                );
            }
            EventKind::RunInterrupted { reason } => self.run_event(
                "run-interrupted",
                at,
                vec![s("runlog.reason", reason.clone())],
            ),
            EventKind::RunResumed { reason } => {
                self.run_event("run-resumed", at, vec![s("runlog.reason", reason.clone())])
            }
            EventKind::RunFinished { outcome } => {
                if let Some(run) = self.run_span.as_mut() {
                    run.attributes.push(s("runlog.outcome", outcome.name()));
                    match outcome {
                        RunOutcome::Succeeded => {}
                        RunOutcome::Failed { failed, .. } => {
                            run.error = Some(format!("failed: {}", join(failed)))
                        }
                        RunOutcome::Paused { reason } => {
                            run.error = Some(format!("paused: {reason}"))
                        }
                    }
                }
            }
            _ => {}
        }
    }

    /// An attempt and its tests, checkpoints, failures and messages.
    pub(super) fn attempt_seen(&mut self, seen: &Seen<'_>, ended: &mut Vec<Span>) {
        let Seen { seq, at, .. } = *seen;
        match seen.kind {
            EventKind::TaskStarted {
                task,
                agent,
                attempt,
                worktree,
            } => {
                if let Some(done) = self.close_attempt(task, seq, at) {
                    ended.extend(done);
                }
                let parent = self.task_span_id(task);
                let mut span = self.open(
                    &["attempt", task.as_str(), &seq.to_string()],
                    parent,
                    format!("invoke_agent {agent}"),
                    SpanKind::Agent,
                    seq,
                    at,
                );
                span.attributes
                    .extend(conventions::agent(&self.run, agent.as_str()));
                span.attributes.extend([
                    s("runlog.task", task.0.clone()),
                    i("runlog.attempt", u64::from(*attempt)),
                    s("runlog.worktree", worktree.clone()),
                ]);
                if let Some(t) = self.tasks.get_mut(task) {
                    if let Some(ts) = t.task.as_mut() {
                        ts.end = at;
                    }
                    t.attempt = Some(span);
                }
            }
            EventKind::TestsStarted { task, attempt } => {
                let parent = self.attempt_span_id(task);
                let mut span = self.open(
                    &["tests", task.as_str(), &seq.to_string()],
                    parent,
                    "execute_tool tests".into(),
                    SpanKind::Tool,
                    seq,
                    at,
                );
                span.attributes.extend(conventions::tool("tests"));
                span.attributes.extend([
                    s("runlog.task", task.0.clone()),
                    i("runlog.attempt", u64::from(*attempt)),
                ]);
                if let Some(t) = self.tasks.get_mut(task) {
                    t.tests = Some(span);
                }
            }
            EventKind::TestsPassed { task, .. } => {
                if let Some(mut span) = self.tasks.get_mut(task).and_then(|t| t.tests.take()) {
                    span.end = at;
                    span.seqs.1 = seq;
                    ended.push(span);
                }
            }
            EventKind::TestsFailed { task, details, .. } => {
                if let Some(mut span) = self.tasks.get_mut(task).and_then(|t| t.tests.take()) {
                    span.end = at;
                    span.seqs.1 = seq;
                    span.error = Some(first_line(details));
                    span.attributes.push(s("error.type", "tests-failed"));
                    ended.push(span);
                }
                self.attempt_event(
                    task,
                    "tests-failed",
                    at,
                    vec![s("runlog.details", clip(details, 2000))],
                );
                self.attempt_error(task, "tests-failed", first_line(details));
            }
            EventKind::StageFailed {
                task,
                error,
                error_type,
                ..
            } => {
                self.attempt_error(task, error_type.as_str(), first_line(error));
            }
            EventKind::CheckpointReached { task, name } => self.attempt_event(
                task,
                "checkpoint",
                at,
                vec![s("runlog.checkpoint", name.clone())],
            ),
            EventKind::MessagePosted { task, from, text } => {
                let attrs = vec![
                    s("runlog.from", from.clone()),
                    s("runlog.text", clip(text, 2000)),
                ];
                match task {
                    Some(t) if self.attempt_mut(t).is_some() => {
                        self.attempt_event(t, "message", at, attrs)
                    }
                    Some(t) => self.task_event(t, "message", at, attrs),
                    None => self.run_event("message", at, attrs),
                }
            }
            _ => {}
        }
    }

    /// The evaluator's verdict, the gate's decision and people's.
    pub(super) fn judgement_seen(&mut self, seen: &Seen<'_>, ended: &mut Vec<Span>) {
        let Seen {
            seq, at, state, by, ..
        } = *seen;
        match seen.kind {
            EventKind::EvalScored {
                task,
                evaluator,
                score,
                notes,
                ..
            } => {
                if let Some(mut span) = self.evaluated(task, seq, at, state) {
                    span.attributes
                        .extend(conventions::evaluation(evaluator, *score));
                    ended.push(span);
                }
                let mut verdict = conventions::evaluation(evaluator, *score);
                verdict.push(conventions::explanation(clip(notes, 2000)));
                self.attempt_event(task, conventions::EVALUATION_RESULT, at, verdict);
            }
            EventKind::EvalErrored {
                task,
                evaluator,
                error,
            } => {
                if let Some(mut span) = self.evaluated(task, seq, at, state) {
                    span.error = Some(first_line(error));
                    span.attributes
                        .extend(conventions::evaluation_errored(evaluator));
                    ended.push(span);
                }
            }
            EventKind::GateDecided {
                task,
                threshold,
                outcome,
                score,
            } => {
                let label = match outcome {
                    GateOutcome::Pass => "pass",
                    GateOutcome::Rescue { .. } => "rescue",
                    GateOutcome::Fail => "fail",
                };
                // The verdict's span event gets the decision the gate took with it.
                if let Some(ev) = self.attempt_mut(task).and_then(|a| {
                    a.events
                        .iter_mut()
                        .rev()
                        .find(|e| e.name == conventions::EVALUATION_RESULT)
                }) {
                    ev.attributes
                        .extend([conventions::label(label), f("runlog.threshold", *threshold)]);
                } else {
                    self.attempt_event(
                        task,
                        conventions::EVALUATION_RESULT,
                        at,
                        vec![
                            f("gen_ai.evaluation.score.value", *score),
                            conventions::label(label),
                            f("runlog.threshold", *threshold),
                        ],
                    );
                }
                if *outcome != GateOutcome::Pass {
                    self.attempt_error(
                        task,
                        "eval-below-threshold",
                        format!("score {score} below the threshold {threshold}: {label}"),
                    );
                }
            }
            EventKind::TaskApproved { task, by: claimed }
            | EventKind::TaskReopened { task, by: claimed } => {
                let who = by.clone().unwrap_or_else(|| claimed.clone());
                self.task_event(task, seen.kind.name(), at, vec![s("runlog.by", who)]);
            }
            EventKind::TaskRejected {
                task,
                by: claimed,
                reason,
                ..
            } => {
                let who = by.clone().unwrap_or_else(|| claimed.clone());
                self.task_event(
                    task,
                    "task-rejected",
                    at,
                    vec![s("runlog.by", who), s("runlog.reason", reason.clone())],
                );
            }
            _ => {}
        }
    }

    /// Model calls, usage and budgets.
    pub(super) fn spend_seen(&mut self, seen: &Seen<'_>, ended: &mut Vec<Span>) {
        let Seen { seq, at, state, .. } = *seen;
        match seen.kind {
            EventKind::ModelCalled(call) => {
                self.add_usage(&call.usage());
                if let Some(run) = self.run_span.as_mut() {
                    add_spend_attrs(&mut run.attributes, &state.spend);
                }
                ended.push(self.model_call(call, seq, at));
            }
            EventKind::UsageRecorded { usage } => {
                self.add_usage(usage);
                if let Some(run) = self.run_span.as_mut() {
                    add_spend_attrs(&mut run.attributes, &state.spend);
                }
            }
            EventKind::BudgetSpent { task, .. } => {
                self.task_event(task, "budget-spent", at, vec![])
            }
            _ => {}
        }
    }
}
