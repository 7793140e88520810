//! What the commands that record a decision share: who is acting, and recording one command
//! through the one write path with the events it produced printed.

use super::Ctx;
use crate::error::Result;
use crate::render;
use crate::runner::clock::Clock;
use runlog_core::{Command, CommandKind, Principal, TaskId};
use runlog_replay::Session;

/// Who is acting: `--by`, else `$USER`, else "unknown".
pub fn actor(by: Option<String>) -> String {
    by.or_else(|| std::env::var("USER").ok())
        .unwrap_or_else(|| "unknown".into())
}

/// The user this process runs as: who a decision recorded from the command line is by,
/// whatever `--by` claims.
pub fn os_user() -> Principal {
    user(nix::unistd::getuid(), "os-user")
}

/// The principal of user `uid`, established `via` some means: the user's name, or `uid N` for
/// a user the system does not name.
pub fn user(uid: nix::unistd::Uid, via: &str) -> Principal {
    let name = nix::unistd::User::from_uid(uid)
        .ok()
        .flatten()
        .map_or_else(|| format!("uid {uid}"), |u| u.name);
    Principal {
        name,
        via: via.into(),
    }
}

/// Decides `kind` on the run's head and records it, with who this process runs as; prints
/// each event recorded.
pub fn record(ctx: &Ctx, run: &str, kind: CommandKind) -> Result<()> {
    let log = ctx.open()?;
    let mut session = Session::existing(&log, run)?;
    let command = Command::new(Clock::from_env().now(), kind).issued_by(os_user());
    let recorded = session.execute(command)??;
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
