//! Which store a command uses: `--store`, else `RUNLOG_STORE`, else `.runlog/` here. A
//! `postgres://` URL names the shared store instead of a directory.

use crate::error::{CliError, Result};
use runlog_store::{Options, Store};
use std::path::{Path, PathBuf};

/// Where a shared store's files local to this host live (worktrees, sockets, logs) when
/// `RUNLOG_LOCAL_DIR` does not say: `.runlog-shared/SERVER` here, one directory per database.
const LOCAL_DIR: &str = ".runlog-shared";

/// The store chosen: its directory (for a shared store, this host's directory for it) and,
/// for a shared store, its URL.
pub fn chosen(flag: Option<&Path>) -> (PathBuf, Option<String>) {
    let text = flag.and_then(Path::to_str).unwrap_or_default();
    if runlog_store::postgres::is_url(text) {
        let local = std::env::var_os("RUNLOG_LOCAL_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| {
                let server = runlog_store::postgres::without_password(text);
                let hash = blake3::hash(server.as_bytes()).to_hex();
                Path::new(LOCAL_DIR).join(hash.get(..16).unwrap_or_default())
            });
        return (local, Some(text.to_owned()));
    }
    let dir = flag
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from(".runlog"));
    (dir, None)
}

/// Connects to the shared store.
pub fn connect(url: &str) -> Result<Store> {
    Store::connect(url).map_err(CliError::from)
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
        errln!("note: {note}");
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
