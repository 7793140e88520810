//! What a run's history says: its audit, a task's model calls, its cost, its supervisor stack,
//! its stages, and two runs compared.

use super::{blocking, json_bytes, Api, At, P, Q};
use crate::queries::audit::AuditView;
use crate::queries::stack::StackView;
use crate::queries::stages::StagesView;
use crate::server::errors::ApiError;
use axum::extract::State;
use axum::response::IntoResponse;
use axum::Json;
use runlog_replay::Replay;
use serde::Deserialize;

pub(super) async fn audit(
    State(api): State<Api>,
    P(run): P<String>,
) -> Result<impl IntoResponse, ApiError> {
    let body = blocking(&api, move |s| {
        let p = Replay::new(s).project(&run, None, None)?;
        Ok(AuditView::of(&run, p))
    })
    .await?;
    Ok(Json(body))
}

/// Task `task` of `run` at its head: the run's state, the task's spec and its events (404 for
/// a task the run does not have).
fn story_at_head(s: &runlog_store::Store, run: &str, task: &str) -> Result<Story, ApiError> {
    let replay = Replay::new(s);
    let state = replay.head_state(run)?;
    let id = runlog_core::TaskId::from(task);
    let Some(spec) = state.task(&id).map(|t| t.spec.clone()) else {
        return Err(ApiError::not_found(
            format!("run {run} has no task {task}"),
            format!("GET /v1/runs/{run} lists its tasks"),
        ));
    };
    let events = replay.events(run, 1, state.seq)?;
    let story = crate::queries::story::story_of(&events, &id);
    Ok((state, spec, story))
}

/// A run's state, one task's spec and its events.
type Story = (
    runlog_core::RunState,
    runlog_core::TaskSpec,
    Vec<(u64, runlog_core::Event)>,
);

/// A task's whole story: its row, spec, events with their words, and model calls (`runlog
/// show RUN TASK --json`).
pub(super) async fn task(
    State(api): State<Api>,
    P((run, task)): P<(String, String)>,
) -> Result<impl IntoResponse, ApiError> {
    let body = blocking(&api, move |s| {
        let (state, spec, story) = story_at_head(s, &run, &task)?;
        json_bytes(&crate::queries::task::view(s, &run, &state, &spec, &story))
    })
    .await?;
    Ok((
        [(axum::http::header::CONTENT_TYPE, "application/json")],
        body,
    ))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct CallsQuery {
    attempt: Option<u32>,
    turns: Option<bool>,
}

/// A task's model calls, each with what was new in its request and the model's answer in
/// words (`runlog show RUN TASK --calls --json`); with `turns=true`, each call's turns too.
pub(super) async fn calls(
    State(api): State<Api>,
    P((run, task)): P<(String, String)>,
    Q(q): Q<CallsQuery>,
) -> Result<impl IntoResponse, ApiError> {
    let body = blocking(&api, move |s| {
        let (_, _, story) = story_at_head(s, &run, &task)?;
        Ok(crate::queries::calls::CallsView::of(
            s,
            &run,
            &task,
            &story,
            q.attempt,
            q.turns.unwrap_or(false),
        ))
    })
    .await?;
    Ok(Json(body))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct CostQuery {
    at: Option<u64>,
    by: Option<String>,
}

pub(super) async fn cost(
    State(api): State<Api>,
    P(run): P<String>,
    Q(q): Q<CostQuery>,
) -> Result<impl IntoResponse, ApiError> {
    let by = match q.by.as_deref() {
        None => runlog_core::projections::CostBy::default(),
        Some(by) => crate::queries::cost::parse_by(by)
            .map_err(|e| ApiError::bad(e.to_string(), crate::queries::cost::groupings()))?,
    };
    let body = blocking(&api, move |s| {
        let state = Replay::new(s).state_at_or_head(&run, q.at)?;
        Ok(crate::queries::cost::CostView::of(&run, &state, by))
    })
    .await?;
    Ok(Json(body))
}

/// A run over wall-clock time: a row per task with its attempts', tests', evaluations', merges'
/// and waits' bars, and marks for its model calls and decisions.
pub(super) async fn timeline(
    State(api): State<Api>,
    P(run): P<String>,
) -> Result<impl IntoResponse, ApiError> {
    let body = blocking(&api, move |s| {
        json_bytes(&crate::queries::timeline::of(&Replay::new(s), &run)?)
    })
    .await?;
    Ok((
        [(axum::http::header::CONTENT_TYPE, "application/json")],
        body,
    ))
}

pub(super) async fn stack(
    State(api): State<Api>,
    P(run): P<String>,
    Q(q): Q<At>,
) -> Result<impl IntoResponse, ApiError> {
    let body = blocking(&api, move |s| {
        let p = Replay::new(s).project(&run, q.at, None)?;
        json_bytes(&StackView::of(&run, &p))
    })
    .await?;
    Ok((
        [(axum::http::header::CONTENT_TYPE, "application/json")],
        body,
    ))
}

pub(super) async fn stages(
    State(api): State<Api>,
    P(run): P<String>,
    Q(q): Q<At>,
) -> Result<impl IntoResponse, ApiError> {
    let body = blocking(&api, move |s| {
        let state = Replay::new(s).state_at_or_head(&run, q.at)?;
        Ok(StagesView::of(&run, &state))
    })
    .await?;
    Ok(Json(body))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Sides {
    left: String,
    right: String,
}

pub(super) async fn diff(
    State(api): State<Api>,
    Q(q): Q<Sides>,
) -> Result<impl IntoResponse, ApiError> {
    let body = blocking(&api, move |s| {
        let (_, _, d) = crate::queries::diff::compare(s, &q.left, &q.right, false)?;
        let body = crate::queries::diff::body(s, &q.left, &q.right, &d)?;
        json_bytes(&body)
    })
    .await?;
    Ok((
        [(axum::http::header::CONTENT_TYPE, "application/json")],
        body,
    ))
}
