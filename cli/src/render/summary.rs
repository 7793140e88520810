//! The closing summary of `run` and `resume`: how the run ended, its counts, and how to
//! inspect it.

use runlog_core::projections::RunSummary;
use runlog_core::{RunOutcome, RunState, RunStatus};
use std::path::Path;
use std::time::Duration;

/// Prints the summary of a run that ended in `state` after `elapsed` (one JSON object with
/// `json`).
pub fn print(
    s: &RunSummary,
    state: &RunState,
    elapsed: Duration,
    run: &str,
    store_dir: &Path,
    json: bool,
) {
    let count = |name: &str| s.tasks.get(name).copied().unwrap_or(0);
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
            format!("resume it with `runlog resume {run}`"),
        ),
        other => (other.name().to_owned(), String::new()),
    };
    let warn_at = state.settings.history_warn_events;
    let history_warning = (s.events > warn_at).then(|| {
        format!(
            "run {run} has {} events, past its history_warn_events of {warn_at}: replays from the start slow down; fork from a recent seq or export and archive it",
            s.events
        )
    });
    let store_flag = if store_dir == Path::new(".runlog") {
        String::new()
    } else {
        format!(" --store {}", store_dir.display())
    };
    if json {
        let out = serde_json::json!({
            "run": run,
            "outcome": word,
            "detail": detail,
            "tasks": s.tasks,
            "rescues": s.rescues,
            "test_failures": s.test_failures,
            "replans": s.replans,
            "events": s.events,
            "history_warning": history_warning,
            "duration_ms": elapsed.as_millis() as u64,
        });
        super::json(&out);
    } else {
        println!("run {run} {word} in {:.1}s", elapsed.as_secs_f64());
        if !detail.is_empty() {
            println!("  {detail}");
        }
        println!(
            "  tasks: {} done, {} failed, {} cancelled, {} pending-eval",
            count("done"),
            count("failed"),
            count("cancelled"),
            count("pending-eval")
        );
        println!(
            "  rescues {}, test retries {}, stage failures {}, replans {}, events {}",
            s.rescues, s.test_failures, s.stage_failures, s.replans, s.events
        );
        if let Some(w) = &history_warning {
            println!("  warning: {w}");
        }
        println!("inspect it:");
        println!("  runlog{store_flag} status {run}");
        println!("  runlog{store_flag} log {run}");
        println!("  runlog{store_flag} audit {run}");
    }
}

fn join(ids: &[runlog_core::TaskId]) -> String {
    ids.iter()
        .map(|t| t.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}
