//! `runlog stages RUN`: stage health and circuits.

use crate::ctx::Ctx;
use crate::error::Result;
use crate::render;
use runlog_core::projections::health;
use runlog_replay::Replay;

/// Arguments of `runlog stages`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The run.
    run: String,
}

/// Prints one row per stage.
pub fn run(a: Args, ctx: &Ctx) -> Result<()> {
    let log = ctx.open()?;
    let state = Replay::new(&log).head_state(&a.run)?;
    if ctx.json {
        return render::json(&crate::queries::stages::StagesView::of(&a.run, &state));
    }
    let rows = health::stage_health(&state);
    outln!(
        "{:<20} {:>5} {:>5} {:>5} {:>10} {:>7}  circuit",
        "STAGE",
        "RUNS",
        "OK",
        "FAIL",
        "TOTAL MS",
        "IN ROW"
    );
    for r in rows {
        let circuit = match r.circuit {
            runlog_core::Circuit::Closed => "closed",
            runlog_core::Circuit::Open => "OPEN",
        };
        outln!(
            "{:<20} {:>5} {:>5} {:>5} {:>10} {:>7}  {circuit}{}",
            r.stage.as_str(),
            r.executions,
            r.completions,
            r.failures,
            r.total_duration_ms,
            r.consecutive_failures,
            if r.strategy_overridden {
                " (strategy set at run time)"
            } else {
                ""
            }
        );
    }
    Ok(())
}
