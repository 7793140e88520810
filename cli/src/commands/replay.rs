//! `runlog replay RUN [--to SEQ] [--step]`: each event and what it changed.

use crate::ctx::Ctx;
use crate::error::Result;
use crate::render;
use runlog_core::RunState;
use runlog_replay::diff::{diff, Side};
use runlog_replay::Replay;
use std::io::IsTerminal;

/// Arguments of `runlog replay`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The run.
    run: String,
    /// Stop after this seq.
    #[arg(long)]
    to: Option<u64>,
    /// Wait for Enter after each event (on a terminal).
    #[arg(long)]
    step: bool,
}

/// Folds the run event by event, printing what each changed.
pub fn run(a: Args, ctx: &Ctx) -> Result<()> {
    let run = a.run.as_str();
    let log = ctx.open()?;
    let replay = Replay::new(&log);
    let head = replay.head_seq(run)?;
    let to = a.to.unwrap_or(head);
    if to > head {
        return Err(runlog_replay::ReplayError::SeqPastHead {
            run: run.into(),
            seq: to,
            head,
        }
        .into());
    }
    let mut p = runlog_core::projections::Projections::default();
    let interactive = a.step && std::io::stdin().is_terminal();
    for (seq, e) in replay.events(run, 1, to)? {
        let before: RunState = p.state.clone();
        let before_stack = p.stack.clone();
        p.observe(&e, &mut |base| match base {
            runlog_core::fold::Base::This(s) => replay.state_at(run, s).ok(),
            runlog_core::fold::Base::Parent(r, s) => replay.state_at(r.as_str(), s).ok(),
        });
        let changes = diff(
            Side {
                state: &before,
                stack: &before_stack,
            },
            Side {
                state: &p.state,
                stack: &p.stack,
            },
        );
        if ctx.json {
            render::json(&serde_json::json!({"seq": seq, "event": e.kind, "changes": changes}))?;
            continue;
        }
        outln!("{}", render::event::line(seq, &e.kind));
        for t in &changes.tasks {
            outln!(
                "          {}: {}",
                t.task,
                render::task_changes(t).join(", ")
            );
        }
        if interactive {
            eprint!("  [enter: next, q: quit] ");
            let mut line = String::new();
            if std::io::stdin().read_line(&mut line).is_err() || line.trim() == "q" {
                break;
            }
        }
    }
    Ok(())
}
