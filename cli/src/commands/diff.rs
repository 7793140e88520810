//! `runlog diff A[@SEQ] B[@SEQ]`: two runs, or two points of one run, compared by task.

use super::Ctx;
use crate::error::Result;
use crate::render;
use runlog_replay::diff::{diff as diff_sides, Side};
use runlog_replay::Replay;

/// Arguments of `runlog diff`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Left: RUN or RUN@SEQ.
    left: String,
    /// Right: RUN or RUN@SEQ.
    right: String,
}

/// `RUN` or `RUN@SEQ`.
fn side(arg: &str) -> (String, Option<u64>) {
    match arg.rsplit_once('@') {
        Some((run, seq)) if seq.parse::<u64>().is_ok() => (run.to_owned(), seq.parse().ok()),
        _ => (arg.to_owned(), None),
    }
}

/// Prints what differs, task by task, then stage by stage.
pub fn run(a: Args, ctx: &Ctx) -> Result<()> {
    let log = ctx.open()?;
    let replay = Replay::new(&log);
    let (ra, sa) = side(&a.left);
    let (rb, sb) = side(&a.right);
    let pa = replay.project(
        &ra,
        sa,
        Some(&mut render::replay_progress("replaying the left side")),
    )?;
    let pb = replay.project(
        &rb,
        sb,
        Some(&mut render::replay_progress("replaying the right side")),
    )?;
    let d = diff_sides(
        Side {
            state: &pa.state,
            stack: &pa.stack,
        },
        Side {
            state: &pb.state,
            stack: &pb.stack,
        },
    );
    if ctx.json {
        render::json(&d);
        return Ok(());
    }
    println!("diff {ra}@{} → {rb}@{}", pa.state.seq, pb.state.seq);
    if d.is_empty() {
        println!("  no differences");
    }
    for t in &d.tasks {
        println!("  {:<20} {}", t.task, render::task_changes(t).join("; "));
    }
    for s in &d.stages {
        println!(
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
    Ok(())
}
