//! `runlog approve RUN TASK`.

use super::control::{actor, record};
use super::Ctx;
use crate::error::Result;
use runlog_core::{CommandKind, TaskId};

/// Arguments of `runlog approve`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The run.
    run: String,
    /// The task.
    task: String,
    /// Who [default: $USER]
    #[arg(long)]
    by: Option<String>,
}

/// Overrules the gate: the task is done, the audit flags it.
pub fn run(a: Args, ctx: &Ctx) -> Result<()> {
    let kind = CommandKind::Approve {
        task: TaskId::from(a.task),
        by: actor(a.by),
    };
    record(ctx, &a.run, kind)
}
