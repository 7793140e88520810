//! `runlog cost RUN… [--by task|model|stage|attempt|call]`: what a run's agents, tests, evaluators
//! and replanner used and cost, beside its budgets; several runs side by side.

use crate::ctx::Ctx;
use crate::error::Result;
use crate::queries::cost::{parse_by, CostView};
use crate::render;
use runlog_core::projections::CostBy;
use runlog_replay::Replay;

/// Arguments of `runlog cost`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The runs (several: compared side by side).
    #[arg(required = true)]
    runs: Vec<String>,
    /// One row per task, model, stage (agent, tests, evaluator, replanner), attempt, or model
    /// call (each call through the gateway; where a command reported its own usage, each report).
    #[arg(long, default_value = "task", value_parser = parse_by)]
    by: CostBy,
    /// The cost as it was after this seq (one run).
    #[arg(long, value_name = "SEQ")]
    at: Option<u64>,
}

/// Prints each run's cost; several runs end with a comparison.
pub fn run(a: Args, ctx: &Ctx) -> Result<()> {
    let log = ctx.open()?;
    let replay = Replay::new(&log);
    let mut views = Vec::new();
    for run in &a.runs {
        let state = replay.state_at_or_head(run, a.at)?;
        views.push(CostView::of(run, &state, a.by));
    }
    if ctx.json {
        for v in &views {
            render::json(v)?;
        }
        return Ok(());
    }
    for v in &views {
        print(v)?;
    }
    if views.len() > 1 {
        outln!("compared");
        outln!(
            "{:<28} {:>12} {:>12} {:>9}",
            "RUN",
            "COST",
            "TOKENS",
            "UNPRICED"
        );
        for v in &views {
            let t = &v.report.total;
            outln!(
                "{:<28} {:>12} {:>12} {:>9}",
                v.run,
                runlog_core::usage::usd(t.cost_usd),
                t.tokens.total(),
                t.unpriced
            );
        }
    }
    Ok(())
}

fn print(v: &CostView) -> Result<()> {
    let r = &v.report;
    outln!(
        "cost of {} at seq {}: {}",
        v.run,
        v.seq,
        render::spend(&r.total)
    );
    if r.rows.is_empty() {
        outln!("  no usage recorded (commands report it: see the workflow reference)");
    } else {
        outln!(
            "  {:<28} {:>12} {:>10} {:>10} {:>10} {:>10}",
            r.by.name().to_uppercase(),
            "COST",
            "INPUT",
            "OUTPUT",
            "CACHED",
            "REASONING"
        );
        for row in &r.rows {
            let t = &row.spend.tokens;
            outln!(
                "  {:<28} {:>12} {:>10} {:>10} {:>10} {:>10}",
                row.key,
                render::cost_cell(&row.spend),
                t.input,
                t.output,
                t.cache_read + t.cache_write,
                t.reasoning
            );
        }
    }
    if r.total.unpriced > 0 {
        outln!(
            "  {} usage records have no price: give their models a [prices.\"MODEL\"] table, or report cost_usd",
            r.total.unpriced
        );
    }
    for b in &r.budgets {
        let whose = b
            .task
            .as_ref()
            .map_or_else(|| "run".to_owned(), |t| format!("task {t}"));
        let left: Vec<String> = b
            .usd_left
            .map(runlog_core::usage::usd)
            .into_iter()
            .chain(b.tokens_left.map(|n| format!("{n} tokens")))
            .collect();
        let held = match b.in_flight {
            0 => String::new(),
            n => format!(
                "; held by {n} call{} in flight: {}, {} tokens at most",
                if n == 1 { "" } else { "s" },
                runlog_core::usage::usd(b.held_usd),
                b.held_tokens
            ),
        };
        outln!(
            "  budget of the {whose}: {}; left {}{held}",
            render::event::limits_words(&b.limits),
            left.join(", ")
        );
    }
    Ok(())
}
