//! The closing summary of `run` and `resume`: how the run ended, its counts, what to do next
//! and how to inspect it. Written with errors ignored: after a hangup the terminal is gone and
//! the run is already recorded.

use super::join;
use runlog_core::projections::RunSummary;
use runlog_core::{RunOutcome, RunState, RunStatus, TaskStatus};
use std::io::Write;
use std::time::Duration;

/// How a run ended, for people and scripts.
struct Ending {
    word: String,
    detail: String,
    /// Commands that move a run stopped for a person on.
    next: Vec<String>,
}

fn ending(state: &RunState, run: &str, cmd: &str) -> Ending {
    let (word, detail) = match &state.status {
        RunStatus::Finished(RunOutcome::Succeeded) => ("succeeded".to_owned(), String::new()),
        RunStatus::Finished(RunOutcome::Failed { failed, blocked }) => (
            "failed".to_owned(),
            format!(
                "failed: {}{}",
                join(failed),
                if blocked.is_empty() {
                    String::new()
                } else {
                    format!("; blocked: {}", join(blocked))
                }
            ),
        ),
        RunStatus::Finished(RunOutcome::Paused { reason }) => ("paused".to_owned(), reason.clone()),
        RunStatus::Interrupted => (
            "interrupted".to_owned(),
            format!("resume it with `{cmd} resume {run}`"),
        ),
        other => (other.name().to_owned(), String::new()),
    };
    let mut next = Vec::new();
    if matches!(state.status, RunStatus::Finished(RunOutcome::Paused { .. })) {
        for t in state.tasks_in_order() {
            if t.status == TaskStatus::PendingEval {
                let id = &t.spec.id;
                if let (Some(files), Some(w)) = (&t.code.conflict, &state.workspace) {
                    next.push(format!(
                        "{id}'s merge conflicts in {}: in its worktree, `git merge {}`, resolve, `git commit`",
                        join(files),
                        w.branch
                    ));
                }
                next.push(format!(
                    "{cmd} approve {run} {id}   or   {cmd} reject {run} {id}"
                ));
            }
        }
        if state.replan.is_some() {
            next.push(format!("{cmd} replan {run} --file PLAN.json"));
        }
        if !next.is_empty() {
            next.push(format!("then: {cmd} resume {run}"));
        }
    }
    Ending { word, detail, next }
}

/// "2 done, 1 open": every status some task has, in the order tasks move through them.
fn task_counts(s: &RunSummary) -> String {
    let counts: Vec<String> = TaskStatus::ALL
        .iter()
        .filter_map(|st| {
            let n = s.tasks.get(st.name()).copied().unwrap_or(0);
            (n > 0).then(|| format!("{n} {}", st.name()))
        })
        .collect();
    if counts.is_empty() {
        "none".into()
    } else {
        counts.join(", ")
    }
}

/// Prints the summary of a run that ended in `state` after `elapsed` (one JSON object with
/// `json`).
pub fn print(
    s: &RunSummary,
    state: &RunState,
    elapsed: Duration,
    run: &str,
    cmd: &str,
    json: bool,
) {
    let end = ending(state, run, cmd);
    let warn_at = state.settings.history_warn_events;
    let history_warning = (s.events > warn_at).then(|| {
        format!(
            "run {run} has {} events, past its history_warn_events of {warn_at}: replays from the start slow down; fork from a recent seq or export and archive it",
            s.events
        )
    });
    let text = if json {
        let mut out = serde_json::json!({
            "run": run,
            "outcome": end.word,
            "detail": end.detail,
            "tasks": s.tasks,
            "rescues": s.rescues,
            "test_failures": s.test_failures,
            "stage_failures": s.stage_failures,
            "replans": s.replans,
            "events": s.events,
            "next": end.next,
            "history_warning": history_warning,
            "duration_ms": elapsed.as_millis() as u64,
            "branch": state.workspace.as_ref().map(|w| &w.branch),
        });
        if let (Some(fields), false) = (out.as_object_mut(), s.merge_conflicts.is_empty()) {
            fields.insert(
                "merge_conflicts".into(),
                serde_json::json!(s.merge_conflicts),
            );
        }
        format!("{out}\n")
    } else {
        let mut t = format!("run {run} {} in {:.1}s\n", end.word, elapsed.as_secs_f64());
        if !end.detail.is_empty() {
            t += &format!("  {}\n", end.detail);
        }
        t += &format!("  tasks: {}\n", task_counts(s));
        t += &format!(
            "  rescues {}, test failures {}, stage failures {}, replans {}, events {}\n",
            s.rescues, s.test_failures, s.stage_failures, s.replans, s.events
        );
        if let Some(w) = &history_warning {
            t += &format!("  warning: {w}\n");
        }
        for c in &s.merge_conflicts {
            let then = c
                .rescue
                .map_or("left for a person".to_owned(), |n| format!("rescue {n}"));
            t += &format!(
                "  merge conflict at seq {}: {} ({}), {then}\n",
                c.seq,
                c.task,
                join(&c.files)
            );
        }
        if let Some(w) = &state.workspace {
            t += &format!(
                "  its work is on branch {} (at {}): `git merge {}` in {} takes it\n",
                w.branch,
                super::event::short(&w.tip),
                w.branch,
                w.repo
            );
        }
        if !end.next.is_empty() {
            t += "waiting for you:\n";
            for n in &end.next {
                t += &format!("  {n}\n");
            }
        }
        t += "inspect it:\n";
        for what in ["status", "log", "audit"] {
            t += &format!("  {cmd} {what} {run}\n");
        }
        t
    };
    let _ = super::stdout().write_all(text.as_bytes());
}
