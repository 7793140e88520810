//! What the commands that record a decision share: who is acting, and recording one command
//! through the one write path with the events it produced printed.

use super::Ctx;
use crate::error::Result;
use crate::render;
use crate::runner::clock::Clock;
use runlog_core::{Command, CommandKind, TaskId};
use runlog_replay::Session;

/// Who is acting: `--by`, else `$USER`, else "unknown".
pub fn actor(by: Option<String>) -> String {
    by.or_else(|| std::env::var("USER").ok())
        .unwrap_or_else(|| "unknown".into())
}

/// Decides `kind` on the run's head and records it; prints each event recorded.
pub fn record(ctx: &Ctx, run: &str, kind: CommandKind) -> Result<()> {
    let log = ctx.open()?;
    let mut session = Session::existing(&log, run)?;
    let recorded = session.execute(Command::new(Clock::from_env().now(), kind))??;
    for (seq, e) in &recorded.events {
        if ctx.json {
            render::json(&serde_json::json!({"seq": seq, "event": e.kind}));
        } else {
            println!("{}", render::event::line(*seq, &e.kind));
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
