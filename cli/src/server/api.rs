//! The routes of `/v1` and their handlers. Reads answer from the store as the CLI's `--json`
//! does (the same shapes); commands go through the same rules as `runlog emit`.

mod judges;

use super::connections::{Peer, UnixPeer};
use super::errors::ApiError;
use super::hosted::{Hosted, Start};
use super::stream;
use super::tokens::{Scope, Tokens};
use crate::intake::parse_line;
use crate::queries::board::BoardView;
use crate::render::event::Worded;
use axum::extract::{DefaultBodyLimit, FromRequestParts, Path, Query, Request, State};
use axum::http::{HeaderMap, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::{Json, Router};
use judges::{judges, review};
use runlog_core::{CommandKind, EventKind, Principal, Via};
use runlog_replay::{Replay, Session};
use runlog_store::{EventLog, Store};
use serde::Deserialize;
use std::sync::Arc;
use std::time::Duration;

/// The largest request body (one command; a start-run with its whole plan fits).
const MAX_BODY: usize = 1 << 20;

/// Requests served at once per listener; more wait.
const MAX_REQUESTS: usize = 64;

/// The longest a request may take (the event stream is not a request that ends).
const REQUEST_TIME: Duration = Duration::from_secs(30);

/// Tasks one request may add: a start-run's plan, a plan revision's additions.
const MAX_TASKS: usize = 10_000;

/// The most events one page of `GET /v1/runs/{run}/events` holds.
const MAX_PAGE: u64 = 10_000;

const COMMAND_HINT: &str = "send one JSON command, as `runlog emit` takes it, e.g. {\"command\":\"approve\",\"task\":\"a\",\"by\":\"me\"}";

const OPENAPI_PATH: &str = "/v1/openapi.json";
const RUNS: &str = "/v1/runs";
const RUN: &str = "/v1/runs/{run}";
const EVENTS: &str = "/v1/runs/{run}/events";
const STREAM: &str = "/v1/runs/{run}/stream";
const AUDIT: &str = "/v1/runs/{run}/audit";
const COST: &str = "/v1/runs/{run}/cost";
const BUDGET: &str = "/v1/runs/{run}/budget";
const COMMANDS: &str = "/v1/runs/{run}/commands";
const INTERRUPT: &str = "/v1/runs/{run}/interrupt";
const STACK: &str = "/v1/runs/{run}/stack";
const STAGES: &str = "/v1/runs/{run}/stages";
const VERIFY: &str = "/v1/runs/{run}/verify";
const DIGEST: &str = "/v1/runs/{run}/digest";
const EXPORT: &str = "/v1/runs/{run}/export";
const DIFF: &str = "/v1/diff";
const FORK: &str = "/v1/runs/{run}/fork";
const RERUN: &str = "/v1/runs/{run}/rerun";
const BLOB: &str = "/v1/blobs/{hash}";
const CALLS: &str = "/v1/runs/{run}/tasks/{task}/calls";
const JUDGES: &str = "/v1/judges";
const REVIEW: &str = "/v1/review";

/// Declares each route once, in two groups: `bounded` ones answer within [`REQUEST_TIME`],
/// `open` ones (the event stream) last as long as their client. Makes the routers and
/// [`ROUTES`], the list the OpenAPI document is checked against.
macro_rules! routes {
    (
        bounded { $($path:ident => { $($method:ident($scope:ident): $handler:ident),+ })* }
        open { $($open_path:ident => { $($open_method:ident($open_scope:ident): $open_handler:ident),+ })* }
    ) => {
        fn bounded_routes() -> Router<Api> {
            Router::new()
                $(.route($path, axum::routing::MethodRouter::new()$(.merge(scoped(axum::routing::$method($handler), Scope::$scope)))+))*
        }

        fn open_routes(router: Router<Api>) -> Router<Api> {
            router
                $(.route($open_path, axum::routing::MethodRouter::new()$(.merge(scoped(axum::routing::$open_method($open_handler), Scope::$open_scope)))+))*
        }

        /// Every path the router serves, with its method and the scope a token needs for it.
        #[cfg(test)]
        const ROUTES: &[(&str, &str, Scope)] = &[
            $($((stringify!($method), $path, Scope::$scope),)+)*
            $($((stringify!($open_method), $open_path, Scope::$open_scope),)+)*
        ];
    };
}

// Each route with the scope a token must have for it: reading, steering a run (commands, an
// interrupt, a fork, a budget), or starting workflows.
routes! {
    bounded {
        OPENAPI_PATH => { get(Read): openapi }
        RUNS => { get(Read): runs, post(Run): start_run }
        INTERRUPT => { post(Steer): interrupt }
        RUN => { get(Read): board }
        EVENTS => { get(Read): events }
        AUDIT => { get(Read): audit }
        COST => { get(Read): cost }
        BUDGET => { post(Steer): budget }
        STACK => { get(Read): stack }
        STAGES => { get(Read): stages }
        VERIFY => { get(Read): verify }
        DIGEST => { get(Read): digest }
        EXPORT => { get(Read): export }
        DIFF => { get(Read): diff }
        COMMANDS => { post(Steer): command }
        FORK => { post(Steer): fork }
        RERUN => { post(Run): rerun }
        BLOB => { get(Read): blob }
        CALLS => { get(Read): calls }
        JUDGES => { get(Read): judges }
        REVIEW => { get(Read): review }
    }
    open {
        STREAM => { get(Read): stream_events }
    }
}

/// What a request's token allows, as [`authorize`] found it (none without tokens).
#[derive(Debug, Clone)]
struct Granted {
    holder: String,
    scope: Scope,
}

/// `route`, refused to a token whose scope is below `needed`.
fn scoped(
    route: axum::routing::MethodRouter<Api>,
    needed: Scope,
) -> axum::routing::MethodRouter<Api> {
    route.route_layer(axum::middleware::from_fn(
        move |request: Request, next: Next| async move {
            match request.extensions().get::<Granted>() {
                Some(g) if g.scope < needed => {
                    ApiError::forbidden(&g.holder, g.scope, needed).into_response()
                }
                _ => next.run(request).await,
            }
        },
    ))
}

/// The OpenAPI document (checked against [`ROUTES`] by a test).
pub const OPENAPI: &str = include_str!("openapi.json");

/// What every handler reaches: the store, the token TCP clients must send, the runs this
/// server executes, and the store's directory (where hosted runs keep their worktrees).
#[derive(Clone)]
pub struct Api {
    /// The store.
    pub store: Arc<Store>,
    /// With tokens, every request must carry one whose scope allows it.
    pub tokens: Option<Arc<Tokens>>,
    /// The event streams open, per client.
    pub streams: Arc<stream::Streams>,
    /// The runs this server executes.
    pub hosted: Arc<Hosted>,
    /// The store's directory.
    pub dir: std::path::PathBuf,
    /// How fast reads are served while runs execute.
    pub pacing: Arc<super::pacing::Pacing>,
}

/// The API's routes over `api`.
pub fn router(api: Api) -> Router {
    let bounded = bounded_routes().layer(
        tower::ServiceBuilder::new()
            .layer(axum::error_handling::HandleErrorLayer::new(
                |_: tower::BoxError| async {
                    ApiError::unavailable(
                        "the request took too long",
                        "ask for less (a page of events), or try again",
                    )
                },
            ))
            .layer(tower::timeout::TimeoutLayer::new(REQUEST_TIME)),
    );
    open_routes(bounded)
        .fallback(|| async {
            ApiError::not_found("no such resource", "GET /v1/openapi.json lists them")
        })
        .layer(axum::middleware::from_fn_with_state(api.clone(), authorize))
        .layer(tower::limit::ConcurrencyLimitLayer::new(MAX_REQUESTS))
        .layer(axum::middleware::from_fn_with_state(api.clone(), pace))
        .layer(DefaultBodyLimit::max(MAX_BODY))
        .layer(axum::middleware::from_fn(answered_as_json))
        .layer(axum::middleware::from_fn(logged))
        .with_state(api)
}

/// The longest URI the API reads: past it, a 414 of its own (hyper's own limit, 64 KiB, answers
/// without a body).
const MAX_URI: usize = 16 * 1024;

/// Every refusal the API gives is `{error, hint}`, those the HTTP layers make too (a method a
/// route does not take, a URI too long), not an empty body.
async fn answered_as_json(request: Request, next: Next) -> Response {
    let (method, path) = (request.method().clone(), request.uri().path().to_owned());
    let uri = request.uri();
    if uri.path().len() + uri.query().map_or(0, |q| q.len() + 1) > MAX_URI {
        return ApiError::with_status(
            StatusCode::URI_TOO_LONG,
            format!("the request's URI is longer than {MAX_URI} bytes"),
            "name fewer runs or parameters in one request",
        )
        .into_response();
    }
    let response = next.run(request).await;
    let status = response.status();
    let empty = response
        .headers()
        .get(axum::http::header::CONTENT_TYPE)
        .is_none()
        && axum::body::HttpBody::size_hint(response.body()).exact() == Some(0);
    if !(status.is_client_error() || status.is_server_error()) || !empty {
        return response;
    }
    let hint = match status {
        // axum names the methods in `Allow` after this layer, on the same answer.
        StatusCode::METHOD_NOT_ALLOWED => {
            "the answer's Allow header names the methods it takes; GET /v1/openapi.json lists every resource's"
        }
        _ => "GET /v1/openapi.json lists each resource and its parameters",
    };
    let error = match status {
        StatusCode::METHOD_NOT_ALLOWED => format!("{path} does not take {method}"),
        other => format!(
            "{method} {path}: {}",
            other.canonical_reason().unwrap_or("refused").to_lowercase()
        ),
    };
    let mut answer = ApiError::with_status(status, error, hint).into_response();
    for (name, value) in response.headers() {
        if name != axum::http::header::CONTENT_LENGTH {
            answer.headers_mut().entry(name).or_insert(value.clone());
        }
    }
    answer
}

/// Each request and its answer, in the log (`RUNLOG_LOG=runlog_cli=debug`).
async fn logged(request: Request, next: Next) -> Response {
    let (method, path) = (request.method().clone(), request.uri().path().to_owned());
    let started = std::time::Instant::now();
    let response = next.run(request).await;
    tracing::debug!(
        %method,
        path,
        status = response.status().as_u16(),
        ms = started.elapsed().as_millis() as u64,
        "request"
    );
    response
}

/// An extractor of axum's whose refusal is answered as JSON `{error, hint}`, like every other
/// error of the API.
macro_rules! refused_as_json {
    ($(#[$doc:meta])* $name:ident, $inner:ident, $hint:expr) => {
        $(#[$doc])*
        struct $name<T>(T);

        impl<T, S> FromRequestParts<S> for $name<T>
        where
            T: serde::de::DeserializeOwned + Send,
            S: Send + Sync,
        {
            type Rejection = ApiError;

            async fn from_request_parts(
                parts: &mut axum::http::request::Parts,
                state: &S,
            ) -> Result<Self, Self::Rejection> {
                $inner::<T>::from_request_parts(parts, state)
                    .await
                    .map(|$inner(v)| $name(v))
                    .map_err(|e| ApiError::bad(e.body_text(), $hint))
            }
        }
    };
}

refused_as_json!(
    /// A query string.
    Q,
    Query,
    "GET /v1/openapi.json lists each resource's parameters"
);
refused_as_json!(
    /// A path parameter (a run id that is not UTF-8, say).
    P,
    Path,
    "a run id is a UTF-8 path segment"
);

/// Reads wait for their turn while this server executes runs (see [`super::pacing`]), before
/// they hold one of the places of [`MAX_REQUESTS`]: a command never waits behind them.
async fn pace(State(api): State<Api>, request: Request, next: Next) -> Response {
    let read =
        request.method() == axum::http::Method::GET && !request.uri().path().ends_with("/stream");
    if read && api.hosted.executing() {
        api.pacing.wait().await;
    }
    next.run(request).await
}

/// Over TCP with tokens: 429 for an address that failed too often lately, 401 without a
/// token this server knows (a failed attempt), 403 for a request beyond the token's scope.
/// A TCP request then carries its principal: the token's name, the subject of a client
/// certificate on a mutual TLS server without tokens, or the client's address on a server
/// without either (a Unix socket's peer is named by [`principal`] when it matters).
async fn authorize(State(api): State<Api>, mut request: Request, next: Next) -> Response {
    let peer = request
        .extensions()
        .get::<axum::extract::ConnectInfo<Peer>>()
        .map(|c| c.0.clone());
    let ip = peer.as_ref().map(|p| p.0);
    let principal = match (&api.tokens, peer.and_then(|p| p.1)) {
        (Some(tokens), _) => match token_holder(tokens, ip, &request) {
            Ok((principal, granted)) => {
                // Each route checks the scope it needs (see `routes!`).
                request.extensions_mut().insert(granted);
                Some(principal)
            }
            Err(refused) => return refused.into_response(),
        },
        // Mutual TLS without tokens: the certificate the handshake verified is who acts.
        (None, Some(subject)) => Some(Principal {
            name: subject.to_string(),
            via: Via::ClientCertificate,
        }),
        (None, None) => ip.map(|ip| Principal {
            name: ip.to_string(),
            via: Via::TcpWithoutToken,
        }),
    };
    if let Some(principal) = principal {
        request.extensions_mut().insert(principal);
    }
    next.run(request).await
}

/// The holder of the request's token and what it allows, if the server knows the token.
fn token_holder(
    tokens: &Tokens,
    peer: Option<std::net::IpAddr>,
    request: &Request,
) -> Result<(Principal, Granted), ApiError> {
    let now = std::time::Instant::now();
    if tokens.blocked(peer, now) {
        return Err(ApiError::too_many_failures());
    }
    let sent = request
        .headers()
        .get(axum::http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    let Some((name, scope)) = sent.and_then(|s| tokens.holder(s)) else {
        tokens.failed(peer, now);
        return Err(ApiError::unauthorized());
    };
    let principal = Principal {
        name: name.to_owned(),
        via: Via::Token,
    };
    let granted = Granted {
        holder: name.to_owned(),
        scope,
    };
    Ok((principal, granted))
}

/// Who sent a request: as [`authorize`] established over TCP, else the Unix socket's peer.
fn principal(
    tcp: Option<axum::Extension<Principal>>,
    unix: Option<axum::Extension<axum::extract::ConnectInfo<UnixPeer>>>,
) -> Option<Principal> {
    tcp.map(|p| p.0).or_else(|| {
        let uid = unix?.0 .0 .0?;
        Some(crate::intake::user(uid, Via::UnixSocket))
    })
}

/// Runs `f` on the store off the async threads (the store's calls block).
async fn blocking<T: Send + 'static>(
    api: &Api,
    f: impl FnOnce(&Store) -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    let store = api.store.clone();
    tokio::task::spawn_blocking(move || f(&store))
        .await
        .map_err(|e| ApiError::internal(format!("the request's worker failed: {e}")))?
}

async fn openapi() -> impl IntoResponse {
    (
        [(axum::http::header::CONTENT_TYPE, "application/json")],
        OPENAPI,
    )
}

async fn runs(State(api): State<Api>) -> Result<impl IntoResponse, ApiError> {
    let rows = blocking(&api, |s| Ok(crate::queries::runs::rows(s)?)).await?;
    Ok(Json(rows))
}

async fn start_run(
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
        Json(serde_json::json!({"run": run, "executing": true})),
    ))
}

async fn interrupt(
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
        Json(serde_json::json!({"run": run, "interrupting": true})),
    ))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct At {
    at: Option<u64>,
}

async fn board(
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

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct EventsQuery {
    from: Option<u64>,
    to: Option<u64>,
    task: Option<String>,
    kind: Option<String>,
}

async fn events(
    State(api): State<Api>,
    P(run): P<String>,
    Q(q): Q<EventsQuery>,
) -> Result<impl IntoResponse, ApiError> {
    if let Some(kind) = q.kind.as_deref() {
        if !EventKind::NAMES.contains(&kind) {
            return Err(ApiError::bad(
                format!("unknown event kind {kind:?}"),
                format!("kinds: {}", EventKind::NAMES.join(", ")),
            ));
        }
    }
    let body = blocking(&api, move |s| {
        let replay = Replay::new(s);
        let head = replay.head_seq(&run)?;
        let from = q.from.unwrap_or(1).max(1);
        let to =
            q.to.unwrap_or(head)
                .min(head)
                .min(from.saturating_add(MAX_PAGE - 1));
        let mut lines = Vec::new();
        runlog_replay::events::for_each(s, &run, from, to, &mut |seq, e| {
            let task_ok = q
                .task
                .as_deref()
                .is_none_or(|t| e.kind.task().is_some_and(|id| id.as_str() == t));
            let kind_ok = q.kind.as_deref().is_none_or(|k| k == e.kind.name());
            if task_ok && kind_ok {
                lines.push(serde_json::to_value(Worded::of(seq, &e)).unwrap_or_default());
            }
            Ok(true)
        })?;
        let next = (to < head.min(q.to.unwrap_or(head))).then_some(to + 1);
        Ok(serde_json::json!({"run": run, "head": head, "events": lines, "next": next}))
    })
    .await?;
    Ok(Json(body))
}

async fn audit(State(api): State<Api>, P(run): P<String>) -> Result<impl IntoResponse, ApiError> {
    let body = blocking(&api, move |s| {
        let p = Replay::new(s).project(&run, None, None)?;
        let audit = crate::render::WordedAudit::of(p.audit);
        Ok(serde_json::json!({"run": run, "audit": audit, "summary": p.summary}))
    })
    .await?;
    Ok(Json(body))
}

/// A task's model calls, each with what was new in its request and the model's answer in
/// words (`runlog show RUN TASK --calls --json`).
async fn calls(
    State(api): State<Api>,
    P((run, task)): P<(String, String)>,
) -> Result<impl IntoResponse, ApiError> {
    let body = blocking(&api, move |s| {
        let replay = Replay::new(s);
        let state = replay.head_state(&run)?;
        let id = runlog_core::TaskId::from(task.as_str());
        if state.task(&id).is_none() {
            return Err(ApiError::not_found(
                format!("run {run} has no task {task}"),
                format!("GET /v1/runs/{run} lists its tasks"),
            ));
        }
        let events = replay.events(&run, 1, state.seq)?;
        let story = crate::queries::story::story_of(&events, &id);
        Ok(crate::queries::calls::CallsView::of(
            s, &run, &task, &story, None,
        ))
    })
    .await?;
    Ok(Json(body))
}

async fn command(
    State(api): State<Api>,
    P(run): P<String>,
    tcp: Option<axum::Extension<Principal>>,
    unix: Option<axum::Extension<axum::extract::ConnectInfo<UnixPeer>>>,
    body: Result<axum::body::Bytes, axum::extract::rejection::BytesRejection>,
) -> Result<impl IntoResponse, ApiError> {
    let body = body.map_err(|e| ApiError::with_status(e.status(), e.body_text(), COMMAND_HINT))?;
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
    execute(&api, run, cmd, principal(tcp, unix)).await
}

/// Records one command through the one write path, as `principal` when one is known.
async fn execute(
    api: &Api,
    run: String,
    cmd: runlog_core::Command,
    principal: Option<Principal>,
) -> Result<(StatusCode, Json<serde_json::Value>), ApiError> {
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
        let recorded = session.execute(cmd)??;
        let events: Vec<serde_json::Value> = recorded
            .events
            .iter()
            .map(|(seq, e)| serde_json::to_value(Worded::of(*seq, e)).unwrap_or_default())
            .collect();
        Ok(serde_json::json!({
            "run": run,
            "head": recorded.head_seq().unwrap_or(session.state().seq),
            "events": events,
        }))
    })
    .await?;
    Ok((StatusCode::OK, Json(body)))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CostQuery {
    at: Option<u64>,
    by: Option<String>,
}

async fn cost(
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

/// A budget change: a bound given sets it, `null` removes it, left out keeps it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct BudgetBody {
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

async fn budget(
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

async fn stack(
    State(api): State<Api>,
    P(run): P<String>,
    Q(q): Q<At>,
) -> Result<impl IntoResponse, ApiError> {
    let body = blocking(&api, move |s| {
        let p = Replay::new(s).project(&run, q.at, None)?;
        Ok(crate::queries::stack::as_json(&run, &p))
    })
    .await?;
    Ok(Json(body))
}

async fn stages(
    State(api): State<Api>,
    P(run): P<String>,
    Q(q): Q<At>,
) -> Result<impl IntoResponse, ApiError> {
    let body = blocking(&api, move |s| {
        let state = Replay::new(s).state_at_or_head(&run, q.at)?;
        let rows = runlog_core::projections::health::stage_health(&state);
        Ok(serde_json::json!({"run": run, "seq": state.seq, "stages": rows}))
    })
    .await?;
    Ok(Json(body))
}

async fn verify(State(api): State<Api>, P(run): P<String>) -> Result<impl IntoResponse, ApiError> {
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

async fn digest(State(api): State<Api>, P(run): P<String>) -> Result<impl IntoResponse, ApiError> {
    let body = blocking(&api, move |s| {
        runlog_replay::digest::digest(s, &run).map_err(ApiError::from)
    })
    .await?;
    Ok(Json(body))
}

async fn export(State(api): State<Api>, P(run): P<String>) -> Result<impl IntoResponse, ApiError> {
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

/// A large output whole: an `output-recorded` event holds its beginning and its blob's hash.
async fn blob(State(api): State<Api>, P(hash): P<String>) -> Result<impl IntoResponse, ApiError> {
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

/// A request body whose every field is optional: none at all (or only blanks) is the default.
fn optional_body<T: Default + serde::de::DeserializeOwned>(
    body: Result<axum::body::Bytes, axum::extract::rejection::BytesRejection>,
    what: &str,
    hint: &str,
) -> Result<T, ApiError> {
    let body = body.map_err(|e| ApiError::with_status(e.status(), e.body_text(), hint))?;
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(T::default());
    }
    serde_json::from_slice(&body)
        .map_err(|e| ApiError::bad(format!("not a {what} request: {e}"), hint))
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ForkFrom {
    at: Option<u64>,
    #[serde(rename = "as")]
    new: Option<String>,
}

async fn fork(
    State(api): State<Api>,
    P(run): P<String>,
    body: Result<axum::body::Bytes, axum::extract::rejection::BytesRejection>,
) -> Result<impl IntoResponse, ApiError> {
    const HINT: &str =
        "send {\"at\": SEQ} and optionally {\"as\": \"NEW-RUN\"}; {} forks at the head";
    let from: ForkFrom = optional_body(body, "fork", HINT)?;
    let now = api.hosted.host().clock().now();
    let body = blocking(&api, move |s| {
        let f = crate::queries::fork::fork(s, &run, from.at, from.new, now)?;
        Ok(serde_json::json!({"run": f.new, "from_run": run, "at_seq": f.at, "seq": f.seq}))
    })
    .await?;
    Ok((StatusCode::CREATED, Json(body)))
}

/// What a rerun asks for (`runlog rerun`'s options).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RerunFrom {
    at: Option<u64>,
    #[serde(default)]
    tasks: Vec<String>,
    workflow: Option<std::path::PathBuf>,
    answers: Option<runlog_core::rerun::Answers>,
    #[serde(rename = "as")]
    new: Option<String>,
}

async fn rerun(
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
    };
    let new = api
        .hosted
        .rerun(api.store.clone(), api.dir.clone(), asked)
        .await?;
    Ok((
        StatusCode::CREATED,
        Json(serde_json::json!({"run": new, "from_run": run, "executing": true})),
    ))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Sides {
    left: String,
    right: String,
}

async fn diff(State(api): State<Api>, Q(q): Q<Sides>) -> Result<impl IntoResponse, ApiError> {
    let body = blocking(&api, move |s| {
        let (_, _, d) = crate::queries::diff::compare(s, &q.left, &q.right, false)?;
        let body = crate::queries::diff::body(s, &q.left, &q.right, &d)?;
        Ok(serde_json::to_value(body).unwrap_or_default())
    })
    .await?;
    Ok(Json(body))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FromSeq {
    from: Option<u64>,
}

async fn stream_events(
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    /// The document lists exactly the routes the router serves, each with its method.
    #[test]
    fn the_openapi_document_matches_the_routes() {
        let doc: serde_json::Value = serde_json::from_str(super::OPENAPI).unwrap();
        let documented: std::collections::BTreeSet<(String, String)> = doc["paths"]
            .as_object()
            .unwrap()
            .iter()
            .flat_map(|(path, item)| {
                item.as_object()
                    .unwrap()
                    .keys()
                    .map(|m| (m.clone(), path.clone()))
                    .collect::<Vec<_>>()
            })
            .collect();
        let served: std::collections::BTreeSet<(String, String)> = super::ROUTES
            .iter()
            .map(|(m, p, _)| ((*m).to_owned(), (*p).to_owned()))
            .collect();
        assert_eq!(documented, served);
        assert_eq!(doc["openapi"], "3.1.0");
    }

    #[test]
    fn a_route_that_changes_anything_needs_more_than_reading() {
        for (method, path, scope) in super::ROUTES {
            let reads = *method == "get";
            assert_eq!(
                reads,
                *scope == super::Scope::Read,
                "{method} {path} needs {}",
                scope.name()
            );
        }
        let needs = |m: &str, p: &str| {
            super::ROUTES
                .iter()
                .find(|r| r.0 == m && r.1 == p)
                .map(|r| r.2)
        };
        assert_eq!(needs("post", super::RUNS), Some(super::Scope::Run));
        assert_eq!(needs("post", super::COMMANDS), Some(super::Scope::Steer));
    }
}
