//! `runlog review [RUN…]`: the verdicts waiting for a person (`[settings] review`), each with
//! its score, notes and the change judged; `runlog approve` and `runlog reject` decide.

use crate::ctx::Ctx;
use crate::error::Result;
use crate::queries::judges::queue;
use crate::render;

/// Arguments of `runlog review`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The runs [default: every run in the store].
    runs: Vec<String>,
}

/// Lists the queue.
pub fn run(a: Args, ctx: &Ctx) -> Result<()> {
    let log = ctx.open()?;
    let waiting = queue(&log, &a.runs)?;
    if ctx.json {
        return render::json(&waiting);
    }
    if waiting.is_empty() {
        outln!("no verdict waits for a person's review");
        return Ok(());
    }
    outln!(
        "{} verdict{} wait{} for a person's review",
        waiting.len(),
        if waiting.len() == 1 { "" } else { "s" },
        if waiting.len() == 1 { "s" } else { "" }
    );
    for w in &waiting {
        let e = &w.entry;
        let decision = e.decision.as_ref().map_or("?".into(), render::gate_word);
        outln!(
            "{} {} attempt {}: score {} (threshold {}, the gate would {decision}), seq {}",
            w.run,
            e.task,
            e.attempt,
            e.score,
            e.threshold.map_or("?".into(), |t| t.to_string()),
            e.seq
        );
        if !e.dimensions.is_empty() {
            outln!(
                "    dimensions: {}",
                e.dimensions
                    .iter()
                    .map(|(k, v)| format!("{k} {v}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
        if !e.notes.is_empty() {
            outln!("    notes: {}", render::event::first_line(&e.notes));
        }
        if let Some(j) = &e.judged {
            outln!(
                "    judged: {} (+{} -{}); `runlog show {} {} --diff --attempt {}`",
                render::join(&j.files),
                j.insertions,
                j.deletions,
                w.run,
                e.task,
                j.attempt
            );
        }
        outln!(
            "    decide: `runlog approve {0} {1}` or `runlog reject {0} {1} --reason WHY`",
            w.run,
            e.task
        );
    }
    Ok(())
}
