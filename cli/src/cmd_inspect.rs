//! Read-only commands over a run's history: runs, status, show, log, replay, stack, stages,
//! audit.

use crate::error::{CliError, Result};
use crate::output::{self, color, join, pad, readiness, status_word};
use runlog_core::projections::{health, Board};
use runlog_core::{Event, EventKind, RunState, TaskId};
use runlog_replay::diff::{diff, Side};
use runlog_replay::Replay;
use runlog_store::EventLog;
use serde::Serialize;
use std::path::Path;

fn open(store: &Path) -> Result<runlog_store::Log> {
    crate::store::open(store, false)
}

/// `runlog runs`.
pub fn runs(store: &Path, json: bool) -> Result<()> {
    let log = open(store)?;
    let replay = Replay::new(&log);
    #[derive(Serialize)]
    struct Row {
        run: String,
        status: String,
        outcome: Option<runlog_core::RunOutcome>,
        events: u64,
        started_ms: Option<u64>,
        fork_of: Option<String>,
        fork_at: Option<u64>,
        workflow: Option<String>,
    }
    let mut rows = Vec::new();
    for meta in log.runs()? {
        if meta.head.is_none() {
            // No readable head: an empty run (skipped) or a damaged one (listed as such).
            let report = log.verify(&meta.run)?;
            if report.damage.is_some() {
                rows.push(Row {
                    run: meta.run,
                    status: "damaged".into(),
                    outcome: None,
                    events: report.verified,
                    started_ms: None,
                    fork_of: None,
                    fork_at: None,
                    workflow: None,
                });
            }
            continue;
        }
        let state = replay.head_state(&meta.run)?;
        let (status, outcome) = match &state.status {
            runlog_core::RunStatus::Finished(o) => ("finished".to_owned(), Some(o.clone())),
            runlog_core::RunStatus::Running => ("running".to_owned(), None),
            runlog_core::RunStatus::Interrupted => ("interrupted".to_owned(), None),
            runlog_core::RunStatus::NotStarted => ("not-started".to_owned(), None),
        };
        rows.push(Row {
            run: meta.run,
            status,
            outcome,
            events: state.seq,
            started_ms: state.run.as_ref().map(|r| r.started_at.0),
            fork_of: state.fork.as_ref().map(|f| f.from_run.0.clone()),
            fork_at: state.fork.as_ref().map(|f| f.at_seq),
            workflow: state.run.as_ref().map(|r| r.workflow.clone()),
        });
    }
    if json {
        rows.iter().for_each(output::json);
        return Ok(());
    }
    if rows.is_empty() {
        println!("no runs in {}", store.display());
        return Ok(());
    }
    println!(
        "{:<28} {:<12} {:<10} {:>7}  lineage",
        "RUN", "STATUS", "OUTCOME", "EVENTS"
    );
    for r in rows {
        let outcome = match &r.outcome {
            Some(runlog_core::RunOutcome::Succeeded) => "succeeded",
            Some(runlog_core::RunOutcome::Failed { .. }) => "failed",
            Some(runlog_core::RunOutcome::Paused { .. }) => "paused",
            None => "",
        };
        let lineage = match (&r.fork_of, r.fork_at) {
            (Some(p), Some(at)) => format!("fork of {p}@{at}"),
            _ => String::new(),
        };
        println!(
            "{:<28} {:<12} {:<10} {:>7}  {lineage}",
            r.run, r.status, outcome, r.events
        );
    }
    Ok(())
}

/// `runlog status RUN [--at SEQ] [--tree]`.
pub fn status(store: &Path, run: &str, at: Option<u64>, tree: bool, json: bool) -> Result<()> {
    let log = open(store)?;
    let replay = Replay::new(&log);
    let state = replay.state_at_or_head(run, at)?;
    let seq = state.seq;
    let board = Board::of(&state);
    if json {
        #[derive(Serialize)]
        struct Status<'a> {
            run: &'a str,
            seq: u64,
            board: &'a Board,
        }
        output::json(&Status {
            run,
            seq,
            board: &board,
        });
        return Ok(());
    }
    let c = color();
    let head = replay.head_seq(run)?;
    let at_text = if seq == head {
        format!("head, seq {seq}")
    } else {
        format!("seq {seq} of {head}")
    };
    println!("run {run} at {at_text}");
    if let Some(after) = &board.paused_for_replan {
        println!("dispatch paused: replan requested after {after}");
    }
    println!(
        "{:<24} {:<13} {:>7} {:>7} {:>6}  detail",
        "TASK", "STATUS", "ATTEMPT", "RESCUE", "SCORE"
    );
    for row in &board.rows {
        let indent = if tree {
            "  ".repeat(row.depth.saturating_sub(1) as usize)
                + if row.depth > 1 { "└ " } else { "" }
        } else {
            String::new()
        };
        let name = format!("{indent}{}", row.id);
        let visible = status_word(row, false).len();
        let mut detail = readiness(&row.readiness);
        if !row.failed_children.is_empty() {
            detail = format!("failed below: {}", join(&row.failed_children));
        }
        if let Some(note) = &row.note {
            detail = if detail.is_empty() {
                note.clone()
            } else {
                format!("{detail}; {note}")
            };
        }
        let score = row.score.map(|s| format!("{s:.2}")).unwrap_or_default();
        println!(
            "{:<24} {} {:>7} {:>7} {:>6}  {detail}",
            name,
            pad(&status_word(row, c), visible, 13),
            row.attempt,
            row.rescues,
            score
        );
    }
    Ok(())
}

fn task_of(e: &Event) -> Option<&TaskId> {
    e.kind.task()
}

/// One event in words (used by log, show, replay).
pub fn describe(e: &EventKind) -> String {
    match e {
        EventKind::TaskStarted {
            task,
            agent,
            worktree,
            attempt,
        } => format!("{task} attempt {attempt} started by {agent} in {worktree}"),
        EventKind::TaskSubmitted { task, summary } => format!("{task} submitted: {summary}"),
        EventKind::TestsStarted { task, attempt } => {
            format!("{task} tests started (attempt {attempt})")
        }
        EventKind::TestsPassed { task, .. } => format!("{task} tests passed"),
        EventKind::TestsFailed { task, details, .. } => {
            format!("{task} tests failed: {}", first_line(details))
        }
        EventKind::EvalScored {
            task,
            score,
            dimensions,
            notes,
            ..
        } => format!(
            "{task} scored {score} [{}] {notes}",
            dimensions
                .iter()
                .map(|(k, v)| format!("{k} {v}"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        EventKind::GateDecided {
            task,
            score,
            threshold,
            outcome,
        } => {
            format!(
                "{task} gate: {score} vs threshold {threshold} → {}",
                output::gate_word(outcome)
            )
        }
        EventKind::StageCompleted {
            stage,
            task,
            duration_ms,
            retry_count,
            result,
        } => {
            format!("stage {stage} ({task}) completed in {duration_ms} ms after {retry_count} retries: {}", serde_json::to_string(result).unwrap_or_default())
        }
        EventKind::StageFailed {
            stage,
            task,
            error,
            error_type,
            retry_count,
            ..
        } => {
            format!(
                "stage {stage} ({task}) failed [{error_type}] (retry {retry_count}): {}",
                first_line(error)
            )
        }
        EventKind::OutputRecorded {
            task,
            stream,
            bytes,
            blob,
            ..
        } => format!(
            "{task} {stream}: {bytes} bytes{}",
            blob.map(|b| format!(" (blob {})", &b.to_hex()[..12]))
                .unwrap_or_default()
        ),
        other => serde_json::to_value(other)
            .ok()
            .and_then(|v| v.as_object().cloned())
            .map(|mut o| {
                o.remove("type");
                o.iter()
                    .map(|(k, v)| format!("{k}={}", compact(v)))
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .unwrap_or_default(),
    }
}

fn compact(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => first_line(s),
        other => {
            let s = other.to_string();
            if s.chars().count() > 120 {
                format!("{}…", s.chars().take(120).collect::<String>())
            } else {
                s
            }
        }
    }
}

fn first_line(s: &str) -> String {
    let line = s
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim();
    if line.chars().count() > 140 {
        format!("{}…", line.chars().take(140).collect::<String>())
    } else {
        line.to_owned()
    }
}

/// Which events `log` prints.
#[derive(Debug, Clone, Default)]
pub struct LogFilter {
    /// First seq.
    pub from: u64,
    /// Last seq.
    pub to: Option<u64>,
    /// Only events about this task.
    pub task: Option<String>,
    /// Only events of these kinds (kebab-case names).
    pub kinds: Vec<String>,
}

impl LogFilter {
    /// Whether an event passes.
    pub fn keeps(&self, e: &Event) -> bool {
        self.task
            .as_deref()
            .is_none_or(|t| task_of(e).is_some_and(|id| id.as_str() == t))
            && (self.kinds.is_empty() || self.kinds.iter().any(|k| k == e.kind.name()))
    }
}

/// Prints one event.
pub fn print_event(seq: u64, e: &Event, json: bool) {
    if json {
        #[derive(Serialize)]
        struct Line<'a> {
            seq: u64,
            at: u64,
            event: &'a EventKind,
        }
        output::json(&Line {
            seq,
            at: e.at.0,
            event: &e.kind,
        });
    } else {
        println!(
            "{seq:>6}  {}  {:<20} {}",
            clock(e.at.0),
            e.kind.name(),
            describe(&e.kind)
        );
    }
}

/// `HH:MM:SS` (UTC) of a timestamp.
pub fn clock(ms: u64) -> String {
    let s = ms / 1000;
    format!("{:02}:{:02}:{:02}", (s / 3600) % 24, (s / 60) % 60, s % 60)
}

/// `runlog log RUN`; with `follow`, tails a run being executed (through its runner's socket).
pub fn log(store: &Path, run: &str, filter: &LogFilter, json: bool, follow: bool) -> Result<()> {
    let log = match crate::store::open_log(store, false) {
        Err(runlog_store::StoreError::Locked { .. }) if follow => {
            return crate::live::connect(store, run, filter.from.max(1), &mut |seq, e| {
                if filter.keeps(&e) && filter.to.is_none_or(|to| seq <= to) {
                    print_event(seq, &e, json);
                }
            });
        }
        other => other.map_err(|e| crate::store::explain(store, e))?,
    };
    if follow {
        eprintln!("note: run {run} is not being executed (no runner holds the store); showing its history");
    }
    let replay = Replay::new(&log);
    let head = replay.head_seq(run)?;
    for k in &filter.kinds {
        if !KINDS.contains(&k.as_str()) {
            return Err(CliError::input(format!("unknown event kind {k:?}"))
                .with_hint(format!("kinds: {}", KINDS.join(", "))));
        }
    }
    let to = filter.to.unwrap_or(head).min(head);
    runlog_replay::events::for_each(&log, run, filter.from.max(1), to, &mut |seq, _, e| {
        if filter.keeps(&e) {
            print_event(seq, &e, json);
        }
        Ok(true)
    })?;
    Ok(())
}

/// Every event kind name, for `--kind`.
pub const KINDS: [&str; 35] = [
    "run-started",
    "run-finished",
    "run-interrupted",
    "forked",
    "rolled-back",
    "task-added",
    "replan-requested",
    "plan-revised",
    "task-started",
    "task-submitted",
    "tests-started",
    "tests-passed",
    "tests-failed",
    "eval-scored",
    "gate-decided",
    "task-approved",
    "task-rejected",
    "task-failed",
    "task-cancelled",
    "task-reopened",
    "checkpoint-reached",
    "task-classified",
    "message-posted",
    "stage-started",
    "stage-completed",
    "stage-failed",
    "retry-scheduled",
    "circuit-opened",
    "circuit-closed",
    "strategy-set",
    "pending-validation",
    "eval-errored",
    "run-resumed",
    "replan-loop-detected",
    "output-recorded",
];

/// `runlog show RUN TASK`: the task's whole story.
pub fn show(store: &Path, run: &str, task: &str, json: bool) -> Result<()> {
    let log = open(store)?;
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
    let story: Vec<(u64, Event)> = replay
        .events(run, 1, head)?
        .into_iter()
        .filter(|(_, e)| task_of(e) == Some(&id))
        .collect();
    if json {
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
        output::json(&Show {
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
        println!("  test: {cmd}");
    }
    if let Some(cmd) = &t.spec.eval {
        println!("  eval: {cmd}");
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
        println!("{seq:>6}  {:<20} {}", e.kind.name(), describe(&e.kind));
    }
    Ok(())
}

/// `runlog replay RUN [--to SEQ] [--step]`: each event and what it changed.
pub fn replay_steps(
    store: &Path,
    run: &str,
    to: Option<u64>,
    step: bool,
    json: bool,
) -> Result<()> {
    let log = open(store)?;
    let replay = Replay::new(&log);
    let head = replay.head_seq(run)?;
    let to = to.unwrap_or(head);
    if to > head {
        return Err(runlog_replay::ReplayError::SeqPastHead {
            run: run.into(),
            seq: to,
            head,
        }
        .into());
    }
    let mut p = runlog_core::projections::Projections::default();
    let interactive = step && std::io::stdin().is_terminal();
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
        if json {
            output::json(&serde_json::json!({"seq": seq, "event": e.kind, "changes": changes}));
            continue;
        }
        println!("{seq:>6}  {:<20} {}", e.kind.name(), describe(&e.kind));
        for t in &changes.tasks {
            println!(
                "          {}: {}",
                t.task,
                output::task_changes(t).join(", ")
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

use std::io::IsTerminal;

/// `runlog stack RUN [--at SEQ]`: the supervisor state stack, newest first, and the latest
/// result per stage.
pub fn stack(store: &Path, run: &str, at: Option<u64>, json: bool) -> Result<()> {
    let log = open(store)?;
    let p = Replay::new(&log).project(run, at, Some(&mut output::replay_progress("replaying")))?;
    let latest = p.stack.all_latest_results();
    if json {
        let entries: Vec<_> = p.stack.newest_first().collect();
        output::json(
            &serde_json::json!({"run": run, "seq": p.state.seq, "stack": entries, "latest_results": latest}),
        );
        return Ok(());
    }
    println!(
        "supervisor stack of {run} at seq {} ({} entries, newest first)",
        p.state.seq,
        p.stack.len()
    );
    for e in p.stack.newest_first() {
        let what = match (&e.result, &e.error) {
            (_, Some((err, kind))) => format!("failed [{kind}] {}", first_line(err)),
            (Some(r), None) => {
                format!("completed {}", serde_json::to_string(r).unwrap_or_default())
            }
            (None, None) => "completed".into(),
        };
        println!(
            "{:>6}  {:<18} {:<18} {:>6} ms  retries {}  {what}",
            e.seq,
            e.stage.as_str(),
            e.task.as_str(),
            e.duration_ms,
            e.retry_count
        );
    }
    println!("latest result per stage:");
    for (stage, result) in latest {
        println!(
            "  {:<18} {}",
            stage.as_str(),
            serde_json::to_string(result).unwrap_or_default()
        );
    }
    Ok(())
}

/// `runlog stages RUN`: health and circuits.
pub fn stages(store: &Path, run: &str, json: bool) -> Result<()> {
    let log = open(store)?;
    let state = Replay::new(&log).head_state(run)?;
    let rows = health::stage_health(&state);
    if json {
        rows.iter().for_each(output::json);
        return Ok(());
    }
    println!(
        "{:<20} {:>5} {:>5} {:>5} {:>10} {:>7}  circuit",
        "STAGE", "RUNS", "OK", "FAIL", "TOTAL MS", "IN ROW"
    );
    for r in rows {
        let circuit = match r.circuit {
            runlog_core::state::Circuit::Closed => "closed",
            runlog_core::state::Circuit::Open => "OPEN",
        };
        println!(
            "{:<20} {:>5} {:>5} {:>5} {:>10} {:>7}  {circuit}{}",
            r.stage.as_str(),
            r.executions,
            r.completions,
            r.failures,
            r.total_duration_ms,
            r.consecutive_failures,
            if r.strategy_overridden {
                " (strategy set at run time)"
            } else {
                ""
            }
        );
    }
    Ok(())
}

/// `runlog audit RUN`: every eval decision with its flags.
pub fn audit(store: &Path, run: &str, json: bool) -> Result<()> {
    let log = open(store)?;
    let p =
        Replay::new(&log).project(run, None, Some(&mut output::replay_progress("replaying")))?;
    if json {
        p.audit.entries.iter().for_each(output::json);
        p.audit.out_of_gate.iter().for_each(output::json);
        return Ok(());
    }
    println!(
        "eval audit of {run}: {} evals, {} flagged",
        p.audit.entries.len(),
        p.audit.flagged().count()
    );
    for e in &p.audit.entries {
        let decision = match (&e.decision, e.threshold) {
            (Some(d), Some(t)) => format!("{} at threshold {t}", output::gate_word(d)),
            _ => "no decision".into(),
        };
        let consequence = match &e.consequence {
            Some(runlog_core::projections::audit::Consequence::Done { ready, at_seq }) => {
                if ready.is_empty() {
                    format!("done at seq {at_seq}")
                } else {
                    format!("done at seq {at_seq}; ready: {}", join(ready))
                }
            }
            Some(runlog_core::projections::audit::Consequence::Rescue { n }) => {
                format!("rescue {n}")
            }
            Some(runlog_core::projections::audit::Consequence::Failed) => "failed".into(),
            None => String::new(),
        };
        println!(
            "{:>6}  {:<18} attempt {} score {} {decision} → {consequence}{}",
            e.seq,
            e.task.as_str(),
            e.attempt,
            e.score,
            if e.rolled_back { " (rolled back)" } else { "" }
        );
        let dims: Vec<String> = e
            .dimensions
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
        if !dims.is_empty() {
            println!("          dimensions: {}", dims.join(", "));
        }
        if !e.notes.is_empty() {
            println!("          notes: {}", first_line(&e.notes));
        }
        for f in &e.flags {
            let text = match f {
                runlog_core::projections::audit::AuditFlag::NearThreshold { margin } => {
                    format!("near the threshold (margin {margin})")
                }
                runlog_core::projections::audit::AuditFlag::MissingDimensions { missing }
                    if missing.is_empty() =>
                {
                    "no dimensions".into()
                }
                runlog_core::projections::audit::AuditFlag::MissingDimensions { missing } => {
                    format!("missing dimensions: {}", missing.join(", "))
                }
                runlog_core::projections::audit::AuditFlag::ApprovedOverFailingScore {
                    by,
                    seq,
                } => format!("approved by {by} at seq {seq} over this failing score"),
            };
            println!("          ⚑ {text}");
        }
    }
    for o in &p.audit.out_of_gate {
        match o {
            runlog_core::projections::audit::OutOfGate::Approved { seq, task, by, .. } => {
                println!("{seq:>6}  {:<18} approved by {by}", task.as_str())
            }
            runlog_core::projections::audit::OutOfGate::Rejected {
                seq,
                task,
                by,
                reopen,
                reason,
            } => {
                println!(
                    "{seq:>6}  {:<18} rejected by {by}{}: {reason}",
                    task.as_str(),
                    if *reopen { " (reopened)" } else { "" }
                )
            }
            runlog_core::projections::audit::OutOfGate::EvalError {
                seq, task, error, ..
            } => println!("{seq:>6}  {:<18} evaluator error: {error}", task.as_str()),
        }
    }
    Ok(())
}
