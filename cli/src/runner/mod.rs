//! The workflow runner, with its own boundary so that the CLI and, later, a server can host
//! engines: a [`Workflow`] file becomes a run; an [`Engine`] drives it to its end through the
//! one write path (`runlog_replay::Session`) and the pure dispatch policy
//! (`runlog_core::dispatch`); failures are [`RunnerError`]s, never the CLI's errors.

pub mod clock;
mod crew;
mod discovery;
mod engine;
mod error;
mod exec_shim;
mod history;
pub mod process;
pub mod protocol;
pub mod signals;
mod sub_project;
mod view;
pub mod workflow;

pub use crew::Crew;
pub use discovery::conventions_hint;
pub use engine::{Context, Ended, Engine, RunOptions};
pub use error::{RunnerError, WorkflowError};
pub use sub_project::is_child_of;
pub use view::View;
pub use workflow::{parse_revision, RunnerSettings, Workflow};
