//! A run's digest: its head seq and chain hash, small enough to keep somewhere else and check
//! later. The chain only grows, so a digest stays checkable after the run goes on.

use crate::error::Result;
use crate::events;
use runlog_core::Hash;
use runlog_store::EventLog;
use serde::{Deserialize, Serialize};

/// What pins a run's history up to a seq.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct Digest {
    /// The run.
    pub run: String,
    /// The seq it pins.
    pub head_seq: u64,
    /// The chain hash after that seq (hex).
    pub head_hash: String,
}

/// The outcome of checking a digest against the log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "result", rename_all = "kebab-case")]
pub enum DigestCheck {
    /// The log has the same history up to the digest's seq.
    Matches,
    /// The log's history up to that seq differs: it was changed.
    Differs {
        /// The hash found.
        found: String,
    },
    /// The log ends before the digest's seq.
    Missing {
        /// The log's head.
        head: u64,
    },
}

/// The digest of a run's current head.
pub fn digest(log: &dyn EventLog, run: &str) -> Result<Digest> {
    let head = events::head(log, run)?;
    Ok(Digest {
        run: run.into(),
        head_seq: head.seq,
        head_hash: Hash(head.hash).to_hex(),
    })
}

/// Checks a saved digest.
pub fn check(log: &dyn EventLog, d: &Digest) -> Result<DigestCheck> {
    let head = events::head(log, &d.run)?;
    if head.seq < d.head_seq {
        return Ok(DigestCheck::Missing { head: head.seq });
    }
    let found = log
        .hash_at(&d.run, d.head_seq)?
        .map(|h| Hash(h).to_hex())
        .unwrap_or_default();
    Ok(if found == d.head_hash {
        DigestCheck::Matches
    } else {
        DigestCheck::Differs { found }
    })
}
