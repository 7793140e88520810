//! The values the log hands out.

use crate::error::Damage;
use std::time::Duration;

/// The end of a run's log: last seq and the chain hash after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Head {
    /// Last sequence number (1-based).
    pub seq: u64,
    /// Chain hash after it.
    pub hash: [u8; 32],
}

/// A record borrowed during a scan.
#[derive(Debug, Clone, Copy)]
pub struct RecordRef<'a> {
    /// Sequence number.
    pub seq: u64,
    /// The body, checksum-verified.
    pub body: &'a [u8],
    /// The chain hash after this record.
    pub hash: &'a [u8; 32],
}

/// An owned record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// The run.
    pub run: String,
    /// Sequence number.
    pub seq: u64,
    /// The chain hash after this record.
    pub hash: [u8; 32],
    /// The body.
    pub body: Vec<u8>,
}

/// A run as the store knows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunMeta {
    /// Run id.
    pub run: String,
    /// When its first append happened (ms since the epoch).
    pub created_ms: u64,
    /// Its head, if it has records.
    pub head: Option<Head>,
}

/// Which way to read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Oldest first.
    Forward,
    /// Newest first.
    Backward,
}

/// What an acknowledged append guarantees.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Durability {
    /// The append returns after a real fdatasync: acknowledged records survive power loss.
    Durable,
    /// The append returns once the records are in the store's memory; a background sync runs
    /// every `interval` and on close. A crash loses at most the last interval.
    Buffered {
        /// How often to sync.
        interval: Duration,
    },
}

/// The outcome of walking a run's checksums and chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifyReport {
    /// The run.
    pub run: String,
    /// Records whose checksum and chain link were checked and found good.
    pub verified: u64,
    /// The head as stored.
    pub head: Option<Head>,
    /// The first damage found, if any.
    pub damage: Option<Damage>,
}

impl VerifyReport {
    /// No damage.
    pub fn is_ok(&self) -> bool {
        self.damage.is_none()
    }
}
