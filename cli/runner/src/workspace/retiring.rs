//! What a run's workspace leaves behind: a merged task's worktree handed on to the next task
//! that starts (its branch kept as a ref), and at the run's end every merged or cancelled
//! task's worktree and every spare removed.

use super::{RunWorkspace, SPARE};
use crate::git::{ref_part, Git, GitError};
use runlog_core::{RunState, TaskId, TaskStatus};
use std::path::{Path, PathBuf};

impl RunWorkspace {
    /// A task whose work needs no worktree any more (merged; or cancelled, and the run over):
    /// its worktree gone from the task (handed on as a spare while the run goes on, see
    /// [`Self::take_spare`]), its branch deleted, its last commit kept as
    /// `refs/runlog-task/RUN/TASK` (safe from `git gc`; `runlog show --diff` reads the log).
    pub fn retire(&self, state: &RunState, task: &TaskId) -> Result<(), GitError> {
        let path = self.worktree(state, task);
        let branch = format!("refs/heads/{}", self.task_branch(task));
        if let Some(tip) = self.repo.commit_of(&branch) {
            let kept = self.kept_tip(task);
            self.repo.set_ref(&kept, &tip, None)?;
            self.push(&tip, &kept, true)?;
        }
        let running = matches!(state.status, runlog_core::RunStatus::Running);
        if path.exists() && !(running && self.keep_spare(&path)) {
            self.repo.remove_worktree(&path)?;
        }
        self.drop_ref(&branch)?;
        Ok(())
    }

    /// The spare worktrees of the run on this host: worktrees no task holds (a name no task
    /// can have: ids never start with '.').
    pub(super) fn spares(&self) -> Vec<PathBuf> {
        let Ok(entries) = std::fs::read_dir(self.layout.work()) else {
            return Vec::new();
        };
        let mut spares: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with(SPARE))
            })
            .collect();
        spares.sort();
        spares
    }

    /// Keeps a retired task's worktree as a spare: detached (its files untouched), moved
    /// aside. `false` when it could not be, and it is to be removed.
    pub(super) fn keep_spare(&self, path: &Path) -> bool {
        if !path.join(".git").exists() {
            return false;
        }
        let taken = self.spares();
        let Some(spare) = (0..)
            .map(|n| self.layout.work().join(format!("{SPARE}{n}")))
            .find(|p| !taken.contains(p))
        else {
            return false;
        };
        Git::at(path)
            .run(&["checkout", "--quiet", "--detach"])
            .is_ok()
            && self
                .repo
                .run(&[
                    "worktree",
                    "move",
                    &path.to_string_lossy(),
                    &spare.to_string_lossy(),
                ])
                .is_ok()
    }

    /// Makes a task's worktree at `path` from a spare, when the run has one: moved there and
    /// checked out on `branch` at `start`, untracked and ignored files removed, so it holds
    /// exactly what a new worktree would. Checking out another commit in a worktree writes the
    /// files that differ, where a new worktree writes every file (and removing one deletes
    /// every file): on a repository of 5,000 files, most of what a task's workspace cost.
    pub(super) fn take_spare(
        &self,
        path: &Path,
        branch: &str,
        start: &str,
    ) -> Result<bool, GitError> {
        for spare in self.spares() {
            if !spare.join(".git").exists() {
                let _ = std::fs::remove_dir_all(&spare);
                continue;
            }
            let (from, to) = (spare.to_string_lossy(), path.to_string_lossy());
            if self.repo.run(&["worktree", "move", &from, &to]).is_err() {
                continue;
            }
            let wt = Git::at(path);
            wt.run(&["checkout", "--quiet", "--force", "-B", branch, start])?;
            wt.run(&["clean", "-d", "-x", "--force", "--quiet"])?;
            return Ok(true);
        }
        Ok(false)
    }

    /// At the run's end: every task whose work is merged or cancelled retired (a succeeded
    /// run leaves its integration branch and refs only); a failed or waiting task keeps its
    /// worktree for a person, until the run succeeds, is rolled back past it or is forgotten.
    pub fn close(&self, state: &RunState) -> Result<(), GitError> {
        if state.workspace.is_none() {
            return Ok(());
        }
        // One look at the run's task branches, not a git call a task.
        let branches: std::collections::HashSet<String> = self
            .repo
            .refs_under(&format!(
                "refs/heads/runlog-task/{}/",
                ref_part(self.layout.run())
            ))?
            .into_iter()
            .collect();
        for t in state.tasks_in_order() {
            let settled = t.code.merged.is_some() || t.status == TaskStatus::Cancelled;
            let branch = format!("refs/heads/{}", self.task_branch(&t.spec.id));
            if settled && (branches.contains(&branch) || self.worktree(state, &t.spec.id).exists())
            {
                self.retire(state, &t.spec.id)?;
            }
        }
        for spare in self.spares() {
            self.repo.remove_worktree(&spare)?;
        }
        Ok(())
    }
}
