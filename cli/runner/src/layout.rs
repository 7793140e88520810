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

    /// The file with a task's feedback from its last failed test or eval.
    pub fn feedback(&self, task: &TaskId) -> PathBuf {
        within(&self.work(), &format!("{task}.feedback"))
    }

    /// The run's empty feedback file: `RUNLOG_FEEDBACK` of every task with nothing to say.
    pub fn no_feedback(&self) -> PathBuf {
        // Task ids never start with a dot: no task's file can be this one.
        self.work().join(".no.feedback")
    }

    /// The file with a task's story so far (`RUNLOG_HISTORY`).
    pub fn history(&self, task: &TaskId) -> PathBuf {
        within(&self.work(), &format!("{task}.history.jsonl"))
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
