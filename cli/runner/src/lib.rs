//! runlog-runner: the engine that executes a workflow's runs. A [`Workflow`] file becomes a run
//! through a [`Launcher`] (start, resume, a child run, a worker joining); an [`Engine`] drives it
//! to its end through the one write path (`runlog_replay::Session`) and the pure dispatch policy
//! (`runlog_core::dispatch`), running agents, tests and evaluators as processes.
//!
//! The engine takes over nothing of the process that hosts it: it installs no signal handler,
//! draws nothing and builds no runtime. Its driver hands it a stop switch
//! ([`Engine::stop_when`]) and an [`Observer`], and drives it on its own tokio runtime; the
//! store is shared with it (`Arc`). Failures are [`RunnerError`]s, never a command line's.
//!
//! ```no_run
//! use runlog_runner::{Host, Launcher, RunOptions, Workflow};
//! use std::sync::Arc;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let store = Arc::new(runlog_store::Store::open(".runlog".as_ref(), Default::default())?);
//! let wf = Workflow::load("fixtures/workflows/quickstart.toml".as_ref())?;
//! // The environment is read once, by the program that hosts the runner.
//! let host = Host::from_env();
//! let engine = Launcher::new(store, ".runlog".as_ref(), &host).start(&wf, None, RunOptions::default())?;
//! let (stop, stopped) = tokio::sync::watch::channel(false);
//! let ended = tokio::runtime::Runtime::new()?.block_on(engine.stop_when(stopped).drive())?;
//! # drop(stop);
//! println!("succeeded: {}", ended.succeeded());
//! # Ok(())
//! # }
//! ```

pub mod alerting;
pub mod clock;
mod crew;
mod engine;
mod error;
pub mod finished;

pub mod git;
mod history;
mod host;

mod launch;
mod layout;
pub mod lease;
pub mod marker;
mod observer;
pub mod paths;
pub mod process;
pub mod protocol;
mod revision;
mod spare;
mod step;
mod sub_project;
pub mod workflow;
pub mod workspace;

pub use crew::Crew;
pub use engine::{Access, Context, Ended, Engine, RunOptions};
pub use error::{RunnerError, WorkflowError};
pub use host::{Granting, Host};
pub use launch::{free_run_id, Launcher};
pub use layout::Layout;
pub use observer::{Observer, Unobserved};
pub use revision::{added_specs, parse_revision, PlanError};
pub use sub_project::is_child_of;
pub use workflow::discovery::conventions_hint;
pub use workflow::{GatewayPlan, RunnerSettings, Workflow};
