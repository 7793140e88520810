//! `runlog reject RUN TASK [--reopen]`.

use super::control::record;
use crate::ctx::Ctx;
use crate::error::Result;
use crate::intake::actor;
use runlog_core::{CommandKind, TaskId};

/// Arguments of `runlog reject`.
#[derive(Debug, clap::Args)]
pub struct Args {
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
}

/// Fails a pending-eval task, or opens it again.
pub fn run(a: Args, ctx: &Ctx) -> Result<()> {
    let kind = CommandKind::Reject {
        task: TaskId::from(a.task),
        by: actor(a.by),
        reopen: a.reopen,
        reason: a.reason,
    };
    record(ctx, &a.run, kind)
}
