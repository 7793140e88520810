//! A run's events: a page of them with their words, the live stream, and a large output's blob.

use super::{blocking, Api, P, Q};
use crate::queries::events;
use crate::server::connections::Peer;
use crate::server::errors::ApiError;
use crate::server::stream;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::IntoResponse;
use axum::Json;
use runlog_core::EventKind;
use runlog_replay::Replay;
use runlog_store::EventLog;
use serde::Deserialize;

pub(super) async fn events(
    State(api): State<Api>,
    P(run): P<String>,
    Q(q): Q<events::Asked>,
) -> Result<impl IntoResponse, ApiError> {
    if let Some(kind) = q.kind.as_deref() {
        if !events::is_kind(kind) {
            return Err(ApiError::bad(
                format!("unknown event kind {kind:?}"),
                format!("kinds: {}", EventKind::NAMES.join(", ")),
            ));
        }
    }
    let read = blocking(&api, move |s| Ok(events::read(s, &run, &q)?)).await?;
    Ok(Json(read.page()).into_response())
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct FromSeq {
    from: Option<u64>,
}

pub(super) async fn stream_events(
    State(api): State<Api>,
    P(run): P<String>,
    Q(q): Q<FromSeq>,
    headers: HeaderMap,
    peer: Option<axum::Extension<axum::extract::ConnectInfo<Peer>>>,
) -> Result<impl IntoResponse, ApiError> {
    let slot = api
        .streams
        .take(peer.map(|p| p.0 .0 .0))
        .ok_or_else(ApiError::too_many_streams)?;
    let after = match headers.get("last-event-id") {
        None => None,
        Some(v) => Some(
            v.to_str()
                .ok()
                .and_then(|v| v.trim().parse::<u64>().ok())
                .ok_or_else(|| {
                    ApiError::bad(
                        "Last-Event-ID is not a seq",
                        "send the id of the last event received (its seq), or no Last-Event-ID to start at `from`",
                    )
                })?,
        ),
    };
    // After the last seq there can be, nothing old is sent again.
    let from = after.map_or(q.from.unwrap_or(1), |seq| seq.saturating_add(1));
    let known = {
        let run = run.clone();
        blocking(&api, move |s| {
            Replay::new(s).head_seq(&run)?;
            Ok(())
        })
    };
    known.await?;
    Ok(stream::events(api.store.clone(), run, from, slot))
}

/// A large output whole: an `output-recorded` event holds its beginning and its blob's hash.
pub(super) async fn blob(
    State(api): State<Api>,
    P(hash): P<String>,
) -> Result<impl IntoResponse, ApiError> {
    let Some(h) = runlog_core::Hash::from_hex(&hash) else {
        return Err(ApiError::bad(
            format!("{hash:?} is not a blob hash"),
            "a blob hash is 64 hex digits, the `blob` of an output-recorded event",
        ));
    };
    let bytes = blocking(&api, move |s| {
        s.get_blob(&h.0).map_err(ApiError::from)?.ok_or_else(|| {
            ApiError::not_found(
                format!("no blob {hash} in this store"),
                "blobs are named by output-recorded events (GET /v1/runs/RUN/events)",
            )
        })
    })
    .await?;
    Ok((
        [
            (
                axum::http::header::CONTENT_TYPE,
                "text/plain; charset=utf-8",
            ),
            (axum::http::header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        ],
        bytes,
    ))
}
