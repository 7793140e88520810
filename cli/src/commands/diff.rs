//! `runlog diff A[@SEQ] B[@SEQ]`: two runs, or two points of one run, compared by task.

use super::Ctx;
use crate::error::Result;
use crate::render;
use runlog_core::projections::Projections;
use runlog_replay::diff::{diff as diff_sides, Diff, Side};
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

/// Two sides (`RUN` or `RUN@SEQ`) replayed and compared; `progress` shows the replays on a
/// terminal (the CLI's, not the API's).
pub(crate) fn compare(
    log: &dyn runlog_store::EventLog,
    left: &str,
    right: &str,
    progress: bool,
) -> Result<(Projections, Projections, Diff)> {
    let replay = Replay::new(log);
    let project = |arg: &str, label: &str| {
        let (run, seq) = side(arg);
        match progress {
            true => replay.project(&run, seq, Some(&mut render::replay_progress(label))),
            false => replay.project(&run, seq, None),
        }
    };
    let pa = project(left, "replaying the left side")?;
    let pb = project(right, "replaying the right side")?;
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
    Ok((pa, pb, d))
}

/// Prints what differs, task by task, then stage by stage.
pub fn run(a: Args, ctx: &Ctx) -> Result<()> {
    let log = ctx.open()?;
    let (ra, rb) = (side(&a.left).0, side(&a.right).0);
    let (pa, pb, d) = compare(&log, &a.left, &a.right, true)?;
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
