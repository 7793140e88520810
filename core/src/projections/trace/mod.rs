//! A run as a trace: spans for the run, its tasks, each attempt, its tests, its evaluator and
//! the replanner, with span events for what happened inside them, folded from the run's events
//! alone. Ids derive from the hash of the run's first record, so a run exported twice, or from
//! another host, has the same ids; times are the events' own.
//!
//! The spans are neutral here (names, kinds, attributes in the OpenTelemetry GenAI and
//! OpenInference conventions); the command line turns them into OTLP.

use crate::event::{Event, EventKind};
use crate::ids::{IdMap, TaskId, Timestamp};
use crate::state::{RunState, TaskStatus};
use crate::usage::{Spend, UsageRecord, UsageStage};
use std::collections::HashMap;

mod conventions;
mod observe;

use conventions::{add_model_attrs, add_spend_attrs, i, s};
use observe::Seen;

/// What a span is, as OpenInference names it (`openinference.span.kind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpanKind {
    /// The run, a task, a replan.
    Chain,
    /// An attempt of a task's agent.
    Agent,
    /// A task's tests.
    Tool,
    /// A task's evaluator.
    Evaluator,
    /// One call to a model, through the gateway.
    Llm,
}

impl SpanKind {
    /// The OpenInference name.
    pub fn name(self) -> &'static str {
        match self {
            SpanKind::Chain => "CHAIN",
            SpanKind::Agent => "AGENT",
            SpanKind::Tool => "TOOL",
            SpanKind::Evaluator => "EVALUATOR",
            SpanKind::Llm => "LLM",
        }
    }
}

/// An attribute's value.
#[derive(Debug, Clone, PartialEq)]
pub enum AttrValue {
    /// Text.
    Str(String),
    /// A whole number.
    Int(i64),
    /// A number.
    F64(f64),
    /// Yes or no.
    Bool(bool),
}

/// Attributes, in the order they were set.
pub type Attrs = Vec<(String, AttrValue)>;

/// Something that happened inside a span.
#[derive(Debug, Clone, PartialEq)]
pub struct SpanEvent {
    /// Its name (`gen_ai.evaluation.result`, `checkpoint`, `message`...).
    pub name: String,
    /// When.
    pub at: Timestamp,
    /// What.
    pub attributes: Attrs,
}

/// A span of another trace this one follows from (a fork's parent).
#[derive(Debug, Clone, PartialEq)]
pub struct SpanLink {
    /// The other trace.
    pub trace_id: [u8; 16],
    /// The span in it.
    pub span_id: [u8; 8],
    /// Why.
    pub attributes: Attrs,
}

/// One span.
#[derive(Debug, Clone, PartialEq)]
pub struct Span {
    /// Its id.
    pub span_id: [u8; 8],
    /// Its parent's, none for the run's.
    pub parent: Option<[u8; 8]>,
    /// Its name (`invoke_workflow quickstart`, `invoke_agent agent-build`...).
    pub name: String,
    /// Its kind.
    pub kind: SpanKind,
    /// When it began.
    pub start: Timestamp,
    /// When it ended.
    pub end: Timestamp,
    /// Its attributes.
    pub attributes: Attrs,
    /// What happened inside it.
    pub events: Vec<SpanEvent>,
    /// Why it failed, when it did.
    pub error: Option<String>,
    /// The span it follows from, in another trace.
    pub link: Option<SpanLink>,
    /// The seqs of the events it covers.
    pub seqs: (u64, u64),
}

/// Ids of a run's trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceIds {
    /// The trace id: the first 16 bytes of the hash of the run's first record.
    pub trace_id: [u8; 16],
}

impl TraceIds {
    /// The ids of the run whose first record hashes to `first_hash`.
    pub fn of(first_hash: &[u8; 32]) -> Self {
        let mut trace_id = [0u8; 16];
        trace_id.copy_from_slice(first_hash.get(..16).unwrap_or(&[1; 16]));
        if trace_id == [0; 16] {
            trace_id[15] = 1;
        }
        Self { trace_id }
    }

    /// The span id of `parts` in this trace: stable for the same parts.
    pub fn span(&self, parts: &[&str]) -> [u8; 8] {
        let mut h = blake3::Hasher::new();
        h.update(&self.trace_id);
        for p in parts {
            h.update(p.as_bytes());
            h.update(&[0]);
        }
        let mut id = [0u8; 8];
        id.copy_from_slice(h.finalize().as_bytes().get(..8).unwrap_or(&[1; 8]));
        if id == [0; 8] {
            id[7] = 1;
        }
        id
    }

    /// The run's own span.
    pub fn run_span(&self) -> [u8; 8] {
        self.span(&["run"])
    }
}

/// The open spans of a task.
#[derive(Debug, Clone, Default)]
struct TaskSpans {
    task: Option<Span>,
    attempt: Option<Span>,
    tests: Option<Span>,
    eval: Option<Span>,
    replan: Option<Span>,
    /// The attempt whose evaluator has answered (its span is not opened again).
    scored: Option<u32>,
}

/// Folds a run's events into spans; each span is handed out when its part of the run ends.
#[derive(Debug, Clone)]
pub struct TraceBuilder {
    ids: TraceIds,
    run: String,
    fork_of: Option<TraceIds>,
    run_span: Option<Span>,
    tasks: IdMap<TaskId, TaskSpans>,
    /// The principal of the last `attributed` event and its seq.
    attributed: Option<(u64, String)>,
    /// What the commands of each span used so far.
    spends: HashMap<[u8; 8], Spend>,
    last: (u64, Timestamp),
    /// The seq of the `run-finished` that last handed the run's span out.
    run_ended: Option<u64>,
}

impl TraceBuilder {
    /// A builder for `run`, whose first record hashes to `first_hash`; `fork_of`: the ids of
    /// the run it was forked from, to link to.
    pub fn new(run: &str, first_hash: &[u8; 32], fork_of: Option<TraceIds>) -> Self {
        Self {
            ids: TraceIds::of(first_hash),
            run: run.to_owned(),
            fork_of,
            run_span: None,
            tasks: IdMap::default(),
            attributed: None,
            spends: HashMap::new(),
            last: (0, Timestamp(0)),
            run_ended: None,
        }
    }

    /// The trace's ids.
    pub fn ids(&self) -> TraceIds {
        self.ids
    }

    fn open(
        &self,
        parts: &[&str],
        parent: [u8; 8],
        name: String,
        kind: SpanKind,
        seq: u64,
        at: Timestamp,
    ) -> Span {
        Span {
            span_id: self.ids.span(parts),
            parent: Some(parent),
            name,
            kind,
            start: at,
            end: at,
            attributes: vec![s("runlog.run", self.run.clone())],
            events: Vec::new(),
            error: None,
            link: None,
            seqs: (seq, seq),
        }
    }

    fn run_span_id(&self) -> [u8; 8] {
        self.ids.run_span()
    }

    /// Takes in the event at `seq`; `state` is the run's state right after it. Returns the spans
    /// that ended with it.
    pub fn observe(&mut self, seq: u64, event: &Event, state: &RunState) -> Vec<Span> {
        let at = event.at;
        self.last = (seq, at);
        let mut ended = Vec::new();
        if let Some(run) = self.run_span.as_mut() {
            run.end = at;
            run.seqs.1 = seq;
        }
        let by = match &self.attributed {
            Some((s, p)) if s + 1 == seq => Some(p.clone()),
            _ => None,
        };
        let seen = Seen {
            seq,
            at,
            kind: &event.kind,
            state,
            by: &by,
        };
        match &event.kind {
            EventKind::RunStarted { .. }
            | EventKind::Forked { .. }
            | EventKind::Attributed { .. }
            | EventKind::TaskAdded { .. }
            | EventKind::PlanRevised { .. }
            | EventKind::ReplanRequested { .. }
            | EventKind::ReplanLoopDetected { .. }
            | EventKind::RolledBack { .. }
            | EventKind::RunInterrupted { .. }
            | EventKind::RunResumed { .. }
            | EventKind::RunFinished { .. } => self.run_seen(&seen, &mut ended),
            EventKind::TaskStarted { .. }
            | EventKind::TestsStarted { .. }
            | EventKind::TestsPassed { .. }
            | EventKind::TestsFailed { .. }
            | EventKind::StageFailed { .. }
            | EventKind::CheckpointReached { .. }
            | EventKind::MessagePosted { .. } => self.attempt_seen(&seen, &mut ended),
            EventKind::EvalScored { .. }
            | EventKind::EvalErrored { .. }
            | EventKind::GateDecided { .. }
            | EventKind::TaskApproved { .. }
            | EventKind::TaskReopened { .. }
            | EventKind::TaskRejected { .. } => self.judgement_seen(&seen, &mut ended),
            EventKind::ModelCalled { .. }
            | EventKind::UsageRecorded { .. }
            | EventKind::BudgetSpent { .. } => self.spend_seen(&seen, &mut ended),
            _ => {}
        }
        // An event about one task can move only that task and the groups above it; any other
        // (a rollback, a plan revision, an interruption, the end) may move any task.
        let touched: Option<Vec<TaskId>> = event.kind.task().map(|t| {
            let mut ids = vec![t.clone()];
            let mut up = state.task(t).and_then(|x| x.spec.parent.clone());
            while let Some(p) = up {
                if ids.len() > crate::settings::MAX_NESTING as usize {
                    break;
                }
                up = state.task(&p).and_then(|x| x.spec.parent.clone());
                ids.push(p);
            }
            ids
        });
        ended.extend(self.settle(seq, at, state, touched));
        if matches!(event.kind, EventKind::RunFinished { .. }) {
            // Everything else ended with the run; the run's span goes last (a resume sends it
            // again, with the same id and a later end).
            ended.extend(self.close_all(seq, at));
            if let Some(run) = self.run_span.clone() {
                ended.push(run);
                self.run_ended = Some(seq);
            }
        }
        ended
    }

    /// The spans still open (a run that has not finished, or was interrupted) at the last event.
    pub fn finish(mut self) -> Vec<Span> {
        let (seq, at) = self.last;
        let mut out = self.close_all(seq, at);
        // A run that finished at its last event handed its span out then.
        let run = self.run_span.take().filter(|_| self.run_ended != Some(seq));
        if let Some(run) = run.filter(|r| !out.iter().any(|s| s.span_id == r.span_id)) {
            out.push(run);
        }
        out
    }

    fn start_run(&mut self, seq: u64, at: Timestamp, workflow: &str, link: Option<SpanLink>) {
        let mut span = self.open(
            &["run"],
            [0; 8],
            format!("invoke_workflow {workflow}"),
            SpanKind::Chain,
            seq,
            at,
        );
        span.span_id = self.run_span_id();
        span.parent = None;
        span.link = link;
        span.attributes.extend(conventions::workflow(workflow));
        self.run_span = Some(span);
    }

    fn add_task(&mut self, id: &TaskId, seq: u64, at: Timestamp) {
        let mut span = self.open(
            &["task", id.as_str(), &seq.to_string()],
            self.run_span_id(),
            format!("task {id}"),
            SpanKind::Chain,
            seq,
            at,
        );
        span.attributes.push(s("runlog.task", id.0.clone()));
        self.tasks.entry(id.clone()).or_default().task = Some(span);
    }

    fn task_span_id(&self, task: &TaskId) -> [u8; 8] {
        self.tasks
            .get(task)
            .and_then(|t| t.task.as_ref())
            .map_or_else(|| self.run_span_id(), |s| s.span_id)
    }

    fn attempt_span_id(&self, task: &TaskId) -> [u8; 8] {
        self.tasks
            .get(task)
            .and_then(|t| t.attempt.as_ref())
            .map_or_else(|| self.task_span_id(task), |s| s.span_id)
    }

    fn attempt_mut(&mut self, task: &TaskId) -> Option<&mut Span> {
        self.tasks.get_mut(task)?.attempt.as_mut()
    }

    /// The evaluator of `task`'s current attempt answered: its span ends (and is not opened
    /// again for that attempt).
    fn evaluated(
        &mut self,
        task: &TaskId,
        seq: u64,
        at: Timestamp,
        state: &RunState,
    ) -> Option<Span> {
        let t = self.tasks.entry(task.clone()).or_default();
        t.scored = state.task(task).map(|x| x.attempt);
        t.eval.take().map(|span| ended_at(span, seq, at))
    }

    fn attempt_event(&mut self, task: &TaskId, name: &str, at: Timestamp, attributes: Attrs) {
        match self.attempt_mut(task) {
            Some(span) => span.events.push(SpanEvent {
                name: name.into(),
                at,
                attributes,
            }),
            None => self.task_event(task, name, at, attributes),
        }
    }

    fn attempt_error(&mut self, task: &TaskId, kind: &str, why: String) {
        if let Some(span) = self.attempt_mut(task) {
            span.error = Some(why);
            span.attributes.retain(|(k, _)| k != "error.type");
            span.attributes.push(s("error.type", kind));
        }
    }

    fn task_event(&mut self, task: &TaskId, name: &str, at: Timestamp, attributes: Attrs) {
        let event = SpanEvent {
            name: name.into(),
            at,
            attributes,
        };
        match self.tasks.get_mut(task).and_then(|t| t.task.as_mut()) {
            Some(span) => span.events.push(event),
            None => {
                if let Some(run) = self.run_span.as_mut() {
                    run.events.push(event);
                }
            }
        }
    }

    fn run_event(&mut self, name: &str, at: Timestamp, attributes: Attrs) {
        if let Some(run) = self.run_span.as_mut() {
            run.events.push(SpanEvent {
                name: name.into(),
                at,
                attributes,
            });
        }
    }

    /// Usage goes on the span of the command that used it: the attempt (agent), its tests, its
    /// evaluator, the replan; and is summed on the task and the run.
    fn add_usage(&mut self, u: &UsageRecord) {
        let Some(t) = self.tasks.get_mut(&u.task) else {
            return;
        };
        let span = match u.stage {
            UsageStage::Agent => t.attempt.as_mut(),
            UsageStage::Tests => t.tests.as_mut().or(t.attempt.as_mut()),
            UsageStage::Evaluator => t.eval.as_mut().or(t.attempt.as_mut()),
            UsageStage::Replanner => t.replan.as_mut().or(t.task.as_mut()),
        };
        if let Some(span) = span {
            let spend = self.spends.entry(span.span_id).or_default();
            spend.add(&u.tokens, u.cost_usd);
            add_spend_attrs(&mut span.attributes, spend);
            add_model_attrs(&mut span.attributes, u);
        }
    }

    /// A call's span under its attempt: `chat {model}`, from the request to the answer's end,
    /// with the usage the provider returned (message contents are not in it).
    fn model_call(&self, call: &crate::model_call::ModelCall, seq: u64, at: Timestamp) -> Span {
        let model = call.model.clone().unwrap_or_default();
        let mut span = self.open(
            &["call", call.task.as_str(), &seq.to_string()],
            self.attempt_span_id(&call.task),
            format!("chat {model}"),
            SpanKind::Llm,
            seq,
            Timestamp(at.0.saturating_sub(call.duration_ms)),
        );
        span.end = at;
        span.attributes
            .extend(conventions::chat(&call.provider, &model));
        span.attributes.extend([
            s("runlog.task", call.task.0.clone()),
            i("runlog.attempt", u64::from(call.attempt)),
            s("runlog.stage", call.stage.name()),
            i("runlog.call", u64::from(call.n)),
            s("runlog.api", call.api.name()),
            i("http.response.status_code", u64::from(call.status)),
        ]);
        let mut spend = Spend::default();
        spend.add(&call.tokens, call.cost_usd);
        add_spend_attrs(&mut span.attributes, &spend);
        span.error = call.failure();
        span
    }

    /// Closes the spans whose part of the run is over in `state`.
    fn settle(
        &mut self,
        seq: u64,
        at: Timestamp,
        state: &RunState,
        only: Option<Vec<TaskId>>,
    ) -> Vec<Span> {
        let mut out = Vec::new();
        let ids: Vec<TaskId> = only.unwrap_or_else(|| self.tasks.keys().cloned().collect());
        for id in ids {
            let Some(task) = state.task(&id) else {
                // Gone from the state (rolled back before it was added): its spans end here.
                if let Some(t) = self.tasks.get_mut(&id) {
                    out.extend(take_all(t, seq, at));
                }
                continue;
            };
            let status = state.status_of(&id).unwrap_or(task.status);
            let attempt_on =
                task.running || matches!(status, TaskStatus::Testing | TaskStatus::PendingEval);
            let evaluating = status == TaskStatus::PendingEval
                && task.spec.eval.is_some()
                && task.eval_error.is_none();
            let Some(t) = self.tasks.get_mut(&id) else {
                continue;
            };
            if evaluating && t.eval.is_none() && t.scored != Some(task.attempt) {
                let parent = t.attempt.as_ref().map(|a| a.span_id);
                if let Some(parent) = parent {
                    let evaluator = task.spec.eval.clone().unwrap_or_default();
                    let mut span = Span {
                        span_id: self.ids.span(&["eval", id.as_str(), &seq.to_string()]),
                        parent: Some(parent),
                        name: format!("evaluate {}", first_word(&evaluator)),
                        kind: SpanKind::Evaluator,
                        start: at,
                        end: at,
                        attributes: vec![
                            s("runlog.run", self.run.clone()),
                            s("runlog.task", id.0.clone()),
                        ]
                        .into_iter()
                        .chain(conventions::evaluate())
                        .collect(),
                        events: Vec::new(),
                        error: None,
                        link: None,
                        seqs: (seq, seq),
                    };
                    span.attributes
                        .push(i("runlog.attempt", u64::from(task.attempt)));
                    t.eval = Some(span);
                }
            }
            if !attempt_on {
                if let Some(mut a) = t.attempt.take() {
                    a.end = at;
                    a.seqs.1 = seq;
                    out.extend(t.tests.take().map(|x| ended_at(x, seq, at)));
                    out.extend(t.eval.take().map(|x| ended_at(x, seq, at)));
                    out.push(a);
                }
            }
            if status.is_terminal() {
                if let Some(mut ts) = t.task.take() {
                    ts.end = at;
                    ts.seqs.1 = seq;
                    ts.attributes.push(s("runlog.status", status.name()));
                    add_spend_attrs(&mut ts.attributes, &task.spend);
                    if status == TaskStatus::Failed {
                        ts.error = Some(task.reason.clone().unwrap_or_else(|| "failed".into()));
                    }
                    out.push(ts);
                    // A task reopened later gets its span again, with the same id.
                    t.task = None;
                }
            } else if t.task.is_none() {
                let mut span = self.open(
                    &["task", id.as_str()],
                    self.run_span_id(),
                    format!("task {id}"),
                    SpanKind::Chain,
                    seq,
                    at,
                );
                span.span_id = self
                    .ids
                    .span(&["task", id.as_str(), "reopened", &seq.to_string()]);
                span.attributes.push(s("runlog.task", id.0.clone()));
                if let Some(t) = self.tasks.get_mut(&id) {
                    t.task = Some(span);
                }
            }
        }
        out
    }

    fn close_attempt(&mut self, task: &TaskId, seq: u64, at: Timestamp) -> Option<Vec<Span>> {
        let t = self.tasks.get_mut(task)?;
        let mut out = Vec::new();
        out.extend(t.tests.take().map(|x| ended_at(x, seq, at)));
        out.extend(t.eval.take().map(|x| ended_at(x, seq, at)));
        out.extend(t.attempt.take().map(|x| ended_at(x, seq, at)));
        Some(out)
    }

    fn close_all(&mut self, seq: u64, at: Timestamp) -> Vec<Span> {
        let mut out = Vec::new();
        let mut ids: Vec<TaskId> = self.tasks.keys().cloned().collect();
        ids.sort();
        for id in ids {
            if let Some(t) = self.tasks.get_mut(&id) {
                out.extend(take_all(t, seq, at));
            }
        }
        out
    }
}

fn ended_at(mut span: Span, seq: u64, at: Timestamp) -> Span {
    if span.end < at {
        span.end = at;
    }
    span.seqs.1 = span.seqs.1.max(seq);
    span
}

fn take_all(t: &mut TaskSpans, seq: u64, at: Timestamp) -> Vec<Span> {
    [
        t.tests.take(),
        t.eval.take(),
        t.attempt.take(),
        t.replan.take(),
        t.task.take(),
    ]
    .into_iter()
    .flatten()
    .map(|x| ended_at(x, seq, at))
    .collect()
}

fn first_line(text: &str) -> String {
    clip(
        text.lines()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("")
            .trim(),
        200,
    )
}

fn first_word(text: &str) -> &str {
    text.split_whitespace().next().unwrap_or(text)
}

fn clip(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", text.get(..cut).unwrap_or(text)),
        None => text.to_owned(),
    }
}

fn join(ids: &[TaskId]) -> String {
    ids.iter()
        .map(TaskId::as_str)
        .collect::<Vec<_>>()
        .join(", ")
}
