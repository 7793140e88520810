//! Two runs, or two points of one run (`RUN@SEQ`), replayed and compared by task (`runlog diff`,
//! `GET /v1/diff`).

use runlog_core::projections::Projections;
use runlog_replay::diff::{diff as diff_sides, Diff, Side};
use runlog_replay::{Replay, Result};

/// `RUN` or `RUN@SEQ`.
pub fn side(arg: &str) -> (String, Option<u64>) {
    match arg.rsplit_once('@') {
        Some((run, seq)) if seq.parse::<u64>().is_ok() => (run.to_owned(), seq.parse().ok()),
        _ => (arg.to_owned(), None),
    }
}

/// Two sides (`RUN` or `RUN@SEQ`) replayed and compared; `progress` shows the replays on a
/// terminal (the CLI's, not the API's).
pub fn compare(
    log: &dyn runlog_store::EventLog,
    left: &str,
    right: &str,
    progress: bool,
) -> Result<(Projections, Projections, Diff)> {
    let replay = Replay::new(log);
    let project = |arg: &str, label: &str| {
        let (run, seq) = side(arg);
        match progress {
            true => replay.project(&run, seq, Some(&mut crate::render::replay_progress(label))),
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
