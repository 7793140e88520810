//! The one way the binary builds a tokio runtime: the engine and the server build none of their
//! own, the command that hosts them does.

use crate::error::{CliError, Result};

/// A runtime of `threads` async threads (at least 1) and at most `blocking` blocking ones, each
/// named `runlog-NAME` and running `on_start` first.
pub fn build(
    name: &str,
    threads: usize,
    blocking: usize,
    on_start: impl Fn() + Send + Sync + 'static,
) -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads.max(1))
        .max_blocking_threads(blocking.max(1))
        .thread_name(format!("runlog-{name}"))
        .on_thread_start(on_start)
        .enable_all()
        .build()
}

/// The runtime of a command that drives runs or follows one: two async threads.
pub fn for_command(name: &str) -> Result<tokio::runtime::Runtime> {
    build(name, 2, 512, || {})
        .map_err(|e| CliError::failed(format!("cannot start the {name} runtime: {e}")))
}
