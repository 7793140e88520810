//! `runlog stack RUN [--at SEQ]`: the supervisor state stack, newest first, and the latest
//! result per stage.

use crate::ctx::Ctx;
use crate::error::Result;
use crate::queries::stack::StackView;
use crate::render;
use runlog_replay::Replay;

/// Arguments of `runlog stack`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The run.
    run: String,
    /// As it was after this seq.
    #[arg(long, value_name = "SEQ")]
    at: Option<u64>,
}

/// Prints the stack and the latest results.
pub fn run(a: Args, ctx: &Ctx) -> Result<()> {
    let run = a.run.as_str();
    let log = ctx.open()?;
    let p =
        Replay::new(&log).project(run, a.at, Some(&mut render::replay_progress("replaying")))?;
    if ctx.json {
        render::json(&StackView::of(run, &p))?;
        return Ok(());
    }
    let latest = p.stack.all_latest_results();
    outln!(
        "supervisor stack of {run} at seq {} ({} entries, newest first)",
        p.state.seq,
        p.stack.len()
    );
    for e in p.stack.newest_first() {
        let what = match (&e.result, &e.error) {
            (_, Some((err, kind))) => format!("failed [{kind}] {}", render::event::first_line(err)),
            (Some(r), None) => {
                format!("completed {}", serde_json::to_string(r).unwrap_or_default())
            }
            (None, None) => "completed".into(),
        };
        outln!(
            "{:>6}  {:<18} {:<18} {:>6} ms  retries {}  {what}",
            e.seq,
            e.stage.as_str(),
            e.task.as_str(),
            e.duration_ms,
            e.retry_count
        );
    }
    outln!("latest result per stage:");
    for (stage, result) in latest {
        outln!(
            "  {:<18} {}",
            stage.as_str(),
            serde_json::to_string(result).unwrap_or_default()
        );
    }
    Ok(())
}
