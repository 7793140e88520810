//! Whether a runner executes a run now: the runner holds an exclusive lock on the run's marker
//! file ([`crate::Layout::marker`]) while it drives, and removes the file when it stops. The
//! lock dies with the process (a kill -9 too), so a file left behind by a crash is not taken
//! for a live runner. Followers read the run's events from the store; the marker only says
//! whether more will come.

use nix::fcntl::{Flock, FlockArg};
use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};

/// The marker, held until dropped.
#[derive(Debug)]
pub struct Executing {
    path: PathBuf,
    _lock: Flock<File>,
}

/// Takes the marker at `path`. `None` when another process holds it, or it cannot be made
/// (the run goes on either way: only followers read it).
pub fn hold(path: &Path) -> Option<Executing> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).ok()?;
    }
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .ok()?;
    let lock = Flock::lock(file, FlockArg::LockExclusiveNonblock).ok()?;
    Some(Executing {
        path: path.to_path_buf(),
        _lock: lock,
    })
}

/// Whether a live process holds the marker at `path`.
pub fn is_held(path: &Path) -> bool {
    let Ok(file) = File::open(path) else {
        return false;
    };
    matches!(
        Flock::lock(file, FlockArg::LockSharedNonblock),
        Err((_, nix::errno::Errno::EWOULDBLOCK))
    )
}

impl Drop for Executing {
    fn drop(&mut self) {
        // Removed while still locked: a follower never sees a file nobody holds but a crash's.
        let _ = std::fs::remove_file(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_marker_is_held_while_its_holder_lives_and_gone_after() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("runners").join("r1");
        assert!(!is_held(&path));
        let held = hold(&path);
        assert!(held.is_some());
        assert!(is_held(&path));
        assert!(hold(&path).is_none(), "one holder at a time");
        drop(held);
        assert!(!is_held(&path));
        assert!(!path.exists());
        // A file a crash left behind, with nobody holding it, is not a live runner.
        std::fs::write(&path, "").unwrap();
        assert!(!is_held(&path));
    }
}
