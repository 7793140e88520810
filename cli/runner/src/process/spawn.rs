//! Starting a command the cheapest way this runner can: a child that shares the runner's memory
//! until it execs (`clone` with `CLONE_VM | CLONE_VFORK`, as `posix_spawn` does), and that does
//! between the two what every command needs: its own process group, the user's umask, SIGTERM
//! from the kernel when the runner dies, its pipes, its directory.
//!
//! Why not `posix_spawn` (through the `runlog-exec` program, [`crate::process::exec_shim`]): glibc's
//! child asks for all 64 signals' dispositions before it execs (65 system calls a command), its
//! stack is unmapped after each start (a TLB shootdown on every core running the runner's
//! threads), and the code between fork and exec needs a program of its own, one more exec a
//! command. Here the child resets only the signals a handler may be set for, its stack comes
//! from the heap (never unmapped after a start), and it execs the command's program straight
//! away.
//!
//! Waiting goes through a pidfd (Linux 5.3): readable once the child has exited, then reaped
//! with `waitpid` on its pid alone, so tokio's own children are never reaped here. Where a
//! pidfd cannot be had, [`available`] says no and the runner starts commands the old way.

#![allow(unsafe_code)]

use nix::libc::{self, c_char, c_int, c_void};
use nix::sys::stat::Mode;
use nix::unistd::Pid;
use std::ffi::{CString, OsStr, OsString};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::ExitStatus;
use std::sync::Mutex;
use tokio::io::unix::AsyncFd;
use tokio::net::unix::pipe;

/// Bytes of the child's stack: it calls a few system calls and nothing else.
const STACK: usize = 64 * 1024;

/// Signals a handler of the runner or of tokio may be set for: in the child, between the
/// unblocking of signals and the exec, such a handler would run on the runner's memory, so each
/// is set back to its default first (one that is ignored stays ignored, as an exec keeps it).
const CAUGHT: [c_int; 9] = [
    libc::SIGINT,
    libc::SIGTERM,
    libc::SIGHUP,
    libc::SIGQUIT,
    libc::SIGCHLD,
    libc::SIGUSR1,
    libc::SIGUSR2,
    libc::SIGWINCH,
    libc::SIGALRM,
];

/// What a command is started with.
#[derive(Debug)]
pub(crate) struct Command<'a> {
    /// The program, found on the PATH as `execvp` finds it when it has no `/`.
    pub program: &'a str,
    /// Its arguments after its name.
    pub args: &'a [&'a str],
    /// Its directory.
    pub dir: &'a Path,
    /// Variables added to the runner's environment (or replacing its own).
    pub env: &'a [(String, String)],
    /// Whether its standard input is a pipe (else `/dev/null`).
    pub stdin: bool,
    /// The umask it gets (`None`: the runner's).
    pub umask: Option<Mode>,
}

/// A started command: its pid (also its process group), its pipes and its exit.
#[derive(Debug)]
pub(crate) struct Started {
    pub pid: Pid,
    pub stdin: Option<pipe::Sender>,
    pub stdout: pipe::Receiver,
    pub stderr: pipe::Receiver,
    pub exit: Exit,
}

/// Whether commands can start this way here (a pidfd to wait on is the one thing an older
/// kernel lacks); asked once.
pub(crate) fn available() -> bool {
    static AVAILABLE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *AVAILABLE.get_or_init(|| pidfd(nix::unistd::getpid()).is_ok())
}

fn pidfd(pid: Pid) -> io::Result<OwnedFd> {
    // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor or -1.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid.as_raw(), 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    let fd = RawFd::try_from(fd).map_err(|_| io::Error::other("pidfd out of range"))?;
    // SAFETY: the descriptor was just returned to us and nothing else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// A pipe, both ends closed on exec and numbered 3 or more.
fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let (r, w) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)?;
    Ok((above_stdio(r)?, above_stdio(w)?))
}

/// `fd`, moved to 3 or more if it is 0, 1 or 2 (a runner started with one of those closed):
/// the child's dup2 onto 0, 1 and 2 must not overwrite one of its own sources.
fn above_stdio(fd: OwnedFd) -> io::Result<OwnedFd> {
    if fd.as_raw_fd() > 2 {
        return Ok(fd);
    }
    let moved = nix::fcntl::fcntl(&fd, nix::fcntl::FcntlArg::F_DUPFD_CLOEXEC(3))?;
    // SAFETY: F_DUPFD_CLOEXEC returned a new descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(moved) })
}

fn c_string(bytes: &[u8]) -> io::Result<CString> {
    CString::new(bytes).map_err(|_| io::Error::other("an argument holds a NUL byte"))
}

/// Where `execvp` would try `program`, in its order.
fn candidates(program: &str) -> io::Result<Vec<CString>> {
    if program.contains('/') {
        return Ok(vec![c_string(program.as_bytes())?]);
    }
    let path = std::env::var_os("PATH").unwrap_or_else(|| OsString::from("/bin:/usr/bin"));
    path.as_bytes()
        .split(|b| *b == b':')
        .map(|dir| {
            let dir = if dir.is_empty() { &b"."[..] } else { dir };
            let mut file = dir.to_vec();
            file.push(b'/');
            file.extend_from_slice(program.as_bytes());
            c_string(&file)
        })
        .collect()
}

/// The runner's environment with `extra` added or replacing, as `KEY=VALUE` strings.
fn environment(extra: &[(String, String)]) -> io::Result<Vec<CString>> {
    let mut vars: Vec<(OsString, OsString)> = std::env::vars_os()
        .filter(|(k, _)| !extra.iter().any(|(e, _)| OsStr::new(e) == k))
        .collect();
    vars.extend(extra.iter().map(|(k, v)| (k.into(), v.into())));
    vars.into_iter()
        .map(|(k, v)| {
            let mut kv = k.into_vec();
            kv.push(b'=');
            kv.extend_from_slice(v.as_bytes());
            c_string(&kv)
        })
        .collect()
}

/// Null-terminated pointers to `strings`, for `execve`.
fn pointers(strings: &[CString]) -> Vec<*const c_char> {
    strings
        .iter()
        .map(|s| s.as_ptr())
        .chain(std::iter::once(std::ptr::null()))
        .collect()
}

/// What the child reads: everything prepared by the runner, so the child allocates nothing.
struct ChildArgs {
    candidates: Vec<*const c_char>,
    argv: *const *const c_char,
    envp: *const *const c_char,
    dir: *const c_char,
    /// Onto 0, 1 and 2.
    stdio: [RawFd; 3],
    umask: Option<Mode>,
    parent: Pid,
    /// The runner's signal mask, given back just before the exec.
    mask: libc::sigset_t,
    /// Where the child writes its errno when it cannot exec.
    report: RawFd,
}

/// In a command's own process, before its exec: the user's umask back, and SIGTERM from the
/// kernel when `parent` (the runner) dies. ESRCH when the runner is no longer its parent (it
/// died before the request). System calls only: no allocation, so a child on the runner's
/// memory can call it.
pub(crate) fn die_with(parent: Pid, umask: Option<Mode>) -> nix::Result<()> {
    if let Some(umask) = umask {
        nix::sys::stat::umask(umask);
    }
    nix::sys::prctl::set_pdeathsig(nix::sys::signal::Signal::SIGTERM)?;
    // The runner may have died before prctl: then nothing would signal the command.
    if nix::unistd::getppid() != parent {
        return Err(nix::errno::Errno::ESRCH);
    }
    Ok(())
}

/// The child, on its own stack and the runner's memory, until it execs or exits: only system
/// calls, no allocation, no lock, nothing that can unwind.
extern "C" fn child(arg: *mut c_void) -> c_int {
    // SAFETY: `arg` is the `ChildArgs` the runner's thread keeps alive, suspended, until this
    // child execs or exits (CLONE_VFORK); every pointer in it points into strings it owns.
    unsafe {
        let a = &*(arg as *const ChildArgs);
        let fail = |errno: c_int| -> c_int {
            let bytes = errno.to_ne_bytes();
            libc::write(a.report, bytes.as_ptr().cast(), bytes.len());
            libc::_exit(127)
        };
        let errno = || *libc::__errno_location();
        if libc::setpgid(0, 0) != 0 {
            return fail(errno());
        }
        for sig in CAUGHT {
            let mut now: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(sig, std::ptr::null(), &mut now) == 0
                && now.sa_sigaction != libc::SIG_IGN
                && now.sa_sigaction != libc::SIG_DFL
            {
                let mut default: libc::sigaction = std::mem::zeroed();
                default.sa_sigaction = libc::SIG_DFL;
                libc::sigaction(sig, &default, std::ptr::null_mut());
            }
        }
        // Ignored by the Rust runtime, not by the programs it starts.
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        if let Err(e) = die_with(a.parent, a.umask) {
            return fail(e as c_int);
        }
        // Each is 3 or more ([`above_stdio`]): no dup2 here undoes another.
        for (target, fd) in (0..).zip(a.stdio) {
            if libc::dup2(fd, target) < 0 {
                return fail(errno());
            }
        }
        if libc::chdir(a.dir) != 0 {
            return fail(errno());
        }
        libc::sigprocmask(libc::SIG_SETMASK, &a.mask, std::ptr::null_mut());
        // As execvp: a file that is not there goes on to the next, one that cannot be run is
        // remembered, anything else stops the search.
        let mut denied = false;
        let mut last = libc::ENOENT;
        for file in a.candidates.iter().take_while(|f| !f.is_null()) {
            libc::execve(*file, a.argv, a.envp);
            last = errno();
            match last {
                libc::EACCES => denied = true,
                libc::ENOENT | libc::ENOTDIR => {}
                _ => break,
            }
        }
        fail(match last {
            libc::ENOENT | libc::ENOTDIR if denied => libc::EACCES,
            other => other,
        })
    }
}

/// Starts `command`; its exit is waited for through [`Started::exit`].
pub(crate) fn start(command: &Command<'_>) -> io::Result<Started> {
    reap_orphans();
    let mut argv = vec![c_string(command.program.as_bytes())?];
    for arg in command.args {
        argv.push(c_string(arg.as_bytes())?);
    }
    let files = candidates(command.program)?;
    let env = environment(command.env)?;
    let dir = c_string(command.dir.as_os_str().as_bytes())?;
    let (out_r, out_w) = pipe()?;
    let (err_r, err_w) = pipe()?;
    let (in_r, in_w) = if command.stdin {
        let (r, w) = pipe()?;
        (r, Some(w))
    } else {
        let null = std::fs::File::open("/dev/null")?;
        (above_stdio(OwnedFd::from(null))?, None)
    };
    let (report_r, report_w) = pipe()?;
    let (argv_ptrs, env_ptrs) = (pointers(&argv), pointers(&env));
    let mut args = ChildArgs {
        candidates: pointers(&files),
        argv: argv_ptrs.as_ptr(),
        envp: env_ptrs.as_ptr(),
        dir: dir.as_ptr(),
        stdio: [in_r.as_raw_fd(), out_w.as_raw_fd(), err_w.as_raw_fd()],
        umask: command.umask,
        parent: nix::unistd::getpid(),
        // SAFETY: an all-zero sigset_t is a valid (empty) set; it is filled below.
        mask: unsafe { std::mem::zeroed() },
        report: report_w.as_raw_fd(),
    };
    let mut stack: Vec<u8> = Vec::with_capacity(STACK);
    // SAFETY: the stack grows down from the end of the allocation, which outlives the child's
    // use of it (the clone returns only once the child has execed or exited); the top is
    // aligned to 16 bytes as the ABI wants. Every signal is blocked around the clone so that
    // no handler runs in the child on the runner's memory; `args.mask` gives the child the
    // runner's mask back before it execs.
    let pid = unsafe {
        let top = stack.as_mut_ptr().add(STACK);
        let top = top.sub(top as usize % 16);
        let mut all: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut args.mask);
        let pid = libc::clone(
            child,
            top.cast(),
            libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD,
            (&mut args as *mut ChildArgs).cast(),
        );
        let cloned = io::Error::last_os_error();
        libc::pthread_sigmask(libc::SIG_SETMASK, &args.mask, std::ptr::null_mut());
        if pid < 0 {
            return Err(cloned);
        }
        pid
    };
    drop((in_r, out_w, err_w, report_w, stack));
    let pid = Pid::from_raw(pid);
    let mut said = [0u8; 4];
    let read = loop {
        match nix::unistd::read(&report_r, &mut said) {
            Err(nix::errno::Errno::EINTR) => continue,
            other => break other,
        }
    };
    if let Ok(4) = read {
        let _ = nix::sys::wait::waitpid(pid, None);
        return Err(io::Error::from_raw_os_error(c_int::from_ne_bytes(said)));
    }
    let exit = match pidfd(pid).and_then(AsyncFd::new) {
        Ok(fd) => Exit {
            pid,
            fd,
            status: None,
        },
        Err(e) => {
            let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL);
            let _ = nix::sys::wait::waitpid(pid, None);
            return Err(e);
        }
    };
    Ok(Started {
        pid,
        stdin: in_w.map(pipe::Sender::from_owned_fd).transpose()?,
        stdout: pipe::Receiver::from_owned_fd(out_r)?,
        stderr: pipe::Receiver::from_owned_fd(err_r)?,
        exit,
    })
}

/// A started command's exit. Dropped before it was seen, it kills the command and reaps it
/// later (at the next start), so no zombie stays.
#[derive(Debug)]
pub(crate) struct Exit {
    pid: Pid,
    fd: AsyncFd<OwnedFd>,
    status: Option<ExitStatus>,
}

impl Exit {
    /// The exit status, if the command has exited (it is reaped then).
    pub(crate) fn try_wait(&mut self) -> io::Result<Option<ExitStatus>> {
        if self.status.is_none() {
            self.status = reap(self.pid, true)?;
        }
        Ok(self.status)
    }

    /// Waits for the command to exit and reaps it.
    pub(crate) async fn wait(&mut self) -> io::Result<ExitStatus> {
        loop {
            if let Some(status) = self.try_wait()? {
                return Ok(status);
            }
            let mut ready = self.fd.readable().await?;
            ready.clear_ready();
        }
    }
}

impl Drop for Exit {
    fn drop(&mut self) {
        if self.status.is_none() {
            let _ = nix::sys::signal::kill(self.pid, nix::sys::signal::Signal::SIGKILL);
            orphans().push(self.pid);
        }
    }
}

/// `waitpid` on `pid` alone: its status once it has exited, `None` before (with `nohang`).
fn reap(pid: Pid, nohang: bool) -> io::Result<Option<ExitStatus>> {
    let mut status: c_int = 0;
    let flags = if nohang { libc::WNOHANG } else { 0 };
    loop {
        // SAFETY: waitpid writes the status into `status` and touches nothing else.
        let got = unsafe { libc::waitpid(pid.as_raw(), &mut status, flags) };
        match got {
            0 => return Ok(None),
            g if g == pid.as_raw() => return Ok(Some(ExitStatus::from_raw(status))),
            _ => {
                let e = io::Error::last_os_error();
                if e.kind() != io::ErrorKind::Interrupted {
                    return Err(e);
                }
            }
        }
    }
}

fn orphans() -> std::sync::MutexGuard<'static, Vec<Pid>> {
    static ORPHANS: Mutex<Vec<Pid>> = Mutex::new(Vec::new());
    ORPHANS.lock().unwrap_or_else(|p| p.into_inner())
}

/// Reaps the commands whose exits were dropped and that have exited since.
fn reap_orphans() {
    orphans().retain(|pid| matches!(reap(*pid, true), Ok(None)));
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// `sh ARGS` in `dir`.
    fn sh<'a>(args: &'a [&'a str], dir: &'a Path, env: &'a [(String, String)]) -> Command<'a> {
        Command {
            program: "sh",
            args,
            dir,
            env,
            stdin: false,
            umask: None,
        }
    }

    /// Everything the command printed on both pipes, and its exit status.
    async fn finish(mut s: Started) -> (String, String, ExitStatus) {
        let (mut out, mut err) = (String::new(), String::new());
        s.stdout.read_to_string(&mut out).await.unwrap();
        s.stderr.read_to_string(&mut err).await.unwrap();
        (out, err, s.exit.wait().await.unwrap())
    }

    #[tokio::test]
    async fn a_command_runs_in_its_directory_with_its_variables_umask_and_own_group() {
        assert!(
            available(),
            "pidfd_open is missing: Linux 5.3 or newer is needed"
        );
        let dir = tempfile::tempdir().unwrap();
        let env = [
            ("RUNLOG_TEST_VAR".to_owned(), "given".to_owned()),
            ("HOME".to_owned(), "/replaced".to_owned()),
        ];
        let script = "pwd; echo $RUNLOG_TEST_VAR $HOME; umask; ps -o pgid= -p $$; echo $$; echo oops >&2; exit 3";
        let args = ["-c", script];
        let mut cmd = sh(&args, dir.path(), &env);
        cmd.umask = Some(Mode::from_bits_truncate(0o027));
        let (out, err, status) = finish(start(&cmd).unwrap()).await;
        let lines: Vec<&str> = out.lines().map(str::trim).collect();
        let canonical = dir.path().canonicalize().unwrap();
        assert_eq!(lines.first(), Some(&canonical.to_str().unwrap()), "{out}");
        assert_eq!(lines.get(1), Some(&"given /replaced"), "{out}");
        assert_eq!(lines.get(2), Some(&"0027"), "{out}");
        // Its own process group: the group id is its pid.
        assert_eq!(lines.get(3), lines.get(4), "{out}");
        assert_eq!(err, "oops\n");
        assert_eq!(status.code(), Some(3));
    }

    #[tokio::test]
    async fn standard_input_is_a_pipe_when_asked_and_empty_otherwise() {
        let dir = tempfile::tempdir().unwrap();
        let args = ["-c", "cat"];
        let mut cmd = sh(&args, dir.path(), &[]);
        let (out, _, status) = finish(start(&cmd).unwrap()).await;
        assert_eq!((out.as_str(), status.code()), ("", Some(0)));
        cmd.stdin = true;
        let mut started = start(&cmd).unwrap();
        let mut input = started.stdin.take().unwrap();
        input.write_all(b"fed\n").await.unwrap();
        drop(input);
        let (out, _, _) = finish(started).await;
        assert_eq!(out, "fed\n");
    }

    #[tokio::test]
    async fn a_broken_pipe_ends_a_program_quietly_as_in_a_terminal() {
        // The Rust runtime ignores SIGPIPE; a command must not inherit that, or `yes` would
        // complain of a broken pipe instead of ending.
        let dir = tempfile::tempdir().unwrap();
        let (out, err, status) =
            finish(start(&sh(&["-c", "yes | head -n 1"], dir.path(), &[])).unwrap()).await;
        assert_eq!(
            (out.as_str(), err.as_str(), status.code()),
            ("y\n", "", Some(0))
        );
    }

    #[tokio::test]
    async fn a_program_that_cannot_start_is_an_error_and_leaves_no_process() {
        let dir = tempfile::tempdir().unwrap();
        let args = ["-c", "true"];
        let mut cmd = sh(&args, dir.path(), &[]);
        cmd.program = "runlog-no-such-program";
        let e = start(&cmd).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotFound, "{e}");
        cmd.program = "sh";
        let gone = dir.path().join("gone");
        cmd.dir = &gone;
        let e = start(&cmd).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotFound, "{e}");
    }

    #[tokio::test]
    async fn an_exit_dropped_before_the_end_kills_its_command_and_reaps_it() {
        let dir = tempfile::tempdir().unwrap();
        let started = start(&sh(&["-c", "sleep 30"], dir.path(), &[])).unwrap();
        let pid = started.pid;
        drop(started);
        let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
        // Reaped at the next start once it is gone: then its pid names no process.
        while nix::sys::signal::kill(pid, None).is_ok() {
            assert!(std::time::Instant::now() < until, "pid {pid} still there");
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            reap_orphans();
        }
    }
}
