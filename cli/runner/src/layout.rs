//! Every path of a run's files on this host, named in one place: the store directory (for the
//! shared store, this host's directory for it) and, below it, the run's work directory with its
//! worktrees, feedback and history files, the process groups of its commands, and the marker
//! that says a runner executes it.

use crate::paths::within;
use runlog_core::TaskId;
use std::path::{Path, PathBuf};

/// Where a run's files are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    store: PathBuf,
    run: String,
}

impl Layout {
    /// The files of `run` in the store directory `store`, made absolute: commands run in the
    /// workflow's directory and must not depend on the current one.
    pub fn new(store: &Path, run: &str) -> Self {
        Self {
            store: std::path::absolute(store).unwrap_or_else(|_| store.to_path_buf()),
            run: run.to_owned(),
        }
    }

    /// The store directory (for the shared store, this host's directory for it).
    pub fn store(&self) -> &Path {
        &self.store
    }

    /// The run.
    pub fn run(&self) -> &str {
        &self.run
    }

    /// `STORE/worktrees/RUN`: worktrees, feedback and history files.
    pub fn work(&self) -> PathBuf {
        within(&self.store.join("worktrees"), &self.run)
    }

    /// A worktree of the run by its recorded name.
    pub fn worktree(&self, name: &str) -> PathBuf {
        within(&self.work(), name)
    }

    /// The feedback file (`RUNLOG_FEEDBACK`) of the command running in `slot`: the lowest
    /// number no other running command of this engine holds. Rewritten for each command, so a
    /// run leaves as many as it ran commands at once, not one per task: on ext4 without a
    /// journal every new file searches past the inodes deleted in the last minutes, and a
    /// no-op DAG spent a quarter of its time making its tasks' files. The process id keeps
    /// two engines of a run on one host (workers) apart. A dot starts it: no task's file can be
    /// this one.
    pub fn feedback(&self, slot: usize) -> PathBuf {
        self.command_file(slot, "feedback")
    }

    /// The story file (`RUNLOG_HISTORY`) of the command running in `slot`, as
    /// [`Layout::feedback`].
    pub fn history(&self, slot: usize) -> PathBuf {
        self.command_file(slot, "history.jsonl")
    }

    fn command_file(&self, slot: usize, what: &str) -> PathBuf {
        self.work()
            .join(format!(".{}.{slot}.{what}", std::process::id()))
    }

    /// The file a task's commands (or, for none, the replanner) append usage lines to
    /// (`RUNLOG_USAGE`).
    pub fn usage(&self, task: Option<&TaskId>) -> PathBuf {
        match task {
            Some(t) => within(&self.work(), &format!("{t}.usage.jsonl")),
            // Task ids never start with a dot: no task's file can be this one.
            None => within(&self.work(), ".replan.usage.jsonl"),
        }
    }

    /// Where the process groups of the run's commands are listed while they run.
    pub fn groups(&self) -> PathBuf {
        self.work().join(".groups")
    }

    /// The marker a runner holds while it executes the run (see [`crate::marker`]).
    pub fn marker(&self) -> PathBuf {
        within(&self.store.join("runners"), &self.run)
    }
}

/// Writes `bytes` over the file at `path` (made if missing) for a command to read. Not by
/// truncating first: ext4 flushes a file truncated to nothing and written again when it is
/// closed (its guard against empty files after a crash), a disk write per command for files
/// that are rewritten every command and need no durability.
pub fn rewrite(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)?;
    f.write_all(bytes)?;
    let len = u64::try_from(bytes.len()).unwrap_or(u64::MAX);
    if f.metadata()?.len() != len {
        f.set_len(len)?;
    }
    Ok(())
}

/// Empties the file at `path` if there is one (a usage file a command made by appending):
/// the next command starts with none of its lines, and no file is made for a command that
/// reports nothing.
pub fn empty_if_present(path: &Path) {
    let _ = std::fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(path);
}
