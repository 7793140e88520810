//! What every command gets besides its own arguments: the global options, and the store they
//! name.

use crate::error::Result;
use runlog_store::Store;
use std::path::PathBuf;

/// What every command gets besides its own arguments: the global options.
#[derive(Debug, Clone)]
pub struct Ctx {
    /// The store directory; for the shared store, this host's directory for its worktrees,
    /// sockets and logs.
    pub store: PathBuf,
    /// The shared store's URL, when `--store` is a PostgreSQL one.
    pub shared: Option<String>,
    /// `--json`: machine-readable output.
    pub json: bool,
    /// What this process's environment gave, read once as it started.
    pub host: runlog_runner::Host,
}

impl Ctx {
    /// Opens the store, which must exist (the shared store is created on first use).
    pub fn open(&self) -> Result<Store> {
        self.open_with(false)
    }

    /// Opens the store, creating it if needed (commands that start or import runs).
    pub fn open_or_create(&self) -> Result<Store> {
        self.open_with(true)
    }

    fn open_with(&self, create: bool) -> Result<Store> {
        match &self.shared {
            Some(url) => crate::store::connect(url),
            None => crate::store::open(&self.store, create),
        }
    }

    /// The store as messages name it: its directory, or the shared store's server without its
    /// password.
    pub fn store_name(&self) -> String {
        match &self.shared {
            Some(url) => runlog_store::postgres::without_password(url),
            None => self.store.display().to_string(),
        }
    }

    /// The `runlog` command line that reaches this store again, for the hints a run prints.
    pub fn command(&self) -> String {
        if self.shared.is_none() && self.store == std::path::Path::new(".runlog") {
            "runlog".to_owned()
        } else {
            format!("runlog --store {}", self.store_name())
        }
    }

    /// Refuses a command that works on a store directory's files when the store is shared.
    pub fn directory_only(&self, command: &str) -> Result<()> {
        match &self.shared {
            None => Ok(()),
            Some(_) => Err(crate::error::CliError::input(format!(
                "`runlog {command}` works on a store directory, not on PostgreSQL"
            ))
            .with_hint(
                "PostgreSQL keeps its own write-ahead log and backups (pg_dump, point-in-time \
                 recovery); `runlog verify` checks every run's chain there",
            )),
        }
    }
}
