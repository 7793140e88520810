//! A task's model calls as `runlog show RUN TASK --calls --json` and
//! `GET /v1/runs/{run}/tasks/{task}/calls` answer them: each call with, in words, what was new in
//! its request and what the model answered (read from the bodies the gateway kept); and, asked
//! for (`?turns=true`, the web view's conversation), the turns it added to its attempt's
//! conversation and the model's answer as a turn.

use runlog_core::conversation::{answered, asked, reply_turns, turns, Turn};
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
    /// The conversation, when asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub turns: Option<Added>,
}

/// What a call added to its attempt's conversation. Agents send the whole conversation with
/// every call: the turns an earlier call of the attempt had sent, or was answered with, are
/// named by count, and only the rest are given.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct Added {
    /// How many of its request's first turns an earlier call of the attempt had (its request,
    /// then its answer).
    pub kept: usize,
    /// The seq of that call, when `kept` is not 0.
    pub kept_from: Option<u64>,
    /// Its request's turns after those, in order.
    pub added: Vec<Turn>,
    /// The model's answer, as the turns its agent sends back (one, or one per output item of
    /// OpenAI Responses); none when the answer was not one (an error, a refusal).
    pub reply: Vec<Turn>,
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
        with_turns: bool,
    ) -> Self {
        let body = |b: &Option<Body>| -> Vec<u8> {
            b.as_ref()
                .and_then(|b| log.get_blob(&b.blob.0).ok().flatten())
                .unwrap_or_default()
        };
        let mut total = Spend::default();
        let mut earlier = Earlier::default();
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
                let request = body(&call.request);
                let (answer, streamed) = match call.assembled.filter(|_| call.streamed) {
                    // A stream's message as the engine put it together when it was kept.
                    Some(whole) => (body(&Some(whole)), false),
                    // Recorded before streams were kept assembled: put together here.
                    None => (body(&call.response), call.streamed),
                };
                CallShown {
                    seq,
                    headline: headline(call),
                    asked: asked(call.api, &request),
                    answered: answered(call.api, &answer, streamed),
                    mapped: mapped.unwrap_or_default(),
                    turns: with_turns.then(|| {
                        let said = turns(call.api, &request);
                        let reply = reply_turns(call.api, &answer, streamed);
                        earlier.added(seq, call.attempt, said, reply)
                    }),
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

/// The turns each earlier call of an attempt sent and was answered with, as hashes.
#[derive(Default)]
struct Earlier {
    calls: Vec<(u64, u32, Vec<u64>)>,
}

impl Earlier {
    /// What the call at `seq` added: its turns after the longest run of first turns an
    /// earlier call of its attempt had (the latest such call, on a tie).
    fn added(&mut self, seq: u64, attempt: u32, said: Vec<Turn>, reply: Vec<Turn>) -> Added {
        let hashes: Vec<u64> = said.iter().map(hash_of).collect();
        let (kept, kept_from) = self
            .calls
            .iter()
            .filter(|(_, a, _)| *a == attempt)
            .map(|(s, _, had)| {
                (
                    hashes.iter().zip(had).take_while(|(a, b)| a == b).count(),
                    *s,
                )
            })
            .filter(|(kept, _)| *kept > 0)
            .max_by_key(|&(kept, s)| (kept, s))
            .map_or((0, None), |(kept, s)| (kept, Some(s)));
        let mut had = hashes;
        had.extend(reply.iter().map(hash_of));
        self.calls.push((seq, attempt, had));
        Added {
            kept,
            kept_from,
            added: said.into_iter().skip(kept).collect(),
            reply,
        }
    }
}

fn hash_of(turn: &Turn) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    turn.hash(&mut h);
    h.finish()
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
