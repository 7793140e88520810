//! The runs: listed, started, interrupted, and each one's board.

use super::{blocking, Api, At, P, Q};
use crate::queries::board::BoardView;
use crate::queries::recorded::{Executing, Interrupting};
use crate::server::errors::ApiError;
use crate::server::hosted::Start;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::Json;
use runlog_replay::Replay;
use runlog_store::EventLog;
use std::sync::Arc;

pub(super) async fn runs(
    State(api): State<Api>,
    Q(only): Q<crate::queries::runs::Only>,
) -> Result<impl IntoResponse, ApiError> {
    let rows = blocking(&api, move |s| Ok(only.of(crate::queries::runs::rows(s)?))).await?;
    Ok(Json(rows))
}

pub(super) async fn start_run(
    State(api): State<Api>,
    body: Result<axum::body::Bytes, axum::extract::rejection::BytesRejection>,
) -> Result<impl IntoResponse, ApiError> {
    const HINT: &str =
        "send {\"workflow\": \"path/to/workflow.toml\"}, optionally with \"run\" and \"jobs\"";
    let body = body.map_err(|e| ApiError::with_status(e.status(), e.body_text(), HINT))?;
    let start: Start = serde_json::from_slice(&body)
        .map_err(|e| ApiError::bad(format!("not a start request: {e}"), HINT))?;
    let run = api
        .hosted
        .start(api.store.clone(), api.dir.clone(), start)
        .await?;
    Ok((
        StatusCode::CREATED,
        Json(Executing {
            run,
            from_run: None,
            executing: true,
        }),
    ))
}

pub(super) async fn interrupt(
    State(api): State<Api>,
    P(run): P<String>,
) -> Result<impl IntoResponse, ApiError> {
    if !api.hosted.interrupt(&run) {
        return Err(ApiError::with_status(
            StatusCode::CONFLICT,
            format!("run {run} is not being executed by this server"),
            format!(
                "runs it executes: {}; a run in a terminal stops with Ctrl-C there",
                api.hosted.live().join(", ")
            ),
        ));
    }
    Ok((
        StatusCode::ACCEPTED,
        Json(Interrupting {
            run,
            interrupting: true,
        }),
    ))
}

pub(super) async fn board(
    State(api): State<Api>,
    P(run): P<String>,
    Q(q): Q<At>,
) -> Result<impl IntoResponse, ApiError> {
    // A run this server executes: its engine's state, unless appends have gone past it.
    let shown = q.at.is_none().then(|| api.hosted.state(&run)).flatten();
    let body = blocking(&api, move |s| {
        let head = s.head(&run)?;
        let replay = Replay::new(s);
        let state = match (shown, head) {
            (Some(state), Some(head)) if head.seq == state.seq => state,
            // Appends the engine has not shown yet (its own, just recorded, or another
            // terminal's): folded onto its state, not from the start.
            (Some(state), Some(head)) if head.seq > state.seq => {
                Arc::new(replay.advance(&run, (*state).clone(), head.seq)?)
            }
            _ => Arc::new(replay.state_at_or_head(&run, q.at)?),
        };
        Ok(BoardView::of(&replay, &run, &state))
    })
    .await?;
    Ok(Json(body))
}
