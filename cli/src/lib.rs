//! The `runlog` command line as a library: the binary is [`main`]; [`fuzz`] holds the parsers
//! of what outside programs and files hand runlog, as the fuzz targets and their corpus replay
//! call them.
//!
//! Exit codes: 0 success; 1 the run (or the thing checked) failed; 2 usage or bad input;
//! 130 interrupted.

// `println!` panics when standard output fails; commands print through `outln!`.
#![deny(clippy::print_stdout)]

/// `println!` for a command's output: a write to standard output that fails (a full disk
/// behind a redirection) returns the command's error where `println!` panics.
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::render::out(format_args!("{}\n", format_args!($($arg)*)))?
    };
}

/// `print!` the same way as [`outln!`].
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::render::out(format_args!($($arg)*))?
    };
}

/// `eprintln!` through the terminal writer: what reaches a person's terminal on standard
/// error (errors, notes) shows control characters escaped.
macro_rules! errln {
    ($($arg:tt)*) => {
        $crate::render::terminal::eprint(&format!("{}\n", format_args!($($arg)*)))
    };
}

mod client;
mod commands;
mod ctx;
mod error;
mod experimenting;
mod follow;
pub mod fuzz;
mod intake;
mod logging;
mod otlp;
mod queries;
mod render;
mod runtime;
mod server;
mod signals;
mod store;
mod view;

/// The API's OpenAPI document with its answers' schemas generated from the same views.
#[cfg(feature = "ts")]
pub use server::api::documented::with_views as openapi_with_views;
/// The web view's TypeScript declarations, generated from the views the API serializes.
#[cfg(feature = "ts")]
pub use server::ui::types::declarations as web_view_types;

use clap::Parser;
use std::path::PathBuf;
use std::process::ExitCode;

/// runlog: an event-sourced workflow engine for AI-agent task pipelines. Every transition of a
/// run is an immutable, hash-chained event: replay any past run, audit every eval decision,
/// roll back without losing history.
#[derive(Debug, Parser)]
#[command(name = "runlog", version)]
#[command(
    after_help = "Exit codes: 0 success, 1 the run (or what was checked) failed, 2 usage or bad input, 130 interrupted.\n\nStart here:  runlog init hello && runlog run hello/workflow.toml"
)]
struct Cli {
    /// The store: a directory [default: .runlog in the current directory], or a PostgreSQL URL
    /// (postgres://USER:PASSWORD@HOST:PORT/DB) shared by runs and workers on many hosts
    #[arg(long, global = true, env = "RUNLOG_STORE", value_name = "DIR|URL")]
    store: Option<PathBuf>,
    /// Machine-readable output: one JSON object per line (statuses as kebab-case words, every
    /// event with its seq).
    #[arg(long, global = true)]
    json: bool,
    /// Log what runlog does to stderr: the engine's steps, the store's owner, leases, group
    /// commit, git, the server's requests. RUNLOG_LOG takes tracing's filters instead
    /// (RUNLOG_LOG=runlog_store=trace,runlog_runner=debug)
    #[arg(long, global = true)]
    debug: bool,
    /// The log's filter (tracing's syntax); --debug is runlog's crates at `debug`
    #[arg(
        long = "log",
        global = true,
        env = "RUNLOG_LOG",
        value_name = "FILTER",
        hide = true
    )]
    log: Option<String>,
    #[command(subcommand)]
    command: commands::Command,
}

/// The command line's definition (completions and man pages are made from it).
fn command_line() -> clap::Command {
    <Cli as clap::CommandFactory>::command()
}

/// Read-only commands die quietly when their reader goes away (`runlog log RUN | head`), as
/// Unix tools do; Rust ignores SIGPIPE, which turns that into a panic on the next print. The
/// runner keeps ignoring it: a closed stdout must never kill a run.
#[allow(unsafe_code)]
fn quiet_on_broken_pipe() {
    use nix::sys::signal::{signal, SigHandler, Signal};
    // SAFETY: called at the top of `main`, before any other thread exists, and SIG_DFL installs
    // no handler code at all.
    let _ = unsafe { signal(Signal::SIGPIPE, SigHandler::SigDfl) };
}

/// The `runlog` binary.
pub fn main() -> ExitCode {
    if let Some(code) = runlog_runner::process::trampoline() {
        return code;
    }
    let matches = <Cli as clap::CommandFactory>::command().get_matches();
    let cli =
        <Cli as clap::FromArgMatches>::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    // What the store's owner note says of this process: the command, never its arguments
    // (an OTLP header, a token file's path...).
    runlog_store::layout::name_owner(format!(
        "runlog {}",
        matches.subcommand_name().unwrap_or_default()
    ));
    logging::start(cli.debug, cli.log.as_deref());
    if cli.command.only_reads() {
        quiet_on_broken_pipe();
    }
    runlog_runner::process::private_files();
    let (store, shared) = store::chosen(cli.store.as_deref());
    let ctx = crate::ctx::Ctx {
        store,
        shared,
        json: cli.json,
        // Each run's commands are given runlog's MCP tools for their run.
        host: runlog_runner::Host::from_env().granting(runlog_runner::Granting(
            std::sync::Arc::new(server::mcp::inside::grant),
        )),
    };
    match cli.command.execute(&ctx) {
        Ok(None) => ExitCode::SUCCESS,
        Ok(Some(kind)) => ExitCode::from(kind.code()),
        Err(e) => {
            e.report();
            ExitCode::from(e.kind.code())
        }
    }
}
