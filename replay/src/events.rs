//! Reading a run's events: records from the store, decoded (checksums were verified first).

use crate::error::{ReplayError, Result};
use runlog_core::codec::{decode_event, encode_event};
use runlog_core::{Event, EventKind};
use runlog_store::{EventLog, Head};

/// Appends events that were decided elsewhere (a recorded history being rebuilt, a test's
/// fixture) to a run whose head is `expected`. Live decisions go through
/// [`Session`](crate::Session), which appends through this too.
pub fn append(log: &dyn EventLog, run: &str, expected: u64, events: &[Event]) -> Result<Head> {
    let bodies = events
        .iter()
        .map(encode_event)
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|source| ReplayError::Encode {
            run: run.to_owned(),
            cause: source,
        })?;
    Ok(log.append(run, Some(expected), bodies)?)
}

/// The run's head; `Forgotten` for a run forgotten, `UnknownRun` listing the runs that exist
/// for a name that never was one. The register of forgotten runs is no run to read.
pub fn head(log: &dyn EventLog, run: &str) -> Result<Head> {
    match log.head(run)? {
        Some(h) if !crate::forgotten::is_register(run) => Ok(h),
        _ => Err(crate::forgotten::unknown_run(log, run)),
    }
}

/// A visitor of decoded events: `(seq, event)`; false stops the walk.
pub type Visit<'v> = &'v mut dyn FnMut(u64, Event) -> Result<bool>;

/// A visitor of decoded events with their chain hashes: `(seq, chain hash after it, event)`.
pub type VisitHashed<'v> = &'v mut dyn FnMut(u64, &[u8; 32], Event) -> Result<bool>;

/// Calls `f(seq, event)` for the events with seq in `from..=to`, in order, until it returns
/// false. The store checks every record as it reads it; a record's own chain hash is not
/// worked out (see [`for_each_hashed`]).
pub fn for_each(log: &dyn EventLog, run: &str, from: u64, to: u64, f: Visit<'_>) -> Result<()> {
    let mut failure: Option<ReplayError> = None;
    let scanned = log.scan_bodies(run, from, to, &mut |seq, body| {
        settle(
            decode(run, seq, body).and_then(|event| f(seq, event)),
            &mut failure,
        )
    });
    finish(failure, scanned)
}

/// [`for_each`] with each event's chain hash, `f(seq, chain hash, event)`: what an export
/// writes on each line. Dearer for a run of the blocked chain, whose reads otherwise check a
/// block's records together.
pub fn for_each_hashed(
    log: &dyn EventLog,
    run: &str,
    from: u64,
    to: u64,
    f: VisitHashed<'_>,
) -> Result<()> {
    let mut failure: Option<ReplayError> = None;
    let scanned = log.scan(run, from, to, &mut |r| {
        settle(
            decode(run, r.seq, r.body).and_then(|event| f(r.seq, r.hash, event)),
            &mut failure,
        )
    });
    finish(failure, scanned)
}

/// A visitor's outcome as the store's scan takes it: a failure stops the scan and is kept.
fn settle(outcome: Result<bool>, failure: &mut Option<ReplayError>) -> runlog_store::Result<bool> {
    match outcome {
        Ok(go) => Ok(go),
        Err(e) => {
            *failure = Some(e);
            Ok(false)
        }
    }
}

/// A scan's result, the visitor's failure first.
fn finish(failure: Option<ReplayError>, scanned: runlog_store::Result<()>) -> Result<()> {
    match (failure, scanned) {
        (Some(e), _) => Err(e),
        (None, r) => Ok(r?),
    }
}

/// The event a record of `run` at `seq` holds (as a subscription delivers it, say).
///
/// Inlined, like [`decode_event`], so that the event is not copied out through each `Result`.
#[inline]
pub fn decode(run: &str, seq: u64, body: &[u8]) -> Result<Event> {
    decode_event(body).map_err(|source| ReplayError::Decode {
        run: run.to_owned(),
        seq,
        cause: source,
    })
}

/// The events with seq in `from..=to`, with their seqs.
pub fn read(log: &dyn EventLog, run: &str, from: u64, to: u64) -> Result<Vec<(u64, Event)>> {
    let mut out = Vec::new();
    for_each(log, run, from, to, &mut |seq, e| {
        out.push((seq, e));
        Ok(true)
    })?;
    Ok(out)
}

/// An event as JSON shows it (`log --json`, the API, an agent's history file, a live follower): its seq, time and kind.
#[derive(Debug, serde::Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct EventLine<'a> {
    /// Its seq in the run.
    pub seq: u64,
    /// When, in ms since the epoch.
    pub at: u64,
    /// What happened.
    pub event: &'a EventKind,
}

impl<'a> EventLine<'a> {
    /// The line of one event.
    pub fn of(seq: u64, e: &'a Event) -> Self {
        Self {
            seq,
            at: e.at.0,
            event: &e.kind,
        }
    }
}
