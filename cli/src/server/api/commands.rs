//! Steering a run: a command as `runlog emit` takes it, and a budget change; each goes through
//! the one intake (its secrets replaced) and the one write path.

use super::{blocking, json_bytes, principal, Api, MAX_TASKS, P};
use crate::intake::parse_line;
use crate::queries::recorded::Recorded;
use crate::server::connections::UnixPeer;
use crate::server::errors::ApiError;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use runlog_core::{CommandKind, Principal, Rejection};
use runlog_replay::Session;
use serde::Deserialize;

const COMMAND_HINT: &str = "send one JSON command, as `runlog emit` takes it, e.g. {\"command\":\"approve\",\"task\":\"a\",\"by\":\"me\"}";

pub(super) async fn command(
    State(api): State<Api>,
    P(run): P<String>,
    tcp: Option<axum::Extension<Principal>>,
    unix: Option<axum::Extension<axum::extract::ConnectInfo<UnixPeer>>>,
    headers: axum::http::HeaderMap,
    body: Result<axum::body::Bytes, axum::extract::rejection::BytesRejection>,
) -> Result<impl IntoResponse, ApiError> {
    let body = body.map_err(|e| ApiError::with_status(e.status(), e.body_text(), COMMAND_HINT))?;
    let key = idempotency_key(&headers)?;
    let text = std::str::from_utf8(&body)
        .map_err(|e| ApiError::bad(format!("the body is not UTF-8: {e}"), COMMAND_HINT))?;
    let host = api.hosted.host();
    let cmd = parse_line(text.trim(), || host.clock().now(), host.intake_redactor())
        .map_err(|e| ApiError::bad(format!("not a command: {e}"), COMMAND_HINT))?;
    let tasks = match &cmd.kind {
        CommandKind::StartRun { tasks, .. } => tasks.len(),
        CommandKind::RevisePlan { add, .. } => add.len(),
        _ => 0,
    };
    if tasks > MAX_TASKS {
        return Err(ApiError::with_status(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("{tasks} tasks in one request; at most {MAX_TASKS}"),
            "start with part of the plan and add the rest with add-task commands or a revise-plan",
        ));
    }
    let cmd = match key {
        Some(key) => cmd.keyed(key),
        None => cmd,
    };
    execute(&api, run, cmd, principal(tcp, unix)).await
}

/// The longest idempotency key taken.
const MAX_KEY: usize = 255;

const KEY_HINT: &str = "an Idempotency-Key is 1 to 255 visible ASCII characters, one per command (a UUID, or the step's own id)";

/// The request's `Idempotency-Key`, when it sent one.
fn idempotency_key(headers: &axum::http::HeaderMap) -> Result<Option<String>, ApiError> {
    let Some(value) = headers.get("idempotency-key") else {
        return Ok(None);
    };
    let key = value
        .to_str()
        .ok()
        .filter(|k| (1..=MAX_KEY).contains(&k.len()) && k.bytes().all(|b| b.is_ascii_graphic()))
        .ok_or_else(|| ApiError::bad("the Idempotency-Key header is not a key", KEY_HINT))?;
    Ok(Some(key.to_owned()))
}

/// Records one command through the one write path, as `principal` when one is known.
pub(super) async fn execute(
    api: &Api,
    run: String,
    cmd: runlog_core::Command,
    principal: Option<Principal>,
) -> Result<impl IntoResponse, ApiError> {
    // Every decision the API takes passes the one intake: what arrives with it (`by`, a
    // reason) has its secrets replaced before it is decided.
    let cmd = crate::intake::redacted(cmd, api.hosted.host().intake_redactor()).map_err(|why| {
        ApiError::bad(
            format!("not recorded: {why}"),
            "keep secrets out of ids and names",
        )
    })?;
    let cmd = match principal {
        Some(p) => cmd.issued_by(p),
        None => cmd,
    };
    let starts = matches!(cmd.kind, CommandKind::StartRun { .. });
    let body = blocking(api, move |s| {
        // Only a start makes a run: any other command on an unknown run is a 404.
        let mut session = if starts {
            Session::open(s, &run)?
        } else {
            Session::existing(s, &run)?
        };
        let head = session.state().seq;
        match session.execute(cmd)? {
            // Sent again with its key: what it recorded then is the answer.
            Err(Rejection::AlreadyRecorded { first, last, .. }) => {
                let events = runlog_replay::events::read(s, &run, first, last)?;
                Ok((true, json_bytes(&Recorded::of(&run, head, &events, true))?))
            }
            recorded => {
                let recorded = recorded?;
                let head = recorded.head_seq().unwrap_or(session.state().seq);
                Ok((
                    false,
                    json_bytes(&Recorded::of(&run, head, &recorded.events, false))?,
                ))
            }
        }
    })
    .await?;
    let (replayed, body) = body;
    Ok((
        StatusCode::OK,
        [
            (axum::http::header::CONTENT_TYPE, "application/json"),
            (
                axum::http::HeaderName::from_static("idempotent-replayed"),
                if replayed { "true" } else { "false" },
            ),
        ],
        body,
    ))
}

/// A budget change: a bound given sets it, `null` removes it, left out keeps it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct BudgetBody {
    task: Option<String>,
    #[serde(default, deserialize_with = "given")]
    max_cost_usd: Option<Option<f64>>,
    #[serde(default, deserialize_with = "given")]
    max_tokens: Option<Option<u64>>,
    by: Option<String>,
}

/// A field that is there (`Some`), with its value or `null`.
fn given<'de, D: serde::Deserializer<'de>, T: Deserialize<'de>>(
    d: D,
) -> Result<Option<Option<T>>, D::Error> {
    Option::<T>::deserialize(d).map(Some)
}

fn change<T: Copy>(field: Option<Option<T>>) -> runlog_core::Change<T> {
    match field {
        None => runlog_core::Change::Keep,
        Some(v) => runlog_core::Change::from_options(v, v.is_none()),
    }
}

const BUDGET_HINT: &str = "send {\"task\": null, \"max_cost_usd\": 10.0, \"max_tokens\": null, \"by\": \"me\"}: a bound given sets it, null removes it, left out keeps it";

pub(super) async fn budget(
    State(api): State<Api>,
    P(run): P<String>,
    tcp: Option<axum::Extension<Principal>>,
    unix: Option<axum::Extension<axum::extract::ConnectInfo<UnixPeer>>>,
    body: Result<axum::body::Bytes, axum::extract::rejection::BytesRejection>,
) -> Result<impl IntoResponse, ApiError> {
    let body = body.map_err(|e| ApiError::with_status(e.status(), e.body_text(), BUDGET_HINT))?;
    let b: BudgetBody = serde_json::from_slice(&body)
        .map_err(|e| ApiError::bad(format!("not a budget change: {e}"), BUDGET_HINT))?;
    if b.max_cost_usd.is_none() && b.max_tokens.is_none() {
        return Err(ApiError::bad("the body changes no bound", BUDGET_HINT));
    }
    let principal = principal(tcp, unix);
    let by =
        b.by.or_else(|| principal.as_ref().map(|p| p.name.clone()))
            .unwrap_or_else(|| "api".into());
    let kind = CommandKind::SetBudget {
        task: b.task.map(runlog_core::TaskId::from),
        max_cost_usd: change(b.max_cost_usd),
        max_tokens: change(b.max_tokens),
        by,
    };
    let cmd = runlog_core::Command::new(api.hosted.host().clock().now(), kind);
    execute(&api, run, cmd, principal).await
}
