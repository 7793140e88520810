//! `runlog budget RUN [TASK] --max-cost-usd N --max-tokens N`: set or raise a budget on a live
//! or paused run, recorded with who did it; tasks the old budget stopped and the new one allows
//! are reopened, and `runlog resume` goes on.

use super::control::record;
use crate::ctx::Ctx;
use crate::error::{CliError, Result};
use crate::intake::actor;
use runlog_core::{Change, CommandKind, TaskId};

/// Arguments of `runlog budget`.
#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("change").required(true).multiple(true)))]
pub struct Args {
    /// The run.
    run: String,
    /// The task whose own budget to set [default: the run's].
    task: Option<String>,
    /// Dollars (reported or priced) the run or task may spend.
    #[arg(
        long,
        value_name = "USD",
        group = "change",
        conflicts_with = "no_max_cost_usd"
    )]
    max_cost_usd: Option<f64>,
    /// Input and output tokens the run or task may use.
    #[arg(
        long,
        value_name = "N",
        group = "change",
        conflicts_with = "no_max_tokens"
    )]
    max_tokens: Option<u64>,
    /// Remove the dollar bound.
    #[arg(long, group = "change")]
    no_max_cost_usd: bool,
    /// Remove the token bound.
    #[arg(long, group = "change")]
    no_max_tokens: bool,
    /// Who [default: $USER]
    #[arg(long)]
    by: Option<String>,
}

/// Records the budget change.
pub fn run(a: Args, ctx: &Ctx) -> Result<()> {
    if let Some(v) = a.max_cost_usd.filter(|v| !v.is_finite() || *v < 0.0) {
        return Err(CliError::input(format!(
            "--max-cost-usd {v}: a budget is a number of USD ≥ 0"
        )));
    }
    let kind = CommandKind::SetBudget {
        task: a.task.map(TaskId::from),
        max_cost_usd: Change::from_options(a.max_cost_usd, a.no_max_cost_usd),
        max_tokens: Change::from_options(a.max_tokens, a.no_max_tokens),
        by: actor(a.by),
    };
    record(ctx, &a.run, kind)
}
