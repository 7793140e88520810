//! The routes of `/v1` and their handlers. Reads answer from the store as the CLI's `--json`
//! does (the same shapes); commands go through the same rules as `runlog emit`.

mod branches;
mod commands;
#[cfg(feature = "ts")]
pub mod documented;
mod events;
mod experiments;
mod integrity;
mod judges;
mod reports;
mod runs;

use super::connections::{Peer, UnixPeer};
use super::errors::ApiError;
use super::hosted::Hosted;
use super::stream;
use super::tokens::{Scope, Tokens};
use axum::extract::{DefaultBodyLimit, FromRequestParts, Path, Query, Request, State};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Router;
use branches::{fork, rerun, resume};
use commands::{budget, command};
use events::{blob, events, stream_events};
use experiments::{experiment, experiments, start as start_experiment};
use integrity::{digest, export, verify};
use judges::{judges, review};
use reports::{audit, calls, cost, diff, stack, stages, task, timeline};
use runlog_core::{Principal, Via};
use runlog_store::Store;
use runs::{board, interrupt, runs, start_run};
use serde::Deserialize;
use std::sync::Arc;
use std::time::Duration;

/// A seq to read a run at (its head when none).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct At {
    at: Option<u64>,
}

/// The largest request body (one command; a start-run with its whole plan fits).
const MAX_BODY: usize = 1 << 20;

/// Requests served at once per listener; more wait.
const MAX_REQUESTS: usize = 64;

/// The longest a request may take (the event stream is not a request that ends).
const REQUEST_TIME: Duration = Duration::from_secs(30);

/// Tasks one request may add: a start-run's plan, a plan revision's additions.
const MAX_TASKS: usize = 10_000;

/// The API's paths (the MCP tools name the routes whose views they answer with).
pub(crate) mod paths {
    pub const OPENAPI_PATH: &str = "/v1/openapi.json";
    pub const RUNS: &str = "/v1/runs";
    pub const RUN: &str = "/v1/runs/{run}";
    pub const EVENTS: &str = "/v1/runs/{run}/events";
    pub const STREAM: &str = "/v1/runs/{run}/stream";
    pub const AUDIT: &str = "/v1/runs/{run}/audit";
    pub const COST: &str = "/v1/runs/{run}/cost";
    pub const BUDGET: &str = "/v1/runs/{run}/budget";
    pub const COMMANDS: &str = "/v1/runs/{run}/commands";
    pub const INTERRUPT: &str = "/v1/runs/{run}/interrupt";
    pub const STACK: &str = "/v1/runs/{run}/stack";
    pub const TIMELINE: &str = "/v1/runs/{run}/timeline";
    pub const STAGES: &str = "/v1/runs/{run}/stages";
    pub const VERIFY: &str = "/v1/runs/{run}/verify";
    pub const DIGEST: &str = "/v1/runs/{run}/digest";
    pub const EXPORT: &str = "/v1/runs/{run}/export";
    pub const DIFF: &str = "/v1/diff";
    pub const FORK: &str = "/v1/runs/{run}/fork";
    pub const RERUN: &str = "/v1/runs/{run}/rerun";
    pub const RESUME: &str = "/v1/runs/{run}/resume";
    pub const BLOB: &str = "/v1/blobs/{hash}";
    pub const TASK: &str = "/v1/runs/{run}/tasks/{task}";
    pub const CALLS: &str = "/v1/runs/{run}/tasks/{task}/calls";
    pub const JUDGES: &str = "/v1/judges";
    pub const REVIEW: &str = "/v1/review";
    pub const EXPERIMENTS: &str = "/v1/experiments";
    pub const EXPERIMENT: &str = "/v1/experiments/{name}";
    /// The Model Context Protocol endpoint (Streamable HTTP).
    pub const MCP: &str = "/mcp";
}
use paths::*;

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
        TIMELINE => { get(Read): timeline }
        STAGES => { get(Read): stages }
        VERIFY => { get(Read): verify }
        DIGEST => { get(Read): digest }
        EXPORT => { get(Read): export }
        DIFF => { get(Read): diff }
        COMMANDS => { post(Steer): command }
        FORK => { post(Steer): fork }
        RERUN => { post(Run): rerun }
        RESUME => { post(Run): resume }
        BLOB => { get(Read): blob }
        TASK => { get(Read): task }
        CALLS => { get(Read): calls }
        JUDGES => { get(Read): judges }
        REVIEW => { get(Read): review }
        EXPERIMENTS => { get(Read): experiments, post(Run): start_experiment }
        EXPERIMENT => { get(Read): experiment }
    }
    open {
        STREAM => { get(Read): stream_events }
    }
}

/// What a request's token allows, as [`authorize`] found it (none without tokens).
#[derive(Debug, Clone)]
pub(crate) struct Granted {
    /// The token's name.
    pub holder: String,
    /// What it allows.
    pub scope: Scope,
    /// The one run it is valid for: a token a run's commands are given, which only the MCP
    /// endpoint of their run's process takes (see `super::mcp::inside`).
    pub run: Option<String>,
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

/// The API's routes over `api`, and `mcp` at `/mcp` when given (the MCP endpoint, whose tools
/// ask these routes), behind the same tokens and bounds.
pub fn router(api: Api, mcp: Option<axum::routing::MethodRouter<Api>>) -> Router {
    let routes = match mcp {
        Some(mcp) => v1_routes().route(MCP, mcp),
        None => v1_routes(),
    };
    layered(routes, api)
}

/// `/v1`, each route answering within [`REQUEST_TIME`] but the event stream.
fn v1_routes() -> Router<Api> {
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
}

/// `routes` behind what every request passes: the token check, the bounds, JSON refusals.
fn layered(routes: Router<Api>, api: Api) -> Router {
    routes
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
        run: None,
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

/// A view that borrows what it was read from, written out where it was read (the same bytes
/// `axum::Json` would send).
fn json_bytes<T: serde::Serialize>(view: &T) -> Result<Vec<u8>, ApiError> {
    serde_json::to_vec(view)
        .map_err(|e| ApiError::internal(format!("the answer cannot be written: {e}")))
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
