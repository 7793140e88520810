//! What a command sent to a run recorded (`POST /v1/runs/{run}/commands`, a budget change).

use crate::render::event::Worded;
use runlog_core::Event;

/// The events a command recorded, with their words, and the run's head after them.
#[derive(Debug, serde::Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct Recorded<'a> {
    /// The run.
    pub run: &'a str,
    /// Its head seq after the command.
    pub head: u64,
    /// The events it recorded.
    pub events: Vec<Worded<'a>>,
    /// The command had been sent before with its idempotency key: these are the events it
    /// recorded then, and nothing was recorded now.
    pub replayed: bool,
}

impl<'a> Recorded<'a> {
    /// `events`, recorded on `run` whose head is now `head` (`replayed`: recorded before, by
    /// the same command with the same key).
    pub fn of(run: &'a str, head: u64, events: &'a [(u64, Event)], replayed: bool) -> Self {
        Self {
            run,
            head,
            events: events.iter().map(|(seq, e)| Worded::of(*seq, e)).collect(),
            replayed,
        }
    }
}

/// A run this server now executes (a start, a rerun), or one it is stopping.
#[derive(Debug, serde::Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct Executing {
    /// The run.
    pub run: String,
    /// The run it reruns, for a rerun.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from_run: Option<String>,
    /// True: the server executes it.
    pub executing: bool,
}

/// A run this server is interrupting.
#[derive(Debug, serde::Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct Interrupting {
    /// The run.
    pub run: String,
    /// True: its commands are being stopped.
    pub interrupting: bool,
}
