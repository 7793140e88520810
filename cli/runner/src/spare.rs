//! Worktrees handed on: the empty worktree of a task that ended becomes the worktree of a task
//! that starts later, renamed, instead of each task making a directory of its own. Making a
//! directory is the costliest call of a command's start on some file systems (ext4 without a
//! journal searches past every inode deleted in the last minutes to allocate one), and a run
//! of no-op tasks then leaves a few directories, not one a task. A worktree with anything in
//! it stays its task's. Outside a git workspace only: there a worktree is git's.

use std::path::{Path, PathBuf};

/// The worktrees of ended tasks that may be empty, newest last.
#[derive(Debug, Default)]
pub(crate) struct Spares {
    dirs: Vec<PathBuf>,
}

/// More than the commands a run can start in one step: enough to hand one on to each.
const KEPT: usize = 256;

impl Spares {
    /// Offers the worktree of a task that ended (looked into only when handed on).
    pub(crate) fn offer(&mut self, dir: PathBuf) {
        if self.dirs.len() < KEPT {
            self.dirs.push(dir);
        }
    }

    /// Makes sure `dir` is a directory: there already, an empty spare renamed to it, or made.
    pub(crate) fn make(&mut self, dir: &Path) {
        if dir.is_dir() {
            return;
        }
        while let Some(spare) = self.dirs.pop() {
            // Looked into now, not when offered: whatever outlived its task had until now to
            // write there.
            if is_empty(&spare) && std::fs::rename(&spare, dir).is_ok() {
                return;
            }
        }
        let _ = std::fs::create_dir_all(dir);
    }
}

fn is_empty(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|mut entries| entries.next().is_none())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_worktree_is_handed_on_and_a_used_one_kept() {
        let root = tempfile::tempdir().unwrap();
        let (a, b, c, d) = (
            root.path().join("a"),
            root.path().join("b"),
            root.path().join("c"),
            root.path().join("d"),
        );
        let mut spares = Spares::default();
        spares.make(&a);
        spares.make(&b);
        assert!(a.is_dir() && b.is_dir());
        std::fs::write(b.join("kept"), "work").unwrap();
        spares.offer(a.clone());
        spares.offer(b.clone());
        // b holds a file: it stays b's; a is empty and becomes c.
        spares.make(&c);
        assert!(c.is_dir());
        assert!(b.join("kept").is_file());
        assert_eq!(std::fs::read_dir(&c).unwrap().count(), 0);
        assert!(!a.exists(), "a was handed on to c");
        // Nothing left to hand on: d is made.
        spares.make(&d);
        assert!(d.is_dir());
        // A directory already there is left as it is.
        spares.offer(d.clone());
        spares.make(&c);
        assert!(d.is_dir() && c.is_dir());
    }
}
