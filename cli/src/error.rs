//! The binary's one error type: a message, the typed error behind it, a hint in the command
//! line's own words, and the exit code it maps to. Libraries say what went wrong; this layer
//! says which `runlog` command or flag to reach for.
//!
//! Exit codes: 0 success; 1 the thing asked about failed (the run failed, verify found damage);
//! 2 usage or bad input; 130 interrupted.

use runlog_core::Rejection;
use runlog_replay::ReplayError;
use runlog_runner::{RunnerError, WorkflowError};
use runlog_store::StoreError;
use std::fmt;

/// How an error ends the process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitKind {
    /// The run (or the checked thing) failed: exit 1.
    Failed,
    /// Bad input or usage: exit 2.
    Input,
    /// Interrupted: exit 130.
    Interrupted,
}

impl ExitKind {
    /// The process exit code.
    pub fn code(self) -> u8 {
        match self {
            ExitKind::Failed => 1,
            ExitKind::Input => 2,
            ExitKind::Interrupted => 130,
        }
    }
}

/// An error with what to do about it.
#[derive(Debug)]
pub struct CliError {
    /// The exit it maps to.
    pub kind: ExitKind,
    /// What went wrong.
    pub message: String,
    /// What to do.
    pub hint: Option<String>,
    /// The typed error this came from, kept for its chain of causes.
    source: Option<Box<dyn std::error::Error + Send + Sync>>,
}

impl CliError {
    /// Bad input (exit 2).
    pub fn input(message: impl Into<String>) -> Self {
        Self::new(ExitKind::Input, message)
    }

    /// A failure of the thing asked about (exit 1).
    pub fn failed(message: impl Into<String>) -> Self {
        Self::new(ExitKind::Failed, message)
    }

    fn new(kind: ExitKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
            hint: None,
            source: None,
        }
    }

    /// An error of `kind` from the typed error `e` (kept as its cause), with `hint`.
    pub(crate) fn wrap(
        kind: ExitKind,
        hint: Option<String>,
        e: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        Self {
            kind,
            message: e.to_string(),
            hint,
            source: Some(Box::new(e)),
        }
    }

    /// Something sent elsewhere that failed (exit 1), with the typed error as its cause.
    pub fn sending(
        message: impl Into<String>,
        e: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        // The error's own words follow the message; its causes follow in the chain.
        let mut failed = Self::wrap(ExitKind::Failed, None, e);
        failed.message = format!("{}: {}", message.into(), failed.message);
        failed
    }

    /// A write to standard output that failed (a full disk behind a redirection).
    pub fn stdout(e: std::io::Error) -> Self {
        Self::failed(format!("cannot write to standard output: {e}"))
    }

    /// Adds a hint.
    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// Prints the error, each cause behind it once, and the hint. A library's error either
    /// says its cause in its message or leaves it to this chain, never both (the workspace's
    /// tests check every `#[error]`), so nothing is said twice.
    pub fn report(&self) {
        errln!("error: {}", self.message);
        let mut cause = self.source.as_deref().and_then(|s| s.source());
        while let Some(c) = cause {
            errln!("  caused by: {c}");
            cause = c.source();
        }
        if let Some(h) = &self.hint {
            errln!("  hint: {h}");
        }
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.message)
    }
}

impl std::error::Error for CliError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source
            .as_deref()
            .map(|s| s as &(dyn std::error::Error + 'static))
    }
}

/// A rejection's hint, with the command that does what it suggests.
pub fn rejection_hint(r: &Rejection) -> String {
    match r {
        Rejection::RunNotStarted => "start the run first (`runlog run WORKFLOW`)".into(),
        Rejection::RunInterrupted => "resume the run first (`runlog resume RUN`)".into(),
        Rejection::UnknownTask { .. } => "list the tasks with `runlog status RUN`".into(),
        Rejection::ReplanPending { .. } => {
            "revise the plan (`runlog replan RUN --file PLAN.json`)".into()
        }
        Rejection::RunFinished => {
            "roll the run back (`runlog rollback`) or fork it (`runlog fork`) to continue from an earlier point".into()
        }
        Rejection::BudgetSpent { .. } => {
            "raise the budget (`runlog budget RUN [TASK] --max-cost-usd N`), then `runlog resume RUN`".into()
        }
        other => other.hint(),
    }
}

fn store_hint(e: &StoreError) -> Option<String> {
    match e {
        StoreError::Locked { .. } => Some(
            "processes of the same runlog share a store; this one is held by another version (or by a process that does not answer): use that version, wait for it to exit, or point --store / RUNLOG_STORE elsewhere"
                .into(),
        ),
        StoreError::NotAStore { .. } => {
            Some("choose an empty or new directory for --store".into())
        }
        StoreError::Damaged { .. } => Some(
            "run `runlog verify` for the full report; `runlog repair` rebuilds the store from its archive, or export the intact prefix with `runlog export`"
                .into(),
        ),
        e if e.is_unreadable_database() => Some(
            "sled cannot read its database: `runlog repair` rebuilds it from the store's archive (the damaged files are kept aside)"
                .into(),
        ),
        other => other.hint(),
    }
}

fn store_exit(e: &StoreError) -> ExitKind {
    if e.is_read_only() {
        // A store path the user cannot write is a bad store path, like one that is not a store.
        return ExitKind::Input;
    }
    match e {
        StoreError::Locked { .. }
        | StoreError::NotAStore { .. }
        | StoreError::NewerFormat { .. }
        | StoreError::NewerSchema { .. }
        | StoreError::Exposed { .. }
        | StoreError::Invalid(_) => ExitKind::Input,
        _ => ExitKind::Failed,
    }
}

fn replay_hint(e: &ReplayError) -> Option<String> {
    match e {
        ReplayError::UnknownRun { .. } => Some("list the runs with `runlog runs`".into()),
        ReplayError::Forgotten { run, .. } => Some(format!(
            "`runlog verify {run}` shows its tombstone, which keeps its digest: a kept export of it still checks against it"
        )),
        ReplayError::RunExists { .. } => Some("choose another id (`--as NEW`)".into()),
        ReplayError::Decode { .. } => Some("run `runlog verify` on the run".into()),
        ReplayError::ReaderStopped { .. } => {
            Some("run `runlog verify` on the run and try again".into())
        }
        ReplayError::Import { .. } => Some("the file must be a `runlog export` of one run".into()),
        ReplayError::Store(s) => store_hint(s),
        ReplayError::Rejected(r) => Some(rejection_hint(r)),
        other => other.hint(),
    }
}

fn replay_exit(e: &ReplayError) -> ExitKind {
    match e {
        ReplayError::UnknownRun { .. }
        | ReplayError::Forgotten { .. }
        | ReplayError::SeqPastHead { .. }
        | ReplayError::RunExists { .. }
        | ReplayError::Import { .. }
        | ReplayError::Rejected(_) => ExitKind::Input,
        ReplayError::Store(s) => store_exit(s),
        _ => ExitKind::Failed,
    }
}

impl From<StoreError> for CliError {
    fn from(e: StoreError) -> Self {
        Self::wrap(store_exit(&e), store_hint(&e), e)
    }
}

impl From<ReplayError> for CliError {
    fn from(e: ReplayError) -> Self {
        Self::wrap(replay_exit(&e), replay_hint(&e), e)
    }
}

impl From<Rejection> for CliError {
    fn from(r: Rejection) -> Self {
        Self::wrap(ExitKind::Input, Some(rejection_hint(&r)), r)
    }
}

impl From<WorkflowError> for CliError {
    fn from(e: WorkflowError) -> Self {
        let hint = match &e {
            WorkflowError::Read { .. } => "pass the path of a workflow .toml file".into(),
            WorkflowError::Syntax { .. } | WorkflowError::Field { .. } => {
                "see the workflow file reference in docs/workflow-file.md".into()
            }
            WorkflowError::Plan { rejection, .. } => rejection_hint(rejection),
            WorkflowError::NoTests { task, .. } => runlog_runner::conventions_hint(task),
        };
        Self::wrap(ExitKind::Input, Some(hint), e)
    }
}

impl From<RunnerError> for CliError {
    fn from(e: RunnerError) -> Self {
        match e {
            RunnerError::Workflow(w) => (*w).into(),
            RunnerError::Log(r) => r.into(),
            RunnerError::Invalid(r) => (*r).into(),
            RunnerError::RunExists { ref run } => {
                let hint =
                    format!("resume it with `runlog resume {run}`, or choose another --run-id");
                Self::wrap(ExitKind::Input, Some(hint), e)
            }
            RunnerError::NotASubProject { .. } => Self::wrap(
                ExitKind::Input,
                Some(
                    "a sub-project task names a workflow file: workflow = \"phases/x.toml\"".into(),
                ),
                e,
            ),
            RunnerError::Lease(s) => s.into(),
            RunnerError::Git(ref g) => {
                let hint = match g {
                    runlog_runner::git::GitError::Missing(_) => {
                        "install git (Debian: apt-get install git), or set workspace = \"none\" in the workflow's [settings]"
                    }
                    runlog_runner::git::GitError::TooOld { .. } => {
                        "install a newer git, or set workspace = \"none\" in the workflow's [settings]"
                    }
                    runlog_runner::git::GitError::Busy { .. } => {
                        "finish or abort it (`git merge --abort`, `git rebase --abort`), then run again"
                    }
                    runlog_runner::git::GitError::Failed { .. } => {
                        "the log is intact: fix the repository, then `runlog resume` continues the run"
                    }
                };
                let kind = match g {
                    runlog_runner::git::GitError::Failed { .. } => ExitKind::Failed,
                    _ => ExitKind::Input,
                };
                Self::wrap(kind, Some(hint.into()), e)
            }
            RunnerError::Refused(_) => Self::wrap(
                ExitKind::Failed,
                Some(
                    "this is a runlog bug; the log is intact: `runlog resume` continues the run"
                        .into(),
                ),
                e,
            ),
            other => Self::wrap(
                ExitKind::Failed,
                Some("the log is intact: `runlog resume` continues the run".into()),
                other,
            ),
        }
    }
}

/// A file named on the command line could not be read, written or understood: `what` says which
/// and why, `hint` what the file should be.
pub fn bad_file(
    what: impl std::fmt::Display,
    path: &std::path::Path,
    hint: impl Into<String>,
) -> CliError {
    CliError::input(format!("{}: {what}", path.display())).with_hint(hint)
}

/// Shorthand.
pub type Result<T> = std::result::Result<T, CliError>;
