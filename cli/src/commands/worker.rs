//! `runlog worker`: executes the ready tasks of any runs of the shared store, beside any number
//! of workers on any hosts; and the lease that `runlog run` and `resume` also hold there.

use super::run::{work_dir, workflow_context};
use super::Ctx;
use crate::error::{CliError, ExitKind, Result};
use crate::runner::{Crew, Ended, Engine, RunOptions, RunnerError};
use runlog_core::RunStatus;
use runlog_replay::Replay;
use runlog_store::{EventLog, PgLog, Store, StoreError};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

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
}

/// How long `runlog run` and `resume` hold their lease on the shared store:
/// `RUNLOG_LEASE_MS`, else 10 s.
fn lease_from_env() -> Duration {
    let ms = std::env::var("RUNLOG_LEASE_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000u64);
    Duration::from_millis(ms.max(100))
}

/// This process's lease on the shared store, given up when dropped.
#[derive(Debug)]
pub(crate) struct Member {
    pg: Arc<PgLog>,
    /// What its engines share.
    pub crew: Crew,
}

impl Member {
    /// Joins the shared store as a worker (`None` on a store directory, where one process
    /// drives each run).
    pub fn join(
        log: &Store,
        name: Option<String>,
        lease: Duration,
        owns_run: bool,
    ) -> Result<Option<Self>> {
        let Some(pg) = log.postgres() else {
            return Ok(None);
        };
        let name = match name {
            Some(n) => {
                runlog_core::check_name("worker", &n)?;
                n
            }
            None => {
                let host = runlog_store::postgres::host_name();
                crate::paths::name_from(&format!("{host}.{}", std::process::id()))
            }
        };
        pg.join(&name, lease)?;
        let crew = Crew::new(name, pg.clone(), owns_run);
        Ok(Some(Self { pg, crew }))
    }

    /// The run's engine works as this worker (a worker's, with its jobs shared by all).
    pub fn enlist(&self, engine: &mut Engine<'_>, owns_run: bool) {
        engine.as_worker(self.crew.also_for(owns_run));
    }
}

impl Drop for Member {
    fn drop(&mut self) {
        let _ = self.pg.leave();
    }
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
    let jobs = super::run::jobs(Some(a.jobs))?;
    // The engines borrow the store for as long as the worker lives.
    let log: &'static Store = Box::leak(Box::new(ctx.open()?));
    let lease = Duration::from_millis(a.lease_ms.max(100));
    let Some(member) = Member::join(log, a.name, lease, false)? else {
        return Err(CliError::failed("the shared store did not open as one"));
    };
    eprintln!(
        "worker {} joined {} (jobs {}, lease {} ms)",
        member.crew.me,
        ctx.store_name(),
        a.jobs,
        a.lease_ms
    );
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| CliError::failed(format!("cannot start the async runtime: {e}")))?;
    let work = Work {
        log,
        ctx,
        member: &member,
        jobs,
        until_idle: a.until_idle,
    };
    rt.block_on(work.go())
}

struct Work<'a> {
    log: &'static Store,
    ctx: &'a Ctx,
    member: &'a Member,
    jobs: Option<u32>,
    until_idle: bool,
}

/// How often the worker looks for runs when nothing else happens.
const LOOK_EVERY: Duration = Duration::from_millis(500);

impl Work<'_> {
    async fn go(self) -> Result<Option<ExitKind>> {
        let mut signals = crate::runner::signals::Signals::new()?;
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
            if self.member.pg.lease_lost() || (idle && !self.member.pg.lease_held()?) {
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
                            Err(e) if fenced(&e) => failure = Some(CliError::from(e)),
                            Err(e) => eprintln!("run {run}: this worker stopped working on it: {e}"),
                        }
                    }
                }
                _ = signals.next() => {
                    // Each engine heard it too: each gives up what this worker holds.
                    while engines.join_next().await.is_some() {}
                    eprintln!("worker {} left", self.member.crew.me);
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
        for meta in self.log.runs()? {
            let head = meta.head.map_or(0, |h| h.seq);
            if active.contains(&meta.run) {
                running += 1;
                continue;
            }
            if looked.get(&meta.run) == Some(&head) {
                continue;
            }
            looked.insert(meta.run.clone(), head);
            let state = match Replay::new(self.log).head_state(&meta.run) {
                Ok(s) => s,
                Err(e) => {
                    eprintln!("run {}: cannot be read: {e}", meta.run);
                    continue;
                }
            };
            if state.status != RunStatus::Running {
                continue;
            }
            running += 1;
            let run = meta.run.clone();
            let (context, _) = workflow_context(&state, work_dir(&self.ctx.store, &run), self.log);
            if !context.dir.is_dir() {
                eprintln!(
                    "run {run}: its workflow file is not on this host at the path it was started from; left to other workers"
                );
                continue;
            };
            let opts = RunOptions {
                quiet: true,
                jobs: self.jobs,
            };
            let mut engine = Engine::new(self.log, &run, state, context, &opts);
            self.member.enlist(&mut engine, false);
            eprintln!("run {run}: working on it");
            active.insert(run.clone());
            engines.spawn(async move {
                let ended = engine.drive().await;
                (run, ended)
            });
        }
        Ok(running)
    }
}

fn fenced(e: &RunnerError) -> bool {
    matches!(
        e,
        RunnerError::Log(runlog_replay::ReplayError::Store(StoreError::Fenced { .. }))
    )
}

fn say_ended(run: &str, ended: &Ended) {
    let how = match &ended.state.status {
        RunStatus::Finished(outcome) => format!("finished ({outcome:?})").to_lowercase(),
        RunStatus::Interrupted if ended.interrupted => "left (signal)".into(),
        RunStatus::Interrupted => "interrupted".into(),
        other => format!("{other:?}").to_lowercase(),
    };
    eprintln!("run {run}: {how}");
}

/// A store handle's lease, for run and resume: `None` on a store directory.
pub(crate) fn join_for_run(log: &Store) -> Result<Option<Member>> {
    Member::join(log, None, lease_from_env(), true)
}
