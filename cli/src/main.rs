//! The `runlog` binary: runs workflows and answers every question about a past run.
//!
//! Exit codes: 0 success; 1 the run (or the thing checked) failed; 2 usage or bad input;
//! 130 interrupted.

mod cmd_inspect;
mod cmd_run;
mod error;
mod runner;
mod store;
mod workflow;

use clap::{Parser, Subcommand};
use runner::RunOptions;
use std::path::PathBuf;
use std::process::ExitCode;

/// runlog: an event-sourced workflow engine for AI-agent task pipelines. Every transition of a
/// run is an immutable, hash-chained event: replay any past run, audit every eval decision,
/// roll back without losing history.
#[derive(Debug, Parser)]
#[command(name = "runlog", version, about, long_about = None)]
#[command(
    after_help = "Exit codes: 0 success, 1 the run (or what was checked) failed, 2 usage or bad input, 130 interrupted.\n\nStart here:  runlog run fixtures/workflows/quickstart.toml"
)]
struct Cli {
    /// The store directory [default: .runlog in the current directory]
    #[arg(long, global = true, env = "RUNLOG_STORE", value_name = "DIR")]
    store: Option<PathBuf>,
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Debug, Subcommand)]
enum Cmd {
    /// Run a workflow file to the end, recording every transition.
    ///
    /// Agents, tests and evaluators run with `sh -c` in the workflow file's directory, each in
    /// its own process group, with RUNLOG_RUN, RUNLOG_TASK, RUNLOG_ATTEMPT, RUNLOG_RESCUE,
    /// RUNLOG_WORKTREE and RUNLOG_FEEDBACK set. Ctrl-C stops cleanly; `runlog resume` continues.
    ///
    /// Example: runlog run fixtures/workflows/quickstart.toml
    #[command(
        after_help = "Exit codes: 0 every task done, 1 the run failed or paused, 2 bad workflow, 130 interrupted."
    )]
    Run {
        /// The workflow file (TOML).
        workflow: PathBuf,
        /// The run's id [default: the workflow name plus a counter]
        #[arg(long, value_name = "ID")]
        run_id: Option<String>,
        /// Tasks at once [default: the workflow's settings.jobs]
        #[arg(long)]
        jobs: Option<u32>,
        /// Plain lines, no live view.
        #[arg(long)]
        quiet: bool,
        /// Print the closing summary as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Continue an interrupted, crashed or paused run from its log.
    ///
    /// Attempts that were running when it stopped are retried with the same agent identity and
    /// worktree; nothing done is redone.
    ///
    /// Example: runlog resume quickstart-1
    Resume {
        /// The run.
        run: String,
        /// Tasks at once [default: the run's settings.jobs]
        #[arg(long)]
        jobs: Option<u32>,
        /// Plain lines, no live view.
        #[arg(long)]
        quiet: bool,
        /// Print the closing summary as JSON.
        #[arg(long)]
        json: bool,
    },
    /// The event history of a run, one event per line with its seq.
    ///
    /// Example: runlog log quickstart-1 --from 10 --to 20
    Log {
        /// The run.
        run: String,
        /// First seq.
        #[arg(long, default_value_t = 1)]
        from: u64,
        /// Last seq [default: the head]
        #[arg(long)]
        to: Option<u64>,
        /// One JSON object per line.
        #[arg(long)]
        json: bool,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let store = store::dir(cli.store.as_deref());
    let result = match cli.command {
        Cmd::Run {
            workflow,
            run_id,
            jobs,
            quiet,
            json,
        } => cmd_run::run(&store, &workflow, run_id, RunOptions { quiet, jobs }, json),
        Cmd::Resume {
            run,
            jobs,
            quiet,
            json,
        } => cmd_run::resume(&store, &run, RunOptions { quiet, jobs }, json),
        Cmd::Log {
            run,
            from,
            to,
            json,
        } => cmd_inspect::log(&store, &run, from, to, json).map(|()| None),
    };
    match result {
        Ok(None) => ExitCode::SUCCESS,
        Ok(Some(kind)) => ExitCode::from(kind.code()),
        Err(e) => {
            eprintln!("error: {e}");
            if let Some(h) = &e.hint {
                eprintln!("  hint: {h}");
            }
            ExitCode::from(e.kind.code())
        }
    }
}
