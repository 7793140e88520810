//! The binary's one error type: a message, a hint, and the exit code it maps to.
//!
//! Exit codes: 0 success; 1 the thing asked about failed (the run failed, verify found damage);
//! 2 usage or bad input; 130 interrupted.

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
}

impl CliError {
    /// Bad input (exit 2).
    pub fn input(message: impl Into<String>) -> Self {
        Self {
            kind: ExitKind::Input,
            message: message.into(),
            hint: None,
        }
    }

    /// A failure of the thing asked about (exit 1).
    pub fn failed(message: impl Into<String>) -> Self {
        Self {
            kind: ExitKind::Failed,
            message: message.into(),
            hint: None,
        }
    }

    /// Adds a hint.
    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.message)
    }
}

impl std::error::Error for CliError {}

impl From<runlog_store::StoreError> for CliError {
    fn from(e: runlog_store::StoreError) -> Self {
        Self {
            kind: CliError::from_store_kind(&e),
            hint: e.hint(),
            message: e.to_string(),
        }
    }
}

impl From<runlog_replay::ReplayError> for CliError {
    fn from(e: runlog_replay::ReplayError) -> Self {
        use runlog_replay::ReplayError as R;
        let kind = match &e {
            R::UnknownRun { .. }
            | R::SeqPastHead { .. }
            | R::RunExists { .. }
            | R::Import { .. }
            | R::Rejected(_) => ExitKind::Input,
            R::Store(s) => CliError::from_store_kind(s),
            _ => ExitKind::Failed,
        };
        Self {
            kind,
            hint: e.hint(),
            message: e.to_string(),
        }
    }
}

impl CliError {
    fn from_store_kind(e: &runlog_store::StoreError) -> ExitKind {
        match e {
            runlog_store::StoreError::Locked { .. }
            | runlog_store::StoreError::NotAStore { .. }
            | runlog_store::StoreError::NewerFormat { .. }
            | runlog_store::StoreError::Invalid(_) => ExitKind::Input,
            _ => ExitKind::Failed,
        }
    }
}

impl From<runlog_core::Rejection> for CliError {
    fn from(r: runlog_core::Rejection) -> Self {
        Self {
            kind: ExitKind::Input,
            hint: Some(r.hint()),
            message: r.to_string(),
        }
    }
}

/// Shorthand.
pub type Result<T> = std::result::Result<T, CliError>;
