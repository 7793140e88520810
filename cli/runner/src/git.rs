//! The real `git`, through its command line: what a run's workspace asks of a repository.
//! Every call names its repository or worktree (`git -C DIR`), never reads the user's global
//! identity (runlog's commits name the agent), and fails with the command and git's own words.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The oldest git that has everything used here (`merge-tree --write-tree`, 2.38).
pub const MIN_VERSION: (u32, u32) = (2, 38);

/// What went wrong with git.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    /// No `git` program.
    #[error("git is not installed (no `git` on PATH): {0}")]
    Missing(std::io::Error),
    /// A git older than [`MIN_VERSION`].
    #[error("git {found} is too old: runlog's worktrees need git {}.{} or newer", MIN_VERSION.0, MIN_VERSION.1)]
    TooOld {
        /// What `git --version` said.
        found: String,
    },
    /// The repository is in the middle of a merge, rebase or cherry-pick.
    #[error("the repository {} is in the middle of a {what}", repo.display())]
    Busy {
        /// The repository.
        repo: PathBuf,
        /// What it is in the middle of.
        what: &'static str,
    },
    /// A git command failed.
    #[error("`git {args}` in {}: {stderr}", dir.display())]
    Failed {
        /// Where it ran.
        dir: PathBuf,
        /// Its arguments.
        args: String,
        /// What git said.
        stderr: String,
    },
}

type Result<T> = std::result::Result<T, GitError>;

/// Who a commit is by, as git's environment says it.
#[derive(Debug, Clone)]
pub struct Author {
    /// The name (an agent id, or `runlog`).
    pub name: String,
}

/// A repository or one of its worktrees.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Git {
    dir: PathBuf,
}

/// The result of a merge made without a worktree.
#[derive(Debug, PartialEq, Eq)]
pub enum Merge {
    /// The merged tree.
    Clean(String),
    /// The files in conflict.
    Conflicts(Vec<String>),
}

/// Checks that git is there and new enough.
pub fn check_version() -> Result<()> {
    let out = Command::new("git")
        .arg("--version")
        .env("LC_ALL", "C")
        .output()
        .map_err(GitError::Missing)?;
    let text = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    let version: Vec<u32> = text
        .split_whitespace()
        .nth(2)
        .unwrap_or_default()
        .split('.')
        .take(2)
        .map(|n| n.parse().unwrap_or(0))
        .collect();
    match version.as_slice() {
        [major, minor] if (*major, *minor) >= MIN_VERSION => Ok(()),
        _ => Err(GitError::TooOld { found: text }),
    }
}

impl Git {
    /// Git in `dir`.
    pub fn at(dir: &Path) -> Self {
        Self {
            dir: dir.to_path_buf(),
        }
    }

    /// The top directory of the repository `dir` is in, if it is in one.
    pub fn toplevel(dir: &Path) -> Option<PathBuf> {
        let top = Self::at(dir).run(&["rev-parse", "--show-toplevel"]).ok()?;
        Some(PathBuf::from(top))
    }

    /// The directory this runs in.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut c = Command::new("git");
        c.arg("-C")
            .arg(&self.dir)
            .args(args)
            .env("LC_ALL", "C")
            // Nothing of the user's configuration decides what runlog records.
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env_remove("GIT_DIR")
            .env_remove("GIT_WORK_TREE")
            .env_remove("GIT_INDEX_FILE");
        c
    }

    fn output(&self, mut c: Command, args: &[&str]) -> Result<std::process::Output> {
        let started = std::time::Instant::now();
        let out = c.output().map_err(GitError::Missing)?;
        tracing::debug!(
            dir = %self.dir.display(),
            args = %args.join(" "),
            status = ?out.status.code(),
            ms = started.elapsed().as_millis() as u64,
            "git"
        );
        if out.status.success() {
            return Ok(out);
        }
        Err(self.failed(args, &out))
    }

    fn failed(&self, args: &[&str], out: &std::process::Output) -> GitError {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let stdout = String::from_utf8_lossy(&out.stdout);
        let said = if stderr.trim().is_empty() {
            stdout
        } else {
            stderr
        };
        GitError::Failed {
            dir: self.dir.clone(),
            args: args.join(" "),
            stderr: said.trim().lines().take(6).collect::<Vec<_>>().join(" / "),
        }
    }

    /// Runs git; its trimmed output.
    pub fn run(&self, args: &[&str]) -> Result<String> {
        let out = self.output(self.command(args), args)?;
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
    }

    /// Runs git as `author` (commits).
    fn run_as(&self, author: &Author, args: &[&str]) -> Result<String> {
        let mut c = self.command(args);
        let email = format!("{}@runlog.invalid", author.name);
        c.env("GIT_AUTHOR_NAME", &author.name)
            .env("GIT_AUTHOR_EMAIL", &email)
            .env("GIT_COMMITTER_NAME", "runlog")
            .env("GIT_COMMITTER_EMAIL", "runlog@runlog.invalid");
        let out = self.output(c, args)?;
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
    }

    /// The commit a revision names, if it names one.
    pub fn commit_of(&self, rev: &str) -> Option<String> {
        self.run(&[
            "rev-parse",
            "--verify",
            "--quiet",
            &format!("{rev}^{{commit}}"),
        ])
        .ok()
        .filter(|c| !c.is_empty())
    }

    /// Refuses a repository in the middle of a merge, rebase or cherry-pick.
    pub fn check_not_busy(&self) -> Result<()> {
        let git_dir = PathBuf::from(self.run(&["rev-parse", "--absolute-git-dir"])?);
        for (file, what) in [
            ("MERGE_HEAD", "merge"),
            ("rebase-merge", "rebase"),
            ("rebase-apply", "rebase"),
            ("CHERRY_PICK_HEAD", "cherry-pick"),
        ] {
            if git_dir.join(file).exists() {
                return Err(GitError::Busy {
                    repo: self.dir.clone(),
                    what,
                });
            }
        }
        Ok(())
    }

    /// The paths of the work tree that differ from its commit: modified, added, deleted,
    /// renamed (both names) and untracked files, one by one; ignored files aside.
    pub fn changed_paths(&self) -> Result<Vec<String>> {
        let args = ["status", "--porcelain=v1", "-z", "--untracked-files=all"];
        let out = self.output(self.command(&args), &args)?;
        let text = String::from_utf8_lossy(&out.stdout);
        // `XY PATH`, a rename's or copy's old name in the field after it.
        Ok(text
            .split('\0')
            .filter(|f| !f.is_empty())
            .map(|f| match f.get(3..) {
                Some(path) if f.get(2..3) == Some(" ") => path.to_owned(),
                _ => f.to_owned(),
            })
            .collect())
    }

    /// Whether the work tree has changes not committed (tracked or not, ignored files aside).
    pub fn is_dirty(&self) -> Result<bool> {
        Ok(!self.run(&["status", "--porcelain"])?.is_empty())
    }

    /// Points `refs/heads/BRANCH` (or any full ref) at `commit`; with `old`, only if it points
    /// there now (`""`: only if it does not exist).
    pub fn set_ref(&self, name: &str, commit: &str, old: Option<&str>) -> Result<()> {
        let mut args = vec!["update-ref", name, commit];
        if let Some(old) = old {
            args.push(old);
        }
        self.run(&args).map(|_| ())
    }

    /// Adds a worktree at `path` on `branch`, made at `start` unless it exists.
    pub fn add_worktree(&self, path: &Path, branch: &str, start: &str) -> Result<()> {
        let path = path.to_string_lossy();
        if self.commit_of(&format!("refs/heads/{branch}")).is_some() {
            self.run(&["worktree", "add", "--quiet", &path, branch])
        } else {
            self.run(&["worktree", "add", "--quiet", "-b", branch, &path, start])
        }
        .map(|_| ())
    }

    /// Commits everything in the worktree as `author` (finishing a merge in progress), unless
    /// nothing changed; the commit `HEAD` is at after.
    pub fn commit_all(&self, author: &Author, message: &str) -> Result<String> {
        self.run(&["add", "--all"])?;
        let merging = self.commit_of("MERGE_HEAD").is_some();
        if merging || !self.run(&["status", "--porcelain"])?.is_empty() {
            self.run_as(author, &["commit", "--quiet", "--no-verify", "-m", message])?;
        }
        self.run(&["rev-parse", "HEAD"])
    }

    /// Files changed, lines added and removed from `from` to `to`.
    pub fn numstat(&self, from: &str, to: &str) -> Result<(Vec<String>, u64, u64)> {
        let text = self.run(&["diff", "--numstat", "--no-renames", from, to])?;
        let (mut files, mut added, mut removed) = (Vec::new(), 0u64, 0u64);
        for line in text.lines() {
            let mut parts = line.splitn(3, '\t');
            let (Some(a), Some(r), Some(file)) = (parts.next(), parts.next(), parts.next()) else {
                continue;
            };
            // Binary files count `-`: changed, no lines.
            added += a.parse::<u64>().unwrap_or(0);
            removed += r.parse::<u64>().unwrap_or(0);
            files.push(file.to_owned());
        }
        Ok((files, added, removed))
    }

    /// The patch from `from` to `to`.
    pub fn patch(&self, from: &str, to: &str) -> Result<String> {
        let out = self.output(
            self.command(&["diff", "--binary", "--no-renames", from, to]),
            &["diff"],
        )?;
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// Merges `theirs` into `ours` without a worktree: the merged tree, or the conflicts.
    pub fn merge_tree(&self, ours: &str, theirs: &str) -> Result<Merge> {
        let args = [
            "merge-tree",
            "--write-tree",
            "--name-only",
            "--no-messages",
            ours,
            theirs,
        ];
        let out = self.command(&args).output().map_err(GitError::Missing)?;
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let mut lines = text.lines();
        let tree = lines.next().unwrap_or_default().trim().to_owned();
        match out.status.code() {
            Some(0) => Ok(Merge::Clean(tree)),
            Some(1) => {
                let mut files: Vec<String> = lines
                    .take_while(|l| !l.is_empty())
                    .map(str::to_owned)
                    .collect();
                files.dedup();
                Ok(Merge::Conflicts(files))
            }
            _ => Err(self.failed(&args, &out)),
        }
    }

    /// A commit of `tree` with `parents`, as `author`.
    pub fn commit_tree(
        &self,
        author: &Author,
        tree: &str,
        parents: &[&str],
        message: &str,
    ) -> Result<String> {
        let mut args = vec!["commit-tree", tree];
        for p in parents {
            args.extend(["-p", p]);
        }
        args.extend(["-m", message]);
        self.run_as(author, &args)
    }

    /// The parents of a commit.
    pub fn parents(&self, commit: &str) -> Vec<String> {
        self.run(&["rev-list", "--parents", "-n", "1", commit])
            .map(|l| l.split_whitespace().skip(1).map(str::to_owned).collect())
            .unwrap_or_default()
    }

    /// Starts merging `branch` into the worktree's branch, leaving conflict markers for whoever
    /// resolves them; the files in conflict (none: it merged clean, and is committed).
    pub fn merge_into_worktree(&self, author: &Author, branch: &str) -> Result<Vec<String>> {
        let merged = self.run_as(
            author,
            &["merge", "--no-ff", "--no-edit", "--quiet", branch],
        );
        if merged.is_ok() {
            return Ok(Vec::new());
        }
        let files = self.run(&["diff", "--name-only", "--diff-filter=U"])?;
        Ok(files.lines().map(str::to_owned).collect())
    }

    /// Puts the worktree's branch, index and files at `commit` (a rollback), files git does
    /// not track removed too (ignored ones, such as build caches, stay): the worktree holds
    /// what that commit holds and nothing of another timeline.
    pub fn reset_hard(&self, commit: &str) -> Result<()> {
        let _ = self.run(&["merge", "--abort"]);
        self.run(&["reset", "--hard", "--quiet", commit])?;
        self.run(&["clean", "-d", "--force", "--quiet"]).map(|_| ())
    }

    /// Whether `ancestor` is `commit` or one of its ancestors.
    pub fn is_ancestor(&self, ancestor: &str, commit: &str) -> bool {
        self.command(&["merge-base", "--is-ancestor", ancestor, commit])
            .output()
            .is_ok_and(|o| o.status.success())
    }

    /// Removes the worktree at `path` (its files, and the repository's entry for it); its
    /// branch stays. A directory git no longer knows as a worktree is removed all the same.
    pub fn remove_worktree(&self, path: &Path) -> Result<()> {
        let shown = path.to_string_lossy();
        if path.join(".git").exists() {
            // Twice forced: a worktree a crash left locked goes too.
            let args = ["worktree", "remove", "--force", "--force", &shown];
            if self.run(&args).is_ok() {
                return Ok(());
            }
        }
        match std::fs::remove_dir_all(path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(GitError::Failed {
                    dir: path.to_path_buf(),
                    args: "worktree remove".into(),
                    stderr: e.to_string(),
                })
            }
            _ => {}
        }
        self.run(&["worktree", "prune"]).map(|_| ())
    }

    /// Deletes the ref `name` (a full name) if it exists.
    pub fn delete_ref(&self, name: &str) -> Result<()> {
        if self.commit_of(name).is_none() {
            return Ok(());
        }
        self.run(&["update-ref", "-d", name]).map(|_| ())
    }

    /// The full names of the refs below `prefix` (`refs/runlog-task/RUN/`, say).
    pub fn refs_under(&self, prefix: &str) -> Result<Vec<String>> {
        let text = self.run(&["for-each-ref", "--format=%(refname)", prefix])?;
        Ok(text.lines().map(str::to_owned).collect())
    }
}

/// A ref name for `id` (a run or task id): as it is when git accepts it as one component,
/// else a hash of it (`..`, a `.lock` ending and a few characters are not allowed in refs).
pub fn ref_part(id: &str) -> String {
    let plain = !id.is_empty()
        && !id.contains("..")
        && !id.ends_with(".lock")
        && !id.ends_with('.')
        && !id.starts_with('.')
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if plain {
        id.to_owned()
    } else {
        let hash = blake3::hash(id.as_bytes()).to_hex();
        format!("h-{}", hash.get(..24).unwrap_or_default())
    }
}
