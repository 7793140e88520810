//! runlog-store: the append-only event log.
//!
//! It stores records — a run id, a gapless per-run sequence number and bytes — and does not
//! know what they mean. Records are grouped into frames (one immutable sled value per committed
//! batch), each record checksummed and hash-chained (`hash_n = blake3(hash_{n-1} ‖ body)`).
//! Appends carry the expected head seq (optimistic concurrency), go through one writer thread
//! that commits groups of appends with one real `fdatasync` of runlog's write-ahead log, and are
//! published to subscribers.
//! [`Log::open`] opens the sled store in a directory; [`Log::memory`] keeps the same contract in
//! memory.

pub mod backend;
mod chain;
pub mod error;
pub mod frame;
pub mod layout;
mod log;
pub mod types;
mod verify;
pub mod wal;
mod writer;

pub use error::{Damage, DamageKind, Result, StoreError};
pub use log::{EventLog, Log, Options, MAX_RECORD_BYTES};
pub use types::{Direction, Durability, Head, Record, RecordRef, RunMeta, VerifyReport};
