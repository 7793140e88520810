//! The places around a task's worktree that an attempt has no business writing in, looked at
//! as the attempt starts and again as it ends: the repository's own checkout (the person's
//! working tree) and the worktrees directories of the store's other runs that no runner
//! executes now. A file created, modified or deleted there in between is a write outside the
//! worktree. Nothing there is ever changed by runlog: it only looks.
//!
//! Files are told apart by their size, modification time and inode, not by their contents:
//! looking costs a `git status` and a `stat` per changed file, not a read of every byte. What
//! changes there while the attempt runs is taken as the attempt's, though a person or another
//! run's command may have made it (runs being executed are left out for that reason).

use super::RunWorkspace;
use crate::git::Git;
use crate::layout::Layout;
use runlog_core::outside::{Place, Written, MAX_PATHS};
use runlog_core::RunId;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// The most files looked at under one other run's worktrees directory: past it, the rest are
/// not watched (a run's worktrees are whole checkouts; their changes are found by git).
const MAX_FILES: usize = 20_000;

/// What the watched places held as an attempt started.
#[derive(Debug, Default)]
pub struct Watch {
    places: Vec<(Place, PathBuf, Files)>,
}

/// A file as it stood: (size, modification time, inode); `None` when it was not there.
type Stamp = Option<(u64, Option<SystemTime>, u64)>;

/// The files of a place that are worth comparing, by path relative to it.
type Files = BTreeMap<String, Stamp>;

impl RunWorkspace {
    /// The watched places as they stand now, as an attempt starts.
    pub fn watch(&self) -> Watch {
        let places = self
            .watched()
            .into_iter()
            .map(|(place, dir)| {
                let files = look(&dir);
                (place, dir, files)
            })
            .collect();
        Watch { places }
    }

    /// What changed in the watched places since `watch` was taken: each place with its paths.
    pub fn written_since(&self, watch: &Watch) -> Vec<Written> {
        let mut written = Vec::new();
        let mut seen: Vec<&PathBuf> = Vec::new();
        for (place, dir, before) in &watch.places {
            seen.push(dir);
            let after = look(dir);
            let changed: Vec<String> = before
                .keys()
                .chain(after.keys())
                // A path a git work tree does not list is as its commit has it: absent on
                // both sides, it did not change.
                .filter(|p| before.get(*p).copied().flatten() != after.get(*p).copied().flatten())
                .cloned()
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .collect();
            if let Some(w) = named(place.clone(), changed) {
                written.push(w);
            }
        }
        // A run's worktrees directory made during the attempt (an agent writing into a
        // retired worktree of a run that ended makes its directories anew).
        for (place, dir) in self.watched() {
            if !seen.contains(&&dir) {
                if let Some(w) = named(place, look(&dir).into_keys().collect()) {
                    written.push(w);
                }
            }
        }
        written
    }

    /// The places watched for this run's attempts: the repository's checkout (not with a
    /// shared repository, where this host works in a bare clone), and each other run's
    /// worktrees directory in the store that no runner executes now.
    fn watched(&self) -> Vec<(Place, PathBuf)> {
        let mut places = Vec::new();
        if self.remote.is_none() {
            places.push((Place::Checkout, self.repo.dir().to_path_buf()));
        }
        let worktrees = self.layout.store().join("worktrees");
        let mut others: Vec<(Place, PathBuf)> = std::fs::read_dir(&worktrees)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|entry| {
                let name = entry.file_name().into_string().ok()?;
                let other = Layout::new(self.layout.store(), &name);
                let watched = name != self.layout.run()
                    && runlog_core::not_a_name(&name).is_none()
                    && entry.path().is_dir()
                    && !crate::marker::is_held(&other.marker());
                watched.then(|| {
                    let run = RunId::from(name.as_str());
                    (Place::OtherRun { run }, entry.path())
                })
            })
            .collect();
        others.sort_by(|a, b| a.1.cmp(&b.1));
        places.extend(others);
        places
    }
}

/// The paths named for a place (none: nothing changed there).
fn named(place: Place, mut paths: Vec<String>) -> Option<Written> {
    if paths.is_empty() {
        return None;
    }
    let more = u32::try_from(paths.len().saturating_sub(MAX_PATHS)).unwrap_or(u32::MAX);
    paths.truncate(MAX_PATHS);
    Some(Written { place, paths, more })
}

/// What a place holds worth comparing: in a git work tree, the files that differ from its
/// commit; in any other directory, every file (up to [`MAX_FILES`]), a git work tree below
/// it looked at the same way.
fn look(dir: &Path) -> Files {
    let mut files = Files::new();
    if dir.join(".git").exists() {
        changed_in(dir, "", &mut files);
        return files;
    }
    let mut todo = vec![(dir.to_path_buf(), String::new())];
    while let Some((d, rel)) = todo.pop() {
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            if files.len() >= MAX_FILES {
                return files;
            }
            let name = entry.file_name().to_string_lossy().into_owned();
            let path = entry.path();
            let rel_path = format!("{rel}{name}");
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() && path.join(".git").exists() {
                changed_in(&path, &format!("{rel_path}/"), &mut files);
            } else if kind.is_dir() {
                todo.push((path, format!("{rel_path}/")));
            } else {
                files.insert(rel_path, stamp(&path));
            }
        }
    }
    files
}

/// The changed files of the git work tree at `dir`, named under `prefix`.
fn changed_in(dir: &Path, prefix: &str, files: &mut Files) {
    let Ok(paths) = Git::at(dir).changed_paths() else {
        return;
    };
    for path in paths {
        let stamp = stamp(&dir.join(&path));
        files.insert(format!("{prefix}{path}"), stamp.or(Some((0, None, 0))));
    }
}

fn stamp(path: &Path) -> Stamp {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::symlink_metadata(path).ok()?;
    Some((meta.len(), meta.modified().ok(), meta.ino()))
}
