//! `GET /v1/judges` and `GET /v1/review`: `runlog judges` and `runlog review` over the API.

use super::{blocking, Api, ApiError, Q};
use crate::queries::judges::{parse_since, parse_threshold, parse_weights, queue, report, Ask};
use axum::extract::State;
use axum::response::IntoResponse;
use axum::Json;
use runlog_core::projections::judges::Filter;
use serde::Deserialize;

/// `GET /v1/judges`'s parameters, as `runlog judges` takes them.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct JudgesQuery {
    runs: Option<String>,
    since: Option<String>,
    workflow: Option<String>,
    evaluator: Option<String>,
    threshold: Option<String>,
    weights: Option<String>,
}

/// Runs named by `runs=a,b` (every run when none is).
fn runs(list: Option<&str>) -> Vec<String> {
    list.map(|l| {
        l.split(',')
            .map(str::trim)
            .filter(|r| !r.is_empty())
            .map(str::to_owned)
            .collect()
    })
    .unwrap_or_default()
}

fn parsed<T>(
    what: &str,
    text: Option<&str>,
    parse: fn(&str) -> Result<T, String>,
) -> Result<Option<T>, ApiError> {
    text.map(parse).transpose().map_err(|e| {
        ApiError::bad(
            format!("{what}: {e}"),
            "GET /v1/openapi.json lists the parameters of /v1/judges",
        )
    })
}

pub(super) async fn judges(
    State(api): State<Api>,
    Q(q): Q<JudgesQuery>,
) -> Result<impl IntoResponse, ApiError> {
    let ask = Ask::new(
        runs(q.runs.as_deref()),
        Filter {
            since: parsed("since", q.since.as_deref(), parse_since)?,
            workflow: q.workflow,
            evaluator: q.evaluator,
        },
        parsed("threshold", q.threshold.as_deref(), parse_threshold)?,
        parsed("weights", q.weights.as_deref(), parse_weights)?,
    );
    let body = blocking(&api, move |s| Ok(report(s, &ask)?)).await?;
    Ok(Json(body))
}

/// `GET /v1/review`'s parameters.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ReviewQuery {
    runs: Option<String>,
}

pub(super) async fn review(
    State(api): State<Api>,
    Q(q): Q<ReviewQuery>,
) -> Result<impl IntoResponse, ApiError> {
    let runs = runs(q.runs.as_deref());
    let body = blocking(&api, move |s| Ok(queue(s, &runs)?)).await?;
    Ok(Json(body))
}
