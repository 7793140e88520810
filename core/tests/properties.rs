//! Property tests over random command sequences: decide never panics, a task never starts
//! before every dependency is done, no task is done with failing last tests, rescues and test
//! failures never exceed their caps, the incremental state equals a fresh fold, and every
//! event survives an encode/decode round trip, whatever the dispatch policy proposes is what
//! `decide` accepts, no attempt starts on a spent budget, and the recorded usage sums to what
//! every cost view reports.

mod support;
use proptest::prelude::*;
use runlog_core::*;
use support::*;

const IDS: [&str; 8] = ["a", "b", "c", "d", "g", "g1", "g2", "e"];

fn plan() -> Vec<TaskSpec> {
    let quick = RetryStrategy {
        limit: RetryLimit::Max(1),
        delay_ms: 0,
        backoff: 1.0,
        circuit_after: 4,
        ..RetryStrategy::default()
    };
    vec![
        task("a").tested().evaluated().retry(quick.clone()),
        task("b").after(&["a"]).evaluated().checkpoints(&["read"]),
        task("c").tested().stage("shared").retry(quick.clone()),
        task("d").after(&["b", "c"]).stage("shared").retry(quick),
        task("g"),
        task("g1").parent("g").tested(),
        task("g2").parent("g").after(&["g1"]).evaluated(),
        task("e").after(&["g"]),
    ]
}

fn settings() -> Settings {
    Settings {
        max_eval_rescues: 2,
        max_test_retries: 2,
        ..Settings::default()
    }
}

/// A started run whose plan prices the model `priced`.
fn given_priced(settings: Settings, tasks: Vec<TaskSpec>) -> Given {
    let price = usage::Price {
        input: 3.0,
        output: 15.0,
        cache_read: Some(0.3),
        cache_write: None,
    };
    given([]).and(CommandKind::StartRun {
        run: RunId::from("run-1"),
        workflow: "test".into(),
        workflow_hash: Hash::of(b"test"),
        settings,
        tasks,
        cost: CostPolicy {
            prices: [("priced".to_owned(), price)].into(),
            ..CostPolicy::default()
        },
        review: Default::default(),
    })
}

#[derive(Debug, Clone)]
enum Op {
    /// The natural next command for the task's status (keeps runs moving toward done).
    Advance(usize, u8, f64),
    Start(usize),
    Submit(usize),
    Fail(usize),
    Tests(usize, bool),
    Score(usize, f64),
    Approve(usize),
    Reject(usize, bool),
    Reopen(usize),
    Cancel(usize),
    Checkpoint(usize),
    Interrupt,
    Resume,
    Rollback(u8),
    Finish,
    /// A command of the task reports usage: tokens, and a cost or none (priced or unpriced).
    Use(usize, u16, Option<u8>),
    /// A person sets the run's (`None`) or a task's dollar budget.
    Budget(Option<usize>, u8),
    /// The engine stops a task whose budget is spent.
    StopForBudget(usize),
}

fn op() -> impl Strategy<Value = Op> {
    let t = 0..IDS.len();
    prop_oneof![
        150 => (t.clone(), any::<u8>(), 0.0f64..1.0).prop_map(|(i, r, s)| Op::Advance(i, r, s)),
        6 => t.clone().prop_map(Op::Start),
        5 => t.clone().prop_map(Op::Submit),
        2 => t.clone().prop_map(Op::Fail),
        4 => (t.clone(), any::<bool>()).prop_map(|(i, p)| Op::Tests(i, p)),
        4 => (t.clone(), 0.0f64..1.0).prop_map(|(i, s)| Op::Score(i, s)),
        1 => t.clone().prop_map(Op::Approve),
        1 => (t.clone(), any::<bool>()).prop_map(|(i, r)| Op::Reject(i, r)),
        1 => t.clone().prop_map(Op::Reopen),
        1 => t.clone().prop_map(Op::Cancel),
        2 => t.clone().prop_map(Op::Checkpoint),
        1 => Just(Op::Interrupt),
        1 => Just(Op::Resume),
        1 => any::<u8>().prop_map(Op::Rollback),
        1 => Just(Op::Finish),
        8 => (t.clone(), any::<u16>(), proptest::option::of(any::<u8>())).prop_map(|(i, n, c)| Op::Use(i, n, c)),
        2 => (proptest::option::of(t.clone()), any::<u8>()).prop_map(|(i, usd)| Op::Budget(i, usd)),
        3 => t.prop_map(Op::StopForBudget),
    ]
}

fn advance(state: &RunState, name: &str, r: u8, s: f64) -> CommandKind {
    let Some(t) = state.task(&id(name)) else {
        return start(name);
    };
    if matches!(
        state.status,
        RunStatus::Interrupted | RunStatus::Finished(_)
    ) {
        return CommandKind::Resume {
            reason: "advance".into(),
        };
    }
    let waiting = matches!(t.status, TaskStatus::Open | TaskStatus::TestFailed)
        || (t.status == TaskStatus::InProgress && !t.running);
    if waiting && state.overspent(t).is_some() {
        // What the engine does with a task its budget stops.
        return CommandKind::StopForBudget { task: id(name) };
    }
    match t.status {
        TaskStatus::Open | TaskStatus::TestFailed => start(name),
        TaskStatus::InProgress if !t.running => start(name),
        TaskStatus::InProgress if !t.missing_checkpoints().is_empty() && r % 2 == 0 => {
            checkpoint(name, "read")
        }
        TaskStatus::InProgress if r % 5 == 0 => fail_stage(name, "boom"),
        TaskStatus::InProgress => submit(name),
        TaskStatus::Testing => tests(name, r % 3 != 0),
        TaskStatus::PendingEval if r % 10 == 0 => approve(name),
        TaskStatus::PendingEval if r % 10 == 1 => reject(name, r % 20 == 1),
        TaskStatus::PendingEval => score(name, s),
        TaskStatus::Failed => CommandKind::Reopen {
            task: id(name),
            by: "p".into(),
        },
        TaskStatus::Done | TaskStatus::Cancelled => start(name),
    }
}

fn command(op: &Op, state: &RunState) -> CommandKind {
    let head = state.seq;
    let t = |i: &usize| IDS[*i];
    match op {
        Op::Advance(i, r, s) => advance(state, t(i), *r, *s),
        Op::Start(i) => start(t(i)),
        Op::Submit(i) => submit(t(i)),
        Op::Fail(i) => fail_stage(t(i), "boom"),
        Op::Tests(i, p) => tests(t(i), *p),
        Op::Score(i, s) => score(t(i), *s),
        Op::Approve(i) => approve(t(i)),
        Op::Reject(i, r) => reject(t(i), *r),
        Op::Reopen(i) => CommandKind::Reopen {
            task: id(t(i)),
            by: "p".into(),
        },
        Op::Cancel(i) => CommandKind::Cancel {
            task: id(t(i)),
            reason: "p".into(),
        },
        Op::Checkpoint(i) => checkpoint(t(i), "read"),
        Op::Interrupt => CommandKind::Interrupt { reason: "p".into() },
        Op::Resume => CommandKind::Resume { reason: "p".into() },
        Op::Rollback(n) => CommandKind::Rollback {
            to_seq: 1 + u64::from(*n) % head.max(1),
            reason: "p".into(),
            by: "p".into(),
        },
        Op::Finish => CommandKind::Finish,
        Op::Use(i, n, cost) => CommandKind::RecordUsage {
            task: id(t(i)),
            stage: usage::UsageStage::ALL[usize::from(*n) % 4],
            reports: vec![usage::UsageReport {
                // Priced when it names the plan's priced model, else unpriced.
                model: Some(if n % 3 == 0 { "priced" } else { "other" }.into()),
                provider: None,
                tokens: usage::Tokens {
                    input: u64::from(*n),
                    output: u64::from(*n) / 2,
                    cache_read: u64::from(*n) / 4,
                    ..usage::Tokens::default()
                },
                cost_usd: cost.map(|c| f64::from(c) / 100.0),
            }],
        },
        Op::Budget(task, usd) => CommandKind::SetBudget {
            task: task.map(|i| id(t(&i))),
            max_cost_usd: Change::Set(f64::from(*usd) / 100.0),
            max_tokens: Change::Keep,
            by: "p".into(),
        },
        Op::StopForBudget(i) => CommandKind::StopForBudget { task: id(t(i)) },
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-6 * (1.0 + a.abs().max(b.abs()))
}

/// The run's usage records sum to its spend, and every view of its cost says the same.
fn check_costs(state: &RunState) -> Result<(), TestCaseError> {
    let mut summed = usage::Spend::default();
    for r in &state.usage {
        summed.add(&r.tokens, r.cost_usd);
    }
    prop_assert_eq!(summed.tokens, state.spend.tokens);
    prop_assert_eq!(summed.unpriced, state.spend.unpriced);
    prop_assert!(close(summed.cost_usd, state.spend.cost_usd));
    let mut by_task = usage::Spend::default();
    for t in state.tasks.values() {
        by_task.plus(&t.spend);
    }
    prop_assert_eq!(by_task.tokens, state.spend.tokens);
    prop_assert!(close(by_task.cost_usd, state.spend.cost_usd));
    for by in projections::CostBy::ALL {
        let report = projections::CostReport::of(state, by);
        let mut rows = usage::Spend::default();
        for row in &report.rows {
            rows.plus(&row.spend);
        }
        prop_assert_eq!(rows.tokens, state.spend.tokens, "{:?}", by);
        prop_assert_eq!(rows.unpriced, state.spend.unpriced);
        prop_assert!(close(rows.cost_usd, state.spend.cost_usd));
    }
    let board = projections::Board::of(state);
    prop_assert_eq!(board.spend, state.spend);
    let mut rows = usage::Spend::default();
    for row in &board.rows {
        rows.plus(&row.spend);
    }
    prop_assert_eq!(rows.tokens, state.spend.tokens);
    Ok(())
}

fn check_invariants(state: &RunState, s: &Settings) -> Result<(), TestCaseError> {
    for t in state.tasks.values() {
        let id = &t.spec.id;
        if t.status == TaskStatus::Done && t.spec.is_tested() && !state.is_group(id) {
            prop_assert_eq!(
                t.last_tests_passed,
                Some(true),
                "{} done with failing last tests",
                id
            );
        }
        prop_assert!(
            t.rescues <= s.max_eval_rescues,
            "{} rescued {} times",
            id,
            t.rescues
        );
        prop_assert!(
            t.test_failures <= s.max_test_retries + 1,
            "{} failed tests {} times",
            id,
            t.test_failures
        );
        // What the board shows is what the engine does: an open task shown ready may start
        // now (retries waiting for their backoff aside), and one that may start is shown ready.
        if t.status == TaskStatus::Open
            && !state.is_group(id)
            && state.replan.is_none()
            && state.status == RunStatus::Running
        {
            let far = Timestamp(u64::MAX);
            prop_assert_eq!(
                state.readiness(id) == Readiness::Ready,
                runlog_core::startable(state, id, far).is_ok(),
                "{} shown {:?}",
                id,
                state.readiness(id)
            );
        }
        if state.readiness(id) == Readiness::Ready {
            for dep in state.effective_deps(id) {
                prop_assert_eq!(
                    state.status_of(&dep),
                    Some(TaskStatus::Done),
                    "{} ready before {}",
                    id,
                    dep
                );
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 192, ..ProptestConfig::default() })]

    #[test]
    fn random_command_sequences_keep_every_invariant(ops in prop::collection::vec(op(), 1..160)) {
        let s = settings();
        let mut g = given_priced(s.clone(), plan());
        // Copies taken along the way share their tasks with the state folded on after them.
        let mut copies = Vec::new();
        for (i, op) in ops.iter().enumerate() {
            let before = g.state.clone();
            if i % 16 == 0 {
                copies.push((g.events.len(), before.clone()));
            }
            let when = g.when(command(op, &before));
            let accepted = when.result.clone();
            g = match accepted {
                Err(_) => when.given,
                Ok(events) => {
                    for e in &events {
                        // A fresh attempt only starts when every dependency is done.
                        if let EventKind::TaskStarted { task, .. } = &e.kind {
                            if before.task(task).map(|t| t.status) == Some(TaskStatus::Open) {
                                for dep in before.effective_deps(task) {
                                    prop_assert_eq!(before.status_of(&dep), Some(TaskStatus::Done), "{} started before {}", task, dep);
                                }
                            }
                        }
                        // No attempt starts on a spent budget.
                        if let EventKind::TaskStarted { task, .. } = &e.kind {
                            let t = before.task(task).unwrap();
                            prop_assert_eq!(before.overspent(t), None, "{} started over budget", task);
                        }
                        let bytes = codec::encode_event(e).unwrap();
                        prop_assert_eq!(&codec::decode_event(&bytes).unwrap(), e);
                    }
                    when.then_ok()
                }
            };
            check_invariants(&g.state, &s)?;
            check_costs(&g.state)?;
        }
        prop_assert_eq!(&fold(&g.events), &g.state, "incremental state differs from a fresh fold");
        for (len, copy) in &copies {
            prop_assert_eq!(&fold(&g.events[..*len]), copy, "a copy changed after {} events", len);
        }
        let metrics = projections::project(&g.events).metrics;
        prop_assert_eq!(metrics.cost.total.tokens, g.state.spend.tokens);
        prop_assert!(close(metrics.cost.total.cost_usd, g.state.spend.cost_usd));
        if std::env::var_os("RUNLOG_PROP_STATS").is_some() {
            let mut kinds: Vec<&str> = g.events.iter().map(|e| e.kind.name()).collect();
            kinds.sort();
            kinds.dedup();
            eprintln!("events={} done={} kinds={}", g.events.len(), g.state.tasks.values().filter(|t| t.status == TaskStatus::Done).count(), kinds.join(","));
        }
    }

    #[test]
    fn rollback_to_any_seq_equals_the_state_at_that_seq(ops in prop::collection::vec(op(), 1..60), pick in any::<u16>()) {
        let mut g = given_run_with(settings(), plan());
        for op in &ops {
            let cmd = command(op, &g.state);
            let when = g.when(cmd);
            g = if when.result.is_ok() { when.then_ok() } else { when.given };
        }
        let head = g.state.seq;
        prop_assume!(head > 1);
        let to = 1 + u64::from(pick) % (head - 1);
        let g = g.and(CommandKind::Rollback { to_seq: to, reason: "prop".into(), by: "prop".into() });
        let mut expected = state_at(&g.events, to);
        expected.seq = g.state.seq;
        prop_assert_eq!(&g.state, &expected);
    }
}

proptest! {
    // More cases: the frontier's incremental upkeep is checked here against the whole plan.
    #![proptest_config(ProptestConfig { cases: 768, ..ProptestConfig::default() })]

    #[test]
    fn every_start_the_dispatch_policy_proposes_is_accepted(
        ops in prop::collection::vec(op(), 1..120),
        waits in prop::collection::vec(0u64..4_000, 120),
        busy_mask in any::<u8>(),
    ) {
        // Backoff and a circuit shared by two tasks, so retries come due while it opens.
        let slow = RetryStrategy {
            limit: RetryLimit::Max(5),
            delay_ms: 1_500,
            backoff: 1.0,
            circuit_after: 2,
            ..RetryStrategy::default()
        };
        let mut tasks = plan();
        for t in tasks.iter_mut().filter(|t| t.id.as_str() == "c" || t.id.as_str() == "a") {
            t.stage = Some(StageId::from("shared"));
            t.retry = slow.clone();
        }
        let mut g = given_run_with(settings(), tasks);
        // The frontier as a runner keeps it: shown every event recorded.
        let mut frontier = dispatch::Frontier::new();
        // And as a worker keeps it: shown a command of its own that then lost the race to
        // the one recorded, and brought back to the state through every event involved.
        let mut raced = dispatch::Frontier::new();
        for (op, wait) in ops.iter().zip(&waits) {
            let now = Timestamp(g.now + wait);
            let busy = |id: &TaskId| {
                let i = IDS.iter().position(|n| *n == id.as_str()).unwrap_or(0);
                busy_mask & (1 << i) != 0
            };
            let cap = dispatch::Capacity { busy: &busy, free: usize::MAX, replanning: false, replan_stopped: false };
            let plan = dispatch::dispatch(&g.state, now, &cap);
            prop_assert_eq!(
                &frontier.dispatch(&g.state, now, &cap),
                &plan,
                "the decision over the frontier ({} tasks) is the whole plan's",
                frontier.len()
            );
            prop_assert_eq!(
                &raced.dispatch(&g.state, now, &cap),
                &plan,
                "the decision over the frontier brought back after lost races is the whole plan's"
            );
            // With fewer free slots: the first of the same starts, whatever it skips to find them.
            let free = 1 + usize::from(busy_mask % 3);
            let few = dispatch::Capacity { busy: &busy, free, replanning: false, replan_stopped: false };
            let first: Vec<_> = plan.starts.iter().take(free).cloned().collect();
            prop_assert_eq!(frontier.dispatch(&g.state, now, &few).starts, first);
            for (task, job) in &plan.starts {
                prop_assert!(!busy(task), "{} proposed while busy", task);
                if *job == dispatch::Job::Attempt {
                    let start = CommandKind::StartTask { task: task.clone(), agent: None, worktree: None };
                    let decided = decide(&g.state, Command::new(now, start));
                    prop_assert!(decided.is_ok(), "proposed {} but decide said {:?}", task, decided.err());
                }
            }
            if let Some(due) = plan.next_due {
                prop_assert!(due > now, "a retry due at {:?} is already due at {:?}", due, now);
            }
            // The command that loses the race: decided and staged on the same state, never
            // recorded.
            let lost = command(&ops[(ops.len() - 1 - (wait % ops.len() as u64) as usize) % ops.len()], &g.state);
            let mut staged = g.state.clone();
            let undone = decide(&staged, Command::new(now, lost)).unwrap_or_default();
            for e in &undone {
                runlog_core::evolve_in_place(&mut staged, e);
                raced.observe(staged.seq, &e.kind, &staged);
            }
            let cmd = command(op, &g.state);
            let when = g.when(cmd);
            let recorded = when.result.clone().unwrap_or_default();
            g = if when.result.is_ok() { when.then_ok() } else { when.given };
            let first_seq = g.state.seq + 1 - recorded.len() as u64;
            for (seq, e) in (first_seq..).zip(&recorded) {
                frontier.observe(seq, &e.kind, &g.state);
            }
            raced.retouch(&g.state, undone.iter().chain(&recorded).map(|e| &e.kind));
            g.now += wait;
        }
    }
}
