//! A run over wall-clock time, as `GET /v1/runs/{run}/timeline` answers it (the web view's
//! Timeline tab): the timeline projection folded over the run's whole history.

use runlog_core::projections::timeline::{Timeline, TimelineBuilder};
use runlog_core::Timestamp;
use runlog_replay::{Replay, ReplayError};

/// The timeline of `run`, at its head.
pub fn of(replay: &Replay<'_>, run: &str) -> Result<Timeline, ReplayError> {
    let head = replay.head_seq(run)?;
    let mut builder: Option<TimelineBuilder> = None;
    replay.walk(run, None, &mut |seq, hash, event, state| {
        builder
            .get_or_insert_with(|| TimelineBuilder::new(run, hash))
            .observe(seq, event, state);
    })?;
    Ok(builder.map_or_else(
        || Timeline {
            start: Timestamp(0),
            end: Timestamp(0),
            head,
            rows: Vec::new(),
            marks: Vec::new(),
        },
        TimelineBuilder::finish,
    ))
}
