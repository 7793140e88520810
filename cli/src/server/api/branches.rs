//! New runs from a run's history: a fork at a seq, and a rerun (executed by this server); and
//! a run driven on from its log (a resume).

use super::{blocking, optional_body, Api, P};
use crate::queries::recorded::Executing;
use crate::server::errors::ApiError;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::Json;
use serde::Deserialize;

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ForkFrom {
    at: Option<u64>,
    #[serde(rename = "as")]
    new: Option<String>,
}

pub(super) async fn fork(
    State(api): State<Api>,
    P(run): P<String>,
    body: Result<axum::body::Bytes, axum::extract::rejection::BytesRejection>,
) -> Result<impl IntoResponse, ApiError> {
    const HINT: &str =
        "send {\"at\": SEQ} and optionally {\"as\": \"NEW-RUN\"}; {} forks at the head";
    let from: ForkFrom = optional_body(body, "fork", HINT)?;
    let now = api.hosted.host().clock().now();
    let body = blocking(&api, move |s| {
        Ok(crate::queries::fork::fork(s, &run, from.at, from.new, now)?)
    })
    .await?;
    Ok((StatusCode::CREATED, Json(body)))
}

/// What a rerun asks for (`runlog rerun`'s options).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RerunFrom {
    at: Option<u64>,
    #[serde(default)]
    tasks: Vec<String>,
    workflow: Option<std::path::PathBuf>,
    answers: Option<runlog_core::rerun::Answers>,
    #[serde(rename = "as")]
    new: Option<String>,
}

pub(super) async fn rerun(
    State(api): State<Api>,
    P(run): P<String>,
    body: Result<axum::body::Bytes, axum::extract::rejection::BytesRejection>,
) -> Result<impl IntoResponse, ApiError> {
    const HINT: &str = "send {} to rerun from the start with recorded answers, or any of {\"at\": SEQ, \"tasks\": [\"TASK\"], \"workflow\": \"FILE\", \"answers\": \"recorded\"|\"live\"|\"recorded-then-live\", \"as\": \"NEW-RUN\"}";
    let from: RerunFrom = optional_body(body, "rerun", HINT)?;
    let asked = crate::queries::rerun::Asked {
        run: run.clone(),
        at: from.at,
        tasks: from.tasks,
        answers: from
            .answers
            .unwrap_or(runlog_core::rerun::Answers::Recorded),
        workflow: from.workflow,
        new: from.new,
        specs: None,
        lineage: None,
    };
    let new = api
        .hosted
        .rerun(api.store.clone(), api.dir.clone(), asked)
        .await?;
    Ok((
        StatusCode::CREATED,
        Json(Executing {
            run: new,
            from_run: Some(run),
            executing: true,
        }),
    ))
}

/// Drives an interrupted, crashed or paused run on from its log (`runlog resume`), executed by
/// this server.
pub(super) async fn resume(
    State(api): State<Api>,
    P(run): P<String>,
) -> Result<impl IntoResponse, ApiError> {
    let resumed = api
        .hosted
        .resume(api.store.clone(), api.dir.clone(), run)
        .await?;
    Ok((
        StatusCode::CREATED,
        Json(Executing {
            run: resumed,
            from_run: None,
            executing: true,
        }),
    ))
}
