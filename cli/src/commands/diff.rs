//! `runlog diff A[@SEQ] B[@SEQ]`: two runs, or two points of one run, compared by task.

use crate::ctx::Ctx;
use crate::error::Result;
use crate::queries::diff::{compare, side};
use crate::render;

/// Arguments of `runlog diff`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Left: RUN or RUN@SEQ.
    left: String,
    /// Right: RUN or RUN@SEQ.
    right: String,
}

/// Prints what differs, task by task, then stage by stage.
pub fn run(a: Args, ctx: &Ctx) -> Result<()> {
    let log = ctx.open()?;
    let (ra, rb) = (side(&a.left).0, side(&a.right).0);
    let (pa, pb, d) = compare(&log, &a.left, &a.right, true)?;
    let body = crate::queries::diff::body(&log, &a.left, &a.right, &d)?;
    if ctx.json {
        render::json(&body)?;
        return Ok(());
    }
    outln!("diff {ra}@{} → {rb}@{}", pa.state.seq, pb.state.seq);
    if d.is_empty() {
        outln!("  no differences");
    }
    for t in &d.tasks {
        outln!("  {:<20} {}", t.task, render::task_changes(t).join("; "));
    }
    for s in &d.stages {
        outln!(
            "  stage {:<14} {} → {}",
            s.stage,
            s.left
                .as_ref()
                .map_or("-".into(), |v| serde_json::to_string(v).unwrap_or_default()),
            s.right
                .as_ref()
                .map_or("-".into(), |v| serde_json::to_string(v).unwrap_or_default())
        );
    }
    if let Some(r) = body.rerun {
        outln!("  {}'s model calls: {}", r.run, r.said);
        for d in &r.calls.divergences {
            outln!("  diverged: {d}");
        }
    }
    Ok(())
}
