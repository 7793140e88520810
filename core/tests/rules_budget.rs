//! What agents cost: usage is recorded and priced; each budget kind stops what it bounds and
//! nothing else; an attempt already running finishes; a raised budget lets `resume` go on; a
//! rollback past a usage record gives that budget back.

mod support;
use runlog_core::dispatch::{dispatch, Capacity, Dispatch};
use runlog_core::usage::*;
use runlog_core::*;
use support::*;

fn report(model: &str, input: u64, output: u64, cost: Option<f64>) -> UsageReport {
    UsageReport {
        model: Some(model.into()),
        provider: None,
        tokens: Tokens {
            input,
            output,
            ..Tokens::default()
        },
        cost_usd: cost,
    }
}

fn used(t: &str, stage: UsageStage, reports: Vec<UsageReport>) -> CommandKind {
    CommandKind::RecordUsage {
        task: id(t),
        stage,
        reports,
    }
}

/// The agent of `t` spent `usd` (reported).
fn spent(t: &str, usd: f64) -> CommandKind {
    used(t, UsageStage::Agent, vec![report("m", 100, 10, Some(usd))])
}

fn budget(task: Option<&str>, usd: Option<f64>, tokens: Option<u64>) -> CommandKind {
    CommandKind::SetBudget {
        task: task.map(id),
        max_cost_usd: usd.map_or(Change::Keep, Change::Set),
        max_tokens: tokens.map_or(Change::Keep, Change::Set),
        by: "ana".into(),
    }
}

fn untested(id_: &str) -> TaskSpec {
    let mut s = task(id_);
    s.requires_testing = false;
    s
}

fn never_give_up(id_: &str) -> TaskSpec {
    let mut s = untested(id_);
    s.retry.limit = RetryLimit::Unlimited;
    s.retry.delay_ms = 0;
    s.retry.circuit_after = 0;
    s
}

fn dollars(usd: f64) -> Limits {
    Limits {
        max_cost_usd: Some(usd),
        max_tokens: None,
    }
}

fn task_budget(t: &str, usd: f64) -> CostPolicy {
    CostPolicy {
        task_budgets: [(id(t), dollars(usd))].into(),
        ..CostPolicy::default()
    }
}

fn what_now(g: &Given) -> Dispatch {
    let busy = |_: &TaskId| false;
    dispatch(
        &g.state,
        Timestamp(g.now),
        &Capacity {
            busy: &busy,
            free: 8,
            replanning: false,
            replan_stopped: false,
        },
    )
}

fn starts(d: &Dispatch) -> Vec<&str> {
    d.starts.iter().map(|(t, _)| t.as_str()).collect()
}

fn over(d: &Dispatch) -> Vec<&str> {
    d.over_budget.iter().map(TaskId::as_str).collect()
}

#[test]
fn usage_is_priced_with_the_workflow_prices_and_a_reported_cost_wins() {
    let prices = Prices::from([(
        "sonnet".to_owned(),
        Price {
            input: 3.0,
            output: 15.0,
            cache_read: Some(0.3),
            cache_write: Some(3.75),
        },
    )]);
    let g = given_costed(
        vec![untested("a")],
        CostPolicy {
            prices,
            ..CostPolicy::default()
        },
    )
    .and(start("a"))
    .when(used(
        "a",
        UsageStage::Agent,
        vec![
            report("sonnet", 1_000_000, 100_000, None),
            report("sonnet", 10, 10, Some(0.25)),
            report("mystery", 5, 5, None),
        ],
    ))
    .then_ok();
    let u = &g.state.usage;
    assert_eq!(u.len(), 3);
    assert_eq!((u[0].cost, u[0].cost_usd), (CostSource::Priced, Some(4.5)));
    assert_eq!(
        (u[1].cost, u[1].cost_usd),
        (CostSource::Reported, Some(0.25))
    );
    assert_eq!((u[2].cost, u[2].cost_usd), (CostSource::Unpriced, None));
    assert!(u.iter().all(|r| r.attempt == 1 && r.task == id("a")));
    let spend = g.task("a").spend;
    assert!((spend.cost_usd - 4.75).abs() < 1e-9);
    assert_eq!((spend.unpriced, spend.tokens.total()), (1, 1_100_030));
    assert_eq!(g.state.spend, spend, "the run's spend is its tasks' spend");
}

#[test]
fn bad_usage_is_refused_and_nothing_is_recorded() {
    let mut bad = report("m", 10, 10, Some(f64::NAN));
    given_run(vec![untested("a")])
        .and(start("a"))
        .when(used("a", UsageStage::Agent, vec![bad.clone()]))
        .then_rejected_where(|r| matches!(r, Rejection::InvalidUsage { .. }));
    bad.cost_usd = None;
    bad.tokens.cache_read = 11;
    given_run(vec![untested("a")])
        .and(start("a"))
        .when(used("a", UsageStage::Agent, vec![bad]))
        .then_rejected_where(|r| matches!(r, Rejection::InvalidUsage { .. }));
}

#[test]
fn a_task_budget_stops_that_task_and_nothing_else() {
    let g = given_costed(
        vec![never_give_up("a"), untested("b")],
        task_budget("a", 1.0),
    )
    .and(start("a"))
    .and(spent("a", 1.2))
    .and(fail_stage("a", "boom"));
    // A never-give-up task: its retry was scheduled, and the budget is what stops it.
    let d = what_now(&g);
    assert_eq!((starts(&d), over(&d)), (vec!["b"], vec!["a"]));
    g.clone()
        .when(start("a"))
        .then_rejected_where(|r| matches!(r, Rejection::BudgetSpent { .. }));
    let g = g
        .when(CommandKind::StopForBudget { task: id("a") })
        .then(vec![
            EventKind::BudgetSpent {
                task: id("a"),
                budget: Some(id("a")),
                kind: BudgetKind::CostUsd,
                limit: 1.0,
                spent: 1.2,
            },
            EventKind::TaskFailed {
                task: id("a"),
                reason: "budget-spent: task a's cost budget of $1.0000 is spent ($1.2000)".into(),
            },
        ]);
    assert_eq!(g.status("a"), TaskStatus::Failed);
    let g = complete(g, "b");
    match outcome(&g.state) {
        RunOutcome::Paused { reason } => {
            assert!(reason.contains("task a's cost budget"), "{reason}");
            assert!(reason.contains("runlog budget run-1"), "{reason}");
        }
        other => panic!("a budget pauses the run, got {other:?}"),
    }
}

#[test]
fn the_run_budget_stops_every_new_attempt_and_the_replanner() {
    let g = given_run(vec![untested("a"), untested("b"), untested("c")])
        .and(budget(None, None, Some(1_000)))
        .and(start("a"))
        .and(used(
            "a",
            UsageStage::Agent,
            vec![report("m", 900, 200, None)],
        ));
    // The attempt already running finishes.
    let g = g.when(submit("a")).then_ok();
    assert_eq!(g.status("a"), TaskStatus::Done);
    let d = what_now(&g);
    assert_eq!((starts(&d), over(&d)), (vec![], vec!["b", "c"]));
    let g = g
        .and(CommandKind::StopForBudget { task: id("b") })
        .and(CommandKind::StopForBudget { task: id("c") });
    assert_eq!(
        g.task("b")
            .budget_stop
            .as_ref()
            .map(|s| (s.budget.clone(), s.kind)),
        Some((None, BudgetKind::Tokens))
    );
    assert!(what_now(&g).settled(
        &Capacity {
            busy: &|_| false,
            free: 8,
            replanning: false,
            replan_stopped: false
        },
        0
    ));
    assert!(matches!(outcome(&g.state), RunOutcome::Paused { .. }));
}

#[test]
fn a_replan_waits_while_the_run_budget_is_spent() {
    let mut writer = untested("writer");
    writer.description = "rewrite lib/core.py".into();
    writer.destructive = Some(true);
    writer.files = vec!["lib/core.py".into()];
    let mut reader = untested("reader");
    reader.files = vec!["lib/core.py".into()];
    let g = given_run(vec![writer, reader])
        .and(budget(None, Some(0.5), None))
        .and(start("writer"))
        .and(spent("writer", 0.5))
        .and(submit("writer"));
    assert!(
        g.state.replan.is_some(),
        "the destructive task asked for a replan"
    );
    assert!(!what_now(&g).replan, "no replan starts on a spent budget");
    let g = g.and(budget(None, Some(5.0), None));
    assert!(what_now(&g).replan, "raised: the replanner may run");
}

#[test]
fn a_rescue_is_stopped_by_the_budget_its_evaluation_spent() {
    let mut judged = untested("a");
    judged.eval = Some("./judge.sh".into());
    let g = given_run(vec![judged])
        .and(budget(Some("a"), Some(0.1), None))
        .and(start("a"))
        .and(spent("a", 0.04))
        .and(submit("a"))
        .and(used(
            "a",
            UsageStage::Evaluator,
            vec![report("judge", 10, 10, Some(0.07))],
        ))
        .and(score("a", 0.2));
    assert_eq!(g.task("a").last_gate, Some(GateOutcome::Rescue { n: 1 }));
    assert_eq!(over(&what_now(&g)), vec!["a"]);
}

#[test]
fn a_raised_budget_reopens_what_it_stopped_and_resume_goes_on() {
    let g = given_costed(vec![never_give_up("a")], task_budget("a", 1.0))
        .and(start("a"))
        .and(spent("a", 1.5))
        .and(fail_stage("a", "boom"))
        .and(CommandKind::StopForBudget { task: id("a") })
        .and(CommandKind::Finish);
    assert!(matches!(
        g.state.status,
        RunStatus::Finished(RunOutcome::Paused { .. })
    ));
    // Not enough: still spent, nothing reopened.
    let g = g
        .when(budget(Some("a"), Some(1.4), None))
        .then(vec![EventKind::BudgetSet {
            task: Some(id("a")),
            limits: Limits {
                max_cost_usd: Some(1.4),
                max_tokens: None,
            },
            by: "ana".into(),
        }]);
    let g = g.when(budget(Some("a"), Some(3.0), None)).then(vec![
        EventKind::BudgetSet {
            task: Some(id("a")),
            limits: Limits {
                max_cost_usd: Some(3.0),
                max_tokens: None,
            },
            by: "ana".into(),
        },
        EventKind::TaskReopened {
            task: id("a"),
            by: "ana".into(),
        },
    ]);
    let g = g.and(CommandKind::Resume {
        reason: "budget raised".into(),
    });
    let g = g.when(start("a")).then_ok();
    assert_eq!(g.task("a").attempt, 2, "the same task goes on");
    assert_eq!(g.task("a").budget_stop, None);
}

#[test]
fn removing_a_bound_keeps_the_other() {
    let g = given_run(vec![untested("a")])
        .and(budget(None, Some(2.0), Some(500)))
        .and(CommandKind::SetBudget {
            task: None,
            max_cost_usd: Change::Remove,
            max_tokens: Change::Keep,
            by: "ana".into(),
        });
    assert_eq!(
        g.state.budget,
        Limits {
            max_cost_usd: None,
            max_tokens: Some(500)
        }
    );
    g.when(budget(None, Some(-1.0), None))
        .then_rejected_where(|r| matches!(r, Rejection::InvalidSetting { .. }));
}

#[test]
fn a_budget_change_is_a_person_s_decision_recorded_with_who() {
    let g = given_run(vec![untested("a")]);
    let cmd = Command::new(Timestamp(g.now), budget(None, Some(1.0), None)).issued_by(Principal {
        name: "ana@ops".into(),
        via: runlog_core::Via::Token,
    });
    let events = decide(&g.state, cmd).unwrap();
    assert!(matches!(
        &events[0].kind,
        EventKind::Attributed { principal, .. } if principal == "ana@ops"
    ));
}

#[test]
fn a_rollback_past_a_usage_record_gives_that_budget_back() {
    let g = given_costed(
        vec![never_give_up("a")],
        CostPolicy {
            budget: dollars(1.0),
            ..CostPolicy::default()
        },
    )
    .and(start("a"));
    let before_usage = g.state.seq;
    let g = g.and(spent("a", 2.0)).and(fail_stage("a", "boom"));
    assert_eq!(over(&what_now(&g)), vec!["a"]);
    let g = g.and(CommandKind::Rollback {
        to_seq: before_usage,
        reason: "that attempt was a mistake".into(),
        by: "ana".into(),
    });
    assert_eq!(g.state.spend, Spend::default());
    assert!(g.state.usage.is_empty());
    assert_eq!(g.state.run_overspent(), None);
}

#[test]
fn stopping_a_task_with_budget_left_is_refused() {
    given_run(vec![untested("a")])
        .and(budget(Some("a"), Some(1.0), None))
        .when(CommandKind::StopForBudget { task: id("a") })
        .then_rejected_where(|r| matches!(r, Rejection::BudgetNotSpent { .. }));
    given_run(vec![untested("a")])
        .and(budget(Some("a"), Some(1.0), None))
        .and(start("a"))
        .and(spent("a", 2.0))
        .when(CommandKind::StopForBudget { task: id("a") })
        .then_rejected_where(|r| matches!(r, Rejection::BudgetNotSpent { .. }));
}

#[test]
fn a_never_give_up_task_needs_a_bound_and_a_cost_budget_is_one() {
    given([])
        .when(CommandKind::StartRun {
            run: RunId::from("run-1"),
            workflow: "test".into(),
            workflow_hash: Hash::of(b"test"),
            settings: Settings::default(),
            tasks: vec![never_give_up("a")],
            cost: CostPolicy::default(),
            review: Default::default(),
        })
        .then_rejected_where(|r| matches!(r, Rejection::InvalidSetting { .. }));
    let g = given_costed(vec![never_give_up("a")], task_budget("a", 1.0));
    assert_eq!(g.task("a").budget, dollars(1.0));
    assert!(matches!(
        g.events.last().map(|e| &e.kind),
        Some(EventKind::BudgetSet { by, .. }) if by == "workflow"
    ));
}

fn called(c: model_call::ModelCall) -> CommandKind {
    CommandKind::RecordModelCall { call: Box::new(c) }
}

fn sonnet_prices() -> CostPolicy {
    CostPolicy {
        prices: Prices::from([(
            "sonnet".to_owned(),
            Price {
                input: 3.0,
                output: 15.0,
                cache_read: None,
                cache_write: None,
            },
        )]),
        ..CostPolicy::default()
    }
}

#[test]
fn a_model_call_is_priced_and_counted_as_the_attempts_usage() {
    let g = given_costed(vec![untested("a")], sonnet_prices())
        .and(start("a"))
        .when(called(call("a", 1, 1, 1_000_000, 100_000)))
        .then_ok();
    let recorded = g.events.iter().find_map(|e| match &e.kind {
        EventKind::ModelCalled(c) => Some(c),
        _ => None,
    });
    let recorded = recorded.expect("a model-called event");
    assert_eq!(
        (recorded.cost, recorded.cost_usd),
        (CostSource::Priced, Some(4.5)),
        "priced with the run's price for its model"
    );
    let spend = g.task("a").spend;
    assert!((spend.cost_usd - 4.5).abs() < 1e-9);
    assert_eq!(spend.tokens.total(), 1_100_000);
    assert_eq!(g.state.spend, spend, "the run's spend is its tasks' spend");
    assert_eq!(
        g.state.usage.len(),
        1,
        "one record, for costs by task, model, stage"
    );
    assert_eq!(g.state.usage[0].provider.as_deref(), Some("anthropic"));
}

#[test]
fn a_providers_own_cost_wins_over_the_price_and_an_unknown_model_is_unpriced() {
    let mut own = call("a", 1, 1, 10, 10);
    own.cost_usd = Some(0.25);
    let mut unknown = call("a", 1, 2, 10, 10);
    unknown.model = Some("mystery".into());
    let g = given_costed(vec![untested("a")], sonnet_prices())
        .and(start("a"))
        .and(called(own))
        .and(called(unknown));
    let u = &g.state.usage;
    assert_eq!(
        (u[0].cost, u[0].cost_usd),
        (CostSource::Reported, Some(0.25))
    );
    assert_eq!((u[1].cost, u[1].cost_usd), (CostSource::Unpriced, None));
    assert_eq!(
        g.task("a").spend.unpriced,
        1,
        "shown as unpriced, never as free"
    );
}

#[test]
fn a_call_the_task_cannot_have_made_is_refused_and_nothing_is_recorded() {
    let started = || given_run(vec![untested("a")]).and(start("a"));
    let refused = |r: &Rejection| matches!(r, Rejection::InvalidUsage { .. });
    // Of an attempt not started yet.
    started()
        .when(called(call("a", 2, 1, 10, 10)))
        .then_rejected_where(refused);
    // Numbered from 0.
    started()
        .when(called(call("a", 1, 0, 10, 10)))
        .then_rejected_where(refused);
    // Cached tokens beyond the input.
    let mut c = call("a", 1, 1, 10, 10);
    c.tokens.cache_read = 11;
    started().when(called(c)).then_rejected_where(refused);
    // Of a task the run does not have.
    started()
        .when(called(call("nope", 1, 1, 10, 10)))
        .then_rejected_where(|r| matches!(r, Rejection::UnknownTask { .. }));
}

#[test]
fn a_call_recorded_late_counts_for_the_attempt_that_made_it() {
    let g = given_costed(vec![never_give_up("a")], task_budget("a", 10.0))
        .and(start("a"))
        .and(fail_stage("a", "boom"))
        .and(start("a"))
        .when(called(call("a", 1, 4, 10, 10)))
        .then_ok();
    assert_eq!(g.state.usage[0].attempt, 1);
    assert_eq!(g.task("a").attempt, 2);
}

#[test]
fn model_calls_are_spend_the_run_budget_sees() {
    let mut policy = sonnet_prices();
    policy.budget = dollars(1.0);
    let g = given_costed(vec![untested("a"), untested("b")], policy)
        .and(start("a"))
        // 400,000 input tokens at $3 a million: $1.20 of the run's $1.
        .and(called(call("a", 1, 1, 400_000, 0)));
    // The attempt already running finishes; nothing new starts.
    let g = g.when(submit("a")).then_ok();
    let d = what_now(&g);
    assert_eq!((starts(&d), over(&d)), (vec![], vec!["b"]));
}
