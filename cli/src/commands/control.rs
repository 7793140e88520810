//! What the commands that record a decision share: who is acting, and recording one command
//! through the one write path with the events it produced printed.

use super::Ctx;
use crate::error::Result;
use crate::render;
use crate::runner::clock::Clock;
use runlog_core::{Command, CommandKind};
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
