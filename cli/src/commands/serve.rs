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
    /// Live export of the traces of the runs this server executes.
    #[command(flatten)]
    trace: crate::otlp::TraceArgs,
}

/// Serves until SIGINT or SIGTERM; a SIGHUP is noted and changes nothing.
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
        (Some(addr), None) if !addr.ip().is_loopback() => {
            return Err(CliError::input(format!(
                "serving on {addr}, not a loopback address, needs a token"
            ))
            .with_hint("pass --token-file FILE; clients send `Authorization: Bearer TOKEN`"))
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
    };
    server::serve(options).map_err(|e| match e {
        ServerError::Tcp { .. } => CliError::input(e.to_string()),
        _ => CliError::failed(e.to_string()),
    })
}
