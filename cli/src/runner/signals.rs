//! The signals that stop a run cleanly: Ctrl-C and SIGTERM.

use super::engine::Result;
use super::error::RunnerError;

/// Ctrl-C and SIGTERM.
pub(super) struct Signals {
    int: tokio::signal::unix::Signal,
    term: tokio::signal::unix::Signal,
}

impl Signals {
    pub(super) fn new() -> Result<Self> {
        use tokio::signal::unix::{signal, SignalKind};
        let err = |source| RunnerError::System {
            what: "listen for Ctrl-C and SIGTERM",
            source,
        };
        Ok(Self {
            int: signal(SignalKind::interrupt()).map_err(err)?,
            term: signal(SignalKind::terminate()).map_err(err)?,
        })
    }

    pub(super) async fn recv(&mut self) {
        tokio::select! {
            _ = self.int.recv() => {}
            _ = self.term.recv() => {}
        }
    }
}
