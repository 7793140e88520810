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
//!
//! ```
//! use runlog_store::{Direction, EventLog, Log, StoreError};
//!
//! let log = Log::memory()?;
//! // A new run's head is 0: the first append expects it, the next expects 2.
//! let head = log.append("r1", Some(0), vec![b"first".to_vec(), b"second".to_vec()])?;
//! assert_eq!(head.seq, 2);
//! let stale = log.append("r1", Some(1), vec![b"late".to_vec()]);
//! assert!(matches!(stale, Err(StoreError::Conflict { .. })));
//! let records = log.read("r1", 1, 2, Direction::Forward)?;
//! assert_eq!(records[1].body, b"second");
//! assert!(log.verify("r1")?.is_ok());
//! # Ok::<(), StoreError>(())
//! ```

pub mod archive;
pub mod backend;
pub mod blob_dir;
pub mod blocks;
mod chain;
mod error;
mod forget;
pub mod frame;
pub mod heads;
pub mod layout;
mod log;
mod packed;
pub mod postgres;
pub mod remote;
mod repair;
mod salvage;
#[cfg(feature = "testkit")]
pub mod testkit;
pub mod tls;
mod types;
mod verify;
pub mod wal;
mod writer;

pub use blocks::Chain;
pub use error::{Damage, DamageKind, Result, StoreError};
pub use forget::{forget, Forgot};
pub use log::{EventLog, Log, Options, MAX_RECORD_BYTES};
pub use postgres::PgLog;
pub use remote::Store;
pub use repair::{repair, Repaired, RunRepaired};
pub use salvage::{salvage, Salvaged, SalvagedRun};
pub use types::{Direction, Durability, Head, Record, RecordRef, RunMeta, VerifyReport};
