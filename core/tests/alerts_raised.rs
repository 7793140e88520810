//! Which events raise which alerts: a budget's shares crossed (the highest a record crosses,
//! once), a run that failed, a verdict held for a person.

mod support;
use runlog_core::alerts::AlertOn;
use runlog_core::projections::alerts::raised;
use runlog_core::usage::*;
use runlog_core::*;
use support::*;

fn budgeted(usd: f64) -> Given {
    let mut a = task("a");
    a.requires_testing = false;
    let cost = CostPolicy {
        budget: Limits {
            max_cost_usd: Some(usd),
            max_tokens: None,
        },
        ..CostPolicy::default()
    };
    given_costed(vec![a], cost).and(start("a"))
}

fn spent(usd: f64) -> CommandKind {
    CommandKind::RecordUsage {
        task: id("a"),
        stage: UsageStage::Agent,
        reports: vec![UsageReport {
            model: Some("m".into()),
            provider: None,
            tokens: Tokens::default(),
            cost_usd: Some(usd),
        }],
    }
}

/// The alerts the last event of `g` raised.
fn last(g: &Given) -> Vec<(AlertOn, String)> {
    let e = g.events.last().unwrap();
    raised(&e.kind, &g.state)
        .into_iter()
        .map(|r| (r.on, r.text))
        .collect()
}

#[test]
fn a_budget_alerts_once_at_each_share_it_crosses_and_a_jump_says_the_highest() {
    let g = budgeted(1.0).and(spent(0.3));
    assert_eq!(last(&g), []);
    let g = g.and(spent(0.25));
    assert_eq!(
        last(&g),
        [(
            AlertOn::Budget,
            "run run-1: the run's cost budget of $1.0000 is 50% spent ($0.5500)".into()
        )]
    );
    let g = g.and(spent(0.1));
    assert_eq!(last(&g), [], "65 % crosses nothing new");
    // From 65 % past 80 % and 100 % at once: the highest.
    let g = g.and(spent(0.5));
    assert_eq!(
        last(&g),
        [(
            AlertOn::Budget,
            "run run-1: the run's cost budget of $1.0000 is 100% spent ($1.1500)".into()
        )]
    );
}

#[test]
fn a_failed_run_and_a_verdict_held_for_a_person_raise_theirs() {
    let g = budgeted(10.0).and(fail_stage("a", "boom"));
    let failed = EventKind::RunFinished {
        outcome: RunOutcome::Failed {
            failed: vec![id("a")],
            blocked: vec![],
        },
    };
    let r = raised(&failed, &g.state);
    assert_eq!(r[0].on, AlertOn::RunFailed);
    assert_eq!(r[0].text, "run run-1 failed: a failed");
    let held = EventKind::ReviewHeld {
        task: id("a"),
        score: 0.4,
        threshold: 0.7,
        outcome: GateOutcome::Rescue { n: 1 },
    };
    let r = raised(&held, &g.state);
    assert_eq!(
        (r[0].on, r[0].task.clone()),
        (AlertOn::Waiting, Some(id("a")))
    );
    assert!(r[0].text.contains("runlog review run-1"), "{}", r[0].text);
}
