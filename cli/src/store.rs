//! Which store a command uses: `--store`, else `RUNLOG_STORE`, else `.runlog/` here.

use crate::error::{CliError, Result};
use runlog_store::{Options, Store};
use std::path::{Path, PathBuf};

/// The store directory chosen.
pub fn dir(flag: Option<&Path>) -> PathBuf {
    flag.map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from(".runlog"))
}

/// Opens the store (`create` for commands that start runs): by owning it, or through the
/// runlog process that owns it now.
pub fn open(dir: &Path, create: bool) -> Result<Store> {
    open_store(dir, create).map_err(|e| explain(dir, e))
}

fn open_store(dir: &Path, create: bool) -> std::result::Result<Store, runlog_store::StoreError> {
    let log = Store::open(
        dir,
        Options {
            create,
            ..Options::default()
        },
    )?;
    // What opening set aside after a crash is said once, where a person will see it.
    for note in log.recovery_notes() {
        eprintln!("note: {note}");
    }
    Ok(log)
}

/// The store's error for a person: a missing store says how to get one.
pub fn explain(dir: &Path, e: runlog_store::StoreError) -> CliError {
    if !dir.exists() {
        return CliError::input(format!("no runlog store at {}", dir.display()))
            .with_hint("run a workflow first (`runlog run WORKFLOW`), or point --store / RUNLOG_STORE at the store");
    }
    CliError::from(e)
}

/// The first of `PREFIX-1`, `PREFIX-2`... that names no run yet.
pub fn free_run_id(log: &Store, prefix: &str) -> Result<String> {
    use runlog_store::EventLog;
    let runs = log.runs()?;
    let taken = |id: &str| runs.iter().any(|r| r.run == id);
    Ok((1..)
        .map(|n| format!("{prefix}-{n}"))
        .find(|id| !taken(id))
        .unwrap_or_else(|| prefix.to_owned()))
}
