//! Money held for calls in flight: a call's worst case is reserved against its task's and the
//! run's budgets before it leaves; one that does not fit waits while others are in flight and
//! is refused when none are; its record settles it; a call's attempt ending, or the run
//! stopping, lets go of what it held.

mod support;
use runlog_core::model_call::ModelApi;
use runlog_core::reservation::{OutputBound, Reservation};
use runlog_core::usage::*;
use runlog_core::*;
use support::*;

/// $1 a million input tokens, $2 a million output: a worst case of 1,000 in and 4,000 out is $0.009.
fn priced(budget: Limits) -> CostPolicy {
    CostPolicy {
        prices: Prices::from([(
            "m".to_owned(),
            Price {
                input: 1.0,
                output: 2.0,
                cache_read: None,
                cache_write: None,
            },
        )]),
        budget,
        ..CostPolicy::default()
    }
}

fn run_with(budget: Limits) -> Given {
    let mut a = task("a");
    a.requires_testing = false;
    a.retry.delay_ms = 0;
    given_costed(vec![a], priced(budget)).and(start("a"))
}

fn cents(usd: f64) -> Limits {
    Limits {
        max_cost_usd: Some(usd),
        max_tokens: None,
    }
}

/// Call `n` of attempt `attempt`: 1,000 input and 4,000 output tokens at most ($0.009).
fn reserve(attempt: u32, n: u32) -> CommandKind {
    CommandKind::ReserveModelCall {
        reservation: Box::new(Reservation {
            task: id("a"),
            attempt,
            stage: UsageStage::Agent,
            n,
            provider: "anthropic".into(),
            api: ModelApi::Messages,
            model: Some("m".into()),
            input_tokens: 1_000,
            output_tokens: 4_000,
            bound: OutputBound::Request,
            cost_usd: None,
        }),
    }
}

/// Call `n`'s record: 1,000 input and 500 output tokens ($0.002).
fn settle(n: u32) -> CommandKind {
    let mut c = call("a", 1, n, 1_000, 500);
    c.model = Some("m".into());
    CommandKind::RecordModelCall { call: Box::new(c) }
}

fn shortfall(r: &Rejection) -> Option<&runlog_core::reservation::Shortfall> {
    match r {
        Rejection::CallDoesNotFit { shortfall, .. } => Some(shortfall),
        _ => None,
    }
}

#[test]
fn a_reservation_is_priced_at_its_worst_case_and_held_until_its_record_settles_it() {
    let g = run_with(cents(0.02)).when(reserve(1, 1)).then_ok();
    let held = g.state.held();
    assert_eq!((held.calls, held.tokens), (1, 5_000));
    assert!((held.cost_usd - 0.009).abs() < 1e-12, "{held:?}");
    let g = g.when(settle(1)).then_ok();
    assert_eq!(g.state.held().calls, 0, "the record settles it");
    assert!((g.state.spend.cost_usd - 0.002).abs() < 1e-12);
}

#[test]
fn a_call_that_does_not_fit_beside_calls_in_flight_may_fit_once_they_settle() {
    // $0.02: two worst cases ($0.018) fit, a third does not while they are in flight.
    let g = run_with(cents(0.02)).and(reserve(1, 1)).and(reserve(1, 2));
    g.clone()
        .when(reserve(1, 3))
        .then_rejected_where(|r| shortfall(r).is_some_and(|s| s.in_flight == 2));
    // Once both settle at $0.002 each, $0.016 is left: it fits.
    g.and(settle(1))
        .and(settle(2))
        .when(reserve(1, 3))
        .then_ok();
}

#[test]
fn a_call_that_does_not_fit_with_nothing_in_flight_is_refused_and_its_task_starts_no_more_attempts()
{
    let g = run_with(cents(0.005)).when(reserve(1, 1)).then_ok();
    let Some(EventKind::ModelCallDidNotFit(d)) = g.events.last().map(|e| &e.kind) else {
        panic!("{:?}", g.events.last());
    };
    assert!(
        d.shortfall().describe().starts_with(
            "this call could cost up to $0.0090, and the run's cost budget of $0.0050 has $0.0050 left"
        ),
        "{}",
        d.shortfall().describe()
    );
    assert_eq!(g.state.held().calls, 0, "nothing is held for it");
    // Its attempt fails; the next would make the same call: it does not start.
    let g = g.and(fail_stage("a", "refused"));
    g.clone().when(start("a")).then_rejected_where(|r| {
        matches!(r, Rejection::BudgetSpent { spent, .. }
            if spent == "$0.0050 left of the run's budget could not cover its last call (up to $0.0090)")
    });
    // A budget raised to cover it lets it start again.
    g.and(CommandKind::SetBudget {
        task: None,
        max_cost_usd: Change::Set(0.01),
        max_tokens: Change::Keep,
        by: "ana".into(),
    })
    .when(start("a"))
    .then_ok();
}

#[test]
fn spend_and_holds_together_never_pass_the_budget() {
    // Reservations and settles in any order the gateway may send them: at every event the
    // spend and the worst cases held stay within the budget.
    let mut g = run_with(cents(0.03));
    let mut n = 0u32;
    let mut open = Vec::new();
    let mut settled = 0usize;
    for step in 0..40u32 {
        if step % 3 == 2 {
            if let Some(k) = open.pop() {
                g = g.and(settle(k));
                settled += 1;
            }
        } else {
            n += 1;
            // One that does not fit now is not recorded (the gateway asks again later).
            let tried = g.clone().when(reserve(1, n));
            if tried.result.is_ok() {
                g = tried.then_ok();
                open.push(n);
            }
        }
        let held = g.state.held();
        assert!(
            g.state.spend.cost_usd + held.cost_usd <= 0.03 + 1e-12,
            "step {step}: spent {} and held {}",
            g.state.spend.cost_usd,
            held.cost_usd
        );
    }
    // Calls went through all along, and some were turned away while others held the money.
    assert!(
        settled >= 10 && n as usize > settled + open.len(),
        "{settled} settled of {n}"
    );
}

#[test]
fn a_task_budget_holds_its_own_calls_and_a_token_budget_counts_worst_tokens() {
    let tokens = Limits {
        max_cost_usd: None,
        max_tokens: Some(9_000),
    };
    let g = run_with(tokens).and(reserve(1, 1));
    g.clone().when(reserve(1, 2)).then_rejected_where(|r| {
        shortfall(r).is_some_and(|s| s.budget.kind == BudgetKind::Tokens && s.worst == 5_000.0)
    });
    // A task's own budget is judged with only its own calls in flight.
    run_with(Limits::default())
        .and(CommandKind::SetBudget {
            task: Some(id("a")),
            max_cost_usd: Change::Set(0.01),
            max_tokens: Change::Keep,
            by: "ana".into(),
        })
        .and(reserve(1, 1))
        .when(reserve(1, 2))
        .then_rejected_where(|r| {
            shortfall(r).is_some_and(|s| s.budget.budget == Some(id("a")) && s.in_flight == 1)
        });
}

#[test]
fn what_a_call_held_is_let_go_when_its_attempt_ends_or_the_run_stops() {
    let g = run_with(cents(1.0)).and(reserve(1, 1));
    let again = g.clone().and(fail_stage("a", "boom")).and(start("a"));
    assert_eq!(
        again.state.held().calls,
        0,
        "its attempt was followed by another"
    );
    let stopped = g.and(CommandKind::Interrupt {
        reason: "ctrl-c".into(),
    });
    assert_eq!(stopped.state.held().calls, 0, "the run stopped");
}

#[test]
fn a_reservation_the_task_cannot_have_made_is_refused() {
    let refused = |r: &Rejection| matches!(r, Rejection::InvalidUsage { .. });
    run_with(cents(1.0))
        .when(reserve(2, 1))
        .then_rejected_where(refused);
    run_with(cents(1.0))
        .when(reserve(1, 0))
        .then_rejected_where(refused);
    run_with(cents(1.0))
        .and(reserve(1, 1))
        .when(reserve(1, 1))
        .then_rejected_where(refused);
}

#[test]
fn a_model_without_a_price_is_held_at_the_dearest_price_there_is() {
    // The model asked is often named otherwise than the one that answers and is priced.
    let mut r = reserve(1, 1);
    if let CommandKind::ReserveModelCall { reservation } = &mut r {
        reservation.model = Some("m-latest".into());
    }
    let g = run_with(cents(1.0)).when(r).then_ok();
    assert!((g.state.held().cost_usd - 0.009).abs() < 1e-12);
}
