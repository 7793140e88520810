//! What agents cost: usage recorded and priced, prices and budgets set, and a task whose
//! budget is spent stopped where it would start another attempt.

use super::{find, require_running, require_started};
use crate::command::{Change, CostPolicy};
use crate::event::EventKind;
use crate::ids::TaskId;
use crate::model_call::ModelCall;
use crate::rejection::Rejection;
use crate::reservation::{DidNotFit, Reservation};
use crate::state::{RunState, TaskStatus};
use crate::usage::{invalid_report, records, Limits, UsageReport, UsageStage, MAX_TOKENS};

/// Reports of the task's current attempt, checked and priced: its usage, or (`claimed`) what
/// it says it used for calls the gateway measured.
pub(super) fn record_usage(
    state: &RunState,
    task: TaskId,
    stage: UsageStage,
    reports: Vec<UsageReport>,
    claimed: bool,
) -> Result<Vec<EventKind>, Rejection> {
    require_started(state)?;
    let attempt = find(state, &task)?.attempt;
    if let Some(reason) = reports.iter().find_map(invalid_report) {
        return Err(Rejection::InvalidUsage { task, reason });
    }
    Ok(records(&task, attempt, stage, &reports, &state.prices)
        .into_iter()
        .map(|usage| match claimed {
            true => EventKind::UsageClaimed { usage },
            false => EventKind::UsageRecorded { usage },
        })
        .collect())
}

pub(super) fn record_model_call(
    state: &RunState,
    mut call: ModelCall,
) -> Result<Vec<EventKind>, Rejection> {
    require_started(state)?;
    let attempt = find(state, &call.task)?.attempt;
    let invalid = |reason: String| Rejection::InvalidUsage {
        task: call.task.clone(),
        reason,
    };
    // A call of an earlier attempt may be recorded late (its command was stopped as it
    // answered); one of an attempt not started yet cannot have happened.
    if call.attempt == 0 || call.attempt > attempt {
        return Err(invalid(format!(
            "a call of attempt {} where the task has started {attempt}",
            call.attempt
        )));
    }
    if call.n == 0 {
        return Err(invalid("calls are numbered from 1".into()));
    }
    if call.provider.trim().is_empty() {
        return Err(invalid("a call names its provider".into()));
    }
    if let Some(reason) = invalid_report(&call.report()) {
        return Err(invalid(reason));
    }
    // Priced as a report is: the provider's own cost wins, else the run's price for the model.
    let priced = records(
        &call.task,
        call.attempt,
        call.stage,
        &[call.report()],
        &state.prices,
    );
    if let Some(record) = priced.first() {
        call.cost = record.cost;
        call.cost_usd = record.cost_usd;
    }
    Ok(vec![EventKind::ModelCalled(Box::new(call))])
}

/// A call's worst case held against the budgets, priced at the run's price for its model;
/// refused when it does not fit (the shortfall says whether calls in flight may free room).
pub(super) fn reserve_model_call(
    state: &RunState,
    r: Reservation,
) -> Result<Vec<EventKind>, Rejection> {
    require_running(state)?;
    let task = find(state, &r.task)?;
    let invalid = |reason: String| Rejection::InvalidUsage {
        task: r.task.clone(),
        reason,
    };
    if r.attempt != task.attempt {
        return Err(invalid(format!(
            "a reservation for attempt {} where the task is at attempt {}",
            r.attempt, task.attempt
        )));
    }
    if r.n == 0 {
        return Err(invalid("calls are numbered from 1".into()));
    }
    if r.input_tokens > MAX_TOKENS || r.output_tokens > MAX_TOKENS {
        return Err(invalid(format!("a bound is more than {MAX_TOKENS} tokens")));
    }
    if state.in_flight.iter().any(|h| h.key() == r.key()) {
        return Err(invalid(format!(
            "{} call {} already holds a reservation",
            r.stage.name(),
            r.n
        )));
    }
    let r = r.priced(&state.prices);
    match state.room_for(task, &r) {
        Ok(()) => Ok(vec![EventKind::ModelCallReserved(Box::new(r))]),
        // Calls in flight may free room: the call asks again once they settle.
        Err(shortfall) if shortfall.in_flight > 0 => Err(Rejection::CallDoesNotFit {
            task: r.task.clone(),
            shortfall: Box::new(shortfall),
        }),
        // Nothing can: it is refused, and the task stopped from starting another attempt.
        Err(shortfall) => Ok(vec![EventKind::ModelCallDidNotFit(Box::new(DidNotFit {
            reservation: r,
            budget: shortfall.budget,
        }))]),
    }
}

/// The events that record a run's prices and budgets as it starts.
pub(super) fn start_policy(cost: CostPolicy) -> Result<Vec<EventKind>, Rejection> {
    let CostPolicy {
        prices,
        budget,
        task_budgets,
    } = cost;
    let mut events = Vec::new();
    for (model, price) in &prices {
        let invalid = |reason| Rejection::InvalidSetting {
            field: format!("prices.{model:?}"),
            reason,
        };
        if model.trim().is_empty() {
            return Err(invalid("a price names its model".into()));
        }
        if let Some(reason) = price.invalid() {
            return Err(invalid(reason));
        }
    }
    if !prices.is_empty() {
        events.push(EventKind::PricesSet { prices });
    }
    let budgets =
        std::iter::once((None, budget)).chain(task_budgets.into_iter().map(|(t, l)| (Some(t), l)));
    for (task, limits) in budgets.filter(|(_, l)| !l.is_unbounded()) {
        if let Some(reason) = limits.invalid() {
            return Err(Rejection::InvalidSetting {
                field: "budget".into(),
                reason,
            });
        }
        events.push(EventKind::BudgetSet {
            task,
            limits,
            by: "workflow".into(),
        });
    }
    Ok(events)
}

pub(super) fn set_budget(
    state: &RunState,
    task: Option<TaskId>,
    max_cost_usd: Change<f64>,
    max_tokens: Change<u64>,
    by: String,
) -> Result<Vec<EventKind>, Rejection> {
    require_started(state)?;
    let before = match &task {
        Some(id) => find(state, id)?.budget,
        None => state.budget,
    };
    let limits = Limits {
        max_cost_usd: max_cost_usd.apply(before.max_cost_usd),
        max_tokens: max_tokens.apply(before.max_tokens),
    };
    if let Some(reason) = limits.invalid() {
        return Err(Rejection::InvalidSetting {
            field: "budget".into(),
            reason,
        });
    }
    let set = EventKind::BudgetSet {
        task,
        limits,
        by: by.clone(),
    };
    // The tasks the old budget stopped and the new one lets go on are opened again.
    let after = crate::evolve::evolve(
        state.clone(),
        &crate::event::Event {
            at: crate::ids::Timestamp(0),
            kind: set.clone(),
        },
    );
    let reopened: Vec<EventKind> = after
        .tasks_in_order()
        .filter(|t| t.status == TaskStatus::Failed && t.budget_stop.is_some())
        .filter(|t| after.overspent(t).is_none())
        .map(|t| EventKind::TaskReopened {
            task: t.spec.id.clone(),
            by: by.clone(),
        })
        .collect();
    Ok(std::iter::once(set).chain(reopened).collect())
}

pub(super) fn stop_for_budget(state: &RunState, id: TaskId) -> Result<Vec<EventKind>, Rejection> {
    require_running(state)?;
    let task = find(state, &id)?;
    let not = |why: &str| Rejection::BudgetNotSpent {
        task: id.clone(),
        why: why.into(),
    };
    let waiting = matches!(
        task.status,
        TaskStatus::Open | TaskStatus::InProgress | TaskStatus::TestFailed
    );
    if !waiting || task.running {
        return Err(not("it is not waiting to start an attempt"));
    }
    let Some(stop) = state.overspent(task) else {
        return Err(not("its budgets have something left"));
    };
    let reason = format!("budget-spent: {}", state.stop_words(task, &stop));
    Ok(vec![
        EventKind::BudgetSpent {
            task: id.clone(),
            budget: stop.budget,
            kind: stop.kind,
            limit: stop.limit,
            spent: stop.spent,
        },
        EventKind::TaskFailed { task: id, reason },
    ])
}
