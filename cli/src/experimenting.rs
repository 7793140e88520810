//! Executing an experiment (`runlog experiment run|resume`, `POST /v1/experiments`): its
//! reruns, `jobs` at a time on the caller's runtime, each a fork driven as `resume` drives a
//! run, until every one has ended, the budget is reached or `stop` is set. The same walk
//! resumes one: a rerun that ended is skipped, one cut off is driven on from its log.

use crate::queries::experiment::report::{spent_by, view, ExperimentView, Progress};
use crate::queries::experiment::{plan, register, start_rerun, ExperimentError, Planned};
use futures_util::stream::{FuturesUnordered, StreamExt};
use runlog_replay::{Replay, ReplayError};
use runlog_runner::lease::Member;
use runlog_runner::{Launcher, RunOptions, RunnerError};
use tokio::sync::watch;

/// Why an experiment stopped short of its end.
#[derive(Debug, thiserror::Error)]
pub enum ExecuteError {
    /// Reading or recording the experiment failed.
    #[error(transparent)]
    Experiment(#[from] ExperimentError),
    /// A rerun could not be driven.
    #[error(transparent)]
    Runner(#[from] RunnerError),
    /// A rerun could not be read.
    #[error(transparent)]
    Replay(#[from] ReplayError),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] runlog_store::StoreError),
    /// A rerun's name is held by a run that is not this experiment's rerun.
    #[error("run {rerun} is in the store but is not this experiment's rerun (it was cut off while it was being made, or the name was taken)")]
    Taken {
        /// The run.
        rerun: String,
    },
}

/// How an execution ended.
#[derive(Debug)]
pub struct Executed {
    /// `stop` was set (a signal, the server stopping).
    pub interrupted: bool,
    /// Reruns were left as the budget was reached.
    pub budget_reached: bool,
    /// The report now.
    pub view: ExperimentView,
}

/// What the walk found a rerun to need.
enum Next {
    Ended,
    Drive,
    Start,
}

fn next_of(launcher: &Launcher, p: &Planned) -> Result<Next, ExecuteError> {
    let log = launcher.log().as_ref();
    if log.head(&p.rerun)?.is_none() {
        return Ok(Next::Start);
    }
    if runlog_replay::control::experiment_of(log, &p.rerun)?.is_none() {
        return Err(ExecuteError::Taken {
            rerun: p.rerun.clone(),
        });
    }
    Ok(match Replay::new(log).head_state(&p.rerun)?.status {
        runlog_core::RunStatus::Finished(_) => Next::Ended,
        _ => Next::Drive,
    })
}

/// Executes experiment `name`'s reruns not yet ended, `jobs` at a time; `said` hears of each
/// rerun that ends, with the progress then. Must be awaited within a tokio runtime.
pub async fn execute(
    launcher: &Launcher,
    host: &runlog_runner::Host,
    name: &str,
    jobs: u32,
    stop: watch::Receiver<bool>,
    said: &mut (dyn FnMut(&Planned, &Progress) + Send),
) -> Result<Executed, ExecuteError> {
    let log = launcher.log().as_ref();
    let x = register::read(log, name)?.experiment;
    let mut todo = Vec::new();
    for p in plan(&x) {
        if log.head(p.run.as_str())?.is_none() {
            // Its suite run was forgotten since: the report names it gone.
            continue;
        }
        match next_of(launcher, &p)? {
            Next::Ended => {}
            Next::Drive => todo.push((p, false)),
            Next::Start => todo.push((p, true)),
        }
    }
    // Read whole once; then kept up rerun by rerun (reading every rerun after each is quadratic).
    let mut progress = view(log, name)?.progress;
    let mut budget_reached = false;
    let mut interrupted = false;
    // A rerun that could not be driven: no other starts, those under way are awaited.
    let mut failed: Option<ExecuteError> = None;
    // On the shared store this process is one worker among many, for every rerun it drives.
    let member = Member::join(launcher.store(), None, host.lease(), host)?;
    let mut pending = todo.into_iter();
    let mut running = FuturesUnordered::new();
    loop {
        while running.len() < jobs.max(1) as usize
            && !interrupted
            && failed.is_none()
            && !*stop.borrow()
        {
            if x.max_cost_usd.is_some_and(|max| progress.live_usd >= max) {
                budget_reached = true;
                break;
            }
            let Some((p, fresh)) = pending.next() else {
                break;
            };
            let prepared = (|| -> Result<_, ExecuteError> {
                // A rerun cut off before: what it spent then is in the progress already.
                let before = if fresh {
                    start_rerun(log, &x, &p, host.clock().now())?;
                    (0.0, 0.0)
                } else {
                    spent_by(log, &x, &p)?
                };
                Ok((before, launcher.resume(&p.rerun, RunOptions::default())?.0))
            })();
            let (before, mut engine) = match prepared {
                Ok(prepared) => prepared,
                Err(e) => {
                    failed = Some(e);
                    break;
                }
            };
            if let Some(m) = &member {
                m.enlist(&mut engine, true);
            }
            let engine = engine.stop_when(stop.clone());
            running.push(async move {
                let ended = engine.drive().await;
                (p, before, ended)
            });
        }
        let Some((p, before, ended)) = running.next().await else {
            break;
        };
        let ended = match ended {
            Ok(ended) => ended,
            Err(e) => {
                failed.get_or_insert(e.into());
                continue;
            }
        };
        interrupted |= ended.interrupted;
        let (live, saved) = spent_by(log, &x, &p)?;
        progress.live_usd += live - before.0;
        progress.saved_usd += saved - before.1;
        if matches!(ended.state.status, runlog_core::RunStatus::Finished(_)) {
            progress.ended += 1;
        }
        said(&p, &progress);
    }
    interrupted |= *stop.borrow();
    drop(member);
    if let Some(e) = failed {
        return Err(e);
    }
    Ok(Executed {
        interrupted,
        budget_reached: budget_reached && pending.next().is_some(),
        view: view(log, name)?,
    })
}
