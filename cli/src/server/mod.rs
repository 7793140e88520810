//! `runlog serve`: a long-lived owner of the store with an HTTP/JSON API under `/v1`, on a Unix
//! socket in the store directory (`api.sock`, mode 0600) and, with `--http`, on TCP (loopback
//! unless a bearer token is required with `--token-file`). Every request is bounded: body
//! size, requests at once, time per request (the event stream excepted); a slow client never
//! holds up a run, whose engine runs elsewhere.

pub(crate) mod api;
mod connections;
mod errors;
mod hosted;
pub mod mcp;
pub mod pacing;
mod stream;
pub mod tls;
mod tokens;
pub mod ui;

use runlog_store::Store;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

pub use tokens::{Scope, Tokens};

/// What a server serves and how.
#[derive(Debug)]
pub struct Options {
    /// The store, owned by this process.
    pub store: Arc<Store>,
    /// The store's directory (the API socket, `view.url`, hosted runs' files).
    pub dir: PathBuf,
    /// Also serve on TCP at this address.
    pub http: Option<SocketAddr>,
    /// The tokens TCP clients must send, if any.
    pub tokens: Option<Arc<Tokens>>,
    /// A connection that moves no byte this long is closed.
    pub idle: std::time::Duration,
    /// Runs executed at once.
    pub max_runs: usize,
    /// Where the runs it executes send their traces live, if anywhere.
    pub trace: Option<crate::otlp::Target>,
    /// HTTPS on TCP (and client certificates, for mutual TLS), reloaded on SIGHUP.
    pub tls: Option<Arc<tls::Tls>>,
    /// Reads served a second while runs execute (see [`pacing`]); 0: unpaced.
    pub reads_per_second: u32,
    /// What this process's environment gave.
    pub host: runlog_runner::Host,
}

/// Why serving stopped or could not start.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// A runtime could not be started.
    #[error("cannot start the {what} runtime: {cause}")]
    Runtime {
        /// Which.
        what: &'static str,
        /// The OS error.
        cause: std::io::Error,
    },
    /// The API socket could not be made.
    #[error("cannot listen on {}: {cause}", path.display())]
    Socket {
        /// The socket.
        path: PathBuf,
        /// The OS error.
        cause: std::io::Error,
    },
    /// The TCP address could not be bound.
    #[error("cannot listen on {addr}: {cause}")]
    Tcp {
        /// The address.
        addr: SocketAddr,
        /// The OS error.
        cause: std::io::Error,
    },
    /// A file of the server's could not be written.
    #[error("cannot write {}: {cause}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// The OS error.
        cause: std::io::Error,
    },
    /// A listener failed while serving.
    #[error("the API server failed: {0}")]
    Failed(String),
}

/// Serves until SIGINT or SIGTERM, then interrupts the runs it executes and waits for them. A
/// SIGHUP reloads the TLS files, if any: the server and its runs go on.
pub fn serve(o: Options) -> Result<(), ServerError> {
    let engines = runtime("engines", 16, || {})?;
    // Few threads for the readers: each keeps a malloc arena, and every agent an engine
    // starts is forked from this process, page tables and all.
    let api = runtime("api", 4, below_the_engines)?;
    let hosted = Arc::new(hosted::Hosted::new(
        engines.handle().clone(),
        o.max_runs,
        o.trace,
        o.host,
    ));
    let slots = connections::Slots::new(o.idle);
    let tcp = o.http.map(|addr| Tcp {
        addr,
        tokens: o.tokens,
        tls: o.tls,
    });
    api.block_on(serve_on(
        o.store,
        hosted,
        slots,
        o.dir,
        tcp,
        o.reads_per_second,
    ))
}

/// A runtime of the server's (see `crate::runtime`).
fn runtime(
    what: &'static str,
    blocking: usize,
    on_start: impl Fn() + Send + Sync + 'static,
) -> Result<tokio::runtime::Runtime, ServerError> {
    crate::runtime::build(what, 2, blocking, on_start).map_err(|source| ServerError::Runtime {
        what,
        cause: source,
    })
}

/// The API socket in a store directory.
pub fn socket_path(store: &std::path::Path) -> PathBuf {
    store.join("api.sock")
}

/// The API socket at `path`, mode 0600 from the moment clients can reach it: bound under a
/// name of its own, restricted, then renamed into place.
fn bind_private(path: &std::path::Path) -> std::io::Result<tokio::net::UnixListener> {
    let fresh = path.with_extension(format!("sock.{}", std::process::id()));
    let _ = std::fs::remove_file(&fresh);
    let listener = tokio::net::UnixListener::bind(&fresh)?;
    std::fs::set_permissions(&fresh, std::os::unix::fs::PermissionsExt::from_mode(0o600))?;
    std::fs::rename(&fresh, path)?;
    Ok(listener)
}

/// Writes the view's address to `path` under a name of its own, then renames it into place:
/// whoever finds the file (`runlog ui`, a script waiting for the server) reads the whole
/// address, never the empty file a plain write leaves between creating and writing it.
fn publish_address(path: &std::path::Path, url: &str) -> std::io::Result<()> {
    let fresh = path.with_extension(format!("url.{}", std::process::id()));
    std::fs::write(&fresh, url)?;
    std::fs::rename(&fresh, path)
}

/// Lowers the calling thread's priority (nice 10) so that answering readers yields the CPU
/// to the runs' engines: a busy client then slows other readers, not a run. Best effort: a
/// thread that cannot be lowered still serves.
fn below_the_engines() {
    // Linux applies PRIO_PROCESS with a thread id to that thread alone.
    #[allow(unsafe_code)]
    // SAFETY: gettid and setpriority take plain integers and touch no memory of ours.
    unsafe {
        let tid = libc::gettid();
        let _ = libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, 10);
    }
}

/// What the TCP listener serves with.
struct Tcp {
    addr: SocketAddr,
    tokens: Option<Arc<tokens::Tokens>>,
    tls: Option<Arc<tls::Tls>>,
}

async fn serve_on(
    store: Arc<Store>,
    hosted: Arc<hosted::Hosted>,
    slots: connections::Slots,
    dir: PathBuf,
    tcp: Option<Tcp>,
    reads_per_second: u32,
) -> Result<(), ServerError> {
    // Listening from the start: a SIGHUP before any run is hosted must not kill the server.
    let mut hangups = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup())
        .map_err(|source| ServerError::Runtime {
            what: "signal",
            cause: source,
        })?;
    let path = socket_path(&dir);
    let unix = bind_private(&path).map_err(|source| ServerError::Socket {
        path: path.clone(),
        cause: source,
    })?;
    let streams = Arc::new(stream::Streams::default());
    let pacing = Arc::new(pacing::Pacing::new(reads_per_second));
    let api = |tokens: Option<Arc<tokens::Tokens>>| api::Api {
        store: store.clone(),
        tokens,
        streams: streams.clone(),
        hosted: hosted.clone(),
        dir: dir.clone(),
        pacing: pacing.clone(),
    };
    // `/mcp` asks `/v1` in-process, as its caller: that router takes no token of its own.
    let with_mcp = |tokens: Option<Arc<tokens::Tokens>>| {
        let v1 = api::router(api(None), None);
        let endpoint = mcp::http(mcp::Server::new(v1, None), tokens.is_some());
        api::router(api(tokens), Some(axum::routing::any_service(endpoint)))
    };
    let app = with_mcp(None).into_make_service_with_connect_info::<connections::UnixPeer>();
    errln!("serving the store {} on {}", dir.display(), path.display());
    let mut servers = tokio::task::JoinSet::new();
    let listener = slots.bound(unix);
    servers.spawn(async move { axum::serve(listener, app).await });
    let reloadable = tcp.as_ref().and_then(|t| t.tls.clone());
    if let Some(Tcp { addr, tokens, tls }) = tcp {
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|source| ServerError::Tcp {
                addr,
                cause: source,
            })?;
        // Port 0 asks for any free port: the one bound is the one to tell.
        let addr = listener.local_addr().unwrap_or(addr);
        let scheme = if tls.is_some() { "https" } else { "http" };
        errln!("serving the API on {scheme}://{addr}/v1 and the web view on {scheme}://{addr}/");
        let url = format!("{scheme}://{addr}/");
        publish_address(&ui::address_file(&dir), &url).map_err(|source| ServerError::Write {
            path: ui::address_file(&dir),
            cause: source,
        })?;
        let app = ui::router()
            .merge(with_mcp(tokens))
            .into_make_service_with_connect_info::<connections::Peer>();
        match tls {
            Some(tls) => {
                let listener = tls::listen(listener, tls).map_err(|source| ServerError::Tcp {
                    addr,
                    cause: source,
                })?;
                let listener = slots.bound(listener);
                servers.spawn(async move { axum::serve(listener, app).await });
            }
            None => {
                let listener = slots.bound(listener);
                servers.spawn(async move { axum::serve(listener, app).await });
            }
        }
    }
    let stopped = async {
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
        loop {
            tokio::select! {
                r = tokio::signal::ctrl_c() => return r,
                _ = term.recv() => return Ok::<(), std::io::Error>(()),
                _ = hangups.recv() => match &reloadable {
                    None => errln!("SIGHUP: nothing to reload; serving on, runs go on"),
                    Some(tls) => match tls.reload() {
                        Ok(()) => errln!("SIGHUP: TLS certificate reloaded; new connections use it, runs go on"),
                        Err(e) => errln!("SIGHUP: the TLS certificate in use stays: {e}"),
                    },
                },
            }
        }
    };
    tokio::select! {
        _ = stopped => {}
        Some(ended) = servers.join_next() => {
            let why = match ended {
                Ok(Err(e)) => e.to_string(),
                Ok(Ok(())) => "it stopped".into(),
                Err(e) => e.to_string(),
            };
            let _ = std::fs::remove_file(&path);
            let _ = std::fs::remove_file(ui::address_file(&dir));
            return Err(ServerError::Failed(why));
        }
    }
    // Each hosted run stops its commands and records the interrupt.
    hosted.stop_all().await;
    let _ = std::fs::remove_file(&path);
    let _ = std::fs::remove_file(ui::address_file(&dir));
    Ok(())
}
