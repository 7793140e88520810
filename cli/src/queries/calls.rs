//! A task's model calls as `runlog show RUN TASK --calls --json` and
//! `GET /v1/runs/{run}/tasks/{task}/calls` answer them: each call with, in words, what was new in
//! its request and what the model answered (read from the bodies the gateway kept).

use runlog_core::conversation::{answered, asked};
use runlog_core::model_call::{Body, ModelCall};
use runlog_core::usage::{usd, Spend};
use runlog_core::{Event, EventKind};
use runlog_store::EventLog;
use serde::Serialize;

/// One call with its conversation in words.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct CallShown {
    /// The seq of its `model-called` event.
    pub seq: u64,
    /// The call.
    #[serde(flatten)]
    pub call: ModelCall,
    /// Its provider, API, model, end, time, tokens and cost on one line.
    pub headline: String,
    /// What was new in its request, in words.
    pub asked: String,
    /// What the model answered, in words.
    pub answered: String,
    /// In a rerun, the recorded run's places (worktrees, branches, store) its recorded answer
    /// was given as the rerun's, and how often; empty when none were.
    pub mapped: Vec<runlog_core::relocate::Mapped>,
}

/// A task's model calls and what they spent together.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct CallsView {
    /// The run.
    pub run: String,
    /// The task.
    pub task: String,
    /// Its calls, in the order they were recorded.
    pub calls: Vec<CallShown>,
    /// What they used and cost.
    pub total: Spend,
}

impl CallsView {
    /// The calls in `story`, a task's events (of attempt `attempt`, when given).
    pub fn of(
        log: &dyn EventLog,
        run: &str,
        task: &str,
        story: &[(u64, Event)],
        attempt: Option<u32>,
    ) -> Self {
        let body = |b: &Option<Body>| -> Vec<u8> {
            b.as_ref()
                .and_then(|b| log.get_blob(&b.blob.0).ok().flatten())
                .unwrap_or_default()
        };
        let mut total = Spend::default();
        // An `answer-mapped` event is recorded right before its call's own.
        let mut mapped: Option<&runlog_core::relocate::AnswerMapped> = None;
        let calls = story
            .iter()
            .filter_map(|(seq, e)| match &e.kind {
                EventKind::AnswerMapped(m) => {
                    mapped = Some(m);
                    None
                }
                EventKind::ModelCalled(call) if attempt.is_none_or(|a| a == call.attempt) => {
                    let own = mapped.take().filter(|m| {
                        (&m.task, m.attempt, m.stage, m.n)
                            == (&call.task, call.attempt, call.stage, call.n)
                    });
                    Some((*seq, call.as_ref(), own.map(|m| m.mapped.clone())))
                }
                _ => None,
            })
            .map(|(seq, call, mapped)| {
                total.add(&call.tokens, call.cost_usd);
                CallShown {
                    seq,
                    headline: headline(call),
                    asked: asked(call.api, &body(&call.request)),
                    answered: match call.assembled.filter(|_| call.streamed) {
                        // A stream's message as the engine put it together when it was kept.
                        Some(whole) => answered(call.api, &body(&Some(whole)), false),
                        // Recorded before streams were kept assembled: put together here.
                        None => answered(call.api, &body(&call.response), call.streamed),
                    },
                    mapped: mapped.unwrap_or_default(),
                    call: call.clone(),
                }
            })
            .collect();
        CallsView {
            run: run.to_owned(),
            task: task.to_owned(),
            calls,
            total,
        }
    }
}

/// `anthropic messages claude-sonnet-4, streamed: 200 in 1840 ms, 1200/30 tokens, $0.0041`.
pub fn headline(c: &ModelCall) -> String {
    let model = c.model.as_deref().unwrap_or("no model named");
    let streamed = if c.streamed { ", streamed" } else { "" };
    let cost = c.cost_usd.map_or_else(|| "unpriced".to_owned(), usd);
    format!(
        "{} {} {model}{streamed}: {} {} in {} ms, {}/{} tokens, {cost}",
        c.provider,
        c.api.name(),
        c.end.name(),
        c.status,
        c.duration_ms,
        c.tokens.input,
        c.tokens.output
    )
}
