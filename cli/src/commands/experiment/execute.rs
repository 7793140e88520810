//! `runlog experiment run` and `resume`: the experiment defined (or its budget raised), then
//! executed on this process's runtime (`crate::experimenting`), stopped by a signal, with a
//! progress line after each rerun and the report at the end.

use crate::ctx::Ctx;
use crate::error::{CliError, ExitKind, Result};
use crate::queries::experiment::report::{view, Progress};
use crate::queries::experiment::{define, plan, register, Asked, Planned};
use crate::signals::Signals;
use runlog_core::EventKind;
use runlog_runner::Launcher;
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

fn execute(ctx: &Ctx, launcher: &Launcher, name: &str, jobs: u32) -> Result<Option<ExitKind>> {
    let rt = crate::runtime::for_command("experiment")?;
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let began = Instant::now();
    let at_start = view(launcher.log().as_ref(), name)?.progress.ended;
    let mut said = |p: &Planned, spent: &Progress| say_progress(name, p, spent, began, at_start);
    let done = rt.block_on(async {
        tokio::spawn(Signals::new()?.stop_on_any(stop));
        crate::experimenting::execute(launcher, &ctx.host, name, jobs, stopped, &mut said)
            .await
            .map_err(CliError::from)
    })?;
    let v = done.view;
    if done.interrupted {
        errln!(
            "experiment {name} stopped: {} of {} reruns ended; `runlog experiment resume {name}` goes on",
            v.progress.ended, v.progress.total
        );
        return Ok(Some(ExitKind::Interrupted));
    }
    if done.budget_reached {
        errln!(
            "experiment {name} stopped at its budget: {} live of {}, {} of {} reruns ended",
            runlog_core::usage::usd(v.progress.live_usd),
            runlog_core::usage::usd(v.max_cost_usd.unwrap_or(0.0)),
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

/// An execution that failed, in the command line's words.
impl From<crate::experimenting::ExecuteError> for CliError {
    fn from(e: crate::experimenting::ExecuteError) -> Self {
        use crate::experimenting::ExecuteError as E;
        match e {
            E::Experiment(x) => x.into(),
            E::Runner(r) => r.into(),
            E::Replay(r) => r.into(),
            E::Store(s) => s.into(),
            E::Taken { ref rerun } => {
                let hint =
                    format!("`runlog forget {rerun}` removes it; resume then makes it again");
                CliError::wrap(ExitKind::Failed, Some(hint), e)
            }
        }
    }
}
