//! `GET /v1/experiments` and `GET /v1/experiments/{name}`: `runlog experiments` and
//! `runlog experiment show --json` over the API, the same bytes; `POST /v1/experiments`
//! defines one (checked as `runlog experiment run` checks it) and the server executes it.

use super::{blocking, Api, ApiError, P};
use crate::queries::experiment::report::{list, view, ExperimentStarted};
use crate::queries::experiment::{define, plan, suite, Asked};
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::Json;
use runlog_core::rerun::Answers;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// `POST /v1/experiments`'s body, as `runlog experiment run` takes it (paths relative to the
/// server's working directory).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Define {
    name: String,
    #[serde(default)]
    runs: Vec<String>,
    since: Option<String>,
    workflow: Option<String>,
    outcome: Option<String>,
    suite: Option<PathBuf>,
    variants: BTreeMap<String, PathBuf>,
    repeat: Option<u32>,
    answers: Option<Answers>,
    max_cost_usd: Option<f64>,
}

pub(super) async fn start(
    State(api): State<Api>,
    body: Result<axum::body::Bytes, axum::extract::rejection::BytesRejection>,
) -> Result<impl IntoResponse, ApiError> {
    const HINT: &str = "send {\"name\": \"NAME\", \"runs\": [\"RUN\"], \"variants\": {\"VARIANT\": \"path/to/variant.toml\"}}, optionally with since, workflow, outcome, suite, repeat, answers (\"recorded-then-live\" or \"live\"), max_cost_usd";
    let body = body.map_err(|e| ApiError::with_status(e.status(), e.body_text(), HINT))?;
    let d: Define = serde_json::from_slice(&body)
        .map_err(|e| ApiError::bad(format!("not an experiment: {e}"), HINT))?;
    let since = d
        .since
        .as_deref()
        .map(crate::queries::judges::parse_since)
        .transpose()
        .map_err(|e| ApiError::bad(format!("since: {e}"), HINT))?;
    if d.answers == Some(Answers::Recorded) {
        return Err(ApiError::bad(
            "an experiment's answers are \"recorded-then-live\" or \"live\"",
            HINT,
        ));
    }
    let asked = Asked {
        name: d.name.clone(),
        suite: suite::Choice {
            runs: d.runs,
            since,
            workflow: d.workflow,
            outcome: d.outcome,
            file: d.suite,
        },
        variants: d.variants.into_iter().collect(),
        repeat: d.repeat.unwrap_or(1).clamp(1, 100),
        answers: d.answers.unwrap_or(Answers::RecordedThenLive),
        max_cost_usd: d.max_cost_usd,
    };
    let now = api.hosted.host().clock().now();
    let x = blocking(&api, move |s| Ok(define(s, &asked, now)?)).await?;
    api.hosted
        .experiment(api.store.clone(), api.dir.clone(), x.name.clone())
        .await?;
    Ok((
        StatusCode::CREATED,
        Json(ExperimentStarted {
            reruns: u32::try_from(plan(&x).len()).unwrap_or(u32::MAX),
            experiment: x.name,
            skipped: x.skipped,
            executing: true,
        }),
    ))
}

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
