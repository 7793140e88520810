//! `runlog approve RUN TASK`.

use super::control::TaskDecision;
use crate::ctx::Ctx;
use crate::error::Result;
use runlog_core::CommandKind;

/// Arguments of `runlog approve`.
pub type Args = TaskDecision;

/// Overrules the gate: the task is done, the audit flags it.
pub fn run(a: Args, ctx: &Ctx) -> Result<()> {
    a.record(ctx, |task, by| CommandKind::Approve { task, by })
}
