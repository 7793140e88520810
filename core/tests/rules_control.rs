//! Control: plan validation, the run life cycle (interrupt, resume, finish), rollback, fork,
//! messages, manual reopen and cancel.

mod support;
use runlog_core::*;
use support::*;

fn start_run(tasks: Vec<TaskSpec>) -> CommandKind {
    CommandKind::StartRun {
        run: RunId::from("r"),
        workflow: "w".into(),
        workflow_hash: Hash::of(b"w"),
        settings: Settings::default(),
        tasks,
        cost: Default::default(),
        review: Default::default(),
    }
}

#[test]
fn a_plan_with_duplicate_ids_is_rejected() {
    given([])
        .when(start_run(vec![task("a"), task("a")]))
        .then_rejected(Rejection::DuplicateTask { task: id("a") });
}

#[test]
fn a_plan_with_a_missing_dependency_is_rejected() {
    given([])
        .when(start_run(vec![task("a").after(&["ghost"])]))
        .then_rejected(Rejection::UnknownDependency {
            task: id("a"),
            missing: id("ghost"),
        });
}

#[test]
fn a_plan_with_a_cycle_is_rejected_naming_the_cycle() {
    given([])
        .when(start_run(vec![
            task("a").after(&["c"]),
            task("b").after(&["a"]),
            task("c").after(&["b"]),
        ]))
        .then_rejected_where(|r| match r {
            Rejection::DependencyCycle { cycle } => {
                cycle.len() == 4 && cycle.first() == cycle.last()
            }
            _ => false,
        });
}

#[test]
fn settings_out_of_range_are_rejected() {
    let bad = Settings {
        eval_threshold: 1.5,
        ..Settings::default()
    };
    given([])
        .when(CommandKind::StartRun {
            run: RunId::from("r"),
            workflow: "w".into(),
            workflow_hash: Hash::of(b"w"),
            settings: bad,
            tasks: vec![],
            cost: Default::default(),
            review: Default::default(),
        })
        .then_rejected_where(
            |r| matches!(r, Rejection::InvalidSetting { field, .. } if field == "eval_threshold"),
        );
}

#[test]
fn nothing_but_a_start_may_come_first() {
    given([])
        .when(start("a"))
        .then_rejected(Rejection::RunNotStarted);
    given_run(vec![])
        .when(start_run(vec![]))
        .then_rejected(Rejection::RunAlreadyStarted);
}

#[test]
fn an_interrupt_abandons_running_attempts_and_resume_retries_them() {
    let g = given_run(vec![task("a")]).and(start("a"));
    g.clone()
        .when(start("a"))
        .then_rejected(Rejection::AlreadyRunning {
            task: id("a"),
            attempt: 1,
        });
    let g = g
        .when(CommandKind::Interrupt {
            reason: "ctrl-c".into(),
        })
        .then_ok();
    assert!(!g.task("a").running);
    g.clone()
        .when(start("a"))
        .then_rejected(Rejection::RunInterrupted);
    let g = g
        .and(CommandKind::Resume {
            reason: "resume".into(),
        })
        .when(start("a"))
        .then_ok();
    assert_eq!(
        g.task("a").attempt,
        2,
        "the interrupted attempt is retried, same agent"
    );
    assert_eq!(g.task("a").agent, Some(AgentId::from("agent-a")));
}

#[test]
fn finish_computes_the_outcome_from_the_board() {
    let g = complete(given_run(vec![task("a")]), "a");
    let g = g
        .when(CommandKind::Finish)
        .then(vec![EventKind::RunFinished {
            outcome: RunOutcome::Succeeded,
        }]);
    g.when(start("a")).then_rejected(Rejection::RunFinished);

    let settings = Settings {
        max_test_retries: 0,
        ..Settings::default()
    };
    let g = given_run_with(settings, vec![task("a").tested(), task("b").after(&["a"])])
        .and(start("a"))
        .and(submit("a"))
        .and(tests("a", false));
    g.when(CommandKind::Finish)
        .then(vec![EventKind::RunFinished {
            outcome: RunOutcome::Failed {
                failed: vec![id("a")],
                blocked: vec![id("b")],
            },
        }]);
}

#[test]
fn a_run_cannot_finish_while_attempts_run() {
    given_run(vec![task("a")])
        .and(start("a"))
        .when(CommandKind::Finish)
        .then_rejected(Rejection::StillRunning {
            running: vec![id("a")],
        });
}

#[test]
fn rollback_restores_the_state_after_the_target_seq_and_keeps_history() {
    let g = given_run(vec![task("a").evaluated(), task("b").after(&["a"])])
        .and(start("a"))
        .and(submit("a"));
    let seq_pending = g.state.seq;
    let g = g.and(score("a", 0.9)).and(start("b"));
    assert_eq!(g.status("a"), TaskStatus::Done);
    let head = g.events.len();
    let g = g
        .when(CommandKind::Rollback {
            to_seq: seq_pending,
            reason: "bad eval".into(),
            by: "alice".into(),
        })
        .then_ok();
    assert_eq!(
        g.events.len(),
        head + 1,
        "history stays: the rollback is appended"
    );
    assert_eq!(g.status("a"), TaskStatus::PendingEval);
    assert_eq!(g.status("b"), TaskStatus::Open);
    let mut expected = state_at(&g.events, seq_pending);
    expected.seq = g.state.seq;
    assert_eq!(g.state, expected);
}

#[test]
fn a_rollback_can_itself_be_rolled_back() {
    let g = given_run(vec![task("a"), task("b")])
        .and(start("a"))
        .and(submit("a"));
    let done_a = g.state.seq;
    let g = g.and(start("b")).and(submit("b"));
    let both_done = g.state.clone();
    let g = g.and(CommandKind::Rollback {
        to_seq: done_a,
        reason: "undo b".into(),
        by: "me".into(),
    });
    assert_eq!(g.status("b"), TaskStatus::Open);
    let g = g.and(CommandKind::Rollback {
        to_seq: both_done.seq,
        reason: "redo b".into(),
        by: "me".into(),
    });
    assert_eq!(g.status("b"), TaskStatus::Done);
    assert_eq!(g.state.tasks, both_done.tasks);
}

#[test]
fn rollback_to_a_seq_outside_the_history_is_rejected_with_the_head() {
    let g = given_run(vec![task("a")]);
    let head = g.state.seq;
    g.when(CommandKind::Rollback {
        to_seq: 99,
        reason: "x".into(),
        by: "me".into(),
    })
    .then_rejected(Rejection::SeqOutOfRange { to_seq: 99, head });
}

#[test]
fn a_fork_starts_from_the_parents_state_at_the_fork_point() {
    let parent = given_run(vec![task("a"), task("b").after(&["a"])])
        .and(start("a"))
        .and(submit("a"));
    let at = parent.state.seq;
    let parent = parent.and(start("b")).and(submit("b"));
    let parent_events = parent.events.clone();
    let fork_events = decide(
        &RunState::default(),
        Command::new(
            Timestamp(T0 + 100_000),
            CommandKind::StartFork {
                run: RunId::from("r-fork"),
                from_run: RunId::from("run-1"),
                at_seq: at,
                from_hash: Hash::default(),
            },
        ),
    )
    .unwrap();
    let state = fold_with(&fork_events, &mut |run, seq| {
        (run.as_str() == "run-1").then(|| state_at(&parent_events, seq))
    });
    assert_eq!(state.status_of(&id("a")), Some(TaskStatus::Done));
    assert_eq!(state.status_of(&id("b")), Some(TaskStatus::Open));
    assert_eq!(state.run.as_ref().unwrap().id, RunId::from("r-fork"));
    assert_eq!(state.fork.as_ref().unwrap().from_run, RunId::from("run-1"));
    assert_eq!(state.fork.as_ref().unwrap().at_seq, at);
    assert_eq!(state.tasks, state_at(&parent_events, at).tasks);
}

#[test]
fn messages_are_recorded_for_the_run_or_a_task() {
    let g = given_run(vec![task("a")]);
    g.clone()
        .when(CommandKind::PostMessage {
            task: Some(id("a")),
            from: "user".into(),
            text: "same worktree please".into(),
        })
        .then(vec![EventKind::MessagePosted {
            task: Some(id("a")),
            from: "user".into(),
            text: "same worktree please".into(),
        }]);
    g.when(CommandKind::PostMessage {
        task: Some(id("zz")),
        from: "user".into(),
        text: "?".into(),
    })
    .then_rejected(Rejection::UnknownTask { task: id("zz") });
}

#[test]
fn a_failed_task_can_be_reopened_for_triage() {
    let s = RetryStrategy {
        limit: RetryLimit::Max(0),
        circuit_after: 0,
        ..RetryStrategy::default()
    };
    let g = given_run(vec![task("a").retry(s), task("b").after(&["a"])])
        .and(start("a"))
        .and(fail_stage("a", "boom"));
    assert_eq!(g.status("a"), TaskStatus::Failed);
    assert_eq!(
        g.state.readiness(&id("b")),
        Readiness::Blocked { by: vec![id("a")] }
    );
    let g = g
        .when(CommandKind::Reopen {
            task: id("a"),
            by: "alice".into(),
        })
        .then_ok();
    assert_eq!(g.status("a"), TaskStatus::Open);
    assert_eq!(
        g.state.readiness(&id("b")),
        Readiness::Waiting { on: vec![id("a")] }
    );
    g.when(CommandKind::Reopen {
        task: id("a"),
        by: "alice".into(),
    })
    .then_rejected_where(|r| matches!(r, Rejection::WrongStatus { .. }));
}

#[test]
fn a_cancelled_dependency_blocks_its_dependents() {
    let g = given_run(vec![task("a"), task("b").after(&["a"])])
        .when(CommandKind::Cancel {
            task: id("a"),
            reason: "not needed".into(),
        })
        .then_ok();
    assert_eq!(
        g.state.readiness(&id("b")),
        Readiness::Blocked { by: vec![id("a")] }
    );
}

#[test]
fn tasks_can_be_added_while_the_run_goes() {
    let g = given_run(vec![task("a")])
        .when(CommandKind::AddTask {
            spec: task("b").after(&["a"]),
        })
        .then_ok();
    assert_eq!(
        g.state.readiness(&id("b")),
        Readiness::Waiting { on: vec![id("a")] }
    );
}

#[test]
fn every_rejection_has_a_message_and_a_hint() {
    let r = Rejection::WrongStatus {
        task: id("a"),
        action: "approve".into(),
        status: TaskStatus::Open,
        allowed: vec![TaskStatus::PendingEval],
    };
    assert_eq!(r.to_string(), "cannot approve task a: it is open");
    assert_eq!(r.hint(), "this is allowed when the task is pending-eval");
}

#[test]
fn a_long_synthetic_run_folds_to_every_task_done() {
    let events = synthetic::synthetic_run("big", 5_000, 100).unwrap();
    assert!(events.len() >= 5_000);
    let state = fold(&events);
    assert_eq!(state.status, RunStatus::Finished(RunOutcome::Succeeded));
    assert!(state.tasks.values().all(|t| t.status == TaskStatus::Done));
    assert!(
        state.tasks.values().any(|t| t.rescues == 1),
        "some rescues happen"
    );
    assert!(
        state.tasks.values().any(|t| t.test_failures == 1),
        "some test retries happen"
    );
}

#[test]
fn a_result_nested_deeper_than_the_log_can_read_back_is_refused() {
    let deep = (0..MAX_VALUE_DEPTH + 1).fold(Value::Int(1), |v, _| Value::List(vec![v]));
    let g = given_run(vec![task("a")]).and(start("a"));
    g.when(CommandKind::SubmitTask {
        task: TaskId::from("a"),
        summary: "done".into(),
        result: deep,
        duration_ms: 1,
    })
    .then_rejected(Rejection::ValueTooDeep {
        task: TaskId::from("a"),
        depth: MAX_VALUE_DEPTH + 1,
        max: MAX_VALUE_DEPTH,
    });
}

#[test]
fn a_persons_decision_is_recorded_with_who_issued_it_and_the_engines_steps_are_not() {
    let g = given_run(vec![task("a").evaluated(), task("b")])
        .and(start("a"))
        .and(submit("a"));
    let ci = Principal {
        name: "ci".into(),
        via: runlog_core::Via::Token,
    };
    let approved = decide(
        &g.state,
        Command::new(Timestamp(g.now), approve("a")).issued_by(ci.clone()),
    )
    .unwrap();
    assert_eq!(
        approved[0].kind,
        EventKind::Attributed {
            principal: "ci".into(),
            via: "token".into(),
        }
    );
    assert!(matches!(approved[1].kind, EventKind::TaskApproved { .. }));
    // The engine's own steps carry no attribution, principal or not.
    let started = decide(
        &g.state,
        Command::new(Timestamp(g.now), start("b")).issued_by(ci),
    )
    .unwrap();
    assert!(started
        .iter()
        .all(|e| !matches!(e.kind, EventKind::Attributed { .. })));
    // And the attribution changes nothing in the state.
    let mut state = g.state.clone();
    evolve_in_place(&mut state, &approved[0]);
    assert_eq!(state.tasks, g.state.tasks);
}

/// The events `cmd` records on `g`'s state, folded onto it.
fn keyed(g: &mut Given, kind: CommandKind, key: &str) -> Result<Vec<Event>, Rejection> {
    let cmd = Command::new(Timestamp(g.now), kind).keyed(key.into());
    let events = decide(&g.state, cmd)?;
    for e in &events {
        g.state = evolve(g.state.clone(), e);
    }
    Ok(events)
}

#[test]
fn a_command_sent_again_with_its_key_records_nothing_and_names_what_it_recorded() {
    let mut g = given_run(vec![task("a"), task("b")]);
    let head = g.state.seq;
    let start = || CommandKind::StartTask {
        task: id("a"),
        agent: None,
        worktree: None,
    };
    let first = keyed(&mut g, start(), "step-1").unwrap();
    let names: Vec<_> = first.iter().map(|e| e.kind.name()).collect();
    assert_eq!(names, ["task-started", "stage-started", "command-keyed"]);
    assert!(matches!(
        &first[2].kind,
        EventKind::CommandKeyed { key, events: 2, .. } if key == "step-1"
    ));
    assert_eq!(
        keyed(&mut g, start(), "step-1"),
        Err(Rejection::AlreadyRecorded {
            key: "step-1".into(),
            first: head + 1,
            last: head + 3,
        })
    );
    // The same command with no key, or another key, is decided as ever: a running task cannot
    // start again.
    assert!(matches!(
        keyed(&mut g, start(), "step-2"),
        Err(Rejection::AlreadyRunning { .. })
    ));
}

#[test]
fn a_key_given_to_another_command_is_refused() {
    let mut g = given_run(vec![task("a"), task("b")]);
    let head = g.state.seq;
    let start = |t: &str| CommandKind::StartTask {
        task: id(t),
        agent: None,
        worktree: None,
    };
    keyed(&mut g, start("a"), "k").unwrap();
    assert_eq!(
        keyed(&mut g, start("b"), "k"),
        Err(Rejection::KeyReused {
            key: "k".into(),
            first: head + 1,
            last: head + 3,
        })
    );
    assert_eq!(g.status("b"), TaskStatus::Open);
}

#[test]
fn a_runs_keys_are_kept_in_its_snapshots() {
    let mut g = given_run(vec![task("a")]);
    let start = CommandKind::StartTask {
        task: id("a"),
        agent: None,
        worktree: None,
    };
    keyed(&mut g, start, "step-1").unwrap();
    let decoded = codec::decode_state(&codec::encode_state(&g.state).unwrap()).unwrap();
    assert_eq!(decoded.keys.len(), 1);
    assert_eq!(decoded, g.state);
}
