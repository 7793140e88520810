//! Two runs, or two points of one run (`RUN@SEQ`), replayed and compared by task (`runlog diff`,
//! `GET /v1/diff`).

use crate::queries::rerun::Answered;
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

/// The diff as its JSON body (the CLI's `--json` and the API's): the diff, and `rerun` when one
/// side is a rerun of the other.
#[derive(Debug, serde::Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct DiffView<'a> {
    /// What differs.
    #[serde(flatten)]
    pub diff: &'a Diff,
    /// How the rerun's calls were answered.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rerun: Option<RerunCalls>,
}

/// A rerun's calls, beside a diff of it and the run it reruns.
#[derive(Debug, serde::Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct RerunCalls {
    /// The rerun.
    pub run: String,
    /// How its calls were answered.
    pub calls: Answered,
    /// The same in words.
    pub said: String,
}

/// `d`'s body, the rerun's calls found when one side reruns the other.
pub fn body<'a>(
    log: &dyn runlog_store::EventLog,
    left: &str,
    right: &str,
    d: &'a Diff,
) -> Result<DiffView<'a>> {
    let rerun =
        crate::queries::rerun::between(log, &side(left).0, &side(right).0)?.map(|(run, calls)| {
            RerunCalls {
                run,
                said: calls.describe(),
                calls,
            }
        });
    Ok(DiffView { diff: d, rerun })
}
