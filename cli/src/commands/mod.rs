//! One module per command: each has a `clap::Args` struct and one function. This file lists
//! them with their help (the order `runlog --help` shows) and routes a parsed command to its
//! module.

mod alerts;
mod approve;
mod audit;
mod budget;
mod children;
mod completions;
pub(crate) mod control;
mod cost;
pub(crate) mod diff;
mod digest;
mod du;
pub(crate) mod emit;
mod experiment;
mod export;
mod forget;
pub(crate) mod fork;
mod import;
mod init;
mod judges;
mod log;
mod mcp;
mod metrics;
mod reject;
mod reopen;
mod repair;
mod replan;
mod replay;
mod rerun;
mod resume;
mod review;
mod rollback;
pub(crate) mod run;
pub(crate) mod runs;
mod salvage;
mod serve;
mod show;
pub(crate) mod stack;
mod stages;
mod status;
mod ui;
pub(crate) mod verify;
mod viz;
pub(crate) mod worker;

use crate::ctx::Ctx;
use crate::error::{ExitKind, Result};
use clap::Subcommand;

/// Every command.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Write a starter workflow (an agent, a test, an evaluator) and its scripts, ready to run.
    ///
    /// Refuses to overwrite a file. Then: runlog run DIR/workflow.toml
    ///
    /// Example: runlog init hello
    Init(init::Args),
    /// Run a workflow file to the end, recording every transition.
    ///
    /// Agents, tests and evaluators run with `sh -c` in the workflow file's directory, each in
    /// its own process group, with RUNLOG_RUN, RUNLOG_TASK, RUNLOG_ATTEMPT, RUNLOG_RESCUE,
    /// RUNLOG_WORKTREE and RUNLOG_FEEDBACK set. Ctrl-C stops cleanly; `runlog resume` continues.
    /// With --json the closing summary is one JSON object.
    ///
    /// Example: runlog run fixtures/workflows/quickstart.toml
    #[command(
        after_help = "Exit codes: 0 every task done, 1 the run failed or paused, 2 bad workflow, 130 interrupted."
    )]
    Run(run::Args),
    /// Continue an interrupted, crashed or paused run from its log.
    ///
    /// Attempts that were running when it stopped are retried with the same agent identity and
    /// worktree; nothing done is redone.
    ///
    /// Example: runlog resume quickstart-1
    Resume(resume::Args),
    /// List the runs in the store with their status, size and lineage.
    ///
    /// Example: runlog runs --json
    Runs(runs::Args),
    /// Where the store's space goes: each run's events, blobs, snapshots and worktrees, and
    /// the store's files (sled, WAL, archive, blobs, snapshot cache) with sled's overhead.
    ///
    /// Example: runlog du --json
    Du(du::Args),
    /// Remove runs from the store for good, keeping a tombstone of each.
    ///
    /// Each run's events, outputs, snapshots and files on this host are removed, and the space
    /// given back; its tombstone in the register of forgotten runs keeps its head hash (its
    /// digest), outcome, who forgot it, when and why, chained like any record. Refused while a
    /// run is executed, or while a run that stays was forked from it. On a store directory, no
    /// other process may have the store open.
    ///
    /// Example: runlog forget --older-than 30d --keep-export /backups/runlog
    Forget(forget::Args),
    /// The task board of a run, at its head or at any past seq.
    ///
    /// Statuses: open, in-progress, testing, test-failed, pending-eval, done, failed,
    /// cancelled; an open task whose dependency failed shows as blocked.
    ///
    /// Example: runlog status quickstart-1 --at 20 --tree
    Status(status::Args),
    /// One task's whole story: attempts, tests, evals, rescues, messages, checkpoints.
    ///
    /// Example: runlog show quickstart-1 implement
    Show(show::Args),
    /// The event history of a run, one event per line with its seq.
    ///
    /// Example: runlog log quickstart-1 --task implement --kind gate-decided
    Log(log::Args),
    /// Step through a run's history: each event and what it changed on the board.
    ///
    /// Example: runlog replay quickstart-1 --to 30 --step
    Replay(replay::Args),
    /// The supervisor state stack (newest first) and the latest result per stage.
    ///
    /// Example: runlog stack deploy-1 --at 30
    Stack(stack::Args),
    /// Stage health: executions, durations, failures in a row, circuits.
    ///
    /// Example: runlog stages deploy-1
    Stages(stages::Args),
    /// Every eval decision: score, dimensions, threshold in force, decision, consequence, flags.
    ///
    /// Example: runlog audit quickstart-1
    Audit(audit::Args),
    /// How far each evaluator can be trusted, across runs: agreement with people and with what
    /// happened next, the same work judged again, drift, and what another threshold would do.
    ///
    /// One report per evaluator (its eval command, with the model and version it printed
    /// beside its score): verdicts and scores; a confusion matrix of the gate's decision
    /// against people's approve / reject / reopen, accuracy and Cohen's kappa; false passes
    /// (work then rolled back, reopened, rejected, or a dependent's tests failing) and false
    /// fails (a person approved, or a later attempt passed without touching the files judged);
    /// the same change judged more than once; scores that rose with no change; scores by week
    /// and version. --threshold and --weights decide the recorded scores again: no evaluator
    /// runs.
    ///
    /// Example: runlog judges --since 2026-11-01 --threshold 0.8
    Judges(judges::Args),
    /// The verdicts waiting for a person (`[settings] review`), with the score, the notes and
    /// the change judged: `runlog approve` or `runlog reject` decides each.
    ///
    /// Example: runlog review release-1
    Review(review::Args),
    /// How well the runs went: test pass rate, recovery, rescues, interventions, untested work.
    ///
    /// For each run (default: every run in the store): the final test pass rate, test
    /// failures and how many were recovered without a person, tasks done with
    /// failing tests (there should be none), eval pass rate at the first try and rescue
    /// success, every human intervention (approve, reject, reopen, replan,
    /// rollback) by kind and by whom, attempts per task, and the time tasks spent in each
    /// state; then all the runs together. With --json: one object per run, then {"all": N, ...}.
    ///
    /// Example: runlog metrics quickstart-1
    Metrics(metrics::Args),
    /// Return a run to the state after SEQ by appending a rollback; nothing is deleted.
    ///
    /// Example: runlog rollback quickstart-1 --to 20 --reason "the eval ran on a stale build"
    Rollback(rollback::Args),
    /// Start a new run from a run's state after SEQ; continue it with `runlog resume`.
    ///
    /// Example: runlog fork quickstart-1 --at 20 --as quickstart-retry
    Fork(fork::Args),
    /// Run a recorded run again: a fork that re-executes its agents, tests and evaluators,
    /// each model call answered from the recording (no provider is reached, nothing is
    /// paid) while it asks what the recorded call asked. The first call that asks something
    /// else is named in words; with --answers recorded-then-live it and its command's later
    /// calls go to the provider. --workflow FILE replaces the run's commands, tests or
    /// evaluators (same tasks); --task T reruns T alone and carries the others over as done.
    ///
    /// Example: runlog rerun quickstart-1 --workflow stricter.toml --answers recorded-then-live
    Rerun(rerun::Args),
    /// Execute recorded runs again under variants (another model, prompt, test or judge) and
    /// compare each variant with the recording: pass rates with their intervals, tasks fixed
    /// and broken, scores, cost. Calls a variant does not change are answered from the
    /// recording; a model the variant maps (`[gateway.models]`) is always asked live.
    ///
    /// Example: runlog experiment run judge-v2 --since 2026-11-01 --variant strict=strict.toml
    Experiment(experiment::Args),
    /// Every experiment, with how far it has gone and what it spent.
    ///
    /// Example: runlog experiments
    Experiments(experiment::ListArgs),
    /// Compare two runs, or two points of one run (RUN@SEQ), by task.
    ///
    /// Example: runlog diff quickstart-1@20 quickstart-1
    Diff(diff::Args),
    /// Check checksums and the hash chain of one run or of all; exit 1 names the first bad seq.
    ///
    /// Example: runlog verify quickstart-1
    Verify(verify::Args),
    /// Rebuild the store's sled database from its archive after damage (sled lost events, or
    /// cannot open its file).
    ///
    /// Every commit the store acknowledged is also kept in STORE/archive (the write-ahead log,
    /// sealed at each checkpoint). Repair moves the damaged database to STORE/db.damaged-MS
    /// (never deleted), replays the archive into a new one, and verifies every run against the
    /// heads the store remembered. Stop every runlog using the store first. Exit 1 if a run
    /// could not be rebuilt in full (what is lost is named).
    ///
    /// Example: runlog repair --store ./runlog-store
    Repair(repair::Args),
    /// Copy every run whose frames still verify out of a sled file nothing else can read, into
    /// a new store (the last resort when there is no archive to repair from).
    ///
    /// Reads STORE/db/db (or --from FILE) as bytes: each frame's records are checked against
    /// their chain tags, frames are linked by hash, and each chain is named by its run id
    /// (found in the store, or given with --run). The new store has the same chain hashes.
    /// sled zeroes its log from the first bad byte when it opens it, so salvage before
    /// running anything else on the store, or from a copy. Exit 1 if a run is shorter than
    /// the store remembered, or nothing was found.
    ///
    /// Example: runlog salvage --store ./broken --into ./rescued
    Salvage(salvage::Args),
    /// Print a run's digest (head seq and chain hash) to keep elsewhere, or check one.
    ///
    /// Example: runlog digest quickstart-1 > q1.digest; runlog digest quickstart-1 --check q1.digest
    Digest(digest::Args),
    /// Export a run as JSON lines (stdout, or -o FILE).
    ///
    /// Example: runlog export quickstart-1 -o quickstart-1.jsonl
    Export(export::Args),
    /// Import an exported run; the same run id reproduces the same head hash.
    ///
    /// Example: runlog import quickstart-1.jsonl --as quickstart-1-copy
    Import(import::Args),
    /// What a run's commands used and cost, by task, model, stage or attempt, with its budgets.
    ///
    /// Agents, tests, evaluators and the replanner report usage by printing a JSON line with
    /// a "usage" object (OpenAI, Anthropic, Claude Code and Codex shapes) or appending one to
    /// the file named by RUNLOG_USAGE; tokens without a reported cost are priced with the
    /// workflow's [prices."MODEL"]. Several runs: compared side by side.
    ///
    /// Example: runlog cost quickstart-1 --by model
    Cost(cost::Args),
    /// Set or raise the budget of a run, or of one of its tasks, recorded with who did it.
    ///
    /// A spent budget stops new attempts, rescues, retries and replans of what it bounds (the
    /// task fails with budget-spent, the run pauses); raising it reopens those tasks, and
    /// `runlog resume RUN` goes on.
    ///
    /// Example: runlog budget quickstart-1 --max-cost-usd 10
    Budget(budget::Args),
    /// Approve a task waiting in pending-eval (or failed by the gate), bypassing the gate.
    ///
    /// Example: runlog approve quickstart-1 docs --by alice
    Approve(approve::Args),
    /// Reject a task waiting in pending-eval: failed, or open again with --reopen.
    ///
    /// Example: runlog reject quickstart-1 docs --reopen --reason "wrong file"
    Reject(reject::Args),
    /// Put a failed task back to open (triage); `runlog resume` runs it again.
    ///
    /// Example: runlog reopen deploy-1 deploy
    Reopen(reopen::Args),
    /// Revise a run's plan from a JSON file (the replan command's format).
    ///
    /// Example: runlog replan refactor-1 --file plan.json
    Replan(replan::Args),
    /// Record commands given as JSON lines on stdin, through the same rules as the runner.
    ///
    /// Each line is a command, e.g. {"command":"start-task","task":"a","agent":null,"worktree":null},
    /// optionally wrapped as {"at": MS, "kind": {...}}. A run starts short, with a workflow
    /// file's defaults: {"command":"start-run","run":"r1","tasks":[{"id":"a"},{"id":"b","after":["a"]}]}
    /// (optional "workflow" name and "settings" as in a workflow file; tasks need no "run").
    /// Every line is decided on its own, on the state the lines before it left (a rollback
    /// included): a rejected line records nothing and is reported; the exit is 1 if the rules
    /// rejected any, 2 if a line was not a command.
    ///
    /// Example: my-orchestrator | runlog emit my-run --json
    Emit(emit::Args),
    /// Own the store and serve its HTTP/JSON API (/v1) until Ctrl-C or SIGTERM.
    ///
    /// On STORE/api.sock (mode 0600) always; on TCP with --http ADDR (loopback, or any address
    /// with --token-file). Resources: GET /v1/runs, /v1/runs/RUN[?at=SEQ],
    /// /v1/runs/RUN/events[?from&to&task&kind], /v1/runs/RUN/stream (Server-Sent Events,
    /// resumable with Last-Event-ID), /v1/runs/RUN/audit; POST /v1/runs/RUN/commands (one JSON
    /// command, as emit takes it). The OpenAPI document: GET /v1/openapi.json. runlog's tools
    /// for agents (the Model Context Protocol, as `runlog mcp` serves them) are at /mcp, behind
    /// the same tokens.
    ///
    /// Example: runlog serve --http 127.0.0.1:7700
    Serve(serve::Args),
    /// Serve runlog's tools to an agent over the Model Context Protocol on stdin and stdout.
    ///
    /// What a coding agent's MCP configuration starts (Claude Code, Codex, Cursor): tools
    /// named after these commands (runs, status, log, show, audit, judges, review, diff, cost,
    /// experiments; approve, reject, reopen, rollback, fork, budget, rerun, resume) with their
    /// flags as arguments, each answering with the view `--json` prints. It acts as the user
    /// who started it, recorded with `via = mcp`; --read-only lists only the tools that look.
    /// `runlog serve` offers the same tools over HTTP at /mcp, behind its tokens.
    ///
    /// Example: claude mcp add runlog -- runlog mcp --store /path/to/.runlog
    Mcp(mcp::Args),
    /// Check where a workflow's alerts go: `runlog alerts test WORKFLOW` sends one to each.
    ///
    /// A run sends its `[[alerts]]` as they happen: a failed run, a task waiting for a person,
    /// a budget crossing 50, 80 and 100 %, a rerun that diverged. Each is posted as Slack
    /// reads it or as JSON, signed with `X-Runlog-Signature: sha256=HEX` (HMAC-SHA256 of the
    /// body) when the alert names a `secret_env`, tried again with backoff, and recorded
    /// (`alert-sent`); a receiver that is down never holds the run up.
    ///
    /// Example: runlog alerts test workflow.toml
    Alerts(alerts::Args),
    /// The task graph with status colours, as Graphviz dot or Mermaid.
    ///
    /// With --json: {"run", "seq", "format", "graph"}.
    ///
    /// Example: runlog viz quickstart-1 --format mermaid
    Viz(viz::Args),
    /// The web view's address: finds the server of this store, or starts one on loopback.
    ///
    /// The view (runs, a run's task graph, timeline with a seq scrubber, eval audit, stack,
    /// diff, and approve / reject / reopen / rollback / fork) reads the same /v1 API as
    /// scripts. A server this starts runs in the background (its output in STORE/serve.log)
    /// until stopped with `kill PID`; `runlog serve --http ADDR` serves the same view.
    ///
    /// Example: runlog ui --open
    Ui(ui::Args),
    /// Print the completion script of a shell: bash, zsh, fish, elvish or powershell.
    ///
    /// Example: runlog completions bash > /etc/bash_completion.d/runlog
    Completions(completions::Args),
    /// Print runlog's man page (roff), or write a page per command into a directory.
    ///
    /// Example: runlog man | man -l -
    Man(completions::ManArgs),
    /// Execute the ready tasks of any runs of the shared store, beside other workers on any hosts.
    ///
    /// Needs --store postgres://… (or RUNLOG_STORE). The worker joins with a lease it renews;
    /// it starts an attempt only by claiming the task in the same append as the attempt, so
    /// one worker runs each; a task stays with the worker that has its worktree. When a worker
    /// dies (kill -9, host gone, cut off), its attempts are abandoned once its lease expires and
    /// taken on elsewhere in a fresh worktree with the feedback; it can record nothing more.
    /// Each run's workflow directory must be at the same path on every worker's host. Ctrl-C
    /// leaves: what the worker holds goes to the others at once.
    ///
    /// Example: runlog --store postgres://runlog:secret@db/runlog worker --jobs 8
    #[command(
        after_help = "Exit codes: 0 idle (--until-idle), 1 the lease was lost or the store failed, 2 usage, 130 left on a signal."
    )]
    Worker(worker::Args),
}

impl Command {
    /// Commands that only read the store: they end quietly on a closed pipe
    /// (`runlog log RUN | head`). Every other command records or writes something and must
    /// never die of one halfway (a run, a decision, a forget, input still to record): a closed
    /// standard output is its write error instead.
    pub fn only_reads(&self) -> bool {
        matches!(
            self,
            Command::Runs(_)
                | Command::Du(_)
                | Command::Status(_)
                | Command::Show(_)
                | Command::Log(_)
                | Command::Replay(_)
                | Command::Stack(_)
                | Command::Stages(_)
                | Command::Audit(_)
                | Command::Judges(_)
                | Command::Experiments(_)
                | Command::Review(_)
                | Command::Metrics(_)
                | Command::Diff(_)
                | Command::Verify(_)
                | Command::Digest(_)
                | Command::Cost(_)
                | Command::Viz(_)
                | Command::Completions(_)
        ) || matches!(self, Command::Export(a) if !a.sends())
    }

    /// Runs the command. `Ok(Some(kind))` ends with that exit code without an error message.
    pub fn execute(self, ctx: &Ctx) -> Result<Option<ExitKind>> {
        let done = |r: Result<()>| r.map(|()| None);
        match self {
            Command::Init(a) => done(init::run(a, ctx)),
            Command::Run(a) => run::run(a, ctx),
            Command::Resume(a) => resume::run(a, ctx),
            Command::Rerun(a) => rerun::run(a, ctx),
            Command::Experiment(a) => experiment::run(a, ctx),
            Command::Experiments(a) => done(experiment::list(a, ctx)),
            Command::Runs(a) => done(runs::run(a, ctx)),
            Command::Du(a) => done(du::run(a, ctx)),
            Command::Forget(a) => done(forget::run(a, ctx)),
            Command::Status(a) => done(status::run(a, ctx)),
            Command::Show(a) => done(show::run(a, ctx)),
            Command::Log(a) => done(log::run(a, ctx)),
            Command::Replay(a) => done(replay::run(a, ctx)),
            Command::Stack(a) => done(stack::run(a, ctx)),
            Command::Stages(a) => done(stages::run(a, ctx)),
            Command::Audit(a) => done(audit::run(a, ctx)),
            Command::Judges(a) => done(judges::run(a, ctx)),
            Command::Review(a) => done(review::run(a, ctx)),
            Command::Metrics(a) => done(metrics::run(a, ctx)),
            Command::Rollback(a) => done(rollback::run(a, ctx)),
            Command::Fork(a) => done(fork::run(a, ctx)),
            Command::Diff(a) => done(diff::run(a, ctx)),
            Command::Verify(a) => done(verify::run(a, ctx)),
            Command::Digest(a) => done(digest::run(a, ctx)),
            Command::Export(a) => done(export::run(a, ctx)),
            Command::Import(a) => done(import::run(a, ctx)),
            Command::Cost(a) => done(cost::run(a, ctx)),
            Command::Budget(a) => done(budget::run(a, ctx)),
            Command::Approve(a) => done(approve::run(a, ctx)),
            Command::Reject(a) => done(reject::run(a, ctx)),
            Command::Reopen(a) => done(reopen::run(a, ctx)),
            Command::Replan(a) => done(replan::run(a, ctx)),
            Command::Emit(a) => done(emit::run(a, ctx)),
            Command::Viz(a) => done(viz::run(a, ctx)),
            Command::Serve(a) => done(serve::run(a, ctx)),
            Command::Mcp(a) => done(mcp::run(a, ctx)),
            Command::Alerts(a) => done(alerts::run(a, ctx)),
            Command::Ui(a) => done(ui::run(a, ctx)),
            Command::Worker(a) => worker::run(a, ctx),
            Command::Completions(a) => done(completions::run(a)),
            Command::Man(a) => done(completions::man(a)),
            Command::Repair(a) => done(repair::run(a, ctx)),
            Command::Salvage(a) => done(salvage::run(a, ctx)),
        }
    }
}
