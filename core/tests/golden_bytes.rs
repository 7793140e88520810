//! Golden bytes: the bincode encoding of every event variant is pinned in
//! `golden/events.hex`. A difference means the on-disk format changed, which breaks every
//! existing log: add a new variant at the end instead. Regenerate only for a new variant, with
//! `RUNLOG_BLESS=1 cargo test -p runlog-core --test golden_bytes`, and review the diff.

use runlog_core::*;
use runlog_core::{EventKind, GateOutcome, Replacement, RunOutcome};
use std::collections::BTreeMap;

const VARIANTS: usize = 69;

/// Position of a variant in the enum. Exhaustive on purpose: a new variant fails to compile
/// here until it gets an index and a sample below.
fn index(k: &EventKind) -> usize {
    match k {
        EventKind::RunStarted { .. } => 0,
        EventKind::RunFinished { .. } => 1,
        EventKind::RunInterrupted { .. } => 2,
        EventKind::Forked { .. } => 3,
        EventKind::RolledBack { .. } => 4,
        EventKind::TaskAdded { .. } => 5,
        EventKind::ReplanRequested { .. } => 6,
        EventKind::PlanRevised { .. } => 7,
        EventKind::TaskStarted { .. } => 8,
        EventKind::TaskSubmitted { .. } => 9,
        EventKind::TestsStarted { .. } => 10,
        EventKind::TestsPassed { .. } => 11,
        EventKind::TestsFailed { .. } => 12,
        EventKind::EvalScored { .. } => 13,
        EventKind::GateDecided { .. } => 14,
        EventKind::TaskApproved { .. } => 15,
        EventKind::TaskRejected { .. } => 16,
        EventKind::TaskFailed { .. } => 17,
        EventKind::TaskCancelled { .. } => 18,
        EventKind::TaskReopened { .. } => 19,
        EventKind::CheckpointReached { .. } => 20,
        EventKind::TaskClassified { .. } => 21,
        EventKind::MessagePosted { .. } => 22,
        EventKind::StageStarted { .. } => 23,
        EventKind::StageCompleted { .. } => 24,
        EventKind::StageFailed { .. } => 25,
        EventKind::RetryScheduled { .. } => 26,
        EventKind::CircuitOpened { .. } => 27,
        EventKind::CircuitClosed { .. } => 28,
        EventKind::StrategySet { .. } => 29,
        EventKind::PendingValidation { .. } => 30,
        EventKind::EvalErrored { .. } => 31,
        EventKind::RunResumed { .. } => 32,
        EventKind::ReplanLoopDetected { .. } => 33,
        EventKind::OutputRecorded { .. } => 34,
        EventKind::Attributed { .. } => 35,
        EventKind::TestsDiscovered { .. } => 36,
        EventKind::SubProjectDeclared { .. } => 37,
        EventKind::ChildRunStarted { .. } => 38,
        EventKind::ParentLinked { .. } => 39,
        EventKind::ChildRunEnded { .. } => 40,
        EventKind::WorkerClaimed { .. } => 41,
        EventKind::AttemptAbandoned { .. } => 42,
        EventKind::WorkspaceOpened { .. } => 43,
        EventKind::ChangesRecorded { .. } => 44,
        EventKind::TaskMerged { .. } => 45,
        EventKind::MergeConflicted { .. } => 46,
        EventKind::UsageRecorded { .. } => 47,
        EventKind::PricesSet { .. } => 48,
        EventKind::BudgetSet { .. } => 49,
        EventKind::BudgetSpent { .. } => 50,
        EventKind::SecretsRedacted { .. } => 51,
        EventKind::RunForgotten { .. } => 52,
        EventKind::ModelCalled { .. } => 53,
        EventKind::UsageClaimed { .. } => 54,
        EventKind::RerunStarted(_) => 55,
        EventKind::CallDiverged(_) => 56,
        EventKind::ReviewSet { .. } => 57,
        EventKind::ReviewHeld { .. } => 58,
        EventKind::EvaluatorNamed { .. } => 59,
        EventKind::AnswerMapped(_) => 60,
        EventKind::WroteOutside(_) => 61,
        EventKind::ExperimentDefined(_) => 62,
        EventKind::ExperimentRerun(_) => 63,
        EventKind::ExperimentBudgetSet { .. } => 64,
        EventKind::ModelCallReserved(_) => 65,
        EventKind::ModelCallDidNotFit(_) => 66,
        EventKind::AlertSent(_) => 67,
        EventKind::CommandKeyed { .. } => 68,
    }
}

fn t(s: &str) -> TaskId {
    TaskId::from(s)
}

fn full_spec() -> TaskSpec {
    TaskSpec {
        id: t("split"),
        description: "Split lib/analysts.py".into(),
        after: vec![t("plan")],
        parent: Some(t("phase-1")),
        files: vec!["lib/analysts.py".into()],
        destructive: Some(true),
        run: Some("./agent.sh".into()),
        test: Some("pytest".into()),
        eval: Some("./judge.sh".into()),
        requires_testing: true,
        stage: Some(StageId::from("developer")),
        retry: RetryStrategy {
            limit: RetryLimit::Unlimited,
            budget: Budget {
                max_attempts: Some(9),
                max_elapsed_ms: Some(60_000),
            },
            delay_ms: 250,
            backoff: 1.5,
            timeout_ms: Some(30_000),
            circuit_after: 4,
        },
        checkpoints: vec!["read_architecture".into()],
    }
}

fn every_value() -> Value {
    let mut m = BTreeMap::new();
    m.insert("null".into(), Value::Null);
    m.insert("bool".into(), Value::Bool(true));
    m.insert("int".into(), Value::Int(-65));
    m.insert("float".into(), Value::Float(0.5));
    m.insert("str".into(), Value::Str("ok".into()));
    m.insert(
        "list".into(),
        Value::List(vec![Value::Int(1), Value::Str("x".into())]),
    );
    Value::Map(m)
}

fn samples() -> Vec<EventKind> {
    let h = Hash::of(b"golden");
    vec![
        EventKind::RunStarted {
            run: RunId::from("r1"),
            workflow: "wf".into(),
            workflow_hash: h,
            settings: Settings::default(),
        },
        EventKind::RunFinished {
            outcome: RunOutcome::Failed {
                failed: vec![t("a")],
                blocked: vec![t("b")],
            },
        },
        EventKind::RunInterrupted {
            reason: "ctrl-c".into(),
        },
        EventKind::Forked {
            run: RunId::from("r2"),
            from_run: RunId::from("r1"),
            at_seq: 7,
            from_hash: h,
        },
        EventKind::RolledBack {
            to_seq: 5,
            reason: "bad eval".into(),
            by: "alice".into(),
        },
        EventKind::TaskAdded {
            spec: Box::new(full_spec()),
        },
        EventKind::ReplanRequested {
            after_task: t("a"),
            reason: "r".into(),
            touched_files: vec!["x.py".into()],
            affected: vec![t("b")],
        },
        EventKind::PlanRevised {
            cancelled: vec![t("b")],
            added: vec![TaskSpec::new("b2", "redo b")],
            replaces: vec![Replacement {
                old: t("b"),
                new: t("b2"),
            }],
            reason: "r".into(),
            plan_hash: h,
        },
        EventKind::TaskStarted {
            task: t("a"),
            agent: AgentId::from("agent-a"),
            worktree: "/wt/a".into(),
            attempt: 2,
        },
        EventKind::TaskSubmitted {
            task: t("a"),
            summary: "did it".into(),
        },
        EventKind::TestsStarted {
            task: t("a"),
            attempt: 2,
        },
        EventKind::TestsPassed {
            task: t("a"),
            attempt: 2,
        },
        EventKind::TestsFailed {
            task: t("a"),
            attempt: 2,
            details: "1 failed".into(),
        },
        EventKind::EvalScored {
            task: t("a"),
            evaluator: "judge".into(),
            score: 0.82,
            dimensions: [("correctness".to_owned(), 0.9), ("style".to_owned(), 0.75)].into(),
            notes: "fine".into(),
        },
        EventKind::GateDecided {
            task: t("a"),
            score: 0.5,
            threshold: 0.7,
            outcome: GateOutcome::Rescue { n: 1 },
        },
        EventKind::TaskApproved {
            task: t("a"),
            by: "alice".into(),
        },
        EventKind::TaskRejected {
            task: t("a"),
            by: "alice".into(),
            reopen: true,
            reason: "no".into(),
        },
        EventKind::TaskFailed {
            task: t("a"),
            reason: "boom".into(),
        },
        EventKind::TaskCancelled {
            task: t("a"),
            reason: "superseded".into(),
        },
        EventKind::TaskReopened {
            task: t("a"),
            by: "alice".into(),
        },
        EventKind::CheckpointReached {
            task: t("a"),
            name: "read_architecture".into(),
        },
        EventKind::TaskClassified {
            task: t("a"),
            class: TaskClass::AnalyzeMore,
        },
        EventKind::MessagePosted {
            task: Some(t("a")),
            from: "user".into(),
            text: "same worktree".into(),
        },
        EventKind::StageStarted {
            stage: StageId::from("dev"),
            task: t("a"),
            attempt: 1,
        },
        EventKind::StageCompleted {
            stage: StageId::from("dev"),
            task: t("a"),
            result: every_value(),
            duration_ms: 12_500,
            retry_count: 0,
        },
        EventKind::StageFailed {
            stage: StageId::from("dev"),
            task: t("a"),
            error: "Build failed".into(),
            error_type: "exit-code".into(),
            retry_count: 1,
            duration_ms: 950,
        },
        EventKind::RetryScheduled {
            stage: StageId::from("dev"),
            task: t("a"),
            attempt: 2,
            delay_ms: 2_000,
        },
        EventKind::CircuitOpened {
            stage: StageId::from("dev"),
            failures: 5,
        },
        EventKind::CircuitClosed {
            stage: StageId::from("dev"),
        },
        EventKind::StrategySet {
            stage: StageId::from("dev"),
            strategy: RetryStrategy::default(),
        },
        EventKind::PendingValidation { task: t("a") },
        EventKind::EvalErrored {
            task: t("a"),
            evaluator: "judge".into(),
            error: "no JSON".into(),
        },
        EventKind::RunResumed {
            reason: "resume".into(),
        },
        EventKind::ReplanLoopDetected {
            plan_hash: h,
            same_as_revision: 1,
            reason: "same".into(),
        },
        EventKind::OutputRecorded {
            task: t("a"),
            attempt: 1,
            stream: "agent.stdout".into(),
            text: "split 3 classes".into(),
            blob: Some(h),
            bytes: 70_000,
        },
        EventKind::Attributed {
            principal: "ci".into(),
            via: "token".into(),
        },
        EventKind::TestsDiscovered {
            task: t("parse"),
            convention: "pytest tests/test_{id}.py".into(),
            test: "pytest tests/test_parse.py -v".into(),
        },
        EventKind::SubProjectDeclared {
            task: t("buffer"),
            workflow: "phases/buffer.toml".into(),
        },
        EventKind::ChildRunStarted {
            task: t("buffer"),
            child_run: RunId::from("editor.buffer"),
        },
        EventKind::ParentLinked {
            parent_run: RunId::from("editor"),
            task: t("buffer"),
        },
        EventKind::ChildRunEnded {
            task: t("buffer"),
            child_run: RunId::from("editor.buffer"),
            succeeded: false,
            failures: "failed: gap (tests failed)".into(),
        },
        EventKind::WorkerClaimed {
            task: t("build"),
            attempt: 2,
            worker: "host-b.7".into(),
            fresh_worktree: true,
            previous: Some("host-a.3".into()),
        },
        EventKind::AttemptAbandoned {
            task: t("build"),
            attempt: 1,
            worker: "host-a.3".into(),
            reason: "its lease expired".into(),
        },
        EventKind::WorkspaceOpened {
            repo: "/src/parser".into(),
            branch: "runlog/r1".into(),
            base: "0123456789abcdef0123456789abcdef01234567".into(),
        },
        EventKind::ChangesRecorded {
            task: t("build"),
            attempt: 2,
            commit: "89abcdef0123456789abcdef0123456789abcdef".into(),
            parent: "0123456789abcdef0123456789abcdef01234567".into(),
            files: vec!["src/parser.py".into(), "tests/test_parser.py".into()],
            insertions: 12,
            deletions: 3,
            patch: "--- a/src/parser.py\n+++ b/src/parser.py\n".into(),
            blob: Some(Hash([7; 32])),
            patch_bytes: 1_234,
        },
        EventKind::TaskMerged {
            task: t("build"),
            commit: "fedcba9876543210fedcba9876543210fedcba98".into(),
        },
        EventKind::MergeConflicted {
            task: t("docs"),
            files: vec!["README.md".into()],
            rescue: Some(1),
        },
        EventKind::UsageRecorded {
            usage: usage::UsageRecord {
                task: t("build"),
                attempt: 2,
                stage: usage::UsageStage::Evaluator,
                model: Some("claude-sonnet-4".into()),
                provider: Some("anthropic".into()),
                tokens: usage::Tokens {
                    input: 1200,
                    output: 300,
                    cache_read: 800,
                    cache_write: 100,
                    reasoning: 40,
                },
                cost_usd: Some(0.0125),
                cost: usage::CostSource::Priced,
                reports: 2,
            },
        },
        EventKind::PricesSet {
            prices: BTreeMap::from([(
                "claude-sonnet-4".to_owned(),
                usage::Price {
                    input: 3.0,
                    output: 15.0,
                    cache_read: Some(0.3),
                    cache_write: None,
                },
            )]),
        },
        EventKind::BudgetSet {
            task: Some(t("build")),
            limits: usage::Limits {
                max_cost_usd: Some(2.5),
                max_tokens: None,
            },
            by: "ana".into(),
        },
        EventKind::BudgetSpent {
            task: t("build"),
            budget: None,
            kind: usage::BudgetKind::CostUsd,
            limit: 2.5,
            spent: 2.51,
        },
        EventKind::SecretsRedacted {
            task: Some(t("build")),
            redactions: vec![runlog_core::redact::Redaction {
                name: "OPENAI_API_KEY".into(),
                count: 2,
            }],
        },
        EventKind::RunForgotten(Box::new(runlog_core::Forgotten {
            run: runlog_core::RunId::from("nightly-41"),
            genesis: runlog_core::Hash([7; 32]),
            head_seq: 812,
            head_hash: runlog_core::Hash([9; 32]),
            outcome: "succeeded".into(),
            principal: "ana".into(),
            via: "os-user".into(),
            reason: "ended more than 30 days ago (--retain-days 30)".into(),
        })),
        EventKind::ModelCalled(Box::new(runlog_core::model_call::ModelCall {
            task: t("build"),
            attempt: 2,
            stage: usage::UsageStage::Agent,
            n: 3,
            provider: "anthropic".into(),
            api: runlog_core::model_call::ModelApi::Messages,
            model: Some("claude-sonnet-4".into()),
            streamed: true,
            status: 200,
            end: runlog_core::model_call::CallEnd::OverBudget {
                spent: "the run's cost budget of $0.0100 is spent ($0.0120)".into(),
            },
            first_byte_ms: Some(310),
            duration_ms: 1840,
            tokens: usage::Tokens {
                input: 12000,
                output: 350,
                cache_read: 8000,
                cache_write: 0,
                reasoning: 0,
            },
            cost_usd: Some(0.0412),
            cost: usage::CostSource::Priced,
            request: Some(runlog_core::model_call::Body {
                blob: runlog_core::Hash([3; 32]),
                bytes: 49_152,
            }),
            response: Some(runlog_core::model_call::Body {
                blob: runlog_core::Hash([4; 32]),
                bytes: 2_048,
            }),
            assembled: None,
            error: Some("overloaded".into()),
        })),
        EventKind::UsageClaimed {
            usage: usage::UsageRecord {
                task: t("build"),
                attempt: 2,
                stage: usage::UsageStage::Evaluator,
                model: Some("claude-sonnet-4".into()),
                provider: Some("anthropic".into()),
                tokens: usage::Tokens {
                    input: 1200,
                    output: 300,
                    cache_read: 800,
                    cache_write: 100,
                    reasoning: 40,
                },
                cost_usd: Some(0.5),
                cost: usage::CostSource::Reported,
                reports: 1,
            },
        },
        EventKind::RerunStarted(Box::new(runlog_core::rerun::Rerun {
            from_run: RunId::from("nightly-3"),
            from_seq: 14,
            answers: runlog_core::rerun::Answers::RecordedThenLive,
            tasks: vec![runlog_core::rerun::RerunTask {
                task: t("build"),
                commit: Some("3f2a1c9e".into()),
                attempts_ahead: 1,
            }],
            specs: vec![TaskSpec::new("review", "review it")],
        })),
        EventKind::CallDiverged(Box::new(runlog_core::rerun::Divergence {
            task: t("build"),
            attempt: 2,
            stage: usage::UsageStage::Agent,
            n: 7,
            recorded_seq: Some(88),
            why: "the tool result (message 4) differs: now \"2 failed\", was \"0 failed\"".into(),
            live: false,
        })),
        EventKind::ReviewSet {
            policy: runlog_core::review::ReviewPolicy {
                mode: runlog_core::review::ReviewMode::Failing,
                sample: 0.1,
            },
        },
        EventKind::ReviewHeld {
            task: t("build"),
            score: 0.92,
            threshold: 0.8,
            outcome: GateOutcome::Pass,
        },
        EventKind::EvaluatorNamed {
            task: t("build"),
            model: "claude-sonnet-4-5".into(),
            version: "rubric-3".into(),
        },
        EventKind::AnswerMapped(Box::new(runlog_core::relocate::AnswerMapped {
            task: t("build"),
            attempt: 1,
            stage: usage::UsageStage::Agent,
            n: 2,
            recorded_seq: 41,
            mapped: vec![runlog_core::relocate::Mapped {
                was: "/repo/.runlog/worktrees/nightly-3".into(),
                now: "/repo/.runlog/worktrees/nightly-3-again".into(),
                count: 3,
            }],
        })),
        EventKind::WroteOutside(Box::new(runlog_core::outside::OutsideWrites {
            task: t("build"),
            attempt: 2,
            written: vec![
                runlog_core::outside::Written {
                    place: runlog_core::outside::Place::Checkout,
                    paths: vec!["hello.txt".into()],
                    more: 0,
                },
                runlog_core::outside::Written {
                    place: runlog_core::outside::Place::OtherRun {
                        run: RunId::from("nightly-2"),
                    },
                    paths: vec!["build/out.txt".into()],
                    more: 4,
                },
            ],
            policy: runlog_core::outside::OutsidePolicy::Fail,
        })),
        EventKind::ExperimentDefined(Box::new(runlog_core::experiment::Experiment {
            name: "haiku-trial".into(),
            suite: vec![runlog_core::experiment::SuiteRun {
                run: RunId::from("nightly-3"),
                head_seq: 120,
                head_hash: "ab".repeat(32),
                tasks: vec![t("build")],
            }],
            variants: vec![runlog_core::experiment::Variant {
                name: "haiku".into(),
                file: "haiku.toml".into(),
                text: "[gateway.models]\n\"claude-sonnet-4-5\" = \"claude-haiku-4-5\"\n".into(),
                models: vec![("claude-sonnet-4-5".into(), "claude-haiku-4-5".into())],
            }],
            repeat: 3,
            answers: runlog_core::rerun::Answers::RecordedThenLive,
            max_cost_usd: Some(5.0),
            skipped: vec![runlog_core::experiment::Skipped {
                run: RunId::from("nightly-2"),
                variant: "haiku".into(),
                reason: "it has no task build".into(),
            }],
            seed: 42,
        })),
        EventKind::ExperimentRerun(Box::new(runlog_core::experiment::ExperimentRerun {
            experiment: "haiku-trial".into(),
            run: RunId::from("nightly-3"),
            variant: "haiku".into(),
            repeat: 2,
            rerun: RunId::from("haiku-trial.haiku.nightly-3.2"),
            models: vec![("claude-sonnet-4-5".into(), "claude-haiku-4-5".into())],
        })),
        EventKind::ExperimentBudgetSet {
            max_cost_usd: Some(12.5),
        },
        EventKind::ModelCallReserved(Box::new(runlog_core::reservation::Reservation {
            task: t("split"),
            attempt: 2,
            stage: usage::UsageStage::Agent,
            n: 3,
            provider: "anthropic".into(),
            api: runlog_core::model_call::ModelApi::Messages,
            model: Some("claude-sonnet-4-5".into()),
            input_tokens: 12_000,
            output_tokens: 4_096,
            bound: runlog_core::reservation::OutputBound::Request,
            cost_usd: Some(0.09744),
        })),
        EventKind::ModelCallDidNotFit(Box::new(runlog_core::reservation::DidNotFit {
            reservation: runlog_core::reservation::Reservation {
                task: t("split"),
                attempt: 2,
                stage: usage::UsageStage::Agent,
                n: 3,
                provider: "anthropic".into(),
                api: runlog_core::model_call::ModelApi::Messages,
                model: Some("claude-sonnet-4-5".into()),
                input_tokens: 12_000,
                output_tokens: 4_096,
                bound: runlog_core::reservation::OutputBound::Request,
                cost_usd: Some(0.09744),
            },
            budget: usage::BudgetStop {
                budget: None,
                kind: usage::BudgetKind::CostUsd,
                limit: 0.1,
                spent: 0.0301,
            },
        })),
        EventKind::AlertSent(Box::new(runlog_core::alerts::AlertSent {
            on: runlog_core::alerts::AlertOn::Budget,
            seq: 41,
            to: "https://hooks.slack.com".into(),
            attempts: 4,
            status: Some(200),
            error: None,
        })),
        EventKind::CommandKeyed {
            key: "langgraph-step-7".into(),
            command: runlog_core::Hash::of(b"{\"command\":\"approve\"}"),
            events: 2,
        },
    ]
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn rendered() -> String {
    let mut out = String::new();
    for (i, kind) in samples().into_iter().enumerate() {
        assert_eq!(
            index(&kind),
            i,
            "sample {} is out of enum order",
            kind.name()
        );
        let event = Event {
            at: Timestamp(1_700_000_000_000 + i as u64),
            kind,
        };
        let bytes = codec::encode_event(&event).unwrap();
        assert_eq!(
            codec::decode_event(&bytes).unwrap(),
            event,
            "{} does not round-trip",
            event.kind.name()
        );
        out.push_str(&format!("{} {}\n", event.kind.name(), hex(&bytes)));
    }
    out
}

#[test]
fn there_is_one_sample_per_variant() {
    let names: std::collections::BTreeSet<&str> = samples().iter().map(EventKind::name).collect();
    assert_eq!(names.len(), VARIANTS);
    assert_eq!(samples().len(), VARIANTS);
}

#[test]
fn every_variant_has_one_name_everywhere() {
    let samples = samples();
    let names: Vec<&str> = samples.iter().map(EventKind::name).collect();
    assert_eq!(
        names,
        EventKind::NAMES,
        "NAMES lists every variant, in order"
    );
    for kind in &samples {
        let json = serde_json::to_value(kind).unwrap();
        assert_eq!(json["type"], kind.name(), "the JSON tag is the name");
    }
}

#[test]
fn every_event_variant_encodes_to_its_golden_bytes() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/events.hex");
    let now = rendered();
    if std::env::var_os("RUNLOG_BLESS").is_some() {
        std::fs::write(&path, &now).unwrap();
        return;
    }
    let pinned = std::fs::read_to_string(&path)
        .expect("golden/events.hex missing: bless it once with RUNLOG_BLESS=1");
    for (want, got) in pinned.lines().zip(now.lines()) {
        assert_eq!(
            got, want,
            "the encoding of an existing event changed: this breaks every stored log"
        );
    }
    assert_eq!(
        now.lines().count(),
        pinned.lines().count(),
        "variants were added or removed: bless the new ones"
    );
}
