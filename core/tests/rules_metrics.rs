//! The success metrics, from history: the verification loop's final test pass rate, recovery
//! from test failures without a person, no task done with failing tests; the eval gate's
//! first-try passes and rescues; every human decision and who made it; time in each state.

mod support;
use runlog_core::projections::project;
use runlog_core::*;
use support::*;

fn metrics(g: &Given) -> runlog_core::projections::RunMetrics {
    project(&g.events).metrics
}

#[test]
fn a_test_failure_the_agent_fixes_is_recovered_one_a_person_decided_is_not() {
    // Given a and b fail their tests once and their agents fix them; b then waits for its
    // evaluation and a person approves it.
    let g = given_run(vec![task("a").tested(), task("b").tested().evaluated()])
        .and(start("a"))
        .and(submit("a"))
        .and(tests("a", false))
        .and(start("a"))
        .and(submit("a"))
        .and(tests("a", true))
        .and(start("b"))
        .and(submit("b"))
        .and(tests("b", false))
        .and(start("b"))
        .and(submit("b"))
        .and(tests("b", true));
    assert_eq!(g.status("b"), TaskStatus::PendingEval);
    let g = g.and(approve("b"));
    // Then both end with passing tests, two failures, one recovered without a person.
    let m = metrics(&g);
    assert_eq!(
        (m.final_test_pass_rate.of, m.final_test_pass_rate.total),
        (2, 2)
    );
    assert_eq!(m.test_failures, 2);
    assert_eq!(
        (m.autonomous_recovery.of, m.autonomous_recovery.total),
        (1, 2)
    );
    assert_eq!(m.autonomous_recovery.rate, Some(0.5));
    assert!(m.done_with_failing_tests.is_empty());
    assert_eq!(m.interventions.len(), 1);
    assert_eq!(m.interventions[0].kind, "approve");
    assert_eq!(m.interventions[0].task, Some(id("b")));
    assert_eq!(m.interventions_by_kind.get("approve"), Some(&1));
    assert_eq!((m.attempts, m.tasks_started, m.max_attempts), (4, 2, 2));
    assert_eq!(m.attempts_per_task(), Some(2.0));
}

#[test]
fn first_try_passes_and_rescues_that_end_in_a_pass_are_counted_per_task() {
    // Given p passes its eval at once, r is rescued once then passes, c is rescued until it
    // fails.
    let mut g = given_run(vec![
        task("p").evaluated(),
        task("r").evaluated(),
        task("c").evaluated(),
    ])
    .and(start("p"))
    .and(submit("p"))
    .and(score("p", 0.9))
    .and(start("r"))
    .and(submit("r"))
    .and(score("r", 0.3))
    .and(start("r"))
    .and(submit("r"))
    .and(score("r", 0.9));
    while g.status("c") != TaskStatus::Failed {
        g = g.and(start("c")).and(submit("c")).and(score("c", 0.2));
    }
    // Then one of three passed at the first try, and one of the two rescued tasks passed.
    let m = metrics(&g);
    assert_eq!(
        (m.eval_pass_at_first_try.of, m.eval_pass_at_first_try.total),
        (1, 3)
    );
    assert_eq!((m.rescue_success.of, m.rescue_success.total), (1, 2));
    assert!(m.interventions.is_empty(), "the gate decided alone");
    // Nothing with tests: no rate rather than a made-up one.
    assert_eq!(m.final_test_pass_rate.rate, None);
}

#[test]
fn time_in_each_state_counts_until_a_task_finishes_and_rollbacks_are_decisions() {
    // Given a waits 5 s open, runs 10 s and is done; then a person rolls the run back.
    let g = given_run(vec![task("a")])
        .wait_ms(5_000)
        .and(start("a"))
        .wait_ms(10_000)
        .and(submit("a"));
    assert_eq!(g.status("a"), TaskStatus::Done);
    let g = g.wait_ms(60_000).and(CommandKind::Rollback {
        to_seq: 2,
        reason: "try again".into(),
        by: "ana".into(),
    });
    let m = metrics(&g);
    // Then open and in-progress hold the waits (each event takes a second of its own), done
    // is not counted, and the rollback is ana's decision; a is open again since the rollback.
    let open = m.time_in_state_ms["open"];
    let running = m.time_in_state_ms["in-progress"];
    assert!((5_000..7_000).contains(&open), "{open}");
    assert!((10_000..12_000).contains(&running), "{running}");
    assert!(!m.time_in_state_ms.contains_key("done"));
    assert_eq!(m.interventions_by_who.get("ana"), Some(&1));
    assert_eq!(m.interventions[0].kind, "rollback");
    assert_eq!(g.status("a"), TaskStatus::Open);
}
