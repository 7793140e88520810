//! `runlog show RUN TASK --calls`: the task's model calls, each with its model, tokens, cost and
//! time, and in words what was new in its request and what the model answered (read from the
//! bodies the gateway kept).

use crate::error::Result;
use crate::queries::calls::CallsView;
use runlog_core::usage::usd;
use runlog_core::Event;
use runlog_store::EventLog;

/// Prints the model calls in `story` (of attempt `attempt`, when given).
pub(super) fn print(
    log: &dyn EventLog,
    run: &str,
    task: &str,
    story: &[(u64, Event)],
    attempt: Option<u32>,
    json: bool,
) -> Result<()> {
    let view = CallsView::of(log, run, task, story, attempt, false);
    if json {
        return crate::render::json(&view);
    }
    let (calls, total) = (&view.calls, &view.total);
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
    for shown in calls {
        let c = &shown.call;
        outln!(
            "{:>6}  attempt {} {} call {}: {}",
            shown.seq,
            c.attempt,
            c.stage.name(),
            c.n,
            shown.headline
        );
        if !shown.asked.is_empty() {
            outln!("          asked: {}", shown.asked);
        }
        if !shown.answered.is_empty() {
            outln!("          answered: {}", shown.answered);
        }
        if !shown.mapped.is_empty() {
            outln!(
                "          mapped: the recorded answer, in this run's places: {}",
                runlog_core::relocate::Mapped::describe(&shown.mapped)
            );
        }
        if let Some(error) = &c.error {
            outln!("          error: {error}");
        }
    }
    Ok(())
}
