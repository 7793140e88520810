//! Run life cycle and control: start, fork, add, messages, rollback, interrupt, resume, finish.

use super::{find, require_started};
use crate::command::CostPolicy;
use crate::event::{EventKind, RunOutcome};
use crate::ids::{Hash, RunId, TaskId};
use crate::plan::{check_name, validate_new_tasks, validate_settings};
use crate::rejection::Rejection;
use crate::settings::Settings;
use crate::spec::TaskSpec;
use crate::state::{Circuit, Readiness, RunState, RunStatus, TaskStatus};
use std::collections::BTreeSet;

pub(super) fn start_run(
    state: &RunState,
    run: RunId,
    workflow: String,
    workflow_hash: Hash,
    settings: Settings,
    tasks: Vec<TaskSpec>,
    (cost, review): (CostPolicy, crate::review::ReviewPolicy),
) -> Result<Vec<EventKind>, Rejection> {
    if state.status != RunStatus::NotStarted {
        return Err(Rejection::RunAlreadyStarted);
    }
    check_name("run", run.as_str())?;
    validate_settings(&settings)?;
    let money_bounded = |t: &TaskId| {
        !cost.budget.is_unbounded() || cost.task_budgets.get(t).is_some_and(|l| !l.is_unbounded())
    };
    validate_new_tasks(
        state,
        &tasks,
        &BTreeSet::new(),
        &[],
        settings.max_depth,
        &money_bounded,
    )?;
    if let Some(t) = cost
        .task_budgets
        .keys()
        .find(|t| !tasks.iter().any(|s| &s.id == *t))
    {
        return Err(Rejection::UnknownTask { task: t.clone() });
    }
    let mut events = vec![EventKind::RunStarted {
        run,
        workflow,
        workflow_hash,
        settings,
    }];
    events.extend(tasks.into_iter().map(|spec| EventKind::TaskAdded {
        spec: Box::new(spec),
    }));
    events.extend(super::budget::start_policy(cost)?);
    if let Some(reason) = review.invalid() {
        return Err(Rejection::InvalidSetting {
            field: "review_sample".into(),
            reason,
        });
    }
    if !review.is_none() {
        events.push(EventKind::ReviewSet { policy: review });
    }
    Ok(events)
}

pub(super) fn start_fork(
    state: &RunState,
    run: RunId,
    from_run: RunId,
    at_seq: u64,
    from_hash: Hash,
) -> Result<Vec<EventKind>, Rejection> {
    if state.status != RunStatus::NotStarted {
        return Err(Rejection::RunAlreadyStarted);
    }
    check_name("run", run.as_str())?;
    if run == from_run {
        return Err(Rejection::InvalidSetting {
            field: "fork id".into(),
            reason: "a fork needs an id of its own".into(),
        });
    }
    Ok(vec![EventKind::Forked {
        run,
        from_run,
        at_seq,
        from_hash,
    }])
}

pub(super) fn add_task(state: &RunState, spec: TaskSpec) -> Result<Vec<EventKind>, Rejection> {
    require_started(state)?;
    validate_new_tasks(
        state,
        std::slice::from_ref(&spec),
        &BTreeSet::new(),
        &[],
        state.settings.max_depth,
        &|_| !state.budget.is_unbounded(),
    )?;
    Ok(vec![EventKind::TaskAdded {
        spec: Box::new(spec),
    }])
}

pub(super) fn post_message(
    state: &RunState,
    task: Option<TaskId>,
    from: String,
    text: String,
) -> Result<Vec<EventKind>, Rejection> {
    require_started(state)?;
    if let Some(t) = &task {
        find(state, t)?;
    }
    Ok(vec![EventKind::MessagePosted { task, from, text }])
}

pub(super) fn record_output(
    state: &RunState,
    task: TaskId,
    stream: String,
    text: String,
    blob: Option<Hash>,
    bytes: u64,
) -> Result<Vec<EventKind>, Rejection> {
    require_started(state)?;
    let attempt = find(state, &task)?.attempt;
    Ok(vec![EventKind::OutputRecorded {
        task,
        attempt,
        stream,
        text,
        blob,
        bytes,
    }])
}

/// Secrets replaced in what a task's (or the run's) next events record: at least one, each
/// named (the name is all that is kept).
pub(super) fn record_redaction(
    state: &RunState,
    task: Option<TaskId>,
    redactions: Vec<crate::redact::Redaction>,
) -> Result<Vec<EventKind>, Rejection> {
    require_started(state)?;
    if let Some(t) = &task {
        find(state, t)?;
    }
    if redactions.is_empty() || redactions.iter().any(|r| r.count == 0 || r.name.is_empty()) {
        return Err(Rejection::InvalidRedaction {
            reason: "a redaction names what was replaced and how many times (at least once)".into(),
        });
    }
    Ok(vec![EventKind::SecretsRedacted { task, redactions }])
}

/// A discovered test command is the task's own: it must be the one its spec runs.
pub(super) fn tests_discovered(
    state: &RunState,
    task: TaskId,
    convention: String,
    test: String,
) -> Result<Vec<EventKind>, Rejection> {
    require_started(state)?;
    let spec_test = find(state, &task)?.spec.test.clone();
    if spec_test.as_deref() != Some(test.as_str()) {
        return Err(Rejection::InvalidRevision {
            reason: format!(
                "task {task} runs {spec_test:?} as its tests, not the discovered {test:?}"
            ),
        });
    }
    Ok(vec![EventKind::TestsDiscovered {
        task,
        convention,
        test,
    }])
}

pub(super) fn rollback(
    state: &RunState,
    to_seq: u64,
    reason: String,
    by: String,
) -> Result<Vec<EventKind>, Rejection> {
    require_started(state)?;
    if to_seq == 0 || to_seq >= state.seq {
        return Err(Rejection::SeqOutOfRange {
            to_seq,
            head: state.seq,
        });
    }
    Ok(vec![EventKind::RolledBack { to_seq, reason, by }])
}

pub(super) fn interrupt(state: &RunState, reason: String) -> Result<Vec<EventKind>, Rejection> {
    super::require_running(state)?;
    Ok(vec![EventKind::RunInterrupted { reason }])
}

pub(super) fn resume(state: &RunState, reason: String) -> Result<Vec<EventKind>, Rejection> {
    match state.status {
        RunStatus::Interrupted | RunStatus::Finished(_) => {
            Ok(vec![EventKind::RunResumed { reason }])
        }
        RunStatus::NotStarted => Err(Rejection::RunNotStarted),
        RunStatus::Running => Err(Rejection::NotInterrupted),
    }
}

pub(super) fn finish(state: &RunState) -> Result<Vec<EventKind>, Rejection> {
    super::require_running(state)?;
    let running = state.running_tasks();
    if !running.is_empty() {
        return Err(Rejection::StillRunning { running });
    }
    Ok(vec![EventKind::RunFinished {
        outcome: outcome(state),
    }])
}

/// How the run stands if it finished now.
pub fn outcome(state: &RunState) -> RunOutcome {
    if let Some(reason) = budget_pause(state) {
        return RunOutcome::Paused { reason };
    }
    if let Some(replan) = &state.replan {
        let why = if replan.loop_detected {
            "the replanner regenerated an earlier plan (regeneration loop)"
        } else {
            "a replan was requested and no plan revision arrived"
        };
        return RunOutcome::Paused {
            reason: format!(
                "{why} after task {}; revise the plan with `runlog replan`",
                replan.after_task
            ),
        };
    }
    let leaves: Vec<_> = state
        .tasks_in_order()
        .filter(|t| !state.is_group(&t.spec.id))
        .collect();
    let failed: Vec<TaskId> = leaves
        .iter()
        .filter(|t| {
            t.status == TaskStatus::Failed
                || super::task::test_retries_exhausted(state, t).is_some()
        })
        .map(|t| t.spec.id.clone())
        .collect();
    let blocked: Vec<TaskId> = leaves
        .iter()
        .filter(|t| {
            let circuit_open = state
                .stages
                .get(&t.spec.stage_id())
                .is_some_and(|s| s.circuit == Circuit::Open);
            match t.status {
                TaskStatus::Open => {
                    circuit_open || matches!(state.readiness(&t.spec.id), Readiness::Blocked { .. })
                }
                // A retry waiting behind a circuit that opened meanwhile.
                TaskStatus::InProgress | TaskStatus::TestFailed => !t.running && circuit_open,
                _ => false,
            }
        })
        .map(|t| t.spec.id.clone())
        .collect();
    if !failed.is_empty() || !blocked.is_empty() {
        return RunOutcome::Failed { failed, blocked };
    }
    let waiting: Vec<String> = leaves
        .iter()
        .filter_map(|t| {
            let s = t.sub_project.as_ref()?;
            let failures = s.waiting.as_ref()?;
            let child = s.child.as_ref().map_or("?", |c| c.as_str());
            Some(format!(
                "task {} waits for its sub-project run {child}: {failures}; fix it there (`runlog reopen {child} TASK`), then `runlog resume` this run",
                t.spec.id
            ))
        })
        .collect();
    if !waiting.is_empty() {
        return RunOutcome::Paused {
            reason: waiting.join("; "),
        };
    }
    let held: Vec<&str> = leaves
        .iter()
        .filter(|t| t.held.is_some() && t.status == TaskStatus::PendingEval)
        .map(|t| t.spec.id.as_str())
        .collect();
    if !held.is_empty() {
        let run = state.run.as_ref().map_or("RUN", |r| r.id.as_str());
        return RunOutcome::Paused {
            reason: format!(
                "{} {} {} for a person's review (`runlog review {run}`)",
                if held.len() == 1 { "task" } else { "tasks" },
                held.join(", "),
                if held.len() == 1 { "waits" } else { "wait" },
            ),
        };
    }
    let unresolved: Vec<&str> = leaves
        .iter()
        .filter(|t| !matches!(t.status, TaskStatus::Done | TaskStatus::Cancelled))
        .map(|t| t.spec.id.as_str())
        .collect();
    if unresolved.is_empty() {
        RunOutcome::Succeeded
    } else {
        RunOutcome::Paused {
            reason: format!("tasks not resolved: {}", unresolved.join(", ")),
        }
    }
}

/// Why the run pauses for a budget: tasks a spent budget stopped, or the run's own budget
/// spent with work left, with the command that raises it. `None` when no budget stands in the
/// way.
fn budget_pause(state: &RunState) -> Option<String> {
    let mut stops: Vec<(String, crate::usage::BudgetStop)> = state
        .tasks_in_order()
        .filter(|t| t.status == TaskStatus::Failed)
        .filter_map(|t| {
            let stop = t.budget_stop.clone()?;
            Some((
                format!("task {}: {}", t.spec.id, state.stop_words(t, &stop)),
                stop,
            ))
        })
        .collect();
    if stops.is_empty() {
        let unfinished = state
            .tasks_in_order()
            .any(|t| !state.is_group(&t.spec.id) && !t.status.is_terminal());
        stops.extend(
            state
                .run_overspent()
                .filter(|_| unfinished)
                .map(|s| (s.describe(), s)),
        );
    }
    let (_, first) = stops.first()?;
    let run = state.run.as_ref().map_or("RUN", |r| r.id.as_str());
    let said: Vec<String> = stops.iter().map(|(words, _)| words.clone()).collect();
    Some(format!(
        "budget spent: {}; raise it (`{}`), then `runlog resume {run}`",
        said.join("; "),
        first.raise_command(run)
    ))
}
