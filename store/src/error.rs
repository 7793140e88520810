//! Store errors: what happened, where, and what to do about it.

use std::path::PathBuf;
use thiserror::Error;

/// Where and how a run's log is damaged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Damage {
    /// The first sequence number that cannot be trusted.
    pub seq: u64,
    /// Torn tail (the end of the log is incomplete, as after a crash mid-write) or corruption.
    pub kind: DamageKind,
    /// What exactly is wrong.
    pub reason: String,
}

/// The two kinds of damage, told apart because they call for different actions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DamageKind {
    /// The last frame is incomplete: nothing after it was ever acknowledged as a whole.
    TornTail,
    /// Bytes in the log do not match their checksum or chain: the log was changed or damaged.
    Corrupt,
}

impl DamageKind {
    /// The kebab-case name scripts see: `torn-tail` or `corrupt`.
    pub fn name(self) -> &'static str {
        match self {
            DamageKind::TornTail => "torn-tail",
            DamageKind::Corrupt => "corrupt",
        }
    }
}

impl Damage {
    pub(crate) fn corrupt(seq: u64, reason: impl Into<String>) -> Self {
        Self {
            seq,
            kind: DamageKind::Corrupt,
            reason: reason.into(),
        }
    }

    pub(crate) fn torn(seq: u64, reason: impl Into<String>) -> Self {
        Self {
            seq,
            kind: DamageKind::TornTail,
            reason: reason.into(),
        }
    }
}

impl std::fmt::Display for Damage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = match self.kind {
            DamageKind::TornTail => "torn tail",
            DamageKind::Corrupt => "corruption",
        };
        write!(f, "{kind} at seq {}: {}", self.seq, self.reason)
    }
}

/// Everything that can go wrong in the store.
#[derive(Debug, Error)]
pub enum StoreError {
    /// Another process (or another handle in this one) has the store open.
    #[error("the store at {path} is locked by another runlog process{}", owner.as_deref().map(|o| format!(" ({o})")).unwrap_or_default())]
    Locked {
        /// The store directory.
        path: PathBuf,
        /// Who holds it, as recorded when it was opened.
        owner: Option<String>,
    },
    /// Users other than its owner can write the store directory: anyone of them could rewrite
    /// the log or swap its socket, so it is not opened.
    #[error("the store at {path} can be written by other users (mode {mode:o})")]
    Exposed {
        /// The store directory.
        path: PathBuf,
        /// Its permission bits.
        mode: u32,
    },
    /// The directory exists but is not a runlog store.
    #[error("{path} is not a runlog store: {why}")]
    NotAStore {
        /// The directory.
        path: PathBuf,
        /// What is missing or unexpected.
        why: String,
    },
    /// The store was written by a newer runlog.
    #[error("the store at {path} has format {found}; this runlog reads format {supported}")]
    NewerFormat {
        /// The directory.
        path: PathBuf,
        /// The format found.
        found: u32,
        /// The format this build supports.
        supported: u32,
    },
    /// The expected head did not match: someone else appended first.
    #[error("append conflict on run {run}: expected head seq {expected}, actual {actual}")]
    Conflict {
        /// The run.
        run: String,
        /// The head seq the caller expected.
        expected: u64,
        /// The actual head seq.
        actual: u64,
    },
    /// The log of a run is damaged.
    #[error("run {run}: {damage}")]
    Damaged {
        /// The run.
        run: String,
        /// Where and how.
        damage: Damage,
    },
    /// A sync failed earlier; the store refuses writes because their durability is unknown.
    #[error("the store is poisoned after a failed sync ({cause}); reopen it to recover")]
    Poisoned {
        /// The original failure.
        cause: String,
    },
    /// The store was closed.
    #[error("the store is closed")]
    Closed,
    /// The append is not valid (empty, too large, bad run id).
    #[error("invalid append: {0}")]
    Invalid(String),
    /// The TLS settings of a PostgreSQL URL cannot be used (a mode, a file).
    #[error("PostgreSQL TLS: {0}")]
    Tls(String),
    /// sled reported an error.
    #[error("sled error in {path}: {cause}")]
    Sled {
        /// The store directory.
        path: PathBuf,
        /// sled's error.
        cause: sled::Error,
    },
    /// A file operation failed.
    #[error("{what} {path}: {cause}")]
    Io {
        /// What was being done.
        what: &'static str,
        /// On which file.
        path: PathBuf,
        /// The OS error.
        cause: std::io::Error,
    },
    /// The process that owned the store stopped answering (it exited or was killed).
    #[error("the process owning the store at {path} stopped answering: {why}")]
    OwnerGone {
        /// The store directory.
        path: PathBuf,
        /// What the connection said.
        why: String,
    },
    /// PostgreSQL (the shared store) refused or failed a statement, or could not be reached.
    #[error("PostgreSQL at {at}: {what}: {why}")]
    Postgres {
        /// The server, without its password.
        at: String,
        /// What was being done.
        what: &'static str,
        /// What the server or the connection said.
        why: String,
        /// Whether the connection was lost (the server went away, or was told to end it):
        /// the statement's outcome is unknown until the log is read again.
        lost: bool,
    },
    /// The shared store's schema was made by a newer runlog.
    #[error(
        "PostgreSQL at {at} holds runlog schema {found}; this runlog knows schema {supported}"
    )]
    NewerSchema {
        /// The server, without its password.
        at: String,
        /// The schema found.
        found: i32,
        /// The newest schema this build knows.
        supported: i32,
    },
    /// This process's worker lease expired (or another process joined under its name): the
    /// store refuses what it would record, since others may have taken its tasks on.
    #[error("worker {worker} no longer holds its lease: {why}")]
    Fenced {
        /// The worker.
        worker: String,
        /// What the server found.
        why: String,
    },
    /// Another live worker already has this name.
    #[error("a live worker is already named {worker} (on {host}, pid {pid})")]
    WorkerNameTaken {
        /// The name.
        worker: String,
        /// Its host.
        host: String,
        /// Its process id there.
        pid: i32,
    },
    /// The store's owner reported an error this process has no closer type for.
    #[error("{message}")]
    Owner {
        /// Its message.
        message: String,
    },
}

/// Whether an OS error means the disk (or the quota, or the file size limit) is full.
fn full(e: &std::io::Error) -> bool {
    use std::io::ErrorKind::{FileTooLarge, QuotaExceeded, StorageFull};
    matches!(e.kind(), StorageFull | QuotaExceeded | FileTooLarge)
}

/// Whether an OS error means the store cannot be written at all.
fn read_only(e: &std::io::Error) -> bool {
    use std::io::ErrorKind::{PermissionDenied, ReadOnlyFilesystem};
    matches!(e.kind(), ReadOnlyFilesystem | PermissionDenied)
}

impl StoreError {
    /// The OS error behind this, if a file operation (runlog's or sled's) failed.
    fn os_error(&self) -> Option<&std::io::Error> {
        match self {
            StoreError::Io { cause: source, .. }
            | StoreError::Sled {
                cause: sled::Error::Io(source),
                ..
            } => Some(source),
            _ => None,
        }
    }

    /// Whether the store could not be written: a read-only filesystem or a directory this
    /// user may not write. Opening writes (the lock, sled's log), even for a command that reads.
    pub fn is_read_only(&self) -> bool {
        self.os_error().is_some_and(read_only)
    }

    /// Whether this failed for want of space: appends work again (after reopening the store)
    /// once space is freed, and nothing acknowledged was lost.
    pub fn is_disk_full(&self) -> bool {
        match self {
            StoreError::Io { .. } | StoreError::Sled { .. } => self.os_error().is_some_and(full),
            StoreError::Poisoned { cause } => {
                cause.contains("No space left on device") || cause.contains("File too large")
            }
            _ => false,
        }
    }

    /// Whether sled found its own file unreadable (a flipped byte, a bad sector): the archive
    /// can rebuild it.
    pub fn is_unreadable_database(&self) -> bool {
        matches!(
            self,
            StoreError::Sled {
                cause: sled::Error::Corruption { .. },
                ..
            }
        )
    }

    /// What the user can do about it, in words that do not depend on the interface.
    pub fn hint(&self) -> Option<String> {
        if self.is_disk_full() {
            return Some(
                "the disk holding the store is full: free space, then run the command again \
                 (every acknowledged event is kept; the store refuses writes until it is reopened)"
                    .into(),
            );
        }
        if self.is_read_only() {
            return Some(
                "runlog writes to its store even to read it (a lock and sled's log): make the \
                 directory writable, or copy it (`cp -a`) and use the copy"
                    .into(),
            );
        }
        if self.is_unreadable_database() {
            return Some(
                "sled cannot read its database: repair the store, which rebuilds it from the store's archive and keeps the damaged files aside"
                    .into(),
            );
        }
        match self {
            StoreError::Locked { .. } => Some(
                "use the runlog version that holds the store, wait for it to exit, or use another store directory"
                    .into(),
            ),
            StoreError::NotAStore { .. } => {
                Some("choose an empty or new directory for the store".into())
            }
            StoreError::NewerFormat { .. } => Some("upgrade runlog to read this store".into()),
            StoreError::Exposed { path, .. } => Some(format!(
                "make it private (`chmod 700 {}`) after checking nobody else changed it",
                path.display()
            )),
            StoreError::Conflict { .. } => Some("re-read the run and retry on the new head".into()),
            StoreError::Damaged { .. } => Some(
                "verify the store for the full report; repair it from its archive, or export the intact prefix of the run".into(),
            ),
            StoreError::Poisoned { .. } => Some("check the disk, then reopen the store".into()),
            StoreError::Fenced { .. } => Some(
                "the worker lost its lease (it was cut off from PostgreSQL for longer than the lease, or stopped answering): its attempts go on elsewhere; start the worker again".into(),
            ),
            StoreError::WorkerNameTaken { .. } => Some(
                "choose another --name, or wait until that worker stops and its lease expires".into(),
            ),
            StoreError::NewerSchema { .. } => {
                Some("upgrade runlog on this host to the version the other hosts run".into())
            }
            StoreError::Postgres { lost: true, .. } => Some(
                "the server or the connection went away: check that PostgreSQL is up and reachable, then run the command again (nothing half-written is kept)".into(),
            ),
            _ => None,
        }
    }
}

/// Shorthand.
pub type Result<T> = std::result::Result<T, StoreError>;
