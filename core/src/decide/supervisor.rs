//! The supervisor: stage failures, retries with backoff and budgets, circuit breakers,
//! strategy changes.

use super::{find, require_running, require_running_attempt, require_started};
use crate::event::EventKind;
use crate::ids::{StageId, TaskId, Timestamp};
use crate::plan::validate_strategy;
use crate::rejection::Rejection;
use crate::settings::{RetryLimit, RetryStrategy};
use crate::state::{Circuit, RunState};

pub(super) fn fail_stage(
    state: &RunState,
    id: TaskId,
    error: String,
    error_type: crate::ErrorType,
    duration_ms: u64,
    at: Timestamp,
) -> Result<Vec<EventKind>, Rejection> {
    require_running(state)?;
    let task = find(state, &id)?;
    require_running_attempt(task, "fail")?;
    let stage = task.spec.stage_id();
    let strategy = state.strategy_for(task);
    let retry_count = task.stage_retries + 1;
    let mut events = vec![EventKind::StageFailed {
        stage: stage.clone(),
        task: id.clone(),
        error: error.clone(),
        error_type,
        retry_count,
        duration_ms,
    }];
    let health = state.stages.get(&stage);
    let consecutive = health.map_or(0, |h| h.consecutive_failures) + 1;
    let circuit_closed = health.is_none_or(|h| h.circuit == Circuit::Closed);
    if strategy.circuit_after > 0 && consecutive >= strategy.circuit_after && circuit_closed {
        events.push(EventKind::CircuitOpened {
            stage: stage.clone(),
            failures: consecutive,
        });
        events.push(EventKind::TaskFailed {
            task: id,
            reason: format!(
                "stage {stage} circuit opened after {consecutive} consecutive failures: {error}"
            ),
        });
        return Ok(events);
    }
    let delay_ms = strategy.delay_before(retry_count);
    match retry_refusal(
        &strategy,
        retry_count,
        task.attempt,
        task.first_started_at,
        at,
        delay_ms,
    ) {
        None => events.push(EventKind::RetryScheduled {
            stage,
            task: id,
            attempt: task.attempt + 1,
            delay_ms,
        }),
        Some(why) => events.push(EventKind::TaskFailed {
            task: id,
            reason: format!("{why}; last error: {error}"),
        }),
    }
    Ok(events)
}

/// Why no retry is allowed, or `None` when one is.
fn retry_refusal(
    strategy: &RetryStrategy,
    retry_count: u32,
    attempts: u32,
    first_started: Option<Timestamp>,
    now: Timestamp,
    delay_ms: u64,
) -> Option<String> {
    if let RetryLimit::Max(max) = strategy.limit {
        if retry_count > max {
            return Some(format!(
                "stage failed {retry_count} times (max {max} retries)"
            ));
        }
    }
    if let Some(max_attempts) = strategy.budget.max_attempts {
        if attempts >= max_attempts {
            return Some(format!("attempt budget of {max_attempts} spent"));
        }
    }
    if let (Some(max_ms), Some(first)) = (strategy.budget.max_elapsed_ms, first_started) {
        let elapsed_at_retry = now.since(first).saturating_add(delay_ms);
        if elapsed_at_retry > max_ms {
            return Some(format!("time budget of {max_ms} ms spent"));
        }
    }
    None
}

fn require_stage(state: &RunState, stage: &StageId) -> Result<(), Rejection> {
    if state.tasks.values().any(|t| &t.spec.stage_id() == stage) {
        Ok(())
    } else {
        Err(Rejection::UnknownStage {
            stage: stage.clone(),
        })
    }
}

pub(super) fn set_strategy(
    state: &RunState,
    stage: StageId,
    strategy: RetryStrategy,
) -> Result<Vec<EventKind>, Rejection> {
    require_started(state)?;
    require_stage(state, &stage)?;
    // A cost or token budget bounds the stage when the run has one or each of its tasks does.
    let money_bounded = !state.budget.is_unbounded()
        || state
            .tasks
            .values()
            .filter(|t| t.spec.stage_id() == stage)
            .all(|t| !t.budget.is_unbounded());
    validate_strategy(stage.as_str(), &strategy, money_bounded)?;
    Ok(vec![EventKind::StrategySet { stage, strategy }])
}

pub(super) fn close_circuit(state: &RunState, stage: StageId) -> Result<Vec<EventKind>, Rejection> {
    require_started(state)?;
    require_stage(state, &stage)?;
    match state.stages.get(&stage) {
        Some(h) if h.circuit == Circuit::Open => Ok(vec![EventKind::CircuitClosed { stage }]),
        _ => Err(Rejection::CircuitNotOpen { stage }),
    }
}
