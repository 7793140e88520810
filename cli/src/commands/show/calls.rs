//! `runlog show RUN TASK --calls`: the task's model calls, each with its model, tokens, cost and
//! time, and in words what was new in its request and what the model answered (read from the
//! bodies the gateway kept).

use crate::error::Result;
use runlog_core::conversation::{answered, asked};
use runlog_core::model_call::{Body, ModelCall};
use runlog_core::usage::{usd, Spend};
use runlog_core::{Event, EventKind};
use runlog_store::EventLog;
use serde::Serialize;

/// One call as `--calls` shows it.
#[derive(Debug, Serialize)]
struct Shown<'a> {
    /// The seq of its `model-called` event.
    seq: u64,
    /// The call.
    #[serde(flatten)]
    call: &'a ModelCall,
    /// What was new in its request, in words.
    asked: String,
    /// What the model answered, in words.
    answered: String,
}

#[derive(Serialize)]
struct Calls<'a> {
    run: &'a str,
    task: &'a str,
    calls: Vec<Shown<'a>>,
    total: Spend,
}

/// Prints the model calls in `story` (of attempt `attempt`, when given).
pub(super) fn print(
    log: &dyn EventLog,
    run: &str,
    task: &str,
    story: &[(u64, Event)],
    attempt: Option<u32>,
    json: bool,
) -> Result<()> {
    let body = |b: &Option<Body>| -> Vec<u8> {
        b.as_ref()
            .and_then(|b| log.get_blob(&b.blob.0).ok().flatten())
            .unwrap_or_default()
    };
    let mut total = Spend::default();
    let calls: Vec<Shown> = story
        .iter()
        .filter_map(|(seq, e)| match &e.kind {
            EventKind::ModelCalled(call) if attempt.is_none_or(|a| a == call.attempt) => {
                Some((*seq, call.as_ref()))
            }
            _ => None,
        })
        .map(|(seq, call)| {
            total.add(&call.tokens, call.cost_usd);
            Shown {
                seq,
                call,
                asked: asked(call.api, &body(&call.request)),
                answered: answered(call.api, &body(&call.response), call.streamed),
            }
        })
        .collect();
    if json {
        return crate::render::json(&Calls {
            run,
            task,
            calls,
            total,
        });
    }
    let which = attempt
        .map(|a| format!(" in attempt {a}"))
        .unwrap_or_default();
    if calls.is_empty() {
        outln!(
            "task {task} of run {run} made no model call{which} through the gateway (a workflow with [providers] turns it on)"
        );
        return Ok(());
    }
    let cost = if total.unpriced > 0 {
        format!("{} and {} unpriced", usd(total.cost_usd), total.unpriced)
    } else {
        usd(total.cost_usd)
    };
    outln!(
        "task {task} of run {run}: {} model calls{which}, {} input and {} output tokens, {cost}",
        calls.len(),
        total.tokens.input,
        total.tokens.output
    );
    for shown in &calls {
        let c = shown.call;
        outln!(
            "{:>6}  attempt {} {} call {}: {}",
            shown.seq,
            c.attempt,
            c.stage.name(),
            c.n,
            headline(c)
        );
        if !shown.asked.is_empty() {
            outln!("          asked: {}", shown.asked);
        }
        if !shown.answered.is_empty() {
            outln!("          answered: {}", shown.answered);
        }
        if let Some(error) = &c.error {
            outln!("          error: {error}");
        }
    }
    Ok(())
}

/// `anthropic messages claude-sonnet-4, streamed: 200 in 1840 ms, 1200/30 tokens, $0.0041`.
fn headline(c: &ModelCall) -> String {
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
