//! The `runlog` binary: runs workflows and answers every question about a past run.
//!
//! Exit codes: 0 success; 1 the run (or the thing checked) failed; 2 usage or bad input;
//! 130 interrupted.

mod cmd_control;
mod cmd_data;
mod cmd_inspect;
mod cmd_run;
mod error;
mod live;
mod output;
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
#[command(name = "runlog", version)]
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
    /// List the runs in the store with their status, size and lineage.
    ///
    /// Example: runlog runs --json
    Runs {
        /// One JSON object per run.
        #[arg(long)]
        json: bool,
    },
    /// The task board of a run, at its head or at any past seq.
    ///
    /// Statuses: open, in-progress, testing, test-failed, pending-eval, done, failed,
    /// cancelled; an open task whose dependency failed shows as blocked.
    ///
    /// Example: runlog status quickstart-1 --at 20 --tree
    Status {
        /// The run.
        run: String,
        /// Show the board as it was after this seq.
        #[arg(long, value_name = "SEQ")]
        at: Option<u64>,
        /// Indent tasks under their groups.
        #[arg(long)]
        tree: bool,
        /// The board as JSON.
        #[arg(long)]
        json: bool,
    },
    /// One task's whole story: attempts, tests, evals, rescues, messages, checkpoints.
    ///
    /// Example: runlog show quickstart-1 implement
    Show {
        /// The run.
        run: String,
        /// The task.
        task: String,
        /// As JSON.
        #[arg(long)]
        json: bool,
    },
    /// The event history of a run, one event per line with its seq.
    ///
    /// Example: runlog log quickstart-1 --task implement --kind gate-decided
    Log {
        /// The run.
        run: String,
        /// First seq.
        #[arg(long, default_value_t = 1)]
        from: u64,
        /// Last seq [default: the head]
        #[arg(long)]
        to: Option<u64>,
        /// Only events about this task.
        #[arg(long)]
        task: Option<String>,
        /// Only events of this kind (repeatable), e.g. gate-decided, stage-failed.
        #[arg(long = "kind", value_name = "KIND")]
        kinds: Vec<String>,
        /// Keep printing events as a running `runlog run` appends them, until it exits.
        #[arg(long)]
        follow: bool,
        /// One JSON object per line.
        #[arg(long)]
        json: bool,
    },
    /// Step through a run's history: each event and what it changed on the board.
    ///
    /// Example: runlog replay quickstart-1 --to 30 --step
    Replay {
        /// The run.
        run: String,
        /// Stop after this seq.
        #[arg(long)]
        to: Option<u64>,
        /// Wait for Enter after each event (on a terminal).
        #[arg(long)]
        step: bool,
        /// One JSON object per event, with the changes.
        #[arg(long)]
        json: bool,
    },
    /// The supervisor state stack (newest first) and the latest result per stage.
    ///
    /// Example: runlog stack seed-002-supervisor-1 --at 30
    Stack {
        /// The run.
        run: String,
        /// As it was after this seq.
        #[arg(long, value_name = "SEQ")]
        at: Option<u64>,
        /// As JSON.
        #[arg(long)]
        json: bool,
    },
    /// Stage health: executions, durations, failures in a row, circuits.
    ///
    /// Example: runlog stages seed-002-supervisor-1
    Stages {
        /// The run.
        run: String,
        /// One JSON object per stage.
        #[arg(long)]
        json: bool,
    },
    /// Every eval decision: score, dimensions, threshold in force, decision, consequence, flags.
    ///
    /// Example: runlog audit seed-001-eval-gate-1
    Audit {
        /// The run.
        run: String,
        /// One JSON object per decision.
        #[arg(long)]
        json: bool,
    },
    /// Return a run to the state after SEQ by appending a rollback; nothing is deleted.
    ///
    /// Example: runlog rollback quickstart-1 --to 20 --reason "the eval ran on a stale build"
    Rollback {
        /// The run.
        run: String,
        /// The seq whose state to return to.
        #[arg(long, value_name = "SEQ")]
        to: u64,
        /// Why (kept in the log).
        #[arg(long)]
        reason: String,
        /// Who [default: $USER]
        #[arg(long)]
        by: Option<String>,
        /// As JSON.
        #[arg(long)]
        json: bool,
    },
    /// Start a new run from a run's state after SEQ; continue it with `runlog resume`.
    ///
    /// Example: runlog fork quickstart-1 --at 20 --as quickstart-retry
    Fork {
        /// The run to fork.
        run: String,
        /// The seq to start from [default: the head]
        #[arg(long, value_name = "SEQ")]
        at: Option<u64>,
        /// The new run's id [default: RUN-fork-N]
        #[arg(long = "as", value_name = "NEW")]
        new: Option<String>,
        /// As JSON.
        #[arg(long)]
        json: bool,
    },
    /// Compare two runs, or two points of one run (RUN@SEQ), by task.
    ///
    /// Example: runlog diff quickstart-1@20 quickstart-1
    Diff {
        /// Left: RUN or RUN@SEQ.
        left: String,
        /// Right: RUN or RUN@SEQ.
        right: String,
        /// As JSON.
        #[arg(long)]
        json: bool,
    },
    /// Check checksums and the hash chain of one run or of all; exit 1 names the first bad seq.
    ///
    /// Example: runlog verify quickstart-1
    Verify {
        /// The run [default: every run]
        run: Option<String>,
        /// One JSON object per run.
        #[arg(long)]
        json: bool,
    },
    /// Print a run's digest (head seq and chain hash) to keep elsewhere, or check one.
    ///
    /// Example: runlog digest quickstart-1 > q1.digest; runlog digest quickstart-1 --check q1.digest
    Digest {
        /// The run.
        run: String,
        /// Check a saved digest instead of printing one.
        #[arg(long, value_name = "FILE")]
        check: Option<PathBuf>,
    },
    /// Export a run as JSON lines (stdout, or -o FILE).
    ///
    /// Example: runlog export quickstart-1 -o quickstart-1.jsonl
    Export {
        /// The run.
        run: String,
        /// Write to this file.
        #[arg(short, long, value_name = "FILE")]
        output: Option<PathBuf>,
    },
    /// Import an exported run; the same run id reproduces the same head hash.
    ///
    /// Example: runlog import quickstart-1.jsonl --as quickstart-1-copy
    Import {
        /// The export file.
        file: PathBuf,
        /// Import under another id.
        #[arg(long = "as", value_name = "NEW")]
        new: Option<String>,
        /// As JSON.
        #[arg(long)]
        json: bool,
    },
    /// Approve a task waiting in pending-eval (or failed by the gate), bypassing the gate.
    ///
    /// Example: runlog approve seed-001-eval-gate-1 capped --by alice
    Approve {
        /// The run.
        run: String,
        /// The task.
        task: String,
        /// Who [default: $USER]
        #[arg(long)]
        by: Option<String>,
        /// As JSON.
        #[arg(long)]
        json: bool,
    },
    /// Reject a task waiting in pending-eval: failed, or open again with --reopen.
    ///
    /// Example: runlog reject quickstart-1 docs --reopen --reason "wrong file"
    Reject {
        /// The run.
        run: String,
        /// The task.
        task: String,
        /// Open it again instead of failing it.
        #[arg(long)]
        reopen: bool,
        /// Why.
        #[arg(long, default_value = "rejected by hand")]
        reason: String,
        /// Who [default: $USER]
        #[arg(long)]
        by: Option<String>,
        /// As JSON.
        #[arg(long)]
        json: bool,
    },
    /// Put a failed task back to open (triage); `runlog resume` runs it again.
    ///
    /// Example: runlog reopen seed-002-supervisor-1 deploy
    Reopen {
        /// The run.
        run: String,
        /// The task.
        task: String,
        /// Who [default: $USER]
        #[arg(long)]
        by: Option<String>,
        /// As JSON.
        #[arg(long)]
        json: bool,
    },
    /// Revise a run's plan from a JSON file (the replan command's format).
    ///
    /// Example: runlog replan seed-000-1 --file plan.json
    Replan {
        /// The run.
        run: String,
        /// {"cancel": [...], "add": [tasks], "replaces": {"new": "old"}, "reason": "..."}
        #[arg(long, value_name = "PLAN.json")]
        file: PathBuf,
        /// Who [default: $USER]
        #[arg(long)]
        by: Option<String>,
        /// As JSON.
        #[arg(long)]
        json: bool,
    },
    /// Record commands given as JSON lines on stdin, through the same rules as the runner.
    ///
    /// Each line is a command, e.g. {"command":"start-task","task":"a","agent":null,"worktree":null},
    /// optionally wrapped as {"at": MS, "kind": {...}}. Every line is decided on its own: a
    /// rejected line records nothing and is reported; the exit is 1 if any was rejected.
    ///
    /// Example: my-orchestrator | runlog emit my-run --json
    Emit {
        /// The run (created by a start-run line if new).
        run: String,
        /// One JSON result per line.
        #[arg(long)]
        json: bool,
    },
    /// The task graph with status colours, as Graphviz dot or Mermaid.
    ///
    /// Example: runlog viz quickstart-1 --format mermaid
    Viz {
        /// The run.
        run: String,
        /// dot or mermaid.
        #[arg(long, default_value = "dot")]
        format: String,
        /// As it was after this seq.
        #[arg(long, value_name = "SEQ")]
        at: Option<u64>,
    },
}

fn none(_: ()) -> Option<error::ExitKind> {
    None
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

fn main() -> ExitCode {
    let cli = Cli::parse();
    if !matches!(
        cli.command,
        Cmd::Run { .. } | Cmd::Resume { .. } | Cmd::Emit { .. }
    ) {
        quiet_on_broken_pipe();
    }
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
        Cmd::Runs { json } => cmd_inspect::runs(&store, json).map(none),
        Cmd::Status {
            run,
            at,
            tree,
            json,
        } => cmd_inspect::status(&store, &run, at, tree, json).map(none),
        Cmd::Show { run, task, json } => cmd_inspect::show(&store, &run, &task, json).map(none),
        Cmd::Log {
            run,
            from,
            to,
            task,
            kinds,
            follow,
            json,
        } => {
            let filter = cmd_inspect::LogFilter {
                from,
                to,
                task,
                kinds,
            };
            cmd_inspect::log(&store, &run, &filter, json, follow).map(none)
        }
        Cmd::Replay {
            run,
            to,
            step,
            json,
        } => cmd_inspect::replay_steps(&store, &run, to, step, json).map(none),
        Cmd::Stack { run, at, json } => cmd_inspect::stack(&store, &run, at, json).map(none),
        Cmd::Stages { run, json } => cmd_inspect::stages(&store, &run, json).map(none),
        Cmd::Audit { run, json } => cmd_inspect::audit(&store, &run, json).map(none),
        Cmd::Rollback {
            run,
            to,
            reason,
            by,
            json,
        } => cmd_control::rollback(&store, &run, to, reason, by, json).map(none),
        Cmd::Fork { run, at, new, json } => {
            cmd_control::fork(&store, &run, at, new, json).map(none)
        }
        Cmd::Diff { left, right, json } => cmd_data::diff(&store, &left, &right, json).map(none),
        Cmd::Verify { run, json } => cmd_data::verify(&store, run.as_deref(), json).map(none),
        Cmd::Digest { run, check } => cmd_data::digest(&store, &run, check.as_deref()).map(none),
        Cmd::Export { run, output } => cmd_data::export(&store, &run, output.as_deref()).map(none),
        Cmd::Import { file, new, json } => {
            cmd_data::import(&store, &file, new.as_deref(), json).map(none)
        }
        Cmd::Approve {
            run,
            task,
            by,
            json,
        } => cmd_control::approve(&store, &run, &task, by, json).map(none),
        Cmd::Reject {
            run,
            task,
            reopen,
            reason,
            by,
            json,
        } => cmd_control::reject(&store, &run, &task, reopen, reason, by, json).map(none),
        Cmd::Reopen {
            run,
            task,
            by,
            json,
        } => cmd_control::reopen(&store, &run, &task, by, json).map(none),
        Cmd::Replan {
            run,
            file,
            by,
            json,
        } => cmd_control::replan(&store, &run, &file, by, json).map(none),
        Cmd::Emit { run, json } => cmd_control::emit(&store, &run, json).map(none),
        Cmd::Viz { run, format, at } => cmd_data::viz(&store, &run, &format, at).map(none),
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
