//! Seed 000: per-task re-evaluation. After a destructive task is done, pending tasks touching
//! its files trigger `ReplanRequested` and dispatch pauses until `PlanRevised`, which cancels,
//! adds and records replacements; regenerating an earlier plan is reported as a loop.

mod support;
use runlog_core::*;
use support::*;

fn analysts() -> Vec<TaskSpec> {
    vec![
        TaskSpec {
            run: Some("agent".into()),
            ..TaskSpec::new("t1", "Extract BreakoutAnalyst from lib/analysts.py")
        },
        TaskSpec {
            run: Some("agent".into()),
            ..TaskSpec::new("t2", "Extract VolumeAnalyst from lib/analysts.py")
        },
        TaskSpec {
            run: Some("agent".into()),
            ..TaskSpec::new("t3", "Add a feature to lib/api.py")
        },
    ]
}

#[test]
fn a_destructive_task_sharing_files_with_a_pending_task_requests_a_replan() {
    let g = given_run(analysts()).and(start("t1"));
    let g = g.when(submit("t1")).then_ok();
    let request = g.events.last().unwrap();
    assert_eq!(
        request.kind,
        EventKind::ReplanRequested {
            after_task: id("t1"),
            reason: "destructive task t1 changed files that pending tasks touch: lib/analysts.py"
                .into(),
            touched_files: vec!["lib/analysts.py".into()],
            affected: vec![id("t2")],
        }
    );
}

#[test]
fn dispatch_pauses_until_the_plan_is_revised() {
    let g = given_run(analysts()).and(start("t1")).and(submit("t1"));
    g.clone()
        .when(start("t3"))
        .then_rejected(Rejection::ReplanPending {
            after_task: id("t1"),
        });
    let g = g
        .when(CommandKind::RevisePlan {
            cancel: vec![id("t2")],
            add: vec![TaskSpec::new(
                "t2b",
                "Extract VolumeAnalyst into lib/analysts/volume.py",
            )],
            replaces: vec![Replacement {
                old: id("t2"),
                new: id("t2b"),
            }],
            reason: "t1 already split the file".into(),
            answers: None,
        })
        .then_ok();
    assert_eq!(g.status("t2"), TaskStatus::Cancelled);
    assert_eq!(g.task("t2").replaced_by, vec![id("t2b")]);
    g.when(start("t3")).then_ok();
}

#[test]
fn dependents_of_a_replaced_task_wait_for_its_replacement() {
    let mut tasks = analysts();
    tasks.push(task("t4").after(&["t2"]));
    let g = given_run(tasks)
        .and(start("t1"))
        .and(submit("t1"))
        .and(CommandKind::RevisePlan {
            cancel: vec![id("t2")],
            add: vec![task("t2b")],
            replaces: vec![Replacement {
                old: id("t2"),
                new: id("t2b"),
            }],
            reason: "replan".into(),
            answers: None,
        });
    assert_eq!(
        g.state.readiness(&id("t4")),
        Readiness::Waiting {
            on: vec![id("t2b")]
        }
    );
}

#[test]
fn a_non_destructive_task_does_not_request_a_replan() {
    let tasks = vec![
        TaskSpec::new("read", "Read lib/analysts.py and summarise it"),
        TaskSpec::new("t2", "Extract VolumeAnalyst from lib/analysts.py"),
    ];
    let g = given_run(tasks).and(start("read")).and(submit("read"));
    assert!(g.state.replan.is_none());
}

#[test]
fn no_replan_when_pending_tasks_touch_other_files() {
    let tasks = vec![
        TaskSpec::new("u", "Modify lib/utils.py"),
        TaskSpec::new("api", "Add feature to lib/api.py"),
    ];
    let g = given_run(tasks).and(start("u")).and(submit("u"));
    assert!(g.state.replan.is_none());
}

#[test]
fn no_replan_when_no_task_is_pending() {
    let g = given_run(vec![TaskSpec::new("rm", "Delete tmp/scratch.py")])
        .and(start("rm"))
        .and(submit("rm"));
    assert!(g.state.replan.is_none());
}

#[test]
fn explicit_files_and_flag_override_the_description() {
    let tasks = vec![
        task("a").files(&["src/a.rs"]).destructive(true),
        task("b").files(&["src/a.rs"]),
        task("c").files(&["src/a.rs"]).destructive(false),
    ];
    // c says it is not destructive even though "do c" has no verb either way.
    let g = given_run(tasks.clone()).and(start("c")).and(submit("c"));
    assert!(g.state.replan.is_none());
    let g = given_run(tasks).and(start("a")).and(submit("a"));
    assert_eq!(
        g.state.replan.as_ref().unwrap().affected,
        vec![id("b"), id("c")]
    );
}

#[test]
fn the_replan_is_requested_when_the_gate_passes_not_at_submit() {
    let tasks = vec![
        task("a").files(&["x.py"]).destructive(true).evaluated(),
        task("b").files(&["x.py"]),
    ];
    let g = given_run(tasks).and(start("a")).and(submit("a"));
    assert!(g.state.replan.is_none(), "not done yet: pending-eval");
    let g = g.and(score("a", 0.9));
    assert!(g.state.replan.is_some());
}

#[test]
fn regenerating_an_earlier_plan_is_reported_as_a_loop() {
    let mut tasks = analysts();
    tasks.push(TaskSpec::new("t5", "Remove lib/analysts.py"));
    let revision = |new_id: &str| CommandKind::RevisePlan {
        cancel: vec![],
        add: vec![TaskSpec::new(
            new_id,
            "Extract VolumeAnalyst from lib/analysts.py",
        )],
        replaces: vec![],
        reason: "still need VolumeAnalyst".into(),
        answers: None,
    };
    let g = given_run(tasks)
        .and(CommandKind::RevisePlan {
            cancel: vec![id("t2")],
            add: vec![],
            replaces: vec![],
            reason: "drop".into(),
            answers: None,
        })
        .and(revision("again-1"))
        .and(CommandKind::Cancel {
            task: id("again-1"),
            reason: "drop".into(),
        });
    // Same remaining plan content as revision 2, under a new id: a regeneration loop.
    let g = g.when(revision("again-2")).then_ok();
    assert!(matches!(
        g.events.last().map(|e| &e.kind),
        Some(EventKind::ReplanLoopDetected {
            same_as_revision: 2,
            ..
        })
    ));
    assert_eq!(
        g.state.task(&id("again-2")),
        None,
        "a looping plan is not applied"
    );
}

#[test]
fn a_replanner_re_adding_done_work_loops_and_the_run_pauses_for_a_person() {
    let spec =
        |id: &str, what: &str| TaskSpec::new(id, format!("Extract {what} from lib/analysts.py"));
    let g = given_run(vec![spec("x", "X"), spec("y", "Y"), spec("z", "Z")])
        .and(start("x"))
        .and(submit("x"));
    // Revision 1 swaps y for an identical y2: the remaining plan is {Y, Z}.
    let g = g
        .and(CommandKind::RevisePlan {
            cancel: vec![id("y")],
            add: vec![spec("y2", "Y")],
            replaces: vec![Replacement {
                old: id("y"),
                new: id("y2"),
            }],
            reason: "fresh file state".into(),
            answers: None,
        })
        .and(start("y2"))
        .and(submit("y2"));
    assert!(
        g.state.replan.is_some(),
        "y2 is destructive and z still needs lib/analysts.py"
    );
    // The replanner forgets y2 happened and regenerates {Y, Z}: the same plan as revision 1.
    let g = g
        .when(CommandKind::RevisePlan {
            cancel: vec![id("z")],
            add: vec![spec("y3", "Y"), spec("z3", "Z")],
            replaces: vec![],
            reason: "still need Y and Z".into(),
            answers: None,
        })
        .then_ok();
    assert!(matches!(
        g.events.last().map(|e| &e.kind),
        Some(EventKind::ReplanLoopDetected {
            same_as_revision: 1,
            ..
        })
    ));
    assert!(g.state.replan.as_ref().unwrap().loop_detected);
    g.clone()
        .when(start("z"))
        .then_rejected(Rejection::ReplanPending {
            after_task: id("y2"),
        });
    assert!(
        matches!(outcome(&g.state), RunOutcome::Paused { reason } if reason.contains("regeneration loop"))
    );
}

#[test]
fn a_revision_may_not_cancel_finished_tasks_or_reuse_ids() {
    let g = given_run(analysts()).and(start("t1")).and(submit("t1"));
    g.clone()
        .when(CommandKind::RevisePlan {
            cancel: vec![id("t1")],
            add: vec![],
            replaces: vec![],
            reason: "x".into(),
            answers: None,
        })
        .then_rejected_where(|r| matches!(r, Rejection::InvalidRevision { .. }));
    g.when(CommandKind::RevisePlan {
        cancel: vec![],
        add: vec![task("t3")],
        replaces: vec![],
        reason: "x".into(),
        answers: None,
    })
    .then_rejected(Rejection::DuplicateTask { task: id("t3") });
}

#[test]
fn paths_are_found_in_descriptions() {
    assert_eq!(
        paths_in("Extract VolumeAnalyst from lib/analysts.py, then update src/main.rs."),
        vec!["lib/analysts.py".to_owned(), "src/main.rs".to_owned()]
    );
    assert_eq!(
        paths_in("Edit app.py (see e.g. the docs)"),
        vec!["app.py".to_owned()]
    );
    assert!(paths_in("version 1.2 released at https://x.io/a.py").is_empty());
}

#[test]
fn a_request_raised_after_the_board_a_revision_was_made_from_survives_it() {
    let mut tasks = analysts();
    tasks.push(TaskSpec {
        run: Some("agent".into()),
        destructive: Some(true),
        files: vec!["lib/api.py".into()],
        ..TaskSpec::new("t4", "Rewrite the request layer")
    });
    let g = given_run(tasks)
        .and(start("t1"))
        .and(start("t4"))
        .and(submit("t1"));
    // The replan command reads the board now; t4 finishes while it works.
    let seen = g.state.seq;
    let g = g.and(submit("t4"));
    let revise = |cancel: &str, answers: Option<u64>| CommandKind::RevisePlan {
        cancel: vec![id(cancel)],
        add: vec![],
        replaces: vec![],
        reason: "revised".into(),
        answers,
    };
    let after = g.clone().when(revise("t2", Some(seen))).then_ok();
    let pending = after
        .state
        .replan
        .as_ref()
        .expect("t4's request is still pending");
    assert_eq!(pending.after_task, id("t4"));
    assert_eq!(pending.affected, vec![id("t3")]);
    after
        .clone()
        .when(start("t3"))
        .then_rejected(Rejection::ReplanPending {
            after_task: id("t4"),
        });
    let head = after.state.seq;
    let served = after.when(revise("t3", Some(head))).then_ok();
    assert!(
        served.state.replan.is_none(),
        "a revision from the current board answers it"
    );
    // A revision without a board (a person, now) answers every request at once.
    let by_hand = g.when(revise("t2", None)).then_ok();
    assert!(by_hand.state.replan.is_none());
}
