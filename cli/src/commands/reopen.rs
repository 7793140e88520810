//! `runlog reopen RUN TASK`.

use super::control::TaskDecision;
use crate::ctx::Ctx;
use crate::error::Result;
use runlog_core::CommandKind;

/// Arguments of `runlog reopen`.
pub type Args = TaskDecision;

/// Puts a failed task back to open.
pub fn run(a: Args, ctx: &Ctx) -> Result<()> {
    a.record(ctx, |task, by| CommandKind::Reopen { task, by })
}
