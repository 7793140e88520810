//! What can stop the runner, apart from the run's own outcome (a failed task is not an error).

use runlog_core::Rejection;
use runlog_replay::ReplayError;
use runlog_store::StoreError;
use std::path::PathBuf;
use thiserror::Error;

/// Everything the runner can fail with. The log stays intact in every case: what was recorded
/// was recorded whole, and `resume` continues from it.
#[derive(Debug, Error)]
pub enum RunnerError {
    /// The workflow file cannot be read or is not valid; nothing ran.
    #[error(transparent)]
    Workflow(#[from] Box<WorkflowError>),
    /// Reading or writing the run's log failed.
    #[error(transparent)]
    Log(#[from] ReplayError),
    /// The blob area failed while keeping a large output.
    #[error("cannot keep a command's output: {0}")]
    Output(StoreError),
    /// The model gateway could not be opened.
    #[error("cannot open the model gateway")]
    Gateway(#[source] runlog_gateway::GatewayError),
    /// A rerun's recorded answers could not be read.
    #[error("cannot answer the rerun's calls from the recording")]
    Recording(#[source] runlog_gateway::RecordingError),
    /// The runner proposed something the rules refuse: a defect in the runner.
    #[error("the runner issued a command the rules refused: {0}")]
    Refused(Box<Rejection>),
    /// The board could not be encoded for the replan command.
    #[error("cannot encode the board for the replan command: {0}")]
    Board(serde_json::Error),
    /// An option or id the rules refuse (`--jobs 0`, a run id that is not a name): nothing ran.
    #[error(transparent)]
    Invalid(Box<Rejection>),
    /// A run of that id exists already: nothing was recorded.
    #[error("run {run} already exists in this store")]
    RunExists {
        /// The run.
        run: String,
    },
    /// A child run was asked for a task that is not a sub-project.
    #[error("run {run} has no sub-project task {task}")]
    NotASubProject {
        /// The parent run.
        run: String,
        /// The task named.
        task: runlog_core::TaskId,
    },
    /// The worker's lease on the shared store could not be taken, renewed or read.
    #[error("the worker's lease: {0}")]
    Lease(StoreError),
    /// Git refused what the run's workspace needs.
    #[error("git: {0}")]
    Git(crate::git::GitError),
    /// The process environment refused something the runner needs.
    #[error("cannot {what}: {cause}")]
    System {
        /// What was being done.
        what: &'static str,
        /// The OS error.
        cause: std::io::Error,
    },
}

impl From<crate::git::GitError> for RunnerError {
    fn from(e: crate::git::GitError) -> Self {
        Self::Git(e)
    }
}

impl RunnerError {
    /// A store failure while reading the log.
    pub fn store(e: StoreError) -> Self {
        Self::Log(ReplayError::Store(e))
    }

    /// Whether the shared store refused this worker's appends (its lease was lost).
    pub fn is_fenced(&self) -> bool {
        matches!(
            self,
            Self::Log(ReplayError::Store(StoreError::Fenced { .. }))
                | Self::Lease(StoreError::Fenced { .. })
        )
    }
}

/// A workflow file that cannot run, with where in it.
#[derive(Debug, Error)]
pub enum WorkflowError {
    /// The file cannot be read.
    #[error("cannot read workflow {}: {cause}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The OS error.
        cause: std::io::Error,
    },
    /// Not valid TOML, or a field the format does not have (toml's message names the line).
    #[error("{}: {message}", path.display())]
    Syntax {
        /// The file.
        path: PathBuf,
        /// toml's message.
        message: String,
    },
    /// A field's value is not allowed.
    #[error("{}: {place}field {field}: {message}", path.display())]
    Field {
        /// The file.
        path: PathBuf,
        /// `line N, task "ID", ` when known.
        place: String,
        /// The field.
        field: &'static str,
        /// What is wrong.
        message: String,
    },
    /// A task that requires testing has no `test` and no file the conventions look for.
    #[error("{}: {place}task {task:?} requires testing, but has no `test` command and no test found by the conventions", path.display())]
    NoTests {
        /// The file.
        path: PathBuf,
        /// `line N: ` when known.
        place: String,
        /// The task.
        task: String,
    },
    /// The plan breaks a rule of the engine (ids, dependencies, cycles, depth, settings).
    #[error("{}: {place}{rejection}", path.display())]
    Plan {
        /// The file.
        path: PathBuf,
        /// `line N: ` when known.
        place: String,
        /// The rule.
        rejection: Box<Rejection>,
    },
}
