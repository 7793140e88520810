//! runlog-core: the pure domain of runlog.
//!
//! A run is a stream of [`Event`]s. [`decide`] turns a [`Command`] and the current
//! [`RunState`] into new events or a typed [`Rejection`]; [`evolve`] applies an event to the
//! state; [`fold`] replays a whole stream (rollbacks and forks included). Projections in
//! [`projections`] are further folds for people: the task board, the supervisor stack, stage
//! health, the eval audit, the run summary.
//!
//! Nothing here does I/O, reads a clock or starts a thread: time arrives inside commands.
//!
//! ```
//! use runlog_core::{decide, fold, Command, CommandKind, Hash, RunId, Settings, TaskSpec,
//!                   TaskStatus, Timestamp};
//!
//! let mut spec = TaskSpec::new("build", "build the parser");
//! spec.run = Some("./agent.sh".into());
//! spec.requires_testing = false;
//! let start = Command::new(Timestamp(1_000), CommandKind::StartRun {
//!     run: RunId::from("r1"),
//!     workflow: "example".into(),
//!     workflow_hash: Hash::of(b"example"),
//!     settings: Settings::default(),
//!     tasks: vec![spec],
//!     cost: Default::default(),
//!     review: Default::default(),
//! });
//! let mut events = decide(&Default::default(), start).expect("a valid plan");
//! let state = fold(&events);
//! let go = Command::new(Timestamp(2_000), CommandKind::StartTask {
//!     task: "build".into(),
//!     agent: None,
//!     worktree: None,
//! });
//! events.extend(decide(&state, go).expect("build is ready"));
//! assert_eq!(fold(&events).status_of(&"build".into()), Some(TaskStatus::InProgress));
//! // Starting it twice is a typed rejection, never a panic.
//! let again = Command::new(Timestamp(3_000), CommandKind::StartTask {
//!     task: "build".into(),
//!     agent: None,
//!     worktree: None,
//! });
//! assert!(decide(&fold(&events), again).is_err());
//! ```

pub mod alerts;
pub mod calendar;
pub mod codec;
mod command;
pub mod conversation;
mod decide;
pub mod dialect;
pub mod dispatch;
mod error_type;
mod event;
mod evolve;
pub mod experiment;
mod family;
mod feedback;
mod files;
pub mod fold;
mod ids;
pub mod model_call;
pub mod outside;
mod plan;
pub mod projections;
pub mod redact;
mod rejection;
pub mod relocate;
pub mod rerun;
pub mod reservation;
pub mod review;
#[cfg(feature = "testkit")]
pub mod scenarios;
#[cfg(feature = "testkit")]
pub mod script;
mod settings;
mod spec;
mod state;
mod state_codec;
#[cfg(feature = "testkit")]
pub mod synthetic;
pub mod usage;
mod value;

pub use command::{Change, Changes, Command, CommandKind, CostPolicy, Principal, Via};
pub use decide::{decide, outcome, startable};
pub use error_type::ErrorType;
pub use event::{
    Event, EventKind, Forgotten, GateOutcome, Replacement, RunOutcome, FORGOTTEN_RUNS,
};
pub use evolve::{evolve, evolve_in_place};
pub use family::Family;
pub use feedback::eval_feedback;
pub use files::{is_destructive, paths_in, touched_files};
pub use fold::{fold, fold_with, state_at};
pub use ids::{
    not_a_name, AgentId, Hash, IdMap, RunId, StageId, TaskId, Timestamp, MAX_NAME, NAME_RULE,
};
pub use plan::{check_name, depth_among, plan_hash, validate_settings};
pub use rejection::Rejection;
pub use settings::{Budget, RetryLimit, RetryStrategy, Settings, MAX_NESTING, MAX_RETRY_DELAY_MS};
pub use spec::{TaskClass, TaskSpec};
pub use state::{
    Circuit, ForkOrigin, KeyedCommand, ParentLink, PendingReplan, Readiness, ReplanRequest,
    RunInfo, RunState, RunStatus, StageHealth, SubProject, TaskCode, TaskState, TaskStatus,
    Workspace,
};
pub use value::{Value, MAX_DEPTH as MAX_VALUE_DEPTH};
