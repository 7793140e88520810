//! `runlog serve`: owns the store and serves its HTTP/JSON API and the web view (see
//! `crate::server`).

use crate::ctx::Ctx;
use crate::error::{CliError, Result};
use crate::server::{self, ServerError};
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
    /// Reads served each second, for all clients together, while this server executes runs
    /// [default: 150 for each processor]; a read that comes early waits for its turn, so that
    /// readers never take the processors the runs need. Commands and event streams never
    /// wait. 0: no limit.
    #[arg(long, value_name = "N")]
    reads_per_second: Option<u32>,
    /// Serve HTTPS on --http with this certificate chain (PEM, the server's first); with
    /// --tls-key. Reloaded, with the key and --client-ca, on SIGHUP: open connections and runs
    /// go on.
    #[arg(long, value_name = "FILE", requires_all = ["tls_key", "http"])]
    tls_cert: Option<PathBuf>,
    /// The private key of --tls-cert (PEM).
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    tls_key: Option<PathBuf>,
    /// Require a client certificate signed by this CA (PEM): mutual TLS. Without
    /// --token-file, the certificate's subject is who acts (`CN=alice`), with every scope.
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    client_ca: Option<PathBuf>,
    /// Serve tokens over plain HTTP on an address that is not loopback: anyone on the
    /// network path reads them. Without it, such an address needs --tls-cert.
    #[arg(long)]
    insecure_http: bool,
    /// Live export of the traces of the runs this server executes.
    #[command(flatten)]
    trace: crate::otlp::TraceArgs,
    #[command(flatten)]
    alerts: super::alerts::MoreReceivers,
    #[command(flatten)]
    retention: super::forget::Retention,
}

/// Serves until SIGINT or SIGTERM; a SIGHUP is noted and changes nothing.
pub fn run(a: Args, ctx: &Ctx) -> Result<()> {
    if ctx.shared.is_some() || ctx.store.join("db").exists() {
        a.retention.apply(ctx)?;
    }
    let tls = match (&a.tls_cert, &a.tls_key) {
        (Some(cert), Some(key)) => {
            let files = server::tls::TlsFiles {
                cert: cert.clone(),
                key: key.clone(),
                client_ca: a.client_ca.clone(),
            };
            let tls = server::tls::Tls::load(files).map_err(|e| {
                CliError::input(e.to_string()).with_hint(
                    "--tls-cert takes a PEM certificate chain and --tls-key its PEM private key (e.g. from `openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout key.pem -out cert.pem -subj /CN=HOST -addext subjectAltName=DNS:HOST`)",
                )
            })?;
            Some(Arc::new(tls))
        }
        _ => None,
    };
    let remote = a.http.filter(|addr| !addr.ip().is_loopback());
    if let (Some(addr), None, false) = (remote, &tls, a.insecure_http) {
        return Err(CliError::input(format!(
            "serving on {addr}, not a loopback address, over plain HTTP: the tokens would cross the network in clear"
        ))
        .with_hint(
            "pass --tls-cert FILE --tls-key FILE (HTTPS), or --insecure-http if the network is yours alone",
        ));
    }
    let mutual = tls.as_ref().is_some_and(|t| t.mutual());
    let tokens = match (&a.http, &a.token_file) {
        (_, Some(file)) => {
            let text = std::fs::read_to_string(file).map_err(|e| {
                crate::error::bad_file(
                    format!("cannot read: {e}"),
                    file,
                    "--token-file takes a file holding the tokens",
                )
            })?;
            let tokens = server::Tokens::parse(&text).map_err(|why| {
                crate::error::bad_file(
                    why,
                    file,
                    "write one token per line, `NAME SCOPE TOKEN` (scope read, steer or run; a \
                     token of 16 characters or more, e.g. from `openssl rand -hex 32`)",
                )
            })?;
            Some(Arc::new(tokens))
        }
        (Some(addr), None) if !addr.ip().is_loopback() && !mutual => {
            return Err(CliError::input(format!(
                "serving on {addr}, not a loopback address, needs a token"
            ))
            .with_hint("pass --token-file FILE (clients send `Authorization: Bearer TOKEN`), or --client-ca FILE (clients present certificates)"))
        }
        _ => None,
    };
    let options = server::Options {
        store: Arc::new(ctx.open_or_create()?),
        dir: ctx.store.clone(),
        http: a.http,
        tokens,
        idle: std::time::Duration::from_secs(a.idle_timeout),
        max_runs: usize::try_from(a.max_runs).unwrap_or(usize::MAX),
        trace: a.trace.target()?,
        tls,
        reads_per_second: a
            .reads_per_second
            .unwrap_or_else(server::pacing::Pacing::default_rate),
        host: a.alerts.host(ctx)?,
    };
    server::serve(options).map_err(|e| match e {
        ServerError::Tcp { .. } => CliError::input(e.to_string()),
        _ => CliError::failed(e.to_string()),
    })
}
