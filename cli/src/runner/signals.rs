//! The signals that stop a run cleanly: Ctrl-C, SIGTERM, and SIGHUP (the terminal closed, an
//! ssh session dropped). Each interrupts the run: running commands are stopped, the interrupt is
//! recorded, and `runlog resume` continues. Agents run in process groups of their own, so a
//! hangup reaches only the runner: left unhandled it would orphan them.

use super::engine::Result;
use super::error::RunnerError;
use tokio::signal::unix::{signal, Signal, SignalKind};

/// Which of them came.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// Ctrl-C.
    Interrupt,
    /// SIGTERM.
    Terminate,
    /// SIGHUP: the terminal went away.
    Hangup,
    /// An interrupt asked through the API.
    Asked,
}

/// Ctrl-C, SIGTERM and SIGHUP; and, for a run a server hosts, an interrupt asked through its
/// API.
#[derive(Debug)]
pub struct Signals {
    int: Signal,
    term: Signal,
    hup: Signal,
    asked: Option<tokio::sync::watch::Receiver<bool>>,
}

impl Signals {
    /// Listens from now on; must be called inside a runtime.
    pub fn new() -> Result<Self> {
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
            asked: None,
        })
    }

    /// Also ends `recv` when `asked` turns true.
    pub(super) fn or_asked(mut self, asked: Option<tokio::sync::watch::Receiver<bool>>) -> Self {
        self.asked = asked;
        self
    }

    /// Waits for the next one.
    pub async fn next(&mut self) -> Stop {
        let asked = async {
            match self.asked.as_mut() {
                Some(asked) => {
                    let _ = asked.wait_for(|yes| *yes).await;
                }
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            _ = self.int.recv() => Stop::Interrupt,
            _ = self.term.recv() => Stop::Terminate,
            _ = self.hup.recv() => Stop::Hangup,
            () = asked => Stop::Asked,
        }
    }
}
