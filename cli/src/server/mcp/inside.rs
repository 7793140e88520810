//! Inside a run: every command a run starts is given `RUNLOG_MCP_URL` and `RUNLOG_MCP_TOKEN`,
//! so an agent can ask about its own task's earlier attempts (what its tests printed, what the
//! judge wrote) with the same tools a person uses. The token is its run's own: it reads only
//! that run, only the tools that look, and only while this process drives the run; its value
//! is replaced like any secret in what the run's commands leave.
//!
//! The endpoint is a loopback listener of the process driving the run, started with its first
//! run and serving `/mcp` alone (no `/v1`, no web view).

use super::super::api::{self, Api, Granted};
use super::super::errors::ApiError;
use super::super::tokens::Scope;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use runlog_core::{Principal, Via};
use runlog_runner::Access;
use runlog_store::Store;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

/// The variable naming the endpoint.
pub const URL_VAR: &str = "RUNLOG_MCP_URL";
/// The variable holding the run's token.
pub const TOKEN_VAR: &str = "RUNLOG_MCP_TOKEN";

/// The tokens given out, by their digest, each with its run.
type Given = Arc<Mutex<HashMap<[u8; 32], String>>>;

/// The endpoint of this process: its address and the tokens it takes.
struct Endpoint {
    url: String,
    given: Given,
}

/// A run's token in the endpoint's list while the run is driven: dropped with its engine, it
/// is taken out, and the token stops working.
struct Held {
    digest: [u8; 32],
    given: Given,
}

impl Drop for Held {
    fn drop(&mut self) {
        lock(&self.given).remove(&self.digest);
    }
}

fn lock(given: &Given) -> std::sync::MutexGuard<'_, HashMap<[u8; 32], String>> {
    given.lock().unwrap_or_else(|p| p.into_inner())
}

/// Access for `run` to the store it is recorded in, through this process's endpoint (started
/// the first time): `RUNLOG_MCP_URL` and `RUNLOG_MCP_TOKEN` for its commands. `None`, with the
/// reason in the log, when the endpoint cannot be: the run goes on without it.
pub fn grant(
    store: Arc<Store>,
    dir: &std::path::Path,
    host: &runlog_runner::Host,
    run: &str,
) -> Option<Access> {
    static ENDPOINT: OnceLock<Option<Endpoint>> = OnceLock::new();
    let endpoint = ENDPOINT
        .get_or_init(|| match start(store, dir.to_path_buf(), host.clone()) {
            Ok(e) => Some(e),
            Err(e) => {
                tracing::warn!("runs' commands get no MCP endpoint: {e}");
                None
            }
        })
        .as_ref()?;
    let secret = runlog_gateway::fresh_hex()?;
    let digest = *blake3::hash(secret.as_bytes()).as_bytes();
    lock(&endpoint.given).insert(digest, run.to_owned());
    Some(Access {
        vars: vec![
            (URL_VAR.to_owned(), endpoint.url.clone()),
            (TOKEN_VAR.to_owned(), secret),
        ],
        secret: vec![TOKEN_VAR.to_owned()],
        held: Box::new(Held {
            digest,
            given: endpoint.given.clone(),
        }),
    })
}

/// Listens on a loopback port, serving on a thread of its own for the rest of the process.
fn start(store: Arc<Store>, dir: PathBuf, host: runlog_runner::Host) -> std::io::Result<Endpoint> {
    let listener = std::net::TcpListener::bind(("127.0.0.1", 0))?;
    listener.set_nonblocking(true)?;
    let url = format!("http://{}/mcp", listener.local_addr()?);
    let given = Given::default();
    let taken = given.clone();
    let rt = crate::runtime::build("mcp", 1, 2, || {})?;
    std::thread::Builder::new()
        .name("runlog-mcp".into())
        .spawn(move || {
            let handle = rt.handle().clone();
            let served = rt.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener)?;
                let api = Api {
                    store,
                    tokens: None,
                    streams: Arc::default(),
                    hosted: Arc::new(super::super::hosted::Hosted::new(handle, 1, None, host)),
                    dir,
                    pacing: Arc::new(super::super::pacing::Pacing::new(0)),
                };
                let server = super::Server::new(api::router(api, None), None);
                let app = axum::Router::new()
                    // Every request carries a run's token: the token decides, not the Host.
                    .route_service(api::paths::MCP, super::http(server, true))
                    .layer(axum::middleware::from_fn_with_state(taken, run_token));
                axum::serve(listener, app).await
            });
            if let Err(e) = served {
                tracing::warn!("the runs' MCP endpoint stopped: {e}");
            }
        })?;
    Ok(Endpoint { url, given })
}

/// A request whose token is a run's, as that run's: it reads only that run (see
/// [`super::Server`]); any other is refused.
async fn run_token(State(given): State<Given>, mut request: Request, next: Next) -> Response {
    let sent = request
        .headers()
        .get(axum::http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(|s| *blake3::hash(s.as_bytes()).as_bytes());
    let Some(run) = sent.and_then(|d| lock(&given).get(&d).cloned()) else {
        return ApiError::unauthorized().into_response();
    };
    let name = format!("run {run}");
    request.extensions_mut().insert(Principal {
        name: name.clone(),
        via: Via::Mcp,
    });
    request.extensions_mut().insert(Granted {
        holder: name,
        scope: Scope::Read,
        run: Some(run),
    });
    next.run(request).await
}
