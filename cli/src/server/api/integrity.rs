//! A run's history checked, digested and exported whole.

use super::{blocking, Api, P};
use crate::server::errors::ApiError;
use axum::extract::State;
use axum::response::IntoResponse;
use axum::Json;
use runlog_replay::Replay;

pub(super) async fn verify(
    State(api): State<Api>,
    P(run): P<String>,
) -> Result<impl IntoResponse, ApiError> {
    let body = blocking(&api, move |s| {
        // A forgotten run is its tombstone, verified with the register.
        if runlog_store::EventLog::head(s, &run)?.is_none() {
            if let Some(c) = crate::queries::verify::check_forgotten(s, &run)? {
                return Ok(c);
            }
        }
        // An unknown run is a 404, not an empty verification.
        Replay::new(s).head_seq(&run)?;
        Ok(crate::queries::verify::check(s, &run)?)
    })
    .await?;
    Ok(Json(body))
}

pub(super) async fn digest(
    State(api): State<Api>,
    P(run): P<String>,
) -> Result<impl IntoResponse, ApiError> {
    let body = blocking(&api, move |s| {
        runlog_replay::digest::digest(s, &run).map_err(ApiError::from)
    })
    .await?;
    Ok(Json(body))
}

pub(super) async fn export(
    State(api): State<Api>,
    P(run): P<String>,
) -> Result<impl IntoResponse, ApiError> {
    let lines = blocking(&api, move |s| {
        let mut out = Vec::new();
        runlog_replay::export::export(s, &run, &mut out)?;
        Ok(out)
    })
    .await?;
    Ok((
        [(axum::http::header::CONTENT_TYPE, "application/x-ndjson")],
        lines,
    ))
}
