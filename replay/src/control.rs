//! Recording decisions about a run: any command through `decide`, rollbacks, forks, and the
//! lineage between runs. Every write checks the head it decided on (optimistic concurrency).

use crate::error::{ReplayError, Result};
use crate::events;
use crate::history::Replay;
use crate::session::Session;
use runlog_core::{Command, CommandKind, EventKind, Hash, RunId, Timestamp};
use runlog_store::{EventLog, Head};
use serde::Serialize;

pub use crate::events::append;

impl Replay<'_> {
    /// Rolls the run back to the state after `to_seq` by appending `RolledBack`. Nothing is
    /// deleted; the rollback itself can be rolled back.
    pub fn rollback(
        &self,
        run: &str,
        to_seq: u64,
        reason: &str,
        by: &str,
        at: Timestamp,
    ) -> Result<Head> {
        let cmd = CommandKind::Rollback {
            to_seq,
            reason: reason.into(),
            by: by.into(),
        };
        record(Session::existing(self.log(), run)?, Command::new(at, cmd))
    }

    /// Starts run `new_run` from the state of `run` after `at_seq`.
    pub fn fork(&self, run: &str, at_seq: u64, new_run: &str, at: Timestamp) -> Result<Head> {
        let head = self.head_seq(run)?;
        if at_seq == 0 || at_seq > head {
            return Err(ReplayError::SeqPastHead {
                run: run.into(),
                seq: at_seq,
                head,
            });
        }
        if self.log().head(new_run)?.is_some() {
            return Err(ReplayError::RunExists {
                run: new_run.into(),
            });
        }
        let from_hash = self
            .log()
            .hash_at(run, at_seq)?
            .map(Hash)
            .unwrap_or_default();
        let cmd = CommandKind::StartFork {
            run: RunId::from(new_run),
            from_run: RunId::from(run),
            at_seq,
            from_hash,
        };
        record(Session::open(self.log(), new_run)?, Command::new(at, cmd))
    }

    /// Where a run comes from and which runs were forked from it.
    pub fn lineage(&self, run: &str) -> Result<Lineage> {
        self.head_seq(run)?;
        let parent = fork_origin(self.log(), run)?;
        let mut children = Vec::new();
        for meta in self.log().runs()? {
            if let Some(origin) = fork_origin(self.log(), &meta.run)? {
                if origin.from_run == run {
                    children.push(Child {
                        run: meta.run,
                        at_seq: origin.at_seq,
                    });
                }
            }
        }
        Ok(Lineage {
            run: run.into(),
            parent,
            children,
        })
    }
}

/// Records one command through a session; the new head.
fn record(mut session: Session<'_>, cmd: Command) -> Result<Head> {
    session.execute(cmd)??;
    events::head(session.replay().log(), session.run())
}

/// What a rerun is, read from the events right after its fork; `None` for any other run.
pub fn rerun_of(log: &dyn EventLog, run: &str) -> Result<Option<runlog_core::rerun::Rerun>> {
    // `runlog rerun` records it second, after the fork; a run begun otherwise has none there.
    Ok(events::read(log, run, 2, 2)?
        .into_iter()
        .find_map(|(_, e)| match e.kind {
            EventKind::RerunStarted(rerun) => Some(*rerun),
            _ => None,
        }))
}

/// Which experiment a rerun belongs to, read from its lineage (third, after its fork and its
/// `rerun-started`); `None` for any other run.
pub fn experiment_of(
    log: &dyn EventLog,
    run: &str,
) -> Result<Option<runlog_core::experiment::ExperimentRerun>> {
    Ok(events::read(log, run, 3, 3)?
        .into_iter()
        .find_map(|(_, e)| match e.kind {
            EventKind::ExperimentRerun(r) => Some(*r),
            _ => None,
        }))
}

/// A fork's origin, read from its first event.
pub fn fork_origin(log: &dyn EventLog, run: &str) -> Result<Option<Origin>> {
    Ok(events::read(log, run, 1, 1)?
        .into_iter()
        .find_map(|(_, e)| match e.kind {
            EventKind::Forked {
                from_run,
                at_seq,
                from_hash,
                ..
            } => Some(Origin {
                from_run: from_run.0,
                at_seq,
                from_hash: from_hash.to_hex(),
            }),
            _ => None,
        }))
}

/// Where a fork starts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Origin {
    /// The parent run.
    pub from_run: String,
    /// The parent's seq.
    pub at_seq: u64,
    /// The parent's chain hash there.
    pub from_hash: String,
}

/// A run forked from another.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Child {
    /// The fork.
    pub run: String,
    /// Where it starts in the parent.
    pub at_seq: u64,
}

/// Both directions of a run's lineage.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Lineage {
    /// The run.
    pub run: String,
    /// Its origin, if it is a fork.
    pub parent: Option<Origin>,
    /// Its forks.
    pub children: Vec<Child>,
}
