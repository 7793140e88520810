//! The register of forgotten runs read back: each run's tombstone (who forgot it, when, why,
//! and the digest it keeps), and the error a command gets when it names a run that is gone.

use crate::error::{ReplayError, Result};
use runlog_core::codec::decode_event;
use runlog_core::{Event, EventKind, Forgotten, Timestamp, FORGOTTEN_RUNS};
use runlog_store::EventLog;

/// A run's tombstone as the register holds it.
#[derive(Debug, Clone)]
pub struct Tombstone {
    /// Its own seq in the register.
    pub seq: u64,
    /// When the run was forgotten.
    pub at: Timestamp,
    /// What it keeps of the run.
    pub forgotten: Forgotten,
}

impl Tombstone {
    /// Who forgot the run, and how that was established: `alice (token)`.
    pub fn by(&self) -> String {
        format!("{} ({})", self.forgotten.principal, self.forgotten.via)
    }
}

/// Whether `run` is one of the store's registers (of forgotten runs, of an experiment), which
/// no listing shows as a run: their names start with '.', which no run's can.
pub fn is_register(run: &str) -> bool {
    run == FORGOTTEN_RUNS || run.starts_with('.')
}

/// Every tombstone, oldest first.
pub fn tombstones(log: &dyn EventLog) -> Result<Vec<Tombstone>> {
    let mut out = Vec::new();
    log.scan(FORGOTTEN_RUNS, 1, u64::MAX, &mut |r| {
        if let Ok(Event {
            at,
            kind: EventKind::RunForgotten(f),
        }) = decode_event(r.body)
        {
            out.push(Tombstone {
                seq: r.seq,
                at,
                forgotten: *f,
            });
        }
        Ok(true)
    })?;
    Ok(out)
}

/// The latest tombstone of `run`, if it was forgotten.
pub fn tombstone_of(log: &dyn EventLog, run: &str) -> Result<Option<Tombstone>> {
    Ok(tombstones(log)?
        .into_iter()
        .rev()
        .find(|t| t.forgotten.run.as_str() == run))
}

/// The runs of the store that a person can name (the register left out).
pub fn run_names(log: &dyn EventLog) -> Result<Vec<String>> {
    Ok(log
        .runs()?
        .into_iter()
        .filter(|r| r.head.is_some() && !is_register(&r.run))
        .map(|r| r.run)
        .collect())
}

/// Why the store has no run `run`: it was forgotten (its tombstone says by whom, when and
/// why), or there never was one (with the runs there are).
pub fn unknown_run(log: &dyn EventLog, run: &str) -> ReplayError {
    match tombstone_of(log, run) {
        Ok(Some(t)) => ReplayError::Forgotten {
            run: run.to_owned(),
            by: t.by(),
            at: t.at,
            reason: t.forgotten.reason,
        },
        Ok(None) => ReplayError::UnknownRun {
            run: run.to_owned(),
            known: run_names(log).unwrap_or_default(),
        },
        Err(e) => e,
    }
}
