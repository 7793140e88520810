//! runlog-replay: answers questions about any point of a run's history.
//!
//! [`Replay`] folds a run's events from the log (never re-executing anything) into every
//! projection of `runlog-core`, at the head or at any seq, starting from validated snapshots.
//! [`control`] records rollbacks, forks and any command through `decide`; [`diff`] compares two
//! states; [`export`] round-trips a run through JSON lines; [`digest`] pins a run's head so it
//! can be checked later; [`stats`] says how large a run's history has grown.

pub mod control;
pub mod diff;
pub mod digest;
pub mod error;
pub mod events;
pub mod export;
pub mod history;
pub mod session;
pub mod snapshot;
pub mod stats;

pub use error::{ReplayError, Result};
pub use history::{Replay, DEFAULT_SNAPSHOT_EVERY};
pub use session::{Recorded, Session};
