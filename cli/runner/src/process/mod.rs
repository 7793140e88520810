//! Running one shell command: `sh -c` in the workflow's directory, in a process group of its
//! own so that a timeout, an interrupt or a cancelled task stops everything it started.
//!
//! The command's end is its own exit, not the end of its output: a background child that keeps
//! stdout open does not keep the attempt running. Whatever is left of the group afterwards is
//! stopped and reported. Stopping is gentle first (SIGTERM, a grace period, then SIGKILL) so an
//! agent in the middle of `git commit` can remove its `index.lock`. Output printed before a
//! timeout or a stop is kept. Standard input is fed while the output is read, so a command that
//! writes a lot before reading cannot deadlock against us.

use nix::errno::Errno;
use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use runlog_core::ErrorType;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncWriteExt};
use tokio::process::{Child, Command};
use tokio::sync::watch;

mod capture;
pub(crate) mod exec_shim;
mod groups;
mod spawn;

use capture::Reader;
use capture::DRAIN;
pub use groups::Stop;
pub use groups::{forget_groups, stop_leftover_groups};
use groups::{group_alive, list_group, terminate};

/// One command to run.
#[derive(Debug, Clone)]
pub struct Spec<'a> {
    /// The shell command line.
    pub cmd: &'a str,
    /// The directory it runs in.
    pub dir: &'a Path,
    /// Extra environment.
    pub env: &'a [(String, String)],
    /// Fed to its standard input (else stdin is `/dev/null`).
    pub stdin: Option<String>,
    /// Milliseconds before it is stopped as timed out.
    pub timeout_ms: Option<u64>,
    /// Between SIGTERM and SIGKILL when it must be stopped.
    pub grace: Duration,
    /// Where its process group is listed while it runs (see [`stop_leftover_groups`]).
    pub groups: Option<&'a Path>,
    /// Bytes kept of each output stream: the first half and the last half of what it printed.
    pub output_cap: usize,
}

/// What a command did.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// Exit code (`None` when killed by a signal or not started).
    pub code: Option<i32>,
    /// Standard output (what it printed before it ended or was stopped).
    pub stdout: String,
    /// Standard error (likewise).
    pub stderr: String,
    /// Wall time.
    pub duration: Duration,
    /// Why it did not run to an exit code: spawn error, timeout, stop.
    pub failure: Option<Failure>,
    /// Processes of its group still running after it exited, and how they were stopped.
    pub leftovers: Option<Stop>,
    /// Bytes of standard output and standard error left out between the head and the tail kept
    /// (beyond the output cap).
    pub left_out: [u64; 2],
}

/// A command that did not finish on its own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// It could not be started.
    Spawn(String),
    /// It ran past its timeout and its process group was stopped.
    Timeout(u64),
    /// The runner stopped it (an interrupt, or its task was cancelled).
    Stopped,
    /// It exited 0 but wrote outside its worktree, and `outside_writes = "fail"` (in words).
    WroteOutside(String),
}

impl Outcome {
    fn failed(failure: Failure, started: Instant) -> Self {
        Self {
            code: None,
            stdout: String::new(),
            stderr: String::new(),
            duration: started.elapsed(),
            failure: Some(failure),
            leftovers: None,
            left_out: [0, 0],
        }
    }

    /// Exit 0.
    pub fn succeeded(&self) -> bool {
        self.failure.is_none() && self.code == Some(0)
    }

    /// A one-line description of how it failed, and its error type.
    pub fn failure_text(&self) -> (String, ErrorType) {
        match &self.failure {
            Some(Failure::Spawn(e)) => (format!("could not start: {e}"), ErrorType::Spawn),
            Some(Failure::Timeout(ms)) => (
                format!("timed out after {ms} ms; its process group was stopped"),
                ErrorType::Timeout,
            ),
            Some(Failure::Stopped) => ("stopped by the runner".into(), ErrorType::Stopped),
            Some(Failure::WroteOutside(words)) => (
                format!("{words} (outside_writes = \"fail\")"),
                ErrorType::Other("outside-writes".into()),
            ),
            None => match self.code {
                Some(c) => (
                    format!(
                        "exited with code {c}{}",
                        last_line(&self.stderr)
                            .map(|t| format!(": {t}"))
                            .unwrap_or_default()
                    ),
                    ErrorType::ExitCode,
                ),
                None => ("killed by a signal".into(), ErrorType::Signal),
            },
        }
    }

    /// What happened to processes it left behind, for the log.
    pub fn leftovers_text(&self) -> Option<String> {
        self.leftovers.map(|s| {
            format!(
                "it exited leaving processes of its group running; they were {}",
                s.words()
            )
        })
    }
}

/// The last non-empty line of `text`, at most 300 characters.
fn last_line(text: &str) -> Option<String> {
    let line = text.lines().rev().map(str::trim).find(|l| !l.is_empty())?;
    Some(clip_chars(line, 300))
}

fn clip_chars(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", s.get(..i).unwrap_or(s)),
        None => s.to_owned(),
    }
}

/// `text` cut to about `max` bytes keeping its lines: the head and the tail, with a line saying
/// how much was left out between them.
pub fn head_and_tail(text: &str, max: usize) -> String {
    let text = text.trim_end();
    if text.len() <= max {
        return text.to_owned();
    }
    let half = max / 2;
    let mut head_end = half;
    while !text.is_char_boundary(head_end) {
        head_end -= 1;
    }
    let head_end = text
        .get(..head_end)
        .and_then(|h| h.rfind('\n'))
        .unwrap_or(head_end);
    let mut tail_start = text.len() - half;
    while !text.is_char_boundary(tail_start) {
        tail_start += 1;
    }
    let tail_start = text
        .get(tail_start..)
        .and_then(|t| t.find('\n'))
        .map_or(tail_start, |i| tail_start + i + 1);
    let (head, tail) = (
        text.get(..head_end).unwrap_or(""),
        text.get(tail_start..).unwrap_or(""),
    );
    format!(
        "{head}\n[… {} bytes left out …]\n{tail}",
        tail_start.saturating_sub(head_end)
    )
}

/// A started command's first process, the leader of its group, as it was started.
enum Leader {
    /// By [`spawn`].
    Own(spawn::Exit),
    /// By tokio, where [`spawn`] is not available.
    Tokio(Child),
}

impl Leader {
    fn try_wait(&mut self) -> std::io::Result<Option<std::process::ExitStatus>> {
        match self {
            Leader::Own(exit) => exit.try_wait(),
            Leader::Tokio(child) => child.try_wait(),
        }
    }

    async fn wait(&mut self) -> std::io::Result<std::process::ExitStatus> {
        match self {
            Leader::Own(exit) => exit.wait().await,
            Leader::Tokio(child) => child.wait().await,
        }
    }
}

type Input = Box<dyn tokio::io::AsyncWrite + Unpin + Send>;
type Output = Box<dyn AsyncRead + Unpin + Send>;

/// `sh -c CMD` started in a process group of its own, with its pipes.
struct Launched {
    group: Option<Pid>,
    leader: Leader,
    stdin: Option<Input>,
    stdout: Option<Output>,
    stderr: Option<Output>,
}

/// How a command is started.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Starter {
    /// [`spawn`]: the runner's own child, no second program.
    Own,
    /// `posix_spawn` of `runlog-exec` (or `runlog __exec`), through tokio.
    Trampoline,
}

impl Starter {
    /// [`Starter::Own`] where this kernel allows it.
    fn here() -> Self {
        if spawn::available() {
            Starter::Own
        } else {
            Starter::Trampoline
        }
    }
}

/// Starts the command.
fn launch(spec: &Spec<'_>, starter: Starter) -> std::io::Result<Launched> {
    if starter == Starter::Own {
        let started = spawn::start(&spawn::Command {
            program: "sh",
            args: &["-c", spec.cmd],
            dir: spec.dir,
            env: spec.env,
            stdin: spec.stdin.is_some(),
            umask: USER_UMASK.get().copied(),
        })?;
        return Ok(Launched {
            group: Some(started.pid),
            leader: Leader::Own(started.exit),
            stdin: started.stdin.map(|p| Box::new(p) as Input),
            stdout: Some(Box::new(started.stdout)),
            stderr: Some(Box::new(started.stderr)),
        });
    }
    let mut command = through_trampoline(["sh", "-c", spec.cmd]);
    command
        .current_dir(spec.dir)
        .envs(spec.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .stdin(match spec.stdin {
            Some(_) => Stdio::piped(),
            None => Stdio::null(),
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    let mut child = command.spawn()?;
    let group = child
        .id()
        .and_then(|id| i32::try_from(id).ok())
        .map(Pid::from_raw);
    Ok(Launched {
        group,
        stdin: child.stdin.take().map(|p| Box::new(p) as Input),
        stdout: child.stdout.take().map(|p| Box::new(p) as Output),
        stderr: child.stderr.take().map(|p| Box::new(p) as Output),
        leader: Leader::Tokio(child),
    })
}

/// Where a run's commands run: [`Os`] starts them as processes. A program that embeds the
/// engine may answer them its own way (its tests script each command's outcome).
pub trait Commands: Send + Sync + std::fmt::Debug {
    /// Runs what `spec` describes to its end, its timeout, or until `stop` turns true.
    fn run<'a>(&'a self, spec: Spec<'a>, stop: watch::Receiver<bool>) -> Running<'a>;
}

/// A command running, its outcome to come.
pub type Running<'a> = std::pin::Pin<Box<dyn std::future::Future<Output = Outcome> + Send + 'a>>;

/// Commands as processes of this host ([`run`]).
#[derive(Debug, Default, Clone, Copy)]
pub struct Os;

impl Commands for Os {
    fn run<'a>(&'a self, spec: Spec<'a>, stop: watch::Receiver<bool>) -> Running<'a> {
        Box::pin(run(spec, stop))
    }
}

/// Runs a command to its end, its timeout, or until `stop` turns true.
pub async fn run(spec: Spec<'_>, stop: watch::Receiver<bool>) -> Outcome {
    run_started_by(spec, stop, Starter::here()).await
}

async fn run_started_by(
    spec: Spec<'_>,
    mut stop: watch::Receiver<bool>,
    starter: Starter,
) -> Outcome {
    let started = Instant::now();
    let Launched {
        group,
        leader: mut child,
        stdin,
        stdout,
        stderr,
    } = match launch(&spec, starter) {
        Ok(l) => l,
        Err(e) => return Outcome::failed(Failure::Spawn(e.to_string()), started),
    };
    let mut guard = GroupGuard(group);
    let listed = match (spec.groups, group) {
        (Some(dir), Some(g)) if list_group(dir, g, true) => Some((dir, g)),
        _ => None,
    };
    let feeder = match (spec.stdin, stdin) {
        (Some(input), Some(mut pipe)) => Some(tokio::spawn(async move {
            // A command that does not read its stdin is not an error.
            let _ = pipe.write_all(input.as_bytes()).await;
        })),
        _ => None,
    };
    let stdout = Reader::start(stdout, spec.output_cap);
    let stderr = Reader::start(stderr, spec.output_cap);
    let timeout = spec.timeout_ms.map(Duration::from_millis);
    let deadline = tokio::time::sleep(timeout.unwrap_or_default());
    tokio::pin!(deadline);
    enum End {
        Exited(Option<i32>),
        WaitFailed(String),
        TimedOut(u64),
        Stopped,
    }
    let end = tokio::select! {
        waited = child.wait() => match waited {
            Ok(status) => End::Exited(status.code()),
            Err(e) => End::WaitFailed(e.to_string()),
        },
        _ = &mut deadline, if timeout.is_some() => End::TimedOut(spec.timeout_ms.unwrap_or_default()),
        _ = stopped(&mut stop) => End::Stopped,
    };
    // Whatever is left of the group is stopped now: the command itself after a timeout or a
    // stop, or what an exited command left behind.
    let left = stop_group(group, &mut child, spec.grace).await;
    let (code, failure, leftovers) = match end {
        End::Exited(code) => (code, None, left),
        End::WaitFailed(e) => (None, Some(Failure::Spawn(e)), None),
        End::TimedOut(ms) => (None, Some(Failure::Timeout(ms)), None),
        End::Stopped => (None, Some(Failure::Stopped), None),
    };
    // The group is gone: nothing for the guard to kill, and its pid may be reused.
    guard.0 = None;
    if let Some((dir, g)) = listed {
        list_group(dir, g, false);
    }
    if let Some(f) = feeder {
        f.abort();
    }
    let (stdout, out_left) = stdout.finish().await;
    let (stderr, err_left) = stderr.finish().await;
    Outcome {
        code,
        stdout,
        stderr,
        duration: started.elapsed(),
        failure,
        leftovers,
        left_out: [out_left, err_left],
    }
}

/// The umask runlog was started with, given back to every command it runs.
static USER_UMASK: std::sync::OnceLock<nix::sys::stat::Mode> = std::sync::OnceLock::new();

/// Makes every file and directory runlog creates private (umask 077: the store, worktrees,
/// feedback files, sockets), whatever the umask it was started with; the commands it runs get
/// that umask back, so agents create files as the user's own tools would. Call once, first.
pub fn private_files() {
    let user = nix::sys::stat::umask(nix::sys::stat::Mode::from_bits_truncate(0o077));
    let _ = USER_UMASK.set(user);
}

/// The first argument that makes `runlog` the trampoline of a command it runs.
const TRAMPOLINE: &str = "__exec";

/// Set when this process's `main` answers [`TRAMPOLINE`] (it is the `runlog` binary, not a
/// test or another program using the library): only then may it start commands through itself.
static IS_TRAMPOLINE_HOST: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

/// A command started the cheap way where [`spawn`] is not available. Every command the
/// runner runs must die with it and get the user's umask back, which needs code between fork and
/// exec; but a fork of the runner (a big, threaded process) copies its page tables, the
/// runner's main cost on a run of many short tasks (`perf` on the runner benchmark:
/// `copy_page_range`, `unmap_page_range` and TLB shootdowns on top). So the command starts as
/// `runlog-exec UMASK PARENT -- PROGRAM ARGS`, which `posix_spawn` starts without copying
/// anything, and that small static program does the work and execs the program
/// ([`exec_shim`]). Where it was not built, `runlog __exec` does the same
/// ([`trampoline`]); without a path to its own executable either, the runner forks.
fn through_trampoline<'a>(program: impl IntoIterator<Item = &'a str>) -> Command {
    static EXE: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
    let mut program = program.into_iter();
    let first = program.next().unwrap_or("true");
    let umask = USER_UMASK
        .get()
        .map_or_else(|| "-".to_owned(), |m| format!("{:o}", m.bits()));
    let parent = nix::unistd::getpid();
    let host = IS_TRAMPOLINE_HOST.load(std::sync::atomic::Ordering::Relaxed);
    let exe = EXE.get_or_init(|| std::env::current_exe().ok().filter(|p| p.is_file()));
    let through = match (exec_shim::path(), exe.as_ref().filter(|_| host)) {
        (Some(shim), _) => Some((shim, None)),
        (None, Some(exe)) => Some((exe.as_path(), Some(TRAMPOLINE))),
        (None, None) => None,
    };
    match through {
        Some((path, verb)) => {
            let mut command = Command::new(path);
            if verb.is_none() {
                command.arg0("runlog-exec");
            }
            command
                .args(verb)
                .arg(umask)
                .arg(parent.as_raw().to_string())
                .arg("--")
                .arg(first)
                .args(program);
            command
        }
        None => {
            let mut command = Command::new(first);
            command.args(program);
            die_with_parent(&mut command, parent);
            command
        }
    }
}

/// `runlog __exec UMASK PARENT -- PROGRAM ARGS`: gives the command the user's umask, asks the
/// kernel to send it SIGTERM when the runner dies (even by SIGKILL, which gives the runner no
/// chance to stop it), and execs it. `None` when this process is not a trampoline.
pub fn trampoline() -> Option<std::process::ExitCode> {
    use std::os::unix::process::CommandExt;
    let mut args = std::env::args_os().skip(1);
    if args.next().is_none_or(|a| a != TRAMPOLINE) {
        IS_TRAMPOLINE_HOST.store(true, std::sync::atomic::Ordering::Relaxed);
        return None;
    }
    let fail = |why: String| {
        eprintln!("runlog: cannot start the command: {why}");
        Some(std::process::ExitCode::from(127))
    };
    let (Some(umask), Some(parent), Some(dashes), Some(program)) =
        (args.next(), args.next(), args.next(), args.next())
    else {
        return fail(format!(
            "usage: runlog {TRAMPOLINE} UMASK PARENT -- PROGRAM [ARGS]"
        ));
    };
    let parent = parent.to_str().and_then(|p| p.parse::<i32>().ok());
    let umask = match umask.to_str() {
        Some("-") => None,
        Some(octal) => match nix::libc::mode_t::from_str_radix(octal, 8) {
            Ok(bits) => Some(nix::sys::stat::Mode::from_bits_truncate(bits)),
            Err(e) => return fail(format!("umask {octal:?}: {e}")),
        },
        None => return fail("the umask is not text".into()),
    };
    let (Some(parent), true) = (parent, dashes == "--") else {
        return fail(format!(
            "usage: runlog {TRAMPOLINE} UMASK PARENT -- PROGRAM [ARGS]"
        ));
    };
    if let Err(e) = die_with(Pid::from_raw(parent), umask) {
        return fail(e.to_string());
    }
    let e = std::process::Command::new(&program).args(args).exec();
    fail(format!("{}: {e}", program.to_string_lossy()))
}

/// The same as [`trampoline`], in the forked child, for a runner that cannot name its own
/// executable.
fn die_with_parent(command: &mut Command, parent: Pid) {
    // SAFETY: the closure runs in the forked child before exec and calls only umask, prctl and
    // getppid, async-signal-safe system calls; it allocates nothing and takes no locks.
    #[allow(unsafe_code)]
    unsafe {
        let umask = USER_UMASK.get().copied();
        command.pre_exec(move || die_with(parent, umask));
    }
}

/// [`spawn::die_with`] for the trampoline and the forked child, the runner's death said
/// in words.
fn die_with(parent: Pid, umask: Option<nix::sys::stat::Mode>) -> std::io::Result<()> {
    spawn::die_with(parent, umask).map_err(|e| match e {
        Errno::ESRCH => std::io::Error::other("the runner exited"),
        other => other.into(),
    })
}

/// Resolves once `stop` turns true; never if its sender is gone (nobody can stop it then).
async fn stopped(stop: &mut watch::Receiver<bool>) {
    if stop.wait_for(|s| *s).await.is_err() {
        std::future::pending::<()>().await;
    }
}

/// Stops what is left of `group`: SIGTERM, up to `grace` for it to end, then SIGKILL. `None`
/// when nothing was left. Reaps `child`, the group's leader, on the way.
async fn stop_group(group: Option<Pid>, child: &mut Leader, grace: Duration) -> Option<Stop> {
    let group = group?;
    let _ = child.try_wait();
    if !group_alive(group) {
        return None;
    }
    let stop = terminate(group, grace, || {
        let _ = child.try_wait();
    })
    .await;
    if stop == Stop::Killed {
        let _ = tokio::time::timeout(DRAIN, child.wait()).await;
    }
    Some(stop)
}

/// Kills the command's whole process group if the command's future is dropped before it ended
/// (the runner abandoning it), so no grandchild outlives it.
struct GroupGuard(Option<Pid>);

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if let Some(pid) = self.0 {
            // The group is usually gone already.
            let _ = killpg(pid, Signal::SIGKILL);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_text_keeps_whole_lines_at_both_ends() {
        let text: String = (0..1000).map(|i| format!("line {i}\n")).collect();
        let cut = head_and_tail(&text, 200);
        assert!(cut.len() < 260, "{}", cut.len());
        assert!(cut.starts_with("line 0\nline 1\n"));
        assert!(cut.ends_with("line 999"));
        assert!(cut.contains("bytes left out"));
        assert!(cut
            .lines()
            .all(|l| l.starts_with("line ") || l.starts_with("[…")));
        assert_eq!(head_and_tail("short\ntext\n", 200), "short\ntext");
    }

    #[tokio::test]
    async fn both_starters_give_a_command_the_same_world() {
        private_files();
        let dir = tempfile::tempdir().unwrap();
        let env = [("RUNLOG_TASK".to_owned(), "t".to_owned())];
        let mut outcomes = Vec::new();
        for starter in [Starter::Own, Starter::Trampoline] {
            let spec = Spec {
                cmd: "echo $0 $RUNLOG_TASK; umask; pwd; cat; yes | head -n 1; echo err >&2; exit 4",
                dir: dir.path(),
                env: &env,
                stdin: Some("fed\n".to_owned()),
                timeout_ms: None,
                grace: Duration::from_secs(1),
                groups: None,
                output_cap: 1 << 20,
            };
            let (_keep, stop) = watch::channel(false);
            let out = run_started_by(spec, stop, starter).await;
            outcomes.push((out.code, out.stdout, out.stderr));
        }
        let user = USER_UMASK
            .get()
            .map(|m| format!("{:04o}", m.bits()))
            .unwrap();
        let canonical = dir.path().canonicalize().unwrap();
        let expected = (
            Some(4),
            format!("sh t\n{user}\n{}\nfed\ny\n", canonical.display()),
            "err\n".to_owned(),
        );
        assert_eq!(outcomes, vec![expected.clone(), expected]);
    }

    #[test]
    fn cutting_never_splits_a_character() {
        let text = "é".repeat(500);
        let cut = head_and_tail(&text, 101);
        assert!(cut.contains("left out"));
    }
}
