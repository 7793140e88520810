//! crashfs: a FUSE filesystem in memory that loses power on request, as LazyFS does. Written
//! data and created names become durable only when synced (fsync, fdatasync, a directory's
//! fsync); at a chosen change the power goes and only the durable state (plus what the chosen
//! [`Loss`] lets through of unsynced writes) is left, to be mounted again. The power-loss test
//! runs runlog's store on it: a kill -9 cannot catch a missing fsync (the page cache survives
//! it), this can.

mod fs;
mod model;

pub use fs::{CrashFs, Cut, State};
pub use model::{Loss, Rng, Tree};

use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};

/// A mounted crashfs.
#[derive(Debug)]
pub struct Mounted {
    session: fuser::BackgroundSession,
    state: Arc<Mutex<State>>,
}

/// Mounts `tree` at `at` (an existing empty directory), to lose power as `cut` says.
pub fn mount(tree: Tree, at: &Path, cut: Option<Cut>) -> std::io::Result<Mounted> {
    let fs = CrashFs::new(tree, cut);
    let state = fs.state();
    let mut config = fuser::Config::default();
    config
        .mount_options
        .extend([fuser::MountOption::FSName("crashfs".into())]);
    let session = fuser::spawn_mount(fs, at, &config)?;
    Ok(Mounted { session, state })
}

impl Mounted {
    /// The filesystem's state.
    pub fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether the power has gone.
    pub fn powered_off(&self) -> bool {
        self.state().survived.is_some()
    }

    /// Unmounts: what survived the power cut, or (when the power never went) the files as
    /// they are.
    pub fn unmount(self) -> std::io::Result<Tree> {
        match self.session.umount_and_join() {
            // Seen once in a 2,000-cycle run on Linux 6.18: the kernel had aborted the connection
            // before the unmount, so the session's last read of /dev/fuse failed. The files
            // live in `state`, not in the session, so nothing of them is lost.
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionAborted => {}
            other => other?,
        }
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let tree = std::mem::take(&mut state.tree);
        Ok(state.survived.take().unwrap_or(tree))
    }
}
