//! A run's git workspace: each task works in a git worktree of its own, on its own branch made
//! from the run's integration branch; what each attempt changed is committed there and
//! recorded; a done task is merged into the integration branch (never into the user's
//! checked-out branch); a rollback moves the branches back to what was recorded, keeping the
//! old tips as refs.
//!
//! Branches: `runlog/RUN` integrates the run's work; `runlog-task/RUN/TASK` holds a task's
//! (git cannot hold `runlog/RUN` and `runlog/RUN/TASK` at once: one ref would be a directory
//! of the other). Old tips a rollback moved away from: `refs/runlog/RUN/before-rollback-SEQ`
//! and `refs/runlog/RUN/TASK/before-rollback-SEQ`.

mod outside;
mod retiring;

pub use outside::Watch;

use crate::git::{ref_part, Author, Git, GitError, Merge};
use crate::layout::Layout;
use crate::workflow::WorkspaceMode;
use runlog_core::{Changes, CommandKind, Hash, RunState, TaskId, TaskState};
use runlog_store::EventLog;
use std::path::{Path, PathBuf};

/// A patch larger than this goes to the blob area; the event keeps its beginning (and an export
/// of the run, which holds events only, keeps every patch up to it).
const INLINE_PATCH: usize = 16 * 1024;

/// A run's workspace on this host: its repository and where the workflow sits in it.
#[derive(Debug, Clone)]
pub struct RunWorkspace {
    /// The repository the worktrees are made from on this host: the workflow's own, or (with a
    /// shared repository) this host's clone of it.
    repo: Git,
    /// A repository shared by workers on several hosts: branches are fetched from it before
    /// they are read and pushed to it after they move.
    remote: Option<String>,
    /// The workflow's directory below the repository's top (commands run there, in a worktree).
    rel: PathBuf,
    layout: Layout,
}

/// What choosing a workspace found.
#[derive(Debug)]
pub enum Found {
    /// Tasks work in git worktrees.
    Git(RunWorkspace),
    /// Tasks work in the workflow's directory; with why, when a person should hear it.
    None(Option<String>),
}

impl RunWorkspace {
    /// The workspace of a run of the workflow in `dir`: git when `mode` asks for it, or (auto)
    /// when `dir` is in a repository.
    pub fn choose(
        dir: &Path,
        mode: WorkspaceMode,
        shared: Option<&str>,
        layout: &Layout,
    ) -> Result<Found, GitError> {
        if mode == WorkspaceMode::None {
            return Ok(Found::None(None));
        }
        if let Some(remote) = shared {
            crate::git::check_version()?;
            return Ok(Found::Git(Self::shared(remote, dir, layout)?));
        }
        let top = Git::toplevel(dir);
        let Some(top) = top else {
            return match mode {
                WorkspaceMode::Git => Err(GitError::Failed {
                    dir: dir.to_path_buf(),
                    args: "rev-parse --show-toplevel".into(),
                    stderr: "workspace = \"git\", and the workflow's directory is not in a git repository".into(),
                }),
                _ => Ok(Found::None(Some(
                    "the workflow is not in a git repository: every task works in the workflow's directory (workspace = \"none\")".into(),
                ))),
            };
        };
        crate::git::check_version()?;
        Ok(Found::Git(Self::local(&top, dir, layout)))
    }

    /// The workspace of a recorded run whose repository is `repo`: the workflow's own, or a
    /// shared one this host works on through a clone.
    pub fn at(repo: &str, dir: &Path, layout: &Layout) -> Result<Self, GitError> {
        let own = Git::toplevel(dir).and_then(|top| std::fs::canonicalize(top).ok());
        let recorded = std::fs::canonicalize(repo).ok();
        match own {
            Some(top) if recorded.as_ref() == Some(&top) => Ok(Self::local(&top, dir, layout)),
            _ => Self::shared(repo, dir, layout),
        }
    }

    fn local(top: &Path, dir: &Path, layout: &Layout) -> Self {
        Self {
            repo: Git::at(top),
            remote: None,
            rel: rel_in(top, dir),
            layout: layout.clone(),
        }
    }

    /// Works on the shared repository `remote` through this host's bare clone of it
    /// (`STORE/repos/HASH`, made on first use).
    fn shared(remote: &str, dir: &Path, layout: &Layout) -> Result<Self, GitError> {
        let hash = blake3::hash(remote.as_bytes()).to_hex();
        let repos = layout.store().join("repos");
        let clone = repos.join(hash.get(..16).unwrap_or_default());
        if !clone.join("HEAD").exists() {
            std::fs::create_dir_all(&repos).map_err(|e| GitError::Failed {
                dir: repos.clone(),
                args: "clone".into(),
                stderr: e.to_string(),
            })?;
            Git::at(&repos).run(&[
                "clone",
                "--bare",
                "--quiet",
                remote,
                &clone.to_string_lossy(),
            ])?;
        }
        let rel = Git::toplevel(dir).map_or_else(PathBuf::new, |top| rel_in(&top, dir));
        let ws = Self {
            repo: Git::at(&clone),
            remote: Some(remote.to_owned()),
            rel,
            layout: layout.clone(),
        };
        ws.fetch()?;
        Ok(ws)
    }

    /// With a shared repository: its branches, fetched into a namespace of this clone's own
    /// (the branches checked out in worktrees here are never written by a fetch).
    fn fetch(&self) -> Result<(), GitError> {
        let Some(remote) = &self.remote else {
            return Ok(());
        };
        self.repo.run(&[
            "fetch",
            "--quiet",
            "--prune",
            remote,
            "+refs/heads/*:refs/runlog-shared/heads/*",
        ])?;
        Ok(())
    }

    /// With a shared repository: pushes `commit` to its ref `name`; `force` for a task's branch
    /// or a rollback (the log says where a runlog branch is, and only the worker holding a task
    /// moves its branch).
    fn push(&self, commit: &str, name: &str, force: bool) -> Result<(), GitError> {
        let Some(remote) = &self.remote else {
            return Ok(());
        };
        let spec = format!("{}{commit}:{name}", if force { "+" } else { "" });
        self.repo.run(&["push", "--quiet", remote, &spec])?;
        Ok(())
    }

    /// Where the integration branch is now: the shared repository's (as last fetched), else
    /// the local one.
    fn integration_now(&self) -> Option<String> {
        let name = match self.remote {
            Some(_) => format!("refs/runlog-shared/heads/{}", self.branch()),
            None => format!("refs/heads/{}", self.branch()),
        };
        self.repo.commit_of(&name)
    }

    /// The repository as the run records it: the shared one, or the workflow's own top
    /// directory.
    pub fn repo(&self) -> String {
        self.remote
            .clone()
            .unwrap_or_else(|| self.repo.dir().display().to_string())
    }

    /// The run's integration branch.
    pub fn branch(&self) -> String {
        format!("runlog/{}", ref_part(self.layout.run()))
    }

    /// A task's branch.
    pub fn task_branch(&self, task: &TaskId) -> String {
        format!(
            "runlog-task/{}/{}",
            ref_part(self.layout.run()),
            ref_part(task.as_str())
        )
    }

    /// The integration branch made at the repository's `HEAD`, and the command that records
    /// it. The repository must not be mid-merge. Notes say what a person should know.
    pub fn open(&self) -> Result<(CommandKind, Vec<String>), GitError> {
        if self.remote.is_some() {
            // The shared repository's default branch, as this host's clone has it.
            let base = self.repo.run(&["rev-parse", "HEAD"])?;
            self.create_branch(&self.branch(), &base)?;
            return Ok((self.open_command(base), Vec::new()));
        }
        self.repo.check_not_busy()?;
        let base = self.repo.run(&["rev-parse", "HEAD"])?;
        let mut notes = Vec::new();
        if self.repo.is_dirty()? {
            notes.push(format!(
                "{} has changes not committed: the run starts from its last commit ({}), without them",
                self.repo.dir().display(),
                short(&base)
            ));
        }
        self.create_branch(&self.branch(), &base)?;
        Ok((self.open_command(base), notes))
    }

    fn open_command(&self, base: String) -> CommandKind {
        CommandKind::OpenWorkspace {
            repo: self.repo(),
            branch: self.branch(),
            base,
        }
    }

    /// A fork (or a run whose branch is not this run's): its own integration branch at the
    /// recorded tip, and the command that records it; `None` when the run has its own.
    pub fn adopt(&self, state: &RunState) -> Result<Option<CommandKind>, GitError> {
        let Some(w) = &state.workspace else {
            return Ok(None);
        };
        if w.branch == self.branch() {
            self.create_branch(&self.branch(), &w.tip)?;
            return Ok(None);
        }
        self.create_branch(&self.branch(), &w.tip)?;
        Ok(Some(self.open_command(w.tip.clone())))
    }

    /// Makes `refs/heads/NAME` at `commit` unless it exists.
    fn create_branch(&self, name: &str, commit: &str) -> Result<(), GitError> {
        let full = format!("refs/heads/{name}");
        if self.repo.commit_of(&full).is_none() {
            self.repo.set_ref(&full, commit, Some(""))?;
        }
        let shared = format!("refs/runlog-shared/heads/{name}");
        if self.remote.is_some() && self.repo.commit_of(&shared).is_none() {
            self.push(commit, &full, false)?;
        }
        Ok(())
    }

    /// The task's worktree on this host.
    fn worktree(&self, state: &RunState, task: &TaskId) -> PathBuf {
        let name = state
            .task(task)
            .and_then(|t| t.worktree.as_deref())
            .unwrap_or(task.as_str());
        self.layout.worktree(name)
    }

    /// Where the task's commands run: the workflow's directory inside the task's worktree.
    pub fn dir_of(&self, state: &RunState, task: &TaskId) -> PathBuf {
        self.worktree(state, task).join(&self.rel)
    }

    /// Makes the task's worktree ready for an attempt: made on its branch (from its last
    /// recorded commit, else the integration branch's tip, which holds its dependencies' merged
    /// work); after a merge conflict, with the integration branch merged in and the conflict
    /// markers left for the attempt to resolve.
    pub fn prepare(&self, state: &RunState, task: &TaskId) -> Result<PathBuf, GitError> {
        let Some(w) = &state.workspace else {
            return Ok(self.dir_of(state, task));
        };
        let path = self.worktree(state, task);
        let code = state.task(task).map(|t| t.code.clone()).unwrap_or_default();
        let wt = Git::at(&path);
        // The attempt starts from the task's last recorded commit, else the integration
        // branch's tip (its dependencies' merged work).
        let start = code.commit.clone().unwrap_or_else(|| w.tip.clone());
        self.fetch()?;
        if !path.join(".git").exists() {
            if path.exists() {
                // A plain directory from before (or a half-made worktree): git wants it gone.
                let _ = std::fs::remove_dir_all(&path);
            }
            let _ = self.repo.run(&["worktree", "prune"]);
            runlog_store::layout::keep_out_of_git(self.layout.store());
            if !self.take_spare(&path, &self.task_branch(task), &start)? {
                self.repo
                    .add_worktree(&path, &self.task_branch(task), &start)?;
            }
            if wt.run(&["rev-parse", "HEAD"])? != start {
                // The branch was left elsewhere (by another host, or a rollback).
                wt.reset_hard(&start)?;
            }
        } else {
            let head = wt.run(&["rev-parse", "HEAD"])?;
            // Another worker went on with the task since this host last had it; or the
            // worktree holds another timeline's work (a task with nothing recorded since a
            // rollback starts from the tip as it is now, like a task never run). A commit
            // made after `start` and not recorded before a crash stays for the attempt.
            let elsewhere = self.remote.is_some() || !wt.is_ancestor(&start, &head);
            if head != start && elsewhere {
                wt.reset_hard(&start)?;
            }
        }
        if code.conflict.is_some() && wt.commit_of("MERGE_HEAD").is_none() {
            let theirs = self.branch();
            let author = Author {
                name: "runlog".into(),
            };
            // Conflicts stay in the files; a clean merge is committed and the next merge is.
            wt.merge_into_worktree(&author, &theirs)?;
        }
        Ok(self.dir_of(state, task))
    }

    /// Commits what the task's attempt changed (a merge in progress included) as its agent, and
    /// the command that records it, the patch kept in the blob area. After a crash, a commit
    /// made and not recorded is recorded, not made again. `clean` takes the secrets out of
    /// the patch before any of it is kept.
    pub fn record(
        &self,
        state: &RunState,
        task: &TaskId,
        log: &dyn EventLog,
        clean: impl FnOnce(&mut String),
    ) -> Result<Option<CommandKind>, GitError> {
        let Some(t) = state.task(task) else {
            return Ok(None);
        };
        let path = self.worktree(state, task);
        if state.workspace.is_none() || !path.join(".git").exists() {
            return Ok(None);
        }
        let wt = Git::at(&path);
        let head = wt.run(&["rev-parse", "HEAD"])?;
        let parent = t.code.commit.clone().unwrap_or(head);
        let agent = t.agent.as_ref().map_or("agent", |a| a.0.as_str());
        let message = format!(
            "runlog: run {} task {} attempt {}",
            self.layout.run(),
            task,
            t.attempt
        );
        let commit = wt.commit_all(
            &Author {
                name: agent.to_owned(),
            },
            &message,
        )?;
        self.push(
            &commit,
            &format!("refs/heads/{}", self.task_branch(task)),
            true,
        )?;
        let (files, insertions, deletions) = wt.numstat(&parent, &commit)?;
        let mut patch = wt.patch(&parent, &commit)?;
        clean(&mut patch);
        let patch_bytes = patch.len() as u64;
        let (patch, blob) = if patch.len() > INLINE_PATCH {
            let blob = log.put_blob(patch.as_bytes()).ok().map(Hash);
            let mut cut = INLINE_PATCH;
            while !patch.is_char_boundary(cut) {
                cut -= 1;
            }
            (patch.get(..cut).unwrap_or_default().to_owned(), blob)
        } else {
            (patch, None)
        };
        Ok(Some(CommandKind::RecordChanges {
            task: task.clone(),
            changes: Changes {
                commit,
                parent,
                files,
                insertions,
                deletions,
                patch,
                blob,
                patch_bytes,
            },
        }))
    }

    /// Merges a done task's branch into the integration branch (a merge commit, the branch
    /// moved only if nobody moved it meanwhile), and the command that records the merge or the
    /// conflict. A merge made before a crash and not recorded is recorded, not made again.
    pub fn merge(&self, state: &RunState, task: &TaskId) -> Result<Option<CommandKind>, GitError> {
        let (Some(w), Some(t)) = (&state.workspace, state.task(task)) else {
            return Ok(None);
        };
        let theirs = match &t.code.commit {
            Some(c) => c.clone(),
            // Nothing recorded (a task done by a person, say): its branch as it is, if any.
            None => match self
                .repo
                .commit_of(&format!("refs/heads/{}", self.task_branch(task)))
            {
                Some(c) => c,
                None => w.tip.clone(),
            },
        };
        let branch = format!("refs/heads/{}", self.branch());
        let author = Author {
            name: "runlog".into(),
        };
        let message = format!("runlog: merge task {task} into run {}", self.layout.run());
        // With a shared repository another worker may move the branch between the fetch and
        // the push: the push is refused then, and the merge is made again on the new tip.
        let mut tries = 0;
        loop {
            tries += 1;
            self.fetch()?;
            let ours = self.integration_now().unwrap_or_else(|| w.tip.clone());
            if ours != w.tip && self.repo.parents(&ours) == [w.tip.clone(), theirs.clone()] {
                return Ok(Some(merged(task, ours)));
            }
            let tree = match self.repo.merge_tree(&ours, &theirs)? {
                Merge::Clean(tree) => tree,
                Merge::Conflicts(files) => {
                    return Ok(Some(CommandKind::RecordMerge {
                        task: task.clone(),
                        commit: None,
                        conflicts: files,
                    }))
                }
            };
            let commit = self
                .repo
                .commit_tree(&author, &tree, &[&ours, &theirs], &message)?;
            match self.push(&commit, &branch, false) {
                Err(_) if tries < MERGE_TRIES => continue,
                pushed => pushed?,
            }
            let local = self.repo.commit_of(&branch);
            self.repo.set_ref(&branch, &commit, local.as_deref())?;
            return Ok(Some(merged(task, commit)));
        }
    }

    /// Moves the integration branch and each task's branch (and worktree) to the commits
    /// `state` recorded, after a rollback recorded at `seq`; each old tip is kept as a ref.
    pub fn follow_rollback(&self, state: &RunState, seq: u64) -> Result<(), GitError> {
        let Some(w) = &state.workspace else {
            return Ok(());
        };
        let run = ref_part(self.layout.run());
        let branch = format!("refs/heads/{}", self.branch());
        self.fetch()?;
        if let Some(now) = self.integration_now().filter(|c| *c != w.tip) {
            let keep = format!("refs/runlog/{run}/before-rollback-{seq}");
            self.repo.set_ref(&keep, &now, None)?;
            self.push(&now, &keep, true)?;
            self.repo.set_ref(&branch, &w.tip, None)?;
            self.push(&w.tip, &branch, true)?;
        }
        for t in state.tasks_in_order() {
            self.follow_task(state, t, seq)?;
        }
        Ok(())
    }

    /// A task's branch, worktree and kept tip after a rollback recorded at `seq`: a task that
    /// has no attempt in the state rolled back to loses them (its old tip kept as a ref), as
    /// if it had never run; another is put at its last recorded commit.
    fn follow_task(&self, state: &RunState, t: &TaskState, seq: u64) -> Result<(), GitError> {
        let Some(w) = &state.workspace else {
            return Ok(());
        };
        let id = &t.spec.id;
        let task_ref = format!("refs/heads/{}", self.task_branch(id));
        let kept = self.kept_tip(id);
        let branch_now = self.repo.commit_of(&task_ref);
        let Some(now) = branch_now.clone().or_else(|| self.repo.commit_of(&kept)) else {
            return Ok(());
        };
        let want = match (&t.code.commit, t.attempt) {
            (Some(c), _) => Some(c.clone()),
            (None, 0) => None,
            (None, _) => Some(w.tip.clone()),
        };
        if want.as_deref() == Some(now.as_str()) {
            return Ok(());
        }
        let keep = format!(
            "refs/runlog/{}/{}/before-rollback-{seq}",
            ref_part(self.layout.run()),
            ref_part(id.as_str())
        );
        self.repo.set_ref(&keep, &now, None)?;
        self.push(&now, &keep, true)?;
        let path = self.worktree(state, id);
        match want {
            Some(want) if branch_now.is_some() => {
                self.push(&want, &task_ref, true)?;
                if path.join(".git").exists() {
                    Git::at(&path).reset_hard(&want)?;
                } else {
                    self.repo.set_ref(&task_ref, &want, None)?;
                }
            }
            // Made again from its recorded commit when its next attempt starts.
            Some(_) => self.drop_ref(&kept)?,
            None => {
                self.repo.remove_worktree(&path)?;
                self.drop_ref(&task_ref)?;
                self.drop_ref(&kept)?;
            }
        }
        Ok(())
    }

    /// Where a task's last commit is kept once its branch is gone:
    /// `refs/runlog-task/RUN/TASK`, beside the branch names and out of `git branch`'s list.
    fn kept_tip(&self, task: &TaskId) -> String {
        format!("refs/{}", self.task_branch(task))
    }

    /// Deletes a ref here and, with a shared repository, there.
    fn drop_ref(&self, name: &str) -> Result<(), GitError> {
        self.repo.delete_ref(name)?;
        self.push("", name, false)
    }
}

/// Removes what a forgotten run left in the repository `repo` on this host: the entries of
/// its worktrees (whose files went with the run's directory), its tasks' branches and kept
/// tips. Its integration branch `runlog/RUN` and the tips a rollback kept under
/// `refs/runlog/RUN/` stay: they may hold work a person took; `docs/workspaces.md` says how
/// to remove them.
pub fn forget_run(repo: &Path, run: &str) -> Result<(), GitError> {
    let git = Git::at(repo);
    let part = ref_part(run);
    let mut names = git.refs_under(&format!("refs/heads/runlog-task/{part}/"))?;
    names.extend(git.refs_under(&format!("refs/runlog-task/{part}/"))?);
    for name in names {
        git.delete_ref(&name)?;
    }
    git.run(&["worktree", "prune"]).map(|_| ())
}

/// The beginning of a spare worktree's name (see [`RunWorkspace::take_spare`]).
const SPARE: &str = ".spare-";

/// How often a merge is made again when another worker moved the shared branch meanwhile.
const MERGE_TRIES: u32 = 8;

/// `dir` below the repository's top `top` (empty when it is the top, or not below it).
fn rel_in(top: &Path, dir: &Path) -> PathBuf {
    let dir = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
    let top = std::fs::canonicalize(top).unwrap_or_else(|_| top.to_path_buf());
    let canonical = std::fs::canonicalize(&dir).unwrap_or(dir);
    canonical
        .strip_prefix(&top)
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

fn merged(task: &TaskId, commit: String) -> CommandKind {
    CommandKind::RecordMerge {
        task: task.clone(),
        commit: Some(commit),
        conflicts: Vec::new(),
    }
}

/// The first 12 characters of a commit id.
pub fn short(commit: &str) -> &str {
    commit.get(..12).unwrap_or(commit)
}
