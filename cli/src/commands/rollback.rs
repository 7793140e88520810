//! `runlog rollback RUN --to SEQ --reason TEXT`.

use super::control::record;
use crate::ctx::Ctx;
use crate::error::Result;
use crate::intake::actor;
use runlog_core::CommandKind;

/// Arguments of `runlog rollback`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The run.
    run: String,
    /// The seq whose state to return to.
    #[arg(long, value_name = "SEQ")]
    to: u64,
    /// Why (kept in the log).
    #[arg(long)]
    reason: String,
    /// Who [default: $USER]
    #[arg(long)]
    by: Option<String>,
}

/// Appends a rollback: the state after it is the state after `--to`; nothing is deleted.
pub fn run(a: Args, ctx: &Ctx) -> Result<()> {
    let kind = CommandKind::Rollback {
        to_seq: a.to,
        reason: a.reason,
        by: actor(a.by),
    };
    let before = runlog_replay::Replay::new(&ctx.open()?).head_state(&a.run)?;
    record(ctx, &a.run, kind)?;
    let log = std::sync::Arc::new(ctx.open()?);
    let after = runlog_replay::Replay::new(log.as_ref()).head_state(&a.run)?;
    for note in super::children::after_rollback(&before, &after) {
        errln!("note: {note}");
    }
    // A runner executing the run moves its branches itself; otherwise they move here.
    let launcher = runlog_runner::Launcher::new(log, &ctx.store, &ctx.host);
    if !runlog_runner::marker::is_held(&launcher.layout(&a.run).marker()) {
        if let Some(moved) = launcher.follow_rollback(&a.run, &after)? {
            errln!("note: {moved}");
        }
    }
    Ok(())
}
