//! Replay errors: a missing run or seq (with what exists instead), a store failure, an event
//! that cannot be decoded, a command the rules refuse, a bad import.

use runlog_core::Rejection;
use runlog_store::StoreError;
use thiserror::Error;

/// Everything replay can fail with.
#[derive(Debug, Error)]
pub enum ReplayError {
    /// No run with this id.
    #[error("no run {run}{}", if known.is_empty() { " (the store has no runs)".to_owned() } else { format!("; runs: {}", known.join(", ")) })]
    UnknownRun {
        /// The id asked for.
        run: String,
        /// The runs that exist.
        known: Vec<String>,
    },
    /// The run was forgotten: its records are gone, its tombstone in the register of
    /// forgotten runs keeps its digest.
    #[error("run {run} was forgotten by {by} at {}: {reason}", runlog_store::layout::utc(at.0))]
    Forgotten {
        /// The run.
        run: String,
        /// Who forgot it, and how that was established.
        by: String,
        /// When.
        at: runlog_core::Timestamp,
        /// Why, as given.
        reason: String,
    },
    /// A seq past the run's head.
    #[error("run {run} has no seq {seq}: its history ends at seq {head}")]
    SeqPastHead {
        /// The run.
        run: String,
        /// The seq asked for.
        seq: u64,
        /// The head.
        head: u64,
    },
    /// The run already exists.
    #[error("run {run} already exists")]
    RunExists {
        /// The run.
        run: String,
    },
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A record is not a valid event.
    #[error("run {run} seq {seq} is not a valid event: {cause}")]
    Decode {
        /// The run.
        run: String,
        /// The seq.
        seq: u64,
        /// Why.
        cause: runlog_core::codec::CodecError,
    },
    /// An event could not be encoded for the log (nothing was written).
    #[error("cannot encode an event of run {run}: {cause}")]
    Encode {
        /// The run.
        run: String,
        /// Why.
        cause: runlog_core::codec::CodecError,
    },
    /// The rules refused the command.
    #[error(transparent)]
    Rejected(#[from] Rejection),
    /// The thread reading events for a replay stopped without an answer.
    #[error("the event reader of run {run} stopped unexpectedly")]
    ReaderStopped {
        /// The run.
        run: String,
    },
    /// Writing an export failed (the destination, not the run, is at fault).
    #[error("cannot write the export of run {run}: {cause}")]
    ExportWrite {
        /// The run.
        run: String,
        /// The OS error.
        cause: std::io::Error,
    },
    /// An export file is not valid.
    #[error("import line {line}: {reason}")]
    Import {
        /// 1-based line number.
        line: usize,
        /// What is wrong.
        reason: String,
    },
}

impl ReplayError {
    /// What to do about it, in words that do not depend on the interface (a front end may
    /// say it in its own syntax).
    pub fn hint(&self) -> Option<String> {
        match self {
            ReplayError::UnknownRun { .. } => Some("list the runs in the store".into()),
            ReplayError::Forgotten { .. } => Some(
                "verify the run: its tombstone keeps its digest, against which a kept export still checks"
                    .into(),
            ),
            ReplayError::SeqPastHead { head, .. } => {
                Some(format!("pick a seq between 1 and {head}"))
            }
            ReplayError::RunExists { .. } => Some("choose another run id".into()),
            ReplayError::Store(e) => e.hint(),
            ReplayError::Decode { .. } => Some("verify the run".into()),
            ReplayError::Encode { .. } => {
                Some("this is a runlog bug; nothing was written, so the log is intact".into())
            }
            ReplayError::Rejected(r) => Some(r.hint()),
            ReplayError::Import { .. } => Some("the file must be an export of one run".into()),
            ReplayError::ExportWrite { .. } => {
                Some("check the destination (disk space, permissions) and export again".into())
            }
            ReplayError::ReaderStopped { .. } => Some("verify the run and try again".into()),
        }
    }
}

/// Shorthand.
pub type Result<T> = std::result::Result<T, ReplayError>;
