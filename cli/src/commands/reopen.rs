//! `runlog reopen RUN TASK`.

use super::control::{actor, record};
use super::Ctx;
use crate::error::Result;
use runlog_core::{CommandKind, TaskId};

/// Arguments of `runlog reopen`.
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

/// Puts a failed task back to open.
pub fn run(a: Args, ctx: &Ctx) -> Result<()> {
    let kind = CommandKind::Reopen {
        task: TaskId::from(a.task),
        by: actor(a.by),
    };
    record(ctx, &a.run, kind)
}
