//! A long, realistic run built through `decide`, for benchmarks and large-history tests:
//! chained tasks with tests and evaluators, stage results, stage failures retried without a cap
//! (refactoring loops), messages, test retries and eval rescues. Deterministic: the same
//! arguments give the same events.

use crate::command::CommandKind;
use crate::event::Event;
use crate::ids::{Hash, RunId, TaskId};
use crate::rejection::Rejection;
use crate::script::Script;
use crate::settings::{Budget, RetryLimit, RetryStrategy, Settings};
use crate::spec::TaskSpec;
use crate::value::Value;
use std::collections::BTreeMap;

fn exec(b: &mut Script, kind: CommandKind) {
    *b = std::mem::take(b).and(kind);
}

fn spec(i: usize) -> TaskSpec {
    let mut s = TaskSpec::new(
        format!("t{i:06}"),
        format!("Implement module {i} in src/mod_{i}.rs"),
    );
    s.run = Some("./agent.sh".into());
    s.test = Some("./test.sh".into());
    s.eval = (i % 2 == 0).then(|| "./judge.sh".to_owned());
    s.destructive = Some(false);
    // Never give up: unlimited retries, bounded only by a generous attempt budget.
    s.retry = RetryStrategy {
        limit: RetryLimit::Unlimited,
        budget: Budget {
            max_attempts: Some(u32::MAX),
            max_elapsed_ms: None,
        },
        delay_ms: 0,
        circuit_after: 0,
        ..RetryStrategy::default()
    };
    if i % 4 != 0 && i > 0 {
        s.after = vec![TaskId(format!("t{:06}", i - 1))];
    }
    s
}

fn result(i: usize) -> Value {
    let mut m = BTreeMap::new();
    m.insert("files_changed".to_owned(), Value::Int((i % 7) as i64 + 1));
    m.insert(
        "summary".to_owned(),
        Value::Str(format!("implemented module {i}")),
    );
    Value::Map(m)
}

fn score(task: &TaskId, s: f64) -> CommandKind {
    let mut dims = BTreeMap::new();
    dims.insert("correctness".to_owned(), s);
    dims.insert("style".to_owned(), (s + 0.05).min(1.0));
    CommandKind::ScoreEval {
        task: task.clone(),
        evaluator: "judge".into(),
        score: s,
        dimensions: dims,
        notes: "ok".into(),
        judge: Default::default(),
    }
}

/// At least `target_events` events of one run spread over about `tasks` tasks (it stops after
/// the task that crosses the target). Few tasks and many events make long retry loops.
pub fn synthetic_run(
    run: &str,
    target_events: usize,
    tasks: usize,
) -> Result<Vec<Event>, Rejection> {
    // A task's happy path is about 12 events; each failed attempt adds 4 (start, fail).
    let per_task = target_events / tasks.max(1);
    let failures_per_task = per_task.saturating_sub(12) / 4;
    let mut b = Script::default();
    exec(
        &mut b,
        CommandKind::StartRun {
            run: RunId(run.to_owned()),
            workflow: "synthetic".into(),
            workflow_hash: Hash::of(b"synthetic"),
            settings: Settings::default(),
            tasks: Vec::new(),
            cost: Default::default(),
            review: Default::default(),
        },
    );
    let mut i = 0;
    while b.events.len() < target_events && !b.failed() {
        let spec = spec(i);
        let id = spec.id.clone();
        let evaluated = spec.eval.is_some();
        exec(&mut b, CommandKind::AddTask { spec });
        let start = CommandKind::StartTask {
            task: id.clone(),
            agent: None,
            worktree: None,
        };
        let submit = CommandKind::SubmitTask {
            task: id.clone(),
            summary: "done".into(),
            result: result(i),
            duration_ms: 1_000 + (i % 97) as u64,
        };
        exec(&mut b, start.clone());
        let failures = if i % 9 == 4 {
            failures_per_task.max(1)
        } else {
            failures_per_task
        };
        for f in 0..failures {
            exec(
                &mut b,
                CommandKind::FailStage {
                    task: id.clone(),
                    error: format!("attempt {} failed: exit code 1", f + 1),
                    error_type: "exit-code".into(),
                    duration_ms: 300,
                },
            );
            if f % 10 == 9 {
                exec(
                    &mut b,
                    CommandKind::PostMessage {
                        task: Some(id.clone()),
                        from: "supervisor".into(),
                        text: "still failing; retrying".into(),
                    },
                );
            }
            exec(&mut b, start.clone());
        }
        exec(&mut b, submit.clone());
        if i % 6 == 1 {
            exec(
                &mut b,
                CommandKind::RecordTests {
                    task: id.clone(),
                    passed: false,
                    details: "1 test failed".into(),
                },
            );
            exec(&mut b, start.clone());
            exec(&mut b, submit.clone());
        }
        exec(
            &mut b,
            CommandKind::RecordTests {
                task: id.clone(),
                passed: true,
                details: "ok".into(),
            },
        );
        if evaluated {
            if i % 5 == 2 {
                exec(&mut b, score(&id, 0.55));
                exec(&mut b, start);
                exec(&mut b, submit);
                exec(
                    &mut b,
                    CommandKind::RecordTests {
                        task: id.clone(),
                        passed: true,
                        details: "ok".into(),
                    },
                );
            }
            exec(&mut b, score(&id, 0.85));
        }
        i += 1;
    }
    exec(&mut b, CommandKind::Finish);
    b.finish()
}
