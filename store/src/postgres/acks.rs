//! The fault tests' record of what a process saw acknowledged. With it turned on (behind the
//! `testkit` feature), each append of this handle that returned `Ok` is written as a line
//! `WORKER RUN FIRST LAST HASH` (the seqs it took and the chain hash after the last) before
//! the append returns, so that a checker can ask the log for every one of them afterwards.

use crate::types::Head;
use std::io::Write;
use std::sync::Mutex;

/// Where acknowledgements go, if anywhere.
#[derive(Debug, Default)]
pub(super) struct Acks {
    to: Mutex<Option<(std::fs::File, String)>>,
}

impl Acks {
    /// `count` records appended to `run`, acknowledged with `head`.
    pub(super) fn saw(&self, run: &str, count: usize, head: &Head) {
        let mut to = self.to.lock().unwrap_or_else(|p| p.into_inner());
        let Some((file, who)) = to.as_mut() else {
            return;
        };
        let first = (head.seq + 1).saturating_sub(count as u64);
        let line = format!(
            "{who} {run} {first} {} {}\n",
            head.seq,
            crate::layout::hex(&head.hash)
        );
        // One write of the whole line to a file opened for appending: lines of several
        // processes do not interleave.
        if let Err(e) = file.write_all(line.as_bytes()) {
            tracing::warn!(error = %e, "cannot record an acknowledged append");
        }
    }
}

#[cfg(feature = "testkit")]
impl super::PgLog {
    /// Records every append acknowledged from now on to `path`, as `worker`.
    pub fn record_acks(&self, path: &std::path::Path, worker: &str) -> std::io::Result<()> {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?;
        *self.acks.to.lock().unwrap_or_else(|p| p.into_inner()) = Some((file, worker.to_owned()));
        Ok(())
    }

    /// Appends stop checking this process's lease (the lease is still held and renewed): what
    /// the fault tests' checker must then catch.
    pub fn unfence(&self) {
        self.held.unfence();
    }
}
