//! `GET /v1/experiments` and `GET /v1/experiments/{name}`: `runlog experiments` and
//! `runlog experiment show --json` over the API, the same bytes.

use super::{blocking, Api, ApiError, P};
use crate::queries::experiment::report::{list, view};
use axum::extract::State;
use axum::response::IntoResponse;
use axum::Json;

pub(super) async fn experiments(State(api): State<Api>) -> Result<impl IntoResponse, ApiError> {
    let body = blocking(&api, move |s| Ok(list(s)?)).await?;
    Ok(Json(body))
}

pub(super) async fn experiment(
    State(api): State<Api>,
    P(name): P<String>,
) -> Result<impl IntoResponse, ApiError> {
    let body = blocking(&api, move |s| Ok(view(s, &name)?)).await?;
    Ok(Json(body))
}
