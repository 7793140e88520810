//! The questions the command line and the API both answer, each asked and serialised once: the
//! CLI's `--json` and the API's body for one question are the same bytes. Errors are the typed
//! errors of the libraries; each interface words its own hints.

pub mod audit;
pub mod board;
pub mod calls;
pub mod cost;
pub mod diff;
pub mod du;
pub mod events;
pub mod experiment;
pub mod forget;
pub mod fork;
pub mod judges;
pub mod recorded;
pub mod rerun;
pub mod runs;
pub mod secrets;
pub mod stack;
pub mod stages;
pub mod story;
pub mod task;
pub mod timeline;
pub mod verify;
