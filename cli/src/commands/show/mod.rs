//! `runlog show RUN TASK`: one task's whole story; `--diff`, what it changed; `--calls`, its
//! model calls.

mod calls;

use crate::ctx::Ctx;
use crate::error::{CliError, Result};
use crate::render;
use crate::render::{color, status_word};
use runlog_core::projections::Board;
use runlog_core::{Event, EventKind, TaskId};
use runlog_replay::Replay;
use runlog_store::EventLog;
use serde::Serialize;

/// Arguments of `runlog show`.
#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("detail").args(["diff", "calls"])))]
pub struct Args {
    /// The run.
    run: String,
    /// The task.
    task: String,
    /// What an attempt changed in the task's worktree (a run in a git workspace): its commit,
    /// files and patch.
    #[arg(long)]
    diff: bool,
    /// Each model call the task's commands made through the gateway: model, tokens, cost,
    /// time, what was new in its request and what the model answered.
    #[arg(long)]
    calls: bool,
    /// With --diff: this attempt's changes alone [default: everything the task changed, from
    /// where it started to its last commit (what its merge brought, once merged)]. With
    /// --calls: this attempt's calls alone [default: every attempt's].
    #[arg(long, value_name = "N", requires = "detail")]
    attempt: Option<u32>,
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
    let head = state.seq;
    let events = replay.events(run, 1, head)?;
    let story = crate::queries::story::story_of(&events, &id);
    if a.calls {
        return calls::print(&log, run, task, &story, a.attempt, ctx.json);
    }
    if a.diff {
        if a.attempt.is_none() {
            if let Some(whole) = whole_task(&state, &id, &story) {
                return print_whole(run, task, &whole, ctx.json);
            }
        }
        return diff(&log, run, task, &story, a.attempt, ctx.json);
    }
    if ctx.json {
        return render::json(&crate::queries::task::view(
            &log, run, &state, &t.spec, &story,
        ));
    }
    // Only the story reads the board: --calls and --diff never make it.
    let board = Board::of(&state);
    let c = color();
    outln!(
        "task {task} of run {run}: {}",
        board
            .row(&id)
            .map(|r| status_word(r, c))
            .unwrap_or_default()
    );
    outln!("  {}", t.spec.description);
    if let Some(run_cmd) = &t.spec.run {
        outln!("  run: {run_cmd}");
    }
    if let Some(cmd) = &t.spec.test {
        let found_by = story.iter().find_map(|(_, e)| match &e.kind {
            EventKind::TestsDiscovered { convention, .. } => {
                Some(format!(" (found by the convention {convention})"))
            }
            _ => None,
        });
        outln!("  test: {cmd}{}", found_by.unwrap_or_default());
    }
    if t.spec.test.is_none() && t.sub_project.is_none() && !state.is_group(&id) {
        outln!("  test: none (untested)");
    }
    if let Some(cmd) = &t.spec.eval {
        outln!("  eval: {cmd}");
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
        outln!("  sub-project: {}{child}", sub.workflow);
    }
    outln!(
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
        outln!(
            "  agent {agent} in worktree {}",
            t.worktree.clone().unwrap_or_default()
        );
    }
    print_cost(&state, t)?;
    outln!("history:");
    for (seq, e) in &story {
        outln!("{}", render::event::line(*seq, &e.kind));
    }
    Ok(())
}

/// `--diff`: the changes an attempt recorded, and its patch.
fn diff(
    log: &dyn EventLog,
    run: &str,
    task: &str,
    story: &[(u64, Event)],
    attempt: Option<u32>,
    json: bool,
) -> Result<()> {
    let recorded: Vec<&EventKind> = story
        .iter()
        .map(|(_, e)| &e.kind)
        .filter(|k| matches!(k, EventKind::ChangesRecorded { .. }))
        .collect();
    let found = recorded.iter().rev().find(|k| match (k, attempt) {
        (EventKind::ChangesRecorded { attempt: n, .. }, Some(want)) => *n == want,
        _ => true,
    });
    let Some(EventKind::ChangesRecorded {
        attempt,
        commit,
        parent,
        files,
        insertions,
        deletions,
        patch,
        blob,
        patch_bytes,
        ..
    }) = found
    else {
        let hint = if recorded.is_empty() {
            "changes are recorded for runs in a git workspace (a workflow in a git repository)"
                .to_owned()
        } else {
            let attempts: Vec<String> = recorded
                .iter()
                .filter_map(|k| match k {
                    EventKind::ChangesRecorded { attempt, .. } => Some(attempt.to_string()),
                    _ => None,
                })
                .collect();
            format!("attempts with changes: {}", attempts.join(", "))
        };
        return Err(CliError::input(format!(
            "task {task} of run {run} has no recorded changes{}",
            attempt
                .map(|n| format!(" for attempt {n}"))
                .unwrap_or_default()
        ))
        .with_hint(hint));
    };
    // The whole patch from the blob area when it was too large for the event (and the blob
    // is in this store: an imported run has the events' part only).
    let whole = match blob {
        Some(hash) => log
            .get_blob(&hash.0)?
            .map(|b| String::from_utf8_lossy(&b).into_owned()),
        None => None,
    };
    let cut = whole.is_none() && (patch.len() as u64) < *patch_bytes;
    let text = whole.unwrap_or_else(|| patch.clone());
    if json {
        render::json(&serde_json::json!({
            "run": run, "task": task, "attempt": attempt, "commit": commit, "parent": parent,
            "files": files, "insertions": insertions, "deletions": deletions, "patch": text,
        }))?;
        return Ok(());
    }
    outln!(
        "task {task} attempt {attempt}: commit {} on {}, {} file{} (+{insertions} -{deletions})",
        render::event::short(commit),
        render::event::short(parent),
        files.len(),
        if files.len() == 1 { "" } else { "s" },
    );
    out!("{text}");
    if cut {
        errln!(
            "note: the patch has {patch_bytes} bytes; the log holds its first {} (the rest was in the blob area of the store that ran it)",
            patch.len()
        );
    }
    Ok(())
}

/// Everything a task changed over its attempts, from its repository.
#[derive(Debug, Serialize)]
struct Whole {
    attempts: Vec<u32>,
    /// Where it started (the integration branch's tip, or what its merge was made on).
    from: String,
    /// Its last commit, or its merge.
    to: String,
    merged: bool,
    files: Vec<String>,
    insertions: u64,
    deletions: u64,
    patch: String,
}

/// A task with more than one attempt's changes: all it changed, from its repository (`None`
/// when one attempt's record says it all, or the repository is not here: then the last
/// attempt's recorded patch is what there is).
fn whole_task(state: &runlog_core::RunState, id: &TaskId, story: &[(u64, Event)]) -> Option<Whole> {
    let repo = std::path::PathBuf::from(&state.workspace.as_ref()?.repo);
    let mut attempts = Vec::new();
    let (mut first, mut last) = (None, None);
    for (_, e) in story {
        if let EventKind::ChangesRecorded {
            attempt,
            commit,
            parent,
            ..
        } = &e.kind
        {
            attempts.push(*attempt);
            first.get_or_insert_with(|| parent.clone());
            last = Some(commit.clone());
        }
    }
    if attempts.len() < 2 {
        return None;
    }
    let merge = state.task(id)?.code.merged.clone();
    let merged = merge.is_some();
    let git = runlog_runner::git::Git::at(&repo);
    let (from, to) = match merge {
        // What the merge brought into the integration branch: the task's work, conflicts
        // resolved, without what it merged in from others.
        Some(m) => (git.parents(&m).first()?.clone(), m),
        None => (first?, last?),
    };
    let (files, insertions, deletions) = git.numstat(&from, &to).ok()?;
    let patch = git.patch(&from, &to).ok()?;
    Some(Whole {
        attempts,
        merged,
        from,
        to,
        files,
        insertions,
        deletions,
        patch,
    })
}

fn print_whole(run: &str, task: &str, w: &Whole, json: bool) -> Result<()> {
    if json {
        return render::json(&serde_json::json!({
            "run": run, "task": task, "attempt": null, "attempts": w.attempts, "from": w.from,
            "to": w.to, "merged": w.merged, "files": w.files, "insertions": w.insertions,
            "deletions": w.deletions, "patch": w.patch,
        }));
    }
    let attempts: Vec<String> = w.attempts.iter().map(ToString::to_string).collect();
    outln!(
        "task {task} in all (attempts {}){}: {} on {}, {} file{} (+{} -{}); one attempt: --attempt N",
        attempts.join(", "),
        if w.merged { ", as merged" } else { "" },
        render::event::short(&w.to),
        render::event::short(&w.from),
        w.files.len(),
        if w.files.len() == 1 { "" } else { "s" },
        w.insertions,
        w.deletions
    );
    out!("{}", w.patch);
    Ok(())
}

/// The task's cost, per attempt, and its budget.
fn print_cost(state: &runlog_core::RunState, t: &runlog_core::TaskState) -> Result<()> {
    let attempts =
        runlog_core::usage::spend_by(state.usage.iter().filter(|r| r.task == t.spec.id), |r| {
            r.attempt
        });
    if attempts.is_empty() && t.budget.is_unbounded() {
        return Ok(());
    }
    let budget = if t.budget.is_unbounded() {
        String::new()
    } else {
        format!("; budget {}", render::event::limits_words(&t.budget))
    };
    outln!("  cost {}{budget}", render::spend(&t.spend));
    for (n, s) in attempts {
        outln!("    attempt {n}: {}", render::spend(&s));
    }
    Ok(())
}
