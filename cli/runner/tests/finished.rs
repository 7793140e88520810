//! What a finished command means for its run, stated without running a process: the runner's
//! rules from a state, the command that ran and how it ended (`runlog_runner::finished`).

use runlog_core::redact::Redactor;
use runlog_core::script::{id, start, task, Script};
use runlog_core::usage::UsageStage;
use runlog_core::{CommandKind, ErrorType, Rejection, RunId, RunState, TaskClass, Via};
use runlog_runner::finished::{self, Because, IfRefused, Ran, Refusal, Step};
use runlog_runner::process::{Failure, Outcome};
use std::time::Duration;

fn exited(code: i32, stdout: &str, stderr: &str) -> Outcome {
    Outcome {
        code: Some(code),
        stdout: stdout.to_owned(),
        stderr: stderr.to_owned(),
        duration: Duration::from_millis(1_500),
        failure: None,
        leftovers: None,
        left_out: [0, 0],
    }
}

/// A run of tasks `a` (started, as agent `agent-a`, with an evaluator) and `b`.
fn running_a() -> RunState {
    let mut a = task("a");
    a.eval = Some("./judge.sh".into());
    Script::run(vec![a, task("b")]).and(start("a")).state
}

fn kinds(steps: &[Step]) -> Vec<&CommandKind> {
    steps
        .iter()
        .filter_map(|s| match s {
            Step::Decide { kind, .. } => Some(kind),
            _ => None,
        })
        .collect()
}

fn notes(steps: &[Step]) -> Vec<&str> {
    kinds(steps)
        .into_iter()
        .filter_map(|k| match k {
            CommandKind::PostMessage { from, text, .. } if from == "runlog" => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

#[test]
fn a_failed_attempt_fails_its_stage_with_the_class_and_the_last_line_of_stderr() {
    let out = exited(3, "", "compiling\nerror: no such module\n");
    let steps = finished::attempt(&running_a(), &id("a"), &out, None, 1_500);
    let [CommandKind::FailStage {
        error,
        error_type,
        duration_ms,
        ..
    }] = kinds(&steps)[..]
    else {
        panic!("one stage failure expected, got {steps:?}");
    };
    assert_eq!(error, "exited with code 3: error: no such module");
    assert_eq!(*error_type, ErrorType::ExitCode);
    assert_eq!(*duration_ms, 1_500);
}

#[test]
fn a_timed_out_or_unstartable_attempt_says_so_in_its_class() {
    for (failure, class) in [
        (Failure::Timeout(900), ErrorType::Timeout),
        (Failure::Spawn("no such file".into()), ErrorType::Spawn),
        (Failure::Stopped, ErrorType::Stopped),
    ] {
        let out = Outcome {
            failure: Some(failure),
            code: None,
            ..exited(0, "", "")
        };
        let steps = finished::attempt(&running_a(), &id("a"), &out, None, 10);
        assert!(
            matches!(kinds(&steps)[..], [CommandKind::FailStage { error_type, .. }] if *error_type == class),
            "{class}: {steps:?}"
        );
    }
}

#[test]
fn an_agent_report_records_checkpoints_classes_and_messages_before_the_submission() {
    let stdout = "::checkpoint plan\n::classify refactor\n::message looked at the parser\ndone\n";
    let steps = finished::attempt(&running_a(), &id("a"), &exited(0, stdout, ""), None, 7);
    let kinds = kinds(&steps);
    assert!(matches!(kinds[0], CommandKind::ReachCheckpoint { name, .. } if name == "plan"));
    assert!(
        matches!(kinds[1], CommandKind::Classify { class, .. } if *class == TaskClass::Refactor)
    );
    assert!(
        matches!(kinds[2], CommandKind::PostMessage { from, text, .. } if from == "agent-a" && text == "looked at the parser"),
        "{:?}",
        kinds[2]
    );
    assert!(matches!(
        kinds[3],
        CommandKind::SubmitTask { duration_ms: 7, .. }
    ));
    assert_eq!(kinds.len(), 4);
}

#[test]
fn a_refused_classification_is_noted_and_the_attempt_goes_on() {
    let steps = finished::attempt(
        &running_a(),
        &id("a"),
        &exited(0, "::classify refactor\n", ""),
        None,
        1,
    );
    let Some(Step::Decide { if_refused, .. }) = steps.first() else {
        panic!("a classification first: {steps:?}");
    };
    let refusal = if_refused.refused(&Rejection::RunNotStarted);
    let Refusal::GoOn(Some(note)) = refusal else {
        panic!("a note, and the next steps: {refusal:?}");
    };
    assert!(notes(&[note])[0].starts_with("classification refactor refused: "));
}

#[test]
fn a_submission_without_its_checkpoints_fails_the_attempt_and_any_other_refusal_is_an_error() {
    let steps = finished::attempt(&running_a(), &id("a"), &exited(0, "", ""), None, 5);
    let Some(Step::Decide {
        kind: CommandKind::SubmitTask { .. },
        if_refused,
        ..
    }) = steps.last()
    else {
        panic!("the submission last: {steps:?}");
    };
    let missing = Rejection::CheckpointsMissing {
        task: "a".into(),
        missing: vec!["plan".into()],
    };
    let Refusal::Instead(failed) = if_refused.refused(&missing) else {
        panic!("the attempt fails instead");
    };
    assert!(matches!(
        kinds(&[failed])[..],
        [CommandKind::FailStage {
            error_type: ErrorType::Checkpoints,
            duration_ms: 5,
            ..
        }]
    ));
    assert_eq!(
        if_refused.refused(&Rejection::RunNotStarted),
        Refusal::Error
    );
}

#[test]
fn tasks_an_agent_adds_are_a_plan_revision_by_that_agent_in_its_group() {
    let mut a = task("a");
    a.parent = Some(id("g"));
    let mut g = task("g");
    g.run = None;
    let state = Script::run(vec![g, a]).and(start("a")).state;
    let stdout = r#"{"add_tasks": [{"id": "a2", "description": "more", "run": "true"}]}"#;
    let steps = finished::attempt(&state, &id("a"), &exited(0, stdout, ""), None, 9);
    let Some(Step::Decide {
        kind: CommandKind::RevisePlan { add, answers, .. },
        by: Some(by),
        if_refused,
    }) = steps.iter().find(|s| {
        matches!(
            s,
            Step::Decide {
                kind: CommandKind::RevisePlan { .. },
                ..
            }
        )
    })
    else {
        panic!("a revision: {steps:?}");
    };
    assert_eq!(add[0].parent, Some(id("g")));
    assert_eq!(*answers, Some(0));
    assert_eq!((by.name.as_str(), by.via), ("agent-a", Via::AgentOutput));
    assert_eq!(
        *if_refused,
        IfRefused::FailAttempt {
            task: id("a"),
            because: Because::AddedTasks,
            duration_ms: 9
        }
    );
    assert!(matches!(
        steps.last(),
        Some(Step::Decide {
            kind: CommandKind::SubmitTask { .. },
            ..
        })
    ));
}

#[test]
fn added_tasks_the_format_refuses_fail_the_attempt_and_nothing_is_submitted() {
    let stdout = r#"{"add_tasks": [{"id": "a2", "description": "more", "run": "true", "test_file": "t.py"}]}"#;
    let steps = finished::attempt(&running_a(), &id("a"), &exited(0, stdout, ""), None, 9);
    let [CommandKind::FailStage {
        error, error_type, ..
    }] = kinds(&steps)[..]
    else {
        panic!("only the failure: {steps:?}");
    };
    assert_eq!(*error_type, ErrorType::PlanRefused);
    assert!(
        error.starts_with("the tasks it added were refused: added task \"a2\", field test_file")
    );
}

#[test]
fn a_failed_child_run_leaves_its_task_waiting_and_a_succeeded_one_is_submitted() {
    let out = exited(1, "", "");
    let child = (RunId::from("child-1"), false);
    assert_eq!(
        finished::attempt(&running_a(), &id("a"), &out, Some(&child), 1),
        vec![]
    );
    let child = (RunId::from("child-1"), true);
    let steps = finished::attempt(&running_a(), &id("a"), &exited(0, "", ""), Some(&child), 1);
    assert!(matches!(
        kinds(&steps)[..],
        [CommandKind::SubmitTask { summary, .. }] if summary == "child run child-1 succeeded"
    ));
}

#[test]
fn output_is_kept_per_stream_and_a_cut_stream_is_noted() {
    let out = Outcome {
        left_out: [0, 1_000],
        ..exited(0, "hello\n", "  \n")
    };
    let steps = finished::output(&id("a"), Ran::Tests, &out, 64);
    assert_eq!(
        notes(&steps),
        ["the test command's stderr was larger than output_cap_bytes (64): 1000 bytes in the middle were left out, the first and last 32 bytes are kept"]
    );
    let kept: Vec<_> = steps
        .iter()
        .filter_map(|s| match s {
            Step::Keep { stream, text, .. } => Some((stream.as_str(), text.as_str())),
            _ => None,
        })
        .collect();
    assert_eq!(kept, [("test.stdout", "hello\n")]);
}

#[test]
fn usage_from_stdout_and_the_usage_file_is_recorded_and_a_bad_line_is_noted() {
    let stdout = "{\"usage\": {\"input_tokens\": 3, \"output_tokens\": 4}, \"model\": \"m\"}\n";
    let appended = "{\"usage\": \"x\"}\n";
    let steps = finished::usage(&running_a(), &id("a"), Ran::Eval, stdout, appended, false);
    let notes = notes(&steps);
    assert_eq!(notes.len(), 1);
    assert!(
        notes[0].starts_with("the evaluator command: RUNLOG_USAGE: "),
        "{notes:?}"
    );
    assert!(matches!(
        kinds(&steps).last(),
        Some(CommandKind::RecordUsage { stage: UsageStage::Evaluator, reports, .. }) if reports.len() == 1
    ));
}

#[test]
fn usage_a_command_printed_for_calls_the_gateway_measured_is_its_claim() {
    let stdout = "{\"type\": \"result\", \"total_cost_usd\": 0.5, \"usage\": {\"input_tokens\": 3, \"output_tokens\": 4}}\n";
    let steps = finished::usage(&running_a(), &id("a"), Ran::Agent, stdout, "", true);
    assert!(matches!(
        kinds(&steps)[..],
        [CommandKind::RecordUsageClaim { stage: UsageStage::Agent, reports, .. }] if reports.len() == 1
    ));
}

#[test]
fn a_secret_in_any_stream_is_replaced_and_the_replacement_is_recorded() {
    let redactor = Redactor::new([("API_KEY".to_owned(), "s3cr3t-value-123".to_owned())]);
    let out = Outcome {
        failure: Some(Failure::Spawn("bad s3cr3t-value-123".into())),
        ..exited(0, "key=s3cr3t-value-123", "s3cr3t-value-123")
    };
    let (clean, record) = finished::redacted(&redactor, Some(&id("a")), out);
    assert!(!format!("{clean:?}").contains("s3cr3t-value-123"));
    let Some(CommandKind::RecordRedaction { redactions, .. }) = record else {
        panic!("a record of the replacement");
    };
    assert_eq!(redactions[0].count, 3);
    let (_, none) = finished::redacted(&redactor, None, exited(0, "clean", ""));
    assert_eq!(none, None);
}

#[test]
fn an_evaluator_that_prints_no_score_or_fails_is_an_eval_error() {
    let state = running_a();
    let steps = finished::eval(&state, &id("a"), &exited(0, "{\"score\": 0.8}", ""));
    assert!(
        matches!(kinds(&steps)[..], [CommandKind::ScoreEval { evaluator, score, .. }] if evaluator == "./judge.sh" && (*score - 0.8).abs() < 1e-9)
    );
    let steps = finished::eval(&state, &id("a"), &exited(0, "looks fine to me", ""));
    assert!(matches!(
        kinds(&steps)[..],
        [CommandKind::RecordEvalError { .. }]
    ));
    let steps = finished::eval(&state, &id("a"), &exited(2, "", "judge crashed"));
    assert!(matches!(
        kinds(&steps)[..],
        [CommandKind::RecordEvalError { error, .. }] if error == "the evaluator exited with code 2: judge crashed"
    ));
}

#[test]
fn a_replanner_that_fails_or_prints_no_plan_is_given_up_and_a_refused_plan_too() {
    let steps = finished::replan(&exited(1, "", ""), 4);
    assert_eq!(
        steps,
        [Step::GiveUpReplan(
            "the replan command exited with code 1".into()
        )]
    );
    let steps = finished::replan(&exited(0, "I would cancel b", ""), 4);
    assert!(
        matches!(&steps[..], [Step::GiveUpReplan(why)] if why.starts_with("the replan command's output is not a plan"))
    );
    let steps = finished::replan(&exited(0, "{\"cancel\": [\"b\"]}", ""), 4);
    let [Step::Decide {
        kind: CommandKind::RevisePlan {
            cancel, answers, ..
        },
        if_refused,
        ..
    }] = &steps[..]
    else {
        panic!("a revision: {steps:?}");
    };
    assert_eq!((cancel.clone(), *answers), (vec![id("b")], Some(4)));
    assert!(matches!(
        if_refused.refused(&Rejection::RunNotStarted),
        Refusal::Instead(Step::GiveUpReplan(why)) if why.starts_with("the replanner's plan was refused: ")
    ));
}

#[test]
fn a_command_whose_task_moved_is_noted_with_why() {
    let stopped = Outcome {
        failure: Some(Failure::Stopped),
        ..exited(0, "", "")
    };
    let notes_of = |step| notes(&[step]).concat();
    assert_eq!(
        notes_of(finished::moved_on(&id("a"), Ran::Agent, &stopped, true)),
        "its agent command was stopped: a plan revision cancelled the task"
    );
    assert_eq!(
        notes_of(finished::moved_on(&id("a"), Ran::Eval, &exited(0, "", ""), false)),
        "its eval command ended: a decision recorded meanwhile (a rollback, an approval) moved the task on"
    );
}
