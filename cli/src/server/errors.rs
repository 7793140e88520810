//! API errors: `{"error", "hint"}` with the status a client acts on: 400 bad input, 401 no or
//! a wrong token, 404 an unknown run, 409 refused by the rules or a seq conflict, 500 the
//! store failed. Made from the libraries' typed errors, with hints that name resources and
//! requests, never a command line.

use super::tokens::Scope;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use runlog_core::Rejection;
use runlog_replay::ReplayError;
use runlog_runner::{RunnerError, WorkflowError};
use runlog_store::StoreError;

/// An error as the API answers it.
#[derive(Debug)]
pub struct ApiError {
    status: StatusCode,
    error: String,
    hint: Option<String>,
}

impl ApiError {
    /// A request the API cannot take.
    pub fn bad(error: impl Into<String>, hint: impl Into<String>) -> Self {
        Self {
            status: StatusCode::BAD_REQUEST,
            error: error.into(),
            hint: Some(hint.into()),
        }
    }

    /// A request refused before its handler ran (too large, say), with the status that says so.
    pub fn with_status(
        status: StatusCode,
        error: impl Into<String>,
        hint: impl Into<String>,
    ) -> Self {
        Self {
            status,
            error: error.into(),
            hint: Some(hint.into()),
        }
    }

    /// A path the API does not have.
    pub fn not_found(error: impl Into<String>, hint: impl Into<String>) -> Self {
        Self {
            status: StatusCode::NOT_FOUND,
            error: error.into(),
            hint: Some(hint.into()),
        }
    }

    /// The request could not be served in time.
    pub fn unavailable(error: impl Into<String>, hint: impl Into<String>) -> Self {
        Self {
            status: StatusCode::SERVICE_UNAVAILABLE,
            error: error.into(),
            hint: Some(hint.into()),
        }
    }

    /// The server failed, not the request.
    pub fn internal(error: impl Into<String>) -> Self {
        Self {
            status: StatusCode::INTERNAL_SERVER_ERROR,
            error: error.into(),
            hint: Some("the log is intact; try again, and report it if it persists".into()),
        }
    }

    /// A token whose scope does not allow the request.
    pub fn forbidden(holder: &str, scope: Scope, needed: Scope) -> Self {
        Self {
            status: StatusCode::FORBIDDEN,
            error: format!(
                "the token of {holder} has the {} scope; this needs {}",
                scope.name(),
                needed.name()
            ),
            hint: Some(format!(
                "use a token with the {} scope (read: inspect; steer: also commands; run: also start workflows)",
                needed.name()
            )),
        }
    }

    /// A client holding as many event streams as it may.
    pub fn too_many_streams() -> Self {
        Self {
            status: StatusCode::TOO_MANY_REQUESTS,
            error: format!(
                "this client has {} event streams open already",
                super::stream::MAX_STREAMS_PER_CLIENT
            ),
            hint: Some(
                "close a stream first; one stream per run is enough (`Last-Event-ID` resumes it)"
                    .into(),
            ),
        }
    }

    /// An address that sent wrong tokens too often lately.
    pub fn too_many_failures() -> Self {
        Self {
            status: StatusCode::TOO_MANY_REQUESTS,
            error: format!(
                "more than {} requests without a valid token from this address in the last {} s",
                super::tokens::MAX_FAILURES,
                super::tokens::WINDOW.as_secs()
            ),
            hint: Some("wait a minute, then send a valid token".into()),
        }
    }

    /// No token, or the wrong one.
    pub fn unauthorized() -> Self {
        Self {
            status: StatusCode::UNAUTHORIZED,
            error: "a bearer token is required".into(),
            hint: Some("send `Authorization: Bearer TOKEN` with the token of --token-file".into()),
        }
    }
}

/// 400 for an id that is not a name (bad input, whatever the state), 422 for an idempotency
/// key sent with another command, 409 for the rules.
fn status_of_rejection(r: &Rejection) -> StatusCode {
    match r {
        Rejection::NotAName { .. } | Rejection::InvalidSetting { .. } => StatusCode::BAD_REQUEST,
        // A key sent with another command (the IETF's idempotency-key draft's answer).
        Rejection::KeyReused { .. } => StatusCode::UNPROCESSABLE_ENTITY,
        _ => StatusCode::CONFLICT,
    }
}

/// A rejection's hint in the API's terms: the resource or request that does what it suggests.
fn rejection_hint(r: &Rejection) -> String {
    match r {
        Rejection::UnknownTask { .. } => "GET /v1/runs/{run} lists the run's tasks".into(),
        Rejection::RunFinished => {
            "roll the run back (a rollback command) or fork it (POST /v1/runs/{run}/fork) to continue from an earlier point".into()
        }
        Rejection::ReplanPending { .. } => "revise the plan (a revise-plan command)".into(),
        other => other.hint(),
    }
}

/// The status and hint of a store failure.
fn store_parts(e: &StoreError) -> (StatusCode, Option<String>) {
    match e {
        StoreError::Conflict { .. } => (StatusCode::CONFLICT, e.hint()),
        e if e.is_read_only() => (StatusCode::SERVICE_UNAVAILABLE, e.hint()),
        _ => (
            StatusCode::INTERNAL_SERVER_ERROR,
            e.hint().or_else(|| {
                Some("the log is intact; try again, and report it if it persists".into())
            }),
        ),
    }
}

impl From<Rejection> for ApiError {
    fn from(r: Rejection) -> Self {
        Self {
            status: status_of_rejection(&r),
            hint: Some(rejection_hint(&r)),
            error: r.to_string(),
        }
    }
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> Self {
        let (status, hint) = store_parts(&e);
        Self {
            status,
            error: e.to_string(),
            hint,
        }
    }
}

impl From<ReplayError> for ApiError {
    fn from(e: ReplayError) -> Self {
        let (status, hint) = match &e {
            ReplayError::Store(s) => store_parts(s),
            ReplayError::Rejected(r) => (status_of_rejection(r), Some(rejection_hint(r))),
            ReplayError::UnknownRun { .. } => (
                StatusCode::NOT_FOUND,
                Some("GET /v1/runs lists the runs".into()),
            ),
            ReplayError::Forgotten { run, .. } => (
                StatusCode::NOT_FOUND,
                Some(format!(
                    "GET /v1/runs/{run}/verify shows its tombstone, which keeps its digest"
                )),
            ),
            ReplayError::SeqPastHead { .. } | ReplayError::Import { .. } => {
                (StatusCode::BAD_REQUEST, e.hint())
            }
            ReplayError::RunExists { .. } => (StatusCode::CONFLICT, e.hint()),
            ReplayError::Decode { .. } | ReplayError::ReaderStopped { .. } => (
                StatusCode::INTERNAL_SERVER_ERROR,
                Some("GET /v1/runs/{run}/verify reports the damage".into()),
            ),
            _ => (StatusCode::INTERNAL_SERVER_ERROR, e.hint()),
        };
        Self {
            status,
            error: e.to_string(),
            hint,
        }
    }
}

impl From<crate::queries::rerun::RerunError> for ApiError {
    fn from(e: crate::queries::rerun::RerunError) -> Self {
        use crate::queries::rerun::RerunError;
        match e {
            RerunError::Replay(r) => r.into(),
            RerunError::Workflow(w) => (*w).into(),
            RerunError::NoCalls { .. } => Self::bad(
                e.to_string(),
                "a run's calls are recorded when its workflow turns the gateway on; send {\"answers\": \"live\"} to run it again against the providers",
            ),
            RerunError::UnknownTask { ref run, .. } => {
                let hint = format!("GET /v1/runs/{run} lists its tasks");
                Self::bad(e.to_string(), hint)
            }
            RerunError::OtherTasks { .. } | RerunError::OtherOrder { .. } => Self::bad(
                e.to_string(),
                "give a copy of the run's workflow with only commands, tests or evaluators changed",
            ),
        }
    }
}

impl From<crate::queries::experiment::ExperimentError> for ApiError {
    fn from(e: crate::queries::experiment::ExperimentError) -> Self {
        use crate::queries::experiment::ExperimentError as E;
        match e {
            E::Replay(r) => r.into(),
            E::Store(s) => s.into(),
            E::Unknown { .. } => Self {
                status: StatusCode::NOT_FOUND,
                hint: Some("GET /v1/experiments lists them".into()),
                error: e.to_string(),
            },
            E::Name { .. } | E::Suite { .. } | E::Variant { .. } | E::Rerun { .. } => Self::bad(
                e.to_string(),
                "docs/experiments.md shows how one is defined",
            ),
        }
    }
}

impl From<WorkflowError> for ApiError {
    fn from(e: WorkflowError) -> Self {
        let hint = match &e {
            WorkflowError::Read { .. } => {
                "name a workflow .toml file readable by the server, relative to its working directory".into()
            }
            WorkflowError::Syntax { .. } | WorkflowError::Field { .. } => {
                "fix the workflow file (its format is in the guide's workflow reference)".into()
            }
            WorkflowError::Plan { rejection, .. } => rejection_hint(rejection),
            WorkflowError::NoTests { task, .. } => runlog_runner::conventions_hint(task),
        };
        Self::bad(e.to_string(), hint)
    }
}

impl From<RunnerError> for ApiError {
    fn from(e: RunnerError) -> Self {
        match e {
            RunnerError::Workflow(w) => (*w).into(),
            RunnerError::Log(r) => r.into(),
            RunnerError::Invalid(r) => Self {
                status: StatusCode::BAD_REQUEST,
                hint: Some(rejection_hint(&r)),
                error: r.to_string(),
            },
            RunnerError::RunExists { .. } => Self::bad(
                e.to_string(),
                "choose another \"run\", or leave it out for a new id",
            ),
            RunnerError::NotASubProject { .. } => Self::bad(
                e.to_string(),
                "a sub-project task names a workflow file: workflow = \"phases/x.toml\"",
            ),
            RunnerError::Git(_) => Self::with_status(
                StatusCode::BAD_REQUEST,
                e.to_string(),
                "the workflow's git repository refused: fix it (or set workspace = \"none\"), then start again",
            ),
            other => Self::internal(other.to_string()),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = serde_json::json!({"error": self.error, "hint": self.hint});
        (self.status, axum::Json(body)).into_response()
    }
}
