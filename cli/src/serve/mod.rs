//! `runlog serve`: a long-lived owner of the store with an HTTP/JSON API under `/v1`, on a Unix
//! socket in the store directory (`api.sock`, mode 0600) and, with `--http`, on TCP (loopback
//! unless a bearer token is required with `--token-file`). Every request is bounded: body
//! size, requests at once, time per request (the event stream excepted); a slow client never
//! holds up a run, whose engine runs elsewhere.

mod api;
pub mod client;
mod connections;
mod errors;
pub mod follow;
mod hosted;
mod stream;
mod tokens;
pub mod ui;

use crate::commands::Ctx;
use crate::error::{CliError, Result};
use runlog_store::Store;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

/// Arguments of `runlog serve`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Also serve the API, and the web view at `/`, on TCP at this address, e.g.
    /// 127.0.0.1:7700 (port 0: any free port; the address is printed and kept in
    /// STORE/view.url while serving).
    #[arg(long, value_name = "ADDR")]
    http: Option<SocketAddr>,
    /// A file of the tokens TCP clients must send (`Authorization: Bearer TOKEN`), one per
    /// line as `NAME SCOPE TOKEN`, the scope `read` (inspect), `steer` (also approve, reject,
    /// reopen, rollback, fork, replan, interrupt) or `run` (also start workflows); a file of
    /// one bare token gives it every scope. Required for any address that is not loopback.
    #[arg(long, value_name = "FILE")]
    token_file: Option<PathBuf>,
    /// Close a client's connection after this many seconds in which it moved no byte: a
    /// client that stops reading its event stream, or never finishes a request, gives its
    /// place back (at most 256 connections are open at once).
    #[arg(long, value_name = "SECS", default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..))]
    idle_timeout: u64,
    /// Runs this server executes at once (`POST /v1/runs`); past it, a start is answered 429.
    #[arg(long, value_name = "N", default_value_t = 256, value_parser = clap::value_parser!(u64).range(1..=100_000))]
    max_runs: u64,
}

/// The API socket in a store directory.
pub fn socket_path(store: &std::path::Path) -> PathBuf {
    store.join("api.sock")
}

/// Serves until SIGINT or SIGTERM.
pub fn run(a: Args, ctx: &Ctx) -> Result<()> {
    let tokens = match (&a.http, &a.token_file) {
        (_, Some(file)) => {
            let text = std::fs::read_to_string(file).map_err(|e| {
                crate::error::bad_file(
                    format!("cannot read: {e}"),
                    file,
                    "--token-file takes a file holding the tokens",
                )
            })?;
            let tokens = tokens::Tokens::parse(&text).map_err(|why| {
                crate::error::bad_file(
                    why,
                    file,
                    "write one token per line, `NAME SCOPE TOKEN` (scope read, steer or run; a \
                     token of 16 characters or more, e.g. from `openssl rand -hex 32`)",
                )
            })?;
            Some(Arc::new(tokens))
        }
        (Some(addr), None) if !addr.ip().is_loopback() => {
            return Err(CliError::input(format!(
                "serving on {addr}, not a loopback address, needs a token"
            ))
            .with_hint("pass --token-file FILE; clients send `Authorization: Bearer TOKEN`"))
        }
        _ => None,
    };
    let store = Arc::new(ctx.open_or_create()?);
    let engines = runtime("engines", 16, || {})?;
    // Few threads for the readers: each keeps a malloc arena, and every agent an engine
    // starts is forked from this process, page tables and all.
    let api = runtime("api", 4, below_the_engines)?;
    let max_runs = usize::try_from(a.max_runs).unwrap_or(usize::MAX);
    let hosted = Arc::new(hosted::Hosted::new(engines.handle().clone(), max_runs));
    let slots = connections::Slots::new(std::time::Duration::from_secs(a.idle_timeout));
    api.block_on(serve(
        store,
        hosted,
        slots,
        ctx.store.clone(),
        a.http,
        tokens,
    ))
}

/// A runtime of two async threads and at most `blocking` blocking ones, all of which run
/// `on_start` first.
fn runtime(
    name: &str,
    blocking: usize,
    on_start: impl Fn() + Send + Sync + 'static,
) -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .max_blocking_threads(blocking)
        .thread_name(format!("runlog-{name}"))
        .on_thread_start(on_start)
        .enable_all()
        .build()
        .map_err(|e| CliError::failed(format!("cannot start the {name} runtime: {e}")))
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

async fn serve(
    store: Arc<Store>,
    hosted: Arc<hosted::Hosted>,
    slots: connections::Slots,
    dir: PathBuf,
    http: Option<SocketAddr>,
    tokens: Option<Arc<tokens::Tokens>>,
) -> Result<()> {
    let path = socket_path(&dir);
    let _ = std::fs::remove_file(&path);
    let unix = tokio::net::UnixListener::bind(&path)
        .map_err(|e| CliError::failed(format!("cannot listen on {}: {e}", path.display())))?;
    std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o600))
        .map_err(|e| CliError::failed(format!("cannot restrict {}: {e}", path.display())))?;
    let streams = Arc::new(stream::Streams::default());
    let api = |tokens: Option<Arc<tokens::Tokens>>| api::Api {
        store: store.clone(),
        tokens,
        streams: streams.clone(),
        hosted: hosted.clone(),
        dir: dir.clone(),
    };
    let app = api::router(api(None)).into_make_service_with_connect_info::<connections::UnixPeer>();
    eprintln!("serving the store {} on {}", dir.display(), path.display());
    let mut servers = tokio::task::JoinSet::new();
    let listener = slots.bound(unix);
    servers.spawn(async move { axum::serve(listener, app).await });
    if let Some(addr) = http {
        let tcp = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|e| CliError::input(format!("cannot listen on {addr}: {e}")))?;
        // Port 0 asks for any free port: the one bound is the one to tell.
        let addr = tcp.local_addr().unwrap_or(addr);
        eprintln!("serving the API on http://{addr}/v1 and the web view on http://{addr}/");
        let url = format!("http://{addr}/");
        std::fs::write(ui::address_file(&dir), &url).map_err(|e| {
            CliError::failed(format!(
                "cannot write {}: {e}",
                ui::address_file(&dir).display()
            ))
        })?;
        let app = ui::router()
            .merge(api::router(api(tokens)))
            .into_make_service_with_connect_info::<connections::Peer>();
        let listener = slots.bound(tcp);
        servers.spawn(async move { axum::serve(listener, app).await });
    }
    let stopped = async {
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
        tokio::select! {
            r = tokio::signal::ctrl_c() => r,
            _ = term.recv() => Ok(()),
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
            return Err(CliError::failed(format!("the API server failed: {why}")));
        }
    }
    // The hosted runs heard the signal too: each stops its commands and records the interrupt.
    hosted.stop_all().await;
    let _ = std::fs::remove_file(&path);
    let _ = std::fs::remove_file(ui::address_file(&dir));
    Ok(())
}
