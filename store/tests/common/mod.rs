//! What the tests that run out of disk by `RLIMIT_FSIZE` share.

use nix::sys::resource::{getrlimit, setrlimit, Resource};
use nix::sys::signal::{signal, SigHandler, Signal};

/// Runs `f` with this process's files limited to `bytes`: a write past it is cut short, then
/// fails with EFBIG, the kernel's own failure, as on a full disk. The limit is the process's,
/// so a test file that uses this holds one test.
pub fn with_file_size_limit<T>(bytes: u64, f: impl FnOnce() -> T) -> T {
    // Writes past the limit would otherwise kill the process with SIGXFSZ.
    // SAFETY: sets a signal's disposition to "ignore"; no handler runs any code.
    #[allow(unsafe_code)]
    let _ = unsafe { signal(Signal::SIGXFSZ, SigHandler::SigIgn) };
    let (soft, hard) = getrlimit(Resource::RLIMIT_FSIZE).expect("getrlimit");
    setrlimit(Resource::RLIMIT_FSIZE, bytes, hard).expect("setrlimit");
    let out = f();
    setrlimit(Resource::RLIMIT_FSIZE, soft, hard).expect("setrlimit");
    out
}
