//! Executing an experiment: its reruns, `--jobs` at a time, each a fork driven like `resume`
//! drives a run, until all have ended, its budget is reached or a signal stops it. Resuming is
//! the same walk: a rerun that ended is skipped, one cut off is driven on from its log.

use crate::ctx::Ctx;
use crate::error::{CliError, ExitKind, Result};
use crate::queries::experiment::report::{view, Progress};
use crate::queries::experiment::{define, plan, register, start_rerun, Asked, Planned};
use crate::signals::Signals;
use futures_util::stream::{FuturesUnordered, StreamExt};
use runlog_core::EventKind;
use runlog_replay::Replay;
use runlog_runner::lease::Member;
use runlog_runner::{Launcher, RunOptions};
use std::sync::Arc;
use std::time::Instant;

/// Records the experiment `asked` and executes it.
pub(super) fn define_and_run(ctx: &Ctx, asked: &Asked, jobs: u32) -> Result<Option<ExitKind>> {
    let launcher = Launcher::new(Arc::new(ctx.open()?), &ctx.store, &ctx.host);
    let x = define(launcher.log().as_ref(), asked, ctx.host.clock().now())?;
    errln!(
        "experiment {}: {} runs × {} variant(s){}: {} reruns",
        x.name,
        x.suite.len(),
        x.variants.len(),
        if x.repeat > 1 {
            format!(" × {} repeats, base included", x.repeat)
        } else {
            String::new()
        },
        plan(&x).len()
    );
    for s in &x.skipped {
        errln!("skipped: {} under {}: {}", s.run, s.variant, s.reason);
    }
    execute(ctx, &launcher, &x.name, jobs)
}

/// Goes on with experiment `name`, its budget first raised (or set) to `max_cost_usd`.
pub(super) fn resume(
    ctx: &Ctx,
    name: &str,
    jobs: u32,
    max_cost_usd: Option<f64>,
) -> Result<Option<ExitKind>> {
    let launcher = Launcher::new(Arc::new(ctx.open()?), &ctx.store, &ctx.host);
    let log = launcher.log().as_ref();
    let reg = register::read(log, name)?;
    if max_cost_usd.is_some() && max_cost_usd != reg.experiment.max_cost_usd {
        register::append(
            log,
            name,
            ctx.host.clock().now(),
            vec![EventKind::ExperimentBudgetSet { max_cost_usd }],
        )?;
    }
    execute(ctx, &launcher, name, jobs)
}

/// What the walk found each rerun to need.
enum Next {
    Ended,
    Drive,
    Start,
}

fn next_of(launcher: &Launcher, p: &Planned) -> Result<Next> {
    let log = launcher.log().as_ref();
    if log.head(&p.rerun)?.is_none() {
        return Ok(Next::Start);
    }
    let state = Replay::new(log).head_state(&p.rerun)?;
    if runlog_replay::control::experiment_of(log, &p.rerun)?.is_none() {
        return Err(CliError::failed(format!(
            "run {} is in the store but is not this experiment's rerun (it was cut off while it was being made, or the name was taken)",
            p.rerun
        ))
        .with_hint(format!("`runlog forget {}` removes it; resume then makes it again", p.rerun)));
    }
    Ok(match state.status {
        runlog_core::RunStatus::Finished(_) => Next::Ended,
        _ => Next::Drive,
    })
}

fn execute(ctx: &Ctx, launcher: &Launcher, name: &str, jobs: u32) -> Result<Option<ExitKind>> {
    let log = launcher.log().as_ref();
    let x = register::read(log, name)?.experiment;
    let mut todo = Vec::new();
    for p in plan(&x) {
        match next_of(launcher, &p)? {
            Next::Ended => {}
            Next::Drive => todo.push((p, false)),
            Next::Start => todo.push((p, true)),
        }
    }
    let rt = crate::runtime::for_command("experiment")?;
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let began = Instant::now();
    let mut spent = view(log, name)?.progress;
    let at_start = spent.ended;
    let mut budget_reached = false;
    let interrupted = rt.block_on(async {
        tokio::spawn(Signals::new()?.stop_on_any(stop));
        let mut pending = todo.into_iter();
        let mut running = FuturesUnordered::new();
        let mut interrupted = false;
        loop {
            while running.len() < jobs as usize && !interrupted && !*stopped.borrow() {
                if let Some(max) = x.max_cost_usd {
                    if spent.live_usd >= max {
                        budget_reached = true;
                        break;
                    }
                }
                let Some((p, fresh)) = pending.next() else {
                    break;
                };
                if fresh {
                    start_rerun(log, &x, &p, ctx.host.clock().now())?;
                }
                let (mut engine, _) = launcher.resume(&p.rerun, RunOptions::default())?;
                let member = Member::join(launcher.store(), None, ctx.host.lease(), &ctx.host)?;
                if let Some(m) = &member {
                    m.enlist(&mut engine, true);
                }
                let engine = engine.stop_when(stopped.clone());
                running.push(async move {
                    let ended = engine.drive().await;
                    drop(member);
                    (p, ended)
                });
            }
            let Some((p, ended)) = running.next().await else {
                break;
            };
            let ended = ended?;
            interrupted |= ended.interrupted;
            spent = view(log, name)?.progress;
            say_progress(name, &p, &spent, began, at_start);
        }
        Ok::<_, CliError>(interrupted)
    })?;
    let v = view(log, name)?;
    if interrupted {
        errln!(
            "experiment {name} stopped: {} of {} reruns ended; `runlog experiment resume {name}` goes on",
            v.progress.ended, v.progress.total
        );
        return Ok(Some(ExitKind::Interrupted));
    }
    if budget_reached && v.progress.ended < v.progress.total {
        errln!(
            "experiment {name} stopped at its budget: {} live of {}, {} of {} reruns ended",
            runlog_core::usage::usd(v.progress.live_usd),
            runlog_core::usage::usd(x.max_cost_usd.unwrap_or(0.0)),
            v.progress.ended,
            v.progress.total
        );
        errln!("hint: `runlog experiment resume {name} --max-cost-usd N` raises it and goes on");
        return Ok(Some(ExitKind::Failed));
    }
    if ctx.json {
        crate::render::json(&v)?;
    } else {
        super::report::print(&v)?;
    }
    Ok(None)
}

/// `experiment haiku-trial: 4/12 reruns · $0.0123 live · $0.0456 from the recording · ~1m20s left`.
fn say_progress(name: &str, p: &Planned, spent: &Progress, began: Instant, at_start: u32) {
    let done_now = spent.ended.saturating_sub(at_start).max(1);
    let left = spent.total.saturating_sub(spent.ended);
    let per = began.elapsed().as_secs_f64() / f64::from(done_now);
    let eta = (per * f64::from(left)).round() as u64;
    errln!(
        "experiment {name}: {}/{} reruns · {} live · {} from the recording · about {}m{:02}s left ({} under {} ended)",
        spent.ended,
        spent.total,
        runlog_core::usage::usd(spent.live_usd),
        runlog_core::usage::usd(spent.saved_usd),
        eta / 60,
        eta % 60,
        p.run,
        p.variant
    );
}
