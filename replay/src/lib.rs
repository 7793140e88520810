//! runlog-replay: answers questions about any point of a run's history.
//!
//! [`Replay`] folds a run's events from the log (never re-executing anything) into every
//! projection of `runlog-core`, at the head or at any seq, starting from validated snapshots.
//! [`control`] records rollbacks, forks and any command through `decide`; [`diff`] compares two
//! states; [`export`] round-trips a run through JSON lines; [`digest`] pins a run's head so it
//! can be checked later; [`stats`] says how large a run's history has grown. Every write goes
//! through a [`Session`], the one write path.
//!
//! ```
//! use runlog_core::{Command, CommandKind, Hash, RunId, Settings, TaskSpec, Timestamp};
//! use runlog_replay::{Replay, ReplayError, Session};
//! use runlog_store::Log;
//!
//! let log = Log::memory()?;
//! let mut session = Session::open(&log, "r1")?;
//! let mut spec = TaskSpec::new("build", "build the parser");
//! spec.run = Some("./agent.sh".into());
//! let start = CommandKind::StartRun {
//!     run: RunId::from("r1"),
//!     workflow: "example".into(),
//!     workflow_hash: Hash::of(b"example"),
//!     settings: Settings::default(),
//!     tasks: vec![spec],
//!     cost: Default::default(),
//!     review: Default::default(),
//! };
//! session.execute(Command::new(Timestamp(1_000), start))??;
//! let go = CommandKind::StartTask { task: "build".into(), agent: None, worktree: None };
//! session.execute(Command::new(Timestamp(2_000), go))??;
//! // Roll back to the state after seq 2: nothing is deleted, the rollback is an event.
//! let back = CommandKind::Rollback { to_seq: 2, reason: "retry".into(), by: "me".into() };
//! session.execute(Command::new(Timestamp(3_000), back))??;
//! let replay = Replay::new(&log);
//! assert_eq!(replay.head_state("r1")?.tasks, replay.state_at("r1", 2)?.tasks);
//! # Ok::<(), ReplayError>(())
//! ```

pub mod control;
pub mod diff;
pub mod digest;
mod error;
pub mod events;
pub mod export;
pub mod forgotten;
mod history;
mod read_ahead;
mod session;
pub mod snapshot;
pub mod stats;

pub use error::{ReplayError, Result};
pub use history::{Progress, Replay, SnapshotSchedule, DEFAULT_SNAPSHOT_EVERY};
pub use session::{Commit, Observer, Recorded, Session};
