//! One step of the engine, one durable append: what a step decides is staged in the session and
//! appended at its end, and the processes it starts are started only after that append is
//! durable, each only if its task still stands where the step left it (a decision that lost a
//! race to someone else's is decided again, and may be dropped).

use runlog_core::dispatch::Job;
use runlog_core::{TaskId, TaskStatus};
use std::path::PathBuf;

/// A task's status, attempt, whether an attempt runs, and the worker holding it (among
/// workers): what a process was started for. The holder is in it because two workers may
/// decide the same start: the one whose append lost finds the task in the same status and
/// attempt, held by the other.
pub(crate) type Phase = (TaskStatus, u32, bool, Option<String>);

/// A process a step decided to start, waiting for the step's append.
#[derive(Debug)]
pub(crate) struct Planned {
    pub id: TaskId,
    pub job: Job,
    /// A sub-project's command instead of the task's own.
    pub command: Option<String>,
    /// Where it runs (a worktree); `None`: the workflow's directory.
    pub dir: Option<PathBuf>,
    /// Where the task stood once the step decided to start it.
    pub phase: Option<Phase>,
}

/// A fault point for the crash tests, and nothing else: `RUNLOG_TEST_KILL_AFTER_APPENDS=N`
/// has the runner kill itself with SIGKILL right after the N-th step's append that starts
/// processes, before it starts them, so a test can cut exactly between the two. Read only by
/// builds with the `fault-points` feature (the tests'), never by a release.
#[derive(Debug, Default)]
pub(crate) struct KillPoint {
    left: Option<u32>,
}

impl KillPoint {
    pub(crate) fn new(left: Option<u32>) -> Self {
        Self { left }
    }

    /// Called once a step's append that starts processes is durable.
    pub(crate) fn appended(&mut self) {
        if let Some(left) = self.left.as_mut() {
            *left = left.saturating_sub(1);
            if *left == 0 {
                let _ = nix::sys::signal::raise(nix::sys::signal::Signal::SIGKILL);
            }
        }
    }
}
