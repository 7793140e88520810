//! `runlog show RUN TASK`: one task's whole story.

use crate::ctx::Ctx;
use crate::error::{CliError, Result};
use crate::render;
use crate::render::{color, status_word};
use runlog_core::projections::Board;
use runlog_core::{Event, EventKind, TaskId};
use runlog_replay::Replay;
use serde::Serialize;

/// Arguments of `runlog show`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The run.
    run: String,
    /// The task.
    task: String,
}

/// Prints the task's spec, counters and every event about it.
pub fn run(a: Args, ctx: &Ctx) -> Result<()> {
    let (run, task) = (a.run.as_str(), a.task.as_str());
    let log = ctx.open()?;
    let replay = Replay::new(&log);
    let state = replay.head_state(run)?;
    let id = TaskId::from(task);
    let Some(t) = state.task(&id) else {
        let known: Vec<&str> = state.order.iter().map(TaskId::as_str).collect();
        return Err(CliError::input(format!("run {run} has no task {task}"))
            .with_hint(format!("tasks: {}", known.join(", "))));
    };
    let board = Board::of(&state);
    let head = state.seq;
    let events = replay.events(run, 1, head)?;
    // The task's events, each with the `Attributed` event that says who recorded it.
    let story: Vec<(u64, Event)> = events
        .iter()
        .enumerate()
        .filter(|(i, (_, e))| match &e.kind {
            EventKind::Attributed { .. } => events
                .get(i + 1)
                .is_some_and(|(_, next)| next.kind.task() == Some(&id)),
            kind => kind.task() == Some(&id),
        })
        .map(|(_, e)| e.clone())
        .collect();
    if ctx.json {
        #[derive(Serialize)]
        struct Show<'a> {
            run: &'a str,
            task: Option<&'a runlog_core::projections::board::BoardRow>,
            spec: &'a runlog_core::TaskSpec,
            events: Vec<serde_json::Value>,
        }
        let events = story
            .iter()
            .map(|(seq, e)| serde_json::json!({"seq": seq, "at": e.at, "event": e.kind}))
            .collect();
        render::json(&Show {
            run,
            task: board.row(&id),
            spec: &t.spec,
            events,
        });
        return Ok(());
    }
    let c = color();
    println!(
        "task {task} of run {run}: {}",
        board
            .row(&id)
            .map(|r| status_word(r, c))
            .unwrap_or_default()
    );
    println!("  {}", t.spec.description);
    if let Some(run_cmd) = &t.spec.run {
        println!("  run: {run_cmd}");
    }
    if let Some(cmd) = &t.spec.test {
        let found_by = story.iter().find_map(|(_, e)| match &e.kind {
            EventKind::TestsDiscovered { convention, .. } => {
                Some(format!(" (found by the convention {convention})"))
            }
            _ => None,
        });
        println!("  test: {cmd}{}", found_by.unwrap_or_default());
    }
    if let Some(cmd) = &t.spec.eval {
        println!("  eval: {cmd}");
    }
    if let Some(sub) = &t.sub_project {
        let child = match &sub.child {
            Some(child) => {
                let status = replay
                    .head_state(child.as_str())
                    .map(|s| match s.status {
                        runlog_core::RunStatus::Finished(o) => format!("finished, {}", o.name()),
                        other => other.name().to_owned(),
                    })
                    .unwrap_or_else(|e| format!("unreadable: {e}"));
                format!(", child run {child} ({status}; `runlog show {child} TASK`)")
            }
            None => ", no child run yet".into(),
        };
        println!("  sub-project: {}{child}", sub.workflow);
    }
    println!(
        "  attempts {}, rescues {}, test failures {}, checkpoints {}/{}{}",
        t.attempt,
        t.rescues,
        t.test_failures,
        t.checkpoints.len(),
        t.spec.checkpoints.len(),
        t.class
            .map(|c| format!(", class {}", c.name()))
            .unwrap_or_default()
    );
    if let Some(agent) = &t.agent {
        println!(
            "  agent {agent} in worktree {}",
            t.worktree.clone().unwrap_or_default()
        );
    }
    println!("history:");
    for (seq, e) in &story {
        println!("{}", render::event::line(*seq, &e.kind));
    }
    Ok(())
}
