//! The signals that stop a run cleanly: Ctrl-C, SIGTERM, and SIGHUP (the terminal closed, an
//! ssh session dropped). Each interrupts the run: running commands are stopped, the interrupt is
//! recorded, and `runlog resume` continues. Agents run in process groups of their own, so a
//! hangup reaches only the runner: left unhandled it would orphan them.

use super::engine::Result;
use super::error::RunnerError;
use tokio::signal::unix::{signal, Signal, SignalKind};

/// Ctrl-C, SIGTERM and SIGHUP.
pub(super) struct Signals {
    int: Signal,
    term: Signal,
    hup: Signal,
}

impl Signals {
    pub(super) fn new() -> Result<Self> {
        let listen = |kind| {
            signal(kind).map_err(|source| RunnerError::System {
                what: "listen for Ctrl-C, SIGTERM and SIGHUP",
                source,
            })
        };
        Ok(Self {
            int: listen(SignalKind::interrupt())?,
            term: listen(SignalKind::terminate())?,
            hup: listen(SignalKind::hangup())?,
        })
    }

    pub(super) async fn recv(&mut self) {
        tokio::select! {
            _ = self.int.recv() => {}
            _ = self.term.recv() => {}
            _ = self.hup.recv() => {}
        }
    }
}
