//! The eval gate: scores, the decision with the threshold in force, rescues, and the
//! manual overrides.

use super::{find, require_running, require_started, require_status};
use crate::event::{EventKind, GateOutcome};
use crate::ids::TaskId;
use crate::rejection::Rejection;
use crate::state::{RunState, TaskStatus};
use std::collections::BTreeMap;

fn check_unit(task: &TaskId, what: String, value: f64) -> Result<(), Rejection> {
    if value.is_finite() && (0.0..=1.0).contains(&value) {
        Ok(())
    } else {
        Err(Rejection::InvalidScore {
            task: task.clone(),
            what,
            value: value.to_string(),
        })
    }
}

pub(super) fn score(
    state: &RunState,
    id: TaskId,
    evaluator: String,
    score: f64,
    dimensions: BTreeMap<String, f64>,
    notes: String,
    judge: crate::review::Judge,
) -> Result<Vec<EventKind>, Rejection> {
    require_running(state)?;
    let task = find(state, &id)?;
    require_status(task, "score", &[TaskStatus::PendingEval])?;
    check_unit(&id, "score".into(), score)?;
    for (name, value) in &dimensions {
        check_unit(&id, format!("dimension {name}"), *value)?;
    }
    let settings = &state.settings;
    let threshold = settings.eval_threshold;
    let outcome = if score >= threshold {
        GateOutcome::Pass
    } else if settings.auto_rescue && task.rescues < settings.max_eval_rescues {
        GateOutcome::Rescue {
            n: task.rescues + 1,
        }
    } else {
        GateOutcome::Fail
    };
    let run = state.run.as_ref().map_or("", |r| r.id.as_str());
    let held = state.review.holds(
        run,
        &id,
        task.attempt,
        task.rescues,
        outcome == GateOutcome::Pass,
    );
    let mut events = Vec::with_capacity(3);
    if !judge.is_empty() {
        events.push(EventKind::EvaluatorNamed {
            task: id.clone(),
            model: judge.model,
            version: judge.version,
        });
    }
    events.push(EventKind::EvalScored {
        task: id.clone(),
        evaluator,
        score,
        dimensions,
        notes,
    });
    events.push(match held {
        true => EventKind::ReviewHeld {
            task: id,
            score,
            threshold,
            outcome,
        },
        false => EventKind::GateDecided {
            task: id,
            score,
            threshold,
            outcome,
        },
    });
    Ok(events)
}

pub(super) fn record_error(
    state: &RunState,
    id: TaskId,
    evaluator: String,
    error: String,
) -> Result<Vec<EventKind>, Rejection> {
    require_running(state)?;
    let task = find(state, &id)?;
    require_status(task, "record an eval error for", &[TaskStatus::PendingEval])?;
    Ok(vec![EventKind::EvalErrored {
        task: id,
        evaluator,
        error,
    }])
}

pub(super) fn approve(
    state: &RunState,
    id: TaskId,
    by: String,
) -> Result<Vec<EventKind>, Rejection> {
    require_started(state)?;
    let task = find(state, &id)?;
    // A person may also overrule a gate that failed the task (the audit flags it).
    let gate_failed =
        task.status == TaskStatus::Failed && task.last_gate == Some(GateOutcome::Fail);
    if !gate_failed {
        require_status(task, "approve", &[TaskStatus::PendingEval])?;
    }
    Ok(vec![EventKind::TaskApproved { task: id, by }])
}

pub(super) fn reject(
    state: &RunState,
    id: TaskId,
    by: String,
    reopen: bool,
    reason: String,
) -> Result<Vec<EventKind>, Rejection> {
    require_started(state)?;
    let task = find(state, &id)?;
    require_status(task, "reject", &[TaskStatus::PendingEval])?;
    Ok(vec![EventKind::TaskRejected {
        task: id,
        by,
        reopen,
        reason,
    }])
}
