//! Verifying one run: checksums, the chain, and that every body decodes as an event
//! (`runlog verify`, `GET /v1/runs/{run}/verify`).

use runlog_replay::Result;
use runlog_store::EventLog;
use serde::Serialize;

/// What verifying one run found (`verify --json`, the API's `GET /v1/runs/{run}/verify`).
/// Fields in the alphabetical order `--json` has always printed them in.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct Checked {
    /// The first damage, if any.
    pub damage: Option<Found>,
    /// The run's head.
    pub head_seq: Option<u64>,
    /// No damage.
    pub ok: bool,
    /// The run.
    pub run: String,
    /// Events verified (before the damage, if any).
    pub verified: u64,
    /// For a forgotten run: its tombstone (its events are gone; the tombstone is verified
    /// with the register of forgotten runs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub forgotten: Option<crate::queries::forget::Tombstone>,
}

impl Checked {
    /// No damage.
    pub fn is_ok(&self) -> bool {
        self.ok
    }
}

/// The first damage in a run.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct Found {
    /// What kind of damage.
    pub kind: &'static str,
    /// What is wrong, in words.
    pub reason: String,
    /// Where.
    pub seq: u64,
}

/// Walks a run's checksums and chain, and decodes every event: a body that is not an event is
/// damage all the same (the store vouches for bytes, not meaning).
pub fn check(log: &dyn EventLog, run: &str) -> Result<Checked> {
    let report = log.verify(run)?;
    let undecodable = match (&report.damage, report.head) {
        (None, Some(head)) => first_undecodable(log, run, head.seq)?,
        _ => None,
    };
    let damage = match (&report.damage, undecodable) {
        (Some(d), _) => Some(Found {
            seq: d.seq,
            kind: d.kind.name(),
            reason: d.to_string(),
        }),
        (None, Some((seq, why))) => Some(Found {
            seq,
            kind: "undecodable",
            reason: format!("seq {seq} does not decode as an event: {why}"),
        }),
        (None, None) => None,
    };
    let verified = match &damage {
        Some(d) if d.kind == "undecodable" => d.seq - 1,
        _ => report.verified,
    };
    Ok(Checked {
        run: run.to_owned(),
        ok: damage.is_none(),
        verified,
        head_seq: report.head.map(|h| h.seq),
        damage,
        forgotten: None,
    })
}

/// A forgotten run: what its tombstone says, once the register's chain verifies (damage in
/// the register is reported as the register's).
pub fn check_forgotten(log: &dyn EventLog, run: &str) -> Result<Option<Checked>> {
    let Some(tombstone) = crate::queries::forget::tombstone_of(log, run)? else {
        return Ok(None);
    };
    let register = check(log, runlog_core::FORGOTTEN_RUNS)?;
    if !register.ok {
        return Ok(Some(register));
    }
    Ok(Some(Checked::forgotten(tombstone)))
}

impl Checked {
    /// A forgotten run, as its verified tombstone says it stood.
    pub fn forgotten(tombstone: crate::queries::forget::Tombstone) -> Self {
        Self {
            run: tombstone.run.clone(),
            ok: true,
            verified: 0,
            head_seq: Some(tombstone.head_seq),
            damage: None,
            forgotten: Some(tombstone),
        }
    }
}

/// The first seq of a run whose body is not an event, with why.
fn first_undecodable(log: &dyn EventLog, run: &str, head: u64) -> Result<Option<(u64, String)>> {
    match runlog_replay::events::for_each(log, run, 1, head, &mut |_, _| Ok(true)) {
        Ok(()) => Ok(None),
        Err(runlog_replay::ReplayError::Decode {
            seq, cause: source, ..
        }) => Ok(Some((seq, source.to_string()))),
        Err(e) => Err(e),
    }
}
