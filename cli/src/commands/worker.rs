//! `runlog worker`: executes the ready tasks of any runs of the shared store, beside any number
//! of workers on any hosts, holding a lease (`runlog_runner::lease`).

use crate::ctx::Ctx;
use crate::error::{CliError, ExitKind, Result};
use crate::signals::Signals;
use runlog_core::RunStatus;
use runlog_replay::Replay;
use runlog_runner::lease::Member;
use runlog_runner::{Ended, Launcher, RunOptions, RunnerError};
use runlog_store::StoreError;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;

/// Arguments of `runlog worker`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Commands at once, over every run this worker works on.
    #[arg(long, default_value_t = 4)]
    jobs: u32,
    /// The worker's name, unique among live workers [default: HOST.PID]
    #[arg(long, value_name = "NAME")]
    name: Option<String>,
    /// How long the worker's lease lasts without a renewal (it renews every quarter of it).
    /// When a worker dies, its attempts are taken on elsewhere this long after.
    #[arg(long, value_name = "MS", default_value_t = 10_000)]
    lease_ms: u64,
    /// Exit once no run has work left, instead of waiting for more (scripts, tests).
    #[arg(long)]
    until_idle: bool,
    /// Live export of the traces of the runs this worker works on.
    #[command(flatten)]
    trace: crate::otlp::TraceArgs,
    #[command(flatten)]
    alerts: super::alerts::MoreReceivers,
    #[command(flatten)]
    retention: super::forget::Retention,
}

/// Joins, then works on every running run until a signal (or, with --until-idle, until none
/// has work left).
pub fn run(a: Args, ctx: &Ctx) -> Result<Option<ExitKind>> {
    if ctx.shared.is_none() {
        return Err(CliError::input(
            "`runlog worker` works on the shared store; this store is a directory",
        )
        .with_hint(
            "point it at PostgreSQL: runlog --store postgres://USER:PASSWORD@HOST/DB worker \
             (on a directory, `runlog run` and `runlog serve` execute runs)",
        ));
    }
    let opts = RunOptions::with_jobs(Some(a.jobs)).map_err(super::run::jobs_refused)?;
    a.retention.apply(ctx)?;
    let launcher = Launcher::new(Arc::new(ctx.open()?), &ctx.store, &a.alerts.host(ctx)?);
    let lease = Duration::from_millis(a.lease_ms.max(100));
    let Some(member) = Member::join(launcher.store(), a.name, lease, &ctx.host)? else {
        return Err(CliError::failed("the shared store did not open as one"));
    };
    errln!(
        "worker {} joined {} (jobs {}, lease {} ms)",
        member.crew.me,
        ctx.store_name(),
        a.jobs,
        a.lease_ms
    );
    let rt = crate::runtime::for_command("worker")?;
    let (stop, stopped) = watch::channel(false);
    let work = Work {
        launcher,
        member: &member,
        opts,
        until_idle: a.until_idle,
        trace: a.trace.target()?,
        stop,
        stopped,
    };
    rt.block_on(work.go())
}

struct Work<'a> {
    launcher: Launcher,
    member: &'a Member,
    opts: RunOptions,
    until_idle: bool,
    /// Where the runs' traces go live, if anywhere.
    trace: Option<crate::otlp::Target>,
    /// Every engine stops when this turns true: the worker leaves.
    stop: watch::Sender<bool>,
    stopped: watch::Receiver<bool>,
}

/// How often the worker looks for runs when nothing else happens.
const LOOK_EVERY: Duration = Duration::from_millis(500);

impl Work<'_> {
    async fn go(self) -> Result<Option<ExitKind>> {
        let mut signals = Signals::new()?;
        let mut engines: tokio::task::JoinSet<(String, std::result::Result<Ended, RunnerError>)> =
            tokio::task::JoinSet::new();
        let mut active: HashSet<String> = HashSet::new();
        // Runs looked at and found with nothing to do, by head: looked at again when it moves.
        let mut looked: HashMap<String, u64> = HashMap::new();
        let mut failure = None;
        loop {
            let running = self.join_runs(&mut engines, &mut active, &mut looked)?;
            let idle = self.until_idle && engines.is_empty() && running == 0;
            // Idle is an answer only from a worker that still holds its lease.
            if self.member.lost() || (idle && !self.member.held()?) {
                failure.get_or_insert_with(|| {
                    CliError::from(StoreError::Fenced {
                        worker: self.member.crew.me.clone(),
                        why: "its lease could not be renewed".into(),
                    })
                });
            }
            if let Some(e) = failure.take() {
                // The engines stop their processes as they end.
                engines.shutdown().await;
                return Err(e);
            }
            if idle {
                return Ok(None);
            }
            tokio::select! {
                Some(joined) = engines.join_next() => {
                    if let Ok((run, ended)) = joined {
                        active.remove(&run);
                        match ended {
                            Ok(ended) => say_ended(&run, &ended),
                            Err(e) if e.is_fenced() => failure = Some(CliError::from(e)),
                            Err(e) => errln!("run {run}: this worker stopped working on it: {e}"),
                        }
                    }
                }
                _ = signals.next() => {
                    // Each engine gives up what this worker holds.
                    let _ = self.stop.send(true);
                    while engines.join_next().await.is_some() {}
                    errln!("worker {} left", self.member.crew.me);
                    return Ok(Some(ExitKind::Interrupted));
                }
                _ = tokio::time::sleep(LOOK_EVERY) => {}
            }
        }
    }

    /// Starts an engine for each running run not worked on here yet; returns how many runs
    /// are running.
    fn join_runs(
        &self,
        engines: &mut tokio::task::JoinSet<(String, std::result::Result<Ended, RunnerError>)>,
        active: &mut HashSet<String>,
        looked: &mut HashMap<String, u64>,
    ) -> Result<usize> {
        let mut running = 0;
        let log = self.launcher.log();
        for meta in log.runs()? {
            if runlog_replay::forgotten::is_register(&meta.run) {
                continue;
            }
            let head = meta.head.map_or(0, |h| h.seq);
            if active.contains(&meta.run) {
                running += 1;
                continue;
            }
            if looked.get(&meta.run) == Some(&head) {
                continue;
            }
            looked.insert(meta.run.clone(), head);
            let state = match Replay::new(log.as_ref()).head_state(&meta.run) {
                Ok(s) => s,
                Err(e) => {
                    errln!("run {}: cannot be read: {e}", meta.run);
                    continue;
                }
            };
            if state.status != RunStatus::Running {
                continue;
            }
            running += 1;
            let run = meta.run.clone();
            let Some(mut engine) = self.launcher.join(&run, state, self.opts) else {
                errln!(
                    "run {run}: its workflow file is not on this host at the path it was started from; left to other workers"
                );
                continue;
            };
            self.member.enlist(&mut engine, false);
            let (observer, exporting) = crate::otlp::traced(
                self.launcher.log().clone(),
                &run,
                self.trace.as_ref(),
                runlog_runner::Unobserved,
            )?;
            let engine = engine.stop_when(self.stopped.clone()).observed_by(observer);
            errln!("run {run}: working on it");
            active.insert(run.clone());
            engines.spawn(async move {
                let ended = engine.drive().await;
                if let Some(exporting) = exporting {
                    let run = run.clone();
                    if let Ok(said) =
                        tokio::task::spawn_blocking(move || exporting.finish_report().said(&run))
                            .await
                    {
                        errln!("{said}");
                    }
                }
                (run, ended)
            });
        }
        Ok(running)
    }
}

fn say_ended(run: &str, ended: &Ended) {
    let how = match &ended.state.status {
        RunStatus::Finished(outcome) => format!("finished ({outcome:?})").to_lowercase(),
        RunStatus::Interrupted if ended.interrupted => "left (signal)".into(),
        RunStatus::Interrupted => "interrupted".into(),
        other => format!("{other:?}").to_lowercase(),
    };
    errln!("run {run}: {how}");
}
