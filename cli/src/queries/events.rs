//! A page of a run's events with their words (`GET /v1/runs/{run}/events`).

use crate::render::event::Worded;
use runlog_core::{Event, EventKind};
use runlog_replay::Result;
use runlog_store::EventLog;

/// The most events one page holds.
pub const MAX_PAGE: u64 = 10_000;

/// Which events a page holds: seqs `from..=to` (a page at most), of one task, of one kind.
#[derive(Debug, Clone, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Asked {
    /// The first seq (default 1).
    pub from: Option<u64>,
    /// The last seq (default the head).
    pub to: Option<u64>,
    /// Only the events about this task.
    pub task: Option<String>,
    /// Only the events of this kind.
    pub kind: Option<String>,
}

/// The events a page was read from, owned; [`Read::page`] is the view over them.
#[derive(Debug)]
pub struct Read {
    run: String,
    head: u64,
    events: Vec<(u64, Event)>,
    next: Option<u64>,
}

/// One page of a run's events, each with its words, and where the next page starts.
#[derive(Debug, serde::Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct EventsPage<'a> {
    /// The run.
    pub run: &'a str,
    /// Its head seq.
    pub head: u64,
    /// The page's events, in order.
    pub events: Vec<Worded<'a>>,
    /// The seq the next page starts at, when there is more.
    pub next: Option<u64>,
}

impl Read {
    /// The page as it is sent.
    pub fn page(&self) -> EventsPage<'_> {
        EventsPage {
            run: &self.run,
            head: self.head,
            events: self
                .events
                .iter()
                .map(|(seq, e)| Worded::of(*seq, e))
                .collect(),
            next: self.next,
        }
    }
}

/// Whether `kind` names an event kind.
pub fn is_kind(kind: &str) -> bool {
    EventKind::NAMES.contains(&kind)
}

/// Reads the page of `run` that `asked` names.
pub fn read(log: &dyn EventLog, run: &str, asked: &Asked) -> Result<Read> {
    let replay = runlog_replay::Replay::new(log);
    let head = replay.head_seq(run)?;
    let from = asked.from.unwrap_or(1).max(1);
    let last = asked.to.unwrap_or(head).min(head);
    let to = last.min(from.saturating_add(MAX_PAGE - 1));
    let mut events = Vec::new();
    runlog_replay::events::for_each(log, run, from, to, &mut |seq, e| {
        let task_ok = asked
            .task
            .as_deref()
            .is_none_or(|t| e.kind.task().is_some_and(|id| id.as_str() == t));
        let kind_ok = asked.kind.as_deref().is_none_or(|k| k == e.kind.name());
        if task_ok && kind_ok {
            events.push((seq, e));
        }
        Ok(true)
    })?;
    Ok(Read {
        run: run.to_owned(),
        head,
        events,
        next: (to < last).then_some(to + 1),
    })
}
