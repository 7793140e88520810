//! runlog-core: the pure domain of runlog.
//!
//! A run is a stream of [`Event`]s. [`decide`] turns a [`Command`] and the current
//! [`RunState`] into new events or a typed [`Rejection`]; [`evolve`] applies an event to the
//! state; [`fold`] replays a whole stream (rollbacks and forks included). Projections in
//! [`projections`] are further folds for people: the task board, the supervisor stack, stage
//! health, the eval audit, the run summary.
//!
//! Nothing here does I/O, reads a clock or starts a thread: time arrives inside commands.

pub mod codec;
pub mod command;
pub mod decide;
pub mod dispatch;
pub mod event;
pub mod evolve;
pub mod feedback;
pub mod files;
pub mod fold;
pub mod ids;
pub mod plan;
pub mod projections;
pub mod rejection;
#[cfg(feature = "testkit")]
pub mod scenarios;
#[cfg(feature = "testkit")]
pub mod script;
pub mod settings;
pub mod spec;
pub mod state;
#[cfg(feature = "testkit")]
pub mod synthetic;
pub mod value;

pub use command::{Command, CommandKind};
pub use decide::decide;
pub use decide::outcome;
pub use event::{Event, EventKind, GateOutcome, Replacement, RunOutcome};
pub use evolve::evolve;
pub use fold::{fold, fold_with, state_at};
pub use ids::{AgentId, Hash, RunId, StageId, TaskId, Timestamp};
pub use rejection::Rejection;
pub use settings::{Budget, RetryLimit, RetryStrategy, Settings};
pub use spec::{TaskClass, TaskSpec};
pub use state::{Readiness, RunState, RunStatus, TaskState, TaskStatus};
pub use value::Value;
