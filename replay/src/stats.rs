//! How large a run's history has grown, and a warning before it hurts: other engines let long
//! runs grow without bound until replays crawl.

use crate::error::Result;
use crate::history::Replay;
use crate::snapshot;
use serde::Serialize;

/// A run's history in numbers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HistoryStats {
    /// The run.
    pub run: String,
    /// Events.
    pub events: u64,
    /// Bytes of encoded events.
    pub bytes: u64,
    /// Snapshots cached.
    pub snapshots: u64,
    /// The warning threshold in force (the run's `history_warn_events`).
    pub warn_events: u64,
    /// Set when the history is past the threshold.
    pub warning: Option<String>,
}

impl Replay<'_> {
    /// The run's history stats.
    pub fn stats(&self, run: &str) -> Result<HistoryStats> {
        let state = self.head_state(run)?;
        let mut bytes = 0u64;
        self.log().scan(run, 1, state.seq, &mut |r| {
            bytes += r.body.len() as u64;
            Ok(true)
        })?;
        let warn_events = state.settings.history_warn_events;
        let warning = (state.seq > warn_events).then(|| {
            format!(
                "run {run} has {} events, past its warning threshold of {warn_events}: replays from the start slow down and the log keeps growing; fork from a recent seq (`runlog fork`) or export and archive it",
                state.seq
            )
        });
        Ok(HistoryStats {
            run: run.into(),
            events: state.seq,
            bytes,
            snapshots: snapshot::list(self.log(), run).len() as u64,
            warn_events,
            warning,
        })
    }
}
