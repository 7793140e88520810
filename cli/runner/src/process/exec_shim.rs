//! `runlog-exec`, the static program commands start through where [`crate::process::spawn`] cannot start
//! them (no pidfd: a kernel older than 5.3), built by `build.rs` from `exec_shim.c` and kept in
//! a sealed memory file for the life of the process: nothing is written to disk, nobody can
//! change it, and `posix_spawn` starts it as `/proc/self/fd/N`.

use std::path::{Path, PathBuf};

/// The path to start `runlog-exec` by, or `None` where it was not built or cannot be set up
/// (no `/proc`, no memfd): then commands start through `runlog __exec`.
pub fn path() -> Option<&'static Path> {
    static PATH: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
    PATH.get_or_init(load).as_deref()
}

#[cfg(runlog_exec_shim)]
fn load() -> Option<PathBuf> {
    use nix::fcntl::{fcntl, FcntlArg, SealFlag};
    use nix::sys::memfd::{memfd_create, MFdFlags};
    use std::io::Write as _;
    use std::os::fd::{AsRawFd as _, IntoRawFd as _};

    static PROGRAM: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/runlog-exec"));
    let fd = memfd_create(
        "runlog-exec",
        MFdFlags::MFD_CLOEXEC | MFdFlags::MFD_ALLOW_SEALING,
    )
    .ok()?;
    let mut file = std::fs::File::from(fd);
    file.write_all(PROGRAM).ok()?;
    let seals = SealFlag::F_SEAL_WRITE
        | SealFlag::F_SEAL_SHRINK
        | SealFlag::F_SEAL_GROW
        | SealFlag::F_SEAL_SEAL;
    fcntl(&file, FcntlArg::F_ADD_SEALS(seals)).ok()?;
    let path = PathBuf::from(format!("/proc/self/fd/{}", file.as_raw_fd()));
    // In this process the path names the same file as in the child that execs it.
    std::fs::metadata(&path)
        .ok()
        .filter(|m| m.len() == PROGRAM.len() as u64)?;
    // Held for the life of the process: the path is only good while the descriptor is open.
    let _ = file.into_raw_fd();
    Some(path)
}

#[cfg(not(runlog_exec_shim))]
fn load() -> Option<PathBuf> {
    None
}
