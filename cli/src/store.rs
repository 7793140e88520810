//! Which store a command uses: `--store`, else `RUNLOG_STORE`, else `.runlog/` here.

use crate::error::{CliError, Result};
use runlog_store::{Log, Options};
use std::path::{Path, PathBuf};

/// The store directory chosen.
pub fn dir(flag: Option<&Path>) -> PathBuf {
    flag.map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from(".runlog"))
}

/// Opens the store; `create` for commands that start runs.
pub fn open(dir: &Path, create: bool) -> Result<Log> {
    Log::open(dir, Options { create, ..Options::default() }).map_err(|e| {
        let missing = matches!(&e, runlog_store::StoreError::NotAStore { why, .. } if why.contains("does not exist"));
        let err = CliError::from(e);
        if missing {
            CliError::input(format!("no runlog store at {}", dir.display()))
                .with_hint("run a workflow first (`runlog run WORKFLOW`), or point --store / RUNLOG_STORE at the store")
        } else {
            err
        }
    })
}
