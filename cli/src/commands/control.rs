//! What the commands that record a decision share: who is acting, and recording one command
//! through the one write path with the events it produced printed.

use crate::ctx::Ctx;
use crate::error::Result;
use crate::intake::{actor, os_user};
use crate::render;
use runlog_core::{Command, CommandKind, TaskId};
use runlog_replay::Session;

/// Decides `kind` on the run's head and records it, with who this process runs as; prints
/// each event recorded.
pub fn record(ctx: &Ctx, run: &str, kind: CommandKind) -> Result<()> {
    let log = ctx.open()?;
    let mut session = Session::existing(&log, run)?;
    let command = crate::intake::redacted(
        Command::new(ctx.host.clock().now(), kind),
        ctx.host.intake_redactor(),
    )
    .map_err(|why| {
        crate::error::CliError::input(format!("not recorded: {why}"))
            .with_hint("keep secrets out of ids and names")
    })?
    .issued_by(os_user());
    let recorded = session.execute(command)??;
    for (seq, e) in &recorded.events {
        if ctx.json {
            render::json(&serde_json::json!({"seq": seq, "event": e.kind}))?;
        } else {
            outln!("{}", render::event::line(*seq, &e.kind));
        }
    }
    Ok(())
}

/// The arguments of a person's decision about one task (`approve`, `reopen`).
#[derive(Debug, clap::Args)]
pub struct TaskDecision {
    /// The run.
    run: String,
    /// The task.
    task: String,
    /// Who [default: $USER]
    #[arg(long)]
    by: Option<String>,
}

impl TaskDecision {
    /// Records the command `make` builds from the task and who decided.
    pub fn record(self, ctx: &Ctx, make: impl FnOnce(TaskId, String) -> CommandKind) -> Result<()> {
        let kind = make(TaskId::from(self.task), actor(self.by));
        record(ctx, &self.run, kind)
    }
}
