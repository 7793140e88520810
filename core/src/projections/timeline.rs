//! A run over wall-clock time, for the web view's Timeline: a row per task with a bar for each
//! attempt, its tests, its evaluation, its merge and each wait for a person, and marks for its
//! model calls and the decisions people recorded; rollbacks, stops and resumes mark the run.
//!
//! The attempts, tests, evaluations and model calls are the trace's spans
//! ([`TraceBuilder`]), so a bar here is the span a trace viewer shows. A wait and a merge are not
//! spans: they are read from the state after each event.

use crate::event::{Event, EventKind};
use crate::ids::{IdMap, TaskId, Timestamp};
use crate::projections::trace::{AttrValue, Span, SpanKind, TraceBuilder};
use crate::state::{RunState, TaskStatus};
use serde::Serialize;
use std::collections::HashMap;

/// What a bar stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
pub enum BarKind {
    /// An attempt of the task's agent, from its start to the end of its judgement.
    Attempt,
    /// Its tests.
    Tests,
    /// Its evaluator.
    Eval,
    /// From the task being done to its branch merged (or the merge conflicting).
    Merge,
    /// Waiting for a person to approve or reject it.
    Wait,
}

/// Something that took time.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct Bar {
    /// What.
    pub kind: BarKind,
    /// The attempt it belongs to (0 when none had started).
    pub attempt: u32,
    /// When it began, ms since the epoch.
    pub from: Timestamp,
    /// When it ended (the last event so far, while `open`).
    pub to: Timestamp,
    /// The seqs of the events it covers.
    pub seqs: (u64, u64),
    /// Still going at the last event.
    pub open: bool,
    /// Why it failed, when it did.
    pub failed: Option<String>,
}

/// Something that happened at a moment (a model call: over its duration, ending then).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct Mark {
    /// The event's kind (`model-called`, `task-approved`, `rolled-back`...).
    pub kind: String,
    /// Its seq.
    pub seq: u64,
    /// When it was recorded.
    pub at: Timestamp,
    /// How long it took, when it took time (a model call).
    pub duration_ms: Option<u64>,
    /// What it was, in a few words.
    pub label: String,
}

/// A task's row.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct TimelineRow {
    /// The task.
    pub task: TaskId,
    /// Its bars, in the order they began.
    pub bars: Vec<Bar>,
    /// Its marks, in seq order.
    pub marks: Vec<Mark>,
}

/// A run over time.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct Timeline {
    /// Its first event's time.
    pub start: Timestamp,
    /// Its last event's time.
    pub end: Timestamp,
    /// Its last seq.
    pub head: u64,
    /// A row per task, in the order they joined the plan.
    pub rows: Vec<TimelineRow>,
    /// What happened to the whole run: rollbacks, stops, resumes, its end.
    pub marks: Vec<Mark>,
}

/// Where a task is, for the bars that are not spans.
#[derive(Debug, Default)]
struct Watch {
    row: usize,
    /// The wait for a person under way.
    wait: Option<Bar>,
    /// Since when it has been done, waiting for its merge.
    done: Option<(u64, Timestamp, u32)>,
    /// The attempt its evaluator scored.
    scored: Option<u32>,
}

/// Folds a run's events into its timeline.
#[derive(Debug)]
pub struct TimelineBuilder {
    trace: TraceBuilder,
    rows: Vec<TimelineRow>,
    tasks: IdMap<TaskId, Watch>,
    /// Span bars by span id: a span handed out again (a resume) replaces its first form.
    spans: HashMap<[u8; 8], (usize, usize)>,
    marks: Vec<Mark>,
    start: Option<Timestamp>,
    last: (u64, Timestamp),
}

impl TimelineBuilder {
    /// A builder for `run`, whose first record hashes to `first_hash`.
    pub fn new(run: &str, first_hash: &[u8; 32]) -> Self {
        Self {
            trace: TraceBuilder::new(run, first_hash, None),
            rows: Vec::new(),
            tasks: IdMap::default(),
            spans: HashMap::new(),
            marks: Vec::new(),
            start: None,
            last: (0, Timestamp(0)),
        }
    }

    /// Takes in the event at `seq`; `state` is the run's state right after it.
    pub fn observe(&mut self, seq: u64, event: &Event, state: &RunState) {
        let at = event.at;
        self.start.get_or_insert(at);
        self.last = (seq, at);
        for task in added(&event.kind) {
            self.row_of(task);
        }
        for span in self.trace.observe(seq, event, state) {
            self.take_span(span, false);
        }
        self.mark(seq, event);
        if let Some(task) = event.kind.task() {
            self.watch(task, seq, at, &event.kind, state);
        } else {
            let ids: Vec<TaskId> = self.tasks.keys().cloned().collect();
            for id in ids {
                self.watch(&id, seq, at, &event.kind, state);
            }
        }
    }

    /// The timeline at the last event: what is still going, drawn to it.
    pub fn finish(mut self) -> Timeline {
        let (head, end) = self.last;
        for span in
            std::mem::replace(&mut self.trace, TraceBuilder::new("", &[0; 32], None)).finish()
        {
            self.take_span(span, true);
        }
        let waits: Vec<(usize, Bar)> = self
            .tasks
            .values_mut()
            .filter_map(|w| w.wait.take().map(|b| (w.row, b)))
            .collect();
        for (row, mut bar) in waits {
            bar.to = end;
            bar.open = true;
            self.push_bar(row, bar);
        }
        for row in &mut self.rows {
            row.bars.sort_by_key(|b| (b.from, b.seqs.0));
            row.marks.sort_by_key(|m| m.seq);
        }
        Timeline {
            start: self.start.unwrap_or(end),
            end,
            head,
            rows: self.rows,
            marks: self.marks,
        }
    }

    fn row_of(&mut self, task: &TaskId) -> usize {
        if let Some(w) = self.tasks.get(task) {
            return w.row;
        }
        let row = self.rows.len();
        self.rows.push(TimelineRow {
            task: task.clone(),
            bars: Vec::new(),
            marks: Vec::new(),
        });
        self.tasks.insert(
            task.clone(),
            Watch {
                row,
                ..Watch::default()
            },
        );
        row
    }

    fn push_bar(&mut self, row: usize, bar: Bar) -> usize {
        match self.rows.get_mut(row) {
            Some(r) => {
                r.bars.push(bar);
                r.bars.len() - 1
            }
            None => 0,
        }
    }

    /// An attempt's, its tests' or its evaluator's span as a bar; a model call's as a mark.
    fn take_span(&mut self, span: Span, open: bool) {
        let kind = match span.kind {
            SpanKind::Agent => BarKind::Attempt,
            SpanKind::Tool => BarKind::Tests,
            SpanKind::Evaluator => BarKind::Eval,
            SpanKind::Llm | SpanKind::Chain => return,
        };
        let Some(task) = attr_str(&span, "runlog.task") else {
            return;
        };
        let row = self.row_of(&TaskId(task));
        let bar = Bar {
            kind,
            attempt: attr_int(&span, "runlog.attempt"),
            from: span.start,
            to: span.end,
            seqs: span.seqs,
            open,
            failed: span.error.clone(),
        };
        match self.spans.get(&span.span_id) {
            Some(&(r, i)) => {
                if let Some(slot) = self.rows.get_mut(r).and_then(|x| x.bars.get_mut(i)) {
                    *slot = bar;
                }
            }
            None => {
                let i = self.push_bar(row, bar);
                self.spans.insert(span.span_id, (row, i));
            }
        }
    }

    fn mark(&mut self, seq: u64, event: &Event) {
        let (kind, label, duration_ms) = match &event.kind {
            EventKind::ModelCalled(call) => (
                "model-called",
                format!(
                    "{} call {}: {} {}",
                    call.stage.name(),
                    call.n,
                    call.model.as_deref().unwrap_or("no model named"),
                    call.status
                ),
                Some(call.duration_ms),
            ),
            EventKind::TaskApproved { by, .. } | EventKind::TaskReopened { by, .. } => {
                (event.kind.name(), format!("by {by}"), None)
            }
            EventKind::TaskRejected { by, reason, .. } => {
                (event.kind.name(), format!("by {by}: {reason}"), None)
            }
            EventKind::RolledBack { to_seq, by, .. } => {
                (event.kind.name(), format!("to seq {to_seq}, by {by}"), None)
            }
            EventKind::RunInterrupted { reason } | EventKind::RunResumed { reason } => {
                (event.kind.name(), reason.clone(), None)
            }
            EventKind::RunFinished { outcome } => (event.kind.name(), outcome.name().into(), None),
            _ => return,
        };
        let mark = Mark {
            kind: kind.to_owned(),
            seq,
            at: event.at,
            duration_ms,
            label,
        };
        match event.kind.task() {
            Some(task) => {
                let row = self.row_of(task);
                if let Some(r) = self.rows.get_mut(row) {
                    r.marks.push(mark);
                }
            }
            None => self.marks.push(mark),
        }
    }

    /// A task's wait for a person and its merge, from its state after the event.
    fn watch(
        &mut self,
        task: &TaskId,
        seq: u64,
        at: Timestamp,
        kind: &EventKind,
        state: &RunState,
    ) {
        let Some(w) = self.tasks.get_mut(task) else {
            return;
        };
        let row = w.row;
        let Some(t) = state.task(task) else {
            return;
        };
        let status = state.status_of(task).unwrap_or(t.status);
        if matches!(kind, EventKind::EvalScored { .. }) {
            w.scored = Some(t.attempt);
        }
        // Pending-eval with no evaluator left to answer: a person decides. A score is followed
        // by the gate's decision, which holds it for a person or not.
        let evaluator_owes =
            t.spec.eval.is_some() && t.eval_error.is_none() && w.scored != Some(t.attempt);
        let gate_owes = matches!(
            kind,
            EventKind::EvalScored { .. } | EventKind::EvaluatorNamed { .. }
        );
        let waiting = status == TaskStatus::PendingEval && !evaluator_owes && !gate_owes;
        let mut ended = Vec::new();
        match (w.wait.take(), waiting) {
            (None, true) => {
                w.wait = Some(Bar {
                    kind: BarKind::Wait,
                    attempt: t.attempt,
                    from: at,
                    to: at,
                    seqs: (seq, seq),
                    open: false,
                    failed: None,
                })
            }
            (Some(mut bar), false) => {
                bar.to = at;
                bar.seqs.1 = seq;
                ended.push(bar);
            }
            (going, _) => w.wait = going,
        }
        match kind {
            EventKind::TaskMerged { .. } | EventKind::MergeConflicted { .. } => {
                let (from_seq, from, attempt) = w.done.take().unwrap_or((seq, at, t.attempt));
                ended.push(Bar {
                    kind: BarKind::Merge,
                    attempt,
                    from,
                    to: at,
                    seqs: (from_seq, seq),
                    open: false,
                    failed: match kind {
                        EventKind::MergeConflicted { files, .. } => {
                            Some(format!("conflict in {}", files.join(", ")))
                        }
                        _ => None,
                    },
                });
            }
            _ if status == TaskStatus::Done => {
                w.done.get_or_insert((seq, at, t.attempt));
            }
            _ => w.done = None,
        }
        for bar in ended {
            self.push_bar(row, bar);
        }
    }
}

/// The tasks an event adds to the plan.
fn added(kind: &EventKind) -> Vec<&TaskId> {
    match kind {
        EventKind::TaskAdded { spec } => vec![&spec.id],
        EventKind::PlanRevised { added, .. } => added.iter().map(|s| &s.id).collect(),
        _ => Vec::new(),
    }
}

fn attr_str(span: &Span, key: &str) -> Option<String> {
    span.attributes.iter().find_map(|(k, v)| match v {
        AttrValue::Str(s) if k == key => Some(s.clone()),
        _ => None,
    })
}

fn attr_int(span: &Span, key: &str) -> u32 {
    span.attributes
        .iter()
        .find_map(|(k, v)| match v {
            AttrValue::Int(n) if k == key => u32::try_from(*n).ok(),
            _ => None,
        })
        .unwrap_or(0)
}
