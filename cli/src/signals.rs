//! The signals a person or a service manager sends a `runlog` process: Ctrl-C, SIGTERM, and
//! SIGHUP (the terminal closed, an ssh session dropped). What each means is the command's to
//! say: `runlog run` interrupts its run on any of them (agents run in process groups of their
//! own, so a hangup reaches only the runner: left unhandled it would orphan them), a follower
//! of a server's run stops following on a hangup, and `runlog serve` stays up on one.

use crate::error::{CliError, Result};
use tokio::signal::unix::{signal, Signal as Listener, SignalKind};

/// Which of them came.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    /// Ctrl-C.
    Interrupt,
    /// SIGTERM.
    Terminate,
    /// SIGHUP: the terminal went away.
    Hangup,
}

/// Ctrl-C, SIGTERM and SIGHUP, listened for from creation on.
#[derive(Debug)]
pub struct Signals {
    int: Listener,
    term: Listener,
    hup: Listener,
}

impl Signals {
    /// Listens from now on; must be called inside a runtime.
    pub fn new() -> Result<Self> {
        let listen = |kind| {
            signal(kind).map_err(|e| {
                CliError::failed(format!("cannot listen for Ctrl-C, SIGTERM and SIGHUP: {e}"))
            })
        };
        Ok(Self {
            int: listen(SignalKind::interrupt())?,
            term: listen(SignalKind::terminate())?,
            hup: listen(SignalKind::hangup())?,
        })
    }

    /// Waits for the next one.
    pub async fn next(&mut self) -> Signal {
        tokio::select! {
            _ = self.int.recv() => Signal::Interrupt,
            _ = self.term.recv() => Signal::Terminate,
            _ = self.hup.recv() => Signal::Hangup,
        }
    }

    /// Turns `stop` true at the first signal: how a run driven from a terminal is interrupted.
    pub async fn stop_on_any(mut self, stop: tokio::sync::watch::Sender<bool>) {
        self.next().await;
        let _ = stop.send(true);
    }
}
