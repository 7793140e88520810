//! API errors: `{"error", "hint"}` with the status a client acts on: 400 bad input, 401 no or
//! a wrong token, 404 an unknown run, 409 refused by the rules or a seq conflict, 500 the
//! store failed.

use super::tokens::Scope;
use crate::error::{rejection_hint, CliError, ExitKind};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use runlog_core::Rejection;
use runlog_replay::ReplayError;
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

/// 400 for an id that is not a name (bad input, whatever the state), 409 for the rules.
fn status_of_rejection(r: &Rejection) -> StatusCode {
    match r {
        Rejection::NotAName { .. } => StatusCode::BAD_REQUEST,
        _ => StatusCode::CONFLICT,
    }
}

/// The status a typed cause calls for, if it calls for one.
fn status_of_cause(e: &(dyn std::error::Error + 'static)) -> Option<StatusCode> {
    if let Some(r) = e.downcast_ref::<ReplayError>() {
        return match r {
            ReplayError::UnknownRun { .. } => Some(StatusCode::NOT_FOUND),
            ReplayError::Rejected(r) => Some(status_of_rejection(r)),
            ReplayError::RunExists { .. } => Some(StatusCode::CONFLICT),
            ReplayError::Store(s) => status_of_cause(s),
            _ => None,
        };
    }
    if let Some(r) = e.downcast_ref::<Rejection>() {
        return Some(status_of_rejection(r));
    }
    match e.downcast_ref::<StoreError>() {
        Some(StoreError::Conflict { .. }) => Some(StatusCode::CONFLICT),
        _ => None,
    }
}

impl From<CliError> for ApiError {
    fn from(e: CliError) -> Self {
        let typed = std::error::Error::source(&e).and_then(status_of_cause);
        let status = typed.unwrap_or(match e.kind {
            ExitKind::Input => StatusCode::BAD_REQUEST,
            ExitKind::Failed | ExitKind::Interrupted => StatusCode::INTERNAL_SERVER_ERROR,
        });
        Self {
            status,
            error: e.message.clone(),
            hint: e.hint.clone(),
        }
    }
}

impl From<Rejection> for ApiError {
    fn from(r: Rejection) -> Self {
        Self {
            status: status_of_rejection(&r),
            error: r.to_string(),
            hint: Some(rejection_hint(&r)),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = serde_json::json!({"error": self.error, "hint": self.hint});
        (self.status, axum::Json(body)).into_response()
    }
}
